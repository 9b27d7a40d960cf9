//! Hosted by a real resource manager: Debian's Slurm 22.05 embeds this
//! build's libfastpmix as its PMIx server (`srun --mpi=pmix`), on one node
//! with 4 ranks and on two simulated nodes with 2 ranks each.
//!
//! `tools/slurm-test` does the work (installs Slurm and munge when absent,
//! starts the daemons in private namespaces with our library bind-mounted
//! over the one Slurm's plugin opens, runs `tests/c/host_checks.c` and
//! `tests/c/client_job_keys.c` as steps, stops every daemon); it runs once
//! for this binary and prints one line per check and layout, and each test
//! here asserts the lines of its checks. docs/hosts.md describes the
//! checks and compares them with OpenPMIx under the same script.
//!
//! The script skips, saying why, where it cannot run (not root, no
//! namespaces, no package manager); so do these tests. `FASTPMIX_SLURM=0`
//! skips them too.

mod cabi;

use cabi::script::{run_script, Run};
use std::sync::OnceLock;
use std::time::Duration;

/// The whole script may take this long (it takes about 10 s once Slurm is
/// installed; the install itself a few seconds more).
const LIMIT: Duration = Duration::from_secs(600);

fn run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| run_script("slurm-test", "FASTPMIX_SLURM", LIMIT))
}

/// Asserts that `name` passed on both layouts (`skip` allowed where the
/// layout cannot show it, e.g. a remote target on one node).
fn passes(name: &str, may_skip: bool) {
    let r = run();
    if let Some(why) = &r.skipped {
        eprintln!("skipped: {why}");
        return;
    }
    for layout in ["1x4", "2x2"] {
        let prefix = format!("check {name} {layout} ");
        let line = r
            .checks
            .iter()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no result for {name} {layout}:\n{}", r.all));
        let rest = &line[prefix.len()..];
        let ok = rest.starts_with("pass") || (may_skip && rest.starts_with("skip"));
        assert!(ok, "{line}\n(whole run:\n{})", r.all);
    }
}

#[test]
fn srun_ranks_initialise_and_finalize() {
    passes("init", false);
}

#[test]
fn srun_ranks_read_every_standard_key_from_slurms_maps() {
    passes("job_keys", false);
}

#[test]
fn pmix_abort_becomes_the_exit_status_of_srun() {
    passes("abort", false);
}

#[test]
fn a_fence_waits_for_the_ranks_of_the_other_node() {
    passes("fence_waits", false);
}

#[test]
fn put_commit_fence_with_data_then_get_reaches_every_rank() {
    passes("put_fence_get", false);
}

#[test]
fn get_of_a_rank_on_another_node_without_a_fence_is_served_by_direct_modex() {
    passes("direct_modex", false);
}

#[test]
fn client_events_of_every_range_reach_local_peers_and_the_step_lives() {
    for range in [
        "local",
        "namespace",
        "session",
        "global",
        "undef",
        "custom",
        "proc_local",
    ] {
        passes(&format!("events_{range}"), false);
    }
    passes("events_step_survives", false);
}

#[test]
fn a_killed_ranks_local_peers_are_told_of_its_death() {
    passes("death_event_local_peers", false);
}

#[test]
fn job_control_signals_a_rank_on_the_same_node() {
    passes("job_control_signal", false);
}

#[test]
fn a_heartbeat_monitor_alerts_the_rank_and_the_step_lives_on() {
    passes("heartbeat_alert", false);
}

#[test]
fn a_rank_gets_its_own_resource_usage() {
    passes("resource_usage", false);
}

#[test]
fn events_slurm_cannot_carry_are_refused_with_not_supported() {
    passes("notify_rm_refused", false);
    passes("notify_custom_remote_refused", true);
}

#[test]
fn an_allocation_request_slurm_cannot_serve_is_refused() {
    passes("allocation_refused", false);
}

#[test]
fn stdout_logging_in_a_server_without_a_terminal_is_refused() {
    passes("log_stdout_not_lost", false);
}

#[test]
fn steps_end_with_a_clean_deregistration_and_finalize() {
    passes("step_end_clean", false);
}

#[test]
fn steps_leave_nothing_in_spool_tmpfs_or_shared_memory() {
    passes("no_leftovers", false);
}
