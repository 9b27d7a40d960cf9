//! Every repository path the docs name exists.
//!
//! Scans README.md, docs/**/*.md, Cargo.toml, the files in tools/ and the
//! comments of src/**/*.rs for tokens that start with one of the
//! repository's top-level directories (`src/`, `tests/`, `docs/`, `tools/`,
//! `include/`, `benches/`, `shm-layout/`), backticked or not, with an
//! optional `:LINE` suffix, and fails naming each one that is not there
//! (or, with a line, whose file is shorter). A `*` in the last component
//! matches any run of characters (`tests/c/client_*.c`). A token that
//! follows another path character (`../docs/x`, `target/src/x`) is not a
//! repository path and is skipped.

use std::fs;
use std::path::{Path, PathBuf};

const ROOTS: [&str; 7] = [
    "src/",
    "tests/",
    "docs/",
    "tools/",
    "include/",
    "benches/",
    "shm-layout/",
];

/// Paths under the roots above that a run makes and the repository does
/// not hold: none today. (`target/…` is not under a root, and the plots in
/// `docs/perf/` are committed, so neither needs an entry.)
const MADE_AT_RUN_TIME: &[&str] = &[];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The texts to scan: (file, line number, line).
fn texts() -> Vec<(PathBuf, usize, String)> {
    let mut files = vec![root().join("README.md"), root().join("Cargo.toml")];
    collect(&root().join("docs"), &mut |p| has_ext(p, "md"), &mut files);
    for e in fs::read_dir(root().join("tools")).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            files.push(p);
        }
    }
    let mut sources = vec![];
    collect(&root().join("src"), &mut |p| has_ext(p, "rs"), &mut sources);
    let mut out = vec![];
    for f in files {
        let Ok(text) = fs::read_to_string(&f) else {
            continue;
        };
        out.extend(
            text.lines()
                .enumerate()
                .map(|(i, l)| (f.clone(), i + 1, l.to_string())),
        );
    }
    for f in sources {
        let text = fs::read_to_string(&f).unwrap();
        for (i, l) in text.lines().enumerate() {
            if let Some(c) = l.find("//") {
                out.push((f.clone(), i + 1, l[c..].to_string()));
            }
        }
    }
    out
}

fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension().is_some_and(|e| e == ext)
}

fn collect(dir: &Path, keep: &mut dyn FnMut(&Path) -> bool, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, keep, out);
        } else if keep(&p) {
            out.push(p);
        }
    }
}

fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./*".contains(c)
}

/// The repository paths a line names, each with its `:LINE` if it has one.
fn paths_in(line: &str) -> Vec<(String, Option<usize>)> {
    let mut found = vec![];
    for root in ROOTS {
        for (at, _) in line.match_indices(root) {
            if line[..at].chars().next_back().is_some_and(path_char) {
                continue;
            }
            let rest = &line[at..];
            let end = rest.find(|c: char| !path_char(c)).unwrap_or(rest.len());
            // A sentence's full stop or a trailing slash is not part of it.
            let path = rest[..end].trim_end_matches(['.', '/']).to_string();
            let line_no = rest[end..]
                .strip_prefix(':')
                .map(|r| {
                    r.chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                })
                .and_then(|d| d.parse().ok());
            found.push((path, line_no));
        }
    }
    found
}

/// Whether `path` names something in the repository; `*` in the last
/// component matches any run of characters.
fn exists(path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    if !name.contains('*') {
        return root().join(path).exists();
    }
    let (pre, post) = name.split_once('*').unwrap();
    let post = post.replace('*', "");
    fs::read_dir(root().join(dir)).is_ok_and(|rd| {
        rd.filter_map(Result::ok).any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(&post)
        })
    })
}

fn problem(path: &str, line_no: Option<usize>) -> Option<String> {
    if MADE_AT_RUN_TIME.iter().any(|m| path.starts_with(m)) {
        return None;
    }
    if !exists(path) {
        return Some("does not exist".into());
    }
    let n = line_no?;
    let lines = fs::read_to_string(root().join(path)).map_or(0, |t| t.lines().count());
    (n == 0 || n > lines).then(|| format!("has {lines} lines, not {n}"))
}

#[test]
fn every_repository_path_the_docs_name_exists() {
    let mut missing = vec![];
    for (file, n, line) in texts() {
        for (path, line_no) in paths_in(&line) {
            if let Some(why) = problem(&path, line_no) {
                let at = file.strip_prefix(root()).unwrap_or(&file).display();
                let suffix = line_no.map(|l| format!(":{l}")).unwrap_or_default();
                missing.push(format!("{at}:{n}: {path}{suffix} {why}"));
            }
        }
    }
    assert!(missing.is_empty(), "stale paths:\n{}", missing.join("\n"));
}

#[test]
fn the_scanner_finds_paths_and_refuses_a_missing_one() {
    let found = paths_in("see `src/ring/mod.rs:12`, docs/perf/*.svg and ../docs/x.md.");
    assert_eq!(
        found,
        [
            ("src/ring/mod.rs".to_string(), Some(12)),
            ("docs/perf/*.svg".to_string(), None),
        ]
    );
    assert!(exists("docs/perf/*.svg"));
    assert!(problem("src/no_such_file.rs", None).is_some());
    assert!(problem("src/lib.rs", Some(1_000_000)).is_some());
}
