//! C client programs (`tests/c/client_*.c`) built against
//! `include/` and libfastpmix, run under `fastpmix run`. Each program prints
//! result lines; the tests here assert on them and on the job's exit status.
//! A job is run once and shared by the tests that read its output.
//!
//! Negative checks in the programs are ordered, not timed, wherever the
//! protocol allows: a sentinel event sent after the event under test by the
//! same source arrives after it.

mod cabi;

use cabi::{
    assert_ok, build_program, dump, field, line, lines_of, run_job_memcheck, run_with, scratch,
    stdout, Lang, Memcheck,
};
use fastpmix::Status;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// Builds `tests/c/<name>.c` once per test process.
fn program(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    built
        .entry(name.to_owned())
        .or_insert_with(|| build_program(name, Lang::C, &[&format!("tests/c/{name}.c")], &[]))
        .clone()
}

/// A fresh, empty scratch directory for one job.
fn job_dir(tag: &str) -> PathBuf {
    let d = scratch().join(format!("job-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("job dir");
    d
}

/// `fastpmix run -n N [opts] -- prog args`.
fn job(n: u32, opts: &[&str], prog: &str, args: &[&str]) -> Output {
    let exe = program(prog);
    let n = n.to_string();
    let mut pre = vec!["run", "-n", &n];
    pre.extend_from_slice(opts);
    pre.push("--");
    run_with(&pre, &exe, args, &[])
}

/// Asserts rank `rank` printed exactly `want`.
fn expect_line(o: &Output, rank: u32, want: &str) {
    let prefix = want.split(' ').next().unwrap_or(want);
    let all = lines_of(o, rank, prefix);
    assert!(
        all.iter().any(|l| l == want),
        "rank {rank}: no line {want:?}; lines starting with {prefix:?}: {all:?}\n{}",
        dump(o)
    );
}

// ------------------------------------------------------------------ handlers

fn order_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| job(1, &[], "client_order", &[]))
}

#[test]
fn c_order_program_runs_to_completion() {
    let o = order_job();
    assert_ok(o);
    expect_line(o, 0, "done");
}

#[test]
fn chain_order_follows_first_last_category_positions_before_after_prepend_append() {
    // FIRST → single-code (FIRST_IN_CATEGORY, then newest-first with
    // PREPEND/BEFORE/AFTER/APPEND where they put it, LAST_IN_CATEGORY) →
    // multi-code (the same directives) → default (the same) → LAST. Every
    // placement attribute, in every category.
    expect_line(
        order_job(),
        0,
        "chain -6101 first,s_first,s_plain,s_prepend,s_b,s_after_b,s_before_a,s_a,s_append,\
         s_last,m_first,m_a,m_after_a,m_b,m_last,d_first,d_b,d_before_a,d_a,d_last,last",
    );
}

#[test]
fn multi_code_handlers_run_for_each_of_their_codes_after_single_code_ones() {
    // The FIRST handler is single-code for -6101: not in this chain.
    expect_line(
        order_job(),
        0,
        "chain -6102 s_other,m_first,m_a,m_after_a,m_b,m_last,d_first,d_b,d_before_a,d_a,\
         d_last,last",
    );
}

#[test]
fn results_pass_down_the_chain_and_a_cleared_key_removes_the_entry() {
    let o = order_job();
    // r2 (completing 50 ms later from its own thread) sees r1's status
    // entry and returned infos; it clears test.r1.num in place.
    expect_line(o, 0, "results r2 name=r2 r1=0 r1.data=alpha r1.num=7");
    expect_line(
        o,
        0,
        "results r3 r1=0 r1.data=alpha r1.num=absent r2=0 r2.data=beta",
    );
}

#[test]
fn action_complete_stops_the_chain() {
    // r3 completes with PMIX_EVENT_ACTION_COMPLETE: r4, the default
    // handlers and LAST never run.
    expect_line(order_job(), 0, "chain -6103 r1,r2,r3");
}

#[test]
fn returned_results_are_released_through_the_handlers_callback() {
    expect_line(order_job(), 0, "released r1=1 r2=1");
}

#[test]
fn handler_info_holds_its_name_and_return_object() {
    expect_line(order_job(), 0, "retobj ok=1");
    expect_line(
        order_job(),
        0,
        "results r2 name=r2 r1=0 r1.data=alpha r1.num=7",
    );
}

#[test]
fn handler_source_is_the_notifying_process() {
    expect_line(order_job(), 0, "source_ok 1");
}

#[test]
fn blocking_registration_returns_distinct_references_of_at_least_one() {
    let l = line(order_job(), 0, "refs blocking ");
    let min: i64 = field(&l, "min").parse().unwrap();
    assert!(min >= 1, "{l}");
    assert_eq!(field(&l, "distinct"), "1", "{l}");
}

#[test]
fn non_blocking_registration_calls_back_with_the_reference_after_returning() {
    let o = order_job();
    // env_nb: an environment code (PMIX_EVENT_NODE_DOWN), announced to the
    // server before the callback.
    for name in ["m_b", "d_b", "r4", "env_nb"] {
        let l = line(o, 0, &format!("nbreg {name} "));
        assert_eq!(field(&l, "status"), "0", "{l}");
        assert!(field(&l, "ref").parse::<u64>().unwrap() >= 1, "{l}");
        assert_eq!(field(&l, "after_return"), "1", "{l}");
    }
}

#[test]
fn notify_callback_runs_after_the_call_returned() {
    expect_line(order_job(), 0, "notify_cb status=0 after_return=1");
}

#[test]
fn no_handler_call_after_blocking_deregistration_returns() {
    expect_line(order_job(), 0, "dereg blocking rc=0 calls_after=0");
}

#[test]
fn no_handler_call_after_non_blocking_deregistration_called_back() {
    expect_line(
        order_job(),
        0,
        "dereg nb rc=0 cb_status=0 after_return=1 calls_after=0",
    );
}

#[test]
fn a_pending_non_blocking_registration_already_holds_its_place_and_name() {
    // slot_b is registered (BEFORE slot_a) right after PMIx_Register_event_handler
    // for slot_a returned, before slot_a's callback: the engine inserts a
    // non-blocking registration as pending at once (architecture.md, "No
    // event before the registration callback ran"), so slot_b finds it.
    // (The default handlers and LAST follow.)
    expect_line(
        order_job(),
        0,
        "nb_slot rc=1 chain=slot_b,slot_a,d_first,d_b,d_before_a,d_a,d_last,last",
    );
}

// ------------------------------------------- PROC_LOCAL in the caller's thread

/// `FASTPMIX_PROC_LOCAL_INLINE=1`: a blocking PROC_LOCAL notify runs the
/// handler in the notifying thread, before it returns, as OpenPMIx 4.2
/// does; without it, on the library's thread. Every notify runs it once
/// either way.
#[test]
fn proc_local_handlers_run_in_the_notifying_thread_only_when_asked() {
    let exe = program("client_proc_local_inline");
    let inline = run_with(
        &["run", "-n", "1", "--"],
        &exe,
        &[],
        &[("FASTPMIX_PROC_LOCAL_INLINE", "1")],
    );
    assert_ok(&inline);
    expect_line(
        &inline,
        0,
        "proc_local same_thread=1 before_return=1 calls=100",
    );
    let default = job(1, &[], "client_proc_local_inline", &[]);
    assert_ok(&default);
    let l = lines_of(&default, 0, "proc_local ");
    assert_eq!(l.len(), 1, "{}", dump(&default));
    assert!(
        l[0].starts_with("proc_local same_thread=0 ") && l[0].ends_with(" calls=100"),
        "{l:?}"
    );
}

/// The chain semantics of the C handlers hold when they run in the
/// notifying thread: the ordering program and the complete-then-read
/// scenarios (a handler completing from another thread, or after it
/// returned) give the same lines as on the library's thread.
#[test]
fn c_chains_behave_the_same_when_proc_local_handlers_run_inline() {
    let env = [("FASTPMIX_PROC_LOCAL_INLINE", "1")];
    let o = run_with(
        &["run", "-n", "1", "--"],
        &program("client_complete_first"),
        &[],
        &env,
    );
    assert_ok(&o);
    assert_reads_after_completion_are_intact(&o);
    expect_line(&o, 0, "done");
    let inline = run_with(
        &["run", "-n", "1", "--"],
        &program("client_order"),
        &[],
        &env,
    );
    assert_ok(&inline);
    let mut want = lines_of(order_job(), 0, "");
    let mut got = lines_of(&inline, 0, "");
    // Lines that say on which thread something ran are expected to differ.
    let thread_bound = |l: &String| l.contains("thread") || l.contains("after_return");
    want.retain(|l| !thread_bound(l));
    got.retain(|l| !thread_bound(l));
    want.sort();
    got.sort();
    assert!(want.len() >= 10, "the ordering program's lines: {want:?}");
    assert_eq!(got, want, "{}", dump(&inline));
}

// ------------------------------------------------- complete, then read

/// What each complete-then-read scenario of `client_complete_first.c`
/// printed: the source, payload, affected process and prior result it read
/// after (or around) its completion are the event's own.
fn assert_reads_after_completion_are_intact(o: &Output) {
    for s in ["before", "inside", "after", "thread", "later"] {
        let lines = lines_of(o, 0, &format!("read {s} "));
        assert_eq!(lines.len(), 1, "scenario {s}: {lines:?}\n{}", dump(o));
        let f: Vec<&str> = lines[0].split(' ').collect();
        assert_eq!(f.len(), 6, "scenario {s}: {:?}\n{}", lines[0], dump(o));
        let (src, payload, affected, result) = (f[2], f[3], f[4], f[5]);
        assert!(
            src.starts_with("fastpmix-job-") && src.ends_with(":0"),
            "scenario {s}: source {src:?}\n{}",
            dump(o)
        );
        assert_eq!(payload, format!("payload-{s}"), "scenario {s}\n{}", dump(o));
        assert_eq!(affected, src, "scenario {s}: affected proc\n{}", dump(o));
        assert_eq!(
            result,
            format!("result-{s}"),
            "scenario {s}: results\n{}",
            dump(o)
        );
    }
}

#[test]
fn handler_arrays_stay_valid_until_both_return_and_completion_whichever_is_later() {
    // Complete before reading, inside, after returning (main thread), from
    // another thread while the handler runs, and from another thread after
    // it returned: every read sees the event's own values.
    let o = job(1, &[], "client_complete_first", &[]);
    assert_ok(&o);
    assert_reads_after_completion_are_intact(&o);
    expect_line(&o, 0, "done");
}

#[test]
fn handler_that_completes_then_reads_reads_no_freed_memory_under_valgrind() {
    if let Some((o, m)) = under_valgrind("complete-first", 1, &[], "client_complete_first", &[]) {
        assert_clean(&o, &m, 1);
        assert_reads_after_completion_are_intact(&o);
    }
}

#[test]
fn c_handler_chain_of_20000_handlers_runs_every_handler_once() {
    // 20,000 named C handlers appended for one code, one event: each runs
    // once, in order, seeing exactly the status entries of those before
    // it; the LAST handler sees all 20,000, in order, each PMIX_SUCCESS.
    // (Each C handler used to get every earlier result converted afresh:
    // 13 s for this event. The program fails only if no handler runs for
    // 30 s.)
    let o = job(1, &[], "client_long_chain", &[]);
    assert_ok(&o);
    expect_line(&o, 0, "chain 20000 bad=0 results=20000 ok");
    expect_line(&o, 0, "done");
}

// ------------------------------------------------------- real-code idioms

fn idioms_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| job(2, &[], "client_idioms", &[]))
}

#[test]
fn an_untyped_info_is_ignored_unless_required_which_is_refused_at_the_call() {
    // A hand-built array whose entry never got a type (PMIX_UNDEF): the
    // request goes on without it (OpenPMIx accepts it); required, the
    // non-blocking call returns the error and never calls back.
    let o = idioms_job();
    for r in 0..2 {
        expect_line(o, r, "untyped rc=PMIX_SUCCESS cb=PMIX_SUCCESS signals=1");
        expect_line(
            o,
            r,
            "untyped_required rc=PMIX_ERR_BAD_PARAM callback_ran=0 signals=1",
        );
    }
}

#[test]
fn blocking_calls_from_inside_a_handler_return() {
    let o = idioms_job();
    for r in 0..2 {
        expect_line(
            o,
            r,
            "from_handler get=PMIX_SUCCESS size=2 job_control=PMIX_SUCCESS register=ref notify=PMIX_SUCCESS",
        );
        expect_line(o, r, "from_handler_done inner=1 signals=1");
    }
}

#[test]
fn a_request_too_large_for_the_control_channel_is_refused_at_the_call_and_the_connection_stays() {
    // 2 MiB of log text, job-control info and fence info: BAD_PARAM from
    // the call (the non-blocking ones never call back), nothing sent, and a
    // fence of both ranks afterwards still succeeds. Before, the client was
    // disconnected for good and the job failed. The same fence info on a
    // fence over the whole job goes through the fence barrier, where
    // nothing is sent: it succeeds.
    let o = idioms_job();
    for r in 0..2 {
        expect_line(
            o,
            r,
            "large log=PMIX_ERR_BAD_PARAM log_nb=PMIX_ERR_BAD_PARAM \
             job_control_nb=PMIX_ERR_BAD_PARAM fence_big=PMIX_ERR_BAD_PARAM fence_big_all=PMIX_SUCCESS callbacks=0 \
             fence=PMIX_SUCCESS",
        );
    }
}

#[test]
fn an_abort_with_a_message_over_the_frame_still_aborts_the_job_with_its_status() {
    // The message is cut (and says so) rather than the abort refused.
    let o = job(2, &[], "client_idioms", &["abort"]);
    assert_eq!(o.status.code(), Some(7), "{}", dump(&o));
}

#[test]
fn a_child_forked_after_init_gets_err_init_and_the_parents_connection_stays_in_step() {
    // Before, the child's first blocking call never returned and took a
    // reply meant for the parent, whose fences then went out of step.
    let o = idioms_job();
    for r in 0..2 {
        expect_line(
            o,
            r,
            "fork child=0 fence=PMIX_SUCCESS job_control=PMIX_SUCCESS initialized=1",
        );
    }
}

#[test]
fn finalize_with_events_in_flight_succeeds_on_both_sides() {
    let o = idioms_job();
    assert_ok(o);
    for r in 0..2 {
        expect_line(o, r, "finalize rc=PMIX_SUCCESS");
        expect_line(o, r, "done");
    }
}

// -------------------------------------------------------------------- ranges

const PROC_LOCAL: i32 = -6201;
const LOCAL: i32 = -6202;
const NAMESPACE: i32 = -6203;
const SESSION: i32 = -6204;
const GLOBAL: i32 = -6205;
const CUSTOM_2: i32 = -6206;
const CUSTOM_01: i32 = -6207;
const CUSTOM_ALL: i32 = -6208;
const RM: i32 = -6209;

fn ranges_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| {
        let d = job_dir("ranges");
        job(3, &[], "client_ranges", &[d.to_str().unwrap()])
    })
}

#[test]
fn c_ranges_program_runs_to_completion() {
    let o = ranges_job();
    assert_ok(o);
    for r in 0..3 {
        expect_line(o, r, "done");
    }
}

/// PL-6 through the C ABI: PROC_LOCAL events notified before any handler
/// existed are offered to each later matching registration, once: the
/// environment event, and the job event no handler took; not the
/// `PMIX_EVENT_DO_NOT_CACHE` one. Each names this process as its source.
#[test]
fn proc_local_events_are_kept_for_handlers_registered_later() {
    let o = job(1, &[], "client_kept", &[]);
    assert_ok(&o);
    expect_line(&o, 0, "kept job -6201:2");
    expect_line(&o, 0, "kept env -231:1");
    expect_line(&o, 0, "source_ok 1");
    expect_line(&o, 0, "done");
}

fn summary(codes: &[i32]) -> String {
    let v: Vec<String> = codes.iter().map(i32::to_string).collect();
    format!("summary {}", v.join(","))
}

#[test]
fn notify_in_every_range_reaches_exactly_the_processes_the_range_names() {
    // Rank 1 notifies. PROC_LOCAL: itself only. LOCAL, NAMESPACE, SESSION,
    // GLOBAL: everyone (the generator runs its own chain once). CUSTOM:
    // the listed ranks (the wildcard rank = the namespace). RM: the host
    // only, not even the generator.
    let o = ranges_job();
    let every = [LOCAL, NAMESPACE, SESSION, GLOBAL];
    let want: [Vec<i32>; 3] = [
        [&every[..], &[CUSTOM_01, CUSTOM_ALL]].concat(),
        [&[PROC_LOCAL][..], &every, &[CUSTOM_01, CUSTOM_ALL]].concat(),
        [&every[..], &[CUSTOM_2, CUSTOM_ALL]].concat(),
    ];
    for (r, codes) in want.iter().enumerate() {
        expect_line(o, r as u32, &summary(codes));
    }
}

#[test]
fn rm_range_from_a_client_reaches_no_process() {
    let o = ranges_job();
    for r in 0..3 {
        let l = line(o, r, "summary ");
        assert!(!l.contains(&RM.to_string()), "rank {r}: {l}");
    }
}

#[test]
fn notify_from_a_client_succeeds_in_every_range() {
    let o = ranges_job();
    for code in [
        PROC_LOCAL, LOCAL, NAMESPACE, SESSION, GLOBAL, CUSTOM_2, CUSTOM_01, CUSTOM_ALL, RM,
    ] {
        expect_line(o, 1, &format!("notify {code} rc=0"));
    }
}

#[test]
fn event_info_arrives_intact_strings_ints_procs_bytes_and_data_arrays() {
    let o = ranges_job();
    let mut n = 0;
    for r in 0..3 {
        for l in lines_of(o, r, "got ") {
            assert_eq!(field(&l, "info_ok"), "1", "rank {r}: {l}");
            n += 1;
        }
    }
    assert_eq!(n, 19, "events received in all\n{}", dump(o));
}

#[test]
fn the_source_is_the_real_sender_whatever_the_client_passes() {
    // The NAMESPACE event was notified with a source naming rank 0.
    let o = ranges_job();
    for r in 0..3 {
        for l in lines_of(o, r, "got ") {
            assert_eq!(field(&l, "src"), "1", "rank {r}: {l}");
            assert_eq!(field(&l, "srcns_ok"), "1", "rank {r}: {l}");
        }
    }
}

#[test]
fn a_registration_range_filters_by_where_the_event_was_generated() {
    // PMIX_RANGE at registration: PROC_LOCAL takes only this process's own
    // events; NAMESPACE takes those of its namespace.
    let o = ranges_job();
    expect_line(o, 2, "filtered filter_pl 0");
    expect_line(o, 0, "filtered filter_ns 1");
}

// --------------------------------------------------------------------- fault

fn fault_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| {
        let d = job_dir("fault");
        job(
            3,
            &["--abort-timeout", "60"],
            "client_fault",
            &[d.to_str().unwrap()],
        )
    })
}

#[test]
fn peers_hear_of_a_killed_process_with_the_affected_proc_and_cope() {
    let o = fault_job();
    for r in [0, 2] {
        expect_line(
            o,
            r,
            "saw PMIX_ERR_PROC_ABORTED affected=1 src=* srcns_ok=1 exit=137 terminate_job=1 timeout=60",
        );
        expect_line(o, r, "handled");
    }
    assert!(lines_of(o, 1, "handled").is_empty(), "{}", dump(o));
}

#[test]
fn after_a_fault_a_fence_over_the_job_fails_and_the_survivors_still_fence() {
    let o = fault_job();
    for r in [0, 2] {
        expect_line(o, r, "fence_all rc=PMIX_ERR_LOST_CONNECTION");
        expect_line(o, r, "fence_survivors rc=PMIX_SUCCESS");
    }
}

#[test]
fn abort_from_c_ends_the_namespace_with_the_callers_status_and_message() {
    let d = job_dir("abort");
    let o = job(
        3,
        &["--abort-timeout", "60"],
        "client_fault",
        &[d.to_str().unwrap(), "abort"],
    );
    assert_eq!(o.status.code(), Some(7), "{}", dump(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.contains(":1 called PMIx_Abort (status 7): c-abort: giving up")),
        "{}",
        dump(&o)
    );
    // Nobody outlived it, and PMIx_Abort never returned.
    assert!(!stdout(&o).contains("FAIL"), "{}", dump(&o));
}

#[test]
fn a_job_with_a_killed_process_exits_with_its_status() {
    let o = fault_job();
    assert_eq!(o.status.code(), Some(137), "{}", dump(o));
}

// --------------------------------------------------------------- job control

fn jobctl(mode: &str, opts: &[&str]) -> (Output, PathBuf) {
    let d = job_dir(&format!("jobctl-{mode}"));
    let o = job(2, opts, "client_jobctl", &[mode, d.to_str().unwrap()]);
    (o, d)
}

#[test]
fn job_ctrl_pause_stops_another_rank_and_resume_nb_continues_it() {
    let (o, _) = jobctl("pause", &[]);
    assert_ok(&o);
    let l = line(&o, 0, "pause ");
    assert_eq!(field(&l, "rc"), "0", "{l}");
    expect_line(&o, 0, "paused state=T");
    expect_line(&o, 0, "resume_nb rc=0 cb_status=0 after_return=1");
    let l = line(&o, 0, "resumed state=");
    assert!(matches!(field(&l, "state"), "S" | "R"), "{l}");
    for r in 0..2 {
        expect_line(&o, r, "done");
    }
}

#[test]
fn job_ctrl_kill_ends_another_rank_and_the_requester_hears_it_aborted() {
    let (o, _) = jobctl("kill", &["--keep-going"]);
    expect_line(&o, 0, "kill rc=0");
    expect_line(&o, 0, "killed aborted_seen=1 state=?");
    expect_line(&o, 0, "done");
    assert!(lines_of(&o, 1, "done").is_empty(), "{}", dump(&o));
    assert_eq!(o.status.code(), Some(128 + 9), "{}", dump(&o));
}

#[test]
fn job_ctrl_cleanup_removes_registered_paths_after_the_registrant_exits() {
    let (o, d) = jobctl("cleanup", &[]);
    assert_ok(&o);
    expect_line(&o, 1, "cleanup_dir rc=0");
    expect_line(&o, 1, "cleanup_file rc=0 cb_status=0 after_return=1");
    expect_line(&o, 0, "before dir=1 file=1");
    expect_line(&o, 0, "after dir=0 file=0");
    assert!(!d.join("cdir").exists() && !d.join("cfile").exists());
}

#[test]
fn job_ctrl_checkpoint_by_declared_event_completes_blocking_and_nb() {
    let (o, _) = jobctl("checkpoint", &[]);
    assert_ok(&o);
    expect_line(&o, 1, "declare rc=0");
    expect_line(&o, 1, "checkpointing snap1");
    expect_line(&o, 1, "checkpointing snap2");
    expect_line(&o, 1, "checkpoints 2");
    expect_line(&o, 0, "checkpoint rc=0 ckpt=snap1");
    expect_line(
        &o,
        0,
        "checkpoint_nb rc=0 cb_status=0 after_return=1 ckpt=snap2",
    );
    expect_line(&o, 0, "complete affected=1 ckpt=snap1");
    expect_line(&o, 0, "complete affected=1 ckpt=snap2");
}

// ---------------------------------------------------------------- monitoring

fn monitor(mode: &str) -> Output {
    let d = job_dir(&format!("monitor-{mode}"));
    job(1, &[], "client_monitor", &[mode, d.to_str().unwrap()])
}

#[test]
fn heartbeat_alert_comes_once_the_beats_stop_never_while_beating() {
    let o = monitor("heartbeat");
    assert_ok(&o);
    expect_line(&o, 0, "monitor rc=0");
    expect_line(
        &o,
        0,
        &format!("send_heartbeat_nb rc={}", Status::OPERATION_SUCCEEDED.0),
    );
    expect_line(&o, 0, "beating alerts=0");
    // Generated by the server about this process; APP_CONTROL: the
    // launcher leaves the process alone (the job succeeds).
    expect_line(
        &o,
        0,
        "alert PMIX_MONITOR_HEARTBEAT_ALERT affected_me=1 src_me=0 srcns_ok=1",
    );
    expect_line(&o, 0, "done");
}

#[test]
fn file_monitor_alerts_once_the_file_stops_changing() {
    let o = monitor("file");
    assert_ok(&o);
    expect_line(&o, 0, "file_monitor_nb rc=0 cb_status=0 after_return=1");
    expect_line(&o, 0, "changing alerts=0");
    expect_line(
        &o,
        0,
        "alert PMIX_MONITOR_FILE_ALERT affected_me=1 file_ok=1",
    );
    expect_line(&o, 0, "done");
}

fn usage_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| monitor("usage"))
}

#[test]
fn proc_resource_usage_reports_this_process_blocking_and_nb() {
    let o = usage_job();
    expect_line(
        o,
        0,
        "usage rc=0 reports=1 procid_ok=1 pid_ok=1 nthreads_ok=1",
    );
    expect_line(o, 0, "usage_nb rc=0 cb_status=0 after_return=1 pid_ok=1");
    expect_line(o, 0, "done");
}

#[test]
fn proc_resource_usage_monitor_with_a_null_array_reports_every_field() {
    // The Standard: PMIX_MONITOR_PROC_RESOURCE_USAGE is a
    // pmix_data_array_t*; "if the provided array is NULL, then all
    // resources shall be monitored". C says it with
    // PMIX_INFO_LOAD(&m, KEY, NULL, PMIX_DATA_ARRAY).
    expect_line(
        usage_job(),
        0,
        "usage_all darray rc=0 pid_ok=1 nthreads_ok=1",
    );
}

#[test]
fn proc_resource_usage_monitor_loaded_as_a_null_pointer_reports_every_field() {
    // PMIX_INFO_LOAD(&m, KEY, NULL, PMIX_POINTER): the same NULL, typed the
    // way void attributes are loaded. OpenPMIx passes the monitor through
    // untyped, so code that does this works there; a NULL monitor value is
    // "no value" whatever its type tag.
    expect_line(
        usage_job(),
        0,
        "usage_all pointer rc=0 pid_ok=1 nthreads_ok=1",
    );
}

// ------------------------------------------------------------------- logging

/// Lines of `text` that are `<RFC 3339 time> <msg>`.
fn stamped(text: &str, msg: &str) -> usize {
    text.lines()
        .filter(|l| {
            l.split_once(' ').is_some_and(|(ts, rest)| {
                rest == msg
                    && ts.len() >= 20
                    && ts.as_bytes()[4] == b'-'
                    && ts.as_bytes()[10] == b'T'
                    && ts.ends_with('Z')
            })
        })
        .count()
}

fn log_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| job(1, &[], "client_log", &[]))
}

#[test]
fn log_to_stdout_and_stderr_with_generated_time_stamps_blocking_and_nb() {
    let o = log_job();
    assert_ok(o);
    for l in [
        "log_stdout rc=0",
        "log_stderr rc=0",
        "log_plain rc=0",
        "log_two rc=0",
    ] {
        expect_line(o, 0, l);
    }
    expect_line(o, 0, "log_nb rc=0 cb_status=0 after_return=1");
    // The server writes local channels on the launcher's own streams.
    let out = stdout(o);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(stamped(&out, "c-log blocking stdout"), 1, "{}", dump(o));
    assert_eq!(stamped(&err, "c-log blocking stderr"), 1, "{}", dump(o));
    assert_eq!(stamped(&out, "c-log nb stdout"), 1, "{}", dump(o));
    assert_eq!(out.lines().filter(|l| *l == "c-log plain").count(), 1);
    assert_eq!(out.lines().filter(|l| *l == "c-log two out").count(), 1);
    assert_eq!(err.lines().filter(|l| *l == "c-log two err").count(), 1);
}

#[test]
fn log_once_uses_only_the_first_channel_that_succeeds_in_the_callers_order() {
    let o = log_job();
    assert_ok(o);
    expect_line(o, 0, "log_once rc=0");
    let out = stdout(o);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        err.lines().filter(|l| *l == "c-log once err").count(),
        1,
        "{}",
        dump(o)
    );
    assert!(!out.contains("c-log once out"), "{}", dump(o));
    assert!(!err.contains("c-log once out"), "{}", dump(o));
}

// ------------------------------------------------------------------- helpers

fn helpers_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| job(1, &[], "client_helpers", &[]))
}

/// The checks of the helpers program that did not pass, among those whose
/// name starts with one of `prefixes`.
fn failed_checks(o: &Output, prefixes: &[&str]) -> Vec<String> {
    let all = lines_of(o, 0, "check ");
    assert!(all.len() > 60, "too few checks ran:\n{}", dump(o));
    let name = |l: &String| l.split(' ').nth(1).unwrap_or("").to_owned();
    for p in prefixes {
        assert!(
            all.iter().any(|l| name(l).starts_with(p)),
            "no check named {p}* ran:\n{}",
            dump(o)
        );
    }
    all.into_iter()
        .filter(|l| {
            let name = l.split(' ').nth(1).unwrap_or("");
            prefixes.iter().any(|p| name.starts_with(p))
        })
        .filter(|l| !l.ends_with(" ok=1"))
        .collect()
}

#[test]
fn c_helpers_program_runs_to_completion_and_every_check_passes() {
    let o = helpers_job();
    assert_ok(o);
    // value_xfer_into_null has its own test (it depends on the header's
    // PMIX_VALUE_XFER macro); every other check must pass.
    let bad: Vec<String> = failed_checks(o, &[""])
        .into_iter()
        .filter(|l| !l.starts_with("check value_xfer_into_null "))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    expect_line(o, 0, "done");
}

#[test]
fn proc_value_and_data_array_macros_and_the_direct_load_functions() {
    // PMIX_PROC_CONSTRUCT/DESTRUCT/RELEASE, PMIX_VALUE_CREATE/FREE over an
    // array, PMIX_DATA_ARRAY_RELEASE, PMIX_RANK_IS_VALID, PMIX_NSPACE_INVALID,
    // PMIX_PROCID_INVALID; PMIx_Info_load, PMIx_Value_load and
    // PMIx_Value_destruct called directly, their status checked.
    let bad = failed_checks(
        helpers_job(),
        &[
            "proc_construct",
            "proc_release",
            "value_create_free",
            "data_array_release",
            "rank_is_valid",
            "nspace_invalid",
            "procid_invalid",
            "direct_",
        ],
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn a_null_data_array_loads_copies_and_releases_as_a_value() {
    // PMIx_Info_load(&i, key, NULL, PMIX_DATA_ARRAY): as in OpenPMIx, a
    // value of type PMIX_DATA_ARRAY holding NULL (the Standard's "NULL
    // array", e.g. every field of a resource-usage monitor).
    let bad = failed_checks(helpers_job(), &["null_darray_"]);
    assert!(bad.is_empty(), "{bad:#?}");
    assert_eq!(
        lines_of(helpers_job(), 0, "check null_darray_").len(),
        1,
        "{}",
        dump(helpers_job())
    );
}

#[test]
fn info_load_xfer_free_round_trip_every_type_and_data_arrays() {
    let bad = failed_checks(
        helpers_job(),
        &["info_rt_", "info_load_", "array_load_", "info_free_"],
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn value_load_unload_xfer_release_round_trip_every_type_and_data_arrays() {
    let bad = failed_checks(helpers_job(), &["value_rt_"]);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn value_xfer_into_a_null_pointer_allocates_the_destination() {
    // OpenPMIx's PMIX_VALUE_XFER(r, v, s) mallocs `v` when it is NULL;
    // code written against it (and compiled against our header) does this.
    let bad = failed_checks(helpers_job(), &["value_xfer_into_null"]);
    assert!(
        bad.is_empty(),
        "{bad:#?} {:?}",
        lines_of(helpers_job(), 0, "value_xfer_into_null")
    );
}

#[test]
fn data_array_and_info_list_helpers_build_and_release() {
    let bad = failed_checks(helpers_job(), &["data_array_", "info_list_"]);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn check_macros_system_event_info_true_and_required_flags() {
    let bad = failed_checks(
        helpers_job(),
        &[
            "check_",
            "proc_create_free",
            "system_event",
            "info_true",
            "info_required",
            "info_destruct",
        ],
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn initialized_version_and_error_string() {
    let o = helpers_job();
    let bad = failed_checks(o, &["initialized", "finalize", "version", "error_string"]);
    assert!(bad.is_empty(), "{bad:#?}");
    expect_line(
        o,
        0,
        "error_string PMIX_ERR_BAD_PARAM|PMIX_SUCCESS|PMIX_EVENT_NODE_DOWN",
    );
}

// ------------------------------------------------------------- get and fence

#[test]
fn get_with_a_key_macro_passed_directly_compiles_cleanly_and_works() {
    // `PMIx_Get(&proc, PMIX_JOB_SIZE, NULL, 0, &val)`: the most common PMIx
    // line. It must build with -Wall -Wextra -Werror (the key parameter is
    // `const char key[]` in the Standard's prototype, as in OpenPMIx).
    let o = job(1, &[], "client_literal_key", &[]);
    assert_ok(&o);
    expect_line(&o, 0, "literal get rc=0 value=1");
    expect_line(&o, 0, "literal get_nb rc=0 cb_status=0 value=1");
    expect_line(&o, 0, "done");
}

fn get_fence_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| {
        let d = job_dir("get-fence");
        job(3, &[], "client_get_fence", &[d.to_str().unwrap()])
    })
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("hostname")
        .trim()
        .to_owned()
}

#[test]
fn get_returns_the_job_and_process_information_the_launcher_registered() {
    let o = get_fence_job();
    let host = hostname();
    let mut bad = Vec::new();
    for r in 0..3u32 {
        let other = (r + 1) % 3;
        let ns = lines_of(o, r, "get self pmix.nspace ")
            .first()
            .map(|l| field(l, "value").to_owned())
            .unwrap_or_default();
        assert!(
            ns.starts_with("fastpmix-job-"),
            "rank {r}: {ns:?}\n{}",
            dump(o)
        );
        let job_level = [
            ("pmix.nspace", "string", ns.clone()),
            ("pmix.job.size", "uint32", "3".into()),
            ("pmix.univ.size", "uint32", "3".into()),
            ("pmix.local.size", "uint32", "3".into()),
            ("pmix.lpeers", "string", "0,1,2".into()),
            ("pmix.hname", "string", host.clone()),
            ("pmix.nodeid", "uint32", "0".into()),
        ];
        let mut want: Vec<(String, String)> = Vec::new();
        for who in ["self", "other", "wildcard"] {
            for (k, t, v) in &job_level {
                want.push((
                    format!("get {who} {k} "),
                    format!("rc=0 type={t} value={v}"),
                ));
            }
        }
        for (who, rank) in [("self", r), ("other", other)] {
            for (k, t) in [
                ("pmix.rank", "rank"),
                ("pmix.lrank", "uint16"),
                ("pmix.nrank", "uint16"),
            ] {
                want.push((
                    format!("get {who} {k} "),
                    format!("rc=0 type={t} value={rank}"),
                ));
            }
            want.push((
                format!("get {who} pmix.appnum "),
                "rc=0 type=uint32 value=0".into(),
            ));
        }
        want.push((
            "get null pmix.job.size ".into(),
            "rc=0 type=uint32 value=3".into(),
        ));
        want.push((
            "get missing test.no.such.key ".into(),
            format!("rc={} type=- value=-", Status::ERR_NOT_FOUND.0),
        ));
        for (prefix, rest) in want {
            let got = lines_of(o, r, &prefix);
            let full = format!("{prefix}{rest}");
            if got != [full.clone()] {
                bad.push(format!("rank {r}: want {full:?}, got {got:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn get_nb_hands_the_value_to_its_callback_after_returning() {
    let o = get_fence_job();
    for r in 0..3 {
        expect_line(o, r, "get_nb rc=0 cb_status=0 after_return=1 value=3");
    }
}

#[test]
fn fence_orders_what_every_rank_did_before_it_before_what_follows() {
    let o = get_fence_job();
    for r in 0..3 {
        expect_line(o, r, "fence rc=0 files=3");
        expect_line(o, r, "fence_nb rc=0 cb_status=0 after_return=1 files=3");
    }
}

#[test]
fn fence_with_data_collection_completes() {
    let o = get_fence_job();
    for r in 0..3 {
        expect_line(o, r, "fence_collect rc=0");
    }
}

#[test]
fn c_get_fence_program_runs_to_completion() {
    let o = get_fence_job();
    assert_ok(o);
    for r in 0..3 {
        expect_line(o, r, "done");
    }
}

// --------------------------------------------------------------- leak checks
//
// Every client program runs at least once with each of its processes under
// valgrind's memcheck (cabi::Memcheck): no invalid access, no definite or
// indirect leak, in any process that runs to its end. The result lines the
// tests above check in detail are only spot-checked here: the point is that
// the program does its work (and its releases) under memcheck.

#[test]
fn the_memcheck_gate_fails_a_program_that_leaks() {
    // The gate itself: a process that loses a block (definitely lost) must
    // fail `assert_clean`, and exit with memcheck's error code.
    let src = scratch().join("leaky.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\n\
         int main(void)\n{\n    void *volatile p = malloc(40);\n    p = NULL;\n    \
         return NULL != p;\n}\n",
    )
    .expect("write leaky.c");
    let exe = build_program("leaky", Lang::C, &[src.to_str().unwrap()], &[]);
    let Some((o, m)) = run_job_memcheck("leaky", 1, &[], &exe, &[], &[]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(99), "{}", dump(&o));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.assert_clean(&o, 1)));
    assert!(r.is_err(), "assert_clean passed a leaking program");
}

/// `prog args` as an `n`-process job under memcheck; `None` when valgrind
/// is skipped.
fn under_valgrind(
    tag: &str,
    n: u32,
    opts: &[&str],
    prog: &str,
    args: &[&str],
) -> Option<(Output, Memcheck)> {
    run_job_memcheck(tag, n, opts, &program(prog), args, &[])
}

/// The job succeeded, every rank printed "done", and memcheck found nothing
/// in any of the `n` processes.
fn assert_clean(o: &Output, m: &Memcheck, n: u32) {
    m.assert_clean(o, n as usize);
    assert_ok(o);
    for r in 0..n {
        expect_line(o, r, "done");
    }
}

#[test]
fn helpers_program_leaks_nothing_under_valgrind() {
    if let Some((o, m)) = under_valgrind("helpers", 1, &[], "client_helpers", &[]) {
        assert_clean(&o, &m, 1);
    }
}

#[test]
fn event_program_leaks_nothing_under_valgrind() {
    if let Some((o, m)) = under_valgrind("order", 1, &[], "client_order", &[]) {
        assert_clean(&o, &m, 1);
    }
}

#[test]
fn kept_events_program_leaks_nothing_under_valgrind() {
    // Kept PROC_LOCAL events offered to later registrations.
    if let Some((o, m)) = under_valgrind("kept", 1, &[], "client_kept", &[]) {
        assert_clean(&o, &m, 1);
        expect_line(&o, 0, "kept job -6201:2");
    }
}

#[test]
fn job_management_program_leaks_nothing_under_valgrind() {
    // Resource-usage reports: blocking results released with
    // PMIX_INFO_FREE, non-blocking ones through the callback's release.
    let d = job_dir("valgrind-usage");
    let args = ["usage", d.to_str().unwrap()];
    if let Some((o, m)) = under_valgrind("usage", 1, &[], "client_monitor", &args) {
        assert_clean(&o, &m, 1);
        expect_line(&o, 0, "usage_nb rc=0 cb_status=0 after_return=1 pid_ok=1");
    }
}

#[test]
fn monitor_program_heartbeat_and_file_modes_leak_nothing_under_valgrind() {
    // Alerts generated by the server, delivered to a handler; the
    // heartbeat and file-monitor requests and their callbacks.
    for mode in ["heartbeat", "file"] {
        let d = job_dir(&format!("valgrind-monitor-{mode}"));
        let args = [mode, d.to_str().unwrap()];
        let tag = format!("monitor-{mode}");
        if let Some((o, m)) = under_valgrind(&tag, 1, &[], "client_monitor", &args) {
            assert_clean(&o, &m, 1);
            assert!(
                !lines_of(&o, 0, "alert ").is_empty(),
                "{mode}\n{}",
                dump(&o)
            );
        }
    }
}

#[test]
fn ranges_program_leaks_nothing_under_valgrind() {
    // Three processes notifying in every range, event infos of every type
    // (strings, procs, byte objects, data arrays) copied in and released.
    let d = job_dir("valgrind-ranges");
    if let Some((o, m)) = under_valgrind("ranges", 3, &[], "client_ranges", &[d.to_str().unwrap()])
    {
        assert_clean(&o, &m, 3);
        let got: usize = (0..3).map(|r| lines_of(&o, r, "got ").len()).sum();
        assert_eq!(got, 19, "events received in all\n{}", dump(&o));
    }
}

#[test]
fn idioms_program_leaks_nothing_under_valgrind() {
    if let Some((o, m)) = under_valgrind("idioms", 2, &[], "client_idioms", &[]) {
        assert_clean(&o, &m, 2);
    }
}

#[test]
fn fault_program_leaks_nothing_under_valgrind() {
    // Rank 1 raises SIGKILL (memcheck still reports, then dies of it);
    // ranks 0 and 2 handle PMIX_ERR_PROC_ABORTED, fail a fence, fence
    // among themselves and finalize. All three reports must be clean.
    let d = job_dir("valgrind-fault");
    let opts = ["--abort-timeout", "60"];
    if let Some((o, m)) = under_valgrind("fault", 3, &opts, "client_fault", &[d.to_str().unwrap()])
    {
        m.assert_clean(&o, 3);
        assert_eq!(o.status.code(), Some(137), "{}", dump(&o));
        for r in [0, 2] {
            expect_line(&o, r, "handled");
            expect_line(&o, r, "fence_survivors rc=PMIX_SUCCESS");
        }
    }
}

#[test]
fn job_control_program_leaks_nothing_under_valgrind() {
    // Pause/resume, cleanup registration and checkpoint requests with
    // their result arrays, blocking and non-blocking; every process ends.
    for mode in ["pause", "cleanup", "checkpoint"] {
        let d = job_dir(&format!("valgrind-jobctl-{mode}"));
        let args = [mode, d.to_str().unwrap()];
        let tag = format!("jobctl-{mode}");
        if let Some((o, m)) = under_valgrind(&tag, 2, &[], "client_jobctl", &args) {
            assert_clean(&o, &m, 2);
        }
    }
}

#[test]
fn job_control_kill_requester_leaks_nothing_under_valgrind() {
    // Rank 0 kills rank 1 (whose memcheck never reports) and hears it
    // aborted.
    let d = job_dir("valgrind-jobctl-kill");
    let args = ["kill", d.to_str().unwrap()];
    let opts = ["--keep-going"];
    if let Some((o, m)) = under_valgrind("jobctl-kill", 2, &opts, "client_jobctl", &args) {
        m.assert_clean(&o, 1);
        expect_line(&o, 0, "killed aborted_seen=1 state=?");
        expect_line(&o, 0, "done");
    }
}

#[test]
fn log_program_leaks_nothing_under_valgrind() {
    if let Some((o, m)) = under_valgrind("log", 1, &[], "client_log", &[]) {
        assert_clean(&o, &m, 1);
        expect_line(&o, 0, "log_nb rc=0 cb_status=0 after_return=1");
    }
}

#[test]
fn literal_key_program_leaks_nothing_under_valgrind() {
    if let Some((o, m)) = under_valgrind("literal-key", 1, &[], "client_literal_key", &[]) {
        assert_clean(&o, &m, 1);
        expect_line(&o, 0, "literal get_nb rc=0 cb_status=0 value=1");
    }
}

#[test]
fn get_fence_program_leaks_nothing_under_valgrind() {
    // Every job and process key read (values released), get_nb, fences.
    let d = job_dir("valgrind-get-fence");
    let args = [d.to_str().unwrap()];
    if let Some((o, m)) = under_valgrind("get-fence", 3, &[], "client_get_fence", &args) {
        assert_clean(&o, &m, 3);
        for r in 0..3 {
            expect_line(&o, r, "fence_nb rc=0 cb_status=0 after_return=1 files=3");
        }
    }
}

// ------------------------------------------------------ OpenPMIx compatibility

#[test]
fn c_programs_compile_against_openpmix_headers_too() {
    // Standard names only: every program must also compile against
    // OpenPMIx's pmix.h (Debian libpmix-dev), when it is installed.
    // tools/test installs them; elsewhere FASTPMIX_SKIP_OPENPMIX=1 says
    // to skip, as in c_abi_probe.
    let skip = std::env::var("FASTPMIX_SKIP_OPENPMIX").as_deref() == Ok("1");
    let flags = Command::new("pkg-config")
        .args(["--cflags", "pmix"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(flags) = flags else {
        assert!(
            skip,
            "OpenPMIx headers (libpmix-dev, pkg-config pmix) not found: tools/test \
             installs them; set FASTPMIX_SKIP_OPENPMIX=1 to skip"
        );
        println!("skipped: FASTPMIX_SKIP_OPENPMIX=1 and no OpenPMIx headers");
        return;
    };
    let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
    let dir = cabi::root().join("tests/c");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // The client programs and bad_args.c (abi_probe.c is built against
        // a generated name list by its own test).
        let ours = name.starts_with("client_") || name == "bad_args.c";
        if ours && p.extension().is_some_and(|x| x == "c") {
            let o = Command::new("cc")
                .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
                .args(flags.split_whitespace())
                .arg(&p)
                .output()
                .expect("cc");
            assert!(
                o.status.success(),
                "{} does not compile against OpenPMIx's header:\n{}",
                p.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            n += 1;
        }
    }
    assert!(n >= 10, "{n} programs");
}

// ------------------------------------------------------------- job keys

#[test]
fn c_program_reads_every_key_an_mpi_library_reads_at_start_for_itself_and_peers() {
    // tests/c/client_job_keys.c under `fastpmix run -n 3`: every rank reads
    // its own rank, local/node rank, app number, app and global rank, app
    // leader, hostname and node id; the job's id, sizes, node count, node
    // list, local size, peers and leader; and each peer's hostname, node
    // id, local and node rank, app number and its node's size, peers and
    // leader, checking value and type (the Standard's, e.g. uint16 for a
    // local rank, pmix_rank_t for a leader); its PMIX_PROCDIR is a
    // directory it may write in, inside the job's PMIX_NSDIR.
    let o = job(3, &[], "client_job_keys", &[]);
    assert_ok(&o);
    for r in 0..3 {
        expect_line(&o, r, &format!("ok [{r}] job pmix.num.nodes"));
        expect_line(&o, r, &format!("ok [{r}] job pmix.nlist"));
        expect_line(&o, r, &format!("ok [{r}] peer {} pmix.lrank", (r + 1) % 3));
        expect_line(
            &o,
            r,
            &format!("ok [{r}] self pmix.pdir is a writable directory inside the job's pmix.nsdir"),
        );
        assert!(
            lines_of(&o, r, "done: ")
                .iter()
                .any(|l| l.ends_with(" 0 failed")),
            "rank {r}\n{}",
            dump(&o)
        );
    }
}

#[test]
fn resolve_peers_and_nodes_follow_the_job_map_under_the_launcher() {
    // PMIx_Resolve_peers of this node (NULL) gives every rank of a one-node
    // job; an unknown node or another namespace is NOT_FOUND; NULL procs is
    // BAD_PARAM; PMIx_Resolve_nodes is this host.
    let o = job(3, &[], "client_job_keys", &[]);
    for r in 0..3 {
        for fact in [
            "PMIx_Resolve_peers of every node",
            "PMIx_Resolve_peers of an unknown node is PMIX_ERR_NOT_FOUND",
            "PMIx_Resolve_peers of another namespace is PMIX_ERR_NOT_FOUND",
            "PMIx_Resolve_peers with NULL procs is PMIX_ERR_BAD_PARAM",
            "PMIx_Resolve_nodes lists the job's nodes",
        ] {
            expect_line(&o, r, &format!("ok [{r}] {fact}"));
        }
    }
}

// ------------------------------------------------------------------ query

#[test]
fn c_query_info_answers_each_key_reports_partial_and_none_and_refuses_bad_input() {
    // tests/c/client_query.c under `fastpmix run -n 2`: namespaces,
    // namespace info, job size by namespace, proc and local proc tables
    // (pmix_proc_info_t with this node's hostname; the caller's own entry
    // has its pid, executable and the connected state), no process sets,
    // memory usage, PMIx_Get's attribute support, refresh cache accepted;
    // two queries with an unknown key → PMIX_ERR_PARTIAL_SUCCESS with the
    // answered keys in order; nothing answerable → PMIX_ERR_NOT_FOUND and
    // no results; NULL queries, nqueries 0, NULL or no keys, an empty key,
    // NULL results → PMIX_ERR_BAD_PARAM; _nb calls back after returning,
    // with a release function.
    let o = job(2, &[], "client_query", &[]);
    assert_ok(&o);
    for r in 0..2 {
        for fact in [
            "ok namespaces: a string listing this job's namespace (rc 0, n 1)",
            "ok job size: uint32 2 for this namespace (rc 0)",
            "ok bad: NULL queries",
            "ok bad: nqueries 0",
            "ok none: PMIX_ERR_NOT_FOUND, no results (rc -46, n 0)",
        ] {
            expect_line(&o, r, fact);
        }
        assert!(
            lines_of(&o, r, "done: ")
                .iter()
                .any(|l| l.ends_with(" 0 failed")),
            "rank {r}\n{}",
            dump(&o)
        );
    }
}

#[test]
fn query_results_and_proc_tables_are_released_whole_under_valgrind() {
    // The answers (proc tables' strings, nested info arrays, the _nb
    // release function) are freed by PMIX_INFO_FREE and the release
    // callback: memcheck finds no leak and no invalid access.
    if let Some((o, m)) = under_valgrind("query", 2, &[], "client_query", &[]) {
        m.assert_clean(&o, 2);
        assert_ok(&o);
        for r in 0..2 {
            assert!(
                lines_of(&o, r, "done: ")
                    .iter()
                    .any(|l| l.ends_with(" 0 failed")),
                "rank {r}\n{}",
                dump(&o)
            );
        }
    }
}
