//! The fault matrix (docs/reliability.md): the rows server_faults.rs does not cover
//! (docs/reliability.md §1a). Real processes: clients are this test binary
//! re-executed (`child_client`, tests/procs); the server is embedded in the
//! test process (with a recording host) unless its own process must die or
//! be measured, then it is a child too (`child_server`).
//!
//! No test asserts a duration. Delays from a kill to the handler that hears
//! about it are measured and printed (`--nocapture` shows them); every wait
//! has the generous [`HANG`] deadline that turns a hang into a failure.
//!
//! Sizes: the figures by default: the flood runs 10 s
//! (`FASTPMIX_FLOOD_SECS` overrides; 60 s with `FASTPMIX_STRESS_LONG=1`);
//! the churn runs 1,000 short-lived clients and 100 killed ones (5,000 and
//! 500 with `FASTPMIX_STRESS_LONG=1`).

mod common;
mod procs;

use common::host::{Answers, RecordingHost};
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::internals::ring::{Next, Region, RingReader, Segment};
use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Key, Proc, Status, Value};
use procs::{ClientProc, ServerProc, HANG, ROLE_ENV, SEQ, SERVER_WHOLE_JOB_ENV};
use shm_layout::{client_state, Geometry, SlotHeader, SubmitHeader};
use std::fs::File;
use std::mem::{offset_of, size_of};
use std::os::unix::fs::FileExt;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

const CHILD: &str = "child_client";
const SERVER_CHILD: &str = "child_server";
const LOST: i32 = Status::ERR_LOST_CONNECTION.0;
const EVENTS_LOST: i32 = -3001;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

#[test]
fn child_server() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("server") {
        procs::server_main();
    }
}

fn p(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).unwrap()
}

/// Held while a server starts (it removes stale segments of dead servers)
/// and by the stale-segment test from its kill to its check, so that no
/// other test's server start in this process removes the segment first.
static STARTS: Mutex<()> = Mutex::new(());

fn starting() -> std::sync::MutexGuard<'static, ()> {
    STARTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A server child (started under [`starting`]).
fn server_proc(procs: &[Proc]) -> ServerProc {
    server_proc_with_env(procs, &[])
}

/// [`server_proc`], with more environment for the server process.
fn server_proc_with_env(procs: &[Proc], env: &[(&str, String)]) -> ServerProc {
    let _g = starting();
    ServerProc::spawn_with_env(SERVER_CHILD, procs, env)
}

/// The flood and the churn load both cores; the latency test holds this
/// so that what it prints is not their scheduling delay.
static QUIET: Mutex<()> = Mutex::new(());

fn quiet() -> std::sync::MutexGuard<'static, ()> {
    QUIET.lock().unwrap_or_else(|e| e.into_inner())
}

fn long_run() -> bool {
    std::env::var("FASTPMIX_STRESS_LONG").as_deref() == Ok("1")
}

// ------------------------------------------------------------------ node

/// One `PMIX_ERR_LOST_CONNECTION` as the server's own handler saw it.
struct LostSeen {
    at: Instant,
    affected: Vec<Proc>,
}

/// An embedded server, its host, its own LOST_CONNECTION handler's
/// reports, and client processes.
struct Node {
    server: Server,
    host: Arc<RecordingHost>,
    clients: Vec<ClientProc>,
    lost: mpsc::Receiver<LostSeen>,
}

/// A server with geometry `g`, `procs` registered (their namespaces too)
/// and a client process for each of `spawn`.
fn node(g: Geometry, procs: &[Proc], spawn: &[Proc]) -> Node {
    // A killed client's name may be finalized more than once (it
    // reconnects): waits answer for its latest report.
    let host = RecordingHost::with(Answers {
        latest_finalized: true,
        ..Answers::default()
    });
    let server = {
        let _g = starting();
        Server::builder()
            .host(host.clone())
            .geometry(g)
            .start()
            .unwrap()
    };
    let (tx, lost) = mpsc::channel();
    let tx = Mutex::new(tx);
    server
        .engine()
        .register(Registration::new(
            &[Status::ERR_LOST_CONNECTION],
            move |inv: Invocation| {
                let at = Instant::now();
                let affected = inv
                    .info()
                    .iter()
                    .find(|i| i.key == attrs::PMIX_EVENT_AFFECTED_PROC)
                    .and_then(|i| i.value.as_procs())
                    .unwrap_or_default();
                let _ = tx.lock().unwrap().send(LostSeen { at, affected });
                inv.complete(Status::SUCCESS, Vec::new());
            },
        ))
        .unwrap();
    let (uid, gid) = procs::ids();
    for q in procs {
        if !server.namespaces().iter().any(|n| n.nspace == q.nspace) {
            server.register_nspace(&q.nspace, vec![]).unwrap();
        }
        server.register_client(q, uid, gid).unwrap();
    }
    let clients = spawn
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &server.setup_fork(q).unwrap()))
        .collect();
    Node {
        server,
        host,
        clients,
        lost,
    }
}

impl Node {
    fn client(&mut self, q: Proc) -> &mut ClientProc {
        self.clients.iter_mut().find(|c| c.proc == q).unwrap()
    }

    /// SIGKILLs (and reaps) the client process of `q`; when it was sent.
    fn kill(&mut self, q: Proc) -> Instant {
        let i = self.clients.iter().position(|c| c.proc == q).unwrap();
        let mut c = self.clients.remove(i);
        let t0 = Instant::now();
        c.kill();
        t0
    }

    fn spawn(&mut self, q: Proc) {
        let env = self.server.setup_fork(&q).unwrap();
        self.clients.push(ClientProc::spawn(CHILD, q, &env));
    }

    /// The next LOST_CONNECTION the server's handlers saw.
    fn next_lost(&self) -> LostSeen {
        self.lost
            .recv_timeout(HANG)
            .expect("the server's LOST_CONNECTION handler never ran")
    }

    /// Namespace `ns`'s ring, mapped read-write in this process.
    fn ring(&self, ns: &str) -> Segment {
        let name = self
            .server
            .namespaces()
            .into_iter()
            .find(|n| n.nspace.as_str() == ns)
            .expect("a registered namespace")
            .segment;
        Segment::open(&name, HANG).unwrap()
    }

    /// `from` notifies `code` LOCAL; `to` must see it with `from` as source.
    fn exchange(&mut self, from: Proc, to: Proc, code: i32) {
        let c = self.client(from);
        c.send(&format!("NOTIFY {code} {}", DataRange::LOCAL.0));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0", "{from} notifies");
        self.client(to)
            .expect(&format!("EVENT code={code} source={from} "));
    }
}

/// The client-table entry of the live reader started by `pid`.
fn entry_of(region: &Region, pid: u32) -> Option<u32> {
    region
        .state()
        .clients
        .iter()
        .find(|c| c.pid == pid && c.state == client_state::ACTIVE)
        .map(|c| c.index)
}

/// Waits (hang guard only) until `f` holds.
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + HANG;
    while !f() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits for a line starting with `prefix` and leaves it (and the order of
/// everything read so far) in `c.seen`.
fn await_line(c: &mut ClientProc, prefix: &str) {
    if c.seen.iter().any(|l| l.starts_with(prefix)) {
        return;
    }
    let l = c.expect(prefix);
    // Nothing was read after it: appending keeps the order.
    c.seen.push(l);
}

/// `PING` round trip, then every line read so far, in order (without the
/// `PING`s' own events).
fn all_lines(c: &mut ClientProc) -> Vec<String> {
    c.send("PING");
    c.expect("PONG");
    std::mem::take(&mut c.seen)
        .into_iter()
        .filter(|l| !l.starts_with("EVENT code=-9999 "))
        .collect()
}

/// The `test.seq` of an `EVENT`/`CAUGHT` line (`seq=Uint64(n)`).
fn seq_of(line: &str) -> Option<u64> {
    let s = line.split(" seq=Uint64(").nth(1)?;
    s.split(')').next()?.parse().ok()
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a child of this process that has not been reaped.
    let r = unsafe { libc::kill(pid as i32, sig) };
    assert_eq!(r, 0, "kill({pid}, {sig})");
}

/// Every thread of `pid` is stopped (SIGSTOP took effect everywhere).
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    dir.flatten().all(|t| {
        std::fs::read_to_string(t.path().join("stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, r)| r.trim_start().chars().next())
            })
            .is_some_and(|st| st == 'T' || st == 't')
    })
}

fn stop(pid: u32) {
    signal(pid, libc::SIGSTOP);
    let deadline = Instant::now() + HANG;
    while !all_threads_stopped(pid) {
        assert!(Instant::now() < deadline, "{pid} never stopped");
        std::thread::sleep(Duration::from_micros(100));
    }
}

fn shm_file(name: &str) -> File {
    File::options()
        .read(true)
        .write(true)
        .open(format!("/dev/shm/{}", name.trim_start_matches('/')))
        .unwrap()
}

fn read_u64(f: &File, off: u64) -> u64 {
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, off).unwrap();
    u64::from_ne_bytes(b)
}

/// `/proc/<pid>/status` field `key` (kB).
fn status_kb(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"))
}

/// Descriptors process `pid` holds, less its io_uring instances: a thread
/// that wakes several futex words at once keeps one of its own from the
/// first time it does (`sync::WakeBatch`), which is not a per-client
/// resource and may first happen in the middle of a run.
fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path())
                .is_ok_and(|t| t.to_string_lossy() != "anon_inode:[io_uring]")
        })
        .count()
}

/// Names in /dev/shm of segments created by process `pid`
/// (`fastpmix-<uid>-<pid>-...`).
fn segments_of(pid: u32) -> Vec<String> {
    let (uid, _) = procs::ids();
    let prefix = format!("fastpmix-{uid}-{pid}-");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

fn shm_exists(name: &str) -> bool {
    std::path::Path::new(&format!("/dev/shm/{}", name.trim_start_matches('/'))).exists()
}

// ------------------------------------------------ FM-1: killed mid-read

/// Infos that make a record take a while to decode (the window in which a
/// reader holds its slot pinned).
fn padding() -> Vec<Info> {
    (0..12)
        .map(|k| Info::new(Key::new(format!("test.pad{k}")).unwrap(), Value::Uint64(k)))
        .collect()
}

#[test]
fn a_client_killed_while_reading_a_record_loses_nothing_for_the_others() {
    const CODE: i32 = -5301;
    // Three entries: a fourth client connects only into the dead one's.
    // Sixteen index entries: the stream laps the ring many times, so the
    // writer reuses slots around the dead reader's pin.
    let g = Geometry {
        slot_count: 16,
        client_capacity: 3,
        ..Geometry::default()
    };
    let (a0, a1, a2, a3) = (p("a", 0), p("a", 1), p("a", 2), p("a", 3));
    let mut n = node(g, &[a0, a1, a2], &[a0, a1, a2]);
    let seg = n.ring("a");
    let region = seg.region().clone();
    let victim = n.client(a0).pid();
    let e0 = entry_of(&region, victim).unwrap();
    let e1 = entry_of(&region, n.client(a1).pid()).unwrap();
    let e2 = entry_of(&region, n.client(a2).pid()).unwrap();
    let srv = n.server.me();
    let published = Mutex::new(0u64);
    let stop_at = Mutex::new(u64::MAX);
    let (server, clients) = (&n.server, &mut n.clients);
    let mut how = "";
    std::thread::scope(|s| {
        // The stream: numbered events from the server, paced so that the
        // two survivors never fall a ring behind (they must get every one);
        // the victim is not waited for.
        let publisher = s.spawn(|| {
            let mut i = 0u64;
            // A hang guard: if the main thread failed, nobody sets stop_at.
            let end = Instant::now() + HANG;
            while i < *stop_at.lock().unwrap() && Instant::now() < end {
                let deadline = Instant::now() + HANG;
                while i >= region.cursor_of(e1).min(region.cursor_of(e2)) + 8 {
                    assert!(Instant::now() < deadline, "a survivor stopped reading");
                    std::thread::yield_now();
                }
                let mut ev = Notification::new(Status(CODE), srv, DataRange::LOCAL)
                    .info(Info::new(SEQ, Value::Uint64(i)));
                for x in padding() {
                    ev = ev.info(x);
                }
                server.notify(ev).expect("the server publishes");
                i += 1;
                *published.lock().unwrap() = i;
            }
        });
        let v = clients.iter_mut().find(|c| c.proc == a0).unwrap();
        await_line(v, &format!("EVENT code={CODE} "));
        // Catch the victim holding a slot pinned: stop it, look at its
        // entry's held slot, let it go on if it holds none.
        let mut attempt = 0u32;
        let caught = loop {
            stop(victim);
            if region.state().clients[e0 as usize].held_slot != u32::MAX {
                break true;
            }
            if attempt == 2000 {
                break false;
            }
            signal(victim, libc::SIGCONT);
            attempt += 1;
            std::thread::sleep(Duration::from_micros(100 + u64::from(attempt * 389 % 1700)));
        };
        if !caught {
            // Never caught inside its read window: put the stopped victim's
            // entry exactly where a reader is mid-read (its next record
            // pinned, the slot in its held word) through its own entry.
            let mut r = RingReader::adopt(region.clone(), e0).expect("the victim's entry is live");
            let deadline = Instant::now() + HANG;
            loop {
                match r.try_next() {
                    Next::Record(rec) => {
                        std::mem::forget(rec);
                        break;
                    }
                    _ => {
                        assert!(Instant::now() < deadline, "no record to pin");
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
            how = " (pin placed through its entry after 2000 tries)";
        }
        let held = region.state().clients[e0 as usize].held_slot;
        assert_ne!(held, u32::MAX);
        eprintln!(
            "victim stopped holding slot {held} at record {} of the stream, after {attempt} tries{how}; SIGKILL",
            region.cursor_of(e0)
        );
        let i = clients.iter().position(|c| c.proc == a0).unwrap();
        clients.remove(i).kill();
        // Enough after the kill for the writer to cycle every data slot.
        let more = 4 * u64::from(g.slot_count + g.client_capacity + 1);
        *stop_at.lock().unwrap() = *published.lock().unwrap() + more;
        publisher.join().unwrap();
    });
    let total = *published.lock().unwrap();
    let seen = n.next_lost();
    assert_eq!(seen.affected, vec![a0], "the dead reader is reported");
    assert!(n.host.wait_finalized(&a0), "client_finalized(lost = true)");
    for q in [a1, a2] {
        let c = n.client(q);
        await_line(
            c,
            &format!("EVENT code={CODE} source={srv} seq=Uint64({}) ", total - 1),
        );
        let evs: Vec<String> = all_lines(c)
            .into_iter()
            .filter(|l| l.starts_with("EVENT "))
            .collect();
        let seqs: Vec<u64> = evs
            .iter()
            .filter(|l| l.starts_with(&format!("EVENT code={CODE} ")))
            .map(|l| seq_of(l).expect("a numbered event"))
            .collect();
        assert!(
            seqs.iter().copied().eq(0..total),
            "{q}: every event of the stream exactly once, in order ({} of {total}; first wrong at {:?})",
            seqs.len(),
            seqs.iter().zip(0..).find(|(s, i)| **s != *i)
        );
        assert!(
            !evs.iter()
                .any(|l| l.starts_with(&format!("EVENT code={EVENTS_LOST} "))),
            "{q}: no loss reported"
        );
    }
    assert_eq!(
        region.state().refused,
        0,
        "the writer never refused a record"
    );
    // The dead reader's entry is reclaimed: the table is full otherwise
    // (a fourth client is registered once a0 has left: before, all three
    // entries could be claimed and its registration was refused).
    assert!(n.host.wait_finalized(&a0));
    let (uid, gid) = procs::ids();
    n.server.register_client(&a3, uid, gid).unwrap();
    n.spawn(a3);
    let pid3 = n.client(a3).pid();
    assert_eq!(entry_of(&region, pid3), Some(e0), "a3 took a0's entry");
    n.exchange(a3, a1, -5302);
    n.exchange(a2, a3, -5303);
}

// ---------------------------------- FM-2: killed holding a submission slot

/// One client's submission queue, through the segment's file (pread and
/// pwrite, as another process of the same uid could).
struct Queue {
    file: File,
    /// Of its header.
    base: u64,
    /// Of its slot 0.
    slots: u64,
    depth: u64,
    slot_size: u64,
}

impl Queue {
    fn of(ring: &Segment, entry: u32) -> Queue {
        let g = ring.region().geometry();
        let o = g.validate().unwrap();
        Queue {
            file: shm_file(ring.name()),
            base: o.submit_header(entry),
            slots: o.submit_slot(entry, 0, g.slot_size),
            depth: u64::from(g.submit_depth),
            slot_size: u64::from(g.slot_size),
        }
    }
    fn produced(&self) -> u64 {
        read_u64(
            &self.file,
            self.base + offset_of!(SubmitHeader, produced) as u64,
        )
    }
    fn consumed(&self) -> u64 {
        read_u64(
            &self.file,
            self.base + offset_of!(SubmitHeader, consumed) as u64,
        )
    }
    fn slot(&self, n: u64) -> u64 {
        self.slots + (n % self.depth) * self.slot_size
    }
    /// Writes record bytes into the slot of submission `n`, as the producer
    /// does before it publishes (nothing else changes).
    fn write_bytes(&self, n: u64, bytes: &[u8]) {
        self.file
            .write_all_at(bytes, self.slot(n) + size_of::<SlotHeader>() as u64)
            .unwrap();
    }
    fn write_len(&self, n: u64, len: u32) {
        self.file
            .write_all_at(
                &len.to_ne_bytes(),
                self.slot(n) + offset_of!(SlotHeader, len) as u64,
            )
            .unwrap();
    }
}

#[test]
fn a_client_killed_holding_a_half_written_submission_slot_does_not_disturb_the_server() {
    // Two entries: the next client can only get the dead one's.
    let g = Geometry {
        client_capacity: 2,
        ..Geometry::default()
    };
    let (a0, a1, a2) = (p("a", 0), p("a", 1), p("a", 2));
    let mut n = node(g, &[a0, a1], &[a0, a1]);
    let ring = n.ring("a");
    let region = ring.region().clone();
    let big = || vec![Info::new(procs::BIG, "s".repeat(600))];
    // Round 1: killed while copying a record's bytes (half of them there,
    // length and counter untouched). Round 2: killed after the bytes and
    // the length, right before publishing. The stale records are larger
    // than the next owner's: their tails stay in the slots.
    let rounds = [(a0, a2, -5211, true), (a2, a0, -5212, false)];
    for (k, (dying, next, stale, half)) in rounds.into_iter().enumerate() {
        // Some traffic first, so the queue's counters are not at 0.
        n.exchange(dying, a1, -5220 - k as i32);
        let entry = entry_of(&region, n.client(dying).pid()).unwrap();
        let q = Queue::of(&ring, entry);
        wait_until("the server drained the queue", || {
            q.produced() == q.consumed()
        });
        let at = q.produced();
        let bytes = procs::encoded(stale, dying, DataRange::NAMESPACE, big());
        if half {
            q.write_bytes(at, &bytes[..bytes.len() / 2]);
        } else {
            q.write_bytes(at, &bytes);
            q.write_len(at, bytes.len() as u32);
        }
        n.kill(dying);
        assert_eq!(n.next_lost().affected, vec![dying]);
        assert!(n.host.wait_finalized(&dying));
        assert_eq!(
            q.produced(),
            at,
            "nothing was published for the dead client"
        );
        // The next owner of the entry: a third client, registered now that
        // the dead one left (round 1), or a killed client coming back under
        // its own rank (round 2).
        if k == 0 {
            let (uid, gid) = procs::ids();
            n.server.register_client(&next, uid, gid).unwrap();
        }
        n.spawn(next);
        assert_eq!(
            entry_of(&region, n.client(next).pid()),
            Some(entry),
            "{next} took the dead client's entry"
        );
        // More records than the queue has slots: every stale slot reused.
        let count = 2 * q.depth + 1;
        let code = -5230 - k as i32;
        let c = n.client(next);
        c.send(&format!(
            "NOTIFY_N {count} {code} {}",
            DataRange::NAMESPACE.0
        ));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
        let peer = n.client(a1);
        await_line(
            peer,
            &format!("EVENT code={code} source={next} seq=Uint64({}) ", count - 1),
        );
        // The server's own report of the death (no launcher here) came
        // before the new owner connected: once, and apart from the rest.
        let death = format!("EVENT code={} source={dying} ", Status::ERR_PROC_ABORTED.0);
        let (deaths, evs): (Vec<String>, Vec<String>) = all_lines(peer)
            .into_iter()
            .filter(|l| l.starts_with("EVENT "))
            .partition(|l| l.starts_with(&death));
        assert_eq!(
            deaths.len(),
            1,
            "round {k}: the death reported once: {deaths:?}"
        );
        let mine: Vec<u64> = evs
            .iter()
            .filter(|l| l.starts_with(&format!("EVENT code={code} source={next} ")))
            .map(|l| seq_of(l).unwrap())
            .collect();
        assert!(
            mine.iter().copied().eq(0..count),
            "round {k}: the new owner's records, each once, in order: {evs:?}"
        );
        assert!(
            !evs.iter().any(|l| l.contains(&format!("code={stale} "))),
            "round {k}: the stale record was routed: {evs:?}"
        );
        assert_eq!(
            evs.len() as u64,
            count,
            "round {k}: nothing else arrived: {evs:?}"
        );
        // The server publishes to the ring before it calls the host, so
        // the peer may have the last record before the host does.
        let host_count = || n.host.codes().iter().filter(|c| **c == code).count() as u64;
        wait_until("the host got the new owner's records", || {
            host_count() >= count
        });
        let host = n.host.codes();
        assert!(
            !host.contains(&stale),
            "round {k}: the host got the stale record"
        );
        assert_eq!(
            host.iter().filter(|c| **c == code).count() as u64,
            count,
            "round {k}: the host got the new owner's records"
        );
        assert_eq!(q.produced(), at + count);
        wait_until("the server drained the queue", || {
            q.consumed() == at + count
        });
    }
    n.exchange(a1, a0, -5240);
}

// ------------------------------------ FM-3: killed inside a handler chain

#[test]
fn a_client_killed_in_the_middle_of_a_handler_chain_is_reported_and_others_run_their_chains() {
    const CODE: i32 = -5401;
    let (a0, a1, a2) = (p("a", 0), p("a", 1), p("a", 2));
    let mut n = node(Geometry::default(), &[a0, a1, a2], &[a0, a1, a2]);
    let v = n.client(a0);
    v.send(&format!("WATCH_HANG {CODE}"));
    assert!(!v.expect("WATCHING ").contains('-'));
    // The others' chains: a handler for the code, then the default printer.
    for q in [a1, a2] {
        let c = n.client(q);
        c.send(&format!("WATCH {CODE}"));
        assert!(!c.expect("WATCHING ").contains('-'));
    }
    let srv = n.server.me();
    let send = |server: &Server, i: u64| {
        server
            .notify(
                Notification::new(Status(CODE), srv, DataRange::LOCAL)
                    .info(Info::new(SEQ, Value::Uint64(i))),
            )
            .unwrap()
    };
    send(&n.server, 0);
    n.client(a0)
        .expect(&format!("HANGING code={CODE} source={srv}"));
    // Its chain is in progress for good; more events queue behind it.
    for i in 1..5 {
        send(&n.server, i);
    }
    let t0 = n.kill(a0);
    let seen = n.next_lost();
    eprintln!(
        "client killed inside a chain: SIGKILL -> server's LOST_CONNECTION handler entry: {:?}",
        seen.at - t0
    );
    assert_eq!(seen.affected, vec![a0]);
    assert!(n.host.wait_finalized(&a0), "client_finalized(lost = true)");
    for i in 5..10 {
        send(&n.server, i);
    }
    for q in [a1, a2] {
        let c = n.client(q);
        await_line(c, &format!("EVENT code={CODE} source={srv} seq=Uint64(9) "));
        let chain: Vec<String> = all_lines(c)
            .into_iter()
            .filter(|l| l.contains(&format!("code={CODE} ")))
            .collect();
        let want: Vec<String> = (0..10)
            .flat_map(|i| {
                [
                    format!("CAUGHT code={CODE} source={srv} seq=Uint64({i}) affected=-"),
                    format!("EVENT code={CODE} source={srv} seq=Uint64({i}) affected=-"),
                ]
            })
            .collect();
        assert_eq!(chain, want, "{q}: each chain ran to its end, in order");
    }
    n.exchange(a1, a2, -5402);
}

// ----------------------------------------------- FM-4: report latency

fn percentiles(v: &mut [Duration]) -> String {
    v.sort();
    format!(
        "min {:?}, median {:?}, max {:?} over {}",
        v[0],
        v[v.len() / 2],
        v[v.len() - 1],
        v.len()
    )
}

#[test]
fn kill_to_report_latency_is_printed_for_client_and_server_faults() {
    let _q = quiet();
    // A killed client: SIGKILL -> the server's LOST_CONNECTION handler.
    let (a0, a1) = (p("a", 0), p("a", 1));
    let mut n = node(Geometry::default(), &[a0, a1], &[a0, a1]);
    let mut client_faults = Vec::new();
    for _ in 0..5 {
        let t0 = n.kill(a0);
        let seen = n.next_lost();
        assert_eq!(seen.affected, vec![a0], "the fault is reported");
        client_faults.push(seen.at - t0);
        n.spawn(a0);
    }
    n.exchange(a0, a1, -5501);
    drop(n);
    // A killed server: SIGKILL -> each client's LOST_CONNECTION handler
    // (the handler reads CLOCK_MONOTONIC, the same clock as here).
    let mut server_faults = Vec::new();
    for _ in 0..3 {
        let procs = [p("b", 0), p("b", 1), p("c", 0)];
        let mut server = server_proc(&procs);
        let mut clients: Vec<ClientProc> = procs
            .iter()
            .map(|q| ClientProc::spawn(CHILD, *q, &server.env_of(q)))
            .collect();
        for c in &mut clients {
            c.send(&format!("WATCH_AT {LOST}"));
            assert!(!c.expect("WATCHING ").contains('-'));
        }
        let t0 = procs::mono_ns();
        server.kill();
        for c in &mut clients {
            let l = c.expect(&format!("CAUGHT_AT code={LOST} "));
            let at: u64 = l.rsplit_once("mono_ns=").unwrap().1.parse().unwrap();
            assert!(at >= t0, "{}: the handler ran after the kill", c.proc);
            server_faults.push(Duration::from_nanos(at - t0));
        }
    }
    eprintln!(
        "killed client: SIGKILL -> server's LOST_CONNECTION handler entry: {}",
        percentiles(&mut client_faults)
    );
    eprintln!(
        "killed server: SIGKILL -> a client's LOST_CONNECTION handler entry: {}",
        percentiles(&mut server_faults)
    );
}

// ------------------------- FM-5b: stale removal from another PID namespace

/// A server that starts in another PID namespace sharing /tmp and
/// /dev/shm (a container, or a test harness's namespace) removes what dead
/// servers left, but not a live server's control directory, ring or data
/// store: there its pid means nothing (kill(pid, 0) says ESRCH), and the
/// creator's liveness lock says it lives.
#[test]
fn a_server_in_another_pid_namespace_leaves_live_servers_alone() {
    let probe = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!(
            "skipped: `unshare --pid --fork` is not available here (needs root or user namespaces)"
        );
        return;
    }
    let server = Server::builder().start().unwrap();
    let ns = fastpmix::Nspace::new("fm-pidns").unwrap();
    server.register_nspace(&ns, vec![]).unwrap();
    let seg = server.namespaces()[0]
        .segment
        .trim_start_matches('/')
        .to_owned();
    let shm = |n: &str| std::path::Path::new("/dev/shm").join(n);
    let sock = server.address().to_path_buf();
    assert!(sock.exists() && shm(&seg).exists() && shm(&format!("{seg}-kv0")).exists());
    let st = std::process::Command::new("unshare")
        .args([
            "--pid",
            "--fork",
            env!("CARGO_BIN_EXE_fastpmix"),
            "run",
            "-n",
            "1",
            "--",
            "true",
        ])
        .status()
        .unwrap();
    assert!(st.success(), "the namespaced job ran: {st}");
    assert!(
        sock.exists(),
        "the live server's control socket was removed"
    );
    assert!(shm(&seg).exists(), "the live server's ring was removed");
    assert!(
        shm(&format!("{seg}-kv0")).exists(),
        "the live server's data store was removed"
    );
}

// -------------------------------------------- FM-5: stale segment, new server

#[test]
fn a_new_server_starts_while_a_killed_servers_stale_segment_exists() {
    let procs = [p("a", 0), p("a", 1)];
    // A whole job on this node: its namespace has a fence barrier too.
    let mut old = server_proc_with_env(&procs, &[(SERVER_WHOLE_JOB_ENV, "1".into())]);
    let mut clients: Vec<ClientProc> = procs
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &old.env_of(q)))
        .collect();
    let stale = old.segments.clone();
    assert_eq!(stale.len(), 1);
    let guard = starting();
    old.kill();
    for c in &mut clients {
        c.expect(&format!("EVENT code={LOST} "));
    }
    drop(clients);
    assert!(
        stale.iter().all(|s| shm_exists(s)),
        "a SIGKILLed server leaves its segment behind"
    );
    let barriers: Vec<String> = stale.iter().map(|s| format!("{s}-bar")).collect();
    assert!(
        barriers.iter().all(|b| shm_exists(b)),
        "and its fence barrier: {barriers:?}"
    );
    // The same namespace, on the same node (same TMPDIR, same /dev/shm).
    let new = ServerProc::spawn(SERVER_CHILD, &procs);
    assert_ne!(new.segments, stale);
    let removed: Vec<&String> = stale.iter().filter(|s| !shm_exists(s)).collect();
    assert_eq!(
        removed.len(),
        stale.len(),
        "the new server removed the dead server's segment"
    );
    assert!(
        barriers.iter().all(|b| !shm_exists(b)),
        "the new server removed the dead server's fence barrier"
    );
    drop(guard);
    let mut clients: Vec<ClientProc> = procs
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &new.env_of(q)))
        .collect();
    for (i, j) in [(0, 1), (1, 0)] {
        let code = -5501 - i as i32;
        clients[i].send(&format!("NOTIFY {code} {}", DataRange::LOCAL.0));
        assert_eq!(clients[i].expect("NOTIFIED"), "NOTIFIED 0");
        let from = procs[i];
        clients[j].expect(&format!("EVENT code={code} source={from} "));
    }
    drop(old);
}

// --------------------------------------------- FM-6: a stopped reader

/// The count of an `EVENTS_LOST` line a `WATCH_INFO` handler printed.
fn events_lost_count(line: &str) -> Option<u64> {
    let rest = line.strip_prefix(&format!("CAUGHT_INFO code={EVENTS_LOST} "))?;
    let k = rest
        .split("fastpmix.evlost.count=Uint64(")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok());
    Some(k.unwrap_or_else(|| panic!("a count in {line}")))
}

#[test]
fn a_stopped_reader_never_blocks_the_writer_and_learns_exactly_how_many_events_it_lost() {
    const CODE: i32 = -5601;
    const N: u64 = 200;
    const BATCH: u64 = 4;
    // Eight index entries: the stopped reader falls 25 rings behind.
    let g = Geometry {
        slot_count: 8,
        ..Geometry::default()
    };
    let (a0, a1, a2) = (p("a", 0), p("a", 1), p("a", 2));
    let mut n = node(g, &[a0, a1, a2], &[a0, a1, a2]);
    let ring = n.ring("a");
    let region = ring.region().clone();
    let slow = n.client(a0);
    slow.send(&format!("WATCH_INFO {EVENTS_LOST}"));
    assert!(!slow.expect("WATCHING ").contains('-'));
    let pid = slow.pid();
    let e0 = entry_of(&region, pid).unwrap();
    stop(pid);
    // a1 publishes through its submission queue and the server's writer;
    // each batch is smaller than the ring and a2 reads it before the next,
    // so a2 never lags. Every notify returns: nobody waits for a0.
    for b in 0..N / BATCH {
        let c = n.client(a1);
        c.send(&format!(
            "NOTIFY_FROM {} {BATCH} {CODE} {}",
            b * BATCH,
            DataRange::LOCAL.0
        ));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0", "batch {b}");
        await_line(
            n.client(a2),
            &format!(
                "EVENT code={CODE} source={a1} seq=Uint64({}) ",
                b * BATCH + BATCH - 1
            ),
        );
    }
    let behind = region.state().head - region.cursor_of(e0);
    eprintln!(
        "stopped reader: {behind} records behind the head, ring of {}",
        g.slot_count
    );
    assert!(
        behind > u64::from(g.slot_count),
        "it fell more than a ring behind"
    );
    let seqs: Vec<u64> = all_lines(n.client(a2))
        .iter()
        .filter(|l| l.starts_with("EVENT "))
        .map(|l| {
            assert!(l.starts_with(&format!("EVENT code={CODE} ")), "a2: {l}");
            seq_of(l).unwrap()
        })
        .collect();
    assert!(seqs.iter().copied().eq(0..N), "a2 got everything: {seqs:?}");
    assert_eq!(
        region.state().refused,
        0,
        "the writer never refused a record"
    );
    // Resume: a0 is told how many it lost, where it lost them, then reads on.
    signal(pid, libc::SIGCONT);
    let slow = n.client(a0);
    await_line(
        slow,
        &format!("EVENT code={CODE} source={a1} seq=Uint64({}) ", N - 1),
    );
    let lines = all_lines(slow);
    let (mut next, mut lost, mut got) = (0u64, 0u64, 0u64);
    for l in &lines {
        if let Some(k) = events_lost_count(l) {
            next += k;
            lost += k;
        } else if l.starts_with(&format!("EVENT code={CODE} ")) {
            assert_eq!(
                seq_of(l),
                Some(next),
                "a0: the gap before it was reported: {lines:?}"
            );
            next += 1;
            got += 1;
        }
    }
    eprintln!("stopped reader: told it lost {lost}, then received {got} of {N}");
    assert_eq!(
        next, N,
        "a0: every event received or counted as lost: {lines:?}"
    );
    assert!(lost > 0 && got > 0, "lost {lost}, got {got}");
    assert_eq!(
        region.state().clients[e0 as usize].lost,
        lost,
        "the count it was told is the ring's count"
    );
    n.exchange(a2, a0, -5602);
}

#[test]
fn a_notifier_behind_its_own_flood_is_told_only_of_the_others_events_it_lost() {
    // a0's reader is held (its progress thread waits in a handler) while
    // a0 floods its own namespace through an 8-slot ring and a1 then sends
    // events of its own: a0 misses records of both. Its own relayed records
    // are skipped on reading anyway, so only a1's count as lost: every one
    // of a1's events is delivered to a0 or reported lost, and the report
    // is smaller than the ring's raw count of records a0 missed. Before, a
    // notifier was told of every record it missed, its own included.
    const OWN: i32 = -5611;
    const OTHER: i32 = -5612;
    const N: u64 = 100;
    const M: u64 = 20;
    let g = Geometry {
        slot_count: 8,
        ..Geometry::default()
    };
    let (a0, a1, a2) = (p("a", 0), p("a", 1), p("a", 2));
    let mut n = node(g, &[a0, a1, a2], &[a0, a1, a2]);
    let region = n.ring("a").region().clone();
    let noisy = n.client(a0);
    noisy.send(&format!("WATCH_INFO {EVENTS_LOST}"));
    assert!(!noisy.expect("WATCHING ").contains('-'));
    let e0 = entry_of(&region, noisy.pid()).unwrap();
    noisy.send("STALL");
    noisy.expect("STALLING");
    noisy.send(&format!("NOTIFY_N {N} {OWN} {}", DataRange::NAMESPACE.0));
    assert_eq!(noisy.expect("NOTIFIED"), "NOTIFIED 0");
    let other = n.client(a1);
    other.send(&format!("NOTIFY_N {M} {OTHER} {}", DataRange::NAMESPACE.0));
    assert_eq!(other.expect("NOTIFIED"), "NOTIFIED 0");
    // a2 was never held: it gets all of a1's.
    await_line(
        n.client(a2),
        &format!("EVENT code={OTHER} source={a1} seq=Uint64({}) ", M - 1),
    );
    let noisy = n.client(a0);
    noisy.send("RELEASE");
    noisy.expect("STALL_OVER");
    await_line(
        noisy,
        &format!("EVENT code={OTHER} source={a1} seq=Uint64({}) ", M - 1),
    );
    noisy.send("PING");
    noisy.expect("PONG");
    let lines = all_lines(noisy);
    let lost: u64 = lines.iter().filter_map(|l| events_lost_count(l)).sum();
    let count = |code: i32| {
        lines
            .iter()
            .filter(|l| l.starts_with(&format!("EVENT code={code} ")))
            .count() as u64
    };
    let raw = region.state().clients[e0 as usize].lost;
    eprintln!(
        "notifier: missed {raw} records, told it lost {lost}, got {} of {M} others'",
        count(OTHER)
    );
    assert!(raw > M, "a0 missed records of its own flood too ({raw})");
    assert_eq!(
        lost + count(OTHER),
        M,
        "every other's event delivered or reported lost, and nothing more: {lines:?}"
    );
    // Its own events reached its handlers once each, through its own
    // chain (never echoed from the ring).
    assert_eq!(count(OWN), N, "{lines:?}");
}

// ------------------------------------------------------- FM-7: flood

#[test]
fn flood_of_notifiers_and_registration_churn_does_not_deadlock_or_grow_memory() {
    let _q = quiet();
    const CODE: i32 = -5701;
    // FASTPMIX_FLOOD_SECS, else the 10 s (60 s with
    // FASTPMIX_STRESS_LONG=1).
    let secs: u64 = std::env::var("FASTPMIX_FLOOD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if long_run() { 60 } else { 10 });
    let ms = secs * 1000;
    let procs: Vec<Proc> = (0..8).map(|r| p("f", r)).collect();
    let (notifiers, churners) = procs.split_at(4);
    // Under AddressSanitizer freed memory waits in a quarantine (256 MiB by
    // default) before it is reused, so the server's resident size grows
    // with the number of allocations until that fills, leak or not: a
    // small one keeps the growth check about leaks (seen: 56 -> 123 MB
    // over a 79 000-event flood with the default, 42.2 -> 42.3 MB with 4 MiB).
    let server = match std::env::var("ASAN_OPTIONS") {
        Ok(o) if std::env::var("FASTPMIX_SANITIZER").as_deref() == Ok("address") => {
            server_proc_with_env(
                &procs,
                &[("ASAN_OPTIONS", format!("{o}:quarantine_size_mb=4"))],
            )
        }
        _ => server_proc(&procs),
    };
    let spid = server.pid();
    let ring = Segment::open_read_only(&server.segments[0], HANG).unwrap();
    let mut clients: Vec<ClientProc> = procs
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &server.env_of(q)))
        .collect();
    let sources: Vec<String> = notifiers.iter().map(|q| q.to_string()).collect();
    for c in &mut clients {
        c.send(&format!("COUNT {CODE} {}", sources.join(",")));
        assert!(!c.expect("COUNTING ").contains('-'));
        c.send(&format!("WATCH_INFO {EVENTS_LOST}"));
        assert!(!c.expect("WATCHING ").contains('-'));
    }
    let rss_start = status_kb(spid, "VmRSS:");
    for c in &mut clients {
        if notifiers.contains(&c.proc) {
            c.send(&format!("NOTIFY_FOR {ms} {CODE} {}", DataRange::LOCAL.0));
        } else {
            c.send(&format!("CHURN {ms} {CODE} {}", Status::EVENT_NODE_DOWN.0));
        }
    }
    // A sampling point, not a measurement.
    std::thread::sleep(Duration::from_millis(ms / 3));
    let rss_third = status_kb(spid, "VmRSS:");
    let mut sent = 0u64;
    for c in &mut clients {
        if notifiers.contains(&c.proc) {
            let l = c.expect("NOTIFIED_FOR ");
            let (st, n) = l["NOTIFIED_FOR ".len()..].split_once(' ').unwrap();
            assert_eq!(st, "0", "{}: {l}", c.proc);
            let n: u64 = n.parse().unwrap();
            assert!(n > 0, "{}: notified nothing", c.proc);
            sent += n;
        } else {
            let l = c.expect("CHURNED ");
            let w: Vec<&str> = l.split(' ').collect();
            assert_eq!(w[1], "0", "{}: {l}", c.proc);
            assert!(
                w[2].parse::<u64>().unwrap() > 0,
                "{}: no cycle: {l}",
                c.proc
            );
            eprintln!(
                "{}: {} register/deregister cycles, its churning handlers ran {} times",
                c.proc, w[2], w[3]
            );
        }
    }
    let rss_end = status_kb(spid, "VmRSS:");
    let hwm = status_kb(spid, "VmHWM:");
    eprintln!(
        "flood {secs} s: {sent} events from 4 notifiers; server VmRSS {rss_start} kB at start, \
         {rss_third} kB at 1/3, {rss_end} kB at the end; peak (VmHWM) {hwm} kB"
    );
    // Every reader caught up with the ring, then tallies.
    wait_until("the server published every notified event", || {
        ring.region().state().head == sent
    });
    // One event for every process, its sender included, after every
    // notifier is done: a reader that has it has read every earlier record
    // meant for it, from the notifiers' lanes or the ring (a peer's record
    // comes from its lane, read in order, and a lane's rewritten records
    // are in the ring before the lane is read on; docs/shm-format.md,
    // "Lanes"). The ring copies of lane records wake nobody, so the ring
    // cursors need not reach the head.
    let everyone: Vec<String> = procs.iter().map(|q| q.to_string()).collect();
    clients[0].send(&format!(
        "NOTIFY -5702 {} {}",
        DataRange::CUSTOM.0,
        everyone.join(",")
    ));
    assert_eq!(clients[0].expect("NOTIFIED"), "NOTIFIED 0");
    for c in &mut clients {
        await_line(c, "EVENT code=-5702 ");
    }
    for c in &mut clients {
        let lines = all_lines(c);
        let lost: u64 = lines
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("CAUGHT_INFO code={EVENTS_LOST} ")))
            .map(|r| {
                r.split("fastpmix.evlost.count=Uint64(")
                    .nth(1)
                    .and_then(|s| s.split(')').next())
                    .and_then(|s| s.parse::<u64>().ok())
                    .expect("a loss count")
            })
            .sum();
        c.send(&format!("COUNTED {CODE}"));
        let l = c.expect("COUNT_RESULT ");
        let field = |k: &str| {
            l.split(' ')
                .find_map(|w| w.strip_prefix(k))
                .unwrap()
                .to_owned()
        };
        let (valid, invalid): (u64, u64) = (
            field("valid=").parse().unwrap(),
            field("invalid=").parse().unwrap(),
        );
        eprintln!(
            "{}: {valid} valid events, {lost} lost to lag (reported)",
            c.proc
        );
        assert_eq!(invalid, 0, "{}: invalid events delivered: {l}", c.proc);
        if churners.contains(&c.proc) {
            // Not a notifier: every record of the ring was delivered or
            // counted in a loss report.
            assert_eq!(valid + lost, sent, "{}: delivered + reported lost", c.proc);
        } else {
            assert!(valid > 0, "{}: {l}", c.proc);
        }
    }
    // Still responsive: an exchange through the server.
    clients[0].send(&format!("NOTIFY -5702 {}", DataRange::LOCAL.0));
    assert_eq!(clients[0].expect("NOTIFIED"), "NOTIFIED 0");
    for c in &mut clients[1..] {
        c.expect(&format!("EVENT code=-5702 source={} ", procs[0]));
    }
    assert!(
        rss_end <= 2 * rss_third + 8 * 1024,
        "server memory keeps growing: {rss_third} kB at 1/3 of the flood, {rss_end} kB at the end"
    );
}

// ------------------------------------------------------- FM-8: churn

#[test]
fn churn_of_short_lived_clients_leaks_no_slots_descriptors_or_segments() {
    let _q = quiet();
    let (finalizing, killed) = if long_run() { (5000, 500) } else { (1000, 100) };
    let total = finalizing + killed;
    // One rank per short-lived client, two for the end, one to warm up.
    let procs: Vec<Proc> = (0..total + 3).map(|r| p("churn", r)).collect();
    let server = server_proc(&procs);
    let spid = server.pid();
    let ring = Segment::open_read_only(&server.segments[0], HANG).unwrap();
    let region = ring.region().clone();
    // One namespace: its ring and the first chunk of its data store.
    let ours = segments_of(spid);
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert_eq!(
        ours.iter().filter(|n| n.contains("-kv")).count(),
        1,
        "{ours:?}"
    );
    let file = shm_file(ring.name());
    let g = region.geometry();
    let o = g.validate().unwrap();
    let queues_drained = || {
        (0..g.client_capacity).all(|c| {
            let q = o.submit_header(c);
            read_u64(&file, q + offset_of!(SubmitHeader, produced) as u64)
                == read_u64(&file, q + offset_of!(SubmitHeader, consumed) as u64)
        })
    };
    let in_use = || {
        region
            .state()
            .clients
            .iter()
            .filter(|c| c.state != client_state::FREE)
            .count()
    };
    let fds_before = fd_count(spid);
    // Warm up (the first connection may set up things that stay), then the
    // baseline once the server has settled (a grace period, not a check).
    let warm = procs[total as usize + 2];
    ClientProc::spawn(CHILD, warm, &server.env_of(&warm)).finalize();
    wait_until("the warm-up client's entry is free", || in_use() == 0);
    let settle = Instant::now() + Duration::from_secs(2);
    while fd_count(spid) != fds_before && Instant::now() < settle {
        std::thread::sleep(Duration::from_millis(10));
    }
    let baseline = fd_count(spid);
    eprintln!("server fds: {fds_before} before any client, baseline {baseline}");
    let next = Mutex::new(0u64);
    let pids = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = {
                    let mut g = next.lock().unwrap();
                    *g += 1;
                    *g - 1
                };
                if i >= u64::from(total) {
                    break;
                }
                let q = procs[i as usize];
                let mut c = ClientProc::spawn(CHILD, q, &server.env_of(&q));
                pids.lock().unwrap().push(c.pid());
                // Every eleventh one dies without finalize.
                if i % 11 == 10 && i / 11 < u64::from(killed) {
                    c.send("PING");
                    c.expect("PONG");
                    c.kill();
                } else {
                    c.send("FINALIZE");
                    assert_eq!(c.expect("FINALIZED"), "FINALIZED 0", "{q}");
                    assert!(c.wait_exit().success(), "{q} exits");
                }
            });
        }
    });
    eprintln!(
        "{total} short-lived clients ({killed} killed) in {:?}",
        started.elapsed()
    );
    wait_until("every client-table entry is free", || in_use() == 0);
    assert!(queues_drained(), "a submission queue holds records");
    let deadline = Instant::now() + HANG;
    while fd_count(spid) != baseline && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        fd_count(spid),
        baseline,
        "server descriptors back to the baseline"
    );
    assert_eq!(
        segments_of(spid),
        ours,
        "the server has only its namespace's ring and data store"
    );
    for pid in pids.lock().unwrap().iter() {
        assert!(segments_of(*pid).is_empty(), "a client left a segment");
    }
    assert_eq!(region.state().refused, 0);
    // A new client still connects and exchanges events.
    let (x, y) = (procs[total as usize], procs[total as usize + 1]);
    let mut cx = ClientProc::spawn(CHILD, x, &server.env_of(&x));
    let mut cy = ClientProc::spawn(CHILD, y, &server.env_of(&y));
    cx.send(&format!("NOTIFY -5801 {}", DataRange::LOCAL.0));
    assert_eq!(cx.expect("NOTIFIED"), "NOTIFIED 0");
    cy.expect(&format!("EVENT code=-5801 source={x} "));
}
