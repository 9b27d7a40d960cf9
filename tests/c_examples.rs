//! The documented C example (docs/examples/rfc0015_client.c): it builds
//! against include/ with -Wall -Wextra -Werror, runs under `fastpmix run`
//! and prints exactly what docs/examples/README.md says it prints; it
//! leaks nothing under valgrind; and it compiles against OpenPMIx's headers
//! (it is written to the Standard, not to fastpmix).
//!
//! Without OpenPMIx's headers (Debian libpmix-dev, which tools/test
//! installs) the OpenPMIx test fails, saying so, unless
//! FASTPMIX_SKIP_OPENPMIX=1; without valgrind the leak test fails unless
//! FASTPMIX_SKIP_VALGRIND=1.

mod cabi;

use cabi::{
    assert_ok, build_program, dump, lines_of, output_within, root, run_job, run_job_memcheck,
    stdout, Lang,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

const SOURCE: &str = "docs/examples/rfc0015_client.c";

fn example() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build_program("rfc0015_client", Lang::C, &[SOURCE], &[]))
}

/// The fenced block after "Expected output" in docs/examples/README.md.
fn documented_output() -> Vec<String> {
    let readme =
        std::fs::read_to_string(root().join("docs/examples/README.md")).expect("README.md");
    let after = readme
        .split_once("Expected output")
        .expect("README.md has no \"Expected output\"")
        .1;
    let block = after
        .split_once("```text\n")
        .expect("no ```text block after \"Expected output\"")
        .1;
    let block = block.split_once("```").expect("unterminated block").0;
    block.lines().map(str::to_owned).collect()
}

/// The documented lines of `rank`, in order, without the rank tag.
fn documented_rank(doc: &[String], rank: u32) -> Vec<String> {
    let tag = format!("[{rank}] ");
    doc.iter()
        .filter_map(|l| l.strip_prefix(&tag))
        .map(str::to_owned)
        .collect()
}

/// Untagged lines (what the launcher writes itself: PMIx_Log), sorted.
fn untagged(lines: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = lines.filter(|l| !l.starts_with('[')).collect();
    v.sort();
    v
}

/// What one process of an `n`-process job prints, as the README shows it
/// for 2 (its numbers are the only thing that depends on `n` and the rank).
fn expected_rank(doc: &[String], n: u32, rank: u32) -> Vec<String> {
    let model = if rank == 0 { 0 } else { 1 };
    documented_rank(doc, model)
        .into_iter()
        .map(|l| {
            l.replace(
                &format!("rank {model} of 2 (local rank {model})"),
                &format!("rank {rank} of {n} (local rank {rank})"),
            )
            .replace("of all 2 processes", &format!("of all {n} processes"))
        })
        .collect()
}

fn job(n: u32) -> Output {
    run_job(n, example(), &[], &[])
}

#[test]
fn the_example_prints_exactly_what_the_readme_documents() {
    let doc = documented_output();
    assert!(doc.len() >= 10, "documented output too short: {doc:?}");
    let o = job(2);
    assert_ok(&o);
    for rank in 0..2 {
        // Every line of the rank, in order: lines_of with an empty prefix.
        assert_eq!(
            lines_of(&o, rank, ""),
            documented_rank(&doc, rank),
            "rank {rank}\n{}",
            dump(&o)
        );
    }
    assert_eq!(
        untagged(stdout(&o).lines().map(str::to_owned)),
        untagged(doc.iter().cloned()),
        "{}",
        dump(&o)
    );
    // Nothing else on stdout (no rank beyond 1, no stray line).
    assert_eq!(stdout(&o).lines().count(), doc.len(), "{}", dump(&o));
}

#[test]
fn rank_0_checkpoints_every_process_of_a_three_process_job() {
    let doc = documented_output();
    let o = job(3);
    assert_ok(&o);
    for rank in 0..3 {
        assert_eq!(
            lines_of(&o, rank, ""),
            expected_rank(&doc, 3, rank),
            "rank {rank}\n{}",
            dump(&o)
        );
    }
    let out = stdout(&o);
    let logged: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("rfc0015_client: "))
        .collect();
    assert_eq!(
        logged,
        ["rfc0015_client: job checkpointed as 'ckpt-1'"],
        "{}",
        dump(&o)
    );
}

#[test]
fn the_example_leaks_nothing_under_valgrind() {
    let Some((o, m)) = run_job_memcheck("example", 2, &[], example(), &[], &[]) else {
        return;
    };
    m.assert_clean(&o, 2);
    assert_ok(&o);
    for rank in 0..2 {
        assert_eq!(
            lines_of(&o, rank, "finalized"),
            ["finalized"],
            "{}",
            dump(&o)
        );
    }
}

#[test]
fn the_example_compiles_against_openpmix_headers() {
    let Some(cflags) = cabi::openpmix_flags(&["--cflags"]) else {
        println!("skipped: OpenPMIx headers not installed (FASTPMIX_SKIP_OPENPMIX=1)");
        return;
    };
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .args(&cflags)
        .arg(root().join(SOURCE));
    let o = output_within(cc, Duration::from_secs(120));
    assert!(
        o.status.success(),
        "the example does not compile against OpenPMIx's headers ({cflags:?}):\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Those flags find OpenPMIx's pmix.h, not ours (which defines FASTPMIX).
    let probe = cabi::scratch().join("which_pmix_h.c");
    std::fs::write(
        &probe,
        "#define _GNU_SOURCE\n#include <pmix.h>\n#ifdef FASTPMIX\n#error fastpmix's pmix.h\n#endif\n",
    )
    .expect("write probe");
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-fsyntax-only"])
        .args(&cflags)
        .arg(&probe);
    let o = output_within(cc, Duration::from_secs(120));
    assert!(
        o.status.success(),
        "pkg-config's pmix flags do not select OpenPMIx's pmix.h:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
