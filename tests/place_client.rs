//! Where client progress threads run, checked on real client
//! processes through /proc, and the spin policy following placement.
//!
//! A child inherits the CPU binding of the thread that spawns it, so each
//! test binds a helper thread as a launcher would bind a rank, and spawns
//! the client from it. The expected CPU is what `place::decide` says for
//! this machine: the tests hold on any topology; the ones that need a core
//! beside the binding skip (saying so) on a one-core machine.

mod procs;

use fastpmix::event::{Engine, Notification, Registration};
use fastpmix::place::{self, Placement, Role};
use fastpmix::server::Server;
use fastpmix::types::attrs::{PMIX_BIND_PROGRESS_THREAD, PMIX_BIND_REQUIRED, PMIX_LOCAL_CPUSETS};
use fastpmix::{DataRange, Info, Proc, Status};
use procs::{ClientProc, ROLE_ENV};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CHILD: &str = "child_client";

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

/// Binds the calling thread to `cpus` (`sched_setaffinity`).
fn bind_thread(cpus: &[u32]) {
    // SAFETY: all zeroes is a valid, empty cpu_set_t.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        assert!((c as usize) < libc::CPU_SETSIZE as usize);
        // SAFETY: c < CPU_SETSIZE (asserted above), the bit size of `set`.
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: pid 0 = the calling thread; `set` is a valid cpu_set_t of the
    // size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}

/// A server started with `info` as attributes, with one namespace of `n`
/// ranks registered for this uid.
fn server_with(ns: &str, n: u32, info: Vec<Info>) -> Result<Server, Status> {
    let mut b = Server::builder();
    for i in info {
        b = b.attribute(i);
    }
    let s = b.start()?;
    s.register_nspace(&fastpmix::Nspace::new(ns).unwrap(), vec![])
        .unwrap();
    let (uid, gid) = procs::ids();
    for r in 0..n {
        s.register_client(&Proc::new(ns, r).unwrap(), uid, gid)
            .unwrap();
    }
    Ok(s)
}

fn server(ns: &str, n: u32) -> Server {
    server_with(ns, n, vec![]).expect("server")
}

/// `fastpmix inspect`'s report of server `s`.
fn inspect(s: &Server) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fastpmix"))
        .arg("inspect")
        .arg("--server")
        .arg(s.address())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Spawns client `p` from a thread bound to `binding` (`None`: unbound),
/// with `env` added to what `setup_fork` gives.
fn spawn_bound(s: &Server, p: Proc, binding: Option<Vec<u32>>, env: &[(&str, &str)]) -> ClientProc {
    let mut e = s.setup_fork(&p).unwrap();
    e.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    std::thread::spawn(move || {
        if let Some(b) = binding {
            bind_thread(&b);
        }
        ClientProc::spawn(CHILD, p, &e)
    })
    .join()
    .unwrap()
}

/// `/proc/<pid>` status field `Cpus_allowed_list` of thread `tid` (or of
/// the process's main thread).
fn allowed_of(pid: u32, tid: Option<u32>) -> String {
    let path = match tid {
        Some(t) => format!("/proc/{pid}/task/{t}/status"),
        None => format!("/proc/{pid}/status"),
    };
    let s = std::fs::read_to_string(path).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_owned()
}

/// The client's progress thread, as /proc shows it.
fn progress_thread(c: &ClientProc) -> place::ThreadPlace {
    let found = place::progress_threads(c.pid());
    found
        .into_iter()
        .find(|t| t.name == "fastpmix-events")
        .expect("the client's progress thread")
}

/// `0-1,4` as the kernel prints a CPU list.
fn list(cpus: &[u32]) -> String {
    Placement::Cpus(cpus.to_vec())
        .to_string()
        .trim_start_matches("cpu:")
        .to_owned()
}

fn placement_line(c: &mut ClientProc) -> String {
    c.send("PLACEMENT");
    let l = c.expect("PLACEMENT ");
    l.strip_prefix("PLACEMENT ").unwrap_or(&l).to_owned()
}

/// The first allowed CPU and the machine, or `None` (printed) when the
/// machine has a single core: nothing can go beside a binding there.
fn two_cores() -> Option<(u32, place::Machine)> {
    let m = place::machine_model().expect("hwloc topology");
    if m.cores.len() < 2 {
        println!("skipped: one core, no PU beside a binding");
        return None;
    }
    Some((m.allowed[0], m))
}

/// [`two_cores`] and where the auto rule puts the progress thread of a
/// process bound to the first allowed CPU.
fn beside_one_bound_core() -> Option<(u32, place::Machine, Vec<u32>)> {
    let (cpu0, m) = two_cores()?;
    let plan = place::decide(&m, Role::Client, &Placement::Auto, &[cpu0], &Ok(vec![])).unwrap();
    let want = plan
        .target
        .clone()
        .expect("a free core beside one bound core");
    Some((cpu0, m, want))
}

#[test]
fn client_auto_pins_its_progress_thread_beside_the_process_binding() {
    let Some((cpu0, m, want)) = beside_one_bound_core() else {
        return;
    };
    let s = server("pc-auto", 1);
    let mut c = spawn_bound(&s, Proc::new("pc-auto", 0).unwrap(), Some(vec![cpu0]), &[]);
    let th = progress_thread(&c);
    println!("bound to {cpu0}: {th:?}");
    assert_eq!(th.allowed, list(&want), "progress thread placed elsewhere");
    // Never on a compute core: not the process's CPU, nor its core.
    let core0 = m.cores.iter().find(|c| c.contains(&cpu0)).unwrap();
    assert!(
        want.iter().all(|c| !core0.contains(c)),
        "{want:?} on core {core0:?}"
    );
    // The process's own binding is untouched.
    assert_eq!(allowed_of(c.pid(), None), cpu0.to_string());
    let line = placement_line(&mut c);
    assert!(
        line.contains(", spins") && line.contains("auto: CPU"),
        "{line}"
    );
    c.finalize();
}

/// The client places its progress thread from the node description the
/// server hands it through `setup_fork` (`FASTPMIX_MACHINE`) and never
/// loads the topology itself (2 ms of CPU in every rank's `PMIx_Init`);
/// the placement is the one hwloc gives (the test above). A description
/// that does not hold this process's binding (inherited from a server
/// elsewhere) is ignored: the client loads the topology.
#[test]
fn a_client_places_its_thread_from_the_servers_description_of_the_node() {
    let Some((cpu0, m, want)) = beside_one_bound_core() else {
        return;
    };
    let s = server("pc-shared", 2);
    let env = s.setup_fork(&Proc::new("pc-shared", 0).unwrap()).unwrap();
    assert!(
        env.iter().any(
            |(k, v)| k == "FASTPMIX_MACHINE" && place::Machine::from_text(v) == Some(m.clone())
        ),
        "setup_fork gives the node's description: {env:?}"
    );
    let mut c = spawn_bound(
        &s,
        Proc::new("pc-shared", 0).unwrap(),
        Some(vec![cpu0]),
        &[],
    );
    assert_eq!(progress_thread(&c).allowed, list(&want));
    let line = placement_line(&mut c);
    assert!(
        line.contains("the node as the server described it"),
        "{line}"
    );
    c.send("TOPOLOGY");
    assert_eq!(c.expect("TOPOLOGY "), "TOPOLOGY not-loaded");
    c.finalize();
    // A description of another node: hwloc decides, the same placement.
    let stale = [("FASTPMIX_MACHINE", "c:4096|d:4096|a:4096")];
    let mut c = spawn_bound(
        &s,
        Proc::new("pc-shared", 1).unwrap(),
        Some(vec![cpu0]),
        &stale,
    );
    assert_eq!(progress_thread(&c).allowed, list(&want));
    let line = placement_line(&mut c);
    assert!(
        !line.contains("the node as the server described it"),
        "{line}"
    );
    c.send("TOPOLOGY");
    assert_eq!(c.expect("TOPOLOGY "), "TOPOLOGY loaded");
    c.finalize();
}

/// Ranks bound to every core, as the host registered them
/// (`PMIX_LOCAL_CPUSETS` in the namespace's job information): the core
/// beside this rank's binding runs a peer's compute thread, so the
/// progress thread is left unpinned and does not spin. The same rank
/// without the peers' bindings is pinned there (the test above).
#[test]
fn a_peers_compute_core_is_not_beside_the_binding() {
    let Some((cpu0, m)) = two_cores() else { return };
    let cpusets: Vec<String> = m.cores.iter().map(|c| list(c)).collect();
    let s = Server::builder().start().expect("server");
    let ns = fastpmix::Nspace::new("pc-peers").unwrap();
    s.register_nspace(&ns, vec![Info::new(PMIX_LOCAL_CPUSETS, cpusets.join(":"))])
        .unwrap();
    let (uid, gid) = procs::ids();
    let me = Proc::new("pc-peers", 0).unwrap();
    s.register_client(&me, uid, gid).unwrap();
    let mut c = spawn_bound(&s, me, Some(vec![cpu0]), &[]);
    let th = progress_thread(&c);
    assert_eq!(
        th.allowed,
        cpu0.to_string(),
        "pinned onto a peer's core: {th:?}"
    );
    let line = placement_line(&mut c);
    assert!(
        line.contains("not pinned")
            && line.contains("does not spin")
            && line.contains("beside the local peers' bindings"),
        "{line}"
    );
    c.finalize();
}

#[test]
fn an_unbound_client_leaves_its_progress_thread_unpinned_and_never_spins() {
    let s = server("pc-free", 1);
    let mut c = spawn_bound(&s, Proc::new("pc-free", 0).unwrap(), None, &[]);
    let th = progress_thread(&c);
    // Unbound: the process covers every core, so none is free of compute.
    assert_eq!(th.allowed, allowed_of(c.pid(), None), "{th:?}");
    let line = placement_line(&mut c);
    assert!(
        line.contains("not pinned") && line.contains("does not spin"),
        "{line}"
    );
    c.finalize();
}

#[test]
fn openmp_places_keep_the_progress_thread_off_their_cores() {
    let Some((cpu0, m)) = two_cores() else { return };
    // Places over every other allowed CPU: no core is left for the thread.
    let others: Vec<u32> = m.allowed.iter().copied().filter(|&c| c != cpu0).collect();
    let places = format!(
        "{{{}}}",
        others
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    let s = server("pc-omp", 2);
    let mut c = spawn_bound(
        &s,
        Proc::new("pc-omp", 0).unwrap(),
        Some(vec![cpu0]),
        &[("OMP_PLACES", &places)],
    );
    let th = progress_thread(&c);
    assert_eq!(
        th.allowed,
        cpu0.to_string(),
        "pinned onto an OpenMP place: {th:?}"
    );
    let line = placement_line(&mut c);
    assert!(line.contains("not pinned"), "{line}");
    c.finalize();
    // Abstract places add nothing to the binding: pinned as without them.
    let want = place::decide(&m, Role::Client, &Placement::Auto, &[cpu0], &Ok(vec![]))
        .unwrap()
        .target
        .unwrap();
    let mut c = spawn_bound(
        &s,
        Proc::new("pc-omp", 1).unwrap(),
        Some(vec![cpu0]),
        &[("OMP_PLACES", "cores")],
    );
    assert_eq!(progress_thread(&c).allowed, list(&want));
    c.finalize();
}

#[test]
fn the_environment_variable_overrides_the_placement() {
    let m = place::machine_model().expect("hwloc topology");
    let last = *m.allowed.last().unwrap();
    let s = server("pc-env", 3);
    let spec = format!("cpu:{last}");
    let mut c = spawn_bound(
        &s,
        Proc::new("pc-env", 0).unwrap(),
        None,
        &[(fastpmix::client::BIND_PROGRESS_ENV, &spec)],
    );
    assert_eq!(progress_thread(&c).allowed, last.to_string());
    let line = placement_line(&mut c);
    // Unbound: the requested CPU is a compute core, so it does not spin.
    assert!(
        line.contains("(requested)") && line.contains("does not spin"),
        "{line}"
    );
    c.finalize();
    let mut c = spawn_bound(
        &s,
        Proc::new("pc-env", 1).unwrap(),
        Some(vec![m.allowed[0]]),
        &[(fastpmix::client::BIND_PROGRESS_ENV, "none")],
    );
    assert_eq!(progress_thread(&c).allowed, m.allowed[0].to_string());
    assert!(placement_line(&mut c).starts_with("none:"));
    c.finalize();
}

#[test]
fn a_malformed_placement_fails_init_with_bad_param() {
    let s = server("pc-bad", 1);
    let mut env = s.setup_fork(&Proc::new("pc-bad", 0).unwrap()).unwrap();
    env.push((
        fastpmix::client::BIND_PROGRESS_ENV.into(),
        "cpu:banana".into(),
    ));
    let out = Command::new(std::env::current_exe().unwrap())
        .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "client")
        .envs(env)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(&format!("INITFAILED {}", Status::ERR_BAD_PARAM.0)),
        "{stdout}"
    );
    assert!(
        stderr.contains("FASTPMIX_BIND_PROGRESS") && stderr.contains("cpu:banana"),
        "{stderr}"
    );
}

#[test]
fn inspect_shows_where_every_progress_thread_runs() {
    let s = server("pc-insp", 1);
    let mut c = spawn_bound(&s, Proc::new("pc-insp", 0).unwrap(), None, &[]);
    c.sync();
    let text = inspect(&s);
    println!("{text}");
    let th = progress_thread(&c);
    // The server's two progress threads (this process) and the client's.
    for name in ["thread fastpmix-srv (", "thread fastpmix-srv-ev ("] {
        assert!(text.contains(name), "{name} missing");
    }
    let line = format!(
        "thread fastpmix-events (tid {}): CPUs {},",
        th.tid, th.allowed
    );
    assert!(text.contains(&line), "{line} missing");
    assert!(text.contains("progress thread: auto"), "the server's plan");
    // The client process's own binding, as a launcher set it.
    let line = format!("process: CPUs {}\n", allowed_of(c.pid(), None));
    assert!(text.contains(&line), "{line} missing");
    c.finalize();
    // Bound to one CPU: that CPU.
    if let Some((cpu0, _)) = two_cores() {
        let mut c = spawn_bound(&s, Proc::new("pc-insp", 0).unwrap(), Some(vec![cpu0]), &[]);
        c.sync();
        let text = inspect(&s);
        let line = format!("process: CPUs {cpu0}\n");
        assert!(text.contains(&line), "{line} missing: {text}");
        c.finalize();
    }
}

/// CPU time (ticks) thread `tid` of this process has used.
fn cpu_ticks(tid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 (the 12th and 13th after the name).
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// Runs one event through an engine whose progress thread would spin 30 s
/// when idle, unless its start hook says it has no core of its own; returns
/// the CPU ticks the idle thread used in the second that follows.
fn idle_ticks(owns_core: bool) -> u64 {
    let me = Proc::new("pc-spin", 0).unwrap();
    let engine = Engine::builder(me)
        .spin(Duration::from_secs(30))
        .on_start(move || owns_core)
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    engine
        .register(Registration::new(
            &[Status(-4242)],
            move |inv: fastpmix::event::Invocation| {
                // SAFETY: gettid has no preconditions.
                let _ = tx.send(unsafe { libc::gettid() });
                inv.complete(Status::SUCCESS, vec![]);
            },
        ))
        .unwrap();
    engine
        .notify(Notification::new(Status(-4242), me, DataRange::PROC_LOCAL))
        .unwrap();
    let tid = rx.recv_timeout(procs::HANG).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let before = cpu_ticks(tid);
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let mut used = cpu_ticks(tid) - before;
    // A spinner on a crowded machine (other processes on both cores) may
    // get little of that second: give it up to 5 s to show it spins.
    while owns_core && used < 5 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
        used = cpu_ticks(tid) - before;
    }
    println!(
        "owns_core={owns_core}: {used} ticks idle in {:?}",
        t.elapsed()
    );
    engine.shutdown();
    used
}

#[test]
fn spin_follows_placement_a_thread_without_its_own_core_sleeps_at_once() {
    // The check can fail: the same engine owning its core burns the second.
    let spinning = idle_ticks(true);
    let sleeping = idle_ticks(false);
    // 100 ticks per second of CPU: a spinner gets a share even of a loaded
    // machine (16+ seen with both cores busy); a sleeper, at most a tick of
    // accounting noise.
    assert!(
        sleeping <= 2,
        "spun without a core of its own: {sleeping} ticks"
    );
    assert!(
        spinning >= 5,
        "control: the spinning engine used {spinning} ticks"
    );
}

fn host_server(info: Vec<Info>) -> Result<Server, Status> {
    server_with("pc-host", 1, info)
}

#[test]
fn the_host_places_the_server_thread_with_pmix_bind_progress_thread() {
    let m = place::machine_model().expect("hwloc topology");
    let first = m.allowed[0];
    let s = host_server(vec![Info::new(
        PMIX_BIND_PROGRESS_THREAD,
        first.to_string(),
    )])
    .unwrap();
    let text = inspect(&s);
    let want = format!("progress thread: cpu:{first} (requested), spins; bound to CPUs [{first}]");
    assert!(text.contains(&want), "{want} missing from\n{text}");
}

#[test]
fn a_bad_or_impossible_server_binding_is_refused_only_when_required() {
    let bad = host_server(vec![Info::new(PMIX_BIND_PROGRESS_THREAD, "3-1")]);
    assert_eq!(bad.err(), Some(Status::ERR_BAD_PARAM));
    let nowhere = || Info::new(PMIX_BIND_PROGRESS_THREAD, "99999");
    let required = host_server(vec![nowhere(), Info::new(PMIX_BIND_REQUIRED, true)]);
    assert_eq!(required.err(), Some(Status::ERR_NOT_AVAILABLE));
    // Not required: the server runs, unpinned, and says why.
    let s = host_server(vec![nowhere()]).unwrap();
    let text = inspect(&s);
    assert!(
        text.contains("not pinned (cannot pin to CPU 99999"),
        "{text}"
    );
}
