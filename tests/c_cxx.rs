//! pmix.h from C++17: `tests/c/cxx_client.cpp` compiles with
//! `-std=c++17 -Wall -Wextra -Werror -pedantic`, and run as a 2-process job
//! under `fastpmix run` uses captureless lambdas as handlers and callbacks,
//! std::condition_variable / std::atomic / std::future waits, PMIx_Get (also
//! from several std::threads), PMIx_Fence, register / notify / deregister,
//! and the PMIX_INFO_CREATE/LOAD/FREE macros.

mod cabi;

use cabi::{
    assert_ok, build_program, dump, field, line, lines_of, run_job, run_job_memcheck, Lang,
};
use std::path::PathBuf;
use std::process::Output;
use std::sync::OnceLock;

/// The program, built once per test process. The build panics (with the
/// compiler's output) on any warning.
fn exe() -> &'static PathBuf {
    static E: OnceLock<PathBuf> = OnceLock::new();
    E.get_or_init(|| {
        build_program(
            "cxx_client",
            Lang::Cxx,
            &["tests/c/cxx_client.cpp"],
            &["-pedantic", "-pthread"],
        )
    })
}

/// The 2-rank job, run once per test process.
fn job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| run_job(2, exe(), &[], &[]))
}

/// Asserts rank `rank` printed exactly `want`.
fn expect(o: &Output, rank: u32, want: &str) {
    let prefix = want.split('=').next().unwrap_or(want);
    assert_eq!(line(o, rank, prefix), want, "rank {rank}\n{}", dump(o));
}

#[test]
fn cxx17_program_compiles_pedantic_and_exchanges_events() {
    let o = job();
    assert_ok(o);
    for r in 0..2 {
        // The sizes are also static_asserts in the program.
        expect(o, r, "sizes proc=260 value=32 info=552");
        expect(o, r, "fence rc=0");
        expect(o, r, "finalize rc=0");
        expect(o, r, "done");
        assert!(lines_of(o, r, "FAIL").is_empty(), "{}", dump(o));
    }
    expect(o, 0, "notify rc=0");
    let ev = line(o, 1, "event ");
    assert_eq!(field(&ev, "source_rank"), "0", "{ev}");
}

#[test]
fn cxx_lambda_handler_gets_the_other_ranks_event_with_its_info() {
    let o = job();
    // kCode = PMIX_EXTERNAL_ERR_BASE - 88; the text and the uint32 payload
    // were loaded with PMIX_INFO_LOAD into a PMIX_INFO_CREATE'd array.
    for r in 0..2 {
        expect(
            o,
            r,
            "event status=-3088 source_rank=0 same_nspace=1 text=hello from c++ payload=7 \
             ref_matches=1 calls=1",
        );
    }
}

#[test]
fn cxx_deregistered_handler_never_runs() {
    let o = job();
    // Rank 0 sent the deregistered code before the kept one; both ranks saw
    // the kept one, so the dropped one had its turn already.
    expect(o, 0, "notify_dropped rc=0");
    for r in 0..2 {
        expect(o, r, "deregister_nb rc=0 cb_status=0");
        expect(o, r, "dropped_calls=0");
    }
}

#[test]
fn cxx_registration_callbacks_deliver_the_reference() {
    let o = job();
    for r in 0..2 {
        expect(o, r, "register_nb rc=0 cb_status=0 ref_ok=1");
        let b = line(o, r, "register_blocking ");
        let refn: i64 = field(&b, "ref").parse().expect("ref");
        assert!(refn >= 1, "{b}");
    }
}

#[test]
fn cxx_get_returns_rank_and_job_size_also_from_many_threads() {
    let o = job();
    for r in 0..2 {
        expect(o, r, &format!("get rank rc=0 value={r} matches_init=1"));
        expect(o, r, "get job_size rc=0 value=2");
        expect(o, r, "threads_get ok=200 of=200");
    }
}

#[test]
fn cxx_fence_nb_completes_through_a_lambda_and_a_condition_variable() {
    let o = job();
    for r in 0..2 {
        expect(o, r, "fence_nb rc=0 cb_status=0");
    }
}

#[test]
fn cxx_program_leaks_nothing_under_valgrind() {
    // Every process of the job under memcheck: handlers and callbacks as
    // lambdas, gets from many threads, the PMIX_INFO_* macros' arrays.
    let Some((o, m)) = run_job_memcheck("cxx", 2, &[], exe(), &[], &[]) else {
        return;
    };
    m.assert_clean(&o, 2);
    assert_ok(&o);
    for r in 0..2 {
        expect(&o, r, "threads_get ok=200 of=200");
        expect(&o, r, "dropped_calls=0");
        expect(&o, r, "done");
    }
}
