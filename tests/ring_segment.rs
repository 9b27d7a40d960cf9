//! Segment lifecycle: creation mode, unique names,
//! unlink on drop, typed errors for segments this build cannot read, stale
//! removal after a SIGKILL, and read-only inspection.
//!
//! Child processes re-execute this test binary (`--exact <child test>`) with
//! `FASTPMIX_RING_SEGMENT_CHILD` set; the `child_*` tests do nothing without
//! it.

use fastpmix::internals::ring::{
    EventRecord, Next, OpenError, Region, RingReader, RingWriter, Segment, SegmentError, Start,
    NAME_PREFIX,
};
use shm_layout::record::{InfoRecord, ProcRecord, ValueRecord};
use shm_layout::{
    Geometry, SegmentHeader, INIT_COMPLETE, LAYOUT_VERSION, SCHEMA_HASH, SEGMENT_MAGIC,
};
use std::collections::HashSet;
use std::ffi::CString;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::mem::offset_of;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

const CHILD_ENV: &str = "FASTPMIX_RING_SEGMENT_CHILD";
/// Turns a hang into a failure (never asserted as a time).
const HANG: Duration = Duration::from_secs(30);

/// Tests that call `Segment::remove_stale` (which removes every stale
/// segment of this user) or craft stale-looking names hold this, so one
/// test's removal cannot take another test's fixture.
static STALE: Mutex<()> = Mutex::new(());

fn stale_lock() -> std::sync::MutexGuard<'static, ()> {
    STALE.lock().unwrap_or_else(|e| e.into_inner())
}

fn small() -> Geometry {
    Geometry {
        slot_count: 8,
        client_capacity: 2,
        ..Geometry::default()
    }
}

fn shm_path(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "/dev/shm/{}",
        name.strip_prefix('/').expect("names start with /")
    ))
}

fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

fn event(n: u64) -> EventRecord {
    EventRecord {
        code: -331,
        range: 3,
        flags: 0,
        source: ProcRecord {
            nspace: "job".into(),
            rank: 1,
        },
        source_seq: n as u32,
        timestamp_ns: n * 1000,
        custom_range: vec![],
        affected: vec![],
        info: vec![InfoRecord {
            key: "k".into(),
            flags: 0,
            value: ValueRecord::String("v".repeat(n as usize % 17)),
        }],
        lane_entry: 0,
        lane_pos: 0,
    }
}

// ---------------------------------------------------------------------------
// A hand-made shared-memory object (for headers this build must refuse).

/// A POSIX shm object created with `shm_open`, unlinked on drop.
struct ShmObject {
    name: String,
    file: File,
}

impl ShmObject {
    fn create(name: String) -> ShmObject {
        let c = CString::new(name.clone()).unwrap();
        // SAFETY: `c` is a NUL-terminated string that outlives the call.
        let fd = unsafe {
            libc::shm_open(
                c.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
                0o600,
            )
        };
        assert!(
            fd >= 0,
            "shm_open {name}: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: `fd` is a fresh descriptor owned by nobody else.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        ShmObject { name, file }
    }

    /// A name `remove_stale` ignores (not `<prefix><uid>-`).
    fn unique() -> ShmObject {
        static N: Mutex<u32> = Mutex::new(0);
        let n = {
            let mut g = N.lock().unwrap();
            *g += 1;
            *g
        };
        ShmObject::create(format!("{NAME_PREFIX}ringtest-{}-{n}", std::process::id()))
    }

    /// An object holding `bytes`, with `edit` applied first.
    fn with_bytes(mut bytes: Vec<u8>, edit: impl FnOnce(&mut Vec<u8>)) -> ShmObject {
        edit(&mut bytes);
        let o = ShmObject::unique();
        o.file.set_len(bytes.len() as u64).unwrap();
        o.file.write_all_at(&bytes, 0).unwrap();
        o
    }
}

impl Drop for ShmObject {
    fn drop(&mut self) {
        let c = CString::new(self.name.clone()).unwrap();
        // SAFETY: `c` is a NUL-terminated string; unlinking a name that a
        // test already removed just fails with ENOENT.
        unsafe { libc::shm_unlink(c.as_ptr()) };
    }
}

/// The bytes of a freshly created, valid segment (its owner is dropped, so
/// the name is gone again).
fn valid_segment_bytes() -> Vec<u8> {
    let seg = Segment::create(small()).unwrap();
    std::fs::read(shm_path(seg.name())).unwrap()
}

fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

fn open_err(name: &str) -> OpenError {
    match Segment::open(name, Duration::from_millis(20)) {
        Err(SegmentError::Open(e)) => {
            // The read-only opener applies the same checks.
            match Segment::open_read_only(name, Duration::from_millis(20)) {
                Err(SegmentError::Open(e2)) => assert_eq!(e2, e, "read-only open agrees"),
                other => panic!("read-only open of a bad segment: {other:?}"),
            }
            e
        }
        other => panic!("expected an OpenError, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Children.

fn spawn_child(test: &str, role: &str, envs: &[(&str, String)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, role)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.spawn().expect("re-exec the test binary")
}

/// Lines of a child's stdout that contain `tag`, with what follows it, delivered
/// through a channel so the parent can wait with a timeout.
fn tagged_lines(child: &mut Child, tag: &'static str) -> mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            // libtest may print "test <name> ... " on the same line first.
            if let Some(at) = line.find(tag) {
                if tx.send(line[at + tag.len()..].trim().to_owned()).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

/// Kills a child with SIGKILL when dropped (also when the test fails).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Child: creates a segment, prints its name, sleeps until killed (at most
/// a minute, so an orphan cannot linger).
#[test]
fn child_creates_a_segment_and_sleeps() {
    if std::env::var(CHILD_ENV).as_deref() != Ok("sleeper") {
        return;
    }
    let seg = Segment::create(small()).unwrap();
    println!("SEGMENT {}", seg.name());
    std::thread::sleep(Duration::from_secs(60));
    drop(seg);
}

/// Child: creates `FASTPMIX_RING_SEGMENT_COUNT` segments, prints each name,
/// then drops them (unlinking every name) and exits.
#[test]
fn child_creates_many_segments_and_exits() {
    if std::env::var(CHILD_ENV).as_deref() != Ok("many") {
        return;
    }
    let count: usize = std::env::var("FASTPMIX_RING_SEGMENT_COUNT")
        .unwrap()
        .parse()
        .unwrap();
    let segs: Vec<Segment> = (0..count)
        .map(|_| Segment::create(small()).unwrap())
        .collect();
    for s in &segs {
        println!("SEGMENT {}", s.name());
    }
}

// ---------------------------------------------------------------------------
// Creation, names, unlink.

#[test]
fn segment_is_created_owner_only_mode_0600() {
    let seg = Segment::create(small()).unwrap();
    let meta = std::fs::metadata(shm_path(seg.name())).expect("the segment is in /dev/shm");
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o600,
        "mode of {}",
        seg.name()
    );
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), uid());
    let o = small().validate().unwrap();
    assert_eq!(meta.len(), o.total, "sized to the geometry");
}

#[test]
fn segment_header_records_identity_geometry_and_owner() {
    let g = small();
    let seg = Segment::create(g).unwrap();
    let h = seg.region().header();
    let o = g.validate().unwrap();
    assert_eq!(h.magic, SEGMENT_MAGIC);
    assert_eq!(h.layout_version, LAYOUT_VERSION);
    assert_eq!(h.schema_hash, SCHEMA_HASH);
    assert_eq!(h.header_size as usize, std::mem::size_of::<SegmentHeader>());
    assert_eq!(h.total_size, o.total);
    assert_eq!(
        (h.slot_count, h.slot_size, h.client_capacity),
        (8, g.slot_size, 2)
    );
    assert_eq!(h.data_slots, o.data_slots);
    assert_eq!(h.server_pid, std::process::id());
    assert_eq!(h.server_uid, uid());
    assert_eq!(h.init_complete, INIT_COMPLETE, "init-complete is published");
    assert!(seg.name().starts_with(NAME_PREFIX));
}

#[test]
fn segment_names_are_unique_per_create_within_a_process() {
    let segs: Vec<Segment> = (0..64).map(|_| Segment::create(small()).unwrap()).collect();
    let names: HashSet<&str> = segs.iter().map(Segment::name).collect();
    assert_eq!(names.len(), segs.len(), "every create got a new name");
    for n in &names {
        assert!(n.starts_with(NAME_PREFIX), "{n}");
        assert!(
            n.contains(&format!("-{}-", std::process::id())),
            "{n} names its creator"
        );
        assert!(shm_path(n).exists(), "{n} exists while its owner lives");
    }
}

#[test]
fn segment_names_are_unique_across_processes() {
    let per_child = 40;
    let mut children: Vec<(u32, mpsc::Receiver<String>, Killed)> = (0..2)
        .map(|_| {
            let mut c = spawn_child(
                "child_creates_many_segments_and_exits",
                "many",
                &[("FASTPMIX_RING_SEGMENT_COUNT", per_child.to_string())],
            );
            let rx = tagged_lines(&mut c, "SEGMENT ");
            (c.id(), rx, Killed(c))
        })
        .collect();
    let mine: Vec<Segment> = (0..per_child)
        .map(|_| Segment::create(small()).unwrap())
        .collect();
    let mut all: Vec<String> = mine.iter().map(|s| s.name().to_owned()).collect();
    for (pid, rx, child) in children.iter_mut() {
        for _ in 0..per_child {
            let name = rx.recv_timeout(HANG).expect("child printed a segment name");
            assert!(
                name.contains(&format!("-{pid}-")),
                "{name} names child {pid}"
            );
            all.push(name);
        }
        let status = child.0.wait().unwrap();
        assert!(status.success(), "child {pid} failed");
    }
    let unique: HashSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "names collide across processes");
    for name in all.iter().skip(per_child) {
        assert!(
            !shm_path(name).exists(),
            "child's {name} was unlinked when it exited"
        );
    }
}

#[test]
fn owner_drop_unlinks_the_segment_and_an_opener_drop_does_not() {
    let seg = Segment::create(small()).unwrap();
    let name = seg.name().to_owned();
    let opened = Segment::open(&name, Duration::from_secs(1)).unwrap();
    drop(opened);
    assert!(shm_path(&name).exists(), "an opener's drop leaves the name");
    drop(seg);
    assert!(
        !shm_path(&name).exists(),
        "the owner's drop unlinks the name"
    );
    match Segment::open(&name, Duration::from_millis(10)) {
        Err(SegmentError::Sys {
            call: "shm_open",
            err,
        }) => {
            assert_eq!(err.raw_os_error(), Some(libc::ENOENT))
        }
        other => panic!("open after unlink: {other:?}"),
    }
}

#[test]
fn mapping_outlives_the_unlinked_name() {
    let seg = Segment::create(small()).unwrap();
    let mut w = RingWriter::new(seg.region().clone());
    let reader_side = Segment::open(seg.name(), Duration::from_secs(1)).unwrap();
    let mut r = RingReader::attach(reader_side.region().clone(), Start::Head).unwrap();
    drop(seg); // unlinks the name; both mappings stay valid
    w.publish(&event(1)).unwrap();
    match r.try_next() {
        Next::Record(x) => assert_eq!(x.to_owned(), event(1)),
        other => panic!("{other:?}"),
    };
}

// ---------------------------------------------------------------------------
// Opening what this build cannot read: typed errors, no crash.

#[test]
fn open_of_a_missing_name_fails_in_shm_open() {
    let name = format!("{NAME_PREFIX}ringtest-missing-{}", std::process::id());
    for r in [
        Segment::open(&name, Duration::from_millis(10)),
        Segment::open_read_only(&name, Duration::from_millis(10)),
    ] {
        match r {
            Err(SegmentError::Sys { call, err }) => {
                assert_eq!(call, "shm_open");
                assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("expected Sys {{ call: \"shm_open\" }}, got {other:?}"),
        }
    }
}

#[test]
fn hand_made_copy_of_a_valid_segment_opens() {
    // The fixture the refusal tests below edit is itself acceptable.
    let o = ShmObject::with_bytes(valid_segment_bytes(), |_| {});
    let seg =
        Segment::open(&o.name, Duration::from_secs(1)).expect("a copy of a valid segment opens");
    assert_eq!(seg.region().geometry(), small());
}

#[test]
fn open_with_wrong_magic_is_bad_magic() {
    let o = ShmObject::with_bytes(valid_segment_bytes(), |b| {
        put_u64(b, offset_of!(SegmentHeader, magic), 0x0123_4567_89AB_CDEF)
    });
    assert_eq!(
        open_err(&o.name),
        OpenError::BadMagic(0x0123_4567_89AB_CDEF)
    );
}

#[test]
fn open_with_another_layout_version_is_version_mismatch() {
    let o = ShmObject::with_bytes(valid_segment_bytes(), |b| {
        put_u32(
            b,
            offset_of!(SegmentHeader, layout_version),
            LAYOUT_VERSION + 1,
        )
    });
    assert_eq!(
        open_err(&o.name),
        OpenError::VersionMismatch {
            expected: LAYOUT_VERSION,
            found: LAYOUT_VERSION + 1
        }
    );
}

#[test]
fn open_with_another_schema_hash_is_schema_mismatch() {
    let o = ShmObject::with_bytes(valid_segment_bytes(), |b| {
        put_u64(b, offset_of!(SegmentHeader, schema_hash), SCHEMA_HASH ^ 1)
    });
    assert_eq!(
        open_err(&o.name),
        OpenError::SchemaMismatch {
            expected: SCHEMA_HASH,
            found: SCHEMA_HASH ^ 1
        }
    );
}

#[test]
fn open_with_inconsistent_geometry_is_bad_geometry() {
    type Edit = Box<dyn Fn(&mut Vec<u8>)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "slot_count disagrees with total_size and offsets",
            Box::new(|b| put_u32(b, offset_of!(SegmentHeader, slot_count), 16)),
        ),
        (
            "slot_size not a multiple of 128",
            Box::new(|b| put_u32(b, offset_of!(SegmentHeader, slot_size), 200)),
        ),
        (
            "slot_count below 2",
            Box::new(|b| put_u32(b, offset_of!(SegmentHeader, slot_count), 1)),
        ),
        (
            "no client entries",
            Box::new(|b| put_u32(b, offset_of!(SegmentHeader, client_capacity), 0)),
        ),
        (
            "data_slots disagrees",
            Box::new(|b| put_u32(b, offset_of!(SegmentHeader, data_slots), 5)),
        ),
        (
            "total_size disagrees",
            Box::new(|b| {
                let off = offset_of!(SegmentHeader, total_size);
                let t = u64::from_ne_bytes(b[off..off + 8].try_into().unwrap());
                put_u64(b, off, t + 128)
            }),
        ),
        (
            "index offset disagrees",
            Box::new(|b| {
                let off = offset_of!(SegmentHeader, index_offset);
                let t = u64::from_ne_bytes(b[off..off + 8].try_into().unwrap());
                put_u64(b, off, t + 8)
            }),
        ),
        (
            "header_size disagrees",
            Box::new(|b| put_u32(b, offset_of!(SegmentHeader, header_size), 128)),
        ),
        (
            "mapping shorter than total_size",
            Box::new(|b| b.truncate(b.len() / 2)),
        ),
        (
            "slot count beyond what an index entry names",
            Box::new(|b| put_u32(b, offset_of!(SegmentHeader, slot_count), 70_000)),
        ),
    ];
    for (what, edit) in edits {
        let o = ShmObject::with_bytes(valid_segment_bytes(), |b| edit(b));
        match open_err(&o.name) {
            OpenError::BadGeometry(why) => assert!(!why.is_empty(), "{what}: a reason"),
            other => panic!("{what}: expected BadGeometry, got {other:?}"),
        }
    }
}

#[test]
fn open_of_an_object_smaller_than_a_header_is_too_small() {
    let bytes = valid_segment_bytes();
    for len in [1usize, 100, std::mem::size_of::<SegmentHeader>() - 1] {
        let o = ShmObject::with_bytes(bytes[..len].to_vec(), |_| {});
        assert_eq!(open_err(&o.name), OpenError::TooSmall(len), "{len} bytes");
    }
}

#[test]
fn open_of_a_never_sized_object_is_too_small() {
    // The creator died between shm_open and ftruncate.
    let o = ShmObject::unique();
    match Segment::open(&o.name, Duration::from_millis(20)) {
        Err(SegmentError::Open(OpenError::TooSmall(0))) => {}
        other => panic!("expected TooSmall(0), got {other:?}"),
    }
}

#[test]
fn open_of_a_never_initialised_segment_times_out() {
    let o = ShmObject::with_bytes(valid_segment_bytes(), |b| {
        put_u32(b, offset_of!(SegmentHeader, init_complete), 0)
    });
    assert_eq!(open_err(&o.name), OpenError::InitTimeout);
    // A sized, all-zero object (creator died right after ftruncate) too.
    let z = ShmObject::with_bytes(vec![0; 64 * 1024], |_| {});
    assert_eq!(open_err(&z.name), OpenError::InitTimeout);
}

#[test]
fn opener_waits_for_init_complete_published_later() {
    let mut bytes = valid_segment_bytes();
    put_u32(&mut bytes, offset_of!(SegmentHeader, init_complete), 0);
    let o = ShmObject::with_bytes(bytes, |_| {});
    let name = o.name.clone();
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        tx.send(Segment::open(&name, Duration::from_secs(20)).map(|s| s.region().geometry()))
            .unwrap();
    });
    std::thread::sleep(Duration::from_millis(50));
    o.file
        .write_all_at(
            &INIT_COMPLETE.to_ne_bytes(),
            offset_of!(SegmentHeader, init_complete) as u64,
        )
        .unwrap();
    let got = rx.recv_timeout(HANG).expect("the opener returned");
    t.join().unwrap();
    assert_eq!(got.expect("opens once init-complete appears"), small());
}

// ---------------------------------------------------------------------------
// Stale segments.

#[test]
fn stale_segment_of_a_killed_creator_is_removed() {
    let _g = stale_lock();
    let mut child = spawn_child("child_creates_a_segment_and_sleeps", "sleeper", &[]);
    let rx = tagged_lines(&mut child, "SEGMENT ");
    let mut child = Killed(child);
    let name = rx.recv_timeout(HANG).expect("child printed its segment");
    assert!(shm_path(&name).exists());
    child.0.kill().unwrap(); // SIGKILL: no destructor runs, the name stays
    child.0.wait().unwrap();
    assert!(
        shm_path(&name).exists(),
        "a SIGKILLed owner leaves its segment behind"
    );
    let removed = Segment::remove_stale().unwrap();
    assert!(removed.contains(&name), "{name} not in {removed:?}");
    assert!(!shm_path(&name).exists());
}

#[test]
fn segment_of_a_live_process_is_not_removed() {
    let _g = stale_lock();
    let mut child = spawn_child("child_creates_a_segment_and_sleeps", "sleeper", &[]);
    let rx = tagged_lines(&mut child, "SEGMENT ");
    let mut child = Killed(child);
    let name = rx.recv_timeout(HANG).expect("child printed its segment");
    let own = Segment::create(small()).unwrap();
    let removed = Segment::remove_stale().unwrap();
    assert!(!removed.contains(&name), "live child's segment removed");
    assert!(
        !removed.iter().any(|n| n == own.name()),
        "our own segment removed"
    );
    assert!(shm_path(&name).exists() && shm_path(own.name()).exists());
    // Clean up: kill the child, then its segment is stale.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert!(Segment::remove_stale().unwrap().contains(&name));
}

/// A pid that no longer exists (a child that was reaped).
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().expect("spawn true");
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn stale_never_initialised_segment_of_a_dead_creator_is_removed() {
    let _g = stale_lock();
    let pid = dead_pid();
    // Never sized (died before ftruncate), and sized but never initialised.
    let unsized_name = format!("{NAME_PREFIX}{}-{pid}-1-00000000000000aa", uid());
    let uninit_name = format!("{NAME_PREFIX}{}-{pid}-2-00000000000000bb", uid());
    // A never-sized one just made stays: its creator may be a live server
    // in another PID namespace, between shm_open and its liveness lock.
    let young_name = format!("{NAME_PREFIX}{}-{pid}-3-00000000000000cc", uid());
    let a = ShmObject::create(unsized_name.clone());
    let b = ShmObject::create(uninit_name.clone());
    let c = ShmObject::create(young_name.clone());
    b.file.set_len(64 * 1024).unwrap();
    let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    a.file.set_modified(minute_ago).unwrap();
    let removed = Segment::remove_stale().unwrap();
    assert!(removed.contains(&unsized_name), "{removed:?}");
    assert!(removed.contains(&uninit_name), "{removed:?}");
    assert!(!removed.contains(&young_name), "{removed:?}");
    assert!(!shm_path(&unsized_name).exists() && !shm_path(&uninit_name).exists());
    assert!(shm_path(&young_name).exists());
    drop((a, b, c));
    let _ = std::fs::remove_file(shm_path(&young_name));
}

#[test]
fn never_initialised_segment_of_a_live_creator_is_not_removed() {
    let _g = stale_lock();
    // Our pid in the name: a creator between shm_open and init.
    let name = format!(
        "{NAME_PREFIX}{}-{}-999-00000000000000cc",
        uid(),
        std::process::id()
    );
    let o = ShmObject::create(name.clone());
    let removed = Segment::remove_stale().unwrap();
    assert!(!removed.contains(&name), "{removed:?}");
    assert!(shm_path(&name).exists());
    drop(o);
}

// ---------------------------------------------------------------------------
// Read-only inspection.

#[test]
fn read_only_open_reads_state_and_copies_records() {
    let seg = Segment::create(small()).unwrap();
    let mut w = RingWriter::new(seg.region().clone());
    let reader_side = Segment::open(seg.name(), Duration::from_secs(1)).unwrap();
    let mut r = RingReader::attach(reader_side.region().clone(), Start::Head).unwrap();
    for n in 0..20 {
        assert_eq!(w.publish(&event(n)).unwrap(), n);
    }
    assert!(matches!(r.try_next(), Next::Lagged { missed: 12 }));
    for _ in 0..3 {
        assert!(matches!(r.try_next(), Next::Record(_)));
    }

    let ro = Segment::open_read_only(seg.name(), Duration::from_secs(1)).unwrap();
    let region: &Region = ro.region();
    assert_eq!(region.header().server_pid, std::process::id());
    let st = region.state();
    assert_eq!(st.head, 20);
    let me = &st.clients[r.client() as usize];
    assert_eq!((me.cursor, me.lost, me.waiting), (15, 12, false));
    assert_eq!(me.pid, std::process::id());
    for n in 12..20 {
        let bytes = region
            .copy_record(n)
            .unwrap_or_else(|| panic!("record {n} is in the ring"));
        // copy_record returns an aligned buffer rkyv can validate in place.
        let rec = rkyv::from_bytes::<EventRecord, rkyv::rancor::Error>(&bytes)
            .expect("copied bytes validate");
        assert_eq!(rec, event(n));
    }
    assert!(region.copy_record(11).is_none(), "overwritten record");
    assert!(region.copy_record(0).is_none(), "overwritten record");
    assert!(region.copy_record(20).is_none(), "not yet published");
    assert!(region.copy_record(u64::MAX).is_none());
}
