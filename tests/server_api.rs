//! The server as a library — lifecycle, two servers in one
//! process, namespace and client (de)registration, server attributes, and
//! events the server library generates itself.

mod common;
mod procs;

use common::host::RecordingHost;
use fastpmix::event::Notification;
use fastpmix::server::{Server, CACHE_SIZE};
use fastpmix::{DataRange, Info, Key, Nspace, Proc, Status};
use procs::{ClientProc, ROLE_ENV};
use std::sync::Arc;

const CHILD: &str = "child_client";

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
    }
}

fn ids() -> (u32, u32) {
    // SAFETY: getuid/getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

fn client(s: &Server, ns: &str, rank: u32) -> ClientProc {
    let p = Proc::new(ns, rank).unwrap();
    let (uid, gid) = ids();
    s.register_client(&p, uid, gid).unwrap();
    ClientProc::spawn(CHILD, p, &s.setup_fork(&p).unwrap())
}

#[test]
fn two_servers_in_one_process_are_independent() {
    let s1 = Server::builder().start().unwrap();
    let s2 = Server::builder().start().unwrap();
    assert_ne!(s1.address(), s2.address());
    assert_ne!(s1.me(), s2.me(), "each server has its own identity");
    let ns = Nspace::new("same-name").unwrap();
    s1.register_nspace(&ns, vec![]).unwrap();
    s2.register_nspace(&ns, vec![]).unwrap();
    let mut c1 = client(&s1, "same-name", 0);
    let mut c2 = client(&s2, "same-name", 0);
    s1.notify(Notification::new(
        Status(-6001),
        Proc::new("same-name", 9).unwrap(),
        DataRange::LOCAL,
    ))
    .unwrap();
    c1.expect("EVENT code=-6001 ");
    s2.notify(Notification::new(
        Status(-6002),
        Proc::new("same-name", 9).unwrap(),
        DataRange::LOCAL,
    ))
    .unwrap();
    c2.expect("EVENT code=-6002 ");
    let seen1 = c1.sync();
    assert!(
        seen1.iter().all(|l| !l.contains("code=-6002 ")),
        "{seen1:?}"
    );
    let seen2 = c2.sync();
    assert!(
        seen2.iter().all(|l| !l.contains("code=-6001 ")),
        "{seen2:?}"
    );
    // Stopping one leaves the other serving.
    s1.stop();
    s2.notify(Notification::new(
        Status(-6003),
        Proc::new("same-name", 9).unwrap(),
        DataRange::LOCAL,
    ))
    .unwrap();
    c2.expect("EVENT code=-6003 ");
}

#[test]
fn stop_removes_the_socket_and_later_calls_fail_with_init() {
    let s = Server::builder().start().unwrap();
    let addr = s.address().to_path_buf();
    assert!(addr.exists());
    s.stop();
    assert!(!addr.exists(), "socket removed");
    let ns = Nspace::new("x").unwrap();
    assert_eq!(s.register_nspace(&ns, vec![]), Err(Status::ERR_INIT));
    assert_eq!(
        s.notify(Notification::new(Status(-1), s.me(), DataRange::LOCAL)),
        Err(Status::ERR_INIT)
    );
    s.stop(); // idempotent
}

#[test]
fn namespaces_and_clients_register_and_deregister_with_clear_errors() {
    let s = Server::builder().start().unwrap();
    let ns = Nspace::new("a").unwrap();
    s.register_nspace(&ns, vec![]).unwrap();
    assert_eq!(
        s.register_nspace(&ns, vec![]),
        Err(Status::ERR_BAD_PARAM),
        "twice"
    );
    assert_eq!(
        s.register_nspace(&Nspace::EMPTY, vec![]),
        Err(Status::ERR_BAD_PARAM)
    );
    let (uid, gid) = ids();
    let p = Proc::new("a", 0).unwrap();
    assert_eq!(
        s.register_client(&Proc::new("nope", 0).unwrap(), uid, gid),
        Err(Status::ERR_NOT_FOUND)
    );
    assert_eq!(
        s.register_client(
            &Proc::new("a", fastpmix::Rank::WILDCARD.0).unwrap(),
            uid,
            gid
        ),
        Err(Status::ERR_BAD_PARAM),
        "a client is a real rank"
    );
    // Resource managers call setup_fork before register_client: the
    // environment is the same either way.
    let early = s.setup_fork(&p).expect("setup_fork before register_client");
    s.register_client(&p, uid, gid).unwrap();
    let env = s.setup_fork(&p).unwrap();
    assert_eq!(early, env);
    for key in ["PMIX_NAMESPACE", "PMIX_RANK", "FASTPMIX_SERVER_ADDR"] {
        assert!(env.iter().any(|(k, _)| k == key), "{key} in {env:?}");
    }
    // A connected client that is deregistered is disconnected, not lost.
    let mut c = ClientProc::spawn(CHILD, p, &env);
    c.sync();
    s.deregister_client(&p).unwrap();
    assert_eq!(s.deregister_client(&p), Err(Status::ERR_NOT_FOUND));
    c.expect("EVENT code=-61 "); // the client sees its server connection go
    s.deregister_nspace(&ns).unwrap();
    assert_eq!(s.deregister_nspace(&ns), Err(Status::ERR_NOT_FOUND));
    assert!(s.namespaces().is_empty());
}

#[test]
fn the_cache_size_attribute_bounds_job_event_retention() {
    let bad = Server::builder()
        .attribute(Info::new(CACHE_SIZE, fastpmix::Value::Uint32(0)))
        .start();
    assert_eq!(bad.err(), Some(Status::ERR_BAD_PARAM), "zero is refused");
    let unknown_required = Server::builder()
        .attribute(Info::required(Key::new("fastpmix.no.such").unwrap(), true))
        .start();
    assert_eq!(unknown_required.err(), Some(Status::ERR_NOT_SUPPORTED));
    let s = Server::builder()
        .attribute(Info::new(CACHE_SIZE, fastpmix::Value::Uint32(1)))
        .attribute(Info::new(Key::new("fastpmix.ignored").unwrap(), true))
        .start()
        .unwrap();
    let ns = Nspace::new("a").unwrap();
    s.register_nspace(&ns, vec![]).unwrap();
    let (uid, gid) = ids();
    let p = Proc::new("a", 0).unwrap();
    s.register_client(&p, uid, gid).unwrap();
    for code in [-6101, -6102] {
        s.notify(Notification::new(Status(code), p, DataRange::NAMESPACE))
            .unwrap();
    }
    let mut c = ClientProc::spawn(CHILD, p, &s.setup_fork(&p).unwrap());
    // The default handler was registered at start: it got the hand-off.
    c.expect("EVENT code=-6102 ");
    let lost = c.expect(&format!("EVENT code={} ", fastpmix::client::EVENTS_LOST.0));
    assert!(lost.contains(&format!("source={}", s.me())), "{lost}");
    assert!(
        c.sync().iter().all(|l| !l.contains("code=-6101 ")),
        "evicted"
    );
}

#[test]
fn events_the_server_generates_go_up_to_the_host_as_their_range_says() {
    let host = RecordingHost::new();
    let s = Server::builder().host(host.clone()).start().unwrap();
    let ns = Nspace::new("a").unwrap();
    s.register_nspace(&ns, vec![]).unwrap();
    let mut c = client(&s, "a", 0);
    for (code, range) in [
        (-6201, DataRange::GLOBAL),
        (-6202, DataRange::RM),
        (-6203, DataRange::LOCAL),
    ] {
        s.notify_as_server(Notification::new(Status(code), Proc::SMS, range))
            .unwrap();
    }
    assert_eq!(
        s.notify_as_server(Notification::new(
            Status(-6204),
            Proc::SMS,
            DataRange::PROC_LOCAL
        )),
        Err(Status::ERR_BAD_PARAM),
        "PROC_LOCAL cannot leave the server process through the server"
    );
    let up: Vec<i32> = host.codes();
    assert_eq!(
        up,
        vec![-6201, -6202],
        "GLOBAL and RM go up, LOCAL does not"
    );
    assert!(
        host.events
            .lock()
            .unwrap()
            .iter()
            .all(|e| e.source == s.me()),
        "stamped with the server"
    );
    c.expect("EVENT code=-6201 ");
    c.expect("EVENT code=-6203 ");
    assert!(
        c.sync().iter().all(|l| !l.contains("code=-6202 ")),
        "RM never reaches a client"
    );
}

/// Child: drop to `nobody` and try to map the segment named in the
/// environment; prints `OPENED` or `DENIED <error>`.
#[test]
fn child_open_as_nobody() {
    let Ok(name) = std::env::var("FASTPMIX_TEST_OPEN_SEGMENT") else {
        return;
    };
    let (pu, pg) = procs::peer_ids();
    // SAFETY: plain syscalls; this single-purpose child process drops its
    // privileges before doing anything else.
    let ok = unsafe { libc::setgid(pg) == 0 && libc::setuid(pu) == 0 };
    if !ok {
        println!("\nNOSETUID");
        return;
    }
    match fastpmix::internals::ring::Segment::open(&name, std::time::Duration::from_secs(1)) {
        Ok(_) => println!("\nOPENED"),
        Err(e) => println!("\nDENIED {e}"),
    }
}

#[test]
fn another_uid_cannot_map_a_namespace_ring() {
    if ids().0 != 0 {
        eprintln!("skipped: needs root to create a process of another uid (CI runs as root)");
        return;
    }
    let s = Server::builder().start().unwrap();
    let ns = Nspace::new("private").unwrap();
    s.register_nspace(&ns, vec![]).unwrap();
    // The namespace's clients run as root here; the ring stays owner-only.
    s.register_client(&Proc::new("private", 0).unwrap(), 0, 0)
        .unwrap();
    let seg = s.namespaces()[0].segment.clone();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "child_open_as_nobody",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FASTPMIX_TEST_OPEN_SEGMENT", &seg)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("DENIED"),
        "the second uid mapped {seg}: {text}"
    );
}

#[test]
fn a_client_that_connects_before_its_host_registers_it_waits_for_the_registration() {
    // Hosts may fork and exec before they register the process (the order
    // is theirs: setup_fork, fork, then register_client). Its Hello waits
    // (as long as any connection may wait to be let in) and is answered
    // once the host registers it.
    let s = Arc::new(Server::builder().start().unwrap());
    s.register_nspace(&Nspace::new("late").unwrap(), vec![])
        .unwrap();
    let p = Proc::new("late", 0).unwrap();
    let env = s.setup_fork(&p).unwrap();
    let (uid, gid) = ids();
    let host = {
        let s = s.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            s.register_client(&p, uid, gid).unwrap();
        })
    };
    // READY comes after PMIx_Init returned.
    let mut c = ClientProc::spawn(CHILD, p, &env);
    host.join().unwrap();
    c.sync();
    c.send("FINALIZE");
    c.expect("FINALIZED");
}

#[test]
fn a_hello_for_a_process_never_registered_is_refused_with_not_found_and_the_reason() {
    let s = Server::builder().start().unwrap();
    s.register_nspace(&Nspace::new("known").unwrap(), vec![])
        .unwrap();
    for (ns, rank) in [("known", 3), ("unknown", 0)] {
        let env = s.setup_fork(&Proc::new(ns, rank).unwrap()).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
            .env(ROLE_ENV, "client")
            .envs(env)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stdout.contains(&format!("INITFAILED {}", Status::ERR_NOT_FOUND.0)),
            "{ns}:{rank}: {stdout}\n{stderr}"
        );
        let why = if ns == "known" {
            "known:3 is not a registered client".to_string()
        } else {
            "namespace unknown is not registered".to_string()
        };
        assert!(stderr.contains(&why), "{ns}:{rank}: {stderr}");
    }
}

/// A host that keeps `client_finalized`'s completion until the test
/// releases it.
#[derive(Default)]
struct HoldsFinalized {
    held: std::sync::Mutex<Vec<(Proc, fastpmix::server::Done)>>,
    changed: std::sync::Condvar,
}

impl fastpmix::server::Host for HoldsFinalized {
    fn client_finalized(&self, p: &Proc, lost: bool, done: fastpmix::server::Done) {
        assert!(!lost, "{p} finalized");
        self.held.lock().unwrap().push((*p, done));
        self.changed.notify_all();
    }
}

/// SRV-96: `PMIx_Finalize` returns once the host completed
/// `client_finalized` (a host such as Open MPI's runtime takes a process
/// that exits before it heard of the finalization for an abnormal end);
/// the host hears it once, not again when the connection closes.
#[test]
fn finalize_returns_after_the_host_completed_client_finalized() {
    let host = Arc::new(HoldsFinalized::default());
    let s = Server::builder().host(host.clone()).start().unwrap();
    s.register_nspace(&Nspace::new("fin-host").unwrap(), vec![])
        .unwrap();
    let mut c = client(&s, "fin-host", 0);
    c.sync();
    c.send("FINALIZE");
    let mut held = host.held.lock().unwrap();
    while held.is_empty() {
        held = host.changed.wait_timeout(held, procs::HANG).unwrap().0;
    }
    let (p, done) = held.pop().unwrap();
    drop(held);
    assert_eq!(p, Proc::new("fin-host", 0).unwrap());
    // A grace period for a wrong early reply, never a measurement: the
    // right behaviour prints nothing until the completion below.
    let early = c.events_within(std::time::Duration::from_millis(300));
    assert!(early.is_empty(), "{early:?}");
    assert!(
        !c.seen.iter().any(|l| l.starts_with("FINALIZED")),
        "PMIx_Finalize returned before the host completed: {:?}",
        c.seen
    );
    done.status(Status::SUCCESS);
    assert_eq!(c.expect("FINALIZED "), "FINALIZED 0");
    assert_eq!(c.wait_exit().code(), Some(0));
    // The connection's end (the server shows the client gone) does not
    // tell the host a second time.
    let t0 = std::time::Instant::now();
    while !s.inspect().contains("gone (finalized)") {
        assert!(t0.elapsed() < procs::HANG, "{}", s.inspect());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(host.held.lock().unwrap().is_empty());
}
