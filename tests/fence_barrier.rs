//! `PMIx_Fence` over a whole namespace that runs on this node, through
//! its barrier in shared memory (`src/barrier`, `src/client/barrier.rs`,
//! `src/server/barrier.rs`): the same rules as the server's fence
//! (`tests/fence.rs`), kept by the participants themselves. Real
//! processes: the test embeds the server, the clients are this binary
//! re-executed (`tests/procs`); each namespace is registered as a launcher
//! does (`PMIX_JOB_SIZE`, `PMIX_LOCAL_PEERS`), which gives it a barrier.
//!
//! Which path a fence took is read from the server's `inspect` text (the
//! barrier's count of ended fences), never from timing. "Not complete yet"
//! is `FENCE_CHECK` (see `tests/fence.rs`); `HANG` only turns a hang into
//! a failure.

mod procs;

use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{Info, Nspace, Proc, Status, Value};
use procs::fence::{fence, fence_cb, fence_nb, state};
use procs::{ClientProc, ServerProc, ROLE_ENV, SERVER_WHOLE_JOB_ENV};

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

fn job(ns: &str, n: u32) -> (Server, Vec<ClientProc>) {
    let server = Server::builder().start().unwrap();
    let clients = procs::spawn_job(&server, CHILD, ns, n);
    (server, clients)
}

fn ask(c: &mut ClientProc, cmd: &str, reply: &str) -> String {
    c.send(cmd);
    let l = c.expect(&format!("{reply} "));
    l[reply.len() + 1..].to_owned()
}

/// The barrier line of `inspect` for namespace `ns`.
fn barrier_line(s: &Server, ns: &str) -> String {
    let text = s.inspect();
    let mut in_ns = false;
    for l in text.lines() {
        if l.starts_with("namespace ") {
            in_ns = l.starts_with(&format!("namespace {ns}:"));
        } else if in_ns && l.trim_start().starts_with("fence barrier:") {
            return l.trim().to_owned();
        }
    }
    panic!("no fence barrier line for {ns} in:\n{text}")
}

/// Fences the barrier ended, from its `inspect` line.
fn ended(s: &Server, ns: &str) -> u32 {
    let l = barrier_line(s, ns);
    let i = l.find(" fence(s) ended").unwrap_or_else(|| panic!("{l}"));
    l[..i].rsplit(' ').next().unwrap().parse().unwrap()
}

/// FENCE-BAR-1: a fence over the whole namespace completes only once
/// every rank entered, and it went through the barrier (the server's
/// fence never saw it).
#[test]
fn through_the_barrier_a_fence_completes_only_when_every_rank_entered() {
    let (s, mut c) = job("fb-all", 3);
    assert!(barrier_line(&s, "fb-all").contains("3 ranks"));
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending", "one of three entered");
    assert_eq!(fence_nb(&mut c[1], "f", "-"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending", "two of three entered");
    assert_eq!(ended(&s, "fb-all"), 0);
    // The explicit list of every rank names the same participants.
    assert_eq!(fence(&mut c[2], "fb-all:2,fb-all:0,fb-all:1"), 0);
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
    assert_eq!(fence_cb(&mut c[1], "f"), 0);
    assert_eq!(ended(&s, "fb-all"), 1, "{}", barrier_line(&s, "fb-all"));
}

/// FENCE-BAR-2: back-to-back fences of one process (a `fence_nb`, then a
/// blocking fence) are two instances, entered in call order.
#[test]
fn through_the_barrier_back_to_back_fences_are_separate_and_in_order() {
    let (s, mut c) = job("fb-twice", 2);
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(fence_nb(&mut c[0], "g", "@*"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending");
    assert_eq!(fence(&mut c[1], "@*"), 0, "completes f");
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
    assert_eq!(state(&mut c[0], "g"), "pending", "g is the next instance");
    assert_eq!(fence(&mut c[1], "@*"), 0, "completes g");
    assert_eq!(fence_cb(&mut c[0], "g"), 0);
    assert_eq!(ended(&s, "fb-twice"), 2);
}

/// FENCE-BAR-3: what every rank committed before entering is in the
/// store when the fence returns: an immediate Get of every peer's key
/// after it finds the value of this round (30 rounds, each rank putting
/// and committing just before the fence, as a wire-up does).
#[test]
fn through_the_barrier_commits_before_the_fence_are_visible_after_it() {
    let n = 3;
    let (s, mut c) = job("fb-data", n);
    for round in 0..30 {
        for x in c.iter_mut() {
            let me = x.proc.rank.0;
            let put = ask(x, &format!("PUT 3 card=s:{round}-{me}"), "PUT_RESULT");
            assert_eq!(put, "0");
            assert_eq!(ask(x, "COMMIT", "COMMIT_RESULT"), "0");
        }
        for (i, x) in c.iter_mut().enumerate() {
            assert_eq!(fence_nb(x, &format!("r{round}-{i}"), "-"), 0);
        }
        for (i, x) in c.iter_mut().enumerate() {
            assert_eq!(fence_cb(x, &format!("r{round}-{i}")), 0);
        }
        for x in c.iter_mut() {
            for peer in 0..n {
                let got = ask(
                    x,
                    &format!("GETX @{peer} card pmix.immediate=b:1"),
                    "GETX_RESULT",
                );
                assert_eq!(got, format!("0 s:{round}-{peer}"), "round {round}");
            }
        }
    }
    assert_eq!(ended(&s, "fb-data"), 30);
}

/// FENCE-BAR-4: a `PMIX_TIMEOUT` that passes ends the instance for every
/// rank in it with `PMIX_ERR_TIMEOUT`; a later fence completes.
#[test]
fn through_the_barrier_a_timeout_fails_the_instance_for_everyone_in_it() {
    let (s, mut c) = job("fb-time", 3);
    assert_eq!(fence_nb(&mut c[1], "f", "@*"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending");
    assert_eq!(
        fence(&mut c[0], "@* pmix.timeout=i:1"),
        Status::ERR_TIMEOUT.0
    );
    assert_eq!(fence_cb(&mut c[1], "f"), Status::ERR_TIMEOUT.0);
    for (i, x) in c.iter_mut().enumerate() {
        assert_eq!(fence_nb(x, &format!("g{i}"), "@*"), 0);
    }
    for (i, x) in c.iter_mut().enumerate() {
        assert_eq!(fence_cb(x, &format!("g{i}")), 0);
    }
    assert_eq!(ended(&s, "fb-time"), 2);
}

/// FENCE-BAR-5: a rank that dies before entering fails the open instance
/// with `PMIX_ERR_LOST_CONNECTION`; the barrier then takes no more fences
/// (a fence over the dead rank fails at once through the server), and the
/// survivors still fence among themselves.
#[test]
fn through_the_barrier_a_rank_that_dies_fails_the_fence_and_closes_the_barrier() {
    let (s, mut c) = job("fb-death", 3);
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(fence_nb(&mut c[1], "f", "@*"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending");
    c[2].kill();
    assert_eq!(fence_cb(&mut c[0], "f"), LOST);
    assert_eq!(fence_cb(&mut c[1], "f"), LOST);
    assert!(barrier_line(&s, "fb-death").contains("closed"));
    assert_eq!(fence(&mut c[0], "@*"), LOST);
    assert_eq!(fence_nb(&mut c[0], "g", "@0,@1"), 0);
    assert_eq!(fence(&mut c[1], "@0,@1"), 0);
    assert_eq!(fence_cb(&mut c[0], "g"), 0);
}

/// FENCE-BAR-6: a rank that finalizes before entering fails the fence
/// the others wait in.
#[test]
fn through_the_barrier_a_rank_that_finalizes_fails_the_fence() {
    let (_s, mut c) = job("fb-fin", 2);
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending");
    c[1].finalize();
    assert_eq!(fence_cb(&mut c[0], "f"), LOST);
}

/// FENCE-BAR-7: a namespace with ranks on other nodes has no barrier:
/// its fences go through the server (and its host).
#[test]
fn a_namespace_with_ranks_elsewhere_has_no_barrier() {
    let s = Server::builder().start().unwrap();
    let info = vec![
        Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(4)),
        Info::new(attrs::PMIX_LOCAL_PEERS, Value::String("0,1".into())),
    ];
    s.register_nspace(&Nspace::new("fb-far").unwrap(), info)
        .unwrap();
    assert!(barrier_line(&s, "fb-far").contains("none"));
    // And a registration without a job size has none either.
    s.register_nspace(&Nspace::new("fb-nosize").unwrap(), vec![])
        .unwrap();
    assert!(barrier_line(&s, "fb-nosize").contains("none"));
}

/// FENCE-BAR-8: a rank registered beyond the job's size joins the
/// server's whole-namespace fence, so the barrier closes and every later
/// fence goes through the server (which counts it).
#[test]
fn a_rank_beyond_the_job_size_closes_the_barrier() {
    let (s, mut c) = job("fb-extra", 2);
    let (uid, gid) = procs::ids();
    let extra = Proc::new("fb-extra", 2).unwrap();
    s.register_client(&extra, uid, gid).unwrap();
    assert!(barrier_line(&s, "fb-extra").contains("closed"));
    // Rank 2 is a participant now: the fence waits for it.
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(fence_nb(&mut c[1], "f", "@*"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending");
    let env = s.setup_fork(&extra).unwrap();
    let mut e = ClientProc::spawn(CHILD, extra, &env);
    assert_eq!(fence(&mut e, "@*"), 0);
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
    assert_eq!(fence_cb(&mut c[1], "f"), 0);
    assert_eq!(ended(&s, "fb-extra"), 0, "none went through the barrier");
}

/// FENCE-BAR-9: a server that dies while ranks wait in the barrier: they
/// hear `PMIX_ERR_UNREACH` (woken by their control thread, which saw the
/// server go), and later fences fail at once.
#[test]
fn through_the_barrier_a_lost_server_ends_a_pending_fence_with_unreach() {
    let procs = [
        Proc::new("fb-lost", 0).unwrap(),
        Proc::new("fb-lost", 1).unwrap(),
    ];
    let env = [(SERVER_WHOLE_JOB_ENV, "1".to_owned())];
    let mut server = ServerProc::spawn_with_env(SERVER_CHILD, &procs, &env);
    let mut c: Vec<ClientProc> = procs
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &server.env_of(q)))
        .collect();
    // Through the barrier: a fence of both completes without the server's
    // fence (which a dead server could not have answered below).
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(fence(&mut c[1], "@*"), 0);
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
    assert_eq!(fence_nb(&mut c[0], "g", "@*"), 0);
    assert_eq!(state(&mut c[0], "g"), "pending");
    server.kill();
    let unreach = Status::ERR_UNREACH.0;
    assert_eq!(fence_cb(&mut c[0], "g"), unreach);
    assert_eq!(fence(&mut c[0], "@*"), unreach);
}
