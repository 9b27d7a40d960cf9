//! Hostile bytes: a scribbler writes random bytes over
//! a live segment — record bytes, slot headers (seq/len/pins), index
//! entries, the ring header, the client table, the segment header — while a
//! writer publishes and readers read. Readers must never crash or hang (each
//! read returns Record, Empty, Lagged or Corrupt), the writer's publish
//! returns Ok or a PublishError, and once scribbling stops and fresh records
//! are published, readers read valid records again. Also: segments with
//! randomly corrupted headers open with a typed error or a usable region.
//!
//! The scribbler is a thread that writes through the segment's file
//! (`pwrite` on /dev/shm/<name>), like another process would: no `unsafe`.
//! It uses a fixed-seed xorshift PRNG; the seed is printed, and
//! `FASTPMIX_HOSTILE_SEED=<n>` replays another one. `FASTPMIX_STRESS_LONG=1`
//! scribbles 20× longer.
//!
//! A `RecordRef`'s bytes are stable only against the legitimate writer (its
//! pin); a scribbler writing under a held record changes what it reads. So
//! while scribbling, readers touch only fixed-offset fields of a record and
//! drop it at once, and the scribbling phase asserts only "no crash, no
//! hang, errors reported".

use fastpmix::internals::ring::{
    EventRecord, Next, OpenError, PublishError, Region, RingReader, RingWriter, Segment,
    SegmentError, SpinPolicy, Start, WriteError, NAME_PREFIX,
};
use shm_layout::record::{InfoRecord, ProcRecord, ValueRecord};
use shm_layout::{
    index_entry, index_parts, ClientEntry, Geometry, RingHeader, SegmentHeader, SlotHeader,
    INIT_COMPLETE, LAYOUT_VERSION, SCHEMA_HASH,
};
use std::fs::{File, OpenOptions};
use std::mem::{offset_of, size_of};
use std::os::unix::fs::FileExt;
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Turns a hang into a failure (never asserted as a time).
const HANG: Duration = Duration::from_secs(30);
const DEFAULT_SEED: u64 = 0x5EED_F00D_2024_0003;

fn long() -> bool {
    std::env::var("FASTPMIX_STRESS_LONG").as_deref() == Ok("1")
}

/// Scribbles per scribbling phase.
fn scribbles() -> u64 {
    if long() {
        500_000
    } else {
        20_000
    }
}

fn seed(test: &str) -> u64 {
    let s = std::env::var("FASTPMIX_HOSTILE_SEED")
        .ok()
        .map(|v| v.parse().expect("FASTPMIX_HOSTILE_SEED is a number"))
        .unwrap_or(DEFAULT_SEED);
    println!("{test}: seed {s} (replay with FASTPMIX_HOSTILE_SEED={s})");
    s
}

/// xorshift64* (fixed seed: a failure replays).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn geometry() -> Geometry {
    Geometry {
        slot_count: 16,
        client_capacity: 4,
        slot_size: 512,
        ..Geometry::default()
    }
}

fn event(n: u64) -> EventRecord {
    EventRecord {
        code: -(n as i32 % 500),
        range: 3,
        flags: 0,
        source: ProcRecord {
            nspace: format!("hostile-{}", n % 5),
            rank: n as u32,
        },
        source_seq: n as u32,
        timestamp_ns: n,
        custom_range: vec![],
        affected: vec![ProcRecord {
            nspace: "a".repeat(n as usize % 9),
            rank: 1,
        }],
        info: vec![
            InfoRecord {
                key: "s".into(),
                flags: 0,
                value: ValueRecord::String("x".repeat(n as usize % 60)),
            },
            InfoRecord {
                key: "arr".into(),
                flags: 1,
                value: ValueRecord::Uint32Array((0..(n % 11) as u32).collect()),
            },
        ],
        lane_entry: 0,
        lane_pos: 0,
    }
}

fn shm_file(seg: &Segment) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/dev/shm/{}", &seg.name()[1..]))
        .expect("open the segment's file")
}

fn read_u64(f: &File, off: u64) -> u64 {
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, off).unwrap();
    u64::from_ne_bytes(b)
}

// ---------------------------------------------------------------------------
// What the scribbler may hit.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// Record bytes of a slot (preferably one the index names now).
    SlotBytes,
    /// A slot's commit word.
    SlotSeq,
    /// A slot's length.
    SlotLen,
    /// A slot's pin count.
    SlotPins,
    /// An index entry.
    Index,
    /// The ring head.
    Head,
    /// Doorbell, sleepy, wakes, refused.
    RingOther,
    /// The client table.
    Clients,
    /// The segment header (read only at open).
    SegmentHeader,
}

const ALL: &[Target] = &[
    Target::SlotBytes,
    Target::SlotSeq,
    Target::SlotLen,
    Target::SlotPins,
    Target::Index,
    Target::Head,
    Target::RingOther,
    Target::Clients,
    Target::SegmentHeader,
];

/// Everything except the words whose corruption the ring does not recover
/// from today (the head, index entries and pin counts; see the `bug:` tests
/// below).
const RECOVERABLE: &[Target] = &[
    Target::SlotBytes,
    Target::SlotSeq,
    Target::SlotLen,
    Target::RingOther,
    Target::Clients,
    Target::SegmentHeader,
];

struct Scribbler {
    file: File,
    g: Geometry,
    o: shm_layout::Offsets,
    rng: Rng,
}

impl Scribbler {
    fn new(seg: &Segment, seed: u64) -> Scribbler {
        Scribbler {
            file: shm_file(seg),
            g: seg.region().geometry(),
            o: seg.region().offsets(),
            rng: Rng::new(seed),
        }
    }

    fn slot_off(&self, s: u32) -> u64 {
        self.o.slots + s as u64 * self.g.slot_size as u64
    }

    fn head(&self) -> u64 {
        read_u64(
            &self.file,
            self.o.ring + offset_of!(RingHeader, head) as u64,
        )
    }

    /// A sequence readers are about to read: just past some reader's cursor
    /// (from the client table), or just below the head.
    fn hot_seq(&mut self) -> u64 {
        let head = self.head();
        if self.rng.chance(60) {
            let c = self.rng.below(self.g.client_capacity as u64);
            let cursor = read_u64(
                &self.file,
                self.o.clients + c * 128 + offset_of!(ClientEntry, cursor) as u64,
            );
            if cursor < head {
                return (cursor + self.rng.below(3)).min(head - 1);
            }
        }
        head.wrapping_sub(1 + self.rng.below(4))
    }

    /// A slot the index names where readers are, or any slot.
    fn live_slot(&mut self) -> u32 {
        let n = self.g.slot_count as u64;
        if self.rng.chance(80) {
            let seq = self.hot_seq();
            let e = read_u64(&self.file, self.o.index + (seq % n) * 8);
            let slot = (e & 0xFFFF) as u32;
            if slot < self.o.data_slots {
                return slot;
            }
        }
        self.rng.below(self.o.data_slots as u64) as u32
    }

    /// A value that is often plausible (passes the cheap checks) and
    /// sometimes pure noise.
    fn plausible_seq(&mut self) -> u64 {
        let head = self.head();
        match self.rng.below(4) {
            0 => self.rng.next(),
            1 => head.wrapping_add(self.rng.below(64)),
            _ => head.wrapping_sub(self.rng.below(3 * self.g.slot_count as u64)),
        }
    }

    fn put(&self, off: u64, bytes: &[u8]) {
        debug_assert!(off + bytes.len() as u64 <= self.o.total);
        self.file
            .write_all_at(bytes, off)
            .expect("pwrite into the segment");
    }

    fn scribble(&mut self, targets: &[Target]) -> Target {
        let t = targets[self.rng.below(targets.len() as u64) as usize];
        let cap = self.g.slot_size as u64 - size_of::<SlotHeader>() as u64;
        match t {
            Target::SlotBytes => {
                let s = self.live_slot();
                let at = self.rng.below(cap);
                let len = (1 + self.rng.below(16)).min(cap - at) as usize;
                let b = self.rng.bytes(len);
                self.put(self.slot_off(s) + size_of::<SlotHeader>() as u64 + at, &b);
            }
            Target::SlotSeq => {
                let s = self.live_slot();
                let v = self.plausible_seq();
                self.put(
                    self.slot_off(s) + offset_of!(SlotHeader, seq) as u64,
                    &v.to_ne_bytes(),
                );
            }
            Target::SlotLen => {
                let s = self.live_slot();
                let v = match self.rng.below(3) {
                    0 => self.rng.next() as u32,
                    _ => self.rng.below(cap + 64) as u32,
                };
                self.put(
                    self.slot_off(s) + offset_of!(SlotHeader, len) as u64,
                    &v.to_ne_bytes(),
                );
            }
            Target::SlotPins => {
                let s = self.live_slot();
                let v = match self.rng.below(3) {
                    0 => self.rng.next() as u32,
                    1 => 0,
                    _ => 1,
                };
                self.put(
                    self.slot_off(s) + offset_of!(SlotHeader, pins) as u64,
                    &v.to_ne_bytes(),
                );
            }
            Target::Index => {
                let n = self.g.slot_count as u64;
                let seq = self.plausible_seq() & ((1 << 48) - 1);
                let i = if self.rng.chance(50) {
                    seq % n
                } else {
                    self.rng.below(n)
                };
                let v = match self.rng.below(4) {
                    0 => self.rng.next(),
                    1 => u64::MAX,
                    _ => index_entry(seq, self.rng.below(self.o.data_slots as u64 + 3) as u32),
                };
                self.put(self.o.index + i * 8, &v.to_ne_bytes());
            }
            Target::Head => {
                let v = self.plausible_seq();
                self.put(
                    self.o.ring + offset_of!(RingHeader, head) as u64,
                    &v.to_ne_bytes(),
                );
            }
            Target::RingOther => {
                let (off, len) = match self.rng.below(4) {
                    0 => (offset_of!(RingHeader, doorbell), 4),
                    1 => (offset_of!(RingHeader, sleepers), 8),
                    2 => (offset_of!(RingHeader, wakes), 8),
                    _ => (offset_of!(RingHeader, refused), 8),
                };
                let b = self.rng.bytes(len);
                self.put(self.o.ring + off as u64, &b);
            }
            Target::Clients => {
                let span = self.g.client_capacity as u64 * 128;
                let at = self.rng.below(span - 8);
                let len = 1 + self.rng.below(8) as usize;
                let b = self.rng.bytes(len);
                self.put(self.o.clients + at, &b);
            }
            Target::SegmentHeader => {
                let at = self.rng.below(size_of::<SegmentHeader>() as u64 - 8);
                let len = 1 + self.rng.below(8) as usize;
                let b = self.rng.bytes(len);
                self.put(at, &b);
            }
        }
        t
    }
}

// ---------------------------------------------------------------------------
// Threads of the scribbling tests.

/// A stop flag (no atomics outside src/sync: a mutex).
#[derive(Clone, Default)]
struct Flag(Arc<Mutex<bool>>);

impl Flag {
    fn set(&self) {
        *self.0.lock().unwrap() = true;
    }
    fn is_set(&self) -> bool {
        *self.0.lock().unwrap()
    }
}

/// Joins a thread, failing (instead of hanging) if it does not finish.
fn join_within<T: Send + 'static>(what: &str, t: (mpsc::Receiver<T>, JoinHandle<()>)) -> T {
    let (rx, h) = t;
    match rx.recv_timeout(HANG) {
        Ok(v) => {
            h.join().unwrap();
            v
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let e = h.join().expect_err("a thread that sent nothing panicked");
            std::panic::resume_unwind(e)
        }
    }
}

fn spawn<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> (mpsc::Receiver<T>, JoinHandle<()>) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    (rx, h)
}

#[derive(Debug, Default, Clone)]
struct WriterTally {
    ok: u64,
    too_large: u64,
    no_free_slot: u64,
}

/// Publishes `event(n)` until `stop`; returns the writer and its tally.
fn writer_thread(
    mut w: RingWriter,
    mut next: u64,
    stop: Flag,
) -> (
    mpsc::Receiver<(RingWriter, u64, WriterTally)>,
    JoinHandle<()>,
) {
    spawn(move || {
        let mut t = WriterTally::default();
        while !stop.is_set() {
            for _ in 0..16 {
                match w.publish(&event(next)) {
                    Ok(_) => t.ok += 1,
                    Err(WriteError::Publish(PublishError::TooLarge { .. })) => t.too_large += 1,
                    Err(WriteError::Publish(PublishError::NoFreeSlot)) => t.no_free_slot += 1,
                    Err(e) => panic!("unexpected publish error: {e}"),
                }
                next += 1;
            }
            std::thread::yield_now();
        }
        (w, next, t)
    })
}

#[derive(Debug, Default, Clone)]
struct ReaderTally {
    polls: u64,
    records: u64,
    empty: u64,
    lagged: u64,
    corrupt: u64,
    /// What the reader made of a record scribbled after its publication
    /// and before the reader's next poll.
    scribbled_unread: Option<String>,
}

/// What a reader that followed a scribbled head word past the real one
/// reports instead of a read.
const WEDGED: &str = "wedged beyond the head";

/// Catches `r` up with the head, publishes one record, breaks its commit
/// word, and reports what `r` reads next.
fn scribbled_unread_record(
    seg: &Segment,
    w: &mut RingWriter,
    next: &mut u64,
    r: &mut RingReader,
) -> String {
    let n = seg.region().geometry().slot_count as u64;
    // As in `readers_recover`: `3 × slot_count` fresh records overwrite the
    // whole index window, whatever was scribbled; then the reader catches
    // up with the head.
    for _ in 0..3 * n {
        w.publish(&event(*next))
            .expect("publish once scribbling stopped");
        *next += 1;
    }
    if r.cursor() > w.published() + 1 {
        // It followed a scribbled head word past the real one: the ring
        // does not recover such a reader (see RECOVERABLE; only stages
        // that scribble the head and index can do this).
        return WEDGED.to_owned();
    }
    let t0 = Instant::now();
    while !matches!(r.try_next(), Next::Empty) {
        assert!(
            t0.elapsed() < HANG,
            "reader stuck at cursor {} < head {}",
            r.cursor(),
            w.published()
        );
    }
    let seq = w.published();
    w.publish(&event(*next))
        .expect("publish the record to scribble");
    *next += 1;
    let file = shm_file(seg);
    let o = seg.region().offsets();
    let (_, slot) = index_parts(read_u64(&file, o.index + (seq % n) * 8));
    let at = o.slots + slot as u64 * seg.region().geometry().slot_size as u64;
    file.write_all_at(
        &(seq + 7).to_ne_bytes(),
        at + offset_of!(SlotHeader, seq) as u64,
    )
    .unwrap();
    match r.try_next() {
        Next::Corrupt { seq: s, why } if s == seq => format!("Corrupt({why})"),
        other => format!("{other:?} (record {seq} was scribbled)"),
    }
}

/// Reads until `stop`, touching only fixed-offset fields of records (the
/// scribbler may be writing under them).
fn reader_thread(
    mut r: RingReader,
    stop: Flag,
) -> (mpsc::Receiver<(RingReader, ReaderTally)>, JoinHandle<()>) {
    spawn(move || {
        r.set_spin(SpinPolicy::never());
        let mut t = ReaderTally::default();
        while !stop.is_set() {
            t.polls += 1;
            let empty = match r.try_next() {
                Next::Record(x) => {
                    // Inline fields only: the root's position was validated.
                    std::hint::black_box((
                        x.seq(),
                        x.len(),
                        x.source_seq.to_native() as u64,
                        x.code.to_native(),
                    ));
                    t.records += 1;
                    false
                }
                // Scribbled bytes may say LANED, but this reader read no
                // lane, so no position of any lane is delivered already.
                Next::LaneCopy { .. } => panic!("a reader that read no lane skipped a record"),
                Next::Lagged { .. } => {
                    t.lagged += 1;
                    false
                }
                Next::Corrupt { why, .. } => {
                    assert!(!why.is_empty());
                    t.corrupt += 1;
                    false
                }
                Next::Empty => true,
            };
            if empty {
                t.empty += 1;
                r.wait(Some(Duration::from_millis(1)));
            }
        }
        (r, t)
    })
}

struct Scribbled {
    seg: Segment,
    writer: RingWriter,
    next: u64,
    readers: Vec<RingReader>,
    writer_tally: WriterTally,
    reader_tallies: Vec<ReaderTally>,
    /// The head word was among the targets (a reader may have followed it
    /// past the real head: [`WEDGED`]).
    head_scribbled: bool,
}

/// Runs a writer, `READERS` readers (own mappings) and a scribbler; the
/// scribbler goes through `stages` in order, each a target set and its share
/// (percent) of the scribbles. Returns once the scribbler is done and the
/// other threads stopped.
fn scribbling_phase(test: &str, stages: &[(&[Target], u64)]) -> Scribbled {
    const READERS: usize = 2;
    let seg = Segment::create(geometry()).unwrap();
    let n = seg.region().geometry().slot_count as u64;
    let stop = Flag::default();
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let region = Segment::open(seg.name(), Duration::from_secs(1))
                .unwrap()
                .region()
                .clone();
            reader_thread(
                RingReader::attach(region, Start::Oldest).unwrap(),
                stop.clone(),
            )
        })
        .collect();
    let writer = writer_thread(RingWriter::new(seg.region().clone()), 0, stop.clone());
    // Scribbling starts once the ring has wrapped twice, so every reader's
    // cursor is at least one ring from sequence 0.
    let t0 = Instant::now();
    while seg.region().state().head < 2 * n {
        assert!(t0.elapsed() < HANG, "the writer does not publish");
        std::thread::yield_now();
    }
    let mut s = Scribbler::new(&seg, seed(test));
    let total = scribbles();
    let plan: Vec<(Vec<Target>, u64)> = stages
        .iter()
        .map(|(t, pct)| (t.to_vec(), total * pct / 100))
        .collect();
    let scribbler = spawn(move || {
        let mut hits: Vec<(Target, u64)> = Vec::new();
        let mut k = 0u64;
        for (targets, count) in &plan {
            for _ in 0..*count {
                let t = s.scribble(targets);
                match hits.iter_mut().find(|h| h.0 == t) {
                    Some(h) => h.1 += 1,
                    None => hits.push((t, 1)),
                }
                k += 1;
                if k % 4 == 0 {
                    std::thread::yield_now();
                }
            }
        }
        hits
    });
    let hits = join_within("scribbler", scribbler);
    stop.set();
    let (mut writer, mut next, writer_tally) = join_within("writer", writer);
    let (mut readers, mut reader_tallies): (Vec<_>, Vec<_>) = readers
        .into_iter()
        .enumerate()
        .map(|(i, t)| join_within(&format!("reader {i}"), t))
        .unzip();
    // Whether a reader met a scribbled record before the writer overwrote
    // it was up to the scheduler (on one busy CPU the readers read each
    // record before the scribbler runs). One scribble every reader is sure
    // to meet, in the battered segment:
    for (r, t) in readers.iter_mut().zip(reader_tallies.iter_mut()) {
        t.scribbled_unread = Some(scribbled_unread_record(&seg, &mut writer, &mut next, r));
    }
    println!("{test}: scribbles {hits:?}");
    println!("{test}: writer {writer_tally:?}");
    for (i, t) in reader_tallies.iter().enumerate() {
        println!("{test}: reader {i} {t:?}");
    }
    let targets: Vec<Target> = stages.iter().flat_map(|(t, _)| t.iter().copied()).collect();
    let head_scribbled = targets.contains(&Target::Head);
    for t in targets {
        assert!(
            hits.iter().any(|h| h.0 == t && h.1 > 0),
            "{t:?} was scribbled: {hits:?}"
        );
    }
    Scribbled {
        seg,
        writer,
        next,
        readers,
        writer_tally,
        reader_tallies,
        head_scribbled,
    }
}

/// The rules of the scribbling phase: nobody crashed or hung (we got here),
/// the writer kept publishing, readers kept polling, and errors were
/// reported rather than passed off as records.
fn assert_survived(s: &Scribbled) {
    assert!(s.writer_tally.ok > 0, "the writer published");
    for (i, t) in s.reader_tallies.iter().enumerate() {
        assert!(t.polls > 0, "reader {i} made progress");
        assert_eq!(t.polls, t.records + t.empty + t.lagged + t.corrupt);
    }
    let mut checked = 0;
    for (i, t) in s.reader_tallies.iter().enumerate() {
        let got = t.scribbled_unread.as_deref().unwrap_or("nothing");
        if got == WEDGED && s.head_scribbled {
            continue;
        }
        assert!(
            got.starts_with("Corrupt("),
            "reader {i}: a scribbled record it had not read yet is reported Corrupt, got {got}"
        );
        checked += 1;
    }
    assert!(
        checked > 0,
        "no reader left to check: {:?}",
        s.reader_tallies
    );
}

#[test]
fn scribbling_every_part_of_a_live_segment_never_crashes_or_hangs_readers_or_writer() {
    // Mostly what the ring recovers from, with the writer publishing; then
    // everything, including the words that wedge it (head, pins).
    let s = scribbling_phase(
        "every_part",
        &[(RECOVERABLE, 60), (&[Target::Index], 20), (ALL, 20)],
    );
    assert_survived(&s);
    // Readers still answer (no hang) after scribbling stopped.
    let mut s = s;
    for r in s.readers.iter_mut() {
        for _ in 0..100 {
            let _ = matches!(r.try_next(), Next::Record(_));
        }
    }
    drop(s.seg);
}

/// After scribbling stops, `3 × slot_count` fresh records overwrite the
/// whole index window: every reader must then read each fresh record it does
/// not lose to lag, valid and intact, and end at the head.
fn readers_recover(s: Scribbled) {
    let Scribbled {
        seg,
        mut writer,
        next,
        readers,
        head_scribbled,
        ..
    } = s;
    let n = seg.region().geometry().slot_count as u64;
    let fresh = 3 * n;
    for k in 0..fresh {
        writer
            .publish(&event(next + k))
            .expect("publish fresh records once scribbling stopped");
    }
    let head = writer.published();
    let fresh_start = head - fresh;
    for (i, mut r) in readers.into_iter().enumerate() {
        if head_scribbled && r.cursor() > head + 1 {
            // Followed a scribbled head word past the real one: not
            // recovered today (RECOVERABLE leaves the head out for this).
            println!("reader {i}: {WEDGED} (cursor {}, head {head})", r.cursor());
            continue;
        }
        let t0 = Instant::now();
        let mut valid = 0;
        while r.cursor() < head {
            assert!(
                t0.elapsed() < HANG,
                "reader {i} stuck at cursor {} < head {head}",
                r.cursor()
            );
            match r.try_next() {
                Next::Record(x) if x.seq() >= fresh_start => {
                    let src = x.source_seq.to_native() as u64;
                    assert_eq!(
                        x.to_owned(),
                        event(src),
                        "reader {i}: fresh record {} intact",
                        x.seq()
                    );
                    valid += 1;
                }
                Next::Corrupt { seq, why } => {
                    assert!(
                        seq < fresh_start,
                        "reader {i}: fresh record {seq} corrupt: {why}"
                    )
                }
                _ => {}
            }
        }
        assert!(
            valid >= 1,
            "reader {i} read no fresh record (cursor {}, head {head}, lost {})",
            r.cursor(),
            r.lost()
        );
        assert!(
            matches!(r.try_next(), Next::Empty),
            "reader {i} ends at the head"
        );
    }
}

#[test]
fn readers_read_valid_records_again_once_scribbling_stops() {
    let s = scribbling_phase("recoverable", &[(RECOVERABLE, 100)]);
    assert_survived(&s);
    readers_recover(s);
}

#[test]
fn readers_read_valid_records_again_once_index_scribbling_stops() {
    let s = scribbling_phase(
        "index_recovery",
        &[(&[Target::Index, Target::SlotBytes], 100)],
    );
    assert_survived(&s);
    readers_recover(s);
}

#[test]
fn readers_read_valid_records_again_once_scribbling_of_every_part_stops() {
    let s = scribbling_phase("every_part_recovery", &[(ALL, 100)]);
    assert_survived(&s);
    readers_recover(s);
}

// ---------------------------------------------------------------------------
// Targeted corruptions (deterministic).

struct Fixture {
    seg: Segment,
    file: File,
    w: RingWriter,
    r: RingReader,
}

fn fixture() -> Fixture {
    let seg = Segment::create(geometry()).unwrap();
    let file = shm_file(&seg);
    let w = RingWriter::new(seg.region().clone());
    let region = Segment::open(seg.name(), Duration::from_secs(1))
        .unwrap()
        .region()
        .clone();
    let r = RingReader::attach(region, Start::Head).unwrap();
    Fixture { seg, file, w, r }
}

impl Fixture {
    fn n(&self) -> u64 {
        self.seg.region().geometry().slot_count as u64
    }
    fn publish(&mut self, count: u64) {
        for _ in 0..count {
            let k = self.w.published();
            self.w.publish(&event(k)).expect("publish");
        }
    }
    fn put_u64(&self, off: u64, v: u64) {
        self.file.write_all_at(&v.to_ne_bytes(), off).unwrap();
    }
    fn put_u32(&self, off: u64, v: u32) {
        self.file.write_all_at(&v.to_ne_bytes(), off).unwrap();
    }
    fn head_off(&self) -> u64 {
        self.seg.region().offsets().ring + offset_of!(RingHeader, head) as u64
    }
    fn slot_off(&self, s: u32) -> u64 {
        let o = self.seg.region().offsets();
        o.slots + s as u64 * self.seg.region().geometry().slot_size as u64
    }
    fn index_off(&self, seq: u64) -> u64 {
        self.seg.region().offsets().index + (seq % self.n()) * 8
    }
}

/// Runs one `try_next` on another thread and describes the outcome. If it
/// has not returned after a few seconds, `unstick` runs (it must make the
/// read return, e.g. by lapping the ring) and the hang is a failure; a panic
/// inside `try_next` is a failure too.
fn try_next_returns(mut r: RingReader, what: &str, unstick: impl FnOnce()) -> (RingReader, String) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        let out = format!("{:?}", r.try_next());
        tx.send(out).unwrap();
        r
    });
    let got = rx.recv_timeout(Duration::from_secs(5));
    if matches!(got, Err(mpsc::RecvTimeoutError::Timeout)) {
        unstick();
    }
    let r = match h.join() {
        Ok(r) => r,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            panic!("try_next panicked ({what}): {msg}")
        }
    };
    (r, got.unwrap_or_else(|_| panic!("try_next hung: {what}")))
}

#[test]
fn corrupt_slot_commit_word_length_and_bytes_are_reported_not_returned() {
    let mut f = fixture();
    f.publish(4);
    let sc = |f: &Fixture, seq: u64| {
        let e = read_u64(&f.file, f.index_off(seq));
        (e & 0xFFFF) as u32
    };
    // Record 0: commit word disagrees with the index.
    let s0 = sc(&f, 0);
    f.put_u64(f.slot_off(s0) + offset_of!(SlotHeader, seq) as u64, 77);
    // Record 1: length beyond the slot.
    let s1 = sc(&f, 1);
    f.put_u32(f.slot_off(s1) + offset_of!(SlotHeader, len) as u64, 10_000);
    // Record 2: garbage bytes over the whole record.
    let s2 = sc(&f, 2);
    f.file
        .write_all_at(
            &[0xA5; 200],
            f.slot_off(s2) + size_of::<SlotHeader>() as u64,
        )
        .unwrap();
    for bad in 0..3 {
        match f.r.try_next() {
            Next::Corrupt { seq, .. } => assert_eq!(seq, bad),
            other => panic!("record {bad}: expected Corrupt, got {other:?}"),
        }
    }
    match f.r.try_next() {
        Next::Record(x) => assert_eq!(x.to_owned(), event(3)),
        other => panic!("record 3 was not touched: {other:?}"),
    }
    // Slots are reused and rewritten: later records are fine.
    f.publish(3 * f.n());
    let mut valid = 0;
    while f.r.cursor() < f.w.published() {
        match f.r.try_next() {
            Next::Record(x) => {
                assert_eq!(x.to_owned(), event(x.source_seq.to_native() as u64));
                valid += 1;
            }
            Next::Lagged { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(valid, f.n());
}

#[test]
fn corrupt_index_entries_are_reported_not_returned() {
    let mut f = fixture();
    f.publish(4);
    f.put_u64(f.index_off(0), u64::MAX); // empty below head
    f.put_u64(f.index_off(1), index_entry(1, 60_000)); // names no slot
    let e2 = read_u64(&f.file, f.index_off(2));
    f.put_u64(f.index_off(2), index_entry(1, (e2 & 0xFFFF) as u32)); // older sequence
    for bad in 0..3 {
        match f.r.try_next() {
            Next::Corrupt { seq, why } => {
                assert_eq!(seq, bad, "{why}");
            }
            other => panic!("index entry {bad}: expected Corrupt, got {other:?}"),
        }
    }
    match f.r.try_next() {
        Next::Record(x) => assert_eq!(x.to_owned(), event(3)),
        other => panic!("{other:?}"),
    };
}

/// Puts `entry` into the index position of the fixture reader's cursor
/// (1, after reading record 0 of 3), then checks that one read returns
/// Corrupt for it, and that the reader then reads fresh records.
fn impossible_index_entry_is_reported_corrupt(entry: impl FnOnce(u64, u32) -> u64, what: &str) {
    let mut f = fixture();
    f.publish(3);
    match f.r.try_next() {
        Next::Record(x) => assert_eq!(x.seq(), 0),
        other => panic!("{other:?}"),
    };
    let n = f.n();
    let e1 = read_u64(&f.file, f.index_off(1));
    f.put_u64(f.index_off(1), entry(n, (e1 & 0xFFFF) as u32));
    let Fixture { seg, w, r, .. } = f;
    let w = Arc::new(Mutex::new(w));
    let w2 = w.clone();
    let (mut r, got) = try_next_returns(r, what, move || {
        let mut w = w2.lock().unwrap();
        for k in 0..2 * n {
            w.publish(&event(100 + k)).unwrap();
        }
    });
    assert!(
        got.starts_with("Corrupt"),
        "{what}: expected Corrupt, got {got}"
    );
    // The writer goes on; the reader reads the records it publishes.
    let mut w = w.lock().unwrap();
    for k in 0..2 * n {
        w.publish(&event(200 + k)).unwrap();
    }
    let head = w.published();
    let mut valid = 0;
    for _ in 0..4 * n {
        match r.try_next() {
            Next::Record(x) => {
                assert_eq!(x.to_owned(), event(x.source_seq.to_native() as u64));
                valid += 1;
            }
            Next::Empty => break,
            _ => {}
        }
    }
    assert!(
        valid > 0,
        "{what}: reader (cursor {}, lost {}) reads none of the records up to head {head}",
        r.cursor(),
        r.lost()
    );
    drop(seg);
}

#[test]
fn index_entry_at_the_wrong_position_is_reported_corrupt() {
    // Entry 1 claims sequence 5: 5 % n != 1, so no lap explains it.
    impossible_index_entry_is_reported_corrupt(|_, slot| index_entry(5, slot), "seq 5 at index 1");
}

#[test]
fn index_entry_far_ahead_of_the_head_is_reported_corrupt() {
    // Same index position as the cursor, a billion laps ahead.
    impossible_index_entry_is_reported_corrupt(
        |n, slot| index_entry(1 + n * (1 << 30), slot),
        "seq 1 + n·2^30 at index 1",
    );
}

#[test]
fn reader_recovers_after_the_head_word_is_scribbled() {
    let mut f = fixture();
    f.publish(2);
    let n = f.n();
    f.put_u64(f.head_off(), 1 << 40);
    match f.r.try_next() {
        Next::Lagged { missed } => println!("scribbled head reported as a lag of {missed}"),
        other => println!("scribbled head: {other:?}"),
    }
    // The writer publishes again (restoring the real head), several laps.
    f.publish(3 * n);
    let head = f.w.published();
    let mut fresh = 0;
    for _ in 0..10 * n {
        match f.r.try_next() {
            Next::Record(x) => {
                assert_eq!(x.to_owned(), event(x.source_seq.to_native() as u64));
                fresh += 1;
            }
            Next::Empty => break,
            _ => {}
        }
    }
    assert!(
        fresh > 0,
        "reader (cursor {}) reads none of the records up to head {head}",
        f.r.cursor()
    );
}

#[test]
fn writer_recovers_after_pin_counts_are_scribbled() {
    let mut f = fixture();
    f.publish(2);
    let data_slots = f.seg.region().offsets().data_slots;
    for s in 0..data_slots {
        f.put_u32(f.slot_off(s) + offset_of!(SlotHeader, pins) as u64, 1);
    }
    // Either repaired at once (no reader holds a pin, so the writer resets
    // the counts) or reported, never a crash:
    let first = f.w.publish(&event(2));
    assert!(
        matches!(
            first,
            Ok(_) | Err(WriteError::Publish(PublishError::NoFreeSlot))
        ),
        "{first:?}"
    );
    // Scribbling stopped. No reader holds a pin (the client table says so):
    let st = f.seg.region().state();
    assert!(st.clients.iter().all(|c| c.held_slot == u32::MAX));
    let mut ok = 0;
    for k in 0..4 * f.n() {
        if f.w.publish(&event(3 + k)).is_ok() {
            ok += 1;
        }
    }
    assert!(
        ok > 0,
        "the writer never publishes again: every slot looks pinned"
    );
}

// ---------------------------------------------------------------------------
// Corrupted headers at open.

/// A shm object holding `bytes`, unlinked on drop.
struct Object {
    name: String,
}

impl Object {
    fn new(k: u64, bytes: &[u8]) -> Object {
        let name = format!("{NAME_PREFIX}hostile-{}-{k}", std::process::id());
        let path = format!("/dev/shm/{}", &name[1..]);
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        f.write_all_at(bytes, 0).unwrap();
        Object { name }
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(format!("/dev/shm/{}", &self.name[1..]));
    }
}

#[test]
fn randomly_corrupted_headers_open_with_a_typed_error_or_a_usable_region() {
    let mut rng = Rng::new(seed("corrupted_headers"));
    let valid = {
        let seg = Segment::create(geometry()).unwrap();
        std::fs::read(format!("/dev/shm/{}", &seg.name()[1..])).unwrap()
    };
    let fields: &[(usize, usize)] = &[
        (offset_of!(SegmentHeader, magic), 8),
        (offset_of!(SegmentHeader, layout_version), 4),
        (offset_of!(SegmentHeader, header_size), 4),
        (offset_of!(SegmentHeader, schema_hash), 8),
        (offset_of!(SegmentHeader, total_size), 8),
        (offset_of!(SegmentHeader, slot_count), 4),
        (offset_of!(SegmentHeader, slot_size), 4),
        (offset_of!(SegmentHeader, data_slots), 4),
        (offset_of!(SegmentHeader, client_capacity), 4),
        (offset_of!(SegmentHeader, ring_offset), 8),
        (offset_of!(SegmentHeader, clients_offset), 8),
        (offset_of!(SegmentHeader, index_offset), 8),
        (offset_of!(SegmentHeader, slots_offset), 8),
        (offset_of!(SegmentHeader, init_complete), 4),
        // Not validated at open (liveness and identity of the owner).
        (offset_of!(SegmentHeader, server_pid), 4),
        (offset_of!(SegmentHeader, server_heartbeat), 8),
        (offset_of!(SegmentHeader, server_generation), 8),
    ];
    let mut seen: Vec<&'static str> = Vec::new();
    let iterations = if long() { 5_000 } else { 400 };
    for k in 0..iterations {
        let mut b = valid.clone();
        // 1–3 field edits: noise, a near-miss (±1), or a small value.
        for _ in 0..1 + rng.below(3) {
            let (off, len) = fields[rng.below(fields.len() as u64) as usize];
            let cur = if len == 8 {
                u64::from_ne_bytes(b[off..off + 8].try_into().unwrap())
            } else {
                u32::from_ne_bytes(b[off..off + 4].try_into().unwrap()) as u64
            };
            let v = match rng.below(4) {
                0 => rng.next(),
                1 => cur.wrapping_add(1),
                2 => cur.wrapping_sub(1),
                _ => rng.below(1 << 20),
            };
            b[off..off + len].copy_from_slice(&v.to_ne_bytes()[..len]);
        }
        if rng.chance(10) {
            let at = rng.below(size_of::<SegmentHeader>() as u64) as usize;
            let len = (1 + rng.below(32) as usize).min(size_of::<SegmentHeader>() - at);
            b[at..at + len].copy_from_slice(&rng.bytes(len));
        }
        if rng.chance(85) {
            // Most openers find init-complete, so the later checks run.
            let off = offset_of!(SegmentHeader, init_complete);
            b[off..off + 4].copy_from_slice(&INIT_COMPLETE.to_ne_bytes());
        }
        if rng.chance(10) {
            // Truncated: shorter than the header, or than the geometry says.
            let hdr = size_of::<SegmentHeader>() as u64;
            let to = if rng.chance(50) {
                rng.below(hdr)
            } else {
                hdr + rng.below(b.len() as u64 - hdr)
            };
            b.truncate(to as usize);
        }
        let o = Object::new(k, &b);
        let kind = match Segment::open(&o.name, Duration::from_millis(1)) {
            Ok(seg) => {
                // Accepted: the header is consistent; the region works.
                let region: &Region = seg.region();
                let st = region.state();
                assert!(st.clients.len() as u32 == region.geometry().client_capacity);
                let mut r = RingReader::attach(region.clone(), Start::Oldest)
                    .expect("an accepted segment has a client table");
                for _ in 0..3 {
                    let _ = format!("{:?}", r.try_next());
                }
                "ok"
            }
            Err(SegmentError::Open(e)) => match e {
                OpenError::TooSmall(_) => "too_small",
                OpenError::InitTimeout => "init_timeout",
                OpenError::BadMagic(_) => "bad_magic",
                OpenError::VersionMismatch { expected, .. } => {
                    assert_eq!(expected, LAYOUT_VERSION);
                    "version"
                }
                OpenError::SchemaMismatch { expected, .. } => {
                    assert_eq!(expected, SCHEMA_HASH);
                    "schema"
                }
                OpenError::BadGeometry(why) => {
                    assert!(!why.is_empty());
                    "geometry"
                }
            },
            Err(e) => panic!("iteration {k}: not an OpenError: {e}"),
        };
        if !seen.contains(&kind) {
            seen.push(kind);
        }
    }
    println!("corrupted_headers: outcomes seen {seen:?}");
    for kind in [
        "ok",
        "too_small",
        "init_timeout",
        "bad_magic",
        "version",
        "schema",
        "geometry",
    ] {
        assert!(
            seen.contains(&kind),
            "the fuzz reached {kind} (seen {seen:?})"
        );
    }
}
