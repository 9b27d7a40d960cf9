//! Conformance: handler registration and chain ordering (Standard "Event
//! Notification" §Notification and Management, PMIx_Register_event_handler;
//! RFC0018 "Desired ordering"). Each test is named after the rule it checks.

mod common;

use common::{engine, me, Recorder};
use fastpmix::event::{Engine, Event, HandlerRef, Notification, Origin};
use fastpmix::types::attrs::*;
use fastpmix::{DataRange, Info, Status};

const C: Status = Status(100);
const D: Status = Status(101);

fn name(n: &str) -> Info {
    Info::new(PMIX_EVENT_HDLR_NAME, n)
}

fn flag(k: fastpmix::Key) -> Info {
    Info::new(k, true)
}

/// The chain `code` would run now, as the recorder tags of its handlers.
fn order(e: &Engine, code: Status, tags: &[(HandlerRef, &str)]) -> Vec<String> {
    let ev = Event::new(
        Notification::new(code, me(), DataRange::PROC_LOCAL),
        Origin::ThisProcess,
    )
    .unwrap();
    e.chain_preview(&ev)
        .into_iter()
        .map(|r| {
            tags.iter()
                .find(|(h, _)| *h == r)
                .map(|(_, t)| t.to_string())
                .unwrap()
        })
        .collect()
}

/// Runs `code` through the real chain and returns the tags in call order.
fn run(e: &Engine, rec: &Recorder, code: Status) -> Vec<String> {
    let before = rec.len();
    let (tx, rx) = std::sync::mpsc::channel();
    e.notify_observed(
        Notification::new(code, me(), DataRange::PROC_LOCAL),
        move |o| {
            tx.send(o.handlers_run).unwrap();
        },
    )
    .unwrap();
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    rec.tags()[before..].to_vec()
}

#[test]
fn chain_order_is_first_single_multi_default_last() {
    let e = engine();
    let r = Recorder::default();
    // Registered in scrambled order on purpose.
    let last = r
        .register(&e, "last", &[], vec![flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    let dflt = r.register(&e, "default", &[], vec![]).unwrap();
    let multi = r.register(&e, "multi", &[C, D], vec![]).unwrap();
    let single = r.register(&e, "single", &[C], vec![]).unwrap();
    let first = r
        .register(&e, "first", &[C, D], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    let tags = [
        (first, "first"),
        (single, "single"),
        (multi, "multi"),
        (dflt, "default"),
        (last, "last"),
    ];
    let want = ["first", "single", "multi", "default", "last"];
    assert_eq!(order(&e, C, &tags), want);
    assert_eq!(run(&e, &r, C), want);
    // D: no single-code handler for it.
    assert_eq!(run(&e, &r, D), ["first", "multi", "default", "last"]);
}

#[test]
fn first_handler_is_called_before_any_other_regardless_of_category() {
    let e = engine();
    let r = Recorder::default();
    r.register(
        &e,
        "single",
        &[C],
        vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)],
    )
    .unwrap();
    // A default handler in the FIRST slot still precedes single-code handlers.
    r.register(&e, "first-default", &[], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    assert_eq!(run(&e, &r, C), ["first-default", "single"]);
}

#[test]
fn last_handler_is_called_after_all_default_handlers() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "last-single", &[C], vec![flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    r.register(&e, "default", &[], vec![flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    r.register(&e, "multi", &[C, D], vec![]).unwrap();
    assert_eq!(run(&e, &r, C), ["multi", "default", "last-single"]);
}

#[test]
fn second_first_registration_is_refused_with_event_registration_error() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "a", &[C], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    assert_eq!(
        r.register(&e, "b", &[D], vec![flag(PMIX_EVENT_HDLR_FIRST)]),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
}

#[test]
fn second_last_registration_is_refused_with_event_registration_error() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "a", &[], vec![flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    assert_eq!(
        r.register(&e, "b", &[C, D], vec![flag(PMIX_EVENT_HDLR_LAST)]),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
}

#[test]
fn deregistering_first_reopens_the_first_slot() {
    let e = engine();
    let r = Recorder::default();
    let a = r
        .register(&e, "a", &[C], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    e.deregister(a).unwrap();
    let b = r
        .register(&e, "b", &[C], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    let other = r.register(&e, "other", &[C], vec![]).unwrap();
    assert_eq!(order(&e, C, &[(b, "b"), (other, "other")]), ["b", "other"]);
}

#[test]
fn deregistering_last_reopens_the_last_slot() {
    let e = engine();
    let r = Recorder::default();
    let a = r
        .register(&e, "a", &[C], vec![flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    e.deregister(a).unwrap();
    let b = r
        .register(&e, "b", &[C], vec![flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    let other = r.register(&e, "other", &[], vec![]).unwrap();
    assert_eq!(order(&e, C, &[(b, "b"), (other, "other")]), ["other", "b"]);
}

#[test]
fn first_in_category_is_one_per_category() {
    let e = engine();
    let r = Recorder::default();
    r.register(
        &e,
        "s1",
        &[C],
        vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)],
    )
    .unwrap();
    assert_eq!(
        r.register(
            &e,
            "s2",
            &[D],
            vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)]
        ),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    // Other categories have their own.
    r.register(
        &e,
        "m1",
        &[C, D],
        vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)],
    )
    .unwrap();
    r.register(&e, "d1", &[], vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)])
        .unwrap();
}

#[test]
fn last_in_category_is_one_per_category() {
    let e = engine();
    let r = Recorder::default();
    let s1 = r
        .register(&e, "s1", &[C], vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)])
        .unwrap();
    assert_eq!(
        r.register(&e, "s2", &[C], vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)]),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    r.register(&e, "d1", &[], vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)])
        .unwrap();
    // Deregistration reopens the category's slot.
    e.deregister(s1).unwrap();
    r.register(&e, "s3", &[C], vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)])
        .unwrap();
}

#[test]
fn first_and_last_in_category_bracket_their_category() {
    let e = engine();
    let r = Recorder::default();
    let l = r
        .register(&e, "l", &[C], vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)])
        .unwrap();
    let a = r.register(&e, "a", &[C], vec![]).unwrap();
    let f = r
        .register(&e, "f", &[C], vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)])
        .unwrap();
    let b = r
        .register(&e, "b", &[C], vec![flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    let tags = [(l, "l"), (a, "a"), (f, "f"), (b, "b")];
    assert_eq!(order(&e, C, &tags), ["f", "a", "b", "l"]);
}

#[test]
fn default_placement_is_prepend_newest_first() {
    let e = engine();
    let r = Recorder::default();
    let a = r.register(&e, "a", &[C], vec![]).unwrap();
    let b = r.register(&e, "b", &[C], vec![]).unwrap();
    let c = r.register(&e, "c", &[C], vec![]).unwrap();
    assert_eq!(
        order(&e, C, &[(a, "a"), (b, "b"), (c, "c")]),
        ["c", "b", "a"]
    );
    assert_eq!(run(&e, &r, C), ["c", "b", "a"]);
}

#[test]
fn prepend_never_goes_ahead_of_first_in_category() {
    let e = engine();
    let r = Recorder::default();
    let f = r
        .register(&e, "f", &[C], vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)])
        .unwrap();
    let p = r
        .register(&e, "p", &[C], vec![flag(PMIX_EVENT_HDLR_PREPEND)])
        .unwrap();
    // No directive = prepend: also stays behind (OpenPMIx 4.2 puts it ahead).
    let d = r.register(&e, "d", &[C], vec![]).unwrap();
    assert_eq!(
        order(&e, C, &[(f, "f"), (p, "p"), (d, "d")]),
        ["f", "d", "p"]
    );
}

#[test]
fn append_never_goes_behind_last_in_category() {
    let e = engine();
    let r = Recorder::default();
    let l = r
        .register(&e, "l", &[], vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)])
        .unwrap();
    let a1 = r
        .register(&e, "a1", &[], vec![flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    let a2 = r
        .register(&e, "a2", &[], vec![flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    assert_eq!(
        order(&e, C, &[(l, "l"), (a1, "a1"), (a2, "a2")]),
        ["a1", "a2", "l"]
    );
}

#[test]
fn openpmix_probe_sequence_orders_first_in_category_ahead_of_later_defaults() {
    // ../shared/reference/openpmix-behaviour.md §1b: h1, h2, h3(LAST_IN_CAT), h0(FIRST_IN_CAT), h5
    // ran in OpenPMIx 4.2.2 as h5, h0, h2, h1, h3 — h5 jumped ahead of the
    // FIRST_IN_CATEGORY handler. fastpmix keeps h0 first (a deliberate fix).
    let e = engine();
    let r = Recorder::default();
    let h1 = r.register(&e, "h1", &[C], vec![]).unwrap();
    let h2 = r.register(&e, "h2", &[C], vec![]).unwrap();
    let h3 = r
        .register(&e, "h3", &[C], vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)])
        .unwrap();
    let h0 = r
        .register(
            &e,
            "h0",
            &[C],
            vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)],
        )
        .unwrap();
    let h5 = r.register(&e, "h5", &[C], vec![]).unwrap();
    let tags = [(h1, "h1"), (h2, "h2"), (h3, "h3"), (h0, "h0"), (h5, "h5")];
    assert_eq!(order(&e, C, &tags), ["h0", "h5", "h2", "h1", "h3"]);
    assert_eq!(run(&e, &r, C), ["h0", "h5", "h2", "h1", "h3"]);
}

#[test]
fn before_places_the_handler_immediately_before_the_named_one() {
    let e = engine();
    let r = Recorder::default();
    let a = r
        .register(&e, "a", &[C], vec![name("a"), flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    let b = r
        .register(&e, "b", &[C], vec![name("b"), flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    let x = r
        .register(
            &e,
            "x",
            &[C],
            vec![name("x"), Info::new(PMIX_EVENT_HDLR_BEFORE, "b")],
        )
        .unwrap();
    assert_eq!(
        order(&e, C, &[(a, "a"), (b, "b"), (x, "x")]),
        ["a", "x", "b"]
    );
    assert_eq!(run(&e, &r, C), ["a", "x", "b"]);
}

#[test]
fn after_places_the_handler_immediately_after_the_named_one() {
    let e = engine();
    let r = Recorder::default();
    let a = r
        .register(&e, "a", &[C], vec![name("a"), flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    let b = r
        .register(&e, "b", &[C], vec![name("b"), flag(PMIX_EVENT_HDLR_APPEND)])
        .unwrap();
    let x = r
        .register(&e, "x", &[C], vec![Info::new(PMIX_EVENT_HDLR_AFTER, "a")])
        .unwrap();
    // Later prepends do not separate x from a's relative order.
    let p = r.register(&e, "p", &[C], vec![]).unwrap();
    let tags = [(a, "a"), (b, "b"), (x, "x"), (p, "p")];
    assert_eq!(order(&e, C, &tags), ["p", "a", "x", "b"]);
}

#[test]
fn before_or_after_an_unknown_name_is_refused() {
    // OpenPMIx 4.2 compares against the registrant's own name (bug); we
    // look the named handler up.
    let e = engine();
    let r = Recorder::default();
    for k in [PMIX_EVENT_HDLR_BEFORE, PMIX_EVENT_HDLR_AFTER] {
        assert_eq!(
            r.register(&e, "x", &[C], vec![Info::new(k, "nobody")]),
            Err(Status::ERR_EVENT_REGISTRATION)
        );
    }
    assert_eq!(e.handler_count(), 0);
}

#[test]
fn before_or_after_a_handler_of_another_category_is_refused() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "s", &[C], vec![name("single")]).unwrap();
    r.register(&e, "m", &[C, D], vec![name("multi")]).unwrap();
    assert_eq!(
        r.register(
            &e,
            "x",
            &[],
            vec![Info::new(PMIX_EVENT_HDLR_BEFORE, "single")]
        ),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    assert_eq!(
        r.register(
            &e,
            "y",
            &[C],
            vec![Info::new(PMIX_EVENT_HDLR_AFTER, "multi")]
        ),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    // Same category works.
    r.register(
        &e,
        "z",
        &[D],
        vec![Info::new(PMIX_EVENT_HDLR_AFTER, "single")],
    )
    .unwrap();
}

#[test]
fn before_first_in_category_or_after_last_in_category_is_refused() {
    let e = engine();
    let r = Recorder::default();
    r.register(
        &e,
        "f",
        &[C],
        vec![name("f"), flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)],
    )
    .unwrap();
    r.register(
        &e,
        "l",
        &[C],
        vec![name("l"), flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)],
    )
    .unwrap();
    assert_eq!(
        r.register(&e, "x", &[C], vec![Info::new(PMIX_EVENT_HDLR_BEFORE, "f")]),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    assert_eq!(
        r.register(&e, "y", &[C], vec![Info::new(PMIX_EVENT_HDLR_AFTER, "l")]),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    // The other sides are fine.
    r.register(&e, "z", &[C], vec![Info::new(PMIX_EVENT_HDLR_AFTER, "f")])
        .unwrap();
    r.register(&e, "w", &[C], vec![Info::new(PMIX_EVENT_HDLR_BEFORE, "l")])
        .unwrap();
}

#[test]
fn before_the_global_first_or_after_the_global_last_handler_is_refused() {
    // RFC0018 refuses BEFORE the FIRST handler and AFTER the LAST one:
    // nothing can run ahead of FIRST or behind LAST. The FIRST and LAST
    // handlers here are single-code handlers for C, as is every
    // registrant, so a refusal cannot come from a category mismatch.
    let e = engine();
    let r = Recorder::default();
    let gf = r
        .register(
            &e,
            "gf",
            &[C],
            vec![name("gf"), flag(PMIX_EVENT_HDLR_FIRST)],
        )
        .unwrap();
    let gl = r
        .register(&e, "gl", &[C], vec![name("gl"), flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    let s = r.register(&e, "s", &[C], vec![name("s")]).unwrap();
    for (k, n) in [
        (PMIX_EVENT_HDLR_BEFORE, "gf"),
        (PMIX_EVENT_HDLR_AFTER, "gl"),
    ] {
        assert_eq!(
            r.register(&e, "x", &[C], vec![Info::new(k.clone(), n)]),
            Err(Status::ERR_EVENT_REGISTRATION),
            "{} {n}",
            k.as_str()
        );
    }
    // The same directives naming a handler of the category are taken: the
    // refusals above are about the global slots, not the lookup.
    let b = r
        .register(&e, "b", &[C], vec![Info::new(PMIX_EVENT_HDLR_BEFORE, "s")])
        .unwrap();
    let a = r
        .register(&e, "a", &[C], vec![Info::new(PMIX_EVENT_HDLR_AFTER, "s")])
        .unwrap();
    // No refused registration left a handler in the chain.
    let tags = [(gf, "gf"), (b, "b"), (s, "s"), (a, "a"), (gl, "gl")];
    let want = ["gf", "b", "s", "a", "gl"];
    assert_eq!(order(&e, C, &tags), want);
    assert_eq!(run(&e, &r, C), want);
}

#[test]
fn after_the_global_first_or_before_the_global_last_goes_to_that_edge_of_its_own_category() {
    // The Standard's hybrid use case: the OpenMP runtime registers FIRST,
    // the MPI library AFTER it. The handler goes right after FIRST within
    // its own category (still behind that category's FIRST_IN_CATEGORY
    // handler); BEFORE LAST goes right before LAST, ahead of a
    // LAST_IN_CATEGORY handler. Single-code C and multi-code {C, D}
    // registrants each stay in their own category.
    let e = engine();
    let r = Recorder::default();
    let omp = r
        .register(
            &e,
            "omp",
            &[C],
            vec![name("omp"), flag(PMIX_EVENT_HDLR_FIRST)],
        )
        .unwrap();
    let tool = r
        .register(
            &e,
            "tool",
            &[C],
            vec![name("tool"), flag(PMIX_EVENT_HDLR_LAST)],
        )
        .unwrap();
    let fic = r
        .register(
            &e,
            "fic",
            &[C],
            vec![flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)],
        )
        .unwrap();
    let lic = r
        .register(
            &e,
            "lic",
            &[C],
            vec![flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)],
        )
        .unwrap();
    let s = r.register(&e, "s", &[C], vec![]).unwrap();
    let mpi = r
        .register(
            &e,
            "mpi",
            &[C],
            vec![Info::new(PMIX_EVENT_HDLR_AFTER, "omp")],
        )
        .unwrap();
    let end = r
        .register(
            &e,
            "end",
            &[C],
            vec![Info::new(PMIX_EVENT_HDLR_BEFORE, "tool")],
        )
        .unwrap();
    let multi = r.register(&e, "multi", &[C, D], vec![]).unwrap();
    let m_after = r
        .register(
            &e,
            "m_after",
            &[C, D],
            vec![Info::new(PMIX_EVENT_HDLR_AFTER, "omp")],
        )
        .unwrap();
    let tags = [
        (omp, "omp"),
        (fic, "fic"),
        (mpi, "mpi"),
        (s, "s"),
        (end, "end"),
        (lic, "lic"),
        (m_after, "m_after"),
        (multi, "multi"),
        (tool, "tool"),
    ];
    let want = [
        "omp", "fic", "mpi", "s", "end", "lic", "m_after", "multi", "tool",
    ];
    assert_eq!(order(&e, C, &tags), want);
    assert_eq!(run(&e, &r, C), want);
}

#[test]
fn handler_names_are_unique() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "a", &[C], vec![name("dup")]).unwrap();
    // Whatever the category or other directives.
    assert_eq!(
        r.register(&e, "b", &[], vec![name("dup")]),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    assert_eq!(
        r.register(
            &e,
            "c",
            &[D],
            vec![name("dup"), flag(PMIX_EVENT_HDLR_FIRST)]
        ),
        Err(Status::ERR_EVENT_REGISTRATION)
    );
    // A refused FIRST registration did not take the slot.
    r.register(&e, "d", &[D], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
}

#[test]
fn deregistration_frees_the_handler_name() {
    let e = engine();
    let r = Recorder::default();
    let a = r.register(&e, "a", &[C], vec![name("n")]).unwrap();
    e.deregister(a).unwrap();
    r.register(&e, "b", &[C], vec![name("n")]).unwrap();
}

#[test]
fn multiple_handlers_may_register_for_the_same_codes() {
    // RFC0018 lifts the one-handler-per-code restriction.
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "s1", &[C], vec![]).unwrap();
    r.register(&e, "s2", &[C], vec![]).unwrap();
    r.register(&e, "m1", &[C, D], vec![]).unwrap();
    r.register(&e, "m2", &[D, C], vec![]).unwrap();
    assert_eq!(run(&e, &r, C), ["s2", "s1", "m2", "m1"]);
}

#[test]
fn handler_references_start_at_one_and_are_never_reused() {
    let e = engine();
    let r = Recorder::default();
    let mut seen = std::collections::HashSet::new();
    for i in 0..50 {
        let h = r.register(&e, "x", &[C], vec![]).unwrap();
        assert!(h.0 >= 1);
        assert!(seen.insert(h), "reference {h} reused");
        if i % 2 == 0 {
            e.deregister(h).unwrap();
        }
    }
    // Refused registrations consume no visible reference but never recycle one.
    let _ = r.register(
        &e,
        "bad",
        &[C],
        vec![Info::new(PMIX_EVENT_HDLR_BEFORE, "none")],
    );
    let h = r.register(&e, "y", &[C], vec![]).unwrap();
    assert!(!seen.contains(&h));
}

#[test]
fn duplicate_codes_in_one_registration_count_once() {
    let e = engine();
    let r = Recorder::default();
    // [C, C] is a single-code handler, served with the single category.
    r.register(&e, "cc", &[C, C], vec![]).unwrap();
    r.register(&e, "multi", &[C, D], vec![]).unwrap();
    assert_eq!(run(&e, &r, C), ["cc", "multi"]);
}

#[test]
fn registrations_from_many_threads_all_take_effect() {
    let e = engine();
    let r = Recorder::default();
    std::thread::scope(|s| {
        for t in 0..8 {
            let (e, r) = (e.clone(), r.clone());
            s.spawn(move || {
                for i in 0..20 {
                    r.register(
                        &e,
                        &format!("t{t}-{i}"),
                        &[C],
                        vec![name(&format!("t{t}-{i}"))],
                    )
                    .unwrap();
                }
            });
        }
    });
    assert_eq!(e.handler_count(), 160);
    let tags = run(&e, &r, C);
    assert_eq!(tags.len(), 160);
    // Within one thread, newer registrations come first (prepend).
    for t in 0..8 {
        let mine: Vec<_> = tags
            .iter()
            .filter(|x| x.starts_with(&format!("t{t}-")))
            .collect();
        let idx: Vec<u32> = mine
            .iter()
            .map(|x| x.rsplit('-').next().unwrap().parse().unwrap())
            .collect();
        assert!(idx.windows(2).all(|w| w[0] > w[1]), "thread {t}: {idx:?}");
    }
}

/// Directives act at insertion and never reorder existing entries, however
/// many insertions land at one spot: 100 handlers each registered AFTER
/// the same one (each then sits right behind it, ahead of the earlier
/// ones), and 100 BEFORE a LAST_IN_CATEGORY one, keep every relation, and
/// removing some leaves the others' order as it was.
#[test]
fn many_insertions_at_one_spot_keep_every_relation_of_the_order() {
    let e = engine();
    let r = Recorder::default();
    let mut tags: Vec<(HandlerRef, String)> = Vec::new();
    let mut reg = |tag: String, info: Vec<Info>| {
        let h = r.register(&e, &tag, &[C], info).unwrap();
        tags.push((h, tag));
    };
    reg("a".into(), vec![name("a")]);
    reg(
        "z".into(),
        vec![name("z"), flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)],
    );
    for i in 0..100 {
        reg(
            format!("after-{i}"),
            vec![Info::new(PMIX_EVENT_HDLR_AFTER, "a")],
        );
        reg(
            format!("before-{i}"),
            vec![Info::new(PMIX_EVENT_HDLR_BEFORE, "z")],
        );
    }
    let mut want = vec!["a".to_string()];
    want.extend((0..100).rev().map(|i| format!("after-{i}")));
    want.extend((0..100).map(|i| format!("before-{i}")));
    want.push("z".into());
    let view: Vec<(HandlerRef, &str)> = tags.iter().map(|(h, t)| (*h, t.as_str())).collect();
    assert_eq!(order(&e, C, &view), want);
    // Remove every third and check the rest kept their places.
    for (h, t) in tags.iter().skip(2).step_by(3) {
        e.deregister(*h).unwrap();
        want.retain(|w| w != t);
    }
    assert_eq!(order(&e, C, &view), want);
    assert_eq!(run(&e, &r, C), want);
}
