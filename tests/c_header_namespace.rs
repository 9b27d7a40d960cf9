//! The Standard's whole C namespace, as OpenPMIx 4.2.2 declares it: code
//! written for OpenPMIx compiles against our headers, links against
//! libfastpmix, and what fastpmix does not implement refuses cleanly.
//!
//! - Every public name of OpenPMIx's installed `pmix.h`, `pmix_common.h`,
//!   `pmix_deprecated.h`, `pmix_server.h`, `pmix_tool.h` and
//!   `pmix_version.h` (macros, typedef names, struct/enum/union tags,
//!   `PMIx_` functions) is declared by our headers, in any form (OpenPMIx's
//!   `PMIx_Heartbeat` macro is our function), but for [`EXCLUDED`].
//! - Every `PMIx_` function of those headers, and every one ours declare,
//!   is an exported symbol of libfastpmix.so.
//! - Each of our prototypes of a function both declare is compatible with
//!   OpenPMIx's (a redeclaration compiled against OpenPMIx's headers).
//! - A C program calls a sample of the unsupported functions (every
//!   callback family, blocking and `_nb`, with and without `PMIx_Init`):
//!   `PMIX_ERR_NOT_SUPPORTED`, callbacks never run, outputs untouched.
//! - A C program checks the string, argv and structure helpers (under
//!   valgrind when installed).
//!
//! Values of constants, key strings and structure layouts are compared by
//! tests/c_abi_probe.rs (which probes every name of pmix_constants.h and
//! the structures of this namespace against both headers).
//!
//! Without libpmix-dev the OpenPMIx comparisons fail unless
//! FASTPMIX_SKIP_OPENPMIX=1.

mod cabi;

use cabi::{
    build_program, built_lib, dump, include_dir, lib_dir, output_within, scratch, stdout, valgrind,
    Lang,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// OpenPMIx's public headers (pmix.h includes the others but pmix_tool.h).
const THEIR_HEADERS: &[&str] = &[
    "pmix.h",
    "pmix_common.h",
    "pmix_deprecated.h",
    "pmix_server.h",
    "pmix_tool.h",
    "pmix_version.h",
];

/// Public names of OpenPMIx's headers that ours deliberately lack, each
/// with its reason. (Include guards are recognised and skipped, and so are
/// OpenPMIx's internal lower-case helpers — `pmix_argv_*`, `pmix_setenv`,
/// `pmix_check_true`, `pmix_nslen`, … — which its macros call: only
/// `PMIx_` functions are public.)
const EXCLUDED: &[(&str, &str)] = &[
    (
        "PMIX_EXPORT",
        "OpenPMIx's symbol-visibility attribute for its own build",
    ),
    (
        "PMIX_HAVE_VISIBILITY",
        "OpenPMIx's configure result for PMIX_EXPORT",
    ),
];

fn excluded(name: &str) -> bool {
    EXCLUDED.iter().any(|(n, _)| *n == name)
}

fn openpmix_include() -> Option<PathBuf> {
    let flags = cabi::openpmix_flags(&["--cflags-only-I"])?;
    flags
        .iter()
        .filter_map(|f| f.strip_prefix("-I"))
        .map(PathBuf::from)
        .find(|d| d.join("pmix_common.h").exists())
}

/// The text with comments removed and backslash-continued lines joined.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            out.push(' ');
        } else if b[i..].starts_with(b"//") {
            i = text[i..].find('\n').map_or(b.len(), |e| i + e);
        } else if b[i..].starts_with(b"\\\n") {
            i += 2;
        } else if b[i] == b'"' {
            // Copy a string literal whole (it may hold "/*").
            let end = text[i + 1..].find('"').map_or(b.len(), |e| i + 1 + e + 1);
            out.push_str(&text[i..end]);
            i = end;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Identifiers of `text`, with their byte offsets.
fn idents(text: &str) -> Vec<(usize, &str)> {
    let mut v = vec![];
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (start, is_ident(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                if !text[s..].starts_with(|c: char| c.is_ascii_digit()) {
                    v.push((s, &text[s..i]));
                }
                start = None;
            }
            _ => {}
        }
    }
    v
}

/// The public names of one header's text: `#define`d names (include guard
/// skipped), typedef names, struct/enum/union tags and `PMIx_` functions.
fn public_names(text: &str) -> BTreeSet<String> {
    let text = clean(text);
    let mut names = BTreeSet::new();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let directive = |l: &str, d: &str| -> Option<String> {
        let rest = l.strip_prefix('#')?.trim_start().strip_prefix(d)?;
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|&c| is_ident(c))
            .collect();
        (!name.is_empty()).then_some(name)
    };
    // The include guard: `#ifndef X` then `#define X` as the first two
    // directives.
    let dirs: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with('#'))
        .collect();
    let guard = match (dirs.first(), dirs.get(1)) {
        (Some(a), Some(b)) => {
            directive(a, "ifndef").filter(|g| directive(b, "define") == Some(g.clone()))
        }
        _ => None,
    };
    for l in &lines {
        if let Some(n) = directive(l, "define") {
            if Some(&n) != guard.as_ref() {
                names.insert(n);
            }
        }
    }
    // Declarations: the text without preprocessor lines.
    let code: String = lines
        .iter()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let ids = idents(&code);
    for (k, &(pos, id)) in ids.iter().enumerate() {
        let after = code[pos + id.len()..].trim_start();
        match id {
            "struct" | "enum" | "union" => {
                if let Some(&(p2, tag)) = ids.get(k + 1) {
                    if code[p2 + tag.len()..].trim_start().starts_with('{') {
                        names.insert(tag.to_owned());
                    }
                }
            }
            _ if id.starts_with("PMIx_") && after.starts_with('(') => {
                names.insert(id.to_owned());
            }
            _ => {}
        }
    }
    // Typedef names: each `typedef ... ;` statement (braces skipped).
    let mut rest = code.as_str();
    while let Some(i) = find_word(rest, "typedef") {
        let stmt_start = i + "typedef".len();
        let mut depth = 0;
        let mut end = rest.len();
        let mut flat = String::new();
        for (j, c) in rest[stmt_start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ';' if depth == 0 => {
                    end = stmt_start + j;
                    break;
                }
                _ if depth == 0 => flat.push(c),
                _ => {}
            }
        }
        let name = if let Some(p) = flat.find("(*") {
            flat[p + 2..]
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect::<String>()
        } else {
            let before_array = flat.split('[').next().unwrap_or("");
            idents(before_array)
                .last()
                .map(|(_, n)| n.to_string())
                .unwrap_or_default()
        };
        if !name.is_empty() {
            names.insert(name);
        }
        rest = &rest[end.min(rest.len())..];
        if rest.is_empty() {
            break;
        }
        rest = &rest[1..];
    }
    names
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    idents(text)
        .into_iter()
        .find(|(_, id)| *id == word)
        .map(|(p, _)| p)
}

fn names_of(dir: &Path, files: &[&str]) -> BTreeSet<String> {
    files
        .iter()
        .flat_map(|f| {
            let t = std::fs::read_to_string(dir.join(f))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()));
            public_names(&t)
        })
        .collect()
}

fn our_headers() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(include_dir())
        .expect("include/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".h"))
        .collect();
    v.sort();
    v
}

fn ours() -> BTreeSet<String> {
    let files = our_headers();
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    names_of(&include_dir(), &refs)
}

fn theirs() -> Option<BTreeSet<String>> {
    Some(names_of(&openpmix_include()?, THEIR_HEADERS))
}

#[test]
fn the_name_extraction_sees_every_kind_of_declaration() {
    let n = public_names(
        "#ifndef G_H\n#define G_H\n#define A 1 /* x */\n#define F(a) \\\n (a)\n\
         typedef struct tag_s { int x; } t_t;\ntypedef void (*cb_t)(int);\n\
         typedef char arr_t[4];\ntypedef enum { E1 } e_t;\n\
         PMIX_EXPORT const char *PMIx_Fn(int a);\nstatic inline int pmix_helper(void) { return 0; }\n#endif\n",
    );
    let want: BTreeSet<String> = ["A", "F", "tag_s", "t_t", "cb_t", "arr_t", "e_t", "PMIx_Fn"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(n, want);
}

#[test]
fn every_public_name_of_openpmix_4_2_headers_is_declared_by_ours() {
    let Some(theirs) = theirs() else {
        eprintln!("FASTPMIX_SKIP_OPENPMIX=1: OpenPMIx comparison skipped");
        return;
    };
    assert!(theirs.len() > 1200, "only {} names found", theirs.len());
    let ours = ours();
    let missing: Vec<_> = theirs
        .iter()
        .filter(|n| !ours.contains(*n) && !excluded(n))
        .collect();
    assert!(
        missing.is_empty(),
        "{} names of OpenPMIx 4.2.2's headers missing from include/: {missing:?}",
        missing.len()
    );
    // Every exclusion is still needed (else drop it from the list).
    for (n, why) in EXCLUDED {
        assert!(
            theirs.contains(*n),
            "{n} is no longer in OpenPMIx's headers ({why})"
        );
        assert!(
            !ours.contains(*n),
            "{n} is declared now; drop its exclusion ({why})"
        );
    }
}

/// The `PMIx_` names a header set declares as functions.
fn functions(names: &BTreeSet<String>) -> impl Iterator<Item = &String> {
    names.iter().filter(|n| n.starts_with("PMIx_"))
}

/// `nm -D --defined-only` of libfastpmix.so: its exported function names.
fn exported() -> BTreeSet<String> {
    let so = built_lib("libfastpmix.so");
    let mut c = Command::new("nm");
    c.args(["-D", "--defined-only"]).arg(&so);
    let o = output_within(c, Duration::from_secs(60));
    assert!(o.status.success(), "nm failed: {}", dump(&o));
    stdout(&o)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            (kind == "T").then(|| name.to_owned())
        })
        .collect()
}

#[test]
fn every_function_of_openpmix_and_of_our_headers_is_exported_by_libfastpmix() {
    let syms = exported();
    let ours = ours();
    let mut missing: Vec<String> = functions(&ours)
        .filter(|n| !syms.contains(*n))
        .cloned()
        .collect();
    if let Some(theirs) = theirs() {
        missing.extend(
            functions(&theirs)
                .filter(|n| !syms.contains(*n) && !excluded(n))
                .cloned(),
        );
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "declared but not exported: {missing:?}");
    // The unsupported table of src/capi/unsupported.rs is exported too.
    for n in fastpmix::internals::unsupported::all_names() {
        assert!(syms.contains(n), "{n} not exported");
    }
}

/// Our prototype of each `PMIx_` function (from include/, where each
/// declaration starts at column 0 and ends with `;`).
fn our_prototypes() -> Vec<(String, String)> {
    let mut v = vec![];
    for f in our_headers() {
        let text = clean(&std::fs::read_to_string(include_dir().join(&f)).expect("header"));
        let mut cur: Option<String> = None;
        for line in text.lines() {
            if let Some(c) = cur.as_mut() {
                c.push(' ');
                c.push_str(line.trim());
            } else if line.starts_with(|c: char| c.is_ascii_alphabetic())
                && !line.starts_with("typedef")
                && !line.starts_with("static")
                && line.contains("PMIx_")
                && line.contains('(')
            {
                cur = Some(line.trim().to_owned());
            }
            if cur.as_ref().is_some_and(|c| c.ends_with(';')) {
                let c = cur.take().unwrap_or_default();
                let name = idents(&c)
                    .into_iter()
                    .find(|(_, id)| id.starts_with("PMIx_"))
                    .map(|(_, id)| id.to_owned())
                    .unwrap_or_default();
                v.push((name, c));
            }
        }
    }
    v
}

#[test]
fn our_prototypes_are_compatible_with_openpmix_s() {
    let Some(dir) = openpmix_include() else {
        eprintln!("FASTPMIX_SKIP_OPENPMIX=1: OpenPMIx comparison skipped");
        return;
    };
    let theirs = names_of(&dir, THEIR_HEADERS);
    let protos = our_prototypes();
    assert!(protos.len() > 150, "only {} prototypes found", protos.len());
    // A redeclaration with an incompatible type is an error; the ones
    // OpenPMIx defines as macros (PMIx_Heartbeat) cannot be redeclared.
    let mut src = String::from(
        "#define _GNU_SOURCE\n#include <pmix.h>\n#include <pmix_server.h>\n#include <pmix_tool.h>\n",
    );
    let mut n = 0;
    for (name, proto) in &protos {
        if theirs.contains(name) && name != "PMIx_Heartbeat" {
            src.push_str(proto);
            src.push('\n');
            n += 1;
        }
    }
    assert!(n > 130, "only {n} shared prototypes");
    let d = scratch().join("namespace");
    std::fs::create_dir_all(&d).expect("dir");
    let p = d.join("redeclare.c");
    std::fs::write(&p, &src).expect("write");
    let mut c = Command::new("cc");
    c.args(["-std=c11", "-fsyntax-only", "-Werror"])
        .args(cabi::openpmix_flags(&["--cflags"]).unwrap_or_default())
        .arg(&p);
    let o = output_within(c, Duration::from_secs(120));
    assert!(
        o.status.success(),
        "our prototypes conflict with OpenPMIx's:\n{}",
        dump(&o)
    );
}

#[test]
fn headers_include_alone_and_together_in_c_and_cxx() {
    for h in ["pmix.h", "pmix_common.h", "pmix_server.h", "pmix_tool.h"] {
        for (cc, std) in [("cc", "-std=c11"), ("c++", "-std=c++17")] {
            let d = scratch().join("namespace");
            std::fs::create_dir_all(&d).expect("dir");
            let p = d.join(format!(
                "alone_{}.{}",
                h.replace('.', "_"),
                if cc == "cc" { "c" } else { "cpp" }
            ));
            std::fs::write(
                &p,
                format!("#include <{h}>\n#include <{h}>\nint main(void) {{ return 0; }}\n"),
            )
            .expect("write");
            let mut c = Command::new(cc);
            c.args([
                std,
                "-pedantic",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fsyntax-only",
                "-I",
            ])
            .arg(include_dir())
            .arg(&p);
            let o = output_within(c, Duration::from_secs(120));
            assert!(o.status.success(), "{h} with {cc}:\n{}", dump(&o));
        }
    }
}

fn run(exe: &Path, args: &[&str], env: &[(&str, &str)], pre: &[&str]) -> std::process::Output {
    let mut c = if pre.is_empty() {
        Command::new(exe)
    } else {
        let mut c = Command::new(pre[0]);
        c.args(&pre[1..]).arg(exe);
        c
    };
    c.args(args).env("LD_LIBRARY_PATH", lib_dir());
    for (k, v) in env {
        c.env(k, v);
    }
    output_within(c, Duration::from_secs(120))
}

fn assert_all_ok(o: &std::process::Output, what: &str) {
    let out = stdout(o);
    assert!(
        o.status.success() && out.lines().any(|l| l == "done") && !out.contains("FAIL"),
        "{what}:\n{}",
        dump(o)
    );
}

#[test]
fn unsupported_functions_refuse_without_init_and_never_call_back() {
    let exe = build_program("unsupported", Lang::C, &["tests/c/unsupported.c"], &[]);
    let o = run(&exe, &[], &[], &[]);
    assert_all_ok(&o, "unsupported.c without PMIx_Init");
    let out = stdout(&o);
    let refused = out.lines().filter(|l| l.starts_with("ok PMIx_")).count();
    // At least as many calls as the table has stubs (the program calls
    // every one, some in two forms).
    let stubs = fastpmix::internals::unsupported::NOT_SUPPORTED.len();
    assert!(
        refused >= stubs,
        "only {refused} calls checked, {stubs} stubs"
    );
    assert!(out.contains("ok no callback ran"));
}

#[test]
fn unsupported_functions_refuse_in_a_job_and_never_call_back() {
    let exe = build_program("unsupported_job", Lang::C, &["tests/c/unsupported.c"], &[]);
    let o = cabi::run_job(1, &exe, &["init"], &[]);
    assert!(o.status.success(), "{}", dump(&o));
    let out = stdout(&o);
    assert!(
        out.contains("ok init") && out.contains("ok no callback ran"),
        "{}",
        dump(&o)
    );
    assert!(
        !out.contains("FAIL") && out.contains("done"),
        "{}",
        dump(&o)
    );
}

#[test]
fn string_argv_and_structure_helpers_work_from_c() {
    let exe = build_program(
        "namespace_helpers",
        Lang::C,
        &["tests/c/namespace_helpers.c"],
        &[],
    );
    let o = run(&exe, &[], &[], &[]);
    assert_all_ok(&o, "namespace_helpers.c");
}

#[test]
fn string_argv_and_structure_helpers_leak_nothing_under_valgrind() {
    if !valgrind() || cabi::sanitizer().is_some() {
        eprintln!("valgrind not installed (or a sanitizer build): skipped");
        return;
    }
    let exe = build_program(
        "namespace_helpers_vg",
        Lang::C,
        &["tests/c/namespace_helpers.c"],
        &[],
    );
    let o = run(
        &exe,
        &[],
        &[],
        &[
            "valgrind",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--quiet",
        ],
    );
    assert_all_ok(&o, "namespace_helpers.c under valgrind");
}
