//! How many processes a node holds: each namespace's ring is sized when the
//! namespace is registered, from its `PMIX_LOCAL_SIZE`, and a client the
//! ring cannot hold is refused when it is registered, never when it
//! connects (there, its peers would already be waiting in a fence for it).
//! Real processes: `fastpmix run` jobs of this binary re-executed as
//! clients (`tests/procs`), and a `Server` embedded in the test.
//!
//! `FASTPMIX_STRESS_LONG=1` adds the 1 024-rank job (oversubscribed on a
//! small machine: minutes). No duration is asserted; the hang guard only
//! turns a hang into a failure.

mod procs;

use fastpmix::internals::ring::Segment;
use fastpmix::server::Server;
use fastpmix::types::attrs::PMIX_LOCAL_SIZE;
use fastpmix::{Info, Nspace, Proc, Status, Value};
use procs::{ROLE_ENV, SCRIPT_ENV};
use std::time::Duration;

const CHILD: &str = "child_client";
const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");
/// The event rank 0 sends to the namespace.
const CODE: i32 = -9123;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

fn long() -> bool {
    std::env::var("FASTPMIX_STRESS_LONG").as_deref() == Ok("1")
}

/// `fastpmix run -n <n>`: every rank inits, fences over the job, rank 0
/// notifies a NAMESPACE event that every other rank receives, and all
/// finalize; the job ends with 0.
fn job_starts_fences_exchanges_an_event_and_finalizes(n: u32, hang: Duration) {
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_str().unwrap();
    let ns_range = fastpmix::DataRange::NAMESPACE.0.to_string();
    let script = format!(
        "WATCH {CODE}; FENCE @*; ON 0 NOTIFY {CODE} {ns_range}; EXCEPT 0 AWAIT {CODE} 1; FINALIZE"
    );
    let t0 = std::time::Instant::now();
    let job = procs::run_job(
        BIN,
        &[
            "-n",
            &n.to_string(),
            "--",
            exe,
            CHILD,
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ],
        &[(ROLE_ENV, "client"), (SCRIPT_ENV, &script)],
        hang,
    );
    eprintln!("{n} ranks: the job took {:?}", t0.elapsed());
    let all = || {
        // The whole output of a 1 024-rank job is long: its end says why.
        let s = format!("{}\n{}", job.stdout, job.stderr);
        let cut = s.len().saturating_sub(20_000);
        let cut = (cut..s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(0);
        s[cut..].to_owned()
    };
    let lines: std::collections::HashSet<&str> = job.stdout.lines().collect();
    for r in 0..n {
        for want in ["FENCE_RESULT 0", "FINALIZED 0"] {
            let l = format!("[{r}] {want}");
            assert!(lines.contains(l.as_str()), "no {l:?}\n{}", all());
        }
        let got = if r == 0 {
            "[0] NOTIFIED 0".to_string()
        } else {
            format!("[{r}] AWAITED {CODE} 1")
        };
        assert!(lines.contains(got.as_str()), "no {got:?}\n{}", all());
    }
    assert!(
        !job.stdout.contains("INITFAILED"),
        "a rank could not connect\n{}",
        all()
    );
    assert_eq!(job.code, Some(0), "{}", all());
}

#[test]
fn a_job_of_100_ranks_starts_fences_exchanges_an_event_and_finalizes() {
    // More than the default client table of 64: the launcher's
    // PMIX_LOCAL_SIZE sizes the ring.
    job_starts_fences_exchanges_an_event_and_finalizes(100, Duration::from_secs(600));
}

#[test]
fn a_job_of_1024_ranks_starts_fences_exchanges_an_event_and_finalizes() {
    if !long() {
        eprintln!("skipped: set FASTPMIX_STRESS_LONG=1 to start 1 024 ranks");
        return;
    }
    job_starts_fences_exchanges_an_event_and_finalizes(1024, Duration::from_secs(3600));
}

fn local_size(n: u32) -> Vec<Info> {
    vec![Info::new(PMIX_LOCAL_SIZE, Value::Uint32(n))]
}

/// The client-table size of `ns`'s ring, read from its segment header.
fn ring_clients(server: &Server, ns: &Nspace) -> u32 {
    let st = server
        .namespaces()
        .into_iter()
        .find(|x| x.nspace == *ns)
        .expect("registered");
    let seg = Segment::open_read_only(&st.segment, Duration::from_secs(5)).expect("open the ring");
    seg.region().geometry().client_capacity
}

#[test]
fn register_client_beyond_the_ring_s_client_table_is_refused_at_registration() {
    let server = Server::builder().start().unwrap();
    let (uid, gid) = procs::ids();
    // No PMIX_LOCAL_SIZE: the server's default table of 64.
    let small = Nspace::new("cap-default").unwrap();
    server.register_nspace(&small, vec![]).unwrap();
    assert_eq!(ring_clients(&server, &small), 64);
    let p = |ns: &Nspace, r| Proc::new(ns.as_str(), r).unwrap();
    for r in 0..64 {
        server.register_client(&p(&small, r), uid, gid).unwrap();
    }
    assert_eq!(
        server.register_client(&p(&small, 64), uid, gid),
        Err(Status::ERR_OUT_OF_RESOURCE),
        "a 65th client is refused when it is registered"
    );
    // Registering a rank again takes no new entry.
    server.register_client(&p(&small, 5), uid, gid).unwrap();
    // Deregistering one makes room for another.
    server.deregister_client(&p(&small, 5)).unwrap();
    server.register_client(&p(&small, 64), uid, gid).unwrap();

    // PMIX_LOCAL_SIZE sizes the table.
    let big = Nspace::new("cap-local-size").unwrap();
    server.register_nspace(&big, local_size(300)).unwrap();
    assert_eq!(ring_clients(&server, &big), 300);
    for r in 0..300 {
        server.register_client(&p(&big, r), uid, gid).unwrap();
    }
    assert_eq!(
        server.register_client(&p(&big, 300), uid, gid),
        Err(Status::ERR_OUT_OF_RESOURCE)
    );
    // A small job keeps the default table (room for late additions).
    let few = Nspace::new("cap-few").unwrap();
    server.register_nspace(&few, local_size(4)).unwrap();
    assert_eq!(ring_clients(&server, &few), 64);

    // Beyond what a ring can address, or not a count: refused at
    // register_nspace, and nothing is registered.
    let huge = Nspace::new("cap-huge").unwrap();
    assert_eq!(
        server.register_nspace(&huge, local_size(70_000)),
        Err(Status::ERR_OUT_OF_RESOURCE)
    );
    assert_eq!(
        server.register_nspace(&huge, vec![Info::new(PMIX_LOCAL_SIZE, "many")]),
        Err(Status::ERR_BAD_PARAM)
    );
    assert!(server.namespaces().iter().all(|x| x.nspace != huge));
}

#[test]
fn the_launcher_refuses_a_job_too_large_for_one_node_at_once_saying_which_limit() {
    // 2 000 ranks' job information is more than a Welcome carries: refused
    // before any process starts, with the limit named.
    let job = procs::run_job(BIN, &["-n", "2000", "--", "true"], &[], procs::HANG);
    assert_ne!(job.code, Some(0), "{}", job.stderr);
    assert!(job.stderr.contains("MAX_JOB_INFO"), "{}", job.stderr);
    assert!(
        job.stderr.contains("namespace of 2000 processes"),
        "{}",
        job.stderr
    );
    assert!(job.stdout.is_empty(), "a process started: {}", job.stdout);
}

#[test]
fn the_launcher_raises_its_descriptor_limit_for_a_large_job_or_names_the_hard_limit() {
    let sh = |limits: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{limits} && exec {BIN} run -n 100 -- sleep 1"))
            .output()
            .expect("run sh")
    };
    // A soft limit of 256: 100 processes hold more (two output pipes and
    // a pidfd each in the launcher), and the spawn failed with "Too many
    // open files" before the launcher raised it.
    let out = sh("ulimit -S -n 256");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // A hard limit of 300 cannot be raised: refused before anything
    // starts, naming the limit.
    let out = sh("ulimit -S -n 300 && ulimit -H -n 300");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("RLIMIT_NOFILE") && err.contains("is 300"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{err}");
}
