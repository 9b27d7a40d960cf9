//! Faults: clients and the server dying under each other. The
//! test process embeds the server (with a recording host) unless the server
//! itself must die: then it runs in a child (`child_server`, tests/procs).
//! Clients are this test binary re-executed (`child_client`).
//!
//! Delays from a kill to the handler that hears about it are measured and
//! printed (`--nocapture` shows them), never asserted: waits only have the
//! generous [`HANG`] deadline that turns a hang into a failure.

mod common;
mod procs;

use common::host::RecordingHost;
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::internals::wire::control::{self, ArchivedReply, Request, PROTOCOL_VERSION};
use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{DataRange, Proc, Status};
use procs::{ClientProc, ServerProc, HANG, ROLE_ENV};
use shm_layout::Geometry;
use std::os::unix::net::UnixStream;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

const CHILD: &str = "child_client";
const SERVER_CHILD: &str = "child_server";
const LOST: i32 = Status::ERR_LOST_CONNECTION.0;

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

/// One `PMIX_ERR_LOST_CONNECTION` as the server's own handler saw it.
#[derive(Debug)]
struct LostSeen {
    at: Instant,
    source: Proc,
    affected: Vec<Proc>,
}

struct Node {
    server: Server,
    host: Arc<RecordingHost>,
    clients: Vec<ClientProc>,
    lost: mpsc::Receiver<LostSeen>,
    flushed: mpsc::Receiver<()>,
}

const FLUSH: Status = Status(-9998);

/// A server (geometry `g`) with a handler for LOST_CONNECTION on its own
/// engine, the namespaces of `procs` registered, `procs` registered as
/// clients, and a client process for each of `spawn`.
fn node(g: Geometry, procs: &[Proc], spawn: &[Proc]) -> Node {
    let host = RecordingHost::new();
    let server = Server::builder()
        .host(host.clone())
        .geometry(g)
        .start()
        .unwrap();
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
                let _ = tx.lock().unwrap().send(LostSeen {
                    at,
                    source: *inv.source(),
                    affected,
                });
                inv.complete(Status::SUCCESS, Vec::new());
            },
        ))
        .unwrap();
    let (ftx, flushed) = mpsc::channel();
    let ftx = Mutex::new(ftx);
    server
        .engine()
        .register(Registration::new(&[FLUSH], move |inv: Invocation| {
            let _ = ftx.lock().unwrap().send(());
            inv.complete(Status::SUCCESS, Vec::new());
        }))
        .unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
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
        flushed,
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

    /// Everything the server's progress thread did before this call is
    /// done, and every event it queued to its own engine before has run its
    /// handlers: a refused Hello is answered by the progress thread, then a
    /// PROC_LOCAL event goes through the engine's FIFO.
    fn flush_server(&self) {
        let mut s = UnixStream::connect(self.server.address()).unwrap();
        s.set_read_timeout(Some(HANG)).unwrap();
        control::send(
            &mut s,
            &Request::Hello {
                version: PROTOCOL_VERSION,
                nspace: "no-such-namespace".into(),
                rank: 0,
            },
        )
        .unwrap();
        let body = control::read_body(&mut s).expect("the progress thread answers");
        assert!(matches!(
            control::reply(&body).unwrap(),
            ArchivedReply::Refused { .. }
        ));
        self.server
            .engine()
            .notify(Notification::new(
                FLUSH,
                self.server.me(),
                DataRange::PROC_LOCAL,
            ))
            .unwrap();
        self.flushed
            .recv_timeout(HANG)
            .expect("the server's engine flushes");
    }

    /// `from` notifies `code` LOCAL; `to` must see it with `from` as source.
    fn exchange(&mut self, from: Proc, to: Proc, code: i32) {
        let c = self.client(from);
        c.send(&format!("NOTIFY {code} {}", DataRange::LOCAL.0));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0", "{from} notifies");
        self.client(to)
            .expect(&format!("EVENT code={code} source={from} "));
    }

    fn connected(&self, q: Proc) -> bool {
        self.server
            .namespaces()
            .iter()
            .find(|n| n.nspace == q.nspace)
            .and_then(|n| n.clients.iter().find(|c| c.rank == q.rank).cloned())
            .is_some_and(|c| c.connected)
    }
}

/// A manual Hello from this test process; the server's answer status
/// (`0` for Welcome).
fn manual_hello(server: &Server, q: Proc) -> (UnixStream, i32) {
    let mut s = UnixStream::connect(server.address()).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    control::send(
        &mut s,
        &Request::Hello {
            version: PROTOCOL_VERSION,
            nspace: q.nspace.as_str().into(),
            rank: q.rank.0,
        },
    )
    .unwrap();
    let body = control::read_body(&mut s).expect("an answer to Hello");
    let st = match control::reply(&body).unwrap() {
        ArchivedReply::Welcome { .. } => 0,
        ArchivedReply::Refused { status, .. } => status.to_native(),
        other => panic!("{other:?} in answer to a Hello"),
    };
    (s, st)
}

// ------------------------------------------------------------ killed client

#[test]
fn a_killed_client_raises_lost_connection_to_the_servers_handlers_with_it_as_affected_proc() {
    let (a0, a1) = (p("a", 0), p("a", 1));
    let mut n = node(Geometry::default(), &[a0, a1], &[a0, a1]);
    let t0 = n.kill(a0);
    let seen = n.next_lost();
    eprintln!(
        "killed client: SIGKILL -> server's LOST_CONNECTION handler entry: {:?}",
        seen.at - t0
    );
    assert_eq!(
        seen.affected,
        vec![a0],
        "the lost client is the affected proc"
    );
    assert_eq!(
        seen.source, a0,
        "the lost client is the source too, as OpenPMIx reports it"
    );
    // Grace period (not a measurement): no second report of the same loss
    // (the pidfd and the socket hang-up both fire).
    n.flush_server();
    assert!(
        n.lost.recv_timeout(Duration::from_millis(200)).is_err(),
        "one LOST_CONNECTION per lost client"
    );
}

#[test]
fn a_killed_client_is_reported_to_the_host_as_finalized_with_lost_true() {
    let (a0, a1) = (p("a", 0), p("a", 1));
    let mut n = node(Geometry::default(), &[a0, a1], &[a0, a1]);
    n.kill(a0);
    assert!(n.host.wait_finalized(&a0), "client_finalized(lost = true)");
    n.flush_server();
    assert_eq!(n.host.finalized_of(&a0), vec![true], "reported once");
    assert!(
        n.host.finalized_of(&a1).is_empty(),
        "the other client stays"
    );
    assert!(!n.connected(a0), "its client-table entry is gone");
}

#[test]
fn a_killed_clients_table_entry_is_reclaimed_for_a_new_client() {
    // Two entries per namespace: both taken, so a third client can only
    // connect once the dead one's entry came back.
    let g = Geometry {
        client_capacity: 2,
        ..Geometry::default()
    };
    let (a0, a1, a2, a3) = (p("a", 0), p("a", 1), p("a", 2), p("a", 3));
    let mut n = node(g, &[a0, a1], &[a0, a1]);
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    assert_eq!(
        n.server.register_client(&a3, uid, gid),
        Err(Status::ERR_OUT_OF_RESOURCE),
        "the table is full before the kill: a third client is refused when it is registered, not when it connects"
    );
    n.kill(a0);
    assert!(n.host.wait_finalized(&a0));
    // A client registered after the kill takes the freed entry.
    n.server.register_client(&a2, uid, gid).unwrap();
    n.spawn(a2);
    assert!(n.connected(a2));
    n.exchange(a2, a1, -5101);
    n.exchange(a1, a2, -5102);
    // The one refusal left at connect: the killed client, still
    // registered, comes back while its entry has a new owner.
    let (_s, st) = manual_hello(&n.server, a0);
    assert_eq!(Status(st), Status::ERR_OUT_OF_RESOURCE, "the table is full");
}

#[test]
fn a_killed_client_may_connect_again_under_its_own_rank() {
    let (a0, a1) = (p("a", 0), p("a", 1));
    let mut n = node(Geometry::default(), &[a0, a1], &[a0, a1]);
    n.kill(a0);
    assert!(n.host.wait_finalized(&a0));
    n.spawn(a0);
    n.exchange(a0, a1, -5103);
    n.exchange(a1, a0, -5104);
}

#[test]
fn other_clients_keep_exchanging_events_while_and_after_a_client_is_killed() {
    let (a0, a1, b0) = (p("a", 0), p("a", 1), p("b", 0));
    let mut n = node(Geometry::default(), &[a0, a1, b0], &[a0, a1, b0]);
    // a:1 streams to every local client while a:0 dies.
    n.client(a1)
        .send(&format!("NOTIFY_N 200 -5105 {}", DataRange::LOCAL.0));
    n.kill(a0);
    assert_eq!(n.client(a1).expect("NOTIFIED"), "NOTIFIED 0");
    let b = n.client(b0);
    for i in 0..200 {
        b.expect(&format!("EVENT code=-5105 source=a:1 seq=Uint64({i}) "));
    }
    assert!(n.host.wait_finalized(&a0));
    n.exchange(a1, b0, -5106);
    n.exchange(b0, a1, -5107);
    let evs = n.client(b0).sync();
    assert!(
        !evs.iter().any(|l| l.starts_with("EVENT code=-3001 ")),
        "no events lost: {evs:?}"
    );
}

#[test]
fn events_a_client_queued_right_before_it_was_killed_are_still_routed() {
    let (a0, a1, a3) = (p("a", 0), p("a", 1), p("a", 3));
    let mut n = node(Geometry::default(), &[a0, a1, a3], &[a0, a1]);
    // Hold the server's progress thread in the host's client_connected of
    // a:3, so a:0's records stay in its submission queue while it dies.
    let (stalled_tx, stalled) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    *n.host.stall.lock().unwrap() = Some((a3, stalled_tx, release_rx));
    let mut s = UnixStream::connect(n.server.address()).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    control::send(
        &mut s,
        &Request::Hello {
            version: PROTOCOL_VERSION,
            nspace: "a".into(),
            rank: 3,
        },
    )
    .unwrap();
    stalled
        .recv_timeout(HANG)
        .expect("the progress thread enters client_connected");
    // Default submission queues hold 4 records: all fit without the server.
    let c = n.client(a0);
    c.send(&format!("NOTIFY_N 4 -5108 {}", DataRange::LOCAL.0));
    assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
    n.kill(a0);
    release.send(()).unwrap();
    let body = control::read_body(&mut s).unwrap();
    assert!(matches!(
        control::reply(&body).unwrap(),
        ArchivedReply::Welcome { .. }
    ));
    let peer = n.client(a1);
    for i in 0..4 {
        peer.expect(&format!("EVENT code=-5108 source=a:0 seq=Uint64({i}) "));
    }
    assert_eq!(n.next_lost().affected, vec![a0]);
    n.spawn(a0);
    n.exchange(a1, a0, -5109);
}

// ----------------------------------------------------------- finalize

#[test]
fn a_client_that_finalizes_is_reported_as_not_lost_and_raises_no_lost_connection() {
    let (a0, a1) = (p("a", 0), p("a", 1));
    let mut n = node(Geometry::default(), &[a0, a1], &[a0, a1]);
    n.client(a0).finalize();
    assert!(
        !n.host.wait_finalized(&a0),
        "client_finalized(lost = false)"
    );
    // client_finalized and the LOST_CONNECTION notify happen in one step of
    // the progress thread; after a flush, a LOST would have run.
    n.flush_server();
    assert!(n.lost.try_recv().is_err(), "a finalized client is not lost");
    assert_eq!(n.host.finalized_of(&a0), vec![false], "reported once");
    n.exchange(a1, a1, -5110);
}

// ------------------------------------------------------------ killed server

/// A server child with `procs` registered and a client process for each.
fn remote_node(procs: &[Proc]) -> (ServerProc, Vec<ClientProc>) {
    let server = ServerProc::spawn(SERVER_CHILD, procs);
    let clients = procs
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &server.env_of(q)))
        .collect();
    (server, clients)
}

#[test]
fn when_the_server_is_killed_every_client_runs_its_lost_connection_handlers() {
    let procs = [p("a", 0), p("a", 1), p("b", 0)];
    let (mut server, mut clients) = remote_node(&procs);
    for c in &mut clients {
        c.send(&format!("WATCH {LOST}"));
        let r = c.expect("WATCHING ");
        assert!(!r.contains('-'), "{}: {r}", c.proc);
    }
    // The child starts one server: the first default identity of its pid.
    let server_proc = Proc::new(&format!("fastpmix-server-{}-1", server.pid()), 0).unwrap();
    let t0 = Instant::now();
    server.kill();
    eprintln!("killed server: SIGKILL -> reaped: {:?}", t0.elapsed());
    for c in &mut clients {
        let caught = c.expect(&format!("CAUGHT code={LOST} "));
        eprintln!(
            "killed server: SIGKILL -> {} LOST_CONNECTION handler line read: {:?}",
            c.proc,
            t0.elapsed()
        );
        assert_eq!(
            caught,
            format!(
                "CAUGHT code={LOST} source={} seq=- affected={server_proc}",
                c.proc
            ),
            "the handler registered for the code, with the server as affected proc"
        );
        c.expect(&format!("EVENT code={LOST} "));
    }
}

#[test]
fn after_losing_the_server_notify_and_register_return_an_error_instead_of_hanging() {
    let procs = [p("a", 0), p("a", 1)];
    let (mut server, mut clients) = remote_node(&procs);
    server.kill();
    for c in &mut clients {
        c.expect(&format!("EVENT code={LOST} "));
        for range in [DataRange::LOCAL, DataRange::NAMESPACE] {
            c.send(&format!("NOTIFY -5111 {}", range.0));
            let l = c.expect("NOTIFIED ");
            let st: i32 = l["NOTIFIED ".len()..].parse().unwrap();
            assert_ne!(st, 0, "{}: notify after the loss: {l}", c.proc);
            eprintln!("{}: notify after losing the server: {}", c.proc, Status(st));
        }
        c.send("REGISTER -5112");
        let l = c.expect("REGISTERED ");
        let r: i64 = l["REGISTERED ".len()..].parse().unwrap();
        assert!(r < 0, "{}: register after the loss: {l}", c.proc);
        c.send(&format!("REGISTER {}", Status::EVENT_NODE_DOWN.0));
        let l = c.expect("REGISTERED ");
        let r: i64 = l["REGISTERED ".len()..].parse().unwrap();
        assert!(
            r < 0,
            "{}: environment register after the loss: {l}",
            c.proc
        );
    }
}

#[test]
fn a_notify_streaming_when_the_server_dies_returns_an_error() {
    let procs = [p("a", 0)];
    let (mut server, mut clients) = remote_node(&procs);
    let c = &mut clients[0];
    // RM range: straight to the submission queue (no local handlers), as
    // fast as the server drains it.
    c.send(&format!("NOTIFY_N 1000000000 -5113 {}", DataRange::RM.0));
    // Not a measurement: lets the stream get going before the kill (if it
    // has not, the test still checks the same thing).
    std::thread::sleep(Duration::from_millis(100));
    let t0 = Instant::now();
    server.kill();
    let l = c.expect("NOTIFIED ");
    let st: i32 = l["NOTIFIED ".len()..].parse().unwrap();
    eprintln!(
        "killed server: SIGKILL -> a streaming notify returned {} after {:?}",
        Status(st),
        t0.elapsed()
    );
    assert_ne!(st, 0, "{l}");
    c.expect(&format!("EVENT code={LOST} "));
}

#[test]

fn a_notify_waiting_for_queue_space_when_the_server_dies_fails_like_any_call_after_the_loss() {
    let procs = [p("a", 0)];
    let (mut server, mut clients) = remote_node(&procs);
    let c = &mut clients[0];
    c.send(&format!("NOTIFY_N 1000000000 -5114 {}", DataRange::RM.0));
    // Not a measurement: lets the stream fill the queue before the kill.
    std::thread::sleep(Duration::from_millis(100));
    server.kill();
    c.expect(&format!("EVENT code={LOST} "));
    assert_eq!(
        c.expect("NOTIFIED "),
        format!("NOTIFIED {}", Status::ERR_UNREACH.0),
        "the status every call gets once the server is lost"
    );
}
