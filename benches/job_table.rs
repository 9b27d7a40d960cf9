//! Job-management costs next to the raw futex floor of the same
//! run: `PMIx_Heartbeat`, a job-control round trip, a resource-usage sample.
//!
//! ```sh
//! cargo bench --bench job_table                            # 10^7 beats, 2000 round trips
//! FASTPMIX_BENCH_SCALE=0.1 cargo bench --bench job_table   # every count × 0.1
//! ```
//!
//! Processes: this bench is client rank 0 (a `Client` is one per process,
//! and a beat must be timed where it is made). The server runs in a child
//! (this binary re-executed, `FASTPMIX_JOB_BENCH_ROLE=server`) that spawns
//! rank 1, the target (role `target`: connects, sleeps on its stdin). Asked
//! `HB` on its stdin, the server child prints the bench's heartbeat counter
//! as its own mapping of the namespace segment shows it.
//!
//! Syscalls of a beat, without perf_event: a fresh thread beats under a
//! seccomp filter trapping every syscall (but `rt_sigreturn`/`exit`) into a
//! SIGSYS counter, checked by one `getppid()` after the beats; around the
//! timed batches, /proc/thread-self `syscr`/`syscw` and context switches.
//! Oversubscription: per row, the bench's threads (3 processes) that ran
//! ≥ 25% of it, and their run-queue wait (schedstat). Without `--bench`
//! (`cargo test --benches`) a quick pass runs at scale 0.01.

mod common;

use common::table::{collect, dur, Row};
use common::{cores, machine, mono_ns, run_child_if_requested, FloorRig};
use fastpmix::client::{Client, Params};
use fastpmix::internals::ring::Segment;
use fastpmix::internals::sync::Cell64;
use fastpmix::job::usage::proc_usage;
use fastpmix::server::{Server, SERVER_ADDR_ENV};
use fastpmix::types::{attrs, DataArray};
use fastpmix::{Info, Nspace, Proc, Status, Value};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const ROLE_ENV: &str = "FASTPMIX_JOB_BENCH_ROLE";
const NS: &str = "job-bench";
const A: &str = "(a)  futex wake one-way, 2 procs";
const A2: &str = "(a2) futex round trip, 2 procs";
const A3: &str = "(a') futex wake one-way, at the end";
const A4: &str = "(a'2) futex round trip, at the end";
const H0: &str = "(h0) relaxed fetch_add, private Cell64";
const H: &str = "(h)  Client::heartbeat, ns per call";
const J: &str = "(j)  job_control SIGNAL SIGCONT, round trip";
const U: &str = "(u)  monitor PROC_RESOURCE_USAGE, 1 target";
const U1: &str = "(u') job::usage::proc_usage alone";

fn spawn(role: &str, env: Vec<(String, String)>) -> Child {
    let mut cmd = Command::new(std::env::current_exe().expect("current_exe"));
    cmd.envs(env).env(ROLE_ENV, role).stdin(Stdio::piped());
    let child = cmd.stdout(Stdio::piped()).spawn();
    child.expect("spawn bench child")
}

/// Closes the child's stdin (its signal to exit), waits up to 3 s, then
/// kills it by pid.
fn reap(c: &mut Child) {
    drop(c.stdin.take());
    let t = Instant::now();
    while matches!(c.try_wait(), Ok(None)) && t.elapsed().as_secs() < 3 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = c.kill();
    let _ = c.wait();
}

fn line(r: &mut BufReader<ChildStdout>) -> String {
    let mut l = String::new();
    r.read_line(&mut l).expect("child stdout");
    l.trim().to_owned()
}

fn server_main() -> i32 {
    let server = Server::builder().start().expect("start server");
    let ns = Nspace::new(NS).expect("nspace");
    server.register_nspace(&ns, vec![]).expect("nspace");
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let p = |r| Proc::new(NS, r).expect("proc");
    (0..2).for_each(|r| server.register_client(&p(r), uid, gid).expect("client"));
    let env = server.setup_fork(&p(0)).expect("setup_fork");
    let addr = &env.iter().find(|e| e.0 == SERVER_ADDR_ENV).expect("addr").1;
    let mut target = spawn("target", server.setup_fork(&p(1)).expect("setup_fork"));
    // The target says UP once connected: the server knows its pid then.
    let up = line(&mut BufReader::new(target.stdout.take().expect("stdout")));
    let list = server.namespaces();
    let seg = &list.iter().find(|s| s.nspace == ns).expect("ns").segment;
    let seg = Segment::open_read_only(seg, Duration::from_secs(5)).expect("segment");
    let bench = std::os::unix::process::parent_id();
    println!("{addr}\n{} {up}", target.id());
    for _ in std::io::stdin().lines().map_while(Result::ok) {
        let st = seg.region().state();
        let me = st.clients.iter().find(|c| c.pid == bench);
        println!("{}", me.map_or(-1, |c| c.heartbeat as i64));
    }
    reap(&mut target);
    0
}

fn target_main() -> i32 {
    let Ok(c) = Client::init() else { return 1 };
    println!("UP");
    // Sleeps in read(2) until the server closes the pipe; SIGCONT (default
    // disposition) does not interrupt it.
    std::io::stdin().lines().for_each(drop);
    let _ = c.finalize();
    0
}

/// The server child and its stdout; reaped on drop.
struct Node(Child, BufReader<ChildStdout>);

impl Node {
    /// The server child, its address and the target's pid.
    fn start() -> (Node, String, u32) {
        let mut child = spawn("server", vec![]);
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let (addr, t) = (line(&mut out), line(&mut out));
        assert!(t.ends_with(" UP"), "the target did not connect: {t:?}");
        let target = t[..t.len() - 3].parse().expect("pid");
        (Node(child, out), addr, target)
    }

    /// The bench's heartbeat counter as the server process reads it.
    fn heartbeat_seen(&mut self) -> i64 {
        let stdin = self.0.stdin.as_mut().expect("server stdin");
        writeln!(stdin, "HB").expect("server stdin");
        line(&mut self.1).parse().expect("count")
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        reap(&mut self.0);
    }
}

/// Syscalls trapped by the seccomp filter (set before the handler is installed).
static TRAPPED: OnceLock<Cell64> = OnceLock::new();

fn trapped() -> &'static Cell64 {
    TRAPPED.get_or_init(|| Cell64::new(0))
}

extern "C" fn on_sigsys(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Initialised before the handler was installed: `get` is one load.
    if let Some(c) = TRAPPED.get() {
        c.fetch_add_relaxed(1);
    }
}

/// `n` beats on a fresh thread whose every syscall traps: Some([syscalls
/// during the beats, syscalls of one getppid() after them, failed beats]),
/// None if seccomp is unavailable.
fn trapped_beats(client: &Client, n: u64) -> Option<[u64; 3]> {
    trapped();
    // SAFETY: a SIGSYS handler that only bumps an atomic (async-signal-safe).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigsys as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut());
    }
    // [state (1 done, 2 no seccomp), the three results]
    let out: Arc<[Cell64; 4]> = Arc::new([(); 4].map(|_| Cell64::new(0)));
    let (c, o) = (client.clone(), out.clone());
    std::thread::spawn(move || {
        // Load nr; allow rt_sigreturn (the handler's return) and exit (this
        // thread's end); trap the rest: a trapped syscall is counted, skipped.
        let f = |code, jt, k| libc::sock_filter { code, jt, jf: 0, k };
        let prog = [
            f(0x20, 0, 0),                             // BPF_LD|BPF_W|BPF_ABS, nr
            f(0x15, 2, libc::SYS_rt_sigreturn as u32), // BPF_JMP|BPF_JEQ|BPF_K
            f(0x15, 1, libc::SYS_exit as u32),
            f(0x06, 0, libc::SECCOMP_RET_TRAP), // BPF_RET|BPF_K
            f(0x06, 0, libc::SECCOMP_RET_ALLOW),
        ];
        let filter = prog.as_ptr() as *mut _;
        let fp = libc::sock_fprog { len: 5, filter };
        // SAFETY: a valid filter program that outlives the call; both calls
        // act on this thread only (no TSYNC).
        let ok = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fp) == 0
        };
        if !ok {
            return o[0].store_release(2);
        }
        let t0 = trapped().load_relaxed();
        let fails = (0..n).filter(|_| c.heartbeat().is_err()).count();
        let t1 = trapped().load_relaxed();
        // SAFETY: no preconditions (trapped here: counted, skipped).
        black_box(unsafe { libc::getppid() });
        let r = [t1 - t0, trapped().load_relaxed() - t1, fails as u64];
        (0..3).for_each(|i| o[i + 1].store_relaxed(r[i]));
        o[0].store_release(1);
        // Unwinding would make syscalls (skipped here): exit(2) at once,
        // leaking this thread's stack and its client handle.
        // SAFETY: ends this thread only; nothing of it is used afterwards.
        unsafe { libc::syscall(libc::SYS_exit, 0) };
    });
    let t = Instant::now();
    while out[0].load_acquire() == 0 && t.elapsed().as_secs() < 20 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let r = std::array::from_fn(|i| out[i + 1].load_relaxed());
    (out[0].load_acquire() == 1).then_some(r)
}

/// This thread's syscr, syscw (read/write syscalls), voluntary and
/// involuntary context switches.
fn probe() -> [i64; 4] {
    let io = read("/proc/thread-self/io");
    let st = read("/proc/thread-self/status");
    let (r, w) = (field(&io, "syscr:"), field(&io, "syscw:"));
    let v = field(&st, "voluntary_ctxt_switches:");
    [r, w, v, field(&st, "nonvoluntary_ctxt_switches:")]
}

/// The number after `key` at the start of a line of `text` (-1 if none).
fn field(text: &str, key: &str) -> i64 {
    let v = text.lines().find_map(|l| l.strip_prefix(key));
    v.and_then(|v| v.trim().parse().ok()).unwrap_or(-1)
}

fn read(path: impl AsRef<std::path::Path>) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

type Sched = BTreeMap<u32, (String, u64, u64)>;

/// Per thread of `procs`: name, ns on CPU, ns runnable without a core.
fn sched(procs: &[(&str, u32)]) -> Sched {
    let mut m = BTreeMap::new();
    for (who, pid) in procs {
        let dir = std::fs::read_dir(format!("/proc/{pid}/task"));
        for e in dir.into_iter().flatten().flatten() {
            let r = |f: &str| read(e.path().join(f));
            let st = r("schedstat");
            let mut v = st.split_whitespace().map(|x| x.parse::<u64>());
            let tid = e.file_name().to_string_lossy().parse();
            if let (Ok(tid), Some(Ok(run)), Some(Ok(wait))) = (tid, v.next(), v.next()) {
                m.insert(tid, (format!("{who}:{}", r("comm").trim()), run, wait));
            }
        }
    }
    m
}

/// Which of the bench's threads ran ≥ 25% of a row: does it oversubscribe?
fn busy_note(row: &str, procs: &[(&str, u32)], before: (Sched, Instant)) -> String {
    // The window covers both samples: clock first at the start, last here.
    let after = sched(procs);
    let wall = before.1.elapsed().as_nanos().max(1) as f64;
    let (mut names, mut run, mut wait) = (Vec::new(), 0.0, 0.0);
    for (tid, (name, r, w)) in after {
        let (r0, w0) = before.0.get(&tid).map_or((0, 0), |x| (x.1, x.2));
        let d = r.saturating_sub(r0) as f64 / wall;
        (run, wait) = (run + d, wait + w.saturating_sub(w0) as f64 / wall);
        if d >= 0.25 {
            names.push(format!("{name} {:.0}%", d * 100.0));
        }
    }
    let (k, c, w) = (names.len(), cores(), wait * 100.0);
    let verdict = match k > c {
        true => format!("OVERSUBSCRIBED ({run:.2} cores used on average: they partly take turns)"),
        false => format!("fits the cores ({run:.2} cores used on average)"),
    };
    let names = names.join(", ");
    format!(
        "{row}: {k} threads of the bench's processes on CPU >= 25% of the row ({names}), \
         {c} cores: {verdict}; run-queue wait {w:.1}% of the row (runnable, no free core)"
    )
}

fn main() {
    run_child_if_requested(); // the floor rig's child
    match std::env::var(ROLE_ENV).as_deref() {
        Ok("server") => std::process::exit(server_main()),
        Ok(_) => std::process::exit(target_main()),
        Err(_) => {}
    }
    let started = Instant::now();
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` passes no `--bench`: a quick smoke pass.
    let full = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let scale = std::env::var("FASTPMIX_BENCH_SCALE").map(|s| s.parse().expect("scale"));
    let scale: f64 = scale.unwrap_or(if full { 1.0 } else { 0.01 });
    let n = |base: f64, min: usize| ((base * scale) as usize).max(min);
    let (batches, per_batch) = (10, n(1e6, 1000) as u64);
    println!("{}", machine::process_machine_line(cores(), mono_ns));
    let quick = if full { "" } else { ": quick pass" };
    println!("scale {scale} (env FASTPMIX_BENCH_SCALE){quick}");
    let mut rows: Vec<Row> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let floor = |rows: &mut Vec<Row>, l1, l2| {
        let (mut f, mut rtt) = (FloorRig::new(), Vec::new());
        let one = collect(n(5000.0, 50), || {
            let (one, half) = f.once();
            rtt.push(2.0 * half as f64);
            one as f64
        });
        rtt.drain(..rtt.len() - one.len()); // the warm-up
        rows.push(Row::new(l1, one, true));
        rows.push(Row::new(l2, rtt, true));
    };
    floor(&mut rows, A, A2);

    let (mut node, addr, target_pid) = Node::start();
    let p = |r| Proc::new(NS, r).expect("proc");
    let (me, target, server) = (p(0), p(1), std::path::PathBuf::from(addr));
    let client = Client::init_with(&Params::new(server, me)).expect("client init");
    let (bench, srv) = (std::process::id(), node.0.id());
    let procs = [("bench", bench), ("server", srv), ("target", target_pid)];
    let start = || {
        let t = Instant::now();
        (sched(&procs), t)
    };

    // (h) Heartbeat; (h0) the bare relaxed increment it is built on.
    let hb0 = node.heartbeat_seen();
    let batch = |f: &mut dyn FnMut()| -> f64 {
        let t = Instant::now();
        (0..per_batch).for_each(|_| f());
        t.elapsed().as_nanos() as f64 / per_batch as f64
    };
    let cell = Cell64::new(0);
    let bare = (0..batches).map(|_| batch(&mut || _ = black_box(&cell).fetch_add_relaxed(1)));
    rows.push(Row::new(H0, bare.collect(), false));
    let (a, b) = (probe(), probe());
    let probe_cost: [i64; 4] = std::array::from_fn(|i| b[i] - a[i]);
    let (mut sys, mut fails, mut per) = ([0i64; 4], 0, Vec::new());
    let t = start();
    for _ in 0..batches {
        let a = probe();
        per.push(batch(&mut || fails += client.heartbeat().is_err() as u64));
        let b = probe();
        (0..4).for_each(|i| sys[i] += (b[i] - a[i] - probe_cost[i]).max(0));
    }
    notes.push(busy_note("(h)", &procs, t));
    rows.push(Row::new(H, per, false));
    let trap = trapped_beats(&client, per_batch);
    let beats = (batches + trap.map_or(0, |_| 1)) as u64 * per_batch;
    let seen = node.heartbeat_seen() - hb0;
    let [r, w, v, iv] = sys;
    notes.push(format!(
        "(h) around the {batches} timed batches (probe cost subtracted): syscr +{r} syscw +{w}; \
         context switches voluntary +{v} involuntary +{iv}; {fails} beats failed"
    ));
    let zero = trap.is_some_and(|[during, check, _]| during == 0 && check == 1);
    notes.push(match trap {
        Some([d, c, f]) => format!(
            "(h) seccomp trap on every syscall, {per_batch} beats on a fresh thread: {d} syscalls \
             trapped during the beats ({f} failed); one getppid() after them: {c} trapped"
        ),
        None => "(h) seccomp unavailable: syscalls not counted exactly".into(),
    });
    let exact = ["MISMATCH", "exact"][(seen == beats as i64) as usize];
    notes.push(format!(
        "(h) the server process saw the counter advance +{seen} for {beats} beats: {exact}"
    ));

    // Round trips, timed; `bad` counts failed calls.
    let mut bad = 0;
    let mut timed = |k, f: &mut dyn FnMut() -> bool| {
        collect(k, || {
            let t = mono_ns();
            bad += !f() as u32;
            (mono_ns() - t) as f64
        })
    };
    // (j) SIGCONT (harmless to a running process) to rank 1, back to back.
    let cont = Value::Int(libc::SIGCONT);
    let sig = [Info::new(attrs::PMIX_JOB_CTRL_SIGNAL, cont)];
    let mut signal = || client.job_control(&[target], &sig).status.is_success();
    let t = start();
    let j = timed(n(2000.0, 50), &mut signal);
    notes.push(busy_note("(j)", &procs, t));
    rows.push(Row::new(J, j, true));

    // (u) One usage sample of rank 1 through the server, then the /proc
    // reading alone in this process.
    let mon = Info::new(attrs::PMIX_MONITOR_PROC_RESOURCE_USAGE, Value::Undef);
    let who = Value::DataArray(DataArray::Proc(vec![target]));
    let tgt = [Info::new(attrs::PMIX_MONITOR_TARGET_PROCS, who)];
    let mut sample = || {
        let o = client.monitor(&mon, Status(0), &tgt);
        o.status.is_success() && !o.results.is_empty()
    };
    let t = start();
    rows.push(Row::new(U, timed(n(500.0, 20), &mut sample), true));
    notes.push(busy_note("(u)", &procs, t));
    let pid = target_pid as i32;
    let pu = timed(n(2000.0, 50), &mut || proc_usage(pid, None, &[]).is_ok());
    rows.push(Row::new(U1, pu, false));
    if bad > 0 {
        notes.push(format!("WARNING: {bad} calls failed in (j)/(u)"));
    }
    let _ = client.finalize();
    drop(node);
    floor(&mut rows, A3, A4);

    let (one, rtt) = (rows[0].pct(0.5).max(1.0), rows[1].pct(0.5).max(1.0));
    let head = ("row", "count", "p50", "p99", "p50/1way", "p50/RTT");
    let (a, b, c, d, e, f) = head;
    println!("\n{a:<44} {b:>6} {c:>10} {d:>10} {e:>9} {f:>9}");
    for r in &rows {
        let x = |f: f64| match r.latency {
            true => format!("{:.2}x", r.pct(0.5) / f),
            false => "-".into(),
        };
        let (l, k, p50, p99) = (&r.label, r.ns.len(), dur(r.pct(0.5)), dur(r.pct(0.99)));
        let (x1, x2) = (x(one), x(rtt));
        println!("{l:<44} {k:>6} {p50:>10} {p99:>10} {x1:>9} {x2:>9}");
    }
    println!("(h0), (h): count = batches of {per_batch} calls; p50 = the median batch's ns/call\n");
    notes.iter().for_each(|l| println!("{l}"));
    let drift = rows[rows.len() - 2].pct(0.5) / one;
    if !(0.8..=1.25).contains(&drift) {
        println!("WARNING: the futex floor moved {drift:.2}x from start to end: ratios unreliable");
    }
    let h = rows[3].pct(0.5);
    let verdict = if h <= 50.0 { "holds" } else { "MISSED" };
    let sc = ["NOT shown to be 0", "0, measured (seccomp trap count)"][zero as usize];
    let h = dur(h);
    println!(
        "target heartbeat <= 50 ns, no syscall: {h} = {verdict}; syscalls per beat: {sc} \
         (OpenPMIx sends a socket message per beat)"
    );
    let (took, load) = (started.elapsed().as_secs_f64(), machine::loadavg());
    println!("loadavg at end: \"{load}\"; took {took:.1} s");
}
