//! Safety at the C boundary: `tests/c/bad_args.c` calls every
//! exported client function and helper with bad arguments (NULL where a value
//! is required, keys and namespaces without a terminator, unknown data
//! types, wrongly typed attributes, a required unknown attribute), and every
//! client call before `PMIx_Init` and after `PMIx_Finalize`. It prints
//! `row <name> <status>` per call; this driver checks each row against the
//! documented status below and that the process reached its end.
//!
//! For a non-blocking call the row holds its return status when it refused
//! the request, else the status its callback got (the Standard allows
//! either), or `NOCB` when the callback never came.

mod cabi;

use cabi::{assert_ok, build_program, lines_of, run_job, run_job_memcheck, stdout, Lang};
use fastpmix::Status;
use std::collections::BTreeMap;
use std::process::Output;
use std::sync::OnceLock;

const OK: i64 = Status::SUCCESS.0 as i64;
const BAD: i64 = Status::ERR_BAD_PARAM.0 as i64;
const INIT: i64 = Status::ERR_INIT.0 as i64;
const UNSUP: i64 = Status::ERR_NOT_SUPPORTED.0 as i64;
const NOTFOUND: i64 = Status::ERR_NOT_FOUND.0 as i64;
const EVREG: i64 = Status::ERR_EVENT_REGISTRATION.0 as i64;
/// The program's marker for "the callback never ran".
const NOCB: i64 = -100_000;

/// Which rule a row checks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Group {
    /// A client call before `PMIx_Init`.
    BeforeInit,
    /// A client call after the last `PMIx_Finalize`.
    AfterFinalize,
    /// Initialisation itself (refused, reference-counted).
    Init,
    /// A client call with bad arguments.
    Client,
    /// A helper function with bad arguments.
    Helper,
}

/// The client calls the program makes before init and after finalize.
const CLIENT_CALLS: &[&str] = &[
    "finalize",
    "get",
    "get_nb",
    "fence",
    "fence_nb",
    "register",
    "register_nb",
    "deregister",
    "deregister_nb",
    "notify",
    "notify_nb",
    "alloc",
    "alloc_nb",
    "job_control",
    "job_control_nb",
    "monitor",
    "monitor_nb",
    "log",
    "log_nb",
    "query",
    "query_nb",
    "put",
    "commit",
    "store_internal",
    "abort",
];

const ROWS: &[(&str, i64, Group)] = {
    use Group::*;
    &[
        ("info_load_before_init", OK, Init),
        ("init_null_info_n1", BAD, Init),
        ("init_info_bad_type", BAD, Init),
        ("initialized_after_refused_init", 0, Init),
        ("init", OK, Init),
        ("initialized", 1, Init),
        ("init_again", OK, Init),
        ("finalize_inner", OK, Init),
        ("still_initialized", 1, Init),
        ("finalize_null_info_n1", BAD, Init),
        ("finalize", OK, Init),
        // PMIx_Get / PMIx_Get_nb
        ("get_null_val", BAD, Client),
        ("get_null_key", BAD, Client),
        ("get_long_key", BAD, Client),
        ("get_empty_key", BAD, Client),
        ("get_unterminated_nspace", BAD, Client),
        ("get_null_info_n1", BAD, Client),
        ("get_info_bad_type", BAD, Client),
        ("get_info_unterminated_key", BAD, Client),
        ("get_unknown_key", NOTFOUND, Client),
        ("get_other_nspace", NOTFOUND, Client),
        ("get_val_left_null", 1, Client),
        ("get_timeout_as_string", BAD, Client),
        ("get_val_still_null", 1, Client),
        ("get_nb_timeout_as_string", BAD, Client),
        ("get_nb_null_cb", BAD, Client),
        ("get_nb_null_key", BAD, Client),
        ("get_nb_long_key", BAD, Client),
        // PMIx_Put / PMIx_Commit / PMIx_Store_internal; a Get of a rank
        // the job (1 rank) does not have
        ("put_null_key", BAD, Client),
        ("put_long_key", BAD, Client),
        ("put_empty_key", BAD, Client),
        ("put_null_val", BAD, Client),
        ("put_invalid_scope", BAD, Client),
        ("put_val_bad_type", BAD, Client),
        ("store_internal_null_proc", BAD, Client),
        ("store_internal_null_key", BAD, Client),
        ("store_internal_long_key", BAD, Client),
        ("store_internal_null_val", BAD, Client),
        ("store_internal_unterminated_nspace", BAD, Client),
        ("commit_nothing_put", OK, Client),
        ("get_rank_outside_job", NOTFOUND, Client),
        ("get_outside_val_left_null", 1, Client),
        // PMIx_Fence / PMIx_Fence_nb
        ("fence_null_procs_n2", BAD, Client),
        ("fence_unterminated_nspace", BAD, Client),
        ("fence_null_info_n1", BAD, Client),
        ("fence_info_bad_type", BAD, Client),
        ("fence_info_unterminated_key", BAD, Client),
        // Collects what the one rank committed: an ordinary fence here.
        ("fence_collect_data", OK, Client),
        ("fence_timeout_as_string", BAD, Client),
        ("fence_required_unknown", UNSUP, Client),
        ("fence_unknown_nspace", BAD, Client),
        ("fence_special_rank", BAD, Client),
        ("fence_nb_collect_data", OK, Client),
        ("fence_nb_null_procs_n2", BAD, Client),
        // PMIx_Register_event_handler / PMIx_Deregister_event_handler
        ("register_null_handler", BAD, Client),
        ("register_null_codes_n2", BAD, Client),
        ("register_null_info_n1", BAD, Client),
        ("register_info_bad_type", BAD, Client),
        ("register_info_unterminated_key", BAD, Client),
        ("register_first_as_string", BAD, Client),
        ("register_range_as_string", BAD, Client),
        ("register_name_as_int", BAD, Client),
        ("register_invalid_range", BAD, Client),
        ("register_custom_range_without_list", BAD, Client),
        ("register_required_unknown", UNSUP, Client),
        ("register_before_unknown_name", EVREG, Client),
        ("register_two_placements", BAD, Client),
        ("register_nb_null_handler", BAD, Client),
        ("register_nb_info_bad_type", BAD, Client),
        ("register_nb_first_as_string", BAD, Client),
        ("register_nb_required_unknown", UNSUP, Client),
        ("register_nb_before_unknown_name", EVREG, Client),
        ("deregister_unknown_ref", BAD, Client),
        ("deregister_ref_0", BAD, Client),
        ("deregister_nb_unknown_ref", BAD, Client),
        // PMIx_Notify_event
        ("notify_invalid_range", BAD, Client),
        ("notify_range_invalid_255", BAD, Client),
        ("notify_null_info_n1", BAD, Client),
        ("notify_info_bad_type", BAD, Client),
        ("notify_info_unterminated_key", BAD, Client),
        ("notify_custom_without_list", BAD, Client),
        ("notify_custom_list_as_string", BAD, Client),
        ("notify_affected_proc_as_int", BAD, Client),
        ("notify_list_with_namespace_range", BAD, Client),
        ("notify_custom_list_of_strings", BAD, Client),
        ("notify_custom_list_null_array", BAD, Client),
        ("notify_info_darray_bad_type", BAD, Client),
        // Info arrays nested deeper than MAX_INFO_NESTING (32): refused
        // wherever they enter, never a stack overflow.
        ("notify_info_nested_5000_deep", BAD, Client),
        ("notify_info_nested_33_deep", BAD, Client),
        ("notify_info_nested_32_deep", OK, Client),
        ("job_control_info_nested_5000_deep", BAD, Client),
        ("info_xfer_nested_5000_deep", BAD, Helper),
        ("info_xfer_nested_left_undef", 1, Helper),
        ("notify_nb_invalid_range", BAD, Client),
        // PMIx_Job_control[_nb]
        ("job_control_null_targets_n1", BAD, Client),
        ("job_control_unterminated_nspace", BAD, Client),
        ("job_control_null_directives_n1", BAD, Client),
        ("job_control_no_directive", BAD, Client),
        ("job_control_directive_bad_type", BAD, Client),
        ("job_control_pause_as_string", BAD, Client),
        ("job_control_required_unknown", UNSUP, Client),
        ("job_control_unknown_rank", NOTFOUND, Client),
        ("job_control_nb_pause_as_string", BAD, Client),
        ("job_control_nb_null_targets_n1", BAD, Client),
        // PMIx_Process_monitor[_nb]
        ("monitor_null", BAD, Client),
        ("monitor_bad_type", BAD, Client),
        ("monitor_unterminated_key", BAD, Client),
        ("monitor_null_directives_n1", BAD, Client),
        ("monitor_heartbeat_without_time", BAD, Client),
        ("monitor_time_as_string", BAD, Client),
        ("monitor_required_unknown", UNSUP, Client),
        ("monitor_unknown_kind", UNSUP, Client),
        ("monitor_usage_as_string", BAD, Client),
        ("monitor_usage_as_non_null_pointer", BAD, Client),
        ("monitor_nb_null", BAD, Client),
        ("monitor_nb_time_as_string", BAD, Client),
        // PMIx_Log[_nb]
        ("log_no_data", BAD, Client),
        ("log_null_data_n1", BAD, Client),
        ("log_data_bad_type", BAD, Client),
        ("log_stdout_as_int", BAD, Client),
        ("log_no_channel", BAD, Client),
        ("log_required_unknown_directive", UNSUP, Client),
        ("log_null_directives_n1", BAD, Client),
        ("log_nb_no_data", BAD, Client),
        ("log_nb_stdout_as_int", BAD, Client),
        // PMIx_Allocation_request[_nb], PMIx_Abort
        ("alloc_null_info_n1", BAD, Client),
        ("alloc_info_bad_type", BAD, Client),
        ("alloc_cpus_as_string", BAD, Client),
        ("alloc_nb_cpus_as_string", BAD, Client),
        ("abort_null_procs_n1", BAD, Client),
        ("abort_unterminated_nspace", BAD, Client),
        // Helpers
        ("info_load_null_info", BAD, Helper),
        ("info_load_null_key", BAD, Helper),
        ("info_load_long_key", BAD, Helper),
        ("info_load_empty_key", BAD, Helper),
        ("info_load_bad_type", BAD, Helper),
        ("info_load_null_int", BAD, Helper),
        ("info_load_left_undef", 1, Helper),
        ("info_xfer_null_dest", BAD, Helper),
        ("info_xfer_null_src", BAD, Helper),
        ("info_xfer_bad_type", BAD, Helper),
        ("value_load_null_value", BAD, Helper),
        ("value_load_bad_type", BAD, Helper),
        ("value_load_null_int", BAD, Helper),
        ("value_unload_null_value", BAD, Helper),
        ("value_unload_null_data", BAD, Helper),
        ("value_unload_null_size", BAD, Helper),
        ("value_xfer_null_dest", BAD, Helper),
        ("value_xfer_null_src", BAD, Helper),
        ("value_xfer_bad_type", BAD, Helper),
        ("info_list_add_null_list", BAD, Helper),
        ("info_list_add_null_key", BAD, Helper),
        ("info_list_add_long_key", BAD, Helper),
        ("info_list_add_bad_type", BAD, Helper),
        ("info_list_xfer_null_info", BAD, Helper),
        ("info_list_xfer_bad_type", BAD, Helper),
        ("info_list_xfer_null_list", BAD, Helper),
        ("info_list_convert_null_array", BAD, Helper),
        ("info_list_convert_null_list", BAD, Helper),
        ("info_list_refused_entries_left_out", 0, Helper),
        ("info_list_release_null", 0, Helper),
        ("load_key_long_cut_to_max", 1, Helper),
        ("load_procid_long_nspace_cut_to_max", 1, Helper),
        ("info_true_bad_type", 0, Helper),
        ("error_string_unknown_not_null", 1, Helper),
        ("info_free_null", 0, Helper),
        ("info_destruct_null", 0, Helper),
        ("value_free_null", 0, Helper),
        ("proc_free_null", 0, Helper),
        ("data_array_create_bad_type_size", 0, Helper),
        ("data_array_free_null", 0, Helper),
        ("info_true_null", 0, Helper),
        ("info_is_required_null", 0, Helper),
        ("info_create_0_is_null", 1, Helper),
    ]
};

/// Every expected row: the table plus the before-init / after-finalize
/// rows of each client call.
fn expected() -> Vec<(String, i64, Group)> {
    let mut v: Vec<(String, i64, Group)> = ROWS
        .iter()
        .map(|(n, s, g)| (n.to_string(), *s, *g))
        .collect();
    for (when, g) in [
        ("before_init", Group::BeforeInit),
        ("after_finalize", Group::AfterFinalize),
    ] {
        v.push((format!("initialized_{when}"), 0, g));
        v.push((format!("heartbeat_{when}"), 0, g));
        for c in CLIENT_CALLS {
            v.push((format!("{c}_{when}"), INIT, g));
        }
    }
    v
}

fn bad_args_exe() -> &'static std::path::PathBuf {
    static E: OnceLock<std::path::PathBuf> = OnceLock::new();
    E.get_or_init(|| build_program("bad_args", Lang::C, &["tests/c/bad_args.c"], &[]))
}

fn bad_args_job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| run_job(1, bad_args_exe(), &[], &[]))
}

/// The rows the program printed, by name.
fn printed() -> BTreeMap<String, i64> {
    let o = bad_args_job();
    let mut m = BTreeMap::new();
    for l in lines_of(o, 0, "row ") {
        let mut w = l.split(' ').skip(1);
        let (Some(name), Some(st)) = (w.next(), w.next()) else {
            panic!("malformed row {l:?}");
        };
        let st: i64 = st.parse().unwrap_or_else(|_| panic!("malformed row {l:?}"));
        assert!(
            m.insert(name.to_owned(), st).is_none(),
            "row {name} printed twice"
        );
    }
    m
}

fn describe(s: i64) -> String {
    if s == NOCB {
        return "no callback".into();
    }
    match i32::try_from(s) {
        Ok(c) if c <= 0 => format!("{s} ({})", Status(c)),
        _ => s.to_string(),
    }
}

/// Rows of `group` whose status differs from the expected one.
fn mismatches(group: Group) -> Vec<String> {
    let got = printed();
    expected()
        .into_iter()
        .filter(|(_, _, g)| *g == group)
        .filter_map(|(name, want, _)| match got.get(&name) {
            Some(&s) if s == want => None,
            Some(&s) => Some(format!(
                "{name}: got {}, want {}",
                describe(s),
                describe(want)
            )),
            None => Some(format!("{name}: not printed")),
        })
        .collect()
}

#[test]
fn bad_args_program_survives_every_row_and_reaches_its_end() {
    let o = bad_args_job();
    assert_ok(o);
    assert_eq!(
        lines_of(o, 0, "end"),
        vec!["end".to_string()],
        "{}",
        stdout(o)
    );
}

#[test]
fn every_printed_row_is_in_the_table_and_every_row_of_the_table_ran() {
    let got = printed();
    let want: Vec<String> = expected().into_iter().map(|(n, _, _)| n).collect();
    let unknown: Vec<&String> = got.keys().filter(|k| !want.contains(k)).collect();
    let missing: Vec<&String> = want.iter().filter(|k| !got.contains_key(*k)).collect();
    assert!(
        unknown.is_empty() && missing.is_empty(),
        "rows without an expectation: {unknown:?}; expected rows not printed: {missing:?}"
    );
}

#[test]
fn every_client_call_before_init_returns_err_init() {
    let bad = mismatches(Group::BeforeInit);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn every_client_call_after_finalize_returns_err_init() {
    let bad = mismatches(Group::AfterFinalize);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn init_refuses_bad_info_and_counts_references() {
    let bad = mismatches(Group::Init);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn client_calls_with_bad_arguments_return_the_documented_status() {
    let bad = mismatches(Group::Client);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn helper_functions_with_bad_arguments_return_bad_param_and_change_nothing() {
    let bad = mismatches(Group::Helper);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn bad_arguments_read_no_memory_they_should_not_and_leak_nothing_under_valgrind() {
    // Unterminated keys and namespaces must be read within their arrays;
    // refusals hand back results the program releases. Any invalid read,
    // or a definite/indirect leak, is a memcheck error.
    let Some((o, m)) = run_job_memcheck("bad-args", 1, &[], bad_args_exe(), &[], &[]) else {
        return;
    };
    m.assert_clean(&o, 1);
    assert_ok(&o);
    assert_eq!(lines_of(&o, 0, "end"), vec!["end".to_string()]);
}
