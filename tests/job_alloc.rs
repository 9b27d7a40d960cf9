//! The default host's allocator (`fastpmix::job::alloc`) through its public
//! API, on a pool of four CPUs and a fake clock (explicit `Instant`s).

use std::time::{Duration, Instant};

use fastpmix::job::alloc::{Allocator, Expiry, Refusal, WARNING_LEAD};
use fastpmix::job::REASON;
use fastpmix::types::attrs::{
    PMIX_ALLOC_CPU_LIST as CPU_LIST, PMIX_ALLOC_ID as ALLOC_ID, PMIX_ALLOC_NUM_CPUS as NUM_CPUS,
    PMIX_ALLOC_NUM_NODES as NUM_NODES, PMIX_ALLOC_REQ_ID as REQ_ID, PMIX_ALLOC_TIME as TIME,
};
use fastpmix::types::{AllocDirective as D, Info, Key, Proc, Status};

fn p(rank: u32) -> Proc {
    Proc::new("job", rank).unwrap()
}

fn four() -> Allocator {
    Allocator::new(vec![3, 1, 2, 0], "node0".into())
}

fn n(k: u64) -> Info {
    Info::new(NUM_CPUS, k)
}

fn list(s: &str) -> Info {
    Info::new(CPU_LIST, s)
}

fn id(s: &str) -> Info {
    Info::new(ALLOC_ID, s)
}

fn secs(s: u32) -> Info {
    Info::new(TIME, s)
}

/// The string (or integer, printed) value of `key` in `results`.
fn get(results: &[Info], key: &Key) -> String {
    let v = &results
        .iter()
        .find(|i| i.key == *key)
        .expect("key present")
        .value;
    v.as_str()
        .map_or_else(|| v.as_integer().unwrap().to_string(), str::to_owned)
}

fn refused(r: Result<Vec<Info>, Refusal>, status: Status, needle: &str) {
    let e = r.expect_err("must be refused");
    assert_eq!(e.status, status, "{}", e.reason());
    assert!(
        e.reason().contains(needle),
        "reason {:?} lacks {needle:?}",
        e.reason()
    );
    assert_eq!(e.results.len(), 1);
    assert_eq!(e.results[0].key, REASON);
}

#[test]
fn alloc_new_grants_disjoint_cpus_and_unique_ids() {
    let (mut a, t) = (four(), Instant::now());
    assert_eq!(a.cpus(), &[0, 1, 2, 3]);
    let r1 = a.request(&p(0), D::NEW, &[n(2)], t).unwrap();
    let r2 = a
        .request(&p(1), D::NEW, &[n(1), Info::new(REQ_ID, "b")], t)
        .unwrap();
    assert_eq!(get(&r1, &ALLOC_ID), "alloc-1");
    assert_eq!(get(&r1, &CPU_LIST), "0-1");
    assert_eq!(get(&r1, &NUM_CPUS), "2");
    assert_eq!(get(&r1, &NUM_NODES), "1");
    assert_eq!(
        get(&r1, &fastpmix::types::attrs::PMIX_ALLOC_NODE_LIST),
        "node0"
    );
    assert!(r1.iter().all(|i| i.key != TIME && i.key != REQ_ID));
    assert_eq!(get(&r2, &ALLOC_ID), "alloc-2");
    assert_eq!(get(&r2, &CPU_LIST), "2");
    assert_eq!(get(&r2, &REQ_ID), "b");
    assert_eq!(a.free_cpus(), vec![3]);
    // Ids are never reused, even after the allocation ends.
    a.request(&p(1), D::RELEASE, &[id("alloc-2")], t).unwrap();
    let r3 = a.request(&p(1), D::NEW, &[n(1)], t).unwrap();
    assert_eq!(get(&r3, &ALLOC_ID), "alloc-3");
}

#[test]
fn alloc_request_that_cannot_be_met_is_refused_with_reason_and_changes_nothing() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(3)], t).unwrap();
    let before = a.summary();
    let r = a.request(&p(1), D::NEW, &[n(2)], t);
    refused(
        r,
        Status::ERR_OUT_OF_RESOURCE,
        "2 CPUs requested, 1 free (CPUs 0-2 held by alloc-1)",
    );
    assert_eq!(a.summary(), before);
    assert_eq!(a.free_cpus(), vec![3]);
    // The refused request consumed no id.
    let r = a.request(&p(1), D::NEW, &[n(1)], t).unwrap();
    assert_eq!(get(&r, &ALLOC_ID), "alloc-2");
}

#[test]
fn alloc_explicit_cpu_list_of_a_held_cpu_is_refused() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[list("1")], t).unwrap();
    refused(
        a.request(&p(1), D::NEW, &[list("0-1")], t),
        Status::ERR_OUT_OF_RESOURCE,
        "CPUs 1 held by alloc-1",
    );
    refused(
        a.request(&p(1), D::NEW, &[list("7")], t),
        Status::ERR_BAD_PARAM,
        "CPU 7 is not managed",
    );
    let r = a.request(&p(1), D::NEW, &[list("0,2-3")], t).unwrap();
    assert_eq!(get(&r, &CPU_LIST), "0,2-3");
    assert!(a.free_cpus().is_empty());
}

#[test]
fn alloc_more_than_one_node_is_refused() {
    let (mut a, t) = (four(), Instant::now());
    let r = a.request(&p(0), D::NEW, &[n(1), Info::new(NUM_NODES, 2u64)], t);
    refused(r, Status::ERR_OUT_OF_RESOURCE, "this host manages one");
    assert_eq!(a.free_cpus().len(), 4);
    assert!(a
        .request(&p(0), D::NEW, &[n(1), Info::new(NUM_NODES, 1u64)], t)
        .is_ok());
}

#[test]
fn alloc_node_list_naming_another_node_is_refused() {
    use fastpmix::types::attrs::PMIX_ALLOC_NODE_LIST as NODE_LIST;
    let (mut a, t) = (four(), Instant::now());
    for nodes in ["node1", "node0,node1", "node1,node0"] {
        refused(
            a.request(&p(0), D::NEW, &[n(1), Info::new(NODE_LIST, nodes)], t),
            Status::ERR_OUT_OF_RESOURCE,
            &format!("node list {nodes:?}: this host manages only node0"),
        );
    }
    // Nothing was granted, and the refusals consumed no id.
    assert_eq!(a.free_cpus().len(), 4);
    assert_eq!(a.summary(), "", "no allocation");
    let r = a
        .request(&p(0), D::NEW, &[n(1), Info::new(NODE_LIST, "node0")], t)
        .unwrap();
    assert_eq!(get(&r, &ALLOC_ID), "alloc-1");
    assert_eq!(get(&r, &NODE_LIST), "node0");
}

#[test]
fn alloc_missing_invalid_or_wrongly_typed_attributes_are_bad_params() {
    let (mut a, t) = (four(), Instant::now());
    let bad = Status::ERR_BAD_PARAM;
    refused(
        a.request(&p(0), D::NEW, &[], t),
        bad,
        "needs PMIX_ALLOC_NUM_CPUS",
    );
    refused(
        a.request(&p(0), D::NEW, &[n(0)], t),
        bad,
        "PMIX_ALLOC_NUM_CPUS must be > 0",
    );
    refused(
        a.request(&p(0), D::NEW, &[n(1), secs(0)], t),
        bad,
        "PMIX_ALLOC_TIME must be > 0",
    );
    refused(
        a.request(&p(0), D::NEW, &[Info::new(NUM_CPUS, "2")], t),
        bad,
        "PMIX_ALLOC_NUM_CPUS must be Uint64",
    );
    refused(
        a.request(&p(0), D::NEW, &[list("1-")], t),
        bad,
        "invalid PMIX_ALLOC_CPU_LIST",
    );
    refused(
        a.request(&p(0), D::NEW, &[n(3), list("1")], t),
        bad,
        "names 1",
    );
    refused(
        a.request(&p(0), D::NEW, &[n(1), n(1)], t),
        bad,
        "given twice",
    );
    let reqd = Info::required(fastpmix::types::attrs::PMIX_ALLOC_QUEUE, "q");
    refused(
        a.request(&p(0), D::NEW, &[n(1), reqd], t),
        Status::ERR_NOT_SUPPORTED,
        "PMIX_ALLOC_QUEUE",
    );
    // A request id is unique among the holder's live allocations only.
    a.request(&p(0), D::NEW, &[n(1), Info::new(REQ_ID, "x")], t)
        .unwrap();
    refused(
        a.request(&p(0), D::NEW, &[n(1), Info::new(REQ_ID, "x")], t),
        bad,
        "already has",
    );
    assert!(a
        .request(&p(1), D::NEW, &[n(1), Info::new(REQ_ID, "x")], t)
        .is_ok());
    assert_eq!(a.free_cpus(), vec![2, 3]);
}

#[test]
fn alloc_external_and_unknown_directives_are_not_supported() {
    let (mut a, t) = (four(), Instant::now());
    for d in [D(0), D(5), D(127), D::EXTERNAL, D(255)] {
        refused(
            a.request(&p(0), d, &[n(1)], t),
            Status::ERR_NOT_SUPPORTED,
            &format!("directive {}", d.0),
        );
    }
    assert_eq!(a.free_cpus().len(), 4);
}

#[test]
fn alloc_extend_by_alloc_id_adds_cpus() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(1)], t).unwrap();
    a.request(&p(1), D::NEW, &[n(1)], t).unwrap();
    let r = a
        .request(&p(0), D::EXTEND, &[id("alloc-1"), n(2)], t)
        .unwrap();
    assert_eq!(get(&r, &CPU_LIST), "0,2-3");
    assert_eq!(get(&r, &NUM_CPUS), "3");
    refused(
        a.request(&p(0), D::EXTEND, &[id("alloc-1"), n(1)], t),
        Status::ERR_OUT_OF_RESOURCE,
        "1 CPUs requested, 0 free",
    );
    refused(
        a.request(&p(0), D::EXTEND, &[id("alloc-9"), n(1)], t),
        Status::ERR_NOT_FOUND,
        "alloc-9",
    );
    refused(
        a.request(&p(0), D::EXTEND, &[n(1)], t),
        Status::ERR_BAD_PARAM,
        "needs PMIX_ALLOC_ID",
    );
}

#[test]
fn alloc_extend_by_req_id_adds_time_and_moves_the_deadline() {
    let (mut a, t) = (four(), Instant::now());
    let req = Info::new(REQ_ID, "long");
    a.request(&p(0), D::NEW, &[n(1), secs(10), req.clone()], t)
        .unwrap();
    assert_eq!(
        a.next_deadline(),
        Some(t + Duration::from_secs(10) - WARNING_LEAD)
    );
    let r = a
        .request(&p(0), D::EXTEND, &[req.clone(), secs(5)], t)
        .unwrap();
    assert_eq!(get(&r, &TIME), "15");
    assert_eq!(get(&r, &ALLOC_ID), "alloc-1");
    assert_eq!(
        a.next_deadline(),
        Some(t + Duration::from_secs(15) - WARNING_LEAD)
    );
    assert!(a.tick(t + Duration::from_secs(10)).is_empty());
    // Another holder's request ids are not searched.
    refused(
        a.request(&p(1), D::EXTEND, &[req, secs(5)], t),
        Status::ERR_NOT_FOUND,
        "no allocation with request id",
    );
    // Without a time limit there is nothing to extend in time.
    a.request(&p(0), D::NEW, &[n(1)], t).unwrap();
    refused(
        a.request(&p(0), D::EXTEND, &[id("alloc-2"), secs(5)], t),
        Status::ERR_BAD_PARAM,
        "no time limit",
    );
}

#[test]
fn alloc_another_holder_cannot_extend_or_release_it() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(1), secs(10)], t).unwrap();
    let perm = Status::ERR_NO_PERMISSIONS;
    refused(
        a.request(&p(1), D::EXTEND, &[id("alloc-1"), n(1)], t),
        perm,
        "held by job:0, not by job:1",
    );
    refused(
        a.request(&p(1), D::EXTEND, &[id("alloc-1"), secs(9)], t),
        perm,
        "held by job:0",
    );
    refused(
        a.request(&p(1), D::RELEASE, &[id("alloc-1")], t),
        perm,
        "held by job:0",
    );
    refused(
        a.request(&p(1), D::REAQUIRE, &[id("alloc-1")], t),
        perm,
        "held by job:0",
    );
    assert_eq!(a.free_cpus(), vec![1, 2, 3]);
    assert_eq!(a.next_deadline(), Some(t + Duration::from_secs(9)));
}

#[test]
fn alloc_release_partial_then_total() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(4)], t).unwrap();
    let r = a
        .request(&p(0), D::RELEASE, &[id("alloc-1"), n(1)], t)
        .unwrap();
    assert_eq!(
        get(&r, &CPU_LIST),
        "0-2",
        "a counted release gives back the highest CPUs"
    );
    let r = a
        .request(&p(0), D::RELEASE, &[id("alloc-1"), list("0")], t)
        .unwrap();
    assert_eq!(get(&r, &CPU_LIST), "1-2");
    assert_eq!(a.free_cpus(), vec![0, 3]);
    refused(
        a.request(&p(0), D::RELEASE, &[id("alloc-1"), list("0")], t),
        Status::ERR_BAD_PARAM,
        "not held by alloc-1",
    );
    refused(
        a.request(&p(0), D::RELEASE, &[id("alloc-1"), n(3)], t),
        Status::ERR_BAD_PARAM,
        "holds 2",
    );
    let r = a.request(&p(0), D::RELEASE, &[id("alloc-1")], t).unwrap();
    assert_eq!(get(&r, &NUM_CPUS), "0");
    assert_eq!(a.free_cpus(), vec![0, 1, 2, 3]);
    assert_eq!(a.summary(), "");
    refused(
        a.request(&p(0), D::RELEASE, &[id("alloc-1")], t),
        Status::ERR_NOT_FOUND,
        "no allocation alloc-1",
    );
}

#[test]
fn alloc_lent_cpus_go_to_others_and_reacquire_waits_until_they_are_free() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(3)], t).unwrap();
    let r = a
        .request(
            &p(0),
            D::RELEASE,
            &[id("alloc-1"), list("1-2"), secs(60)],
            t,
        )
        .unwrap();
    assert_eq!(get(&r, &CPU_LIST), "0");
    assert_eq!(a.next_deadline(), Some(t + Duration::from_secs(60)));
    // The lent CPUs are free: someone else gets them (and CPU 3).
    let r = a.request(&p(1), D::NEW, &[n(3)], t).unwrap();
    assert_eq!(get(&r, &CPU_LIST), "1-3");
    assert!(a.summary().contains("lent 1-2"), "{}", a.summary());
    let r = a.request(&p(0), D::REAQUIRE, &[id("alloc-1")], t);
    refused(
        r,
        Status::ERR_OUT_OF_RESOURCE,
        "2 lent CPUs to take back, 0 free (CPUs 0 held by alloc-1; CPUs 1-3 held by alloc-2)",
    );
    a.request(&p(1), D::RELEASE, &[id("alloc-2")], t).unwrap();
    let r = a.request(&p(0), D::REAQUIRE, &[id("alloc-1")], t).unwrap();
    assert_eq!(
        get(&r, &CPU_LIST),
        "0-2",
        "the same CPUs when they are free"
    );
    assert_eq!(a.next_deadline(), None);
    refused(
        a.request(&p(0), D::REAQUIRE, &[id("alloc-1")], t),
        Status::ERR_BAD_PARAM,
        "no lent CPUs",
    );
}

#[test]
fn alloc_reacquire_takes_other_free_cpus_when_the_lent_ones_are_busy() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[list("0-1")], t).unwrap();
    a.request(&p(0), D::RELEASE, &[id("alloc-1"), secs(60)], t)
        .unwrap();
    assert_eq!(
        a.free_cpus(),
        vec![0, 1, 2, 3],
        "a loan of everything keeps the allocation"
    );
    a.request(&p(1), D::NEW, &[list("0")], t).unwrap();
    let r = a.request(&p(0), D::REAQUIRE, &[id("alloc-1")], t).unwrap();
    assert_eq!(get(&r, &CPU_LIST), "1-2");
}

#[test]
fn alloc_loan_end_reacquires_or_tells_the_holder() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(2)], t).unwrap();
    a.request(&p(0), D::RELEASE, &[id("alloc-1"), n(1), secs(5)], t)
        .unwrap();
    assert!(a.tick(t + Duration::from_secs(4)).is_empty());
    let ev = a.tick(t + Duration::from_secs(5));
    assert_eq!(
        ev,
        vec![Expiry::Reacquired {
            holder: p(0),
            id: "alloc-1".into(),
            cpus: vec![1]
        }]
    );
    assert_eq!(a.free_cpus(), vec![2, 3]);
    // A loan whose CPUs are all taken at its end fails, once, and stays recorded.
    a.request(&p(0), D::RELEASE, &[id("alloc-1"), list("0-1"), secs(5)], t)
        .unwrap();
    a.request(&p(1), D::NEW, &[n(4)], t).unwrap();
    let ev = a.tick(t + Duration::from_secs(5));
    assert!(
        matches!(&ev[..], [Expiry::ReacquireFailed { holder, id, reason }]
        if *holder == p(0) && id == "alloc-1" && reason.contains("2 lent CPUs to take back, 0 free")),
        "{ev:?}"
    );
    assert_eq!(a.next_deadline(), None);
    assert!(a.tick(t + Duration::from_secs(6)).is_empty());
    a.release_holder(&p(1));
    assert!(a.request(&p(0), D::REAQUIRE, &[id("alloc-1")], t).is_ok());
}

#[test]
fn alloc_time_limit_warns_once_at_the_lead_then_expires_and_frees() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(2), secs(10)], t).unwrap();
    let warn_at = t + Duration::from_secs(10) - WARNING_LEAD;
    assert_eq!(a.next_deadline(), Some(warn_at));
    assert!(a.tick(warn_at - Duration::from_millis(1)).is_empty());
    let ev = a.tick(warn_at);
    let warning = Expiry::Warning {
        holder: p(0),
        id: "alloc-1".into(),
        remaining_secs: 1,
        cpus: vec![0, 1],
    };
    assert_eq!(ev, vec![warning]);
    assert!(
        a.tick(warn_at + Duration::from_millis(500)).is_empty(),
        "a warning is sent once"
    );
    assert_eq!(a.next_deadline(), Some(t + Duration::from_secs(10)));
    assert_eq!(a.free_cpus(), vec![2, 3]);
    let ev = a.tick(t + Duration::from_secs(10));
    assert_eq!(
        ev,
        vec![Expiry::Expired {
            holder: p(0),
            id: "alloc-1".into(),
            cpus: vec![0, 1]
        }]
    );
    assert_eq!(a.free_cpus(), vec![0, 1, 2, 3]);
    assert_eq!(a.next_deadline(), None);
    assert!(a.tick(t + Duration::from_secs(11)).is_empty());
}

#[test]
fn alloc_short_limit_warns_at_half_and_a_late_tick_still_warns_first() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(1), secs(1)], t).unwrap();
    assert_eq!(a.next_deadline(), Some(t + Duration::from_millis(500)));
    a.request(&p(1), D::NEW, &[n(1), secs(3)], t).unwrap();
    let ev = a.tick(t + Duration::from_secs(5));
    let kinds: Vec<_> = ev
        .iter()
        .map(|e| match e {
            Expiry::Warning {
                id,
                remaining_secs: 0,
                ..
            } => format!("warn {id}"),
            Expiry::Expired { id, .. } => format!("expired {id}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "warn alloc-1",
            "expired alloc-1",
            "warn alloc-2",
            "expired alloc-2"
        ]
    );
}

#[test]
fn alloc_expiry_frees_cpus_before_loans_reacquire_in_the_same_tick() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(2)], t).unwrap();
    a.request(&p(0), D::RELEASE, &[id("alloc-1"), secs(5)], t)
        .unwrap();
    a.request(&p(1), D::NEW, &[n(3), secs(5)], t).unwrap();
    let ev = a.tick(t + Duration::from_secs(5));
    assert!(
        matches!(ev.last(), Some(Expiry::Reacquired { cpus, .. }) if cpus == &[0, 1]),
        "{ev:?}"
    );
}

#[test]
fn alloc_release_holder_frees_everything_it_held() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(1)], t).unwrap();
    a.request(&p(1), D::NEW, &[n(1)], t).unwrap();
    a.request(&p(0), D::NEW, &[n(2), secs(30)], t).unwrap();
    assert_eq!(a.release_holder(&p(0)), vec![0, 2, 3]);
    assert_eq!(a.free_cpus(), vec![0, 2, 3]);
    assert_eq!(a.next_deadline(), None);
    assert_eq!(a.summary().lines().count(), 1);
    assert!(
        a.summary().starts_with("alloc-2 job:1: CPUs 1 (1)"),
        "{}",
        a.summary()
    );
    assert!(a.release_holder(&p(0)).is_empty());
}

#[test]
fn alloc_summary_has_one_line_per_allocation() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(2), secs(10), Info::new(REQ_ID, "r")], t)
        .unwrap();
    a.request(&p(0), D::RELEASE, &[id("alloc-1"), n(1), secs(3)], t)
        .unwrap();
    a.request(&p(1), D::NEW, &[list("3")], t).unwrap();
    assert_eq!(
        a.summary(),
        "alloc-1 job:0 req \"r\": CPUs 0 (1), limit 10 s, lent 1\nalloc-2 job:1: CPUs 3 (1)\n"
    );
}

#[test]
fn alloc_extension_after_the_warning_rearms_it_for_the_new_deadline() {
    let (mut a, t) = (four(), Instant::now());
    a.request(&p(0), D::NEW, &[n(1), secs(2)], t).unwrap();
    assert_eq!(a.tick(t + Duration::from_secs(1)).len(), 1);
    a.request(&p(0), D::EXTEND, &[id("alloc-1"), secs(3)], t)
        .unwrap();
    assert_eq!(a.next_deadline(), Some(t + Duration::from_secs(4)));
    assert!(
        a.tick(t + Duration::from_secs(2)).is_empty(),
        "the old deadline passed harmlessly"
    );
    let ev = a.tick(t + Duration::from_secs(4));
    assert!(
        matches!(
            &ev[..],
            [Expiry::Warning {
                remaining_secs: 1,
                ..
            }]
        ),
        "{ev:?}"
    );
    assert!(matches!(
        &a.tick(t + Duration::from_secs(5))[..],
        [Expiry::Expired { .. }]
    ));
}
