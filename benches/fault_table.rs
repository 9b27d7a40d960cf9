//! Fault-detection delays, measured (the tests print them,
//! never assert them):
//!
//! ```sh
//! cargo bench --bench fault_table                             # 20 trials per row
//! FASTPMIX_BENCH_TRIALS=50 cargo bench --bench fault_table    # more
//! ```
//!
//! Rows (each trial uses fresh processes; no time is ever asserted):
//! - SRV-47, killed client: the server runs in this process, with a handler
//!   for `PMIX_ERR_LOST_CONNECTION` on its own engine (as
//!   tests/server_faults.rs does). A client process (this binary
//!   re-executed) connects; the bench reads `CLOCK_MONOTONIC` right before
//!   `kill(2)` with SIGKILL; the handler reads it at entry and only counts
//!   an event whose affected proc is the killed client.
//! - SRV-53, killed server: a server process (this binary re-executed) and
//!   [`CLIENTS`] client processes, each with a handler for
//!   `PMIX_ERR_LOST_CONNECTION` that prints `LOST <CLOCK_MONOTONIC ns>` at
//!   entry. The bench reads the clock right before SIGKILLing the server; a
//!   trial's delay is the LAST client's handler entry (every client's
//!   handlers ran by then).
//!
//! Children are started with `FASTPMIX_FAULT_BENCH_ROLE`; every child is
//! SIGKILLed and reaped on drop, and what a killed server leaves in
//! /dev/shm and its socket directory is removed. Without `--bench`
//! (`cargo test --benches`) a quick pass runs 3 trials per row.

mod common;

use common::machine;
use common::table::{dur, Row};
use fastpmix::client::Client;
use fastpmix::event::{Invocation, Registration};
use fastpmix::server::{Server, SERVER_ADDR_ENV};
use fastpmix::types::attrs;
use fastpmix::{Proc, Status};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// Trials per row unless `FASTPMIX_BENCH_TRIALS` says otherwise.
const DEFAULT_TRIALS: usize = 20;
/// Trials per row of the quick pass (not invoked with `--bench`).
const QUICK_TRIALS: usize = 3;
/// Client processes per trial of the killed-server row.
const CLIENTS: usize = 3;
/// The fault-report deadline (100 ms) for both rows (printed, never asserted).
const TARGET: Duration = Duration::from_millis(100);
/// A wait longer than this means a process is gone or stuck (an error of
/// the run, not a measurement).
const DEADLINE: Duration = Duration::from_secs(20);
/// Pause between a child being ready and the kill, so the server and
/// clients are idle (sleeping) when it comes, as in the tests.
const SETTLE: Duration = Duration::from_millis(20);

const ROLE_ENV: &str = "FASTPMIX_FAULT_BENCH_ROLE";
/// The clients a server child registers (`ns:rank,...`).
const PROCS_ENV: &str = "FASTPMIX_FAULT_BENCH_PROCS";
const NS: &str = "fault-bench";

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the
/// machine, so a stamp taken in one process compares with another's.
fn mono_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // CLOCK_MONOTONIC always exists on Linux.
    // SAFETY: clock_gettime writes one timespec into a live local.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn parse_proc(s: &str) -> Result<Proc, String> {
    let (ns, r) = s.rsplit_once(':').ok_or(format!("bad proc {s:?}"))?;
    let r: u32 = r.parse().map_err(|_| format!("bad rank in {s:?}"))?;
    Proc::new(ns, r).map_err(|e| format!("bad proc {s:?}: {e:?}"))
}

// -------------------------------------------------------------- child roles

/// Runs the role named in the environment, if any, and exits.
fn run_child_if_requested() {
    let Ok(role) = std::env::var(ROLE_ENV) else {
        return;
    };
    let code = match role.as_str() {
        "client" => client_role(),
        "server" => server_role(),
        other => {
            eprintln!("fault_table: unknown role {other:?}");
            2
        }
    };
    std::process::exit(code);
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Joins with `Client::init`, registers a LOST_CONNECTION handler that
/// prints `LOST <mono ns>` first thing, prints `READY`, then waits until
/// its stdin closes (or it is killed).
fn client_role() -> i32 {
    let c = match Client::init() {
        Ok(c) => c,
        Err(s) => {
            eprintln!("fault_table client: init failed: {s}");
            return 1;
        }
    };
    let lost = Registration::new(&[Status::ERR_LOST_CONNECTION], |inv: Invocation| {
        let now = mono_ns();
        say(&format!("LOST {now}"));
        inv.complete(Status::SUCCESS, Vec::new());
    });
    if let Err(s) = c.register(lost) {
        eprintln!("fault_table client: register failed: {s}");
        return 1;
    }
    say("READY");
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
    if !c.is_lost() {
        let _ = c.finalize();
    }
    0
}

/// Starts a `Server`, registers the clients of [`PROCS_ENV`], prints
/// `SEGMENT <name>` per ring, `ENV <ns:rank> K=V` per `setup_fork`
/// variable, then `READY`, and waits until its stdin closes.
fn server_role() -> i32 {
    let server = match Server::builder().start() {
        Ok(s) => s,
        Err(s) => {
            eprintln!("fault_table server: start failed: {s}");
            return 1;
        }
    };
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let list = std::env::var(PROCS_ENV).unwrap_or_default();
    let mut procs = Vec::new();
    for s in list.split(',').filter(|s| !s.is_empty()) {
        match parse_proc(s) {
            Ok(p) => procs.push(p),
            Err(e) => {
                eprintln!("fault_table server: {e}");
                return 1;
            }
        }
    }
    for p in &procs {
        if !server.namespaces().iter().any(|n| n.nspace == p.nspace) {
            if let Err(s) = server.register_nspace(&p.nspace, vec![]) {
                eprintln!("fault_table server: register_nspace: {s}");
                return 1;
            }
        }
        if let Err(s) = server.register_client(p, uid, gid) {
            eprintln!("fault_table server: register_client: {s}");
            return 1;
        }
    }
    for n in server.namespaces() {
        say(&format!("SEGMENT {}", n.segment));
    }
    for p in &procs {
        match server.setup_fork(p) {
            Ok(env) => {
                for (k, v) in env {
                    say(&format!("ENV {p} {k}={v}"));
                }
            }
            Err(s) => {
                eprintln!("fault_table server: setup_fork: {s}");
                return 1;
            }
        }
    }
    say("READY");
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
    server.stop();
    0
}

// ------------------------------------------------------------ child handles

/// A child process of this binary: its stdout lines come through a thread;
/// SIGKILLed and reaped on drop.
struct Kid {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Files a killed server leaves behind (removed on drop).
    leftovers: Vec<String>,
    dirs: Vec<std::path::PathBuf>,
}

impl Kid {
    fn spawn(role: &str, env: &[(String, String)]) -> Result<Kid, String> {
        let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let mut cmd = Command::new(exe);
        cmd.env(ROLE_ENV, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| format!("spawn {role}: {e}"))?;
        let stdin = child.stdin.take();
        let out = child.stdout.take();
        let (tx, lines) = mpsc::channel();
        if let Some(out) = out {
            std::thread::spawn(move || {
                for l in BufReader::new(out).lines() {
                    let Ok(l) = l else { break };
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(Kid {
            child,
            stdin,
            lines,
            leftovers: Vec::new(),
            dirs: Vec::new(),
        })
    }

    /// The next line starting with `prefix` (others are skipped).
    fn expect(&self, prefix: &str) -> Result<String, String> {
        let end = std::time::Instant::now() + DEADLINE;
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return Ok(l),
                Ok(_) => {}
                Err(_) => {
                    return Err(format!(
                        "child {} printed no {prefix:?} line within {DEADLINE:?} (or exited)",
                        self.child.id()
                    ))
                }
            }
        }
    }

    /// SIGKILL; returns CLOCK_MONOTONIC read right before kill(2).
    fn sigkill(&self) -> Result<u64, String> {
        let pid = self.child.id() as libc::pid_t;
        let t0 = mono_ns();
        // Our own child, not yet reaped: the pid cannot have been reused.
        // SAFETY: kill(2) takes no pointer; the pid is our unreaped child.
        let r = unsafe { libc::kill(pid, libc::SIGKILL) };
        if r != 0 {
            return Err(format!("kill({pid}): {}", std::io::Error::last_os_error()));
        }
        Ok(t0)
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        for f in &self.leftovers {
            let _ = std::fs::remove_file(f);
        }
        for d in &self.dirs {
            let _ = std::fs::remove_file(d.join("ctl"));
            let _ = std::fs::remove_dir(d);
        }
    }
}

// ------------------------------------------------------------- measurements

/// SRV-47: SIGKILL of a client → entry of the server's own
/// LOST_CONNECTION handler with that client as affected proc; ns per trial.
fn killed_client(trials: usize) -> Result<Vec<f64>, String> {
    let server = Server::builder()
        .start()
        .map_err(|s| format!("server start: {s}"))?;
    let (tx, seen) = mpsc::channel::<(u64, Vec<Proc>)>();
    let tx = Mutex::new(tx);
    server
        .engine()
        .register(Registration::new(
            &[Status::ERR_LOST_CONNECTION],
            move |inv: Invocation| {
                let at = mono_ns();
                let affected = inv
                    .info()
                    .iter()
                    .find(|i| i.key == attrs::PMIX_EVENT_AFFECTED_PROC)
                    .and_then(|i| i.value.as_procs())
                    .unwrap_or_default();
                if let Ok(tx) = tx.lock() {
                    let _ = tx.send((at, affected));
                }
                inv.complete(Status::SUCCESS, Vec::new());
            },
        ))
        .map_err(|s| format!("register on the server's engine: {s}"))?;
    let ns = fastpmix::Nspace::new(NS).map_err(|e| format!("nspace: {e:?}"))?;
    server
        .register_nspace(&ns, vec![])
        .map_err(|s| format!("register_nspace: {s}"))?;
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut out = Vec::with_capacity(trials);
    let result = (|| {
        for t in 0..trials {
            // A fresh rank per trial: no dependence on the reclaiming of
            // the previous one's table entry.
            let q = Proc::new(NS, t as u32).map_err(|e| format!("proc: {e:?}"))?;
            server
                .register_client(&q, uid, gid)
                .map_err(|s| format!("register_client {q}: {s}"))?;
            let env = server
                .setup_fork(&q)
                .map_err(|s| format!("setup_fork {q}: {s}"))?;
            let kid = Kid::spawn("client", &env)?;
            kid.expect("READY")?;
            std::thread::sleep(SETTLE);
            let t0 = kid.sigkill()?;
            let end = std::time::Instant::now() + DEADLINE;
            loop {
                let left = end.saturating_duration_since(std::time::Instant::now());
                match seen.recv_timeout(left) {
                    Ok((at, affected)) if affected == [q] => {
                        out.push(at.saturating_sub(t0) as f64);
                        break;
                    }
                    Ok(_) => {}
                    Err(_) => {
                        return Err(format!(
                            "the server's LOST_CONNECTION handler never ran for {q} \
                             within {DEADLINE:?}"
                        ))
                    }
                }
            }
            drop(kid);
        }
        Ok(())
    })();
    server.stop();
    result.map(|()| out)
}

/// SRV-53: SIGKILL of the server → entry of the LOST_CONNECTION handler of
/// the last of [`CLIENTS`] clients; ns per trial.
fn killed_server(trials: usize) -> Result<Vec<f64>, String> {
    let procs: Vec<Proc> = (0..CLIENTS as u32)
        .map(|r| Proc::new(NS, r).map_err(|e| format!("proc: {e:?}")))
        .collect::<Result<_, _>>()?;
    let list: Vec<String> = procs.iter().map(|p| p.to_string()).collect();
    let mut out = Vec::with_capacity(trials);
    for _ in 0..trials {
        let mut server = Kid::spawn("server", &[(PROCS_ENV.into(), list.join(","))])?;
        let mut envs: Vec<(Proc, Vec<(String, String)>)> =
            procs.iter().map(|p| (*p, Vec::new())).collect();
        loop {
            let l = server.expect("")?;
            if let Some(name) = l.strip_prefix("SEGMENT ") {
                server.leftovers.push(format!("/dev/shm/{name}"));
            } else if let Some(rest) = l.strip_prefix("ENV ") {
                let (p, kv) = rest.split_once(' ').ok_or("ENV <proc> K=V")?;
                let (k, v) = kv.split_once('=').ok_or("ENV K=V")?;
                let p = parse_proc(p)?;
                if k == SERVER_ADDR_ENV {
                    if let Some(d) = std::path::Path::new(v).parent() {
                        if !server.dirs.iter().any(|x| x == d) {
                            server.dirs.push(d.to_owned());
                        }
                    }
                }
                if let Some((_, e)) = envs.iter_mut().find(|(q, _)| *q == p) {
                    e.push((k.to_owned(), v.to_owned()));
                }
            } else if l == "READY" {
                break;
            }
        }
        let mut clients = Vec::with_capacity(CLIENTS);
        for (_, env) in &envs {
            clients.push(Kid::spawn("client", env)?);
        }
        for c in &clients {
            c.expect("READY")?;
        }
        std::thread::sleep(SETTLE);
        let t0 = server.sigkill()?;
        let mut last = 0u64;
        for c in &clients {
            let l = c.expect("LOST ")?;
            let at: u64 = l["LOST ".len()..]
                .parse()
                .map_err(|_| format!("bad line {l:?}"))?;
            last = last.max(at.saturating_sub(t0));
        }
        out.push(last as f64);
        drop(clients);
        drop(server);
    }
    Ok(out)
}

// --------------------------------------------------------------------- main

fn print_row(label: &str, trials: usize, r: &Result<Vec<f64>, String>) -> bool {
    match r {
        Ok(ns) => {
            let row = Row::new(label, ns.clone(), false);
            let max = row.ns.last().copied().unwrap_or(0.0);
            let target = TARGET.as_nanos() as f64;
            println!(
                "{:<48} {:>6} {:>11} {:>11} {:>11} {:>8}  {}",
                label,
                row.ns.len(),
                dur(row.pct(0.5)),
                dur(row.pct(0.9)),
                dur(max),
                format!("{} ms", TARGET.as_millis()),
                if max <= target { "yes" } else { "NO" }
            );
            true
        }
        Err(e) => {
            println!("{label:<48} {trials:>6}  error: {e}");
            false
        }
    }
}

fn main() {
    run_child_if_requested();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Cargo passes `--bench` under `cargo bench`; `cargo test --benches`
    // does not: then only a quick smoke pass.
    let full = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let trials = std::env::var("FASTPMIX_BENCH_TRIALS")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(if full { DEFAULT_TRIALS } else { QUICK_TRIALS });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{}", machine::process_machine_line(cores, mono_ns));
    if full {
        println!("trials per row: {trials} (env FASTPMIX_BENCH_TRIALS)");
    } else {
        println!("quick pass (not run with --bench): {trials} trials per row");
    }
    println!(
        "delay = CLOCK_MONOTONIC at the handler's entry - CLOCK_MONOTONIC right before kill(2) \
         (SIGKILL); fresh processes per trial, idle {} ms before the kill; target printed, never asserted",
        SETTLE.as_millis()
    );
    println!(
        "{:<48} {:>6} {:>11} {:>11} {:>11} {:>8}  within",
        "measurement", "trials", "p50", "p90", "max", "target"
    );
    let a = killed_client(trials);
    let ok_a = print_row("SRV-47 client killed -> server's LOST handler", trials, &a);
    let b = killed_server(trials);
    let ok_b = print_row(
        &format!("SRV-53 server killed -> last of {CLIENTS} clients' LOST"),
        trials,
        &b,
    );
    // Only a run that could not measure fails; a time never does.
    if !(ok_a && ok_b) {
        std::process::exit(1);
    }
}
