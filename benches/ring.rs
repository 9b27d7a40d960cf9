//! Criterion benchmarks of the shared-memory event ring.
//!
//! ```sh
//! cargo bench --bench ring                    # everything, about 1 minute
//! cargo bench --bench ring -- fanout          # one group
//! FASTPMIX_BENCH_SAMPLES=20 cargo bench --bench ring   # criterion sample_size (min 10)
//! ```
//!
//! Groups:
//! - `publish_no_sleeper/{encode_publish_typical, publish_bytes_typical,
//!   publish_bytes_small}`: one publish with no reader asleep (the writer never
//!   makes a syscall then). "typical" is a record with 8 infos (about 500 B
//!   archived), "small" one with none.
//! - `reader_pickup/{typical, small}`: `try_next` + drop of a record already
//!   published, same process (includes `rkyv::access` validation).
//! - `access/{validated, unchecked}`: `rkyv::access` versus
//!   `rkyv::access_unchecked` on a typical record.
//! - `futex_floor/{wake_one_way, rtt_half}`: the raw futex wake between two
//!   PROCESSES on a MAP_SHARED word (memfd), the floor the cross-process rows
//!   are read against: ring the sleeping child, the child stamps its wake-up
//!   (one-way) and rings back (round trip / 2, both sides asleep);
//!   `spin_one_way`: the same word busy-polled by the child (no syscall):
//!   the cross-process cache-line floor the spinning rows are read against.
//! - `one_way/{sleeping, sleeping_encode, spinning, spinning_encode}`: from
//!   the publish until a reader PROCESS holds the validated record; the writer
//!   puts `CLOCK_MONOTONIC` nanoseconds (system-wide, unlike `Instant`) in the
//!   record's `timestamp_ns` and the reader subtracts it from its own clock
//!   read. Plain rows publish pre-encoded bytes (the timestamp patched in);
//!   `_encode` rows include rkyv encoding. The sleeping reader never spins
//!   (`SpinPolicy::never`) and is asleep in the futex before each publish; the
//!   spinning reader busy-polls `try_next`.
//! - `fanout_last_reader/{1,2,8,32}`: N sleeping reader processes; the time
//!   until the LAST one holds the record (each writes its latency into a
//!   shared results area; the bench takes the maximum).
//! - `throughput_one_reader/{small, typical}`: records per second delivered to
//!   one busy-polling reader process; the writer never lets itself get more
//!   than a ring ahead (it reads the reader's cursor), so nothing is lost.
//!
//! Criterion reports means of samples, not percentiles; the p50/p90/p99 table
//! with ratios to the floor is `cargo bench --bench ring_table`. Nothing
//! asserts on a time.
//!
//! Processes: children are this bench binary re-executed with
//! `FASTPMIX_RING_BENCH_CHILD` naming their role; they map the ring segment by
//! name and a small control block (memfd, inherited) holding futex words,
//! counters and the results area. Every wait has a deadline; children are
//! killed (by pid) if they do not stop. Each cross-process group prints a note
//! when it keeps every core busy or oversubscribes the machine (8 and 32
//! readers on 2 cores are woken at once by one publish).
//!
//! The [`harness`] module is shared with `benches/ring_table.rs` (included
//! there with `#[path]`).

use criterion::{BenchmarkId, Criterion, Throughput};
use harness::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Everything the two ring benches share: records, the control block, child
/// processes and the measurement rigs.
pub mod harness {
    use fastpmix::internals::ring::{
        ArchivedEventRecord, EventRecord, Next, RingReader, RingWriter, Segment, SpinPolicy, Start,
    };
    use fastpmix::internals::sync::{Cell32, Cell64};
    use rkyv::util::AlignedVec;
    use shm_layout::client_state;
    use shm_layout::record::{InfoRecord, ProcRecord, ValueRecord};
    use shm_layout::Geometry;
    use std::fs::File;
    use std::hint::spin_loop;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::process::{Child, Command, Stdio};
    use std::thread;
    use std::time::{Duration, Instant};

    /// Selects the role of a re-executed child.
    pub const CHILD_ENV: &str = "FASTPMIX_RING_BENCH_CHILD";
    const SEGMENT_ENV: &str = "FASTPMIX_RING_BENCH_SEGMENT";
    const CTL_ENV: &str = "FASTPMIX_RING_BENCH_CTL_FD";
    const INDEX_ENV: &str = "FASTPMIX_RING_BENCH_INDEX";
    const READERS_ENV: &str = "FASTPMIX_RING_BENCH_READERS";
    const COUNT_ENV: &str = "FASTPMIX_RING_BENCH_COUNT";

    /// Most reader processes a rig runs.
    pub const MAX_READERS: usize = 32;
    /// Event code of the record that tells reader children to exit.
    const STOP_CODE: i32 = i32::MIN + 7;
    /// Record flag (outside the PMIx flag bits): the reader reports this one.
    pub const ACK: u32 = 0x4000_0000;
    /// Floor ping value that tells the floor child to exit.
    const PING_STOP: u32 = u32::MAX;
    /// Placeholder timestamp, found in the encoded bytes and patched per send.
    const TS_SENTINEL: u64 = 0x5EED_F00D_CAFE_BEEF;
    /// How long the bench side of a spinning exchange spins before yielding.
    const SPIN_BUDGET: Duration = Duration::from_micros(50);
    /// Pause after a sleeper is known to be asleep (or, for the floor, after
    /// the answer), so that it is inside `futex_wait` at the next send.
    const GAP_ASLEEP: Duration = Duration::from_micros(20);
    /// Pause between sends to a spinning reader (it goes back to polling).
    const GAP_SPINNING: Duration = Duration::from_micros(2);
    /// Any single wait longer than this means a child is gone or stuck.
    const DEADLINE: Duration = Duration::from_secs(20);
    /// Records the throughput writer publishes between looks at the cursor.
    const FLOW_BATCH: u64 = 64;

    /// `CLOCK_MONOTONIC` in nanoseconds: the same clock in every process
    /// (`Instant` values cannot be compared across processes).
    pub fn mono_ns() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into `ts`, which is valid
        // for writes; CLOCK_MONOTONIC always exists on Linux.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// Spins (no syscall) for `d`.
    pub fn busy_wait(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {
            spin_loop();
        }
    }

    /// Online cores.
    pub fn cores() -> usize {
        thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// Prints whether `busy` runnable processes keep every core busy or
    /// oversubscribe the machine.
    pub fn core_note(what: &str, busy: usize) {
        let c = cores();
        if busy > c {
            println!("note: {what}: {busy} runnable processes on {c} cores: OVERSUBSCRIBED");
        } else if busy == c {
            println!("note: {what}: {busy} busy processes on {c} cores: no spare core");
        }
    }

    const NSPACE: &str = "prterun-node017-41522@1";

    fn info(key: &str, value: ValueRecord) -> InfoRecord {
        InfoRecord {
            key: key.into(),
            flags: 0,
            value,
        }
    }

    /// A typical event: a source, one affected proc and 8 infos with short
    /// keys and scalar or short string values.
    pub fn typical(seq: u64) -> EventRecord {
        EventRecord {
            code: -146,
            range: 3,
            flags: 0,
            source: ProcRecord {
                nspace: NSPACE.into(),
                rank: 0,
            },
            source_seq: seq,
            timestamp_ns: 0,
            custom_range: vec![],
            affected: vec![ProcRecord {
                nspace: NSPACE.into(),
                rank: 17,
            }],
            info: vec![
                info("pmix.evname", ValueRecord::String("proc-aborted".into())),
                info("pmix.hname", ValueRecord::String("node017".into())),
                info("pmix.rank", ValueRecord::Rank(17)),
                info("pmix.job.status", ValueRecord::Status(-146)),
                info("pmix.exit.code", ValueRecord::Int(134)),
                info("pmix.evtime", ValueRecord::Time(1_717_171_717)),
                info("pmix.job.size", ValueRecord::Uint32(256)),
                info("pmix.evterm", ValueRecord::Bool(false)),
            ],
        }
    }

    /// A small event: code, source and sequence, no infos.
    pub fn small(seq: u64) -> EventRecord {
        EventRecord {
            code: -331,
            range: 1,
            flags: 0,
            source: ProcRecord {
                nspace: "job".into(),
                rank: 0,
            },
            source_seq: seq,
            timestamp_ns: 0,
            custom_range: vec![],
            affected: vec![],
            info: vec![],
        }
    }

    /// Archives a record.
    pub fn encode(rec: &EventRecord) -> AlignedVec {
        rkyv::to_bytes::<rkyv::rancor::Error>(rec).expect("bench record encodes")
    }

    /// A pre-encoded record whose timestamp can be patched per send.
    pub struct Encoded {
        /// The archived bytes.
        pub bytes: AlignedVec,
        ts_at: usize,
    }

    impl Encoded {
        /// Encodes `rec` (its timestamp is replaced) with extra `flags`.
        pub fn new(rec: &EventRecord, flags: u32) -> Encoded {
            let mut r = rec.clone();
            r.timestamp_ns = TS_SENTINEL;
            r.flags |= flags;
            let bytes = encode(&r);
            let pat = TS_SENTINEL.to_le_bytes();
            let hits: Vec<usize> = bytes
                .windows(8)
                .enumerate()
                .filter(|(_, w)| *w == pat)
                .map(|(i, _)| i)
                .collect();
            assert_eq!(hits.len(), 1, "timestamp sentinel found exactly once");
            Encoded {
                bytes,
                ts_at: hits[0],
            }
        }

        /// Sets the archived `timestamp_ns`.
        pub fn stamp(&mut self, ns: u64) {
            self.bytes[self.ts_at..self.ts_at + 8].copy_from_slice(&ns.to_le_bytes());
        }
    }

    // ---------------------------------------------------------------- control

    /// Control block line numbers (each word on its own 128-byte line).
    const L_PING: usize = 0;
    const L_PONG: usize = 1;
    const L_DONE: usize = 2;
    const L_READY: usize = 3;
    const L_ERRORS: usize = 4;
    const L_LOST: usize = 5;
    const L_FLOOR_STAMP: usize = 6;
    const L_STAMPS: usize = 8;
    const CTL_LINES: usize = L_STAMPS + MAX_READERS;
    const LINE: usize = 128;

    /// A MAP_SHARED memfd of 128-byte lines that re-executed children
    /// inherit (its descriptor number travels in an environment variable):
    /// futex words and counters, each on its own line. Shared by the ring
    /// and server benches.
    pub struct Block {
        _file: File,
        _map: memmap2::MmapMut,
        base: *mut u8,
        lines: usize,
        /// The descriptor children inherit.
        pub fd: i32,
    }

    impl Block {
        /// A fresh zeroed block of `lines` lines.
        pub fn create(name: &std::ffi::CStr, lines: usize) -> Block {
            // SAFETY: `name` is NUL-terminated; flags 0 (no MFD_CLOEXEC) on
            // purpose: children inherit the descriptor.
            let fd = unsafe { libc::memfd_create(name.as_ptr(), 0) };
            assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
            // SAFETY: `fd` is a fresh descriptor that nothing else owns.
            let file = unsafe { File::from_raw_fd(fd) };
            file.set_len((lines * LINE) as u64)
                .expect("size the control block");
            Block::map(file, lines)
        }

        /// The block a parent passed down in `env` (child side).
        pub fn inherit(env: &str, lines: usize) -> Block {
            let fd: i32 = env_parse(env);
            // SAFETY: the parent created this memfd without CLOEXEC and named
            // its number in the environment; this process owns its copy.
            let file = unsafe { File::from_raw_fd(fd) };
            Block::map(file, lines)
        }

        fn map(file: File, lines: usize) -> Block {
            // SAFETY: a memfd mapped MAP_SHARED (map_mut) between this process
            // and its parent/children; every word in it is accessed only
            // through atomic cells (`Cell32`/`Cell64`), never through plain
            // references.
            let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.expect("map control block");
            assert!(map.len() >= lines * LINE);
            let base = map.as_mut_ptr();
            let fd = file.as_raw_fd();
            Block {
                _file: file,
                _map: map,
                base,
                lines,
                fd,
            }
        }

        /// The 32-bit word at the start of `line`.
        pub fn c32(&self, line: usize) -> &Cell32 {
            assert!(line < self.lines);
            // SAFETY: in bounds (line < lines, mapping that long), 128-byte
            // aligned (page-aligned base); the mapping lives as long as `self`;
            // all processes access the word only atomically.
            unsafe { Cell32::at(self.base.add(line * LINE) as *mut u32) }
        }

        /// The 64-bit word at the start of `line`.
        pub fn c64(&self, line: usize) -> &Cell64 {
            assert!(line < self.lines);
            // SAFETY: as for `c32`, for a u64 word.
            unsafe { Cell64::at(self.base.add(line * LINE) as *mut u64) }
        }
    }

    /// This bench's control block: futex words, counters and the results
    /// area (one latency per reader).
    pub struct Ctl {
        block: Block,
        fd: i32,
    }

    impl Ctl {
        /// A fresh zeroed block.
        pub fn create() -> Ctl {
            Ctl::wrap(Block::create(c"fastpmix-ring-bench", CTL_LINES))
        }

        /// The block a parent passed down (child side).
        fn from_env() -> Ctl {
            Ctl::wrap(Block::inherit(CTL_ENV, CTL_LINES))
        }

        fn wrap(block: Block) -> Ctl {
            let fd = block.fd;
            Ctl { block, fd }
        }

        fn c32(&self, line: usize) -> &Cell32 {
            self.block.c32(line)
        }

        fn c64(&self, line: usize) -> &Cell64 {
            self.block.c64(line)
        }

        fn ping(&self) -> &Cell32 {
            self.c32(L_PING)
        }
        fn pong(&self) -> &Cell32 {
            self.c32(L_PONG)
        }
        fn done(&self) -> &Cell32 {
            self.c32(L_DONE)
        }
        fn ready(&self) -> &Cell32 {
            self.c32(L_READY)
        }
        /// Corrupt records the readers reported.
        pub fn errors(&self) -> u64 {
            self.c64(L_ERRORS).load_relaxed()
        }
        /// Records the readers lost to lag.
        pub fn lost(&self) -> u64 {
            self.c64(L_LOST).load_relaxed()
        }
        fn floor_stamp(&self) -> &Cell64 {
            self.c64(L_FLOOR_STAMP)
        }
        fn stamp(&self, i: usize) -> &Cell64 {
            assert!(i < MAX_READERS);
            self.c64(L_STAMPS + i)
        }
    }

    /// An environment variable a parent set for a child, parsed.
    pub fn env_parse<T: std::str::FromStr>(name: &str) -> T {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("child: {name} missing or malformed"))
    }

    /// `v` has reached `target` (counters that may wrap).
    pub fn reached(v: u32, target: u32) -> bool {
        (v.wrapping_sub(target) as i32) >= 0
    }

    /// Sleeps on `cell` (futex) until it reaches `target`.
    pub fn sleep_until(cell: &Cell32, target: u32, what: &str) {
        let t = Instant::now();
        loop {
            let v = cell.load_acquire();
            if reached(v, target) {
                return;
            }
            assert!(t.elapsed() < DEADLINE, "timed out waiting for {what}");
            cell.wait_while(v, Some(Duration::from_millis(100)));
        }
    }

    /// Spins on `cell` until it reaches `target`, yielding after a budget.
    fn spin_until(cell: &Cell32, target: u32, what: &str) {
        let t = Instant::now();
        let mut i = 0u32;
        while !reached(cell.load_acquire(), target) {
            i = i.wrapping_add(1);
            if i % 64 == 0 && t.elapsed() >= SPIN_BUDGET {
                assert!(t.elapsed() < DEADLINE, "timed out waiting for {what}");
                thread::yield_now();
            } else {
                spin_loop();
            }
        }
    }

    // --------------------------------------------------------------- children

    /// Child processes of one rig; killed (by pid) if they do not exit.
    pub struct Kids(Vec<Child>);

    impl Kids {
        fn spawn(role: &str, ctl: &Ctl, extra: &[(&str, String)], n: usize) -> Kids {
            let exe = std::env::current_exe().expect("current_exe");
            let kids = (0..n)
                .map(|i| {
                    let mut cmd = Command::new(&exe);
                    cmd.env(CHILD_ENV, role)
                        .env(CTL_ENV, ctl.fd.to_string())
                        .env(INDEX_ENV, i.to_string())
                        .stdin(Stdio::null());
                    for (k, v) in extra {
                        cmd.env(k, v);
                    }
                    cmd.spawn().expect("spawn bench child")
                })
                .collect();
            let k = Kids(kids);
            sleep_until(ctl.ready(), n as u32, "children to start");
            k
        }

        /// Waits up to `timeout` for every child to exit, then kills the rest.
        fn finish(&mut self, timeout: Duration) {
            let t = Instant::now();
            for c in &mut self.0 {
                loop {
                    match c.try_wait() {
                        Ok(Some(_)) | Err(_) => break,
                        Ok(None) if t.elapsed() < timeout => {
                            thread::sleep(Duration::from_millis(1))
                        }
                        Ok(None) => {
                            eprintln!("bench child {} did not exit: killing it", c.id());
                            let _ = c.kill();
                            let _ = c.wait();
                            break;
                        }
                    }
                }
            }
            self.0.clear();
        }
    }

    impl Drop for Kids {
        fn drop(&mut self) {
            self.finish(Duration::from_secs(2));
        }
    }

    /// Runs the child role named in the environment, if any, and exits.
    /// Both bench mains call this first.
    pub fn run_child_if_requested() {
        let Ok(role) = std::env::var(CHILD_ENV) else {
            return;
        };
        let code = match role.as_str() {
            "floor" => floor_child(),
            "floor-spin" => floor_spin_child(),
            "reader-sleep" => reader_child(false),
            "reader-spin" => reader_child(true),
            "publish" => publish_child(),
            other => {
                eprintln!("unknown bench child role {other:?}");
                2
            }
        };
        std::process::exit(code);
    }

    fn announce(ctl: &Ctl) {
        ctl.ready().fetch_add_seqcst(1);
        ctl.ready().wake_all();
    }

    /// Sleeps on `ping`; on each change stamps its wake-up and rings `pong`.
    fn floor_child() -> i32 {
        let ctl = Ctl::from_env();
        announce(&ctl);
        let mut seen = 0u32;
        loop {
            let v = ctl.ping().load_acquire();
            if v == seen {
                ctl.ping().wait_while(seen, None);
                continue;
            }
            let now = mono_ns();
            if v == PING_STOP {
                return 0;
            }
            ctl.floor_stamp().store_relaxed(now);
            seen = v;
            // Release: the stamp is visible once the parent sees pong.
            ctl.pong().store_release(v);
            ctl.pong().wake_all();
        }
    }

    /// Busy-polls `ping`; on each change stamps the moment it saw it and
    /// answers on `pong` (no syscall on either side).
    fn floor_spin_child() -> i32 {
        let ctl = Ctl::from_env();
        announce(&ctl);
        let mut seen = 0u32;
        loop {
            let v = ctl.ping().load_acquire();
            if v == seen {
                spin_loop();
                continue;
            }
            let now = mono_ns();
            if v == PING_STOP {
                return 0;
            }
            ctl.floor_stamp().store_relaxed(now);
            seen = v;
            ctl.pong().store_release(v);
        }
    }

    /// Attaches to the ring and reports every ACK record: its latency (own
    /// clock minus the record's timestamp) into the results area, then the
    /// shared `done` counter. Sleeping readers never spin; spinning ones
    /// busy-poll.
    fn reader_child(spin: bool) -> i32 {
        let ctl = Ctl::from_env();
        let name: String = env_parse(SEGMENT_ENV);
        let idx: usize = env_parse(INDEX_ENV);
        let n: u32 = env_parse(READERS_ENV);
        let seg = match Segment::open(&name, Duration::from_secs(5)) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("bench reader: cannot open {name}: {e}");
                return 1;
            }
        };
        let Some(mut r) = RingReader::attach(seg.region().clone(), Start::Head) else {
            eprintln!("bench reader: client table full");
            return 1;
        };
        r.set_spin(SpinPolicy::never());
        announce(&ctl);
        let stamp = ctl.stamp(idx);
        loop {
            let mut empty = false;
            match r.try_next() {
                Next::Record(rec) => {
                    let now = mono_ns();
                    if rec.code.to_native() == STOP_CODE {
                        break;
                    }
                    if rec.flags.to_native() & ACK != 0 {
                        stamp.store_relaxed(now.saturating_sub(rec.timestamp_ns.to_native()));
                        // SeqCst RMW (Release): the parent's Acquire load of
                        // `done` makes the stamp visible.
                        let prev = ctl.done().fetch_add_seqcst(1);
                        if !spin && prev.wrapping_add(1) % n == 0 {
                            ctl.done().wake_all();
                        }
                    }
                }
                Next::Empty => empty = true,
                Next::Lagged { missed } => {
                    ctl.c64(L_LOST).fetch_add_relaxed(missed);
                }
                Next::Corrupt { seq, why } => {
                    eprintln!("bench reader {idx}: corrupt record {seq}: {why}");
                    ctl.c64(L_ERRORS).fetch_add_relaxed(1);
                }
            }
            if empty {
                if spin {
                    spin_loop();
                } else {
                    r.wait(None);
                }
            }
        }
        drop(r);
        drop(seg);
        0
    }

    /// Publishes `COUNT` typical records (encode + publish) with no reader
    /// asleep, then prints what the ring counted. Run under strace.
    fn publish_child() -> i32 {
        let n: u64 = env_parse(COUNT_ENV);
        let seg = Segment::create(Geometry::default()).expect("create segment");
        let mut w = RingWriter::new(seg.region().clone());
        let mut rec = typical(0);
        let vcs0 = voluntary_switches();
        for i in 0..n {
            rec.source_seq = i;
            rec.timestamp_ns = i;
            w.publish(&rec).expect("publish");
        }
        let vcs1 = voluntary_switches();
        println!(
            "published={} wakes={} voluntary_ctxt_switches={}",
            w.published(),
            w.wakes(),
            vcs1.saturating_sub(vcs0)
        );
        drop(w);
        drop(seg);
        0
    }

    /// `voluntary_ctxt_switches` of this process (0 when unreadable).
    pub fn voluntary_switches() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or(0)
    }

    /// Environment for a `publish` child that publishes `n` records.
    pub fn publish_child_env(n: u64) -> Vec<(String, String)> {
        vec![
            (CHILD_ENV.into(), "publish".into()),
            (COUNT_ENV.into(), n.to_string()),
        ]
    }

    // ------------------------------------------------------------------- rigs

    /// The raw floor: this process and one child exchanging a shared word in
    /// the control block, either asleep in the futex (the floor of the
    /// sleeping rows) or busy-polling it (what a cache-line transfer between
    /// two processes costs here: the floor of the spinning rows).
    pub struct FloorRig {
        ctl: Ctl,
        kids: Kids,
        next: u32,
        spinning: bool,
    }

    impl FloorRig {
        /// Spawns a child that sleeps in `futex_wait` and waits until it is up.
        pub fn new() -> FloorRig {
            FloorRig::start(false)
        }

        /// Spawns a child that busy-polls the word (no syscalls).
        pub fn spinning() -> FloorRig {
            FloorRig::start(true)
        }

        fn start(spinning: bool) -> FloorRig {
            let ctl = Ctl::create();
            let role = if spinning { "floor-spin" } else { "floor" };
            let kids = Kids::spawn(role, &ctl, &[], 1);
            busy_wait(Duration::from_millis(1));
            FloorRig {
                ctl,
                kids,
                next: 0,
                spinning,
            }
        }

        /// One exchange after both processes slept for `idle` (the parent
        /// in `nanosleep`, the child in the futex): one-way ns. On a VM a
        /// vCPU idle that long may be descheduled by the host, and its
        /// wake-up costs more: the floor of rows that let clients idle.
        pub fn once_after_idle(&mut self, idle: Duration) -> u64 {
            std::thread::sleep(idle);
            self.once().0
        }

        /// One exchange: (one-way = child's stamp − send, round trip / 2), in
        /// ns. Futex rig: both sides sleep in the futex, then a pause so the
        /// child is asleep again. Spinning rig: store and spin, no syscall.
        pub fn once(&mut self) -> (u64, u64) {
            self.next = self.next.wrapping_add(1);
            if self.next == PING_STOP || self.next == 0 {
                self.next = 1;
            }
            let t0 = mono_ns();
            self.ctl.ping().store_release(self.next);
            if self.spinning {
                spin_until(self.ctl.pong(), self.next, "the spinning floor child");
            } else {
                self.ctl.ping().wake_all();
                sleep_until(self.ctl.pong(), self.next, "the floor child");
            }
            let t1 = mono_ns();
            let woke = self.ctl.floor_stamp().load_relaxed();
            busy_wait(if self.spinning {
                GAP_SPINNING
            } else {
                GAP_ASLEEP
            });
            (woke.saturating_sub(t0), (t1 - t0) / 2)
        }
    }

    impl Default for FloorRig {
        fn default() -> Self {
            FloorRig::new()
        }
    }

    impl Drop for FloorRig {
        fn drop(&mut self) {
            self.ctl.ping().store_release(PING_STOP);
            if !self.spinning {
                self.ctl.ping().wake_all();
            }
            self.kids.finish(Duration::from_secs(2));
        }
    }

    /// How the reader processes of a [`RingRig`] wait.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Mode {
        /// Asleep in the futex before each publish (never spin).
        Sleeping,
        /// Busy-polling `try_next`.
        Spinning,
    }

    /// A ring segment, its writer (this process) and `n` reader processes.
    pub struct RingRig {
        seg: Segment,
        writer: RingWriter,
        ctl: Ctl,
        kids: Kids,
        n: usize,
        mode: Mode,
        done: u32,
        typical: Encoded,
        small: Encoded,
        typical_rec: EventRecord,
        /// Samples after which not every reader was seen asleep within 1 s.
        pub unsettled: u64,
        /// Times the throughput writer had to wait for the reader (it was a
        /// ring minus two batches ahead).
        pub flow_waits: u64,
    }

    impl RingRig {
        /// A default-geometry segment (512 slots of 1 KiB) with `n` readers.
        pub fn new(n: usize, mode: Mode) -> RingRig {
            assert!((1..=MAX_READERS).contains(&n));
            let g = Geometry {
                client_capacity: (n as u32 + 1).max(4),
                ..Geometry::default()
            };
            let seg = Segment::create(g).expect("create ring segment");
            let writer = RingWriter::new(seg.region().clone());
            let ctl = Ctl::create();
            let role = match mode {
                Mode::Sleeping => "reader-sleep",
                Mode::Spinning => "reader-spin",
            };
            let extra = [
                (SEGMENT_ENV, seg.name().to_owned()),
                (READERS_ENV, n.to_string()),
            ];
            let kids = Kids::spawn(role, &ctl, &extra, n);
            let mut typical_rec = typical(0);
            typical_rec.flags |= ACK;
            let mut rig = RingRig {
                seg,
                writer,
                ctl,
                kids,
                n,
                mode,
                done: 0,
                typical: Encoded::new(&typical(0), ACK),
                small: Encoded::new(&small(0), ACK),
                typical_rec,
                unsettled: 0,
                flow_waits: 0,
            };
            rig.settle();
            rig
        }

        /// The segment's name.
        pub fn name(&self) -> &str {
            self.seg.name()
        }

        /// Waits until the readers are ready for the next send: asleep in the
        /// futex (sleeping mode) or back to polling (spinning mode).
        fn settle(&mut self) {
            if self.mode == Mode::Spinning {
                busy_wait(GAP_SPINNING);
                return;
            }
            let t = Instant::now();
            loop {
                let st = self.seg.region().state();
                let asleep = st
                    .clients
                    .iter()
                    .filter(|c| c.state == client_state::ACTIVE && c.waiting)
                    .count();
                if asleep >= self.n {
                    break;
                }
                if t.elapsed() > Duration::from_secs(1) {
                    self.unsettled += 1;
                    break;
                }
                if self.n + 1 > cores() {
                    thread::sleep(Duration::from_micros(20));
                } else {
                    thread::yield_now();
                }
            }
            busy_wait(GAP_ASLEEP);
        }

        fn wait_done(&self) {
            match self.mode {
                Mode::Sleeping => sleep_until(self.ctl.done(), self.done, "reader children"),
                Mode::Spinning => spin_until(self.ctl.done(), self.done, "reader children"),
            }
        }

        /// Publishes one typical record and returns the latency (ns) of the
        /// last reader to hold it. `encode`: rkyv encoding is included.
        pub fn one_way(&mut self, encode: bool) -> u64 {
            self.done = self.done.wrapping_add(self.n as u32);
            if encode {
                self.typical_rec.timestamp_ns = mono_ns();
                self.writer
                    .publish(&self.typical_rec)
                    .expect("publish typical");
            } else {
                let t0 = mono_ns();
                self.typical.stamp(t0);
                self.writer
                    .publish_bytes(&self.typical.bytes)
                    .expect("publish typical bytes");
            }
            self.collect_one_way()
        }

        /// As [`RingRig::one_way`] with pre-encoded bytes of a small record.
        pub fn one_way_small(&mut self) -> u64 {
            self.done = self.done.wrapping_add(self.n as u32);
            let t0 = mono_ns();
            self.small.stamp(t0);
            self.writer
                .publish_bytes(&self.small.bytes)
                .expect("publish small bytes");
            self.collect_one_way()
        }

        fn collect_one_way(&mut self) -> u64 {
            self.wait_done();
            let last = (0..self.n)
                .map(|i| self.ctl.stamp(i).load_relaxed())
                .max()
                .unwrap_or(0);
            self.settle();
            last
        }

        /// Publishes `k` records (`body` for all but the last, `last` last),
        /// never more than a ring ahead of the slowest reader. Returns the ns
        /// from the first publish until the reader held the last record.
        pub fn throughput(&mut self, k: u64, body: &[u8], last: &mut Encoded) -> u64 {
            assert_eq!(self.n, 1, "throughput runs with one reader");
            let cap = self.seg.region().geometry().slot_count as u64;
            let room = cap.saturating_sub(2 * FLOW_BATCH).max(1);
            self.done = self.done.wrapping_add(1);
            let t0 = mono_ns();
            last.stamp(t0);
            for i in 0..k.saturating_sub(1) {
                if i % FLOW_BATCH == 0 {
                    self.flow_control(room);
                }
                self.writer.publish_bytes(body).expect("publish body");
            }
            self.flow_control(room);
            self.writer
                .publish_bytes(&last.bytes)
                .expect("publish last");
            self.wait_done();
            let el = self.ctl.stamp(0).load_relaxed();
            self.settle();
            el
        }

        /// Spins until the slowest active reader is at most `room` behind.
        fn flow_control(&mut self, room: u64) {
            let head = self.writer.published();
            let t = Instant::now();
            let mut i = 0u64;
            loop {
                let st = self.seg.region().state();
                let slowest = st
                    .clients
                    .iter()
                    .filter(|c| c.state == client_state::ACTIVE)
                    .map(|c| c.cursor)
                    .min()
                    .unwrap_or(head);
                if head.saturating_sub(slowest) <= room {
                    return;
                }
                if i == 0 {
                    self.flow_waits += 1;
                }
                i += 1;
                if t.elapsed() >= SPIN_BUDGET {
                    assert!(t.elapsed() < DEADLINE, "reader stopped consuming");
                    thread::yield_now();
                } else {
                    // Do not keep stealing the reader's cursor line.
                    for _ in 0..128 {
                        spin_loop();
                    }
                }
            }
        }

        /// Records lost to lag and corrupt records, as the readers reported.
        pub fn lost_and_errors(&self) -> (u64, u64) {
            (self.ctl.lost(), self.ctl.errors())
        }
    }

    impl Drop for RingRig {
        fn drop(&mut self) {
            let mut stop = small(0);
            stop.code = STOP_CODE;
            let _ = self.writer.publish(&stop);
            self.kids.finish(Duration::from_secs(2));
        }
    }

    /// Mean ns of one `rkyv::access` (validated) over `batch` calls.
    pub fn access_validated(bytes: &[u8], batch: u64) -> f64 {
        let t = Instant::now();
        for _ in 0..batch {
            let r = rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(std::hint::black_box(
                bytes,
            ))
            .expect("valid record");
            std::hint::black_box(r);
        }
        t.elapsed().as_nanos() as f64 / batch as f64
    }

    /// Mean ns of one `rkyv::access_unchecked` over `batch` calls.
    ///
    /// `bytes` must be a record archived by [`encode`] (this build's schema).
    pub fn access_unchecked(bytes: &[u8], batch: u64) -> f64 {
        assert!(rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(bytes).is_ok());
        let t = Instant::now();
        for _ in 0..batch {
            // SAFETY: `bytes` was produced by `rkyv::to_bytes` for
            // `EventRecord` in this process (aligned buffer) and validated
            // just above; it is not modified meanwhile.
            let r = unsafe {
                rkyv::access_unchecked::<ArchivedEventRecord>(std::hint::black_box(bytes))
            };
            std::hint::black_box(r);
        }
        t.elapsed().as_nanos() as f64 / batch as f64
    }

    /// An in-process writer + reader on a fresh segment with no sleeper, for
    /// publish and pickup costs.
    pub struct Local {
        /// The segment (unlinked on drop).
        pub seg: Segment,
        /// Its writer.
        pub writer: RingWriter,
        /// A reader in this process (never waits).
        pub reader: RingReader,
    }

    impl Local {
        /// Creates the segment and attaches the reader at the head.
        pub fn new() -> Local {
            let seg = Segment::create(Geometry::default()).expect("create segment");
            let writer = RingWriter::new(seg.region().clone());
            let reader = RingReader::attach(seg.region().clone(), Start::Head).expect("attach");
            Local {
                seg,
                writer,
                reader,
            }
        }

        /// Publishes `k` ≤ 256 copies of `bytes` (untimed), then times `k`
        /// `try_next` + drop; returns the total.
        pub fn pickup(&mut self, bytes: &[u8], k: u64) -> Duration {
            assert!(k <= 256);
            for _ in 0..k {
                self.writer.publish_bytes(bytes).expect("publish");
            }
            let t = Instant::now();
            for _ in 0..k {
                match self.reader.try_next() {
                    Next::Record(r) => {
                        std::hint::black_box(r.seq());
                    }
                    other => panic!("pickup found {other:?}"),
                }
            }
            t.elapsed()
        }
    }

    impl Default for Local {
        fn default() -> Self {
            Local::new()
        }
    }
}

/// Criterion `sample_size` from `FASTPMIX_BENCH_SAMPLES` (at least 10).
fn sample_size(default: usize) -> usize {
    std::env::var("FASTPMIX_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .map_or(default, |n| n.max(10))
}

fn in_process(c: &mut Criterion) {
    let ss = sample_size(30);
    {
        let mut g = c.benchmark_group("publish_no_sleeper");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(1500));
        let mut local = Local::new();
        let mut rec = typical(0);
        g.bench_function("encode_publish_typical", |b| {
            b.iter(|| {
                rec.source_seq += 1;
                local.writer.publish(black_box(&rec)).expect("publish")
            })
        });
        let t = encode(&typical(0));
        g.bench_function("publish_bytes_typical", |b| {
            b.iter(|| local.writer.publish_bytes(black_box(&t)).expect("publish"))
        });
        let s = encode(&small(0));
        g.bench_function("publish_bytes_small", |b| {
            b.iter(|| local.writer.publish_bytes(black_box(&s)).expect("publish"))
        });
        println!(
            "publish_no_sleeper: typical record {} B, small {} B; futex wakes issued: {}",
            t.len(),
            s.len(),
            local.writer.wakes()
        );
        g.finish();
    }
    {
        let mut g = c.benchmark_group("reader_pickup");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(1500));
        for (name, rec) in [("typical", typical(0)), ("small", small(0))] {
            let bytes = encode(&rec);
            let mut local = Local::new();
            g.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let k = left.min(256);
                        total += local.pickup(&bytes, k);
                        left -= k;
                    }
                    total
                })
            });
        }
        g.finish();
    }
    {
        let mut g = c.benchmark_group("access");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(1000));
        let bytes = encode(&typical(0));
        g.bench_function("validated", |b| {
            b.iter_custom(|iters| {
                Duration::from_nanos((access_validated(&bytes, iters) * iters as f64) as u64)
            })
        });
        g.bench_function("unchecked", |b| {
            b.iter_custom(|iters| {
                Duration::from_nanos((access_unchecked(&bytes, iters) * iters as f64) as u64)
            })
        });
        g.finish();
    }
}

fn cross_process(c: &mut Criterion) {
    let ss = sample_size(10);
    {
        let mut g = c.benchmark_group("futex_floor");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(1000));
        let mut floor: Option<FloorRig> = None;
        g.bench_function("wake_one_way", |b| {
            let f = floor.get_or_insert_with(FloorRig::new);
            b.iter_custom(|iters| Duration::from_nanos((0..iters).map(|_| f.once().0).sum()))
        });
        g.bench_function("rtt_half", |b| {
            let f = floor.get_or_insert_with(FloorRig::new);
            b.iter_custom(|iters| Duration::from_nanos((0..iters).map(|_| f.once().1).sum()))
        });
        drop(floor);
        let mut spin: Option<FloorRig> = None;
        g.bench_function("spin_one_way", |b| {
            let f = spin.get_or_insert_with(|| {
                core_note("futex_floor/spin_one_way", 2);
                FloorRig::spinning()
            });
            b.iter_custom(|iters| Duration::from_nanos((0..iters).map(|_| f.once().0).sum()))
        });
        g.finish();
    }
    {
        let mut g = c.benchmark_group("one_way");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(1000));
        for mode in [Mode::Sleeping, Mode::Spinning] {
            let mut rig: Option<RingRig> = None;
            let base = match mode {
                Mode::Sleeping => "sleeping",
                Mode::Spinning => "spinning",
            };
            for encode in [false, true] {
                let name = if encode {
                    format!("{base}_encode")
                } else {
                    base.to_owned()
                };
                g.bench_function(name.as_str(), |b| {
                    let r = rig.get_or_insert_with(|| {
                        if mode == Mode::Spinning {
                            core_note("one_way/spinning", 2);
                        }
                        RingRig::new(1, mode)
                    });
                    b.iter_custom(|iters| {
                        Duration::from_nanos((0..iters).map(|_| r.one_way(encode)).sum())
                    })
                });
            }
            if let Some(r) = &rig {
                report_rig(&format!("one_way/{base}"), r);
            }
        }
        g.finish();
    }
    {
        let mut g = c.benchmark_group("fanout_last_reader");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(1000));
        for n in [1usize, 2, 8, 32] {
            let mut rig: Option<RingRig> = None;
            g.bench_function(BenchmarkId::from_parameter(n), |b| {
                let r = rig.get_or_insert_with(|| {
                    // The writer sleeps while the readers run: n runnable.
                    core_note(
                        &format!("fanout_last_reader/{n} (readers woken at once)"),
                        n,
                    );
                    RingRig::new(n, Mode::Sleeping)
                });
                b.iter_custom(|iters| {
                    Duration::from_nanos((0..iters).map(|_| r.one_way(false)).sum())
                })
            });
            if let Some(r) = &rig {
                report_rig(&format!("fanout_last_reader/{n}"), r);
            }
        }
        g.finish();
    }
    {
        let mut g = c.benchmark_group("throughput_one_reader");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(2000))
            .throughput(Throughput::Elements(1));
        let mut rig: Option<RingRig> = None;
        for (name, rec) in [("small", small(0)), ("typical", typical(0))] {
            let body = encode(&rec);
            let mut last = Encoded::new(&rec, ACK);
            g.bench_function(name, |b| {
                let r = rig.get_or_insert_with(|| {
                    core_note("throughput_one_reader", 2);
                    RingRig::new(1, Mode::Spinning)
                });
                b.iter_custom(|iters| {
                    Duration::from_nanos(r.throughput(iters.max(1), &body, &mut last))
                })
            });
        }
        if let Some(r) = &rig {
            report_rig("throughput_one_reader", r);
        }
        g.finish();
    }
}

/// Prints what the readers of a rig reported besides times.
fn report_rig(what: &str, r: &RingRig) {
    let (lost, errors) = r.lost_and_errors();
    if lost != 0 || errors != 0 || r.unsettled != 0 {
        println!(
            "note: {what}: readers lost {lost} records, saw {errors} corrupt ones; \
             {} samples started before every reader was asleep",
            r.unsettled
        );
    }
}

criterion::criterion_group!(benches, in_process, cross_process);

fn main() {
    // A re-executed child runs its role and exits here.
    run_child_if_requested();
    let t = Instant::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    println!("ring benches took {:.0} s", t.elapsed().as_secs_f64());
}
