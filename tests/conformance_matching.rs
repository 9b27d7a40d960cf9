//! Conformance: which events reach which handlers. Code matching (Standard
//! "Event Notification" §Notification and Management: single-code, multi-code
//! and default handlers, `PMIX_EVENT_NON_DEFAULT`), receiver-level source
//! filtering (RFC0018 "Receiver-level filtering of events", `PMIX_RANGE` +
//! `PMIX_EVENT_CUSTOM_RANGE` at registration), affected processes
//! (`PMIX_EVENT_AFFECTED_PROC(S)` on both sides), job vs environment events
//! (RFC0002 `PMIX_EVENT_JOB_LEVEL` / `PMIX_EVENT_ENVIRO_LEVEL`,
//! `PMIX_SYSTEM_EVENT`), and the generator's target range as the receiving
//! process applies it (../shared/reference/openpmix-behaviour.md §1d–1e).
//!
//! Pure matching is checked with `Engine::chain_preview`; the key rules are
//! also checked end to end, through `notify` / `deliver` and a recording
//! handler. Each test is named after the rule it checks.

mod common;

use common::{engine, me, settle, Recorder};
use fastpmix::event::{Engine, Event, EventClass, HandlerRef, Notification, Origin};
use fastpmix::types::attrs::*;
use fastpmix::{DataRange, Info, Proc, Rank, Status};
use std::sync::mpsc;
use std::time::Duration;

const C: Status = Status(300);
const D: Status = Status(301);
const E: Status = Status(302);
/// The code `common::settle` notifies; filtered out of recordings.
const SETTLE: Status = Status(i32::MAX);
const T: Duration = Duration::from_secs(10);

const ALL_ORIGINS: [Origin; 3] = [Origin::ThisProcess, Origin::ThisNode, Origin::Remote];

fn p(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).unwrap()
}

/// Another rank of my namespace.
fn peer() -> Proc {
    p("test-job", 5)
}

/// A process of another namespace.
fn stranger() -> Proc {
    p("other-job", 3)
}

fn range(r: DataRange) -> Info {
    Info::new(PMIX_RANGE, r)
}

fn custom(l: Vec<Proc>) -> Info {
    Info::new(PMIX_EVENT_CUSTOM_RANGE, l)
}

fn affected(l: Vec<Proc>) -> Info {
    Info::new(PMIX_EVENT_AFFECTED_PROCS, l)
}

fn flag(k: fastpmix::Key) -> Info {
    Info::new(k, true)
}

/// An event from `source`, arriving from `origin`, with a target range that
/// includes everybody (so only the registration side decides).
fn ev(code: Status, source: Proc, origin: Origin, info: Vec<Info>) -> Event {
    ev_in(code, source, DataRange::GLOBAL, origin, info)
}

fn ev_in(code: Status, source: Proc, r: DataRange, origin: Origin, info: Vec<Info>) -> Event {
    let mut n = Notification::new(code, source, r);
    n.info = info;
    Event::new(n, origin).unwrap()
}

/// Would `ev` reach handler `h` right now?
fn reaches(e: &Engine, h: HandlerRef, ev: &Event) -> bool {
    e.chain_preview(ev).contains(&h)
}

/// What the recorder saw, without the settle events.
fn calls(r: &Recorder) -> Vec<(String, Status)> {
    r.0.lock()
        .unwrap()
        .iter()
        .filter(|(_, c)| *c != SETTLE)
        .cloned()
        .collect()
}

/// The tags of the handlers called so far, without the settle events.
fn tags(r: &Recorder) -> Vec<String> {
    calls(r).into_iter().map(|(t, _)| t).collect()
}

/// Hands `ev` in through the transport entry and drains the progress thread.
/// Returns `deliver`'s verdict.
fn deliver(e: &Engine, ev: Event) -> bool {
    let accepted = e.deliver(ev).unwrap();
    settle(e);
    accepted
}

/// Notifies (blocking) and drains the progress thread.
fn notify(e: &Engine, n: Notification) {
    e.notify(n).unwrap();
    settle(e);
}

/// Delivers `ev` end to end and returns the tags of the handlers it reached.
fn reached_tags(e: &Engine, r: &Recorder, ev: Event) -> Vec<String> {
    let before = calls(r).len();
    assert!(deliver(e, ev), "target range refused the event");
    calls(r)[before..].iter().map(|(t, _)| t.clone()).collect()
}

// ---------------------------------------------------------------------------
// Code matching (Standard §Notification and Management, categories)
// ---------------------------------------------------------------------------

#[test]
fn single_code_handler_is_called_only_for_its_code() {
    let e = engine();
    let r = Recorder::default();
    let h = r.register(&e, "single", &[C], vec![]).unwrap();
    let me = me();
    assert!(reaches(&e, h, &ev(C, me, Origin::ThisProcess, vec![])));
    assert!(!reaches(&e, h, &ev(D, me, Origin::ThisProcess, vec![])));
    assert!(!reaches(
        &e,
        h,
        &ev(Status(-300), me, Origin::ThisProcess, vec![])
    ));

    // Also from the FIRST and LAST slots, which hold any category.
    let first = r
        .register(&e, "first", &[D], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    let last = r
        .register(&e, "last", &[E], vec![flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    assert_eq!(
        e.chain_preview(&ev(C, me, Origin::ThisProcess, vec![])),
        [h]
    );
    assert_eq!(
        e.chain_preview(&ev(D, me, Origin::ThisProcess, vec![])),
        [first]
    );
    assert_eq!(
        e.chain_preview(&ev(E, me, Origin::ThisProcess, vec![])),
        [last]
    );

    for code in [D, C, E] {
        notify(&e, Notification::new(code, me, DataRange::PROC_LOCAL));
    }
    assert_eq!(
        calls(&r),
        [
            ("first".to_string(), D),
            ("single".to_string(), C),
            ("last".to_string(), E)
        ]
    );
}

#[test]
fn multi_code_handler_is_called_for_any_of_its_codes() {
    let e = engine();
    let r = Recorder::default();
    let h = r.register(&e, "multi", &[C, D], vec![]).unwrap();
    // Also from the FIRST slot, which holds any category.
    let first = r
        .register(&e, "first", &[D, E], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    let me = me();
    let chain = |code| e.chain_preview(&ev(code, me, Origin::ThisProcess, vec![]));
    assert_eq!(chain(C), [h]);
    assert_eq!(chain(D), [first, h]);
    assert_eq!(chain(E), [first]);
    assert!(chain(Status(303)).is_empty());

    for code in [C, Status(303), D, E] {
        notify(&e, Notification::new(code, me, DataRange::PROC_LOCAL));
    }
    assert_eq!(
        calls(&r),
        [
            ("multi".to_string(), C),
            ("first".to_string(), D),
            ("multi".to_string(), D),
            ("first".to_string(), E)
        ]
    );
}

#[test]
fn default_handler_is_called_for_every_code() {
    let e = engine();
    let r = Recorder::default();
    let h = r.register(&e, "default", &[], vec![]).unwrap();
    let codes = [
        C,
        Status::SUCCESS,
        Status::ERR_LOST_CONNECTION,
        Status::EVENT_NODE_DOWN,
        Status::EXTERNAL_ERR_BASE,
        Status(i32::MIN),
        Status(i32::MAX - 1),
    ];
    for code in codes {
        assert!(reaches(&e, h, &ev(code, me(), Origin::ThisProcess, vec![])));
        assert!(reaches(
            &e,
            h,
            &ev(code, stranger(), Origin::Remote, vec![])
        ));
    }

    for code in codes {
        notify(&e, Notification::new(code, me(), DataRange::PROC_LOCAL));
    }
    let seen: Vec<Status> = calls(&r).into_iter().map(|(_, c)| c).collect();
    assert_eq!(seen, codes);
}

#[test]
fn non_default_event_skips_default_handlers() {
    let e = engine();
    let r = Recorder::default();
    let d = r.register(&e, "default", &[], vec![]).unwrap();
    let s = r.register(&e, "single", &[C], vec![]).unwrap();
    let m = r.register(&e, "multi", &[C, D], vec![]).unwrap();
    let non_default = ev(
        C,
        me(),
        Origin::ThisProcess,
        vec![flag(PMIX_EVENT_NON_DEFAULT)],
    );
    assert_eq!(e.chain_preview(&non_default), [s, m]);
    // Set to false it directs nothing.
    let plain = ev(
        C,
        me(),
        Origin::ThisProcess,
        vec![Info::new(PMIX_EVENT_NON_DEFAULT, false)],
    );
    assert_eq!(e.chain_preview(&plain), [s, m, d]);

    notify(
        &e,
        Notification::new(C, me(), DataRange::PROC_LOCAL).info(flag(PMIX_EVENT_NON_DEFAULT)),
    );
    assert_eq!(tags(&r), ["single", "multi"]);
}

#[test]
fn non_default_event_skips_a_default_handler_in_the_first_or_last_slot() {
    // The FIRST/LAST slots hold handlers of any category; a default handler
    // there is still a default handler.
    let e = engine();
    let r = Recorder::default();
    let first = r
        .register(&e, "first-default", &[], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    let last = r
        .register(&e, "last-default", &[], vec![flag(PMIX_EVENT_HDLR_LAST)])
        .unwrap();
    let s = r.register(&e, "single", &[C], vec![]).unwrap();
    let nd = |code| {
        ev(
            code,
            me(),
            Origin::ThisProcess,
            vec![flag(PMIX_EVENT_NON_DEFAULT)],
        )
    };
    assert_eq!(e.chain_preview(&nd(C)), [s]);
    assert!(e.chain_preview(&nd(D)).is_empty());
    let plain = ev(C, me(), Origin::ThisProcess, vec![]);
    assert_eq!(e.chain_preview(&plain), [first, s, last]);

    notify(
        &e,
        Notification::new(C, me(), DataRange::PROC_LOCAL).info(flag(PMIX_EVENT_NON_DEFAULT)),
    );
    assert_eq!(calls(&r), [("single".to_string(), C)]);

    // A single-code handler in the FIRST slot is not affected.
    let e = engine();
    let f = r
        .register(&e, "first-single", &[C], vec![flag(PMIX_EVENT_HDLR_FIRST)])
        .unwrap();
    assert_eq!(e.chain_preview(&nd(C)), [f]);
}

// ---------------------------------------------------------------------------
// Registration source range (RFC0018 "Receiver-level filtering of events")
// ---------------------------------------------------------------------------

#[test]
fn registration_without_range_accepts_events_from_all_sources() {
    let e = engine();
    let r = Recorder::default();
    let h = r.register(&e, "any", &[C], vec![]).unwrap();
    let sources = [me(), peer(), stranger(), Proc::SMS];
    for src in sources {
        for o in ALL_ORIGINS {
            assert!(reaches(&e, h, &ev(C, src, o, vec![])), "{src} via {o:?}");
        }
    }
    for src in sources {
        assert_eq!(
            reached_tags(&e, &r, ev(C, src, Origin::Remote, vec![])),
            ["any"]
        );
    }
}

#[test]
fn proc_local_registration_accepts_only_events_generated_by_this_process() {
    // RFC0018: "only wishes this event handler to receive events generated by
    // itself". OpenPMIx 4.2 never fires such a handler (no custom list); we
    // must. What counts is where the event was generated, not the source
    // field: a delivered event naming me as source is not accepted.
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "proc-local", &[C], vec![range(DataRange::PROC_LOCAL)])
        .unwrap();
    assert!(reaches(&e, h, &ev(C, me(), Origin::ThisProcess, vec![])));
    for o in [Origin::ThisNode, Origin::Remote] {
        for src in [me(), peer(), Proc::SMS] {
            assert!(!reaches(&e, h, &ev(C, src, o, vec![])), "{src} via {o:?}");
        }
    }

    notify(&e, Notification::new(C, me(), DataRange::PROC_LOCAL));
    notify(&e, Notification::new(C, me(), DataRange::NAMESPACE));
    assert_eq!(tags(&r), ["proc-local", "proc-local"]);
    // Handed in by a transport: accepted by the target range, refused by the
    // registration.
    assert!(deliver(&e, ev(C, me(), Origin::ThisNode, vec![])));
    assert!(deliver(&e, ev(C, me(), Origin::Remote, vec![])));
    assert_eq!(calls(&r).len(), 2);
}

#[test]
fn local_registration_accepts_events_from_this_process_and_node_but_not_remote() {
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "local", &[C], vec![range(DataRange::LOCAL)])
        .unwrap();
    for src in [me(), peer(), stranger(), Proc::SMS] {
        assert!(reaches(&e, h, &ev(C, src, Origin::ThisProcess, vec![])));
        assert!(reaches(&e, h, &ev(C, src, Origin::ThisNode, vec![])));
        assert!(!reaches(&e, h, &ev(C, src, Origin::Remote, vec![])));
    }

    assert!(deliver(&e, ev(C, stranger(), Origin::Remote, vec![])));
    assert!(tags(&r).is_empty());
    assert_eq!(
        reached_tags(&e, &r, ev(C, stranger(), Origin::ThisNode, vec![])),
        ["local"]
    );
}

#[test]
fn namespace_registration_accepts_sources_in_my_namespace_only() {
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "ns", &[C], vec![range(DataRange::NAMESPACE)])
        .unwrap();
    for o in ALL_ORIGINS {
        assert!(reaches(&e, h, &ev(C, me(), o, vec![])));
        assert!(reaches(&e, h, &ev(C, peer(), o, vec![])));
        let all_ranks = p("test-job", Rank::WILDCARD.0);
        assert!(reaches(&e, h, &ev(C, all_ranks, o, vec![])));
        assert!(!reaches(&e, h, &ev(C, stranger(), o, vec![])));
        assert!(!reaches(&e, h, &ev(C, Proc::SMS, o, vec![])));
    }

    assert!(deliver(&e, ev(C, stranger(), Origin::ThisNode, vec![])));
    assert!(tags(&r).is_empty());
    assert_eq!(
        reached_tags(&e, &r, ev(C, peer(), Origin::Remote, vec![])),
        ["ns"]
    );
}

#[test]
fn namespace_registration_with_a_custom_list_accepts_sources_in_the_listed_namespaces() {
    // The list names namespaces: any rank of a listed namespace is accepted,
    // and (as in OpenPMIx) the list replaces "my namespace".
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(
            &e,
            "ns-list",
            &[C],
            vec![
                range(DataRange::NAMESPACE),
                custom(vec![p("other-job", 3), p("third-job", 0)]),
            ],
        )
        .unwrap();
    for o in ALL_ORIGINS {
        assert!(reaches(&e, h, &ev(C, p("other-job", 3), o, vec![])));
        assert!(reaches(&e, h, &ev(C, p("other-job", 99), o, vec![])));
        assert!(reaches(&e, h, &ev(C, p("third-job", 7), o, vec![])));
        assert!(!reaches(&e, h, &ev(C, p("fourth-job", 3), o, vec![])));
        assert!(!reaches(&e, h, &ev(C, peer(), o, vec![])));
        assert!(!reaches(&e, h, &ev(C, Proc::SMS, o, vec![])));
    }

    assert!(deliver(
        &e,
        ev(C, p("fourth-job", 3), Origin::Remote, vec![])
    ));
    assert!(tags(&r).is_empty());
    assert_eq!(
        reached_tags(&e, &r, ev(C, p("other-job", 99), Origin::Remote, vec![])),
        ["ns-list"]
    );
}

#[test]
fn custom_registration_accepts_only_the_listed_sources() {
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(
            &e,
            "custom",
            &[C],
            vec![
                range(DataRange::CUSTOM),
                custom(vec![p("other-job", 3), p("third-job", Rank::WILDCARD.0)]),
            ],
        )
        .unwrap();
    for o in ALL_ORIGINS {
        assert!(reaches(&e, h, &ev(C, p("other-job", 3), o, vec![])));
        assert!(!reaches(&e, h, &ev(C, p("other-job", 4), o, vec![])));
        // Wildcard rank = the whole namespace.
        assert!(reaches(&e, h, &ev(C, p("third-job", 0), o, vec![])));
        assert!(reaches(&e, h, &ev(C, p("third-job", 1234), o, vec![])));
        // Not listed: my own process and my namespace.
        assert!(!reaches(&e, h, &ev(C, me(), o, vec![])));
        assert!(!reaches(&e, h, &ev(C, peer(), o, vec![])));
        assert!(!reaches(&e, h, &ev(C, Proc::SMS, o, vec![])));
    }

    notify(&e, Notification::new(C, me(), DataRange::PROC_LOCAL));
    assert!(deliver(
        &e,
        ev(C, p("other-job", 4), Origin::Remote, vec![])
    ));
    assert!(tags(&r).is_empty());
    assert_eq!(
        reached_tags(&e, &r, ev(C, p("third-job", 8), Origin::Remote, vec![])),
        ["custom"]
    );
}

#[test]
fn custom_list_without_range_directive_acts_as_a_custom_source_range() {
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "list", &[C], vec![custom(vec![stranger()])])
        .unwrap();
    assert!(reaches(&e, h, &ev(C, stranger(), Origin::Remote, vec![])));
    assert!(!reaches(&e, h, &ev(C, peer(), Origin::Remote, vec![])));
    assert!(!reaches(&e, h, &ev(C, me(), Origin::ThisProcess, vec![])));
}

#[test]
fn rm_registration_accepts_only_the_sms() {
    // The SMS as a source: empty namespace, rank UNDEF (pmix_notification_fn_t).
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "rm", &[C], vec![range(DataRange::RM)])
        .unwrap();
    for o in ALL_ORIGINS {
        assert!(reaches(&e, h, &ev(C, Proc::SMS, o, vec![])));
        for src in [me(), peer(), stranger()] {
            assert!(!reaches(&e, h, &ev(C, src, o, vec![])), "{src} via {o:?}");
        }
    }

    notify(&e, Notification::new(C, me(), DataRange::PROC_LOCAL));
    assert!(deliver(&e, ev(C, stranger(), Origin::ThisNode, vec![])));
    assert!(tags(&r).is_empty());
    assert_eq!(
        reached_tags(&e, &r, ev(C, Proc::SMS, Origin::Remote, vec![])),
        ["rm"]
    );
}

#[test]
fn undef_session_and_global_registrations_accept_all_sources() {
    let e = engine();
    let r = Recorder::default();
    let hs: Vec<HandlerRef> = [DataRange::UNDEF, DataRange::SESSION, DataRange::GLOBAL]
        .iter()
        .map(|&g| r.register(&e, "h", &[C], vec![range(g)]).unwrap())
        .collect();
    for src in [me(), peer(), stranger(), Proc::SMS] {
        for o in ALL_ORIGINS {
            let chain = e.chain_preview(&ev(C, src, o, vec![]));
            for h in &hs {
                assert!(chain.contains(h), "{h} refused {src} via {o:?}");
            }
        }
    }
    assert_eq!(
        reached_tags(&e, &r, ev(C, stranger(), Origin::Remote, vec![])).len(),
        3
    );
}

#[test]
fn custom_list_with_a_range_other_than_custom_or_namespace_is_refused_at_registration() {
    let e = engine();
    let r = Recorder::default();
    for g in [
        DataRange::UNDEF,
        DataRange::RM,
        DataRange::LOCAL,
        DataRange::SESSION,
        DataRange::GLOBAL,
        DataRange::PROC_LOCAL,
    ] {
        assert_eq!(
            r.register(&e, "x", &[C], vec![range(g), custom(vec![stranger()])]),
            Err(Status::ERR_BAD_PARAM),
            "{g:?}"
        );
    }
    // The order of the two infos does not matter.
    assert_eq!(
        r.register(
            &e,
            "x",
            &[C],
            vec![custom(vec![stranger()]), range(DataRange::GLOBAL)]
        ),
        Err(Status::ERR_BAD_PARAM)
    );
    assert_eq!(e.handler_count(), 0);
}

#[test]
fn custom_range_registration_without_a_list_is_refused() {
    let e = engine();
    let r = Recorder::default();
    assert_eq!(
        r.register(&e, "x", &[C], vec![range(DataRange::CUSTOM)]),
        Err(Status::ERR_BAD_PARAM)
    );
    assert_eq!(e.handler_count(), 0);
}

#[test]
fn registration_filters_apply_to_handlers_in_the_first_and_last_slots() {
    // OpenPMIx 4.2 ignores the affected filter of a multi-code FIRST handler;
    // the filters apply whatever the slot.
    let e = engine();
    let r = Recorder::default();
    let first = r
        .register(
            &e,
            "first",
            &[C, D],
            vec![flag(PMIX_EVENT_HDLR_FIRST), affected(vec![p("a", 1)])],
        )
        .unwrap();
    let last = r
        .register(
            &e,
            "last",
            &[],
            vec![flag(PMIX_EVENT_HDLR_LAST), range(DataRange::RM)],
        )
        .unwrap();
    let hit = ev(
        C,
        Proc::SMS,
        Origin::Remote,
        vec![affected(vec![p("a", 1)])],
    );
    assert_eq!(e.chain_preview(&hit), [first, last]);
    let miss = ev(
        C,
        stranger(),
        Origin::Remote,
        vec![affected(vec![p("a", 2)])],
    );
    assert!(e.chain_preview(&miss).is_empty());

    assert!(deliver(&e, miss));
    assert!(tags(&r).is_empty());
}

// ---------------------------------------------------------------------------
// Affected processes (Standard: PMIX_EVENT_AFFECTED_PROC(S) at registration;
// openpmix-behaviour §1e)
// ---------------------------------------------------------------------------

#[test]
fn affected_filter_passes_when_either_side_gives_no_affected_procs() {
    let e = engine();
    let r = Recorder::default();
    let with = r
        .register(&e, "with", &[C], vec![affected(vec![p("a", 1)])])
        .unwrap();
    let without = r.register(&e, "without", &[C], vec![]).unwrap();
    // Event without affected procs: both.
    let plain = ev(C, me(), Origin::ThisProcess, vec![]);
    assert_eq!(e.chain_preview(&plain), [without, with]);
    // Event naming other procs: only the registration without a filter.
    let other = ev(
        C,
        me(),
        Origin::ThisProcess,
        vec![affected(vec![p("b", 1)])],
    );
    assert_eq!(e.chain_preview(&other), [without]);

    notify(&e, Notification::new(C, me(), DataRange::PROC_LOCAL));
    assert_eq!(tags(&r), ["without", "with"]);
}

#[test]
fn affected_filter_requires_the_sets_to_overlap() {
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "h", &[C], vec![affected(vec![p("a", 1), p("a", 2)])])
        .unwrap();
    let with = |l: Vec<Proc>| ev(C, me(), Origin::ThisProcess, vec![affected(l)]);
    assert!(reaches(&e, h, &with(vec![p("a", 2)])));
    assert!(reaches(&e, h, &with(vec![p("b", 0), p("a", 1)])));
    assert!(!reaches(&e, h, &with(vec![p("a", 3)])));
    assert!(!reaches(&e, h, &with(vec![p("b", 1), p("b", 2)])));
    assert!(!reaches(&e, h, &with(vec![])));

    let n = |l: Vec<Proc>| Notification::new(C, me(), DataRange::PROC_LOCAL).info(affected(l));
    notify(&e, n(vec![p("a", 3)]));
    assert!(tags(&r).is_empty());
    notify(&e, n(vec![p("c", 0), p("a", 2)]));
    assert_eq!(tags(&r), ["h"]);
}

#[test]
fn affected_wildcard_rank_stands_for_the_whole_namespace_on_either_side() {
    let e = engine();
    let r = Recorder::default();
    let wild = Rank::WILDCARD.0;
    let reg_wild = r
        .register(&e, "reg-wild", &[C], vec![affected(vec![p("a", wild)])])
        .unwrap();
    let reg_one = r
        .register(&e, "reg-one", &[C], vec![affected(vec![p("b", 4)])])
        .unwrap();
    let with = |l: Vec<Proc>| ev(C, me(), Origin::ThisProcess, vec![affected(l)]);
    assert_eq!(e.chain_preview(&with(vec![p("a", 17)])), [reg_wild]);
    assert_eq!(e.chain_preview(&with(vec![p("b", wild)])), [reg_one]);
    assert!(e.chain_preview(&with(vec![p("c", wild)])).is_empty());
    assert!(e.chain_preview(&with(vec![p("b", 5)])).is_empty());

    notify(
        &e,
        Notification::new(C, me(), DataRange::PROC_LOCAL)
            .info(affected(vec![p("a", 17), p("b", wild)])),
    );
    assert_eq!(tags(&r), ["reg-one", "reg-wild"]);
}

#[test]
fn affected_proc_and_affected_procs_are_combined() {
    // Both attributes may appear, on either side; together they name the set.
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(
            &e,
            "h",
            &[C],
            vec![
                Info::new(PMIX_EVENT_AFFECTED_PROC, p("a", 1)),
                affected(vec![p("b", 2)]),
            ],
        )
        .unwrap();
    let single = |q: Proc| {
        ev(
            C,
            me(),
            Origin::ThisProcess,
            vec![Info::new(PMIX_EVENT_AFFECTED_PROC, q)],
        )
    };
    assert!(reaches(&e, h, &single(p("a", 1))));
    assert!(reaches(&e, h, &single(p("b", 2))));
    assert!(!reaches(&e, h, &single(p("c", 0))));
    let both = ev(
        C,
        me(),
        Origin::ThisProcess,
        vec![
            Info::new(PMIX_EVENT_AFFECTED_PROC, p("c", 0)),
            affected(vec![p("b", 2)]),
        ],
    );
    assert!(reaches(&e, h, &both));
}

// ---------------------------------------------------------------------------
// Job vs environment events (Standard §Notification and Management; RFC0002
// PMIX_EVENT_JOB_LEVEL / PMIX_EVENT_ENVIRO_LEVEL; PMIX_SYSTEM_EVENT)
// ---------------------------------------------------------------------------

const ENV: Status = Status::EVENT_NODE_DOWN;

#[test]
fn registration_without_level_receives_job_and_environment_events() {
    let e = engine();
    let r = Recorder::default();
    let neither = r.register(&e, "neither", &[C, ENV], vec![]).unwrap();
    let both = r
        .register(
            &e,
            "both",
            &[C, ENV],
            vec![flag(PMIX_EVENT_JOB_LEVEL), flag(PMIX_EVENT_ENVIRO_LEVEL)],
        )
        .unwrap();
    for code in [C, ENV] {
        let chain = e.chain_preview(&ev(code, Proc::SMS, Origin::Remote, vec![]));
        assert_eq!(chain, [both, neither], "{code}");
    }
    reached_tags(&e, &r, ev(C, Proc::SMS, Origin::Remote, vec![]));
    reached_tags(&e, &r, ev(ENV, Proc::SMS, Origin::Remote, vec![]));
    assert_eq!(calls(&r).len(), 4);
}

#[test]
fn job_level_registration_receives_only_job_events() {
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "job", &[], vec![flag(PMIX_EVENT_JOB_LEVEL)])
        .unwrap();
    assert!(reaches(&e, h, &ev(C, Proc::SMS, Origin::Remote, vec![])));
    assert!(!reaches(&e, h, &ev(ENV, Proc::SMS, Origin::Remote, vec![])));

    assert!(deliver(&e, ev(ENV, Proc::SMS, Origin::Remote, vec![])));
    assert!(calls(&r).is_empty());
    assert_eq!(
        reached_tags(&e, &r, ev(C, Proc::SMS, Origin::Remote, vec![])),
        ["job"]
    );
}

#[test]
fn enviro_level_registration_receives_only_environment_events() {
    let e = engine();
    let r = Recorder::default();
    let h = r
        .register(&e, "env", &[], vec![flag(PMIX_EVENT_ENVIRO_LEVEL)])
        .unwrap();
    assert!(reaches(&e, h, &ev(ENV, Proc::SMS, Origin::Remote, vec![])));
    assert!(!reaches(&e, h, &ev(C, Proc::SMS, Origin::Remote, vec![])));

    notify(&e, Notification::new(C, me(), DataRange::PROC_LOCAL));
    assert!(calls(&r).is_empty());
    assert_eq!(
        reached_tags(&e, &r, ev(ENV, Proc::SMS, Origin::Remote, vec![])),
        ["env"]
    );
}

#[test]
fn level_flag_set_to_false_excludes_that_level() {
    // RFC0002: JOB_LEVEL / ENVIRO_LEVEL are booleans saying whether that class
    // is delivered. Declining a class must not deliver it.
    let e = engine();
    let r = Recorder::default();
    let no_job = r
        .register(
            &e,
            "no-job",
            &[],
            vec![Info::new(PMIX_EVENT_JOB_LEVEL, false)],
        )
        .unwrap();
    let no_env = r
        .register(
            &e,
            "no-env",
            &[],
            vec![Info::new(PMIX_EVENT_ENVIRO_LEVEL, false)],
        )
        .unwrap();
    assert!(!reaches(
        &e,
        no_job,
        &ev(C, Proc::SMS, Origin::Remote, vec![])
    ));
    assert!(!reaches(
        &e,
        no_env,
        &ev(ENV, Proc::SMS, Origin::Remote, vec![])
    ));
}

#[test]
fn event_class_follows_pmix_system_event_unless_overridden() {
    let e = engine();
    let r = Recorder::default();
    let job = r
        .register(&e, "job", &[], vec![flag(PMIX_EVENT_JOB_LEVEL)])
        .unwrap();
    let env = r
        .register(&e, "env", &[], vec![flag(PMIX_EVENT_ENVIRO_LEVEL)])
        .unwrap();
    let class_of = |code: Status, class: Option<EventClass>| {
        let mut x = ev(code, Proc::SMS, Origin::Remote, vec![]);
        if let Some(c) = class {
            x = x.with_class(c);
        }
        match e.chain_preview(&x).as_slice() {
            [h] if *h == job => EventClass::Job,
            [h] if *h == env => EventClass::Environment,
            other => panic!("{code}: unexpected chain {other:?}"),
        }
    };
    // PMIX_SYSTEM_EVENT covers PMIX_EVENT_SYS_BASE (-230) down to
    // PMIX_EVENT_SYS_OTHER (-330), both included.
    assert_eq!(class_of(Status(-229), None), EventClass::Job);
    assert_eq!(class_of(Status(-230), None), EventClass::Environment);
    assert_eq!(class_of(Status(-280), None), EventClass::Environment);
    assert_eq!(class_of(Status(-330), None), EventClass::Environment);
    assert_eq!(class_of(Status(-331), None), EventClass::Job);
    assert_eq!(class_of(C, None), EventClass::Job);
    assert_eq!(
        class_of(C, Some(EventClass::Environment)),
        EventClass::Environment
    );
    assert_eq!(class_of(ENV, Some(EventClass::Job)), EventClass::Job);
    assert_eq!(EventClass::of(ENV), EventClass::Environment);
    assert_eq!(EventClass::of(C), EventClass::Job);

    // End to end: the override is what the handlers see.
    let x = ev(C, Proc::SMS, Origin::Remote, vec![]).with_class(EventClass::Environment);
    assert_eq!(reached_tags(&e, &r, x), ["env"]);
}

// ---------------------------------------------------------------------------
// The generator's target range, applied by the receiving process
// (Standard PMIx_Notify_event; RFC0018 PROC_LOCAL; openpmix-behaviour §1d)
// ---------------------------------------------------------------------------

#[test]
fn custom_range_event_not_listing_this_process_is_not_delivered() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    let to = |l: Vec<Proc>| {
        ev_in(
            C,
            stranger(),
            DataRange::CUSTOM,
            Origin::Remote,
            vec![custom(l)],
        )
    };

    let x = to(vec![stranger(), peer()]);
    assert!(!x.targets(&me()));
    assert!(!deliver(&e, x));
    assert!(calls(&r).is_empty());

    // Listing me, directly or by a wildcard rank, is delivered.
    assert!(deliver(&e, to(vec![peer(), me()])));
    assert!(deliver(&e, to(vec![p("test-job", Rank::WILDCARD.0)])));
    assert_eq!(calls(&r).len(), 2);
}

#[test]
fn rm_range_event_never_reaches_the_process() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    r.register(&e, "rm", &[C], vec![range(DataRange::RM)])
        .unwrap();
    for o in ALL_ORIGINS {
        for src in [Proc::SMS, me(), stranger()] {
            let x = ev_in(C, src, DataRange::RM, o, vec![]);
            assert!(!x.targets(&me()));
            assert!(!deliver(&e, x), "{src} via {o:?}");
        }
    }
    assert!(calls(&r).is_empty());
}

#[test]
fn proc_local_event_from_another_process_is_refused() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    for o in [Origin::ThisNode, Origin::Remote] {
        // Even when it claims to come from me.
        for src in [me(), peer()] {
            let x = ev_in(C, src, DataRange::PROC_LOCAL, o, vec![]);
            assert!(!x.targets(&me()));
            assert!(!deliver(&e, x));
        }
    }
    assert!(calls(&r).is_empty());
    let mine = ev_in(C, me(), DataRange::PROC_LOCAL, Origin::ThisProcess, vec![]);
    assert!(mine.targets(&me()));
    assert!(deliver(&e, mine));
    assert_eq!(calls(&r).len(), 1);
}

#[test]
fn local_range_event_from_another_node_is_not_delivered() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    assert!(!deliver(
        &e,
        ev_in(C, peer(), DataRange::LOCAL, Origin::Remote, vec![])
    ));
    assert!(calls(&r).is_empty());
    assert!(deliver(
        &e,
        ev_in(C, stranger(), DataRange::LOCAL, Origin::ThisNode, vec![])
    ));
    assert_eq!(calls(&r).len(), 1);
}

#[test]
fn namespace_range_event_from_another_namespace_is_not_delivered() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    for o in [Origin::ThisNode, Origin::Remote] {
        assert!(!deliver(
            &e,
            ev_in(C, stranger(), DataRange::NAMESPACE, o, vec![])
        ));
    }
    assert!(calls(&r).is_empty());
    assert!(deliver(
        &e,
        ev_in(C, peer(), DataRange::NAMESPACE, Origin::Remote, vec![])
    ));
    assert_eq!(calls(&r).len(), 1);
}

/// The server scopes a NAMESPACE event it generates about a process to
/// that process's namespace; its source is the server. A receiver takes it
/// when an affected process is of its namespace, not otherwise.
#[test]
fn namespace_range_event_about_a_process_of_this_namespace_is_delivered() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    let server = p("server-ns", 0);
    let about = |q: Proc| vec![Info::new(PMIX_EVENT_AFFECTED_PROC, q)];
    assert!(!deliver(
        &e,
        ev_in(
            C,
            server,
            DataRange::NAMESPACE,
            Origin::ThisNode,
            about(stranger())
        )
    ));
    assert!(calls(&r).is_empty());
    assert!(deliver(
        &e,
        ev_in(
            C,
            server,
            DataRange::NAMESPACE,
            Origin::ThisNode,
            about(peer())
        )
    ));
    assert_eq!(calls(&r).len(), 1);
}

#[test]
fn generator_is_inside_every_range_that_includes_it() {
    // reference/openpmix-behaviour.md "Clarification": a process's own
    // notification reaches its own handlers for NAMESPACE, LOCAL, SESSION,
    // GLOBAL (and UNDEF), PROC_LOCAL, and CUSTOM when it lists itself; even
    // when it names another namespace's process as the source.
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "h", &[C], vec![]).unwrap();
    let ranges = [
        DataRange::UNDEF,
        DataRange::LOCAL,
        DataRange::NAMESPACE,
        DataRange::SESSION,
        DataRange::GLOBAL,
        DataRange::PROC_LOCAL,
    ];
    for g in ranges {
        notify(&e, Notification::new(C, me(), g));
        notify(&e, Notification::new(C, stranger(), g));
    }
    notify(
        &e,
        Notification::new(C, me(), DataRange::CUSTOM).info(custom(vec![stranger(), me()])),
    );
    assert_eq!(calls(&r).len(), 2 * ranges.len() + 1);
}

#[test]
fn notify_with_rm_range_is_not_supported() {
    // Only the SMS receives RM-range events; no SMS is attached to a bare
    // engine, so the Standard's PMIX_ERR_NOT_SUPPORTED applies.
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    let n = || Notification::new(C, me(), DataRange::RM);
    assert_eq!(e.notify(n()), Err(Status::ERR_NOT_SUPPORTED));
    let (tx, rx) = mpsc::channel();
    assert_eq!(
        e.notify_nb(n(), move |s| tx.send(s).unwrap()),
        Status::ERR_NOT_SUPPORTED
    );
    assert_eq!(
        e.notify_observed(n(), |_| unreachable!("no chain")),
        Err(Status::ERR_NOT_SUPPORTED)
    );
    settle(&e);
    // The callback was dropped without being called.
    assert_eq!(
        rx.recv_timeout(T),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
    assert!(calls(&r).is_empty());
}

#[test]
fn nb_notify_with_a_custom_range_excluding_me_returns_operation_succeeded_and_never_calls_back() {
    let e = engine();
    let r = Recorder::default();
    r.register(&e, "default", &[], vec![]).unwrap();
    let (tx, rx) = mpsc::channel();
    let s = e.notify_nb(
        Notification::new(C, me(), DataRange::CUSTOM).info(custom(vec![stranger()])),
        move |s| tx.send(s).unwrap(),
    );
    assert_eq!(s, Status::OPERATION_SUCCEEDED);
    settle(&e);
    assert_eq!(
        rx.recv_timeout(T),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
    assert!(calls(&r).is_empty());
    // The observed form says so too, and never calls its outcome callback.
    assert_eq!(
        e.notify_observed(
            Notification::new(C, me(), DataRange::CUSTOM).info(custom(vec![stranger()])),
            |_| unreachable!("no chain"),
        ),
        Ok(false)
    );
}

#[test]
fn proc_local_notify_reaches_only_this_processs_handlers() {
    let e1 = engine();
    let other = p("test-job", 1);
    let e2 = Engine::builder(other).build().unwrap();
    let r1 = Recorder::default();
    let r2 = Recorder::default();
    r1.register(&e1, "mine", &[C], vec![]).unwrap();
    r2.register(&e2, "theirs", &[C], vec![]).unwrap();
    r2.register(&e2, "theirs-default", &[], vec![]).unwrap();

    notify(&e1, Notification::new(C, me(), DataRange::PROC_LOCAL));
    settle(&e2);
    assert_eq!(tags(&r1), ["mine"]);
    assert!(calls(&r2).is_empty());
    // Nor can a transport hand it to the other process.
    let forwarded = ev_in(C, me(), DataRange::PROC_LOCAL, Origin::ThisNode, vec![]);
    assert!(!deliver(&e2, forwarded));
    assert!(calls(&r2).is_empty());
}
