//! Data exchange on one node: `PMIx_Put`, `PMIx_Commit`, `PMIx_Fence` with
//! data collection and `PMIx_Get` of any process (`src/client/data.rs`,
//! `src/server/exchange.rs`, the store in `src/store`). Real processes: an
//! embedded server and this binary re-executed as clients
//! (`tests/procs`).
//!
//! "Not answered yet" is never a grace period: `FENCE_CHECK` runs a fence
//! over the client alone, answered after everything it sent before; a
//! Get the server had answered by then has had its callback run.

mod procs;

use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{Info, Nspace, Proc, Status, Value};
use procs::{ClientProc, ROLE_ENV};

const CHILD: &str = "child_client";
const NOT_FOUND: i32 = Status::ERR_NOT_FOUND.0;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

fn node(ns: &str, n: u32) -> (Server, Vec<ClientProc>) {
    let server = Server::builder().start().unwrap();
    let clients = procs::spawn_clients(&server, CHILD, &[(ns, n)]);
    (server, clients)
}

/// Sends `cmd`, returns the rest of the line after `reply `.
fn ask(c: &mut ClientProc, cmd: &str, reply: &str) -> String {
    c.send(cmd);
    let l = c.expect(&format!("{reply} "));
    l[reply.len() + 1..].to_owned()
}

fn put(c: &mut ClientProc, scope: u8, kv: &str) -> i32 {
    ask(c, &format!("PUT {scope} {kv}"), "PUT_RESULT")
        .parse()
        .unwrap()
}

fn commit(c: &mut ClientProc) {
    assert_eq!(ask(c, "COMMIT", "COMMIT_RESULT"), "0");
}

/// `GETX` → "<status> <value>".
fn get(c: &mut ClientProc, args: &str) -> String {
    ask(c, &format!("GETX {args}"), "GETX_RESULT")
}

fn fence(c: &mut ClientProc, args: &str) -> i32 {
    ask(c, &format!("FENCE {args}"), "FENCE_RESULT")
        .parse()
        .unwrap()
}

/// `GETX_NB` started; its callback's line comes later.
fn get_nb(c: &mut ClientProc, tag: &str, args: &str) {
    assert_eq!(
        ask(
            c,
            &format!("GETX_NB {tag} {args}"),
            &format!("GETX_NB_STARTED {tag}")
        ),
        "0"
    );
}

fn get_cb(c: &mut ClientProc, tag: &str) -> String {
    let l = c.expect(&format!("GETX_CB {tag} "));
    l[format!("GETX_CB {tag} ").len()..].to_owned()
}

fn pending(c: &mut ClientProc, tag: &str) -> bool {
    ask(
        c,
        &format!("FENCE_CHECK {tag}"),
        &format!("FENCE_STATE {tag}"),
    ) == "pending"
}

/// DX-WIREUP: every rank puts an endpoint, commits, fences with data
/// collection, and gets every peer's endpoint (as MPI wire-up does).
#[test]
fn put_commit_fence_get_every_peer() {
    let (_s, mut c) = node("dx-wire", 4);
    for (r, x) in c.iter_mut().enumerate() {
        assert_eq!(put(x, 3, &format!("ep=s:endpoint-{r}")), 0);
        assert_eq!(put(x, 3, "card=bytes:100"), 0);
        commit(x);
    }
    for x in c.iter_mut() {
        x.send("FENCE_NB f @* pmix.collect=b:1");
    }
    for x in c.iter_mut() {
        x.expect("FENCE_CB f 0 ");
    }
    for x in c.iter_mut() {
        for r in 0..4 {
            assert_eq!(get(x, &format!("@{r} ep")), format!("0 s:endpoint-{r}"));
            assert_eq!(get(x, &format!("@{r} card")), "0 bytes:100:4950");
        }
    }
}

/// DX-OWN: a process reads back what it put before committing, in every
/// scope; a later Put of the same key replaces the value.
#[test]
fn a_process_sees_its_own_puts_at_once() {
    let (_s, mut c) = node("dx-own", 1);
    assert_eq!(put(&mut c[0], 2, "k=i:1"), 0);
    assert_eq!(get(&mut c[0], "@me k"), "0 Int(1)");
    assert_eq!(put(&mut c[0], 1, "k=i:2"), 0);
    assert_eq!(get(&mut c[0], "@me k"), "0 Int(2)");
    assert_eq!(get(&mut c[0], "@me nothing").split(' ').next(), Some("-46"));
}

/// DX-WAIT: a Get of a peer that has not committed waits for its commit
/// (and is answered by it); once a peer committed, a key it did not put is
/// NOT_FOUND at once.
#[test]
fn a_get_waits_for_the_peers_commit() {
    let (_s, mut c) = node("dx-wait", 2);
    let (a, b) = c.split_at_mut(1);
    get_nb(&mut a[0], "g", "@1 late");
    assert!(pending(&mut a[0], "g"), "answered before rank 1 committed");
    assert_eq!(put(&mut b[0], 3, "late=s:here"), 0);
    commit(&mut b[0]);
    assert_eq!(get_cb(&mut a[0], "g"), "0 s:here");
    assert_eq!(get(&mut a[0], "@1 other"), format!("{NOT_FOUND} -"));
}

/// DX-OPTIONAL / DX-IMMEDIATE / DX-TIMEOUT: directives that bound the wait.
#[test]
fn optional_immediate_and_timeout_bound_the_wait() {
    let (_s, mut c) = node("dx-opts", 2);
    let nf = format!("{NOT_FOUND} -");
    assert_eq!(get(&mut c[0], "@1 k pmix.optional=b:1"), nf);
    assert_eq!(get(&mut c[0], "@1 k pmix.immediate=b:1"), nf);
    let timeout = Status::ERR_TIMEOUT.0;
    assert_eq!(
        get(&mut c[0], "@1 k pmix.timeout=i:1"),
        format!("{timeout} -")
    );
}

/// DX-LEFT: a Get waiting for a peer that finalizes without committing
/// ends NOT_FOUND (never a hang).
#[test]
fn a_peer_that_leaves_without_committing_ends_the_wait() {
    let (_s, mut c) = node("dx-left", 2);
    get_nb(&mut c[0], "g", "@1 k");
    assert!(pending(&mut c[0], "g"));
    c[1].finalize();
    assert_eq!(get_cb(&mut c[0], "g"), format!("{NOT_FOUND} -"));
}

/// DX-SCOPE: a local peer sees LOCAL and GLOBAL items, not REMOTE ones;
/// `PMIX_DATA_SCOPE` narrows what a Get takes.
#[test]
fn scopes_decide_what_a_local_peer_sees() {
    let (_s, mut c) = node("dx-scope", 2);
    assert_eq!(put(&mut c[1], 1, "l=i:1"), 0);
    assert_eq!(put(&mut c[1], 2, "r=i:2"), 0);
    assert_eq!(put(&mut c[1], 3, "g=i:3"), 0);
    commit(&mut c[1]);
    let nf = format!("{NOT_FOUND} -");
    c[1].send("FENCE_NB f @*");
    assert_eq!(fence(&mut c[0], "@*"), 0);
    c[1].expect("FENCE_CB f 0 ");
    assert_eq!(get(&mut c[0], "@1 l"), "0 Int(1)");
    let outside = Status::ERR_EXISTS_OUTSIDE_SCOPE.0;
    assert_eq!(get(&mut c[0], "@1 r"), format!("{outside} -"));
    assert_eq!(
        get(&mut c[0], "@1 r pmix.optional=b:1"),
        format!("{outside} -")
    );
    assert_eq!(get(&mut c[0], "@1 g"), "0 Int(3)");
    assert_eq!(get(&mut c[0], "@1 g pmix.scope=u32:1"), nf, "not LOCAL");
    assert_eq!(get(&mut c[0], "@1 l pmix.scope=u32:1"), "0 Int(1)");
    assert_eq!(get(&mut c[1], "@me r"), "0 Int(2)", "the putter sees all");
}

/// DX-UNDEF: `PMIX_RANK_UNDEF` finds a key in any rank's data, and
/// waits until some rank provides it (unless told not to wait).
#[test]
fn an_undefined_rank_finds_the_key_in_any_rank() {
    let (_s, mut c) = node("dx-undef", 3);
    assert_eq!(put(&mut c[2], 3, "only.two=s:x"), 0);
    commit(&mut c[2]);
    assert_eq!(fence(&mut c[2], "@2"), 0, "the commit was handled");
    assert_eq!(get(&mut c[0], "@undef only.two"), "0 s:x");
    let nf = format!("{NOT_FOUND} -");
    assert_eq!(get(&mut c[0], "@undef nobody.has pmix.optional=b:1"), nf);
    assert_eq!(get(&mut c[0], "@undef nobody.has pmix.immediate=b:1"), nf);
    get_nb(&mut c[0], "g", "@undef later");
    assert!(pending(&mut c[0], "g"), "answered before anyone put it");
    assert_eq!(put(&mut c[1], 3, "later=i:5"), 0);
    commit(&mut c[1]);
    assert_eq!(get_cb(&mut c[0], "g"), "0 Int(5)");
}

/// DX-RESERVED: a reserved key (`pmix` prefix) the host did not register
/// is NOT_FOUND at once, never waited for: the host gives those at start.
#[test]
fn a_reserved_key_is_never_waited_for() {
    let (_s, mut c) = node("dx-rsvd", 2);
    let nf = format!("{NOT_FOUND} -");
    assert_eq!(get(&mut c[0], "@1 pmix.no.such.key"), nf);
    assert_eq!(get(&mut c[0], "@undef pmix.no.such.key"), nf);
}

/// DX-INTERNAL: `PMIx_Store_internal` answers this process's Gets first.
#[test]
fn store_internal_is_seen_by_this_process_only() {
    let (_s, mut c) = node("dx-int", 2);
    assert_eq!(
        ask(&mut c[0], "STORE_INTERNAL @1 k=i:7", "STORE_RESULT"),
        "0"
    );
    assert_eq!(get(&mut c[0], "@1 k"), "0 Int(7)");
    assert_eq!(
        get(&mut c[1], "@me k pmix.optional=b:1"),
        format!("{NOT_FOUND} -")
    );
}

/// DX-BAD: bad input is refused with a status, nothing else changes.
#[test]
fn bad_keys_and_calls_after_finalize_are_refused() {
    let (_s, mut c) = node("dx-bad", 1);
    let bad = Status::ERR_BAD_PARAM.0;
    assert_eq!(put(&mut c[0], 3, "LONG600=i:1"), bad);
    assert_eq!(put(&mut c[0], 3, "EMPTY=i:1"), bad);
    assert_eq!(put(&mut c[0], 9, "k=i:1"), bad);
    assert_eq!(get(&mut c[0], "@me LONG600"), format!("{bad} -"));
    assert_eq!(get(&mut c[0], "@me k pmix.timeout=s:x"), format!("{bad} -"));
    c[0].send("FINALIZE_STAY");
    c[0].expect("FINALIZED_STAYING 0");
    let init = Status::ERR_INIT.0;
    assert_eq!(put(&mut c[0], 3, "k=i:1"), init);
    assert_eq!(ask(&mut c[0], "COMMIT", "COMMIT_RESULT"), init.to_string());
    assert_eq!(get(&mut c[0], "@me k"), format!("{init} -"));
}

/// DX-RANGE: a rank outside the job is NOT_FOUND at once.
#[test]
fn a_rank_outside_the_job_is_not_found() {
    let server = Server::builder().start().unwrap();
    let ns = Nspace::new("dx-out").unwrap();
    let info = vec![Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(2))];
    server.register_nspace(&ns, info).unwrap();
    let (uid, gid) = procs::ids();
    let p = Proc::new("dx-out", 0).unwrap();
    server.register_client(&p, uid, gid).unwrap();
    let env = server.setup_fork(&p).unwrap();
    let mut c = ClientProc::spawn(CHILD, p, &env);
    assert_eq!(get(&mut c, "@7 k"), format!("{NOT_FOUND} -"));
}

/// DX-GROW: the store grows with the data (chunks chained as needed); a
/// peer reads keys from every chunk; deregistering the namespace frees it.
#[test]
fn the_store_grows_with_the_data_and_is_freed_with_the_namespace() {
    let (s, mut c) = node("dx-grow", 2);
    let ns = Nspace::new("dx-grow").unwrap();
    let (first, _) = s.data_footprint(&ns).unwrap();
    for i in 0..40 {
        assert_eq!(put(&mut c[1], 3, &format!("k{i}=bytes:4000")), 0);
        commit(&mut c[1]);
    }
    assert_eq!(fence(&mut c[1], "@1"), 0);
    let (grown, items) = s.data_footprint(&ns).unwrap();
    assert_eq!(items, 40);
    assert!(
        grown > first && grown < 8 * 160_000,
        "{first} -> {grown} bytes"
    );
    let sum: u64 = (0..4000u64).map(|i| i % 251).sum();
    for i in [0, 13, 39] {
        assert_eq!(
            get(&mut c[0], &format!("@1 k{i}")),
            format!("0 bytes:4000:{sum}")
        );
    }
    let seg = s
        .namespaces()
        .into_iter()
        .find(|n| n.nspace == ns)
        .unwrap()
        .segment;
    let prefix = format!("{}-kv", seg.trim_start_matches('/'));
    let chunks = || {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .count()
    };
    assert!(chunks() > 1, "several chunks");
    for x in c.iter_mut() {
        x.finalize();
    }
    s.deregister_nspace(&ns).unwrap();
    assert_eq!(chunks(), 0, "freed with the namespace");
}

/// DX-NSPACE: a Get of another namespace registered on the node (same
/// uid) is answered by the server: its job information and what its
/// processes committed; a namespace the node does not know is NOT_FOUND.
#[test]
fn another_namespace_on_the_node_is_answered_by_the_server() {
    let server = Server::builder().start().unwrap();
    let mut c = procs::spawn_clients(&server, CHILD, &[("dx-ns-a", 1), ("dx-ns-b", 1)]);
    let (a, b) = c.split_at_mut(1);
    assert_eq!(put(&mut b[0], 3, "card=s:from-b"), 0);
    commit(&mut b[0]);
    assert_eq!(fence(&mut b[0], "@me"), 0, "the commit was handled");
    assert_eq!(get(&mut a[0], "dx-ns-b:0 card"), "0 s:from-b");
    assert_eq!(get(&mut a[0], "dx-ns-b:* pmix.nspace"), "0 s:dx-ns-b");
    assert_eq!(
        get(&mut a[0], "dx-ns-b:0 nothing"),
        format!("{NOT_FOUND} -")
    );
    assert_eq!(
        get(&mut a[0], "dx-ns-nowhere:0 card"),
        format!("{NOT_FOUND} -")
    );
}
