//! `PMIx_Fence` across the local processes of a namespace
//! (`Client::fence`, `Client::fence_nb`; the server side in
//! `src/server/fence.rs`). Real processes: the test embeds the server (or
//! runs it as a child when it must die, or runs `fastpmix run`); the
//! clients are this binary re-executed (`tests/procs`).
//!
//! "Not complete yet" is never a grace period: `FENCE_CHECK` runs a fence
//! over the client alone, whose answer the server writes after handling
//! everything the client sent before; a fence the server had completed by
//! then has had its callback run (callbacks run in arrival order). No
//! duration is asserted; `HANG` only turns a hang into a failure.

mod procs;

use fastpmix::server::Server;
use fastpmix::{Proc, Status};
use procs::fence::{everyone, fence, fence_cb, fence_nb, state};
use procs::{ClientProc, ServerProc, EXIT_BEFORE_INIT_ENV, HANG, ROLE_ENV, SCRIPT_ENV};
use std::process::Command;

const CHILD: &str = "child_client";
const SERVER_CHILD: &str = "child_server";
const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");
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

fn node(ns: &str, n: u32) -> (Server, Vec<ClientProc>) {
    let server = Server::builder().start().unwrap();
    let clients = procs::spawn_clients(&server, CHILD, &[(ns, n)]);
    (server, clients)
}

#[test]
fn fence_completes_only_when_all_participants_entered() {
    let (_s, mut c) = node("fc-all", 3);
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending", "one of three entered");
    assert_eq!(fence_nb(&mut c[1], "f", "@*"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending", "two of three entered");
    assert_eq!(state(&mut c[0], "f"), "pending");
    assert_eq!(fence(&mut c[2], "@*"), 0, "the last one completes it");
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
    assert_eq!(fence_cb(&mut c[1], "f"), 0);
}

#[test]
fn fence_wildcard_means_whole_namespace() {
    // A wildcard, no procs at all, and the explicit list of every rank
    // name the same participants: one fence.
    let (_s, mut c) = node("fc-wild", 3);
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(fence_nb(&mut c[1], "f", "-"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending", "rank 2 is a participant");
    assert_eq!(
        fence(&mut c[2], "fc-wild:2,fc-wild:0,fc-wild:1,fc-wild:0"),
        0
    );
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
    assert_eq!(fence_cb(&mut c[1], "f"), 0);
}

#[test]
fn fence_subset_of_ranks() {
    let (_s, mut c) = node("fc-sub", 3);
    // Rank 2 is alive and never enters: it is not a participant.
    c[2].sync();
    assert_eq!(fence_nb(&mut c[0], "f", "@0,@1"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending");
    assert_eq!(fence(&mut c[1], "@1,@0"), 0);
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
    // Another subset over the same namespace is another fence.
    assert_eq!(fence_nb(&mut c[1], "g", "@1,@2"), 0);
    assert_eq!(fence(&mut c[2], "@2,@1"), 0);
    assert_eq!(fence_cb(&mut c[1], "g"), 0);
}

#[test]
fn fence_twice_in_a_row() {
    let (_s, mut c) = node("fc-twice", 3);
    // Ranks 0 and 1 enter two fences over the same set back to back, rank
    // 2 one: the first completes, the second is a separate barrier.
    for x in &mut c[..2] {
        assert_eq!(fence_nb(x, "a", "@*"), 0);
        assert_eq!(fence_nb(x, "b", "@*"), 0);
    }
    assert_eq!(fence(&mut c[2], "@*"), 0);
    for x in &mut c[..2] {
        assert_eq!(fence_cb(x, "a"), 0);
        assert_eq!(state(x, "b"), "pending", "{}", x.proc);
    }
    assert_eq!(fence(&mut c[2], "@*"), 0);
    for x in &mut c[..2] {
        assert_eq!(fence_cb(x, "b"), 0);
    }
    // Everyone, twice more, each entering as soon as the last one ended.
    assert_eq!(everyone(&mut c, "c", "-"), [0, 0, 0]);
    assert_eq!(everyone(&mut c, "d", "-"), [0, 0, 0]);
}

#[test]
fn fence_collect_data_is_a_fence_like_any_other() {
    // Collection on one node: the data is in the node's store already
    // (data_exchange and two_nodes check what is collected).
    let (_s, mut c) = node("fc-collect", 2);
    assert_eq!(fence_nb(&mut c[0], "x", "- pmix.collect=b:1"), 0);
    assert_eq!(state(&mut c[0], "x"), "pending", "rank 1 is waited for");
    assert_eq!(fence(&mut c[1], "- pmix.collect=b:1"), 0);
    assert_eq!(fence_cb(&mut c[0], "x"), 0);
    // One entrant asking for collection makes it a collecting fence; the
    // others need not ask.
    assert_eq!(fence_nb(&mut c[0], "y", "- pmix.collect=b:1"), 0);
    assert_eq!(fence(&mut c[1], "-"), 0);
    assert_eq!(fence_cb(&mut c[0], "y"), 0);
    // COLLECT_DATA false is a fence like any other.
    assert_eq!(fence_nb(&mut c[0], "f", "- pmix.collect=b:0"), 0);
    assert_eq!(fence(&mut c[1], "-"), 0);
    assert_eq!(fence_cb(&mut c[0], "f"), 0);
}

#[test]
fn fence_unknown_attributes_are_ignored_unless_required() {
    let (_s, mut c) = node("fc-attrs", 1);
    assert_eq!(fence(&mut c[0], "- vendor.hint=i:1"), 0);
    assert_eq!(
        fence(&mut c[0], "- !vendor.hint=i:1"),
        Status::ERR_NOT_SUPPORTED.0
    );
    // A known attribute of the wrong type, and a negative timeout.
    let bad = Status::ERR_BAD_PARAM.0;
    assert_eq!(fence(&mut c[0], "- pmix.timeout=s:soon"), bad);
    assert_eq!(fence(&mut c[0], "- pmix.timeout=i:-1"), bad);
    // A timeout of 0 is no timeout.
    assert_eq!(fence(&mut c[0], "- pmix.timeout=i:0"), 0);
}

#[test]
fn fence_bad_participants_are_bad_param() {
    let (_s, mut c) = node("fc-bad", 3);
    let bad = Status::ERR_BAD_PARAM.0;
    assert_eq!(
        fence(&mut c[0], "fc-elsewhere:0,@0"),
        bad,
        "unknown namespace"
    );
    assert_eq!(fence(&mut c[0], "@0,@7"), bad, "rank not registered");
    assert_eq!(fence(&mut c[0], "@0,@undef"), bad, "special rank");
    assert_eq!(fence(&mut c[0], "@1,@2"), bad, "caller not a participant");
    // None of them left anything behind: the whole namespace fences.
    assert_eq!(everyone(&mut c, "f", "-"), [0, 0, 0]);
}

#[test]
fn fence_over_another_users_namespace_is_refused_as_unknown() {
    if procs::ids().0 != 0 {
        println!("skipped: needs root to run a second uid");
        return;
    }
    if !procs::peer_can_run_this_binary() {
        println!("skipped: the second uid cannot execute this test binary (checkout not world-traversable)");
        return;
    }
    let server = Server::builder().start().unwrap();
    let (mut r, mut u) = procs::two_uid_clients(&server, CHILD, "fc-root", "fc-nobody");
    let bad = Status::ERR_BAD_PARAM.0;
    assert_eq!(fence(&mut u, "@me,fc-root:0"), bad);
    assert_eq!(fence(&mut u, "@me,fc-elsewhere:0"), bad, "same answer");
    // Root may name anyone: its fence waits for the second uid's process.
    assert_eq!(fence_nb(&mut r, "f", "@me,fc-nobody:0"), 0);
    assert_eq!(state(&mut r, "f"), "pending");
}

#[test]
fn fence_timeout() {
    let (_s, mut c) = node("fc-time", 3);
    // Rank 0 gives a timeout, rank 1 none; rank 2 never enters. The fence
    // is abandoned for both.
    assert_eq!(fence_nb(&mut c[1], "f", "@*"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending");
    assert_eq!(
        fence(&mut c[0], "@* pmix.timeout=i:1"),
        Status::ERR_TIMEOUT.0
    );
    assert_eq!(fence_cb(&mut c[1], "f"), Status::ERR_TIMEOUT.0);
    // Nothing of it lingers: a new fence over the same set completes.
    assert_eq!(everyone(&mut c, "g", "@*"), [0, 0, 0]);
}

#[test]
fn fence_participant_death_fails_the_fence() {
    let (_s, mut c) = node("fc-death", 3);
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(fence_nb(&mut c[1], "f", "@*"), 0);
    assert_eq!(state(&mut c[1], "f"), "pending");
    c[2].kill();
    assert_eq!(fence_cb(&mut c[0], "f"), LOST);
    assert_eq!(fence_cb(&mut c[1], "f"), LOST);
    // A fence over a participant that is already gone fails at once.
    assert_eq!(fence(&mut c[0], "@*"), LOST);
    // The survivors still fence among themselves.
    assert_eq!(fence_nb(&mut c[0], "g", "@0,@1"), 0);
    assert_eq!(fence(&mut c[1], "@0,@1"), 0);
    assert_eq!(fence_cb(&mut c[0], "g"), 0);
}

#[test]
fn fence_participant_finalize_fails_the_fence() {
    let (_s, mut c) = node("fc-fin", 2);
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending");
    c[1].finalize();
    assert_eq!(fence_cb(&mut c[0], "f"), LOST);
}

/// Namespace `ns` of 3 registered clients where ranks 0 and 1 run and
/// have entered a wildcard fence "f", pending: rank 2 never connected.
fn fence_waiting_for_rank_2(ns: &str) -> (Server, Vec<ClientProc>) {
    let server = Server::builder().start().unwrap();
    server
        .register_nspace(&fastpmix::Nspace::new(ns).unwrap(), vec![])
        .unwrap();
    let (uid, gid) = procs::ids();
    let p = |r| Proc::new(ns, r).unwrap();
    for r in 0..3 {
        server.register_client(&p(r), uid, gid).unwrap();
    }
    let mut c: Vec<ClientProc> = (0..2)
        .map(|r| ClientProc::spawn(CHILD, p(r), &server.setup_fork(&p(r)).unwrap()))
        .collect();
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(fence_nb(&mut c[1], "f", "@*"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending", "rank 2 may still come");
    assert_eq!(state(&mut c[1], "f"), "pending");
    (server, c)
}

#[test]
fn fence_waits_for_a_registered_client_that_has_not_connected_and_fails_when_it_is_deregistered() {
    let (server, mut c) = fence_waiting_for_rank_2("fc-late");
    server
        .deregister_client(&Proc::new("fc-late", 2).unwrap())
        .unwrap();
    assert_eq!(fence_cb(&mut c[0], "f"), LOST);
    assert_eq!(fence_cb(&mut c[1], "f"), LOST);
}

#[test]
fn fence_fails_when_the_host_reports_that_a_registered_client_ended_before_connecting() {
    use fastpmix::event::Notification;
    use fastpmix::types::attrs::PMIX_EVENT_AFFECTED_PROC;
    use fastpmix::{DataRange, Info, Rank, Value};
    // Rank 2 is registered, started by the host, and ends before it
    // connects.
    let (server, mut c) = fence_waiting_for_rank_2("fc-ended");
    let (ns, p) = (fastpmix::Nspace::new("fc-ended").unwrap(), |r| {
        Proc::new("fc-ended", r).unwrap()
    });
    // How a host reports a death (`fastpmix run` does this for every
    // rank that ends): an event naming the process as affected.
    let job = Proc {
        nspace: ns,
        rank: Rank::WILDCARD,
    };
    let end = Notification::new(Status::EVENT_PROC_TERMINATED, job, DataRange::NAMESPACE).info(
        Info::new(PMIX_EVENT_AFFECTED_PROC, Value::Proc(Box::new(p(2)))),
    );
    server.notify(end).unwrap();
    assert_eq!(fence_cb(&mut c[0], "f"), LOST);
    assert_eq!(fence_cb(&mut c[1], "f"), LOST);
    // It stays gone: a fence over it fails at once; the others still
    // fence among themselves.
    assert_eq!(fence(&mut c[0], "@*"), LOST);
    assert_eq!(everyone(&mut c, "g", "@0,@1"), [0, 0]);
}

#[test]
fn fence_timeout_over_a_client_that_never_connected_is_forgotten() {
    let server = Server::builder().start().unwrap();
    let ns = fastpmix::Nspace::new("fc-absent").unwrap();
    server.register_nspace(&ns, vec![]).unwrap();
    let (uid, gid) = procs::ids();
    let p = |r| Proc::new("fc-absent", r).unwrap();
    for r in 0..2 {
        server.register_client(&p(r), uid, gid).unwrap();
    }
    let start = |r| ClientProc::spawn(CHILD, p(r), &server.setup_fork(&p(r)).unwrap());
    let mut c = vec![start(0)];
    // Rank 1 has not started: the fence waits for it until its timeout.
    assert_eq!(
        fence(&mut c[0], "@* pmix.timeout=i:1"),
        Status::ERR_TIMEOUT.0
    );
    // The server forgot that fence: once rank 1 runs, a fence over both
    // is a fresh barrier that completes for both (had rank 0 stayed in the
    // abandoned one, rank 1 would have completed that one instead).
    c.push(start(1));
    assert_eq!(everyone(&mut c, "g", "@*"), [0, 0]);
}

#[test]
fn fence_fails_when_a_rank_exits_before_init_under_the_launcher() {
    // Rank 1 exits with status 0 before PMIx_Init; the launcher reports
    // its end to the server, and rank 0's fence over the job fails
    // instead of waiting for good. A fence over rank 0 alone completes.
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_str().unwrap();
    let job = procs::run_job(
        BIN,
        &[
            "-n",
            "2",
            "--",
            exe,
            CHILD,
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ],
        &[
            (ROLE_ENV, "client"),
            (EXIT_BEFORE_INIT_ENV, "1"),
            (SCRIPT_ENV, "FENCE @*; FENCE @0; FINALIZE"),
        ],
        HANG,
    );
    let all = format!("{}\n{}", job.stdout, job.stderr);
    let lines: Vec<&str> = job.stdout.lines().collect();
    assert!(lines.contains(&"[1] EXITING_BEFORE_INIT"), "{all}");
    let results: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("[0] FENCE_RESULT "))
        .copied()
        .collect();
    assert_eq!(
        results,
        [
            format!("[0] FENCE_RESULT {LOST}"),
            "[0] FENCE_RESULT 0".into()
        ],
        "{all}"
    );
    assert!(lines.contains(&"[0] FINALIZED 0"), "{all}");
    assert_eq!(job.code, Some(0), "{all}");
}

#[test]
fn fence_nb_callback_runs_after_return() {
    let (_s, mut c) = node("fc-nb", 1);
    let c = &mut c[0];
    c.send("FENCE_NB f @me");
    let cb = c.expect("FENCE_CB f ");
    // Every line before FENCE_CB is in `seen`: the call's line came first.
    let i = c
        .seen
        .iter()
        .position(|l| l.starts_with("FENCE_NB_STARTED f "));
    assert_eq!(
        i.map(|i| c.seen.remove(i)).as_deref(),
        Some("FENCE_NB_STARTED f 0"),
        "the callback ran before the call returned: {cb:?}"
    );
    assert_eq!(cb, "FENCE_CB f 0 thread=other");
}

#[test]
fn fence_a_lost_server_completes_a_pending_fence_with_unreach() {
    let procs = [
        Proc::new("fc-lost", 0).unwrap(),
        Proc::new("fc-lost", 1).unwrap(),
    ];
    let mut server = ServerProc::spawn(SERVER_CHILD, &procs);
    let mut c: Vec<ClientProc> = procs
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &server.env_of(q)))
        .collect();
    assert_eq!(fence_nb(&mut c[0], "f", "@*"), 0);
    assert_eq!(state(&mut c[0], "f"), "pending");
    server.kill();
    let unreach = Status::ERR_UNREACH.0;
    assert_eq!(fence_cb(&mut c[0], "f"), unreach);
    assert_eq!(fence(&mut c[0], "@*"), unreach);
    // Once rank 1 heard of the loss, its calls fail at once too.
    c[1].expect(&format!("EVENT code={LOST} "));
    assert_eq!(fence_nb(&mut c[1], "g", "@*"), unreach);
}

#[test]
fn fence_across_a_job_under_the_launcher() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(BIN)
        .args(["run", "-n", "3", "--"])
        .arg(exe)
        .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "client")
        .env(SCRIPT_ENV, "FENCE -; FENCE @*; FINALIZE")
        .output()
        .expect("run fastpmix");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for r in 0..3 {
        let ok = stdout
            .lines()
            .filter(|l| *l == format!("[{r}] FENCE_RESULT 0"))
            .count();
        assert_eq!(ok, 2, "rank {r}\n{stdout}\n{stderr}");
    }
}

/// FENCE-15: a host that registers its clients one by one as it starts
/// them (as PRRTE does): a rank that fences before its local peers are
/// registered waits for them (the job information names them local), and
/// nothing goes to the host; a Get of such a peer waits for its commit.
#[test]
fn a_fence_before_the_local_peers_are_registered_waits_for_them() {
    use fastpmix::types::attrs;
    use fastpmix::{Info, Nspace, Value};
    let server = Server::builder().start().unwrap();
    let ns = Nspace::new("fc-late").unwrap();
    let info = vec![
        Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(3)),
        Info::new(attrs::PMIX_LOCAL_PEERS, Value::String("0,1,2".into())),
    ];
    server.register_nspace(&ns, info).unwrap();
    let (uid, gid) = procs::ids();
    let start = |r: u32| {
        let p = Proc::new("fc-late", r).unwrap();
        server.register_client(&p, uid, gid).unwrap();
        ClientProc::spawn(CHILD, p, &server.setup_fork(&p).unwrap())
    };
    let mut c0 = start(0);
    assert_eq!(fence_nb(&mut c0, "f", "@*"), 0);
    c0.send("GETX_NB g @1 card");
    c0.expect("GETX_NB_STARTED g 0");
    assert_eq!(
        state(&mut c0, "f"),
        "pending",
        "ranks 1 and 2 are local, not yet here"
    );
    let (mut c1, mut c2) = (start(1), start(2));
    c1.send("PUT 3 card=s:one");
    c1.expect("PUT_RESULT 0");
    c1.send("COMMIT");
    c1.expect("COMMIT_RESULT 0");
    assert_eq!(
        c0.expect("GETX_CB g ").trim_start_matches("GETX_CB g "),
        "0 s:one"
    );
    assert_eq!(fence_nb(&mut c1, "f", "@*"), 0);
    assert_eq!(fence(&mut c2, "@*"), 0);
    assert_eq!(fence_cb(&mut c0, "f"), 0);
    assert_eq!(fence_cb(&mut c1, "f"), 0);
}
