//! "Nothing panics across the C boundary": every exported
//! function of `src/capi` runs its body under `capi::guard` or
//! `capi::status_of` (a caught panic becomes `PMIX_ERROR`, or the
//! function's documented fallback), except a reviewed list of functions
//! whose bodies are straight-line pointer code with no operation that can
//! panic. A new entry point without a guard fails here until it gets one or
//! is reviewed onto the list. (Since Rust 1.81 a panic reaching an
//! `extern "C"` frame aborts the process instead of unwinding: the guard is
//! what turns it into a status the caller can act on.)

use std::collections::BTreeMap;
use std::path::Path;

/// Exported functions with no guard, and why none is needed.
const REVIEWED: &[(&str, &str)] = &[
    ("PMIx_Get_version", "returns a static string"),
    (
        "PMIx_Progress",
        "an empty body (fastpmix's progress thread always runs)",
    ),
    (
        "PMIx_Info_construct",
        "zeroes the structure through a null-checked pointer",
    ),
    (
        "PMIx_Info_required",
        "sets one flag bit through a null-checked pointer",
    ),
    (
        "PMIx_Info_optional",
        "clears one flag bit through a null-checked pointer",
    ),
    (
        "PMIx_Info_is_required",
        "reads one flag bit through a null-checked pointer",
    ),
    ("PMIx_Info_true", "reads the value's type and one byte"),
    (
        "PMIx_Value_construct",
        "zeroes the structure through a null-checked pointer",
    ),
    ("PMIx_Proc_free", "calls free()"),
    (
        "PMIx_Data_array_init",
        "writes three fields through a null-checked pointer",
    ),
    (
        "PMIx_Data_array_free",
        "calls the guarded PMIx_Data_array_destruct, then free()",
    ),
];

/// Each exported function of `src` and its body (brace-matched; the
/// sources are rustfmt'd, so `#[no_mangle]` precedes each one).
fn exported(src: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find("#[no_mangle]") {
        rest = &rest[i + "#[no_mangle]".len()..];
        let name_at = rest.find("fn ").expect("fn after #[no_mangle]") + 3;
        let name: String = rest[name_at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let open = rest.find('{').expect("a body");
        let mut depth = 0;
        let mut end = open;
        for (k, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((name, rest[open..=end].to_string()));
        rest = &rest[end..];
    }
    out
}

#[test]
fn every_exported_function_catches_panics_or_is_on_the_reviewed_list() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/capi");
    let mut all = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            for (name, body) in exported(&std::fs::read_to_string(&p).unwrap()) {
                all.insert(name, body);
            }
        }
    }
    assert!(all.len() > 50, "found the entry points ({})", all.len());
    let reviewed: BTreeMap<_, _> = REVIEWED.iter().copied().collect();
    let mut unguarded = Vec::new();
    for (name, body) in &all {
        let guarded = body.contains("guard(") || body.contains("status_of(");
        match (guarded, reviewed.contains_key(name.as_str())) {
            (true, true) => panic!("{name} is guarded now: take it off REVIEWED"),
            (false, false) => unguarded.push(name.clone()),
            _ => {}
        }
    }
    assert!(
        unguarded.is_empty(),
        "exported without a panic guard: {unguarded:?}"
    );
    for name in reviewed.keys() {
        assert!(
            all.contains_key(*name),
            "REVIEWED names {name}, which is not exported"
        );
    }
}
