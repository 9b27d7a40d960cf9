//! Publish/lookup/unpublish, spawn and connect/disconnect through the C ABI
//! (`src/capi/pubsub.rs`, `src/capi/dpm.rs`, `src/capi/host_dpm.rs`):
//! `tests/c/pubsub_server.c`, a daemon whose module implements the six
//! upcalls as Open MPI's runtime does (most complete inside the upcall),
//! runs two ranks of `tests/c/pubsub_client.c`. Each program prints `ok
//! <fact>` or `FAIL <fact> (<details>)`; each test asserts the facts of one
//! rule. Each scenario runs once and is shared by its tests.

mod cabi;

use cabi::{build_program, dump, output_within, stdout, Lang};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

fn client() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build_program("pubsub_client", Lang::C, &["tests/c/pubsub_client.c"], &[]))
}

fn daemon() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build_program("pubsub_server", Lang::C, &["tests/c/pubsub_server.c"], &[]))
}

fn scenario(extra: &[&str]) -> Output {
    let mut cmd = Command::new(daemon());
    cmd.arg(client())
        .args(extra)
        .stdin(std::process::Stdio::null());
    output_within(cmd, Duration::from_secs(240))
}

fn with_host() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| scenario(&[]))
}

fn without_host() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| scenario(&["--nohost"]))
}

/// Asserts `who` printed `ok <fact>` for each fact, and nobody `FAIL`.
fn expect(o: &Output, who: &[&str], facts: &[&str]) {
    let out = stdout(o);
    let fails: Vec<&str> = out.lines().filter(|l| l.contains("FAIL")).collect();
    assert!(fails.is_empty(), "failed facts: {fails:#?}\n{}", dump(o));
    for w in who {
        for f in facts {
            let want = format!("{w}: ok {f}");
            assert!(
                out.lines().any(|l| l == want),
                "no line {want:?}\n{}",
                dump(o)
            );
        }
    }
    assert!(o.status.success(), "{}", dump(o));
}

const RANKS: [&str; 2] = ["rank 0", "rank 1"];

#[test]
fn c_publish_then_lookup_fills_the_value_and_the_publisher() {
    let o = with_host();
    expect(
        o,
        &["rank 0"],
        &["PMIx_Publish with PMIX_RANGE and PMIX_PERSISTENCE"],
    );
    expect(
        o,
        &["rank 1"],
        &["PMIx_Lookup fills the value and the publisher"],
    );
    expect(
        o,
        &["daemon"],
        &["publish gets the publisher, PMIX_USERID, PMIX_RANGE and PMIX_PERSISTENCE"],
    );
}

#[test]
fn c_lookup_of_an_unknown_key_is_not_found() {
    expect(
        with_host(),
        &RANKS,
        &["an unknown key is PMIX_ERR_NOT_FOUND"],
    );
}

#[test]
fn c_a_waiting_lookup_completes_when_the_key_is_published() {
    let o = with_host();
    expect(
        o,
        &["rank 1"],
        &[
            "PMIx_Lookup_nb with PMIX_WAIT",
            "a waiting PMIx_Lookup_nb calls back after returning",
            "a waiting lookup completes when the key is published",
        ],
    );
    expect(
        o,
        &["rank 0"],
        &[
            "PMIx_Publish_nb calls back after returning",
            "PMIx_Publish_nb succeeds",
        ],
    );
    expect(o, &["daemon"], &["no lookup left waiting"]);
}

#[test]
fn c_unpublish_of_a_key_and_of_everything() {
    let o = with_host();
    expect(
        o,
        &["rank 0"],
        &[
            "PMIx_Unpublish of one key",
            "PMIx_Unpublish_nb calls back",
            "PMIx_Unpublish_nb of everything",
        ],
    );
    expect(o, &["rank 1"], &["an unpublished key is not found"]);
    expect(
        o,
        &["daemon"],
        &["unpublish reached the host, NULL keys for everything"],
    );
}

#[test]
fn c_spawn_returns_the_hosts_namespace() {
    let o = with_host();
    expect(
        o,
        &["rank 0"],
        &[
            "PMIx_Spawn returns the host's namespace",
            "PMIx_Spawn_nb calls back after returning",
            "PMIx_Spawn_nb hands the namespace to its callback",
        ],
    );
    expect(
        o,
        &["daemon"],
        &["spawn gets the caller and its application"],
    );
}

#[test]
fn c_connect_and_disconnect_complete_for_every_participant() {
    let o = with_host();
    expect(
        o,
        &RANKS,
        &[
            "PMIx_Connect completes for both",
            "PMIx_Disconnect_nb calls back after returning",
            "PMIx_Disconnect_nb completes for both",
            "PMIx_Connect_nb calls back after returning",
            "PMIx_Connect_nb completes for both",
            "PMIx_Disconnect completes for both",
        ],
    );
    expect(
        o,
        &["daemon"],
        &["connect and disconnect reach the host once per collective with both procs"],
    );
}

#[test]
fn c_bad_arguments_are_bad_param_and_never_call_back() {
    let o = with_host();
    let facts = [
        "bad arguments are PMIX_ERR_BAD_PARAM",
        "a refused spawn leaves the namespace as it was",
        "no callback of a refused call ran",
    ];
    expect(o, &RANKS, &facts);
    expect(without_host(), &RANKS, &facts);
}

#[test]
fn c_a_host_without_the_upcalls_is_not_supported() {
    let o = without_host();
    expect(
        o,
        &RANKS,
        &["a host without the upcalls: every call is PMIX_ERR_NOT_SUPPORTED"],
    );
    expect(o, &["daemon"], &["rank 0 exits 0", "rank 1 exits 0"]);
}
