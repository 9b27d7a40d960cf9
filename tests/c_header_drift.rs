//! include/pmix_constants.h says what the library does: every status code,
//! attribute key, rank, range, data type, directive and flag the Rust tables
//! define appears in the header with the same value (the header is generated
//! by tools/gen-pmix-constants; this fails when someone forgot to rerun it,
//! or edited the header by hand).

use fastpmix::types::{attrs, names, AllocDirective, DataRange, DataType, InfoFlags, Rank, Status};
use fastpmix::types::{MAX_KEYLEN, MAX_NSLEN};
use std::collections::BTreeMap;

/// name → value text of every `#define PMIX_…` in the header.
fn header() -> BTreeMap<String, String> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/include/pmix_constants.h");
    let h = std::fs::read_to_string(p).expect("include/pmix_constants.h");
    h.lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| {
            let (n, v) = l.split_once(' ')?;
            // Drop a trailing /* comment */.
            let v = v.split("/*").next().unwrap_or("").trim();
            Some((n.to_owned(), v.to_owned()))
        })
        .collect()
}

/// Evaluates the integer forms the header uses: `12`, `(-12)`, `0x10`,
/// `INT_MIN`, `UINT32_MAX`, `(UINT32_MAX - n)`.
fn int(v: &str) -> i64 {
    let v = v
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    if let Some(rest) = v.strip_prefix("UINT32_MAX") {
        let rest = rest.trim();
        return match rest.strip_prefix('-') {
            Some(n) => u32::MAX as i64 - n.trim().parse::<i64>().unwrap(),
            None if rest.is_empty() => u32::MAX as i64,
            None => panic!("unexpected {v}"),
        };
    }
    match v {
        "INT_MIN" => i32::MIN as i64,
        _ if v.starts_with("0x") => i64::from_str_radix(&v[2..], 16).unwrap(),
        _ => v.parse().unwrap_or_else(|_| panic!("not an integer: {v}")),
    }
}

fn check(h: &BTreeMap<String, String>, name: &str, want: i64, bad: &mut Vec<String>) {
    match h.get(name) {
        Some(v) if int(v) == want => {}
        Some(v) => bad.push(format!("{name}: header {v}, library {want}")),
        None => bad.push(format!("{name}: missing from the header")),
    }
}

#[test]
fn every_status_code_of_the_library_is_in_the_header_with_its_value() {
    let h = header();
    let mut bad = vec![];
    let mut n = 0;
    for (s, name) in Status::all_named() {
        check(&h, name, s.0.into(), &mut bad);
        n += 1;
    }
    assert!(n > 100, "only {n} status names");
    assert!(bad.is_empty(), "{bad:#?} (rerun tools/gen-pmix-constants)");
}

/// fastpmix's own codes and keys, which C programs need by name: the
/// `EVENTS_LOST` notices, the allocation expiry event, refusal reasons and
/// the server attributes.
#[test]
fn fastpmix_own_codes_and_keys_are_in_the_header_with_their_values() {
    use fastpmix::job::{ALLOC_EXPIRING, ALLOC_REMAINING, REASON};
    use fastpmix::server::{CACHE_SIZE, TERM_GRACE_MS};
    use fastpmix::types::{EVENTS_LOST, EVENTS_LOST_COUNT};
    let h = header();
    let mut bad = vec![];
    check(&h, "FASTPMIX_EVENTS_LOST", EVENTS_LOST.0.into(), &mut bad);
    check(
        &h,
        "FASTPMIX_ALLOC_EXPIRING",
        ALLOC_EXPIRING.0.into(),
        &mut bad,
    );
    for (name, key) in [
        ("FASTPMIX_EVENTS_LOST_COUNT", EVENTS_LOST_COUNT),
        ("FASTPMIX_ALLOC_REMAINING", ALLOC_REMAINING),
        ("FASTPMIX_REASON", REASON),
        ("FASTPMIX_CACHE_SIZE", CACHE_SIZE),
        ("FASTPMIX_TERM_GRACE_MS", TERM_GRACE_MS),
    ] {
        let want = format!("\"{}\"", key.as_str());
        if h.get(name) != Some(&want) {
            bad.push(format!("{name}: header {:?}, library {want}", h.get(name)));
        }
    }
    let own = h.keys().filter(|n| n.starts_with("FASTPMIX_")).count();
    assert_eq!(own, 7, "every FASTPMIX_ name is checked here");
    assert!(bad.is_empty(), "{bad:#?} (rerun tools/gen-pmix-constants)");
}

#[test]
fn every_attribute_key_of_the_library_is_in_the_header_with_its_string() {
    let h = header();
    let mut bad = vec![];
    for a in attrs::ALL {
        let want = format!("\"{}\"", a.key);
        match h.get(a.name) {
            Some(v) if *v == want => {}
            other => bad.push(format!("{}: header {other:?}, library {want}", a.name)),
        }
    }
    assert_eq!(
        h.get("PMIX_PROC_DATA").map(String::as_str),
        Some("PMIX_PROC_INFO_ARRAY")
    );
    assert!(bad.is_empty(), "{bad:#?} (rerun tools/gen-pmix-constants)");
    // And nothing in the header claims a key the library does not know.
    // (The declared-only keys of src/types/names.rs are known too: the
    // library passes them through untouched.)
    let known: Vec<&str> = attrs::ALL
        .iter()
        .map(|a| a.name)
        .chain(names::DECLARED_KEYS.iter().map(|(n, _)| *n))
        .collect();
    let extra: Vec<_> = h
        .iter()
        .filter(|(n, v)| {
            v.starts_with('"') && !n.starts_with("FASTPMIX_") && !known.contains(&n.as_str())
        })
        .map(|(n, _)| n)
        .collect();
    assert!(extra.is_empty(), "keys only in the header: {extra:?}");
}

#[test]
fn ranks_ranges_types_directives_flags_and_sizes_match_the_library() {
    let h = header();
    let mut bad = vec![];
    for (n, r) in [
        ("UNDEF", Rank::UNDEF),
        ("WILDCARD", Rank::WILDCARD),
        ("LOCAL_NODE", Rank::LOCAL_NODE),
        ("INVALID", Rank::INVALID),
        ("LOCAL_PEERS", Rank::LOCAL_PEERS),
        ("VALID", Rank::VALID),
    ] {
        check(&h, &format!("PMIX_RANK_{n}"), r.0.into(), &mut bad);
    }
    for (n, r) in [
        ("UNDEF", DataRange::UNDEF),
        ("RM", DataRange::RM),
        ("LOCAL", DataRange::LOCAL),
        ("NAMESPACE", DataRange::NAMESPACE),
        ("SESSION", DataRange::SESSION),
        ("GLOBAL", DataRange::GLOBAL),
        ("CUSTOM", DataRange::CUSTOM),
        ("PROC_LOCAL", DataRange::PROC_LOCAL),
        ("INVALID", DataRange::INVALID),
    ] {
        check(&h, &format!("PMIX_RANGE_{n}"), r.0.into(), &mut bad);
    }
    for (n, d) in [
        ("NEW", AllocDirective::NEW),
        ("EXTEND", AllocDirective::EXTEND),
        ("RELEASE", AllocDirective::RELEASE),
        ("REAQUIRE", AllocDirective::REAQUIRE),
        ("EXTERNAL", AllocDirective::EXTERNAL),
    ] {
        check(&h, &format!("PMIX_ALLOC_{n}"), d.0.into(), &mut bad);
    }
    for (n, t) in [
        ("BOOL", DataType::BOOL),
        ("STRING", DataType::STRING),
        ("SIZE", DataType::SIZE),
        ("INT", DataType::INT),
        ("UINT32", DataType::UINT32),
        ("UINT64", DataType::UINT64),
        ("DOUBLE", DataType::DOUBLE),
        ("TIMEVAL", DataType::TIMEVAL),
        ("STATUS", DataType::STATUS),
        ("PROC", DataType::PROC),
        ("INFO", DataType::INFO),
        ("BYTE_OBJECT", DataType::BYTE_OBJECT),
        ("POINTER", DataType::POINTER),
        ("DATA_RANGE", DataType::DATA_RANGE),
        ("DATA_ARRAY", DataType::DATA_ARRAY),
        ("PROC_RANK", DataType::PROC_RANK),
        ("ENVAR", DataType::ENVAR),
        ("DATA_BUFFER", DataType::DATA_BUFFER),
    ] {
        check(&h, &format!("PMIX_{n}"), t.0.into(), &mut bad);
    }
    check(&h, "PMIX_DATA_TYPE_MAX", DataType::MAX.0.into(), &mut bad);
    for (n, f) in [
        ("REQD", InfoFlags::REQD),
        ("ARRAY_END", InfoFlags::ARRAY_END),
        ("REQD_PROCESSED", InfoFlags::REQD_PROCESSED),
        ("QUALIFIER", InfoFlags::QUALIFIER),
        ("PERSISTENT", InfoFlags::PERSISTENT),
    ] {
        check(&h, &format!("PMIX_INFO_{n}"), f.0.into(), &mut bad);
    }
    check(&h, "PMIX_MAX_NSLEN", MAX_NSLEN as i64, &mut bad);
    check(&h, "PMIX_MAX_KEYLEN", MAX_KEYLEN as i64, &mut bad);
    assert!(bad.is_empty(), "{bad:#?} (rerun tools/gen-pmix-constants)");
}

/// The names fastpmix declares only so that code written for OpenPMIx 4.2
/// compiles (src/types/names.rs) are in the header with the table's values,
/// and none of them is also an attribute the library acts on.
#[test]
fn declared_only_names_are_in_the_header_with_their_values() {
    let h = header();
    let mut bad = vec![];
    for (name, key) in names::DECLARED_KEYS {
        let want = format!("\"{key}\"");
        if h.get(*name) != Some(&want) {
            bad.push(format!("{name}: header {:?}, table {want}", h.get(*name)));
        }
        if attrs::ALL.iter().any(|a| a.name == *name) {
            bad.push(format!("{name}: both declared-only and acted on"));
        }
    }
    for (name, v) in names::DECLARED_INTS {
        match h.get(*name) {
            Some(hv) if int(hv) == int(v) => {}
            other => bad.push(format!("{name}: header {other:?}, table {v}")),
        }
    }
    assert!(names::DECLARED_KEYS.len() > 300 && names::DECLARED_INTS.len() > 50);
    assert!(bad.is_empty(), "{bad:#?} (rerun tools/gen-pmix-constants)");
}
