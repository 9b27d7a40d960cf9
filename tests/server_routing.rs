//! Event routing between real processes on one node. The test
//! process embeds the server (with a recording host); clients are this test
//! binary re-executed (`tests/procs`).
//!
//! Negative checks ("must not arrive") are ordered, not timed: after the
//! event under test the same source sends a LOCAL sentinel through the same
//! queue, and every client's ring is FIFO, so a client that has seen the
//! sentinel would have seen the event before it.

mod common;
mod procs;

use common::host::RecordingHost;
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::server::Server;
use fastpmix::{DataRange, Nspace, Proc, Rank, Status};
use procs::{ClientProc, ROLE_ENV};
use std::sync::{Arc, Mutex};

const CHILD: &str = "child_client";
const SENTINEL: i32 = -5000;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
    }
}

struct Node {
    server: Server,
    host: Arc<RecordingHost>,
    clients: Vec<ClientProc>,
}

/// A server with namespaces `a` (ranks 0..a) and `b` (ranks 0..b), one
/// client process each.
fn node(a: u32, b: u32) -> Node {
    node_with(a, b, None)
}

/// [`node`], the progress thread sleeping directly on the doorbells of at
/// most `direct` namespaces (registered first, first served).
fn node_with(a: u32, b: u32, direct: Option<usize>) -> Node {
    let host = RecordingHost::new();
    let mut builder = Server::builder().host(host.clone());
    if let Some(d) = direct {
        builder = builder.direct_bells(d);
    }
    let server = builder.start().unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut clients = Vec::new();
    for (ns, n) in [("a", a), ("b", b)] {
        let nspace = Nspace::new(ns).unwrap();
        server.register_nspace(&nspace, vec![]).unwrap();
        for r in 0..n {
            let p = Proc::new(ns, r).unwrap();
            server.register_client(&p, uid, gid).unwrap();
            let env = server.setup_fork(&p).unwrap();
            clients.push(ClientProc::spawn(CHILD, p, &env));
        }
    }
    Node {
        server,
        host,
        clients,
    }
}

impl Node {
    fn client(&mut self, ns: &str, rank: u32) -> &mut ClientProc {
        let p = Proc::new(ns, rank).unwrap();
        self.clients.iter_mut().find(|c| c.proc == p).unwrap()
    }

    /// Client `from` notifies `code` with `range` (and custom targets), then
    /// a LOCAL sentinel; returns, per client, the events it saw up to the
    /// sentinel (the sentinel itself removed).
    fn notify_and_collect(
        &mut self,
        from: (&str, u32),
        code: i32,
        range: DataRange,
        custom: &str,
    ) -> Vec<(Proc, Vec<String>)> {
        let c = self.client(from.0, from.1);
        c.send(&format!("NOTIFY {code} {} {custom}", range.0));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
        c.send(&format!("NOTIFY {SENTINEL} {}", DataRange::LOCAL.0));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
        let mut out = Vec::new();
        for c in &mut self.clients {
            c.expect(&format!("EVENT code={SENTINEL} "));
            let evs: Vec<String> = c
                .take_events()
                .into_iter()
                .filter(|l| !l.contains(&format!("code={SENTINEL} ")))
                .collect();
            out.push((c.proc, evs));
        }
        // The host hears of the events once the server routed them.
        common::wait_routed(&self.server);
        out
    }
}

impl Node {
    fn head(&self, ns: &str) -> u64 {
        self.server
            .namespaces()
            .into_iter()
            .find(|n| n.nspace.as_str() == ns)
            .unwrap()
            .head
    }
}

fn got(out: &[(Proc, Vec<String>)], ns: &str, rank: u32, code: i32) -> usize {
    lines_of(out, ns, rank, code).len()
}

#[test]
fn namespace_range_from_a_client_reaches_its_namespace_only_and_the_host() {
    let mut n = node(2, 1);
    let b_head = n.head("b");
    let out = n.notify_and_collect(("a", 0), -5001, DataRange::NAMESPACE, "");
    assert_eq!(
        n.head("b"),
        b_head + 1,
        "only the sentinel entered b's ring: the server filters"
    );
    assert_eq!(got(&out, "a", 1, -5001), 1, "peer in the namespace");
    assert_eq!(
        got(&out, "b", 0, -5001),
        0,
        "other namespace filtered (OpenPMIx 4.2 does not filter)"
    );
    // The source's own process ran its local chain once; the relay never
    // echoes the event back to it.
    assert_eq!(
        got(&out, "a", 0, -5001),
        1,
        "source: local chain once, no echo"
    );
    let up = n.host.upcalls(-5001);
    assert_eq!(up.len(), 1, "passed up to the host once");
    assert_eq!(
        up[0].source,
        Proc::new("a", 0).unwrap(),
        "with the authenticated source"
    );
}

#[test]
fn local_range_from_a_client_reaches_every_local_client_and_not_the_host() {
    let mut n = node(2, 2);
    let out = n.notify_and_collect(("b", 1), -5002, DataRange::LOCAL, "");
    for (ns, r) in [("a", 0), ("a", 1), ("b", 0), ("b", 1)] {
        assert_eq!(got(&out, ns, r, -5002), 1, "{ns}:{r}");
    }
    assert!(n.host.upcalls(-5002).is_empty(), "LOCAL stays on the node");
}

#[test]
fn custom_range_reaches_exactly_the_listed_procs_and_upcalls_for_remote_ones() {
    let mut n = node(3, 2);
    let out = n.notify_and_collect(("a", 0), -5003, DataRange::CUSTOM, "a:2,b:1");
    assert_eq!(got(&out, "a", 2, -5003), 1);
    assert_eq!(got(&out, "b", 1, -5003), 1);
    assert_eq!(got(&out, "a", 1, -5003), 0, "not listed");
    assert_eq!(got(&out, "b", 0, -5003), 0, "not listed");
    assert!(n.host.upcalls(-5003).is_empty(), "every target is local");
    let a_head = n.head("a");
    let out = n.notify_and_collect(("a", 0), -5004, DataRange::CUSTOM, "b:*,elsewhere:0");
    assert_eq!(
        n.head("a"),
        a_head + 1,
        "only the sentinel entered a's ring: no target there"
    );
    assert_eq!(
        got(&out, "b", 0, -5004),
        1,
        "wildcard rank = whole namespace"
    );
    assert_eq!(
        got(&out, "b", 1, -5004),
        1,
        "wildcard rank = whole namespace"
    );
    assert_eq!(got(&out, "a", 1, -5004), 0);
    assert_eq!(n.host.upcalls(-5004).len(), 1, "a remote target: passed up");
}

#[test]
fn rm_range_from_a_client_goes_to_the_host_only() {
    let mut n = node(2, 0);
    let out = n.notify_and_collect(("a", 0), -5005, DataRange::RM, "");
    assert_eq!(got(&out, "a", 1, -5005), 0);
    assert_eq!(
        got(&out, "a", 0, -5005),
        0,
        "not even the source's own handlers"
    );
    assert_eq!(n.host.upcalls(-5005).len(), 1);
}

#[test]
fn proc_local_from_a_client_never_leaves_the_process() {
    let mut n = node(2, 0);
    let out = n.notify_and_collect(("a", 0), -5006, DataRange::PROC_LOCAL, "");
    assert_eq!(got(&out, "a", 0, -5006), 1, "its own handlers");
    assert_eq!(got(&out, "a", 1, -5006), 0);
    assert!(n.host.upcalls(-5006).is_empty());
}

#[test]
fn session_and_global_ranges_reach_every_local_client_and_the_host() {
    let mut n = node(1, 1);
    for (code, range) in [(-5007, DataRange::SESSION), (-5008, DataRange::GLOBAL)] {
        let out = n.notify_and_collect(("a", 0), code, range, "");
        assert_eq!(got(&out, "b", 0, code), 1, "{range:?}");
        assert_eq!(n.host.upcalls(code).len(), 1, "{range:?}");
    }
}

#[test]
fn an_event_from_the_host_reaches_its_range_and_is_never_echoed_back_to_the_host() {
    let mut n = node(2, 1);
    let src = Proc::new("a", 1).unwrap();
    n.server
        .notify(Notification::new(Status(-5009), src, DataRange::NAMESPACE))
        .unwrap();
    n.server
        .notify(Notification::new(
            Status(SENTINEL),
            n.server.me(),
            DataRange::LOCAL,
        ))
        .unwrap();
    for c in &mut n.clients {
        c.expect(&format!("EVENT code={SENTINEL} "));
    }
    let a0 = n.client("a", 0).take_events();
    let b0 = n.client("b", 0).take_events();
    assert!(
        a0.iter()
            .any(|l| l.starts_with("EVENT code=-5009 source=a:1 ")),
        "{a0:?}"
    );
    assert!(
        !b0.iter().any(|l| l.starts_with("EVENT code=-5009 ")),
        "{b0:?}"
    );
    assert!(
        n.host.upcalls(-5009).is_empty(),
        "never echoed back to the host"
    );
}

/// Std §PMIx_Notify_event: `PMIX_EVENT_PROXY` ("PMIx server that sourced
/// the event") is a required attribute. The server names itself in every
/// event it brings onto the node for another source (a client's relayed
/// event, one from its host), for the clients and for the host, once; an
/// event the host relays from another node's server keeps the proxy it
/// names; the server's own events, whose source is the server, carry none.
#[test]
fn routed_events_name_the_server_as_pmix_event_proxy_unless_the_host_gave_one() {
    use fastpmix::types::attrs;
    use fastpmix::{Info, Value};
    let mut n = node(2, 1);
    let me = n.server.me();
    let out = n.notify_and_collect(("a", 0), -5011, DataRange::NAMESPACE, "");
    let peer = &out
        .iter()
        .find(|(p, _)| *p == Proc::new("a", 1).unwrap())
        .unwrap()
        .1;
    assert!(
        peer.iter()
            .any(|l| l.starts_with("EVENT code=-5011 ") && l.ends_with(&format!(" proxy={me}"))),
        "the relayed event names the server once: {peer:?}"
    );
    let up = n.host.upcalls(-5011);
    assert_eq!(up.len(), 1);
    let proxies: Vec<&Info> = up[0]
        .info
        .iter()
        .filter(|i| i.key == attrs::PMIX_EVENT_PROXY)
        .collect();
    assert_eq!(proxies.len(), 1, "{:?}", up[0].info);
    assert_eq!(
        proxies[0].value.as_procs(),
        Some(vec![me]),
        "to the host too"
    );

    // From the host, relayed from another node's server: that proxy stays.
    let remote = Proc::new("remote-srv", 0).unwrap();
    n.server
        .notify(
            Notification::new(Status(-5012), Proc::new("b", 0).unwrap(), DataRange::LOCAL)
                .info(Info::new(attrs::PMIX_EVENT_PROXY, Value::from(remote))),
        )
        .unwrap();
    // From the host, with none: this server.
    n.server
        .notify(Notification::new(
            Status(-5013),
            Proc::new("b", 0).unwrap(),
            DataRange::LOCAL,
        ))
        .unwrap();
    // The server's own: the source names it.
    n.server
        .notify(Notification::new(Status(-5014), me, DataRange::LOCAL))
        .unwrap();
    n.server
        .notify(Notification::new(Status(SENTINEL), me, DataRange::LOCAL))
        .unwrap();
    let c = n.client("a", 1);
    c.expect(&format!("EVENT code={SENTINEL} "));
    let evs = c.take_events();
    assert!(
        evs.iter()
            .any(|l| l.starts_with("EVENT code=-5012 ") && l.ends_with(&format!(" proxy={remote}"))),
        "the host's proxy is kept, not doubled: {evs:?}"
    );
    assert!(
        evs.iter()
            .any(|l| l.starts_with("EVENT code=-5013 ") && l.ends_with(&format!(" proxy={me}"))),
        "{evs:?}"
    );
    assert!(
        evs.iter()
            .any(|l| l.starts_with("EVENT code=-5014 ") && !l.contains(" proxy=")),
        "{evs:?}"
    );
}

/// OpenPMIx wedges a process whose handler makes a blocking call (its fix,
/// PR #4123, answers `PMIX_ERR_WOULD_BLOCK`). Here the progress thread
/// makes the call itself: round trips go through the control thread and
/// local work is queued, so each call completes and returns its status.
#[test]
fn blocking_calls_made_from_a_handler_complete_instead_of_wedging_the_process() {
    let mut n = node(1, 0);
    let env = Status::EVENT_NODE_DOWN.0;
    let c = n.client("a", 0);
    c.send(&format!("BLOCKING_IN_HANDLER {env}"));
    assert_eq!(c.expect("BLOCKING_STARTED"), "BLOCKING_STARTED 0");
    let mut got = Vec::new();
    loop {
        let l = c.expect("BLOCKING");
        if l == "BLOCKING_DONE" {
            break;
        }
        got.push(l);
    }
    let status = |call: &str| -> i64 {
        let l = got
            .iter()
            .find(|l| l.starts_with(&format!("BLOCKING {call} ")))
            .unwrap_or_else(|| panic!("no {call} in {got:?}"));
        l.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(status("register") >= 1, "a reference: {got:?}");
    for call in [
        "deregister",
        "notify_proc_local",
        "notify_namespace",
        "fence",
    ] {
        assert_eq!(status(call), 0, "{call}: {got:?}");
    }
    // The job information and the log channel: whatever they answer, they
    // answered (this host has no log support and the namespace no size).
    status("get");
    status("log");
    assert_eq!(
        n.host.registered.lock().unwrap().as_slice(),
        &[vec![env]],
        "the registration's round trip reached the host"
    );
    // The PROC_LOCAL event notified from the handler ran its chain after it.
    n.client("a", 0).expect("EVENT code=-9996 ");
}

#[test]
fn environment_event_registrations_reach_the_host_once_per_code_until_the_last_goes() {
    let mut n = node(2, 0);
    let down = Status::EVENT_NODE_DOWN.0;
    let mut refs = Vec::new();
    for r in [0, 1] {
        let c = n.client("a", r);
        c.send(&format!("REGISTER {down}"));
        refs.push(
            c.expect("REGISTERED ")
                .split_whitespace()
                .nth(1)
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(
        *n.host.registered.lock().unwrap(),
        vec![vec![down]],
        "once for two registrations"
    );
    n.client("a", 0).send(&format!("DEREGISTER {}", refs[0]));
    n.client("a", 0).expect("DEREGISTERED 0");
    assert!(
        n.host.deregistered.lock().unwrap().is_empty(),
        "one registration left"
    );
    n.client("a", 1).send(&format!("DEREGISTER {}", refs[1]));
    n.client("a", 1).expect("DEREGISTERED 0");
    assert_eq!(*n.host.deregistered.lock().unwrap(), vec![vec![down]]);
    // A job code is not the host's business.
    n.client("a", 0).send("REGISTER -5010");
    n.client("a", 0).expect("REGISTERED ");
    assert_eq!(n.host.registered.lock().unwrap().len(), 1);
}

/// A registration that takes only its own process's events (PMIX_RANGE
/// PROC_LOCAL) is none of the host's business, even for an environment
/// code; the same code registered otherwise is.
#[test]
fn a_proc_local_registration_for_an_environment_code_is_not_announced_to_the_host() {
    let mut n = node(1, 0);
    let down = Status::EVENT_NODE_DOWN.0;
    let proc_local = DataRange::PROC_LOCAL.0;
    let register = |n: &mut Node, cmd: String| {
        let c = n.client("a", 0);
        c.send(&cmd);
        let l = c.expect("REGISTERED ");
        assert!(!l.contains('-'), "{l}");
    };
    // A registration that is announced answers only after the server (and
    // so the host) heard of it: nothing to wait for below.
    register(&mut n, format!("REGISTER_IN {down} {proc_local}"));
    assert!(n.host.registered.lock().unwrap().is_empty());
    register(&mut n, format!("REGISTER {down}"));
    assert_eq!(*n.host.registered.lock().unwrap(), vec![vec![down]]);
}

/// A `PMIX_EVENT_ONESHOT` registration for an environment code is
/// announced like any other, and once its handler ran, the host hears that
/// the code's last registration went (as after a deregistration).
#[test]
fn a_oneshot_registration_for_an_environment_code_is_withdrawn_from_the_host_once_it_ran() {
    let mut n = node(1, 0);
    let down = Status::EVENT_NODE_DOWN.0;
    let c = n.client("a", 0);
    c.send(&format!("REGISTER_ONESHOT {down}"));
    let l = c.expect("REGISTERED ");
    assert!(!l.contains('-'), "{l}");
    assert_eq!(*n.host.registered.lock().unwrap(), vec![vec![down]]);
    assert!(n.host.deregistered.lock().unwrap().is_empty());
    let me = n.server.me();
    for _ in 0..2 {
        n.server
            .notify_as_server(Notification::new(Status(down), me, DataRange::LOCAL))
            .unwrap();
    }
    n.client("a", 0).expect(&format!("ONESHOT_RAN {down}"));
    let deadline = std::time::Instant::now() + procs::HANG;
    while n.host.deregistered.lock().unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the host never heard");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(*n.host.deregistered.lock().unwrap(), vec![vec![down]]);
    // Once: the default handler (every scripted client has one) saw both
    // events, the one-shot handler only the first.
    let c = n.client("a", 0);
    for _ in 0..2 {
        c.expect(&format!("EVENT code={down} "));
    }
    assert!(
        !c.seen.iter().any(|l| l.starts_with("ONESHOT_RAN")),
        "ran twice: {:?}",
        c.seen
    );
}

#[test]
fn events_from_one_client_reach_a_peer_in_order() {
    let mut n = node(2, 0);
    let c = n.client("a", 0);
    c.send("NOTIFY_N 200 -5011 3");
    assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
    let peer = n.client("a", 1);
    let mut seqs = Vec::new();
    while seqs.len() < 200 {
        let l = peer.expect("EVENT code=-5011 ");
        seqs.push(
            l.split("seq=Uint64(")
                .nth(1)
                .unwrap()
                .split(')')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap(),
        );
    }
    assert_eq!(seqs, (0..200).collect::<Vec<_>>());
}

/// The progress thread sleeps on the first namespaces' doorbells in one
/// `futex_waitv` and watches the others' through io_uring: client events
/// of both kinds of namespace, and of a node where every doorbell is an
/// io_uring watch, reach their peers.
#[test]
fn client_events_are_relayed_whether_the_doorbell_is_slept_on_or_watched() {
    for direct in [0, 1] {
        let mut n = node_with(2, 2, Some(direct));
        for ns in ["a", "b", "a", "b"] {
            let out = n.notify_and_collect((ns, 0), -5021, DataRange::NAMESPACE, "");
            assert_eq!(got(&out, ns, 1, -5021), 1, "direct={direct} {ns}: {out:?}");
            let other = if ns == "a" { "b" } else { "a" };
            assert_eq!(
                got(&out, other, 1, -5021),
                0,
                "direct={direct} {ns}: {out:?}"
            );
        }
    }
}

/// Slurm registers a default handler in its server process that never
/// completes. The server's own handlers run on its engine's thread, apart
/// from the relay: while that handler is stuck in its first call (on an
/// event the host passed down: a client's events never reach it), 200
/// LOCAL events from one client all reach the peer, in order, and none of
/// them reaches the stuck handler.
#[test]
fn a_server_handler_that_never_completes_does_not_hold_up_client_events() {
    let mut n = node(2, 0);
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let held = Arc::new(Mutex::new(Vec::new()));
    let h = held.clone();
    n.server
        .engine()
        .register(Registration::new(&[], move |inv: Invocation| {
            // Kept, never completed (dropping it would complete it).
            h.lock().unwrap().push(inv);
            // Blocks until the test ends (`release` dropped).
            let _ = gate.lock().unwrap().recv();
        }))
        .unwrap();
    // The host's own LOCAL event runs the server's handlers (and reaches
    // the clients too).
    let me = n.server.me();
    n.server
        .notify(Notification::new(Status(-5017), me, DataRange::LOCAL))
        .unwrap();
    // The handler was called (on its own thread, in its own time), and
    // stays in that first call.
    let deadline = std::time::Instant::now() + procs::HANG;
    while held.lock().unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "never called");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let c = n.client("a", 0);
    c.send(&format!("NOTIFY_N 200 -5016 {}", DataRange::LOCAL.0));
    assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
    let peer = n.client("a", 1);
    for want in 0..200u64 {
        let l = peer.expect("EVENT code=-5016 ");
        assert!(l.contains(&format!("seq=Uint64({want})")), "{l}");
    }
    assert_eq!(held.lock().unwrap().len(), 1);
    drop(release);
}

#[test]
fn four_clients_notifying_concurrently_keep_per_source_order_and_lose_nothing() {
    // 4 x 120 events stay below the ring's 512 slots: any gap would be a
    // loss, not lag.
    const N: u64 = 120;
    let mut n = node(4, 0);
    for c in &mut n.clients {
        c.send(&format!("NOTIFY_N {N} -5013 {}", DataRange::LOCAL.0));
    }
    for c in &mut n.clients {
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
    }
    for c in &mut n.clients {
        let mut per_source: std::collections::HashMap<String, Vec<u64>> = Default::default();
        while per_source.values().map(Vec::len).sum::<usize>() < (4 * N) as usize {
            let l = c.expect("EVENT code=-5013 ");
            let src = l
                .split("source=")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_string();
            let seq = l
                .split("seq=Uint64(")
                .nth(1)
                .unwrap()
                .split(')')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap();
            per_source.entry(src).or_default().push(seq);
        }
        assert_eq!(
            per_source.len(),
            4,
            "{}: every source (its own through its local chain)",
            c.proc
        );
        for (src, seqs) in &per_source {
            assert_eq!(
                *seqs,
                (0..N).collect::<Vec<_>>(),
                "{} from {src}: in order, none lost, none twice",
                c.proc
            );
        }
    }
}

#[test]
fn client_init_twice_returns_the_same_client() {
    let mut n = node(1, 0);
    let c = n.client("a", 0);
    c.send("INIT_AGAIN");
    assert_eq!(c.expect("INIT_AGAIN"), "INIT_AGAIN same");
}

/// The state of a namespace's ring, read through a read-only mapping.
fn ring_state(n: &Node, ns: &str) -> fastpmix::internals::ring::RingState {
    let name = n
        .server
        .namespaces()
        .into_iter()
        .find(|x| x.nspace.as_str() == ns)
        .unwrap()
        .segment;
    fastpmix::internals::ring::Segment::open_read_only(&name, std::time::Duration::from_secs(5))
        .expect("open the namespace segment")
        .region()
        .state()
}

/// Each client's entry in its namespace ring: (waiting, wake word), by pid.
fn ring_sleep_state(n: &Node, ns: &str) -> Vec<(u32, bool, u32)> {
    ring_state(n, ns)
        .clients
        .iter()
        .map(|c| (c.pid, c.waiting, c.wake))
        .collect()
}

/// Waits until the progress threads of clients `p0` and `p1` (pids) of
/// namespace `a` are both asleep; returns their wake words then.
fn both_asleep(n: &Node, p0: u32, p1: u32) -> (u32, u32) {
    let t0 = std::time::Instant::now();
    loop {
        let st = ring_sleep_state(n, "a");
        let (s0, s1) = (sleep_state_of(&st, p0), sleep_state_of(&st, p1));
        if s0.0 && s1.0 {
            return (s0.1, s1.1);
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(10),
            "both clients' progress threads fall asleep"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

fn sleep_state_of(st: &[(u32, bool, u32)], pid: u32) -> (bool, u32) {
    st.iter()
        .find(|c| c.0 == pid)
        .map(|c| (c.1, c.2))
        .expect("the client has a table entry")
}

/// Targeted wake (docs/shm-format.md, "Sleep and wake"): the ring's writer
/// wakes the clients an event is for, not every sleeper of the namespace.
/// A client's event to its peer does not wake the sender through the ring
/// (its wake word untouched, no wake-all on the doorbell): it would only
/// have skipped its own record. The sender's progress thread does wake, for
/// its own handler (a NAMESPACE event reaches the sender's process too),
/// through its process-local queue, so whether it is asleep again when the
/// peer has the event is a race the test does not judge.
#[test]
fn a_client_event_wakes_the_peer_it_is_for_and_not_the_sleeping_sender() {
    let mut n = node(2, 0);
    let (p0, p1) = (n.client("a", 0).pid(), n.client("a", 1).pid());
    let before = both_asleep(&n, p0, p1);
    let doorbell = ring_state(&n, "a").doorbell;
    let c = n.client("a", 0);
    c.send(&format!("NOTIFY -5020 {}", DataRange::NAMESPACE.0));
    assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
    c.expect("EVENT code=-5020 ");
    n.client("a", 1).expect("EVENT code=-5020 ");
    let st = ring_sleep_state(&n, "a");
    assert!(
        sleep_state_of(&st, p1).1 > before.1,
        "the peer was woken through its own wake word"
    );
    assert_eq!(
        sleep_state_of(&st, p0).1,
        before.0,
        "the sender's wake word was never rung for its own record"
    );
    assert_eq!(
        ring_state(&n, "a").doorbell,
        doorbell,
        "no wake-all: the doorbell every sleeper waits on was not rung"
    );
}

/// Passing over records for others (docs/shm-format.md): clients left out
/// of many custom-range events sleep through them and are told of no loss
/// when the writer laps them. 1 200 events for rank 1 alone go through a
/// ring of 512 (batches of 100, each read by rank 1 before the next) while
/// ranks 0 and 2 sleep: their wake words stay as they were (before layout
/// 9 the writer woke each about every 256 records to skip them), nobody's
/// `lost` grows, rank 1 gets all 1 200, and the LOCAL sentinel then
/// reaches ranks 0 and 2 with nothing before it (no `EVENTS_LOST`).
#[test]
fn clients_left_out_of_many_custom_events_sleep_through_them_and_lose_nothing() {
    let mut n = node(3, 0);
    let pids: Vec<u32> = (0..3).map(|r| n.client("a", r).pid()).collect();
    let before = both_asleep(&n, pids[0], pids[2]);
    let (total, batch) = (1_200, 100);
    let me = n.server.me();
    for _ in 0..total / batch {
        for _ in 0..batch {
            n.server
                .notify(
                    Notification::new(Status(-5050), me, DataRange::CUSTOM)
                        .info(custom_range(&[pr("a", 1)])),
                )
                .unwrap();
        }
        let c1 = n.client("a", 1);
        for _ in 0..batch {
            c1.expect("EVENT code=-5050 ");
        }
    }
    let st = ring_sleep_state(&n, "a");
    for (pid, word, who) in [(pids[0], before.0, "rank 0"), (pids[2], before.1, "rank 2")] {
        assert_eq!(sleep_state_of(&st, pid).1, word, "{who} was woken");
    }
    let out = n.host_sentinel_and_collect();
    for (p, evs) in &out {
        if p.rank.0 == 1 {
            let lost = fastpmix::types::EVENTS_LOST.0;
            assert_eq!(lines_of(&out, "a", 1, lost).len(), 0, "{out:?}");
        } else {
            assert!(evs.is_empty(), "{p} saw more than the sentinel: {evs:?}");
        }
    }
    let lost: Vec<u64> = ring_state(&n, "a").clients.iter().map(|c| c.lost).collect();
    assert!(lost.iter().all(|&l| l == 0), "lost per entry: {lost:?}");
}

/// A client's custom-range event wakes its target from the sender's lane,
/// time after time: the first looks at every entry of the client table and
/// learns where the target is, the next go straight to that entry
/// (`lane::PeerIndex`). Three events from rank 0 to rank 1, each while
/// ranks 1 and 2 sleep: rank 1 gets each (woken by rank 0: the ring copy
/// wakes nobody), and rank 2, not named, is never woken.
#[test]
fn a_client_custom_event_wakes_its_target_each_time_and_no_other_client() {
    let mut n = node(3, 0);
    let (p1, p2) = (n.client("a", 1).pid(), n.client("a", 2).pid());
    let (_, first) = both_asleep(&n, p1, p2);
    for _ in 0..3 {
        let (woken, _) = both_asleep(&n, p1, p2);
        let c = n.client("a", 0);
        c.send(&format!("NOTIFY -5051 {} a:1", DataRange::CUSTOM.0));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
        n.client("a", 1).expect("EVENT code=-5051 ");
        let st = ring_sleep_state(&n, "a");
        assert!(sleep_state_of(&st, p1).1 > woken, "rank 1 woken");
    }
    let st = ring_sleep_state(&n, "a");
    assert_eq!(sleep_state_of(&st, p2).1, first, "rank 2 was woken");
}

/// Interest-filtered wake (docs/shm-format.md, "Sleep and wake"): a
/// sleeping client with no handler for an event's code is not woken for
/// it (its wake word untouched, and no wake-all on the doorbell), while a
/// peer with a handler is. Once it registers for the code, the event that
/// arrived before reaches the new handler exactly once: its registration
/// sends its progress thread to read the ring.
#[test]
fn a_sleeping_client_without_a_handler_for_the_code_is_not_woken_for_it() {
    let host = RecordingHost::new();
    let server = Server::builder().host(host.clone()).start().unwrap();
    let clients = namespace_a(&server, 2, |r| {
        (r == 1)
            .then(|| (procs::NO_DEFAULT_HANDLER_ENV.to_owned(), "1".to_owned()))
            .into_iter()
            .collect()
    });
    let mut n = Node {
        server,
        host,
        clients,
    };
    let (p0, p1) = (n.client("a", 0).pid(), n.client("a", 1).pid());
    let before = both_asleep(&n, p0, p1);
    let wants: Vec<u64> = ring_state(&n, "a")
        .clients
        .iter()
        .filter(|c| c.pid == p1)
        .map(|c| c.interest)
        .collect();
    assert_eq!(wants, [0], "a client with no handler wants no code");
    let doorbell = ring_state(&n, "a").doorbell;
    let src = n.server.me();
    n.server
        .notify(Notification::new(Status(-5030), src, DataRange::LOCAL))
        .unwrap();
    n.client("a", 0).expect("EVENT code=-5030 ");
    woken_and_asleep(
        &n,
        (p0, before.0, "the client with a handler"),
        (p1, before.1, "the client without a handler"),
        doorbell,
    );
    let c1 = n.client("a", 1);
    c1.send("WATCH -5030");
    c1.expect("WATCHING ");
    c1.expect("CAUGHT code=-5030 ");
    c1.send("PING");
    c1.expect("PONG");
    assert!(
        !c1.seen.iter().any(|l| l.starts_with("CAUGHT ")),
        "once: {:?}",
        c1.seen
    );
}

impl Node {
    /// The host sends a LOCAL sentinel (`Server::notify`, source: the
    /// server). Events published before it from the same thread are ahead
    /// of it in every ring; returns, per client, the events it saw up to the
    /// sentinel (the sentinel itself removed).
    fn host_sentinel_and_collect(&mut self) -> Vec<(Proc, Vec<String>)> {
        self.server
            .notify(Notification::new(
                Status(SENTINEL),
                self.server.me(),
                DataRange::LOCAL,
            ))
            .unwrap();
        let mut out = Vec::new();
        for c in &mut self.clients {
            c.expect(&format!("EVENT code={SENTINEL} "));
            let evs: Vec<String> = c
                .take_events()
                .into_iter()
                .filter(|l| !l.contains(&format!("code={SENTINEL} ")))
                .collect();
            out.push((c.proc, evs));
        }
        // The host hears of the events once the server routed them.
        common::wait_routed(&self.server);
        out
    }
}

/// The events of `code` one client saw.
fn lines_of<'a>(out: &'a [(Proc, Vec<String>)], ns: &str, rank: u32, code: i32) -> Vec<&'a str> {
    let p = Proc::new(ns, rank).unwrap();
    out.iter()
        .find(|(q, _)| *q == p)
        .map(|(_, v)| {
            v.iter()
                .filter(|l| l.starts_with(&format!("EVENT code={code} ")))
                .map(String::as_str)
                .collect()
        })
        .unwrap()
}

fn custom_range(targets: &[Proc]) -> fastpmix::Info {
    fastpmix::Info::new(
        fastpmix::types::attrs::PMIX_EVENT_CUSTOM_RANGE,
        targets.to_vec(),
    )
}

fn pr(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).unwrap()
}

/// The server's own NAMESPACE event (`Server::notify_as_server`):
/// `Shared::dispatch` scopes it to the namespace of the process it is about
/// (`PMIX_EVENT_AFFECTED_PROC`), else to its source's (the server's, which
/// has no clients). Only that namespace's ring gets it, no client of
/// another namespace sees it, and it is passed up to the host exactly once,
/// with the server as source; the affected namespace's clients get it.
#[test]
fn a_namespace_event_the_server_generates_is_scoped_to_the_affected_namespace_and_passed_up_once() {
    let mut n = node(2, 2);
    let me = n.server.me();
    let (a_head, b_head) = (n.head("a"), n.head("b"));
    n.server
        .notify_as_server(
            Notification::new(Status(-5030), pr("a", 0), DataRange::NAMESPACE).info(
                fastpmix::Info::new(fastpmix::types::attrs::PMIX_EVENT_AFFECTED_PROC, pr("b", 1)),
            ),
        )
        .unwrap();
    // Passed up synchronously, once, as the server's event.
    let up = n.host.upcalls(-5030);
    assert_eq!(up.len(), 1, "passed up to the host once: {up:?}");
    assert_eq!(up[0].source, me, "with the server as source");
    assert_eq!(up[0].range, DataRange::NAMESPACE);
    let out = n.host_sentinel_and_collect();
    assert_eq!(
        n.head("a"),
        a_head + 1,
        "only the sentinel entered a's ring: the server scoped the event to b"
    );
    assert_eq!(
        n.head("b"),
        b_head + 2,
        "the event and the sentinel entered b's ring"
    );
    for r in [0, 1] {
        assert_eq!(got(&out, "a", r, -5030), 0, "a:{r}: another namespace");
        // Until 2026-11-26 the clients of b dropped it: a NAMESPACE event
        // was kept only from the receiver's own namespace.
        let seen = lines_of(&out, "b", r, -5030);
        assert_eq!(seen.len(), 1, "b:{r}, of the affected namespace: {out:?}");
        assert!(
            seen[0].starts_with(&format!("EVENT code=-5030 source={me} "))
                && seen[0].contains(" affected=b:1"),
            "{seen:?}"
        );
    }
    assert_eq!(n.host.upcalls(-5030).len(), 1, "and only once");

    // Not about any process: scoped to the server's own namespace, which
    // has no client here. No ring gets it; the host does, once.
    let (a_head, b_head) = (n.head("a"), n.head("b"));
    n.server
        .notify_as_server(Notification::new(
            Status(-5031),
            pr("b", 0),
            DataRange::NAMESPACE,
        ))
        .unwrap();
    let up = n.host.upcalls(-5031);
    assert_eq!(up.len(), 1, "passed up to the host once: {up:?}");
    assert_eq!(up[0].source, me);
    let out = n.host_sentinel_and_collect();
    assert_eq!(n.head("a"), a_head + 1, "only the sentinel");
    assert_eq!(n.head("b"), b_head + 1, "only the sentinel");
    for (ns, r) in [("a", 0), ("a", 1), ("b", 0), ("b", 1)] {
        assert_eq!(got(&out, ns, r, -5031), 0, "{ns}:{r}");
    }
    assert_eq!(n.host.upcalls(-5031).len(), 1, "and only once");
}

/// One CUSTOM event and what it must do: the clients that get it once
/// (`gets`; every other client of `a` (ranks 0–2) and `b` (0–1) gets
/// nothing), and how often it is passed up to the host.
struct Custom {
    code: i32,
    targets: Vec<Proc>,
    gets: &'static [(&'static str, u32)],
    upcalls: usize,
}

impl Node {
    /// Sends `c`'s event through `send`, then checks who got it, that only
    /// the rings of namespaces with a target got it (every ring gets the
    /// sentinel), and the upcalls.
    fn check_custom(&mut self, send: &dyn Fn(&Server, Notification), c: &Custom) {
        let heads = ["a", "b"].map(|ns| self.head(ns));
        send(
            &self.server,
            Notification::new(Status(c.code), pr("a", 0), DataRange::CUSTOM)
                .info(custom_range(&c.targets)),
        );
        let out = self.host_sentinel_and_collect();
        for (ns, ranks) in [("a", 3), ("b", 2)] {
            for r in 0..ranks {
                let want = usize::from(c.gets.contains(&(ns, r)));
                assert_eq!(
                    got(&out, ns, r, c.code),
                    want,
                    "{ns}:{r}, targets {:?}: {out:?}",
                    c.targets
                );
            }
        }
        for (ns, before) in ["a", "b"].into_iter().zip(heads) {
            let has = c.gets.iter().any(|(x, _)| *x == ns);
            assert_eq!(
                self.head(ns),
                before + 1 + u64::from(has),
                "{ns}'s ring (event {}: {has})",
                c.code
            );
        }
        assert_eq!(
            self.host.upcalls(c.code).len(),
            c.upcalls,
            "upcalls of {}",
            c.code
        );
    }
}

/// CUSTOM from the host (`Server::notify`): a CUSTOM event reaches exactly
/// the listed local processes (a wildcard rank = the whole namespace) and
/// is never passed back up to the host, even when a target is elsewhere.
#[test]
fn a_custom_event_from_the_host_reaches_exactly_the_listed_local_procs_and_is_never_echoed_back() {
    let mut n = node(3, 2);
    let host = |s: &Server, ev: Notification| s.notify(ev).unwrap();
    let all_b = pr("b", Rank::WILDCARD.0);
    for c in [
        Custom {
            code: -5032,
            targets: vec![pr("a", 2), all_b],
            gets: &[("a", 2), ("b", 0), ("b", 1)],
            upcalls: 0,
        },
        // A target on another node: still not passed back up.
        Custom {
            code: -5033,
            targets: vec![pr("a", 1), pr("elsewhere", 0)],
            gets: &[("a", 1)],
            upcalls: 0,
        },
    ] {
        n.check_custom(&host, &c);
    }
}

/// CUSTOM from the server (`Server::notify_as_server`): a CUSTOM event
/// reaches exactly the listed local processes; it is passed up to the host
/// once when a target is not local (another node, or a rank of a local
/// namespace that is no local client), and not at all when every target is
/// local.
#[test]
fn a_custom_event_the_server_generates_reaches_the_listed_local_procs_and_the_host_only_for_remote_targets(
) {
    use fastpmix::types::attrs;
    let mut n = node(3, 2);
    let me = n.server.me();
    let server = |s: &Server, ev: Notification| s.notify_as_server(ev).unwrap();
    let remote = vec![pr("a", Rank::WILDCARD.0), pr("elsewhere", 0)];
    for c in [
        // Every target local: not passed up.
        Custom {
            code: -5034,
            targets: vec![pr("b", 0)],
            gets: &[("b", 0)],
            upcalls: 0,
        },
        // A wildcard over a local namespace plus a target on another node.
        Custom {
            code: -5035,
            targets: remote.clone(),
            gets: &[("a", 0), ("a", 1), ("a", 2)],
            upcalls: 1,
        },
        // A rank of a local namespace that is no local client is remote.
        Custom {
            code: -5036,
            targets: vec![pr("a", 1), pr("a", 9)],
            gets: &[("a", 1)],
            upcalls: 1,
        },
    ] {
        n.check_custom(&server, &c);
    }
    let up = &n.host.upcalls(-5035)[0];
    assert_eq!(
        (up.source, up.range),
        (me, DataRange::CUSTOM),
        "the server's own event"
    );
    let listed: Vec<Proc> = up
        .info
        .iter()
        .filter(|i| i.key == attrs::PMIX_EVENT_CUSTOM_RANGE)
        .flat_map(|i| i.value.as_procs().unwrap_or_default())
        .collect();
    assert_eq!(listed, remote, "with its target list");
}

/// The event path never uses the socket: a client's events travel through
/// its submission queue and reach the peer through the ring, while the
/// server counts no request on either control socket. (A registration of
/// an environment code, which is a request, shows that it counts.)
#[test]
fn events_travel_without_a_request_on_the_control_socket() {
    let mut n = node(2, 0);
    let requests = |n: &Node, rank: u32| {
        let a = n.server.namespaces();
        let a = a.iter().find(|s| s.nspace.as_str() == "a").unwrap();
        a.clients
            .iter()
            .find(|c| c.rank.0 == rank)
            .unwrap()
            .requests
    };
    let before = requests(&n, 1);
    let c1 = n.client("a", 1);
    c1.send(&format!("REGISTER {}", Status::EVENT_NODE_DOWN.0));
    c1.expect("REGISTERED ");
    assert_eq!(requests(&n, 1), before + 1, "the counter counts");

    let before = (requests(&n, 0), requests(&n, 1));
    let count = 200;
    let c0 = n.client("a", 0);
    c0.send(&format!(
        "NOTIFY_N {count} -5090 {}",
        DataRange::NAMESPACE.0
    ));
    assert_eq!(c0.expect("NOTIFIED "), "NOTIFIED 0");
    let c1 = n.client("a", 1);
    for _ in 0..count {
        c1.expect("EVENT code=-5090 ");
    }
    assert_eq!(
        (requests(&n, 0), requests(&n, 1)),
        before,
        "{count} events, no request"
    );
}

/// A host whose `notify_event` upcall, for one code, holds the server's
/// progress thread (which calls it) until the test lets it go.
struct HoldingHost {
    code: i32,
    held: Mutex<bool>,
    release: Mutex<std::sync::mpsc::Receiver<()>>,
}

impl fastpmix::server::Host for HoldingHost {
    fn notify_event(&self, ev: &fastpmix::server::HostEvent, done: fastpmix::server::Done) {
        if ev.code.0 == self.code {
            *self.held.lock().unwrap() = true;
            // Bounded: a failing test must not leave the server's thread,
            // which the server's drop joins, waiting here.
            let _ = self.release.lock().unwrap().recv_timeout(procs::HANG);
        }
        done.status(Status::SUCCESS)
    }

    fn relays_events(&self) -> bool {
        true
    }
}

/// Lanes (docs/shm-format.md, "Lanes"): a client's event for its own
/// namespace reaches its peers from the sender's submission queue, woken
/// by the sender, without the server's progress thread. Held inside the
/// host's upcall for a NAMESPACE event, the server relays nothing; the
/// peer still gets that event and the next one. Once the server is let go
/// it publishes their ring copies, and the peer, made to read the whole
/// ring by a later event of the server's own, delivers each event once.
#[test]
fn a_client_event_reaches_its_namespace_peer_while_the_server_is_held() {
    const HOLD: i32 = -5040;
    const NEXT: i32 = -5041;
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let host = Arc::new(HoldingHost {
        code: HOLD,
        held: Mutex::new(false),
        release: Mutex::new(gate),
    });
    let server = Server::builder().host(host.clone()).start().unwrap();
    let mut clients = namespace_a(&server, 2, |_| Vec::new());
    let head = |s: &Server| {
        s.namespaces()
            .into_iter()
            .find(|n| n.nspace.as_str() == "a")
            .unwrap()
            .head
    };
    let before = head(&server);
    clients[0].send(&format!("NOTIFY {HOLD} {}", DataRange::NAMESPACE.0));
    assert_eq!(clients[0].expect("NOTIFIED"), "NOTIFIED 0");
    let deadline = std::time::Instant::now() + procs::HANG;
    while !*host.held.lock().unwrap() {
        assert!(
            std::time::Instant::now() < deadline,
            "the upcall never came"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    clients[0].send(&format!("NOTIFY {NEXT} {}", DataRange::LOCAL.0));
    assert_eq!(clients[0].expect("NOTIFIED"), "NOTIFIED 0");
    clients[1].expect(&format!("EVENT code={HOLD} source=a:0 "));
    clients[1].expect(&format!("EVENT code={NEXT} source=a:0 "));
    // Held inside the first event's upcall: not one ring copy went out
    // (the first is published before the upcall, the second not at all).
    assert!(head(&server) <= before + 1, "the server relayed while held");
    drop(release);
    while head(&server) < before + 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the ring copies never came"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let src = server.me();
    server
        .notify(Notification::new(Status(SENTINEL), src, DataRange::LOCAL))
        .unwrap();
    let peer = &mut clients[1];
    peer.expect(&format!("EVENT code={SENTINEL} "));
    peer.send("PING");
    peer.expect("PONG");
    for code in [HOLD, NEXT] {
        assert!(
            !peer
                .seen
                .iter()
                .any(|l| l.starts_with(&format!("EVENT code={code} "))),
            "{code} delivered twice: {:?}",
            peer.seen
        );
    }
}

/// Namespace `a` with ranks `0..n` registered on `server`, one client
/// process each, started with `extra_env(rank)` added to its environment.
fn namespace_a(
    server: &Server,
    n: u32,
    extra_env: impl Fn(u32) -> Vec<(String, String)>,
) -> Vec<ClientProc> {
    let nspace = Nspace::new("a").unwrap();
    server.register_nspace(&nspace, vec![]).unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    (0..n)
        .map(|r| {
            let p = Proc::new("a", r).unwrap();
            server.register_client(&p, uid, gid).unwrap();
            let mut env = server.setup_fork(&p).unwrap();
            env.extend(extra_env(r));
            ClientProc::spawn(CHILD, p, &env)
        })
        .collect()
}

/// Lanes wake as the ring's targeted wakes do (docs/shm-format.md,
/// "Lanes"): a client's custom-range event for one peer wakes that peer,
/// through its own wake word, and leaves a third client, asleep with a
/// handler for every code, asleep (its wake word untouched, no wake-all).
#[test]
fn a_custom_range_client_event_wakes_only_the_peers_it_names() {
    let mut n = node(3, 0);
    let (p1, p2) = (n.client("a", 1).pid(), n.client("a", 2).pid());
    let before = both_asleep(&n, p1, p2);
    let doorbell = ring_state(&n, "a").doorbell;
    let c = n.client("a", 0);
    c.send(&format!("NOTIFY -5042 {} a:1", DataRange::CUSTOM.0));
    assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
    n.client("a", 1).expect("EVENT code=-5042 ");
    woken_and_asleep(
        &n,
        (p1, before.0, "the peer it names"),
        (p2, before.1, "the peer it does not name"),
        doorbell,
    );
}

/// Asserts, in namespace `a`, that the client `woken` (pid, its wake word
/// before, who) was woken through its own wake word, that `asleep` sleeps
/// on with its wake word untouched, and that the doorbell every sleeper
/// waits on still holds `doorbell` (no wake-all).
fn woken_and_asleep(n: &Node, woken: (u32, u32, &str), asleep: (u32, u32, &str), doorbell: u32) {
    let st = ring_sleep_state(n, "a");
    assert!(
        sleep_state_of(&st, woken.0).1 > woken.1,
        "{} was woken through its own wake word",
        woken.2
    );
    assert_eq!(
        sleep_state_of(&st, asleep.0),
        (true, asleep.1),
        "{} sleeps on, never woken",
        asleep.2
    );
    assert_eq!(
        ring_state(n, "a").doorbell,
        doorbell,
        "no wake-all: the doorbell every sleeper waits on was not rung"
    );
}

/// A lane record's copy in another namespace's ring names no lane: a
/// reader there must not take it for a copy of a record of its own
/// namespace's lane of the same entry number, which it would skip
/// unvalidated as delivered already (`ring::lane::peek`). Namespace b's
/// clients first read each other's lanes up to position 2 (an event and
/// the sentinel each); then each client of namespace a, at positions 0
/// and 1 of its own lane, sends a SESSION event and a LOCAL sentinel, and
/// both reach b's clients once.
#[test]
fn a_lane_record_reaches_another_namespace_whose_lane_of_that_entry_is_ahead() {
    let mut n = node(2, 2);
    for r in 0..2 {
        let out = n.notify_and_collect(("b", r), -5050 - r as i32, DataRange::NAMESPACE, "");
        assert_eq!(
            got(&out, "b", 1 - r, -5050 - r as i32),
            1,
            "b:{r} to its peer"
        );
    }
    for r in 0..2 {
        let code = -5052 - r as i32;
        let out = n.notify_and_collect(("a", r), code, DataRange::SESSION, "");
        for b in 0..2 {
            assert_eq!(got(&out, "b", b, code), 1, "a:{r}'s event at b:{b}");
        }
        assert_eq!(got(&out, "a", 1 - r, code), 1, "a:{r}'s event at its peer");
    }
}
