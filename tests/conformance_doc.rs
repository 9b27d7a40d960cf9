//! docs/conformance.md maps each rule to the tests that check it. A test
//! renamed or removed would leave a rule pointing at nothing while the
//! document still says "pass"; these checks keep the map true: every test
//! a rule names exists where its name says, and every rule ID is used once.
//!
//! Names are resolved the way the document explains them:
//! `file::test` is `fn test` in `tests/file.rs`; `shm_layout::tests::test`
//! is in `shm-layout/src/lib.rs`; `a::b::tests::test` is a unit test in
//! `src/a/b.rs` (or `src/a/b/mod.rs`); `{heap,shm}` names one test in two
//! generated modules; `module::*` names every test of a module. A name
//! whose first segment is capitalised (`Client::heartbeat`) is an API, not a
//! test.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The rule rows: (rule ID, the Test(s) column).
fn rows() -> Vec<(String, String)> {
    let doc = fs::read_to_string(root().join("docs/conformance.md")).unwrap();
    doc.lines()
        .filter_map(|l| l.strip_prefix("| **"))
        .map(|l| {
            let (id, rest) = l.split_once("**").expect("a rule ID in bold");
            let cols: Vec<&str> = rest.split(" | ").collect();
            assert!(cols.len() >= 4, "{id}: a row of four columns: {l}");
            (id.to_owned(), cols[2].to_owned())
        })
        .collect()
}

/// The test names in a Test(s) column, `{a,b}` expanded.
fn names(col: &str) -> Vec<String> {
    let mut out = Vec::new();
    for span in col.split('`').skip(1).step_by(2) {
        let is_path = span.contains("::")
            && span.starts_with(|c: char| c.is_ascii_lowercase())
            && span
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_:{},*".contains(c));
        if !is_path {
            continue;
        }
        match (span.find('{'), span.find('}')) {
            (Some(a), Some(b)) if a < b => {
                for alt in span[a + 1..b].split(',') {
                    out.push(format!("{}{alt}{}", &span[..a], &span[b + 1..]));
                }
            }
            _ => out.push(span.to_owned()),
        }
    }
    out
}

/// The source files a name can live in, most specific first.
fn files_for(parts: &[&str]) -> Vec<PathBuf> {
    let r = root();
    let test_file = r.join(format!("tests/{}.rs", parts[0]));
    if test_file.exists() {
        return vec![test_file];
    }
    let mods: Vec<&str> = parts[..parts.len() - 1]
        .iter()
        .copied()
        .filter(|p| *p != "tests")
        .collect();
    let (base, mods) = match mods.split_first() {
        Some((&"shm_layout", rest)) => (r.join("shm-layout/src"), rest.to_vec()),
        _ => (r.join("src"), mods),
    };
    let mut out = Vec::new();
    if mods.is_empty() {
        out.push(base.join("lib.rs"));
    }
    for k in (1..=mods.len()).rev() {
        let p = base.join(mods[..k].join("/"));
        out.push(p.with_extension("rs"));
        out.push(p.join("mod.rs"));
    }
    out.into_iter().filter(|p| p.exists()).collect()
}

/// `None` when `name` resolves, else why not.
fn unresolved(name: &str, cache: &mut HashMap<PathBuf, String>) -> Option<String> {
    let parts: Vec<&str> = name.split("::").collect();
    let files = files_for(&parts);
    let Some(first) = files.first() else {
        return Some("no source file for it".into());
    };
    let test = parts[parts.len() - 1];
    if test == "*" {
        return None;
    }
    let text = cache
        .entry(first.clone())
        .or_insert_with(|| fs::read_to_string(first).unwrap());
    let defined = [format!("fn {test}("), format!("fn {test}<")]
        .iter()
        .any(|d| text.contains(d.as_str()));
    (!defined).then(|| format!("no `fn {test}` in {}", first.display()))
}

#[test]
fn every_test_a_conformance_rule_names_exists() {
    let mut cache = HashMap::new();
    let (mut checked, mut missing) = (0, Vec::new());
    for (id, col) in rows() {
        for n in names(&col) {
            checked += 1;
            if let Some(why) = unresolved(&n, &mut cache) {
                missing.push(format!("{id}: `{n}`: {why}"));
            }
        }
    }
    assert!(
        checked > 500,
        "only {checked} test names found: has the table format changed?"
    );
    assert!(
        missing.is_empty(),
        "docs/conformance.md names tests that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_conformance_rule_id_is_used_once() {
    let mut seen = HashMap::new();
    for (id, _) in rows() {
        *seen.entry(id).or_insert(0) += 1;
    }
    let mut twice: Vec<_> = seen.into_iter().filter(|(_, n)| *n > 1).collect();
    twice.sort();
    assert!(twice.is_empty(), "rule IDs used more than once: {twice:?}");
}

#[test]
fn the_name_resolution_refuses_a_test_that_is_not_there() {
    let mut cache = HashMap::new();
    assert_eq!(
        unresolved(
            "conformance_doc::every_test_a_conformance_rule_names_exists",
            &mut cache
        ),
        None
    );
    assert_eq!(
        unresolved(
            "server::outbox::tests::a_request_in_parts_succeeds_when_every_part_did_and_keeps_every_reason",
            &mut cache
        ),
        None
    );
    assert!(unresolved("conformance_doc::no_such_test", &mut cache).is_some());
    assert!(unresolved("server::outbox::tests::no_such_test", &mut cache).is_some());
    assert!(unresolved("no_such_module::tests::x", &mut cache).is_some());
    assert_eq!(
        names("`ring_conformance::{heap,shm}::t`<br>`Client::heartbeat` `x::y`"),
        [
            "ring_conformance::heap::t",
            "ring_conformance::shm::t",
            "x::y"
        ]
    );
}
