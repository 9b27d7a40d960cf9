//! `PMIx_generate_regex` / `PMIx_generate_ppn` and their
//! parsers (`fastpmix::server::regex`, format in docs/regex.md): what is
//! generated parses back to exactly the input, readable examples, and
//! malformed maps refused with `PMIX_ERR_BAD_PARAM`, never a panic.

use fastpmix::server::regex::{
    generate_ppn, generate_regex, parse_node_map, parse_proc_map, try_generate_ppn, MAX_ITEMS,
};
use fastpmix::Status;
use proptest::prelude::*;

const BAD: Result<Vec<String>, Status> = Err(Status::ERR_BAD_PARAM);
/// A refused map, compared by length (a failure must not print a million
/// entries).
const TOO_BIG: Result<usize, Status> = Err(Status::ERR_BAD_PARAM);

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn node_map_compresses_numbered_runs_and_keeps_leading_zeros() {
    let m = generate_regex("node01,node02,node03,node04,node07,login");
    assert_eq!(m, "fastpmix:node[01-04,07],login");
    assert_eq!(
        parse_node_map(&m).unwrap(),
        names(&["node01", "node02", "node03", "node04", "node07", "login"])
    );
    // A run crosses a digit boundary only at its own width.
    assert_eq!(generate_regex("n8,n9,n10,n11"), "fastpmix:n[8-11]");
    assert_eq!(generate_regex("n08,n09,n10"), "fastpmix:n[08-10]");
    assert_eq!(generate_regex("n0,n01,n2"), "fastpmix:n[0,01,2]");
    assert_eq!(
        parse_node_map("fastpmix:n[0,01,2]").unwrap(),
        names(&["n0", "n01", "n2"])
    );
    // Text after the number, and a lone numbered name.
    assert_eq!(
        generate_regex("r1-ib,r2-ib,r3-ib,gpu7"),
        "fastpmix:r[1-3]-ib,gpu7"
    );
}

#[test]
fn node_map_keeps_order_duplicates_and_odd_characters() {
    let list = "b2,b1,b1,x,,a[1],50%";
    let m = generate_regex(list);
    assert_eq!(
        parse_node_map(&m).unwrap(),
        names(&["b2", "b1", "b1", "x", "", "a[1]", "50%"])
    );
    assert_eq!(parse_node_map(&generate_regex("")).unwrap(), names(&[]));
}

#[test]
fn proc_map_compresses_rank_runs_per_node() {
    assert_eq!(generate_ppn("0,1,2,3;4,5,6,7,9"), "fastpmix:0-3;4-7,9");
    assert_eq!(
        parse_proc_map("fastpmix:0-3;4-7,9").unwrap(),
        vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7, 9]]
    );
    // Order, an empty node, leading zeros (ranks are numbers).
    let m = generate_ppn("3,2,1;;007,8");
    assert_eq!(m, "fastpmix:3,2,1;;7-8");
    assert_eq!(
        parse_proc_map(&m).unwrap(),
        vec![vec![3, 2, 1], vec![], vec![7, 8]]
    );
    assert_eq!(
        parse_proc_map(&generate_ppn("")).unwrap(),
        Vec::<Vec<u32>>::new()
    );
}

#[test]
fn a_ppn_that_is_not_ranks_is_refused_when_generated_or_parsed() {
    assert_eq!(try_generate_ppn("0,x;1"), Err(Status::ERR_BAD_PARAM));
    assert_eq!(try_generate_ppn("4294967296"), Err(Status::ERR_BAD_PARAM));
    assert_eq!(
        parse_proc_map(&generate_ppn("0,x;1")),
        Err(Status::ERR_BAD_PARAM)
    );
}

#[test]
fn maps_without_the_prefix_are_plain_lists() {
    assert_eq!(
        parse_node_map("node1,node2").unwrap(),
        names(&["node1", "node2"])
    );
    // Brackets mean nothing in a plain list.
    assert_eq!(parse_node_map("n[1-2]").unwrap(), names(&["n[1-2]"]));
    assert_eq!(
        parse_proc_map("0,1;2,3").unwrap(),
        vec![vec![0, 1], vec![2, 3]]
    );
}

#[test]
fn malformed_maps_are_bad_param() {
    for m in [
        "fastpmix:n[1-2",
        "fastpmix:n1-2]",
        "fastpmix:n[[1]]",
        "fastpmix:n[1]x[2]",
        "fastpmix:n[]",
        "fastpmix:n[2-1]",
        "fastpmix:n[a-b]",
        "fastpmix:n[1-]",
        "fastpmix:n[-1]",
        "fastpmix:n[1234567890123456789]",
        "fastpmix:n%2",
        "fastpmix:n%zz",
        "fastpmix:n%ff",
    ] {
        assert_eq!(parse_node_map(m), BAD, "{m}");
    }
    for m in [
        "fastpmix:1-",
        "fastpmix:-1",
        "fastpmix:2-1",
        "fastpmix:1-2-3",
        "fastpmix:a",
        "fastpmix:0,,1",
        "fastpmix:+1",
        "fastpmix: 1",
        "fastpmix:4294967296",
    ] {
        assert_eq!(parse_proc_map(m), Err(Status::ERR_BAD_PARAM), "{m}");
    }
}

#[test]
fn maps_that_expand_beyond_max_items_are_bad_param_not_an_allocation() {
    let nodes = |m: &str| parse_node_map(m).map(|v| v.len());
    let procs = |m: &str| parse_proc_map(m).map(|v| v.len());
    assert_eq!(nodes("fastpmix:n[0-999999999999999]"), TOO_BIG);
    assert_eq!(nodes(&format!("fastpmix:n[0-{MAX_ITEMS}]")), TOO_BIG);
    assert_eq!(nodes(&format!("fastpmix:n[1-{MAX_ITEMS}]")), Ok(MAX_ITEMS));
    // Names without a range count too.
    assert_eq!(
        nodes(&format!("fastpmix:{}", ",".repeat(MAX_ITEMS))),
        TOO_BIG
    );
    assert_eq!(procs("fastpmix:0-4294967295"), TOO_BIG);
    // So do nodes without ranks.
    assert_eq!(
        procs(&format!("fastpmix:{}", ";".repeat(MAX_ITEMS))),
        TOO_BIG
    );
    let most = format!("fastpmix:{}", ";".repeat(MAX_ITEMS - 1));
    assert_eq!(procs(&most), Ok(MAX_ITEMS));
}

/// Node names as hosts have them, plus the characters the syntax uses.
fn node_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,4}[0-9]{1,3}(-[a-z]{1,2})?",
        "[a-z]{1,3}",
        "[a-z0-9%\\[\\]\\-\\.é]{1,6}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn generated_node_maps_parse_back_to_the_input(v in prop::collection::vec(node_name(), 1..40)) {
        let m = generate_regex(&v.join(","));
        prop_assert!(m.starts_with("fastpmix:"));
        prop_assert_eq!(parse_node_map(&m), Ok(v));
    }

    #[test]
    fn numbered_runs_parse_back_to_the_input(
        width in 1usize..4, start in 0u64..120, len in 1usize..30, tail in "(-[a-z])?"
    ) {
        let v: Vec<String> = (start..start + len as u64)
            .map(|n| format!("cn{n:0width$}{tail}"))
            .collect();
        let m = generate_regex(&v.join(","));
        prop_assert_eq!(parse_node_map(&m), Ok(v));
    }

    #[test]
    fn generated_proc_maps_parse_back_to_the_input(
        v in prop::collection::vec(prop::collection::vec(0u32..64, 0..12), 1..8)
    ) {
        // One node without ranks is the empty map, which means no nodes.
        prop_assume!(!(v.len() == 1 && v[0].is_empty()));
        let text: Vec<String> = v
            .iter()
            .map(|n| n.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
            .collect();
        let m = generate_ppn(&text.join(";"));
        prop_assert_eq!(try_generate_ppn(&text.join(";")), Ok(m.clone()));
        prop_assert_eq!(parse_proc_map(&m), Ok(v));
    }

    #[test]
    fn parsers_never_panic(s in "(fastpmix:)?[a-z0-9,;\\[\\]%\\-]{0,40}") {
        let _ = parse_node_map(&s);
        let _ = parse_proc_map(&s);
    }

    #[test]
    fn parsers_never_panic_on_any_text(s in any::<String>()) {
        let _ = parse_node_map(&s);
        let _ = parse_proc_map(&format!("fastpmix:{s}"));
    }
}
