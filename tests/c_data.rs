//! Data exchange from C (`src/capi/data.rs`, `src/capi/modex.rs`):
//! `tests/c/client_data.c` under `fastpmix run` (one node), and the same
//! program as the clients of `tests/c/dx_server.c`, two daemons embedding
//! the server through `pmix_server.h` whose hosts carry the data between
//! them (`fence_nb`, `direct_modex`, `PMIx_server_dmodex_request`). The
//! programs print one line per checked fact, `ok <fact>` or `FAIL <fact>
//! (<details>)`; each test asserts the facts of one rule. Each scenario
//! runs once and is shared by its tests.

mod cabi;

use cabi::{build_program, dump, output_within, run_job, run_job_memcheck, scratch, stdout, Lang};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

fn client() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build_program("client_data", Lang::C, &["tests/c/client_data.c"], &[]))
}

/// `tests/c/dx_server.c`, built once (both scenarios run it).
fn daemon() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build_program("dx_server", Lang::C, &["tests/c/dx_server.c"], &[]))
}

/// A fresh, empty directory the ranks of one scenario share.
fn fresh_dir(tag: &str) -> String {
    let d = scratch().join(format!("data-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scenario dir");
    d.to_string_lossy().into_owned()
}

/// `fastpmix run -n N client_data DIR MODE`, once per mode.
fn job(n: u32, mode: &'static str) -> Output {
    let d = fresh_dir(mode);
    run_job(n, client(), &[&d, mode], &[])
}

fn wireup() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| job(4, "wireup"))
}

fn nocollect() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| job(4, "nocollect"))
}

fn misc() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| job(2, "misc"))
}

/// The two-daemon scenario, run once.
fn two_nodes() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| {
        let d = fresh_dir("twonode");
        let mut cmd = Command::new(daemon());
        cmd.arg(client()).arg(&d).stdin(std::process::Stdio::null());
        output_within(cmd, Duration::from_secs(240))
    })
}

/// `dx_server --nohost`: node A alone, its module without `fence_nb` and
/// `direct_modex`, run once.
fn no_host() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| {
        let d = fresh_dir("nohost");
        let mut cmd = Command::new(daemon());
        cmd.arg(client())
            .arg(&d)
            .arg("--nohost")
            .stdin(std::process::Stdio::null());
        output_within(cmd, Duration::from_secs(240))
    })
}

/// Asserts `who` printed `ok <fact>` for each fact (`who`: `[r] ` under the
/// launcher, `rank r: ` or `node A: ` under the daemons), and no `FAIL`.
fn expect(o: &Output, who: &[String], facts: &[&str]) {
    let out = stdout(o);
    let fails: Vec<&str> = out.lines().filter(|l| l.contains("FAIL")).collect();
    assert!(fails.is_empty(), "failed facts: {fails:#?}\n{}", dump(o));
    for w in who {
        for f in facts {
            let want = format!("{w}ok {f}");
            assert!(
                out.lines().any(|l| l == want),
                "no line {want:?}\n{}",
                dump(o)
            );
        }
    }
}

/// `[0] `, `[1] `... for the first `n` ranks under the launcher.
fn ranks(n: u32) -> Vec<String> {
    (0..n).map(|r| format!("[{r}] ")).collect()
}

fn rank(r: u32) -> Vec<String> {
    vec![format!("[{r}] ")]
}

fn done(o: &Output, who: &[String]) {
    assert!(o.status.success(), "{}", dump(o));
    for w in who {
        assert!(
            stdout(o)
                .lines()
                .any(|l| l == format!("{w}done failures=0")),
            "{w}did not finish\n{}",
            dump(o)
        );
    }
}

// ------------------------------------------------------------- one node

/// CDX-WIREUP: MPI's wire-up from C: Put of a 100-byte endpoint and a
/// string, Commit, a fence with `PMIX_COLLECT_DATA`, Get of every peer's.
#[test]
fn wireup_puts_commits_fences_with_collection_and_gets_every_peer() {
    let o = wireup();
    expect(
        o,
        &ranks(4),
        &[
            "wireup: PMIx_Put of an endpoint, a string, a value of every type, a local and a \
             remote item",
            "wireup: PMIx_Commit",
            "wireup: PMIx_Fence with PMIX_COLLECT_DATA",
            "wireup: every rank's 100-byte endpoint and name, exact",
        ],
    );
    done(o, &ranks(4));
}

/// CDX-TYPES: every value type fastpmix carries round trips through Put
/// and Get, to the putter and to a peer (a `PMIX_SCOPE` comes back a
/// `PMIX_UINT8`).
#[test]
fn every_value_type_round_trips_through_put_and_get() {
    expect(
        wireup(),
        &ranks(4),
        &[
            "wireup: a value of every type round trips through Put and Get",
            "wireup: the putter reads back every type it put",
        ],
    );
}

/// CDX-SCOPE: scopes from C: a local item is seen on the node, a remote
/// one only by its putter; `PMIX_DATA_SCOPE` given as a `pmix_scope_t`.
#[test]
fn scopes_and_the_data_scope_directive_from_c() {
    expect(
        wireup(),
        &ranks(4),
        &["wireup: a PMIX_LOCAL item is seen on its node, a PMIX_REMOTE one only by its putter"],
    );
    expect(
        misc(),
        &ranks(2),
        &[
            "misc: PMIx_Put in each scope",
            "misc: PMIX_DATA_SCOPE given as a pmix_scope_t (PMIX_SCOPE) takes only items put \
             in that scope",
            "misc: a peer on the node does not see a PMIX_REMOTE item (EXISTS_OUTSIDE_SCOPE)",
        ],
    );
}

/// CDX-NOCOLLECT: without collection: a Get of a peer that has not
/// committed waits for its commit (non-blocking and blocking); after a
/// fence without data every peer's keys are read from the node's store.
#[test]
fn without_collection_gets_wait_for_the_commit_and_read_the_store() {
    let o = nocollect();
    expect(
        o,
        &rank(0),
        &["nocollect: PMIx_Get_nb of a peer that has not committed is answered by its commit"],
    );
    expect(
        o,
        &rank(2),
        &[
            "nocollect: a blocking PMIx_Get of a peer that has not committed returns its value \
           once it commits",
        ],
    );
    expect(
        o,
        &ranks(4),
        &[
            "nocollect: PMIx_Put and PMIx_Commit",
            "nocollect: PMIx_Fence without data",
            "nocollect: every rank's endpoint and name, from the node's store",
        ],
    );
    done(o, &ranks(4));
}

/// CDX-DIRECTIVES: `PMIX_OPTIONAL` and `PMIX_IMMEDIATE` answer
/// `PMIX_ERR_NOT_FOUND` at once, `PMIX_TIMEOUT` bounds the wait.
#[test]
fn optional_immediate_and_timeout_from_c() {
    expect(
        misc(),
        &rank(0),
        &[
            "misc: PMIX_OPTIONAL: PMIX_ERR_NOT_FOUND at once for a peer that has not committed",
            "misc: PMIX_IMMEDIATE: PMIX_ERR_NOT_FOUND at once for a peer that has not committed",
            "misc: PMIX_TIMEOUT 1: PMIX_ERR_TIMEOUT after a second for a peer that has not \
             committed",
        ],
    );
}

/// CDX-RESERVED: a reserved key (`pmix` prefix) the host did not register
/// is `PMIX_ERR_NOT_FOUND` at once, never a wait for the peer's commit.
#[test]
fn a_reserved_key_is_never_waited_for() {
    expect(
        misc(),
        &rank(0),
        &[
            "misc: a reserved key the host did not register is PMIX_ERR_NOT_FOUND at once, even \
           for a peer that has not committed",
        ],
    );
}

/// CDX-GETNB: `PMIx_Get_nb` calls back after returning, with the value or
/// `PMIX_ERR_NOT_FOUND`.
#[test]
fn get_nb_calls_back_after_returning() {
    expect(
        misc(),
        &ranks(2),
        &[
            "misc: PMIx_Get_nb of its own uncommitted key calls back after returning, with the \
             value",
            "misc: PMIx_Get_nb of a peer's committed key calls back after returning, with the \
             value",
            "misc: PMIx_Get_nb of a key the peer did not commit calls back with \
             PMIX_ERR_NOT_FOUND",
        ],
    );
}

/// CDX-INTERNAL: `PMIx_Store_internal` is seen by the process that stored
/// it, only.
#[test]
fn store_internal_from_c() {
    let o = misc();
    expect(
        o,
        &rank(0),
        &["misc: PMIx_Store_internal answers this process's Get of that process's key"],
    );
    expect(
        o,
        &rank(1),
        &["misc: what another process stored internally for this one is not seen here"],
    );
}

/// CDX-NULLPROC: a NULL proc is the caller's namespace with
/// `PMIX_RANK_UNDEF`: its own puts, and any peer's committed key.
#[test]
fn a_null_proc_looks_through_the_namespace() {
    expect(
        misc(),
        &ranks(2),
        &[
            "misc: a NULL proc finds the caller's own uncommitted key",
            "misc: a NULL proc finds a key a peer of the namespace committed",
        ],
    );
}

/// CDX-BAD: the key length limit, a rank outside the job, calls after
/// `PMIx_Finalize` (`tests/c/bad_args.c` has the NULL arguments).
#[test]
fn key_limit_outside_rank_and_calls_after_finalize() {
    let o = misc();
    expect(
        o,
        &ranks(2),
        &[
            "misc: a key of PMIX_MAX_KEYLEN bytes is taken, one byte more is PMIX_ERR_BAD_PARAM",
            "misc: a peer gets a key of PMIX_MAX_KEYLEN bytes",
            "misc: a Get of a rank outside the job is PMIX_ERR_NOT_FOUND at once",
            "misc: PMIx_Put, PMIx_Commit and PMIx_Get after PMIx_Finalize are PMIX_ERR_INIT",
        ],
    );
    done(o, &ranks(2));
}

// ------------------------------------------------------------ two nodes

fn who(v: &[&str]) -> Vec<String> {
    v.iter().map(|w| format!("{w}: ")).collect()
}

const NODES: [&str; 2] = ["node A", "node B"];
const RANKS: [&str; 4] = ["rank 0", "rank 1", "rank 2", "rank 3"];

/// CDX-HOST-FENCE: fences across nodes go through the host's `fence_nb`
/// (once per fence, this node's data only when collecting); a host that
/// completes later and one that completes inside the upcall both work.
#[test]
fn fences_across_nodes_go_through_the_hosts_fence_nb() {
    let o = two_nodes();
    expect(
        o,
        &who(&RANKS),
        &[
            "twonode: a fence without data across the two nodes",
            "twonode: a fence with PMIX_COLLECT_DATA across the two nodes",
            "twonode: after the collecting fence every endpoint is here (PMIX_IMMEDIATE)",
        ],
    );
    expect(
        o,
        &who(&NODES),
        &[
            "fence_nb is called once per fence, with the job's wildcard, and with \
           PMIX_COLLECT_DATA and this node's data only for the collecting one",
        ],
    );
    expect(
        o,
        &who(&["node B"]),
        &["completions inside the upcall (fences, direct modex) are taken"],
    );
}

/// CDX-20: the data `fence_nb` gets is the host's from the
/// call on (OpenPMIx hands it over so; Open MPI's runtime adopts the
/// pointer and frees it): the library leaves it alone after the upcall.
/// Freeing it as well killed every `orted` of a two-node Open MPI job
/// with a double free at the first fence across nodes.
#[test]
fn the_data_fence_nb_gets_is_the_hosts_to_free() {
    expect(
        two_nodes(),
        &who(&NODES),
        &[
            "the data fence_nb gets is the host's: intact after the fence completed, freed by the \
           host",
        ],
    );
}

/// A host's release function runs after its callback returned, never
/// inside it: Slurm calls a fence's callback with its collective's lock
/// held, and its release function takes that lock (a release from inside
/// the callback hung every cross-node fence of a Slurm step).
#[test]
fn the_hosts_release_function_never_runs_inside_its_callback() {
    expect(
        two_nodes(),
        &who(&NODES),
        &[
            "the library never calls a release function inside the callback that passed it \
             (Slurm's collectives call it with a lock held that their release function takes)",
        ],
    );
}

/// CDX-HOST-DMODEX: a Get of another node's process goes through the
/// host's `direct_modex` to the other server's
/// `PMIx_server_dmodex_request`, which answers once the process commits.
#[test]
fn gets_of_another_node_go_through_direct_modex() {
    let o = two_nodes();
    expect(
        o,
        &who(&["rank 0"]),
        &[
            "twonode: a Get of another node's process that has not committed is answered once \
           it commits",
        ],
    );
    expect(
        o,
        &who(&RANKS),
        &["twonode: every rank's endpoint and name, the other node's by direct modex"],
    );
    expect(
        o,
        &who(&NODES),
        &[
            "direct_modex is called for processes of the other node only, with the Get's \
             directives",
            "the library calls the release function of every callback that passed one",
        ],
    );
    expect(
        o,
        &who(&["node B"]),
        &[
            "PMIx_server_dmodex_request made before the rank committed is answered with its \
           data once it commits",
        ],
    );
}

/// CDX-HOST-ONCE: a host that calls back and also returns an error (as
/// Slurm's `fence_nb` does on error) completes the operation once, with the
/// callback's status; the server goes on.
#[test]
fn a_host_that_calls_back_and_returns_an_error_completes_once() {
    let o = two_nodes();
    expect(
        o,
        &who(&RANKS),
        &[
            "twonode: a fence the host fails by calling back and returning an error completes \
           once, with the callback's status; the next fence succeeds",
        ],
    );
    expect(
        o,
        &who(&["rank 0"]),
        &[
            "twonode: a Get whose direct modex the host fails by calling back and returning an \
           error completes once, with the callback's status",
        ],
    );
}

/// CDX-DMODEX-REQ: `PMIx_server_dmodex_request`'s arguments and answers.
#[test]
fn dmodex_request_checks_its_arguments_and_answers_after_returning() {
    let o = two_nodes();
    expect(
        o,
        &who(&["node A"]),
        &[
            "PMIx_server_dmodex_request before PMIx_server_init is PMIX_ERR_INIT",
            "PMIx_server_dmodex_request with a NULL proc, a NULL callback or the wildcard rank \
             is PMIX_ERR_BAD_PARAM",
            "PMIx_server_dmodex_request of a local rank that committed, then finalized, \
             answers with its data after returning",
            "PMIx_server_dmodex_request of a rank that is not a client here answers \
             PMIX_ERR_NOT_FOUND",
        ],
    );
}

#[test]
fn the_two_daemons_and_their_clients_finish_cleanly() {
    let o = two_nodes();
    expect(
        o,
        &who(&NODES),
        &[
            "the first child exits 0",
            "the second child exits 0",
            "the other daemon finished",
            "PMIx_server_finalize, leaving PMIX_SERVER_TMPDIR empty",
        ],
    );
    expect(o, &who(&["node A"]), &["node B's daemon exits 0"]);
    assert!(o.status.success(), "{}", dump(o));
}

/// CDX-NOHOST: a C module whose `fence_nb` and `direct_modex` are NULL does
/// not support them: a fence across nodes fails with
/// `PMIX_ERR_NOT_SUPPORTED` (never a silent success), a Get of another
/// node's process is `PMIX_ERR_NOT_FOUND`; this node's fences and Gets work.
#[test]
fn null_fence_nb_and_direct_modex_are_not_supported() {
    let o = no_host();
    expect(
        o,
        &who(&["rank 0", "rank 1"]),
        &[
            "nohost: PMIx_Put and PMIx_Commit",
            "nohost: a fence across nodes without the host's fence_nb fails with \
             PMIX_ERR_NOT_SUPPORTED",
            "nohost: a Get of another node's process without the host's direct_modex is \
             PMIX_ERR_NOT_FOUND",
            "nohost: a fence of this node's ranks, and a Get of a local peer, still work",
        ],
    );
    expect(
        o,
        &who(&["nohost"]),
        &[
            "the first child exits 0",
            "the second child exits 0",
            "PMIx_server_finalize, leaving PMIX_SERVER_TMPDIR empty",
        ],
    );
    assert!(o.status.success(), "{}", dump(o));
}

/// CDX-LEAKS: the two daemons (the whole data exchange through a C host:
/// upcalls completed inside and later, modex callbacks and their release
/// functions, `PMIx_server_dmodex_request` answers) built with
/// AddressSanitizer: no sanitizer report, no leak, and every fact holds.
/// (The server cannot run under valgrind: `c_server`'s module doc.)
#[test]
fn the_daemons_leak_nothing_under_address_sanitizer() {
    let asan = build_program(
        "dx_server_asan",
        Lang::C,
        &["tests/c/dx_server.c"],
        &["-fsanitize=address", "-fno-omit-frame-pointer"],
    );
    let d = fresh_dir("twonode-asan");
    let mut cmd = Command::new(asan);
    cmd.arg(client())
        .arg(&d)
        .env("ASAN_OPTIONS", "detect_leaks=1:exitcode=97")
        .stdin(std::process::Stdio::null());
    let o = output_within(cmd, Duration::from_secs(240));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("Sanitizer"), "sanitizer report\n{}", dump(&o));
    expect(&o, &who(&NODES), &["the other daemon finished"]);
    assert!(o.status.success(), "{}", dump(&o));
}

/// CDX-MEMCHECK: the client side under valgrind's memcheck: every value
/// `PMIx_Get` hands back (released with `PMIX_VALUE_RELEASE`), every
/// `PMIx_Get_nb` value (released by the library after the callback), the
/// puts of every value type and the wire-up: no invalid access, no definite
/// or indirect leak, in both ranks of `misc` and all four of `wireup`.
#[test]
fn the_client_side_leaks_nothing_under_valgrind() {
    for (mode, n) in [("misc", 2u32), ("wireup", 4)] {
        let d = fresh_dir(&format!("{mode}-memcheck"));
        let Some((o, m)) =
            run_job_memcheck(&format!("data-{mode}"), n, &[], client(), &[&d, mode], &[])
        else {
            return;
        };
        m.assert_clean(&o, n as usize);
        done(&o, &ranks(n));
    }
}
