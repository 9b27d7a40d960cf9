//! Data-exchange costs next to the raw futex floor of the same run:
//! `PMIx_Get` of a local peer's committed key (`Client::get`), fences with
//! and without `PMIX_COLLECT_DATA`, a whole wire-up, and what the store
//! takes in shared memory per rank and per key.
//!
//! ```sh
//! cargo bench --bench data_table                            # full counts
//! FASTPMIX_BENCH_SCALE=0.1 cargo bench --bench data_table   # every count × 0.1
//! ```
//!
//! Processes: this bench is the server (an embedded `Server`, a fresh
//! namespace per row); the clients are this binary re-executed
//! (`FASTPMIX_DATA_BENCH_ROLE` names the row). A `Client` is one per
//! process, and a Get must be timed where it is made: each client times
//! its own calls and prints the samples on stdout. Every rank puts the
//! four keys a wire-up typically does (an id, an address string, a 64-byte
//! address blob, a flag; scope GLOBAL) and every Get checks the value it
//! got. The same rows through the C API, against OpenPMIx:
//! `tools/bench-compare --scenarios floor,get,fence,wireup`. Without
//! `--bench` (`cargo test --benches`) a quick pass runs at scale 0.01. No
//! time is asserted.

mod common;

use common::table::{collect, dur, Row};
use common::{cores, env_parse, machine, mono_ns, run_child_if_requested, sleep_until};
use common::{Block, FloorRig};
use fastpmix::client::Client;
use fastpmix::internals::store::scope;
use fastpmix::internals::wire::info_to_record;
use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{Info, Key, Nspace, Proc, Rank, Value};
use shm_layout::store::{next_entry, KvItem, KvRecord, FIRST_CHUNK, FIRST_ENTRY};
use std::io::{BufRead, BufReader, Lines, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const ROLE_ENV: &str = "FASTPMIX_DATA_BENCH_ROLE";
const K_ENV: &str = "FASTPMIX_DATA_BENCH_K";
const GO_ENV: &str = "FASTPMIX_DATA_BENCH_GO_FD";
const NKEYS: u32 = 4;
/// Gets per timed batch (row g").
const BATCH: usize = 1000;
const A: &str = "(a)  futex wake one-way, 2 procs";
const A2: &str = "(a') futex wake one-way, at the end";
const G: &str = "(g)  Client::get, a peer's u64, per call";
const GB: &str = "(g') Client::get, a peer's 64-B blob, per call";
const GN: &str = "(g\") Client::get, u64, batches of 1000, ns/call";

// ---------------------------------------------------------------- keys

fn key(j: u32) -> Key {
    Key::new(format!("bench.d{j}")).expect("key")
}

/// What `rank` puts under key `j` in wire-up `iter` (the same keys every
/// time: a later wire-up replaces the values).
fn value(rank: u32, iter: u32, j: u32) -> Value {
    match j {
        0 => Value::Uint64(u64::from(rank) << 32 | u64::from(iter)),
        1 => Value::String(format!("ep:{rank}:{iter}:bench-endpoint-address")),
        2 => Value::ByteObject((0..64u32).map(|i| (rank * 31 + iter + i) as u8).collect()),
        _ => Value::Uint32(rank ^ iter),
    }
}

/// The bytes one rank's commit of the four keys takes in the store: one
/// record (rkyv, as the server writes it) with its entry header, aligned.
fn entry_bytes(rank: u32) -> u64 {
    let items = (0..NKEYS)
        .map(|j| KvItem {
            scope: scope::GLOBAL,
            info: info_to_record(&Info::new(key(j), value(rank, 0, j))),
        })
        .collect();
    let rec = KvRecord { rank, items };
    let body = rkyv::to_bytes::<rkyv::rancor::Error>(&rec).expect("encode");
    next_entry(FIRST_ENTRY, body.len() as u64) - FIRST_ENTRY
}

// ---------------------------------------------------------------- clients

fn put_keys(c: &Client, iter: u32) {
    let me = c.me().rank.0;
    for j in 0..NKEYS {
        c.put(scope::GLOBAL, key(j).as_str(), value(me, iter, j))
            .expect("put");
    }
    c.commit().expect("commit");
}

fn fence(c: &Client, collect: bool) {
    let yes = [Info::new(attrs::PMIX_COLLECT_DATA, Value::Bool(true))];
    let info: &[Info] = if collect { &yes } else { &[] };
    c.fence(&[], info).expect("fence");
}

/// One timed Get of `rank`'s key `j`: (ns, whether the value was right).
fn get(c: &Client, rank: u32, iter: u32, j: u32) -> (u64, bool) {
    let p = Proc {
        nspace: c.me().nspace,
        rank: Rank(rank),
    };
    let k = key(j);
    let t = mono_ns();
    let v = c.get(&p, k.as_str());
    let t = mono_ns() - t;
    (t, v.is_ok_and(|v| v == value(rank, iter, j)))
}

fn print_nums(tag: &str, v: impl IntoIterator<Item = u64>) {
    let mut out = std::io::stdout().lock();
    write!(out, "{tag}").unwrap();
    v.into_iter().for_each(|x| write!(out, " {x}").unwrap());
    writeln!(out).unwrap();
    out.flush().unwrap();
}

fn client_main(role: &str) -> i32 {
    let k: usize = env_parse(K_ENV);
    let c = Client::init().expect("client init");
    let (me, n) = (c.me().rank.0, env_parse::<u32>("FASTPMIX_DATA_BENCH_N"));
    let mut bad = 0u64;
    match role {
        // Rank 1 commits, rank 0 gets (after a fence with collection).
        "get" if me == 1 => {
            put_keys(&c, 0);
            fence(&c, true);
        }
        "get" => {
            fence(&c, true);
            let (first, ok) = get(&c, 1, 0, 0);
            bad += !ok as u64;
            let mut one = |j| {
                let (t, ok) = get(&c, 1, 0, j);
                bad += !ok as u64;
                t
            };
            let u64s: Vec<u64> = (0..k).map(|_| one(0)).collect();
            let blobs: Vec<u64> = (0..k).map(|_| one(2)).collect();
            let p = Proc::new(c.me().nspace.as_str(), 1).expect("proc");
            let batches = (0..(k / BATCH).max(3)).map(|_| {
                let t = mono_ns();
                (0..BATCH).for_each(|_| bad += c.get(&p, "bench.d0").is_err() as u64);
                (mono_ns() - t) / BATCH as u64
            });
            let batches: Vec<u64> = batches.collect();
            print_nums("FIRST", [first]);
            print_nums("G", u64s);
            print_nums("GB", blobs);
            print_nums("GN", batches);
        }
        // Entry and exit of each fence; with collection every rank
        // committed before the first, and gets one key of each peer after.
        "fence" | "fence-collect" => {
            let collect = role == "fence-collect";
            if collect {
                put_keys(&c, 0);
            }
            fence(&c, false); // every rank at the start line
            let mut t = Vec::with_capacity(2 * k);
            for _ in 0..k {
                t.push(mono_ns());
                fence(&c, collect);
                t.push(mono_ns());
            }
            for r in (0..n).filter(|&r| collect && r != me) {
                bad += !get(&c, r, 0, (r + me) % NKEYS).1 as u64;
            }
            print_nums("F", t);
        }
        // Wire-ups, each started by the bench on the shared `go` word.
        _ => {
            let go = Block::inherit(GO_ENV, 1);
            print_nums("READY", []);
            for it in 0..k as u32 {
                sleep_until(go.c32(0), it + 1, "the bench's go");
                let t0 = mono_ns();
                put_keys(&c, it);
                let t1 = mono_ns();
                fence(&c, true);
                let t2 = mono_ns();
                for r in (0..n).filter(|&r| r != me) {
                    bad += (0..NKEYS).filter(|&j| !get(&c, r, it, j).1).count() as u64;
                }
                print_nums("W", [t0, t1, t2, mono_ns()]);
            }
        }
    }
    print_nums("BAD", [bad]);
    println!("DONE");
    c.finalize().expect("finalize");
    0
}

// ---------------------------------------------------------------- the bench's side

/// One namespace of `n` client processes running `role`.
struct Job {
    ns: Nspace,
    kids: Vec<Child>,
    out: Vec<Lines<BufReader<ChildStdout>>>,
    bad: u64,
}

impl Job {
    fn start(server: &Server, role: &str, n: u32, k: usize, go: Option<&Block>) -> Job {
        let ns = Nspace::new(&format!("data-bench-{role}-{n}")).expect("nspace");
        let size = |a| Info::new(a, Value::Uint32(n));
        // Every rank on this node, as a launcher says it: the namespace's
        // fences then go through its barrier in shared memory.
        let peers: Vec<String> = (0..n).map(|r| r.to_string()).collect();
        let info = vec![
            size(attrs::PMIX_JOB_SIZE),
            size(attrs::PMIX_LOCAL_SIZE),
            Info::new(attrs::PMIX_LOCAL_PEERS, Value::String(peers.join(","))),
        ];
        server.register_nspace(&ns, info).expect("register nspace");
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let p = |r| Proc::new(ns.as_str(), r).expect("proc");
        // Every client registered before the first starts: a fence entered
        // while a rank below PMIX_JOB_SIZE is not registered yet goes to
        // the host (this one has no fence_nb: PMIX_ERR_NOT_SUPPORTED).
        (0..n).for_each(|r| server.register_client(&p(r), uid, gid).expect("client"));
        let (mut kids, mut out) = (Vec::new(), Vec::new());
        for p in (0..n).map(p) {
            let mut cmd = Command::new(std::env::current_exe().expect("current_exe"));
            cmd.envs(server.setup_fork(&p).expect("setup_fork"))
                .env(ROLE_ENV, role)
                .env(K_ENV, k.to_string())
                .env("FASTPMIX_DATA_BENCH_N", n.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::piped());
            if let Some(b) = go {
                cmd.env(GO_ENV, b.fd.to_string());
            }
            let mut child = cmd.spawn().expect("spawn bench client");
            out.push(BufReader::new(child.stdout.take().expect("stdout")).lines());
            kids.push(child);
        }
        Job {
            ns,
            kids,
            out,
            bad: 0,
        }
    }

    /// The next line of rank `r` that starts with `tag`, as numbers.
    fn nums(&mut self, r: usize, tag: &str) -> Vec<u64> {
        for l in self.out[r].by_ref() {
            let l = l.expect("client stdout");
            let mut w = l.split_whitespace();
            if w.next() == Some(tag) {
                return w.map(|x| x.parse().expect("number")).collect();
            }
        }
        panic!("client rank {r} ended before its {tag} line (see its stderr above)");
    }

    /// Reads every rank's BAD count, waits for them to exit, forgets the
    /// namespace.
    fn finish(mut self, server: &Server) -> u64 {
        for r in 0..self.kids.len() {
            self.bad += self.nums(r, "BAD")[0];
        }
        let t = Instant::now();
        for c in &mut self.kids {
            while matches!(c.try_wait(), Ok(None)) && t.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let _ = server.deregister_nspace(&self.ns);
        self.bad
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        for c in &mut self.kids {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

/// Per fence: the last rank's entry to the last rank's exit (a barrier
/// lets nobody out before everyone is in); the first tenth is warm-up.
fn fence_row(server: &Server, n: u32, collect: bool, k: usize, bad: &mut u64) -> Vec<f64> {
    let role = if collect { "fence-collect" } else { "fence" };
    let mut job = Job::start(server, role, n, k, None);
    let t: Vec<Vec<u64>> = (0..n as usize).map(|r| job.nums(r, "F")).collect();
    *bad += job.finish(server);
    let last = |j: usize| t.iter().map(|v| v[j]).max().unwrap_or(0);
    (k / 10..k)
        .map(|i| (last(2 * i + 1) - last(2 * i)) as f64)
        .collect()
}

fn over(n: u32) -> String {
    let c = cores();
    let v = match n as usize > c {
        true => "OVERSUBSCRIBED",
        false => "fits",
    };
    format!("N={n}: {n} client processes (each with its progress thread) and the server on {c} cores: {v}")
}

fn main() {
    run_child_if_requested(); // the floor rig's child
    if let Ok(role) = std::env::var(ROLE_ENV) {
        std::process::exit(client_main(&role));
    }
    let started = Instant::now();
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` passes no `--bench`: a quick smoke pass.
    let full = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let scale = std::env::var("FASTPMIX_BENCH_SCALE").map(|s| s.parse().expect("scale"));
    let scale: f64 = scale.unwrap_or(if full { 1.0 } else { 0.01 });
    let n = |base: f64, min: usize| ((base * scale) as usize).max(min);
    println!("{}", machine::process_machine_line(cores(), mono_ns));
    let quick = if full { "" } else { ": quick pass" };
    println!("scale {scale} (env FASTPMIX_BENCH_SCALE){quick}");
    let (mut rows, mut notes, mut bad) = (Vec::new(), Vec::new(), 0u64);
    let floor = |rows: &mut Vec<Row>, label| {
        let mut f = FloorRig::new();
        rows.push(Row::new(
            label,
            collect(n(5000.0, 50), || f.once().0 as f64),
            true,
        ));
    };
    floor(&mut rows, A);
    let server = Server::builder().start().expect("start server");

    // (g) Gets of rank 1's keys in rank 0, after a fence with collection.
    let k = n(20000.0, 200);
    let mut job = Job::start(&server, "get", 2, k, None);
    let first = job.nums(0, "FIRST")[0];
    let f64s = |v: Vec<u64>| v.into_iter().map(|x| x as f64).collect::<Vec<f64>>();
    let samples = |job: &mut Job, tag| f64s(job.nums(0, tag)).split_off(k / 10);
    rows.push(Row::new(G, samples(&mut job, "G"), true));
    rows.push(Row::new(GB, samples(&mut job, "GB"), true));
    rows.push(Row::new(GN, f64s(job.nums(0, "GN")), true));
    bad += job.finish(&server);
    notes.push(format!(
        "(g) the first Get after the fence (the client maps and indexes the store): {}",
        dur(first as f64)
    ));

    // (f) fences; (c) with collection.
    for (nn, kk) in [(2, n(3000.0, 30)), (8, n(800.0, 20))] {
        let label = format!("(f{nn}) fence N={nn}, per fence");
        rows.push(Row::new(
            &label,
            fence_row(&server, nn, false, kk, &mut bad),
            true,
        ));
        let label = format!("(c{nn}) fence N={nn} PMIX_COLLECT_DATA");
        rows.push(Row::new(
            &label,
            fence_row(&server, nn, true, kk, &mut bad),
            true,
        ));
        notes.push(over(nn));
    }

    // (w8) wire-ups of 8 ranks, one at a time, started on one FUTEX_WAKE.
    let (nw, kw) = (8u32, n(20.0, 3));
    let go = Block::create(c"fastpmix-data-bench", 1);
    let mut job = Job::start(&server, "wireup", nw, kw, Some(&go));
    // Every rank up (PMIx_Init done) before the first go.
    (0..nw as usize).for_each(|r| _ = job.nums(r, "READY"));
    let (mut walls, mut foot, mut phases) = (Vec::new(), Vec::new(), Vec::new());
    for it in 0..kw as u32 {
        go.c32(0).store_release(it + 1);
        go.c32(0).wake_all();
        let t: Vec<Vec<u64>> = (0..nw as usize).map(|r| job.nums(r, "W")).collect();
        let min = |i: usize| t.iter().map(|v| v[i]).min().unwrap_or(0);
        let max = |i: usize| t.iter().map(|v| v[i]).max().unwrap_or(0);
        walls.push((max(3) - min(0)) as f64);
        // Where the time went: the ranks' start spread (their wake-ups),
        // put + commit (the slowest rank), the fence (last entry to last
        // exit), the Gets (the slowest rank).
        let slowest = |a: usize, b: usize| t.iter().map(|v| v[b] - v[a]).max().unwrap_or(0);
        phases.push([
            max(0) - min(0),
            slowest(0, 1),
            max(2) - max(1),
            slowest(2, 3),
        ]);
        foot.push(server.data_footprint(&job.ns).expect("footprint"));
    }
    bad += job.finish(&server);
    let first = walls.remove(0);
    rows.push(Row::new("(w8) wire-up N=8, repeats", walls, true));
    notes.push(format!(
        "(w8) put 4 keys, commit, fence with collection, get every peer's 4 keys; first rank's \
         start to last rank's end; the job's first wire-up: {} (the row: the {} repeats, the \
         same keys put again); {}",
        dur(first),
        kw - 1,
        over(nw)
    ));
    let ph = |p: &[u64; 4]| {
        let [a, b, c, d] = p.map(|x| dur(x as f64));
        format!("start spread {a}, put+commit {b}, fence {c}, gets {d}")
    };
    notes.push(format!(
        "(w8) phases (slowest rank; the fence from the last entry): first wire-up: {}; the \
         last repeat: {}",
        ph(&phases[0]),
        ph(&phases[phases.len() - 1])
    ));
    floor(&mut rows, A2);

    let one = rows[0].pct(0.5).max(1.0);
    let (a, b, c, d, e) = ("row", "count", "p50", "p99", "p50/floor");
    println!("\n{a:<50} {b:>6} {c:>10} {d:>10} {e:>9}");
    for r in &rows {
        let (l, k, p50, p99) = (&r.label, r.ns.len(), dur(r.pct(0.5)), dur(r.pct(0.99)));
        let x = format!("{:.2}x", r.pct(0.5) / one);
        println!("{l:<50} {k:>6} {p50:>10} {p99:>10} {x:>9}");
    }
    println!("(g\"): count = batches of {BATCH} Gets; p50 = the median batch's ns per Get\n");
    notes.iter().for_each(|l| println!("{l}"));

    // The store: chunks of shared memory (the first FIRST_CHUNK bytes,
    // each next one twice the last), one record per commit.
    let entry = entry_bytes(nw - 1);
    let ((b1, i1), (bk, ik)) = (foot[0], foot[foot.len() - 1]);
    println!(
        "store, N={nw}: after the first wire-up {b1} B of shared memory for {i1} items \
         ({} B per rank, {} B per key: the first chunk, {FIRST_CHUNK} B, is not full yet); \
         after {kw} wire-ups {bk} B for {ik} items (append-only: a key put again takes room again)",
        b1 / u64::from(nw),
        b1 / i1.max(1) as u64
    );
    println!(
        "store record of one rank's commit of the 4 keys: {entry} B ({} B per key, rkyv, \
         16-byte aligned): the first chunk holds {} such commits before the store grows",
        entry / u64::from(NKEYS),
        (FIRST_CHUNK - FIRST_ENTRY) / entry
    );
    if bad > 0 {
        println!("WARNING: {bad} Gets returned a wrong or missing value");
    }
    let drift = rows[rows.len() - 1].pct(0.5) / one;
    if !(0.8..=1.25).contains(&drift) {
        println!("WARNING: the futex floor moved {drift:.2}x from start to end: ratios unreliable");
    }
    let g = rows[1].pct(0.5);
    let verdict = if g <= 1000.0 { "holds" } else { "MISSED" };
    println!(
        "target Get of a local peer's committed key p50 <= 1 µs: {} = {verdict}",
        dur(g)
    );
    let (took, load) = (started.elapsed().as_secs_f64(), machine::loadavg());
    println!("loadavg at end: \"{load}\"; took {took:.1} s");
}
