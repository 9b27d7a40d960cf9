//! A resource-manager daemon written in C (`tests/c/rm_server.c`) embeds
//! the fastpmix server through `pmix_server.h` and starts its clients
//! (`tests/c/rm_child.c`) itself with `PMIx_server_setup_fork` + fork/execve:
//! no `fastpmix run`. The daemon and the children print one line per
//! checked fact ("ok <fact>" or "FAIL <fact> (<why>)"); each test here asserts
//! the lines of one rule. The two scenarios (the full module, and a module
//! whose upcalls are all NULL) run once each and are shared by the tests.
//!
//! The server cannot run under valgrind 3.19 (its progress thread waits in
//! io_uring, which valgrind does not model, and `pidfd_open` is unknown to
//! it: the daemon deadlocks), so the daemon's leak check is
//! AddressSanitizer's LeakSanitizer instead, over the whole process (the
//! library's allocations go through the same malloc). Its children, plain
//! clients, run under valgrind's memcheck (the daemon starts them through
//! a wrapper script).

mod cabi;

use cabi::{build_program, dump, output_within, stdout, Lang, Memcheck};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

/// Hang guard for one daemon run (it waits at most 60 s for any one step).
const LIMIT: Duration = Duration::from_secs(240);

fn child() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build_program("rm_child", Lang::C, &["tests/c/rm_child.c"], &[]))
}

fn daemon() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build_program("rm_server", Lang::C, &["tests/c/rm_server.c"], &[]))
}

fn daemon_asan() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        build_program(
            "rm_server_asan",
            Lang::C,
            &["tests/c/rm_server.c"],
            &["-fsanitize=address", "-fno-omit-frame-pointer"],
        )
    })
}

/// Runs `exe CHILD [extra]` directly (the daemon is the launcher).
fn run(exe: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    run_children(exe, child(), extra, env)
}

/// Runs `exe child [extra]`: the daemon starts `child` for every rank.
fn run_children(exe: &Path, child: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.arg(child)
        .args(extra)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null());
    output_within(cmd, LIMIT)
}

/// The full scenario, run once.
fn full() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| run(daemon(), &[], &[]))
}

/// The NULL-module scenario, run once.
fn null() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| run(daemon(), &["--null"], &[]))
}

/// The two-node scenario (`--twonode`), whose children are
/// `tests/c/client_job_keys.c`, run once.
fn two_nodes() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| run_children(daemon(), keys_child(), &["--twonode"], &[]))
}

/// `tests/c/client_job_keys.c`, the children of the two-node scenario.
fn keys_child() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        build_program(
            "client_job_keys",
            Lang::C,
            &["tests/c/client_job_keys.c"],
            &[],
        )
    })
}

/// Asserts that the run printed `ok <fact>`, for each fact.
fn expect(o: &Output, facts: &[&str]) {
    let out = stdout(o);
    let lines: Vec<&str> = out.lines().collect();
    for f in facts {
        let want = format!("ok {f}");
        assert!(
            lines.contains(&want.as_str()),
            "no line {want:?}\n{}",
            dump(o)
        );
    }
}

/// The same fact, printed by each of `who` ("rank 0", ...).
fn each(who: &[&str], fact: &str) -> Vec<String> {
    who.iter().map(|w| format!("{w}: {fact}")).collect()
}

const RANKS: [&str; 3] = ["rank 0", "rank 1", "rank 2"];

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn server_calls_before_init_return_err_init() {
    expect(
        full(),
        &[
            "before init: PMIx_server_register_nspace returns PMIX_ERR_INIT",
            "before init: PMIx_server_register_client returns PMIX_ERR_INIT",
            "before init: PMIx_server_setup_fork returns PMIX_ERR_INIT",
            "before init: PMIx_Notify_event returns PMIX_ERR_INIT",
        ],
    );
}

#[test]
fn generate_regex_and_ppn_round_trip_through_register_nspace() {
    let o = full();
    expect(
        o,
        &[
            "regex: PMIx_generate_regex and PMIx_generate_ppn return maps",
            "regex: PMIx_server_register_nspace accepts the maps in PMIX_NODE_MAP and PMIX_PROC_MAP",
        ],
    );
    let mut who = RANKS.to_vec();
    who.push("restarted rank 2");
    expect(
        o,
        &strs(&each(
            &who,
            "PMIX_NODE_MAP and PMIX_PROC_MAP read back as registered",
        )),
    );
    expect(
        null(),
        &["null rank 0: PMIX_NODE_MAP and PMIX_PROC_MAP read back as registered"],
    );
}

#[test]
fn setup_fork_environment_lets_a_child_connect_and_get_job_info() {
    let o = full();
    expect(
        o,
        &[
            "init: PMIx_server_init with PMIX_SERVER_TMPDIR succeeds",
            "register: PMIx_server_register_nspace with a callback returns PMIX_SUCCESS",
            "register: PMIx_server_register_client with getuid()/getgid() succeeds",
            "setup_fork: the environment names the namespace, the rank (replacing an inherited \
             PMIX_RANK) and the server, and keeps the rest",
        ],
    );
    for fact in [
        "PMIx_Init connects with the setup_fork environment",
        "PMIX_JOB_SIZE is 3",
        "PMIX_RANK is its rank",
        "PMIX_LOCAL_RANK from the registered PMIX_PROC_DATA",
        "PMIX_HOSTNAME is nodeA",
        "PMIX_LOCAL_PEERS is 0,1,2",
        "PMIx_Fence over the namespace",
    ] {
        expect(o, &strs(&each(&RANKS, fact)));
    }
}

#[test]
fn client_connected_upcall_runs_for_each_child_with_its_server_object() {
    expect(
        full(),
        &[
            "client_connected2: the upcall runs for each connecting child (rank 2 twice: restarted)",
            "server_object: the upcalls get back the object given to PMIx_server_register_client",
        ],
    );
}

#[test]
fn host_notify_event_upcall_receives_rm_range_events_from_a_child() {
    let o = full();
    expect(
        o,
        &[
            "rank 0: PMIx_Notify_event with PMIX_RANGE_RM returns PMIX_SUCCESS",
            "notify_event: the host's upcall receives a child's RM-range event",
            "notify_event: the RM-range event's source is the notifying child (rm-job-1:0)",
            "notify_event: the RM-range event keeps its range and its info",
        ],
    );
    expect(
        o,
        &strs(&each(&RANKS, "the RM-range event never reaches a child")),
    );
}

#[test]
fn host_notify_to_the_namespace_reaches_every_child_and_is_not_echoed_to_the_host() {
    let o = full();
    expect(
        o,
        &[
            "host notify: PMIx_Notify_event from the host to the namespace returns PMIX_SUCCESS",
            "notify_event: the host's own event is not echoed back to the host",
        ],
    );
    expect(
        o,
        &strs(&each(
            &RANKS,
            "the host's namespace event reaches the child's handler",
        )),
    );
}

#[test]
fn a_childs_namespace_event_reaches_the_host_and_the_other_children() {
    expect(
        full(),
        &[
            "notify_event: a child's namespace-range event also reaches the host",
            "rank 0: the restarted rank 2's event reaches the namespace",
        ],
    );
}

#[test]
fn job_control_from_a_child_reaches_the_host_which_acts_on_it() {
    // fastpmix carries out kill/terminate/signal/pause on local processes
    // itself; restart (and other nodes' processes) is the host's.
    expect(
        full(),
        &[
            "job_control: the host's upcall gets the requester (rank 1) and the target (rank 2)",
            "job_control: the upcall gets PMIX_JOB_CTRL_RESTART with the requester's PMIX_USERID \
             and PMIX_GRPID",
            "job_control: the host kills rank 2 with SIGKILL and starts it again",
            "rank 1: PMIx_Job_control(PMIX_JOB_CTRL_RESTART) returns the host's status and results",
            "restarted rank 2: PMIx_Init connects again as rm-job-1:2",
            "restarted rank 2: PMIX_JOB_SIZE is 3",
            "restarted rank 2: PMIX_RANK is its rank",
        ],
    );
}

#[test]
fn job_control_kill_of_a_local_rank_is_carried_out_by_the_server_without_the_host() {
    expect(
        full(),
        &[
            "rank 1: PMIx_Job_control(PMIX_JOB_CTRL_KILL) of rank 2 returns PMIX_SUCCESS",
            "job_control: PMIX_JOB_CTRL_KILL of a local rank is carried out by the server \
             (SIGKILL) without the host's upcall",
        ],
    );
}

#[test]
fn client_finalized_upcall_runs_only_for_children_that_finalize() {
    // The Standard's upcall is "a client called PMIx_Finalize"; hosts count
    // finalizations. A killed rank is reported as lost instead.
    expect(
        full(),
        &[
            "rank 0: PMIx_Finalize",
            "rank 1: PMIx_Finalize",
            "client_finalized: the upcall runs once for rank 0",
            "client_finalized: the upcall runs once for rank 1",
            "client_finalized: the upcall never runs for a killed rank (it is for PMIx_Finalize)",
            "children: rank 0 exits 0",
            "children: rank 1 exits 0",
        ],
    );
}

#[test]
fn the_server_reports_a_dead_clients_death_itself_under_any_host() {
    // No launcher of ours here: the C host only SIGKILLs rank 2. Its own
    // LOST_CONNECTION handler and its peers hear of it from the server,
    // with rank 2 as source and affected process, once per death.
    expect(
        full(),
        &[
            "lost connection: the server's own handler hears of each killed rank 2 (original \
             and restarted), the rank as source and affected process",
            "death: each killed rank 2 reaches notify_event as PMIX_ERR_PROC_ABORTED to its \
             namespace, the rank as source and affected process",
            "rank 0: the server reports rank 2's death to the namespace, once per death, rank 2 \
             as source and affected process",
        ],
    );
}

#[test]
fn register_events_upcall_runs_when_a_child_registers_an_environment_code() {
    expect(
        full(),
        &[
            "register_events: the upcall names PMIX_EVENT_NODE_DOWN once for three registering \
             children",
            "register_events: codes outside the environment range never reach the host",
            "deregister_events: the upcall names PMIX_EVENT_NODE_DOWN once after the last child \
             left",
        ],
    );
}

#[test]
fn deregister_and_finalize_complete_and_leave_the_server_tmpdir_empty() {
    let teardown = [
        "teardown: PMIx_server_finalize succeeds",
        "teardown: PMIx_server_finalize left PMIX_SERVER_TMPDIR empty",
        "teardown: PMIx_server_register_nspace after finalize returns PMIX_ERR_INIT",
    ];
    let o = full();
    expect(
        o,
        &[
            "teardown: PMIx_server_deregister_client completes with PMIX_SUCCESS",
            "teardown: PMIx_server_deregister_nspace completes with PMIX_SUCCESS",
        ],
    );
    expect(o, &teardown);
    expect(null(), &teardown);
}

/// Slurm's step end: `PMIx_Deregister_event_handler(0, cb)` (a reference
/// it never received) and then, without waiting, `PMIx_server_finalize`.
/// The unknown reference is refused by the call itself, so no callback
/// is left to race the finalize; a real deregistration's callback has run
/// by the time finalize returns.
#[test]
fn a_deregistration_at_step_end_never_races_server_finalize() {
    expect(
        full(),
        &[
            "teardown: deregistering reference 0 (never handed out) is refused by the call, and \
             its callback never runs",
            "teardown: a deregistration's callback has run, with PMIX_SUCCESS, when \
             PMIx_server_finalize returns",
        ],
    );
}

#[test]
fn the_daemon_reports_no_failed_fact_and_exits_zero() {
    for o in [full(), null()] {
        let out = stdout(o);
        assert!(
            !out.lines().any(|l| l.starts_with("FAIL")),
            "a fact failed\n{}",
            dump(o)
        );
        assert!(
            out.lines()
                .any(|l| l.starts_with("done: ") && l.ends_with(" ok, 0 failed")),
            "no summary line\n{}",
            dump(o)
        );
        assert!(o.status.success(), "daemon failed\n{}", dump(o));
    }
}

#[test]
fn a_host_that_completes_upcalls_inside_the_upcall_runs_the_full_scenario() {
    // Open MPI's runtime calls an upcall's callback before it returns
    // (client_connected2, notify_event, register_events and
    // deregister_events here); OpenPMIx 4.2 deadlocks its own progress
    // thread on that. Every fact of the full scenario still holds.
    let o = run(daemon(), &["--sync"], &[]);
    let out = stdout(&o);
    assert!(
        !out.lines().any(|l| l.starts_with("FAIL")),
        "a fact failed\n{}",
        dump(&o)
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("done: ") && l.ends_with(" ok, 0 failed")),
        "no summary line\n{}",
        dump(&o)
    );
    assert!(
        out.contains("ok notify_event: a child's namespace-range event also reaches the host"),
        "{}",
        dump(&o)
    );
    assert!(o.status.success(), "daemon failed\n{}", dump(&o));
}

#[test]
fn null_upcalls_answer_not_supported() {
    expect(
        null(),
        &[
            "null: the server starts a job with a module of NULL upcalls",
            "null: PMIx_Job_control(PMIX_JOB_CTRL_RESTART) returns PMIX_ERR_NOT_SUPPORTED",
            "null: PMIx_Job_control(PMIX_JOB_CTRL_KILL) of another node's process returns \
             PMIX_ERR_NOT_SUPPORTED",
            "null: PMIx_Allocation_request returns PMIX_ERR_NOT_SUPPORTED",
            "null: PMIx_Abort returns PMIX_ERR_NOT_SUPPORTED",
            "null: the child exits 0",
        ],
    );
}

#[test]
fn setup_fork_before_register_client_works_as_resource_managers_call_it() {
    // The environment is the same in any order; the child, forked before
    // its host registers it, connects once the host has.
    expect(
        null(),
        &[
            "null: PMIx_server_setup_fork before PMIx_server_register_client succeeds",
            "null: the child exits 0",
        ],
    );
}

#[test]
fn null_upcalls_still_let_a_child_connect_register_and_notify_the_rm_range() {
    // The RM range is the host alone: without a notify_event upcall the
    // client's notify is refused (PMIX_ERR_NOT_SUPPORTED, nothing sent),
    // not answered PMIX_SUCCESS for an event that goes nowhere; the
    // connection serves on.
    expect(
        null(),
        &[
            "null: a child connects without client_connected",
            "null: registering an environment code succeeds without register_events",
            "null: PMIx_Notify_event with PMIX_RANGE_RM returns PMIX_ERR_NOT_SUPPORTED (no host \
             takes it)",
            "null: a custom range naming another node's process returns PMIX_ERR_NOT_SUPPORTED, \
             one naming this process PMIX_SUCCESS",
            "null: the server keeps serving (fence, finalize) after refusing",
        ],
    );
}

#[test]
fn daemon_leaks_nothing_under_address_sanitizer() {
    for extra in [&[][..], &["--null"][..]] {
        let o = run(
            daemon_asan(),
            extra,
            &[("ASAN_OPTIONS", "detect_leaks=1:exitcode=97")],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("Sanitizer"),
            "sanitizer report ({extra:?})\n{}",
            dump(&o)
        );
        assert!(
            o.status.success(),
            "daemon failed ({extra:?})\n{}",
            dump(&o)
        );
        expect(&o, &["teardown: PMIx_server_finalize succeeds"]);
    }
}

#[test]
fn children_leak_nothing_under_valgrind() {
    // Every child the daemon starts runs under memcheck. In the full
    // scenario rank 2 and its restarted successor are SIGKILLed from
    // outside (memcheck writes no summary then): ranks 0 and 1 run to
    // their end. In the NULL-module scenario the one child does.
    for (tag, extra, finished) in [
        ("rm-children", &[][..], 2),
        ("rm-children-null", &["--null"][..], 1),
    ] {
        let Some(m) = Memcheck::new(tag) else {
            return;
        };
        let o = run_children(daemon(), &m.wrapper(child()), extra, &[]);
        m.assert_clean(&o, finished);
        let out = stdout(&o);
        assert!(
            out.lines()
                .any(|l| l.starts_with("done: ") && l.ends_with(" ok, 0 failed")),
            "{tag}: no clean summary line\n{}",
            dump(&o)
        );
        assert!(o.status.success(), "{tag}: daemon failed\n{}", dump(&o));
    }
}

/// Slurm and Open MPI's runtime call `PMIx_server_setup_fork` in the forked
/// child, with `*env` NULL. A lock another thread of the daemon held at the
/// fork (here one that keeps the server routing host notifications) stays
/// held in the child forever: 50 children, each must get its environment
/// and exit, none may hang (before the fix the first three hung).
#[test]
fn setup_fork_in_a_forked_child_gets_the_environment_while_the_server_is_busy() {
    let o = run(daemon(), &["--fork"], &[]);
    expect(
        &o,
        &[
            "fork: a job of one rank is registered",
            "fork: setup_fork in a forked child, *env NULL, while the server routes events",
        ],
    );
    assert!(o.status.success(), "daemon failed\n{}", dump(&o));
}

#[test]
fn resolve_peers_and_nodes_follow_maps_registered_as_strings_over_two_nodes() {
    // The local ranks resolve this node (NULL) to 0,1 and nodeB to 2,3, and
    // the job's nodes to nodeA,nodeB, from Slurm-style string maps.
    let o = two_nodes();
    for r in 0..2 {
        for fact in [
            "PMIx_Resolve_peers of every node",
            "PMIx_Resolve_nodes lists the job's nodes",
        ] {
            assert!(
                stdout(o).lines().any(|l| l == format!("ok [{r}] {fact}")),
                "rank {r}: {fact}\n{}",
                dump(o)
            );
        }
    }
}

#[test]
fn c_host_registering_like_slurm_gives_every_key_for_self_and_peers_on_both_nodes() {
    // Maps as strings from PMIx_generate_regex/_ppn over two nodes, one of
    // them this one; int where the Standard says uint16/uint32 or a rank;
    // this node's id in every rank's PMIX_PROC_DATA. Each local rank reads
    // every key an MPI library reads at start, for itself, the job and
    // every peer (the other local rank and both ranks on the other node),
    // and checks value and type: the derived node count and node list, the
    // peers' node ids, hostnames, local ranks and their node's size, peers
    // and leader; a peer on the other node gets no cpuset of this node's.
    let o = two_nodes();
    let out = stdout(o);
    assert!(!out.contains("FAIL"), "{}", dump(o));
    for r in 0..2 {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("ok [{r}] peer 3 pmix.nodeid"))),
            "rank {r} did not check a peer on the other node\n{}",
            dump(o)
        );
    }
    expect(
        o,
        &[
            "twonode: PMIx_server_register_nspace takes the job as Slurm registers it",
            "twonode: rank 0 read every key right and exits 0",
            "twonode: rank 1 read every key right and exits 0",
            "[0] job pmix.num.nodes",
            "[1] job pmix.nlist",
            "[0] peer 2 pmix.hname",
            "[1] peer 2 pmix.nodeid",
            "[0] peer 3 pmix.lrank",
            "[0] peer 2 pmix.cpuset is not found",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", dump(o));
}

#[test]
fn daemon_registering_a_hand_built_two_node_job_leaks_nothing_under_address_sanitizer() {
    // The two-node scenario builds every PMIX_PROC_DATA array by hand with
    // malloc and frees its sources right after registering, as Slurm does:
    // the server keeps deep copies and, after deregistration and
    // finalize, nothing it made is left (LeakSanitizer over the daemon).
    let o = run_children(
        daemon_asan(),
        keys_child(),
        &["--twonode"],
        &[("ASAN_OPTIONS", "detect_leaks=1:exitcode=97")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("Sanitizer"), "sanitizer report\n{}", dump(&o));
    assert!(o.status.success(), "daemon failed\n{}", dump(&o));
    expect(
        &o,
        &[
            "twonode: rank 0 read every key right and exits 0",
            "teardown: PMIx_server_finalize succeeds",
        ],
    );
}

/// What Open MPI 4.1's runtime asks of the server library besides a
/// resource manager's usual calls (`tests/c/runtime_server_calls.c`):
/// Store_internal and Get in the server process, clients registered
/// before their namespace, NULL strings in job info, application setup.
#[test]
fn what_open_mpis_runtime_calls_in_the_server_process_works() {
    let exe = build_program(
        "runtime_server_calls",
        Lang::C,
        &["tests/c/runtime_server_calls.c"],
        &[],
    );
    let mut cmd = Command::new(&exe);
    cmd.stdin(std::process::Stdio::null());
    let o = output_within(cmd, LIMIT);
    assert!(o.status.success(), "{}", dump(&o));
    expect(
        &o,
        &[
            "store_internal: the daemon stores its own URI",
            "get: the daemon reads back its own URI, the latest stored",
            "get: a peer's URI stored by the daemon",
            "get: a NULL key gives every key of the process as an info array",
            "get: nothing stored is PMIX_ERR_NOT_FOUND",
            "setup_application: calls back after returning with success and no info",
            "setup_application: a NULL namespace is refused",
            "setup_application: a NULL callback is refused",
            "register_client: before its namespace, accepted",
            "register_nspace: after its client, with a NULL string info",
            "setup_local_support: completes with success through its callback",
            "setup_local_support: without a callback, the call's result",
            "register_client: the early client connects and finalizes",
        ],
    );
    assert!(stdout(&o).contains("done"), "{}", dump(&o));
}
