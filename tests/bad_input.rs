//! Bad input: every malformed identifier, attribute, range, directive or
//! reference gives a clear status and never panics; a refused call leaves no
//! trace and never calls its callback; a panicking handler or callback cannot
//! take the engine down. Standard "Event Notification" (PMIx_Register_event_handler,
//! PMIx_Deregister_event_handler, PMIx_Notify_event return codes), RFC0018
//! (ordering directives, unique names), the Standard's general rules on
//! `PMIX_INFO_REQD` and typed attributes (../shared/reference/pmix-abi-facts.md), and
//! the ABI limits `PMIX_MAX_KEYLEN` / `PMIX_MAX_NSLEN`. Each test is named
//! after the rule it checks.

mod common;

use common::{engine, me, settle, Recorder};
use fastpmix::event::{Engine, Event, HandlerRef, Invocation, Notification, Origin, Registration};
use fastpmix::types::attrs::{self, *};
use fastpmix::types::{DataArray, InfoFlags};
use fastpmix::{DataRange, Info, Key, Nspace, Proc, Rank, Status, Value};
use proptest::collection::vec;
use proptest::prelude::*;
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

const C: Status = Status(400);
const D: Status = Status(401);
const SETTLE: Status = Status(i32::MAX);
const T: Duration = Duration::from_secs(10);

fn p(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).unwrap()
}

fn flag(k: Key) -> Info {
    Info::new(k, true)
}

fn name(n: &str) -> Info {
    Info::new(PMIX_EVENT_HDLR_NAME, n)
}

/// Codes the recorder saw, without settle events.
fn codes_seen(r: &Recorder) -> Vec<Status> {
    r.0.lock()
        .unwrap()
        .iter()
        .map(|(_, c)| *c)
        .filter(|c| *c != SETTLE)
        .collect()
}

/// A callback that reports on a channel: after the call returned an error and
/// the engine settled, `rx` must be disconnected (the callback was dropped
/// without running).
fn probe<A: Send + 'static>() -> (impl FnOnce(A) + Send + 'static, mpsc::Receiver<A>) {
    let (tx, rx) = mpsc::channel();
    (move |a: A| tx.send(a).unwrap(), rx)
}

fn assert_never_called<A: std::fmt::Debug>(rx: &mpsc::Receiver<A>) {
    match rx.recv_timeout(T) {
        Err(mpsc::RecvTimeoutError::Disconnected) => {}
        Ok(a) => panic!("the callback of a refused call ran with {a:?}"),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the callback of a refused call is pending"),
    }
}

fn noop() -> impl Fn(Invocation) + Send + Sync + 'static {
    |inv: Invocation| inv.complete(Status::SUCCESS, vec![])
}

/// Registration must be refused with `want`, leave no handler behind and not
/// call the non-blocking form's callback.
fn assert_registration_refused(e: &Engine, codes: &[Status], info: Vec<Info>, want: Status) {
    let before = e.handler_count();
    assert_eq!(
        e.register(Registration::new(codes, noop()).infos(info.clone())),
        Err(want),
        "blocking, {info:?}"
    );
    let (cb, rx) = probe::<(Status, HandlerRef)>();
    assert_eq!(
        e.register_nb(
            Registration::new(codes, noop()).infos(info.clone()),
            |s, h| cb((s, h))
        ),
        want,
        "non-blocking, {info:?}"
    );
    settle(e);
    assert_never_called(&rx);
    assert_eq!(
        e.handler_count(),
        before,
        "a refused registration left a handler"
    );
}

/// Notification must be refused with `want` by every entry point, without a
/// callback and without reaching any handler.
fn assert_notify_refused(e: &Engine, n: Notification, want: Status) {
    let r = Recorder::default();
    let h = r.register(e, "any", &[], vec![]).unwrap();
    assert_eq!(e.notify(n.clone()), Err(want), "notify {n:?}");
    let (cb, rx) = probe::<Status>();
    assert_eq!(e.notify_nb(n.clone(), cb), want, "notify_nb {n:?}");
    assert_eq!(
        e.notify_observed(n.clone(), |_| unreachable!(
            "refused notification ran a chain"
        )),
        Err(want),
        "notify_observed {n:?}"
    );
    settle(e);
    assert_never_called(&rx);
    assert!(
        codes_seen(&r).is_empty(),
        "a refused notification reached a handler"
    );
    e.deregister(h).unwrap();
}

// ---------------------------------------------------------------------------
// Identifiers (PMIX_MAX_KEYLEN 511, PMIX_MAX_NSLEN 255)
// ---------------------------------------------------------------------------

#[test]
fn key_longer_than_511_bytes_is_refused() {
    assert_eq!(fastpmix::types::MAX_KEYLEN, 511);
    assert_eq!(Key::new("k".repeat(511)).unwrap().as_str().len(), 511);
    assert_eq!(Key::new("k".repeat(512)), Err(Status::ERR_BAD_PARAM));
    assert_eq!(Key::new("k".repeat(100_000)), Err(Status::ERR_BAD_PARAM));
    // Bytes, not characters: 256 two-byte characters are 512 bytes.
    assert_eq!(Key::new("é".repeat(256)), Err(Status::ERR_BAD_PARAM));
    assert!(Key::new(format!("{}k", "é".repeat(255))).is_ok());
}

#[test]
fn key_containing_nul_is_refused() {
    for k in ["\0", "pmix.\0evname", "pmix.evname\0"] {
        assert_eq!(Key::new(k), Err(Status::ERR_BAD_PARAM), "{k:?}");
    }
}

#[test]
fn nspace_longer_than_255_bytes_is_refused() {
    assert_eq!(fastpmix::types::MAX_NSLEN, 255);
    let ok = "n".repeat(255);
    assert_eq!(Nspace::new(&ok).unwrap().as_str(), ok);
    assert_eq!(Proc::new(&ok, 3).unwrap().nspace.as_str(), ok);
    for bad in ["n".repeat(256), "é".repeat(128), "n".repeat(10_000)] {
        assert_eq!(Nspace::new(&bad).err(), Some(Status::ERR_BAD_PARAM));
        assert_eq!(Proc::new(&bad, 0), Err(Status::ERR_BAD_PARAM));
        assert_eq!(
            Nspace::from_bytes(bad.as_bytes()).err(),
            Some(Status::ERR_BAD_PARAM)
        );
    }
}

#[test]
fn nspace_containing_nul_or_invalid_utf8_is_refused() {
    for bad in ["\0", "job\0", "jo\0b"] {
        assert_eq!(
            Nspace::new(bad).err(),
            Some(Status::ERR_BAD_PARAM),
            "{bad:?}"
        );
        assert_eq!(Proc::new(bad, 0), Err(Status::ERR_BAD_PARAM), "{bad:?}");
    }
    assert_eq!(
        Nspace::from_bytes(&[b'j', 0xff, b'b']).err(),
        Some(Status::ERR_BAD_PARAM)
    );
}

// ---------------------------------------------------------------------------
// Attribute types
// ---------------------------------------------------------------------------

#[test]
fn wrongly_typed_registration_attribute_is_refused() {
    let e = engine();
    let procs = Value::from(vec![p("a", 1)]);
    let cases = [
        Info::new(PMIX_EVENT_HDLR_NAME, true),
        Info::new(PMIX_EVENT_HDLR_FIRST, "yes"),
        Info::new(PMIX_EVENT_HDLR_LAST, 1u32),
        Info::new(PMIX_EVENT_HDLR_BEFORE, true),
        Info::new(PMIX_EVENT_HDLR_AFTER, 7u32),
        Info::new(PMIX_EVENT_HDLR_APPEND, "true"),
        Info::new(PMIX_RANGE, "namespace"),
        Info::new(PMIX_RANGE, true),
        Info::new(PMIX_EVENT_CUSTOM_RANGE, "other-job"),
        Info::new(PMIX_EVENT_AFFECTED_PROC, procs.clone()),
        Info::new(PMIX_EVENT_AFFECTED_PROCS, 3u32),
        Info::new(PMIX_EVENT_JOB_LEVEL, "job"),
        Info::new(PMIX_EVENT_ENVIRO_LEVEL, 1u32),
        Info::new(PMIX_EVENT_RETURN_OBJECT, "object"),
        // Known attributes the registration does not act on are type-checked too.
        Info::new(PMIX_EVENT_TIMESTAMP, "now"),
    ];
    for bad in cases {
        assert_registration_refused(&e, &[C], vec![bad], Status::ERR_BAD_PARAM);
    }
    // The same attributes, well typed, are accepted.
    e.register(Registration::new(&[C], noop()).infos([
        name("ok"),
        Info::new(PMIX_RANGE, DataRange::CUSTOM),
        Info::new(PMIX_EVENT_CUSTOM_RANGE, procs),
        Info::new(PMIX_EVENT_AFFECTED_PROC, p("a", 1)),
        Info::new(PMIX_EVENT_RETURN_OBJECT, Value::Pointer(0x10)),
    ]))
    .unwrap();
}

#[test]
fn wrongly_typed_notify_attribute_is_refused() {
    let e = engine();
    let n = |i: Info| Notification::new(C, me(), DataRange::PROC_LOCAL).info(i);
    let cases = [
        n(Info::new(PMIX_EVENT_AFFECTED_PROC, "test-job:0")),
        n(Info::new(PMIX_EVENT_AFFECTED_PROCS, "test-job")),
        n(Info::new(PMIX_EVENT_NON_DEFAULT, 1u32)),
        n(Info::new(PMIX_EVENT_TEXT_MESSAGE, true)),
        n(Info::new(PMIX_EVENT_TIMESTAMP, "now")),
        n(Info::new(PMIX_EVENT_DO_NOT_CACHE, "yes")),
        n(Info::new(PMIX_EVENT_PROXY, "server")),
        n(Info::new(PMIX_EVENT_ACTION_TIMEOUT, Value::Double(5.0))),
        Notification::new(C, me(), DataRange::CUSTOM)
            .info(Info::new(PMIX_EVENT_CUSTOM_RANGE, "test-job")),
    ];
    for bad in cases {
        assert_eq!(
            Event::new(bad.clone(), Origin::Remote).err(),
            Some(Status::ERR_BAD_PARAM)
        );
        assert_notify_refused(&e, bad, Status::ERR_BAD_PARAM);
    }
}

#[test]
fn integer_attributes_accept_any_integer_type_that_fits() {
    // C callers load PMIX_INT where uint32_t is documented, and so on.
    let e = engine();
    // PMIX_RANGE (pmix_data_range_t, a uint8) as other integer types: taken
    // as NAMESPACE, which the source filter then shows.
    let ns = [
        Value::Uint8(3),
        Value::Int(3),
        Value::Uint32(3),
        Value::Size(3),
        Value::Int64(3),
        Value::Int8(3),
        Value::Uint16(3),
    ];
    for v in ns {
        let h = e
            .register(Registration::new(&[C], noop()).info(Info::new(PMIX_RANGE, v.clone())))
            .unwrap_or_else(|s| panic!("{v:?}: {s}"));
        let from = |src| Event::new(Notification::new(C, src, DataRange::GLOBAL), Origin::Remote);
        assert!(e
            .chain_preview(&from(p("test-job", 9)).unwrap())
            .contains(&h));
        assert!(
            !e.chain_preview(&from(p("other", 9)).unwrap()).contains(&h),
            "{v:?}"
        );
        e.deregister(h).unwrap();
    }
    // At notify: PMIX_EVENT_ACTION_TIMEOUT (int), PMIX_EVENT_TIMESTAMP (time_t).
    for v in [
        Value::Uint8(5),
        Value::Int64(5),
        Value::Uint64(5),
        Value::Size(5),
    ] {
        for k in [PMIX_EVENT_ACTION_TIMEOUT, PMIX_EVENT_TIMESTAMP] {
            e.notify(
                Notification::new(C, me(), DataRange::PROC_LOCAL).info(Info::new(k, v.clone())),
            )
            .unwrap_or_else(|s| panic!("{v:?}: {s}"));
        }
    }
    // Through the table: uint32_t, uint16_t and uint64_t attributes.
    for v in [
        Value::Int(5),
        Value::Int64(5),
        Value::Uint16(5),
        Value::Byte(5),
    ] {
        for k in [PMIX_ALLOC_TIME, PMIX_PROC_NUM_THREADS, PMIX_ALLOC_NUM_CPUS] {
            assert_eq!(attrs::check(&Info::new(k, v.clone())), Ok(()), "{v:?}");
        }
    }
    assert_eq!(
        attrs::check(&Info::new(PMIX_ALLOC_TIME, Value::Uint64(u32::MAX.into()))),
        Ok(())
    );
}

#[test]
fn integer_attribute_value_that_does_not_fit_is_refused() {
    let bad = [
        (PMIX_ALLOC_TIME, Value::Int(-1)), // uint32_t
        (PMIX_ALLOC_TIME, Value::Uint64(u64::from(u32::MAX) + 1)), // uint32_t
        (PMIX_PROC_NUM_THREADS, Value::Int(65_536)), // uint16_t
        (PMIX_PROC_NUM_THREADS, Value::Int8(-1)), // uint16_t
        (PMIX_ALLOC_NUM_CPUS, Value::Int64(-1)), // uint64_t
        (
            PMIX_EVENT_ACTION_TIMEOUT,
            Value::Int64(i64::from(i32::MAX) + 1),
        ), // int
        (PMIX_EVENT_ACTION_TIMEOUT, Value::Uint64(u64::MAX)), // int
        (PMIX_EVENT_TIMESTAMP, Value::Uint64(u64::MAX)), // time_t
        (PMIX_RANGE, Value::Int(-1)),      // uint8
        (PMIX_RANGE, Value::Uint32(256)),  // uint8
    ];
    for (k, v) in &bad {
        assert_eq!(
            attrs::check(&Info::new(k.clone(), v.clone())),
            Err(Status::ERR_BAD_PARAM),
            "{k} = {v:?}"
        );
    }
    let e = engine();
    for v in [Value::Int(-1), Value::Uint32(256), Value::Int64(i64::MIN)] {
        assert_registration_refused(
            &e,
            &[C],
            vec![Info::new(PMIX_RANGE, v)],
            Status::ERR_BAD_PARAM,
        );
    }
    for v in [
        Value::Uint64(u64::MAX),
        Value::Int64(i64::from(i32::MIN) - 1),
    ] {
        assert_notify_refused(
            &e,
            Notification::new(C, me(), DataRange::PROC_LOCAL)
                .info(Info::new(PMIX_EVENT_ACTION_TIMEOUT, v)),
            Status::ERR_BAD_PARAM,
        );
    }
}

// ---------------------------------------------------------------------------
// Ranges
// ---------------------------------------------------------------------------

#[test]
fn invalid_range_is_refused_at_notify() {
    let e = engine();
    for g in [
        DataRange(8),
        DataRange(100),
        DataRange(254),
        DataRange::INVALID,
    ] {
        let n = Notification::new(C, me(), g);
        assert_eq!(
            Event::new(n.clone(), Origin::Remote).err(),
            Some(Status::ERR_BAD_PARAM)
        );
        assert_notify_refused(&e, n, Status::ERR_BAD_PARAM);
    }
}

#[test]
fn invalid_range_is_refused_at_registration() {
    let e = engine();
    for v in [
        Value::DataRange(DataRange(8)),
        Value::DataRange(DataRange::INVALID),
        Value::Uint8(8),
        Value::Int(255),
    ] {
        assert_registration_refused(
            &e,
            &[C],
            vec![Info::new(PMIX_RANGE, v)],
            Status::ERR_BAD_PARAM,
        );
    }
}

#[test]
fn custom_range_notify_without_a_target_list_is_refused() {
    let e = engine();
    assert_notify_refused(
        &e,
        Notification::new(C, me(), DataRange::CUSTOM),
        Status::ERR_BAD_PARAM,
    );
}

#[test]
fn custom_target_list_with_another_range_is_refused_at_notify() {
    // openpmix-behaviour §1d: a custom range combined with any other range.
    let e = engine();
    for g in [
        DataRange::UNDEF,
        DataRange::LOCAL,
        DataRange::NAMESPACE,
        DataRange::SESSION,
        DataRange::GLOBAL,
        DataRange::PROC_LOCAL,
    ] {
        assert_notify_refused(
            &e,
            Notification::new(C, me(), g).info(Info::new(PMIX_EVENT_CUSTOM_RANGE, vec![me()])),
            Status::ERR_BAD_PARAM,
        );
    }
}

// ---------------------------------------------------------------------------
// Registration directives
// ---------------------------------------------------------------------------

#[test]
fn before_or_after_an_unknown_name_is_refused_without_side_effects() {
    let e = engine();
    e.register(Registration::new(&[C], noop()).info(name("known")))
        .unwrap();
    for k in [PMIX_EVENT_HDLR_BEFORE, PMIX_EVENT_HDLR_AFTER] {
        assert_registration_refused(
            &e,
            &[C],
            vec![name("newcomer"), Info::new(k, "unknown")],
            Status::ERR_EVENT_REGISTRATION,
        );
    }
    // The refused registration did not keep its name.
    e.register(Registration::new(&[C], noop()).info(name("newcomer")))
        .unwrap();
}

#[test]
fn second_first_or_last_registration_is_refused_without_side_effects() {
    let e = engine();
    for k in [PMIX_EVENT_HDLR_FIRST, PMIX_EVENT_HDLR_LAST] {
        e.register(Registration::new(&[C], noop()).info(flag(k.clone())))
            .unwrap();
        // Whatever the category of the second one.
        for codes in [&[C][..], &[C, D][..], &[][..]] {
            assert_registration_refused(
                &e,
                codes,
                vec![flag(k.clone()), name("second")],
                Status::ERR_EVENT_REGISTRATION,
            );
        }
    }
    e.register(Registration::new(&[C], noop()).info(name("second")))
        .unwrap();
}

#[test]
fn two_placement_directives_in_one_registration_are_refused() {
    let e = engine();
    let cases = [
        vec![flag(PMIX_EVENT_HDLR_FIRST), flag(PMIX_EVENT_HDLR_LAST)],
        vec![flag(PMIX_EVENT_HDLR_PREPEND), flag(PMIX_EVENT_HDLR_APPEND)],
        vec![
            flag(PMIX_EVENT_HDLR_FIRST),
            flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY),
        ],
        vec![
            flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY),
            flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY),
        ],
        vec![
            Info::new(PMIX_EVENT_HDLR_BEFORE, "a"),
            Info::new(PMIX_EVENT_HDLR_AFTER, "a"),
        ],
        vec![
            flag(PMIX_EVENT_HDLR_LAST),
            Info::new(PMIX_EVENT_HDLR_AFTER, "a"),
        ],
        // The same directive twice is two directives as well.
        vec![flag(PMIX_EVENT_HDLR_APPEND), flag(PMIX_EVENT_HDLR_APPEND)],
    ];
    e.register(Registration::new(&[C], noop()).info(name("a")))
        .unwrap();
    for info in cases {
        assert_registration_refused(&e, &[C], info, Status::ERR_BAD_PARAM);
    }
    // Nothing took the FIRST or LAST slot.
    e.register(Registration::new(&[C], noop()).info(flag(PMIX_EVENT_HDLR_FIRST)))
        .unwrap();
    e.register(Registration::new(&[C], noop()).info(flag(PMIX_EVENT_HDLR_LAST)))
        .unwrap();
}

#[test]
fn placement_flag_set_to_false_is_no_directive() {
    let e = engine();
    let last = e
        .register(Registration::new(&[C], noop()).infos([
            Info::new(PMIX_EVENT_HDLR_FIRST, false),
            flag(PMIX_EVENT_HDLR_LAST),
        ]))
        .unwrap();
    let other = e.register(Registration::new(&[C], noop())).unwrap();
    let ev = Event::new(
        Notification::new(C, me(), DataRange::PROC_LOCAL),
        Origin::ThisProcess,
    )
    .unwrap();
    assert_eq!(e.chain_preview(&ev), [other, last]);
    // FIRST was not taken.
    e.register(Registration::new(&[C], noop()).info(flag(PMIX_EVENT_HDLR_FIRST)))
        .unwrap();
}

#[test]
fn empty_handler_name_is_refused() {
    let e = engine();
    assert_registration_refused(&e, &[C], vec![name("")], Status::ERR_BAD_PARAM);
}

#[test]
fn handler_name_longer_than_a_key_is_refused() {
    // The name becomes the handler's results key (RFC0018), so it is at most
    // PMIX_MAX_KEYLEN bytes.
    let e = engine();
    assert_registration_refused(
        &e,
        &[C],
        vec![name(&"n".repeat(512))],
        Status::ERR_BAD_PARAM,
    );
    e.register(Registration::new(&[C], noop()).info(name(&"n".repeat(511))))
        .unwrap();
}

#[test]
fn duplicate_handler_name_is_refused() {
    // RFC0018: names must be unique, "regardless of any other attributes".
    let e = engine();
    e.register(Registration::new(&[C], noop()).info(name("dup")))
        .unwrap();
    for codes in [&[C][..], &[D][..], &[C, D][..], &[][..]] {
        assert_registration_refused(&e, codes, vec![name("dup")], Status::ERR_EVENT_REGISTRATION);
    }
    assert_registration_refused(
        &e,
        &[D],
        vec![name("dup"), flag(PMIX_EVENT_HDLR_LAST)],
        Status::ERR_EVENT_REGISTRATION,
    );
    // The refused LAST registration did not take the slot.
    e.register(Registration::new(&[D], noop()).info(flag(PMIX_EVENT_HDLR_LAST)))
        .unwrap();
}

#[test]
fn required_info_with_a_key_the_registration_does_not_support_is_refused() {
    // General rule: PMIX_INFO_REQD on an attribute the implementation does
    // not support gives PMIX_ERR_NOT_SUPPORTED.
    let e = engine();
    let cases = [
        Info::required(Key::new("vendor.unknown").unwrap(), true),
        // Known attributes that registration does not act on.
        Info::required(PMIX_EVENT_DO_NOT_CACHE, true),
        Info::required(PMIX_NSPACE, "test-job"),
    ];
    for i in cases {
        assert_registration_refused(&e, &[C], vec![i], Status::ERR_NOT_SUPPORTED);
    }
    // REQD with a supported key is fine, also among other flags.
    let mut named = Info::required(PMIX_EVENT_HDLR_NAME, "reqd");
    named.flags = InfoFlags(InfoFlags::REQD.0 | InfoFlags::QUALIFIER.0);
    e.register(Registration::new(&[C], noop()).infos([
        named,
        Info::required(PMIX_RANGE, DataRange::GLOBAL),
        Info::required(PMIX_EVENT_HDLR_APPEND, true),
    ]))
    .unwrap();
}

#[test]
fn unknown_info_without_reqd_is_ignored_at_registration() {
    // Real programs pass e.g. PMIX_NSPACE at registration.
    let e = engine();
    let r = Recorder::default();
    let unknown = Info::new(
        Key::new("vendor.unknown").unwrap(),
        Value::ByteObject(vec![1]),
    );
    let mut persistent = Info::new(Key::new("vendor.other").unwrap(), 1u32);
    persistent.flags = InfoFlags::PERSISTENT;
    r.register(
        &e,
        "h",
        &[C],
        vec![unknown, persistent, Info::new(PMIX_NSPACE, "test-job")],
    )
    .unwrap();
    e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
        .unwrap();
    settle(&e);
    assert_eq!(codes_seen(&r), [C]);
}

#[test]
fn deregistering_an_unknown_reference_is_refused() {
    let e = engine();
    let h = e.register(Registration::new(&[C], noop())).unwrap();
    e.deregister(h).unwrap();
    for bad in [
        HandlerRef(0),
        HandlerRef(h.0 + 1000),
        HandlerRef(u64::MAX),
        h,
    ] {
        assert_eq!(e.deregister(bad), Err(Status::ERR_BAD_PARAM), "{bad}");
        let (cb, rx) = probe::<Status>();
        assert_eq!(e.deregister_nb(bad, cb), Status::ERR_BAD_PARAM, "{bad}");
        settle(&e);
        assert_never_called(&rx);
    }
}

// ---------------------------------------------------------------------------
// Lifecycle
// ---------------------------------------------------------------------------

#[test]
fn calls_after_shutdown_return_err_init() {
    let e = engine();
    let h = e.register(Registration::new(&[C], noop())).unwrap();
    let other_handle = e.clone();
    e.shutdown();
    e.shutdown(); // idempotent
    let e = other_handle; // every clone sees it
    let n = || Notification::new(C, me(), DataRange::PROC_LOCAL);

    assert_eq!(
        e.register(Registration::new(&[C], noop())),
        Err(Status::ERR_INIT)
    );
    let (cb, reg_rx) = probe::<(Status, HandlerRef)>();
    assert_eq!(
        e.register_nb(Registration::new(&[C], noop()), |s, r| cb((s, r))),
        Status::ERR_INIT
    );
    assert_eq!(e.deregister(h), Err(Status::ERR_INIT));
    let (cb, dereg_rx) = probe::<Status>();
    assert_eq!(e.deregister_nb(h, cb), Status::ERR_INIT);
    assert_eq!(e.notify(n()), Err(Status::ERR_INIT));
    let (cb, notify_rx) = probe::<Status>();
    assert_eq!(e.notify_nb(n(), cb), Status::ERR_INIT);
    assert_eq!(e.notify_observed(n(), |_| ()), Err(Status::ERR_INIT));
    let ev = Event::new(n(), Origin::ThisProcess).unwrap();
    assert_eq!(e.deliver(ev), Err(Status::ERR_INIT));
    // Even input that would otherwise be refused for another reason.
    assert_eq!(
        e.notify(Notification::new(C, me(), DataRange::INVALID)),
        Err(Status::ERR_INIT)
    );
    assert_never_called(&reg_rx);
    assert_never_called(&dereg_rx);
    assert_never_called(&notify_rx);
}

#[test]
fn panicking_handler_does_not_take_the_progress_thread_down() {
    let e = engine();
    let r = Recorder::default();
    e.register(Registration::new(&[C], |_inv: Invocation| {
        panic!("handler failure (expected by the test)")
    }))
    .unwrap();
    r.register(&e, "later", &[D], vec![]).unwrap();
    for _ in 0..3 {
        e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
            .unwrap();
    }
    e.notify(Notification::new(D, me(), DataRange::PROC_LOCAL))
        .unwrap();
    assert_eq!(r.wait_for(1), ["later"]);
    settle(&e);
}

#[test]
fn chain_continues_after_a_panicking_handler_with_pmix_error_recorded() {
    let e = engine();
    let r = Recorder::default();
    e.register(
        Registration::new(&[C], |_inv: Invocation| {
            panic!("handler failure (expected by the test)")
        })
        .info(name("boom")),
    )
    .unwrap();
    e.register(
        Registration::new(&[C], r.handler("after", Status::SUCCESS))
            .infos([name("after"), flag(PMIX_EVENT_HDLR_APPEND)]),
    )
    .unwrap();
    let (tx, rx) = mpsc::channel();
    assert!(e
        .notify_observed(
            Notification::new(C, me(), DataRange::PROC_LOCAL),
            move |o| tx.send(o).unwrap()
        )
        .unwrap());
    let o = rx.recv_timeout(T).expect("chain ended");
    assert_eq!(r.tags(), ["after"]);
    assert_eq!(o.handlers_run, 2);
    assert_eq!(o.results.len(), 2);
    assert_eq!(o.results[0].key.as_str(), "boom");
    assert_eq!(o.results[0].value, Value::Status(Status::ERROR));
    assert_eq!(o.results[1].key.as_str(), "after");
    assert_eq!(o.final_status, Some(Status::SUCCESS));
}

#[test]
fn panicking_callbacks_do_not_take_the_progress_thread_down() {
    let e = engine();
    let r = Recorder::default();
    let h = e.register(Registration::new(&[D], noop())).unwrap();
    r.register(&e, "later", &[C], vec![]).unwrap();
    let n = || Notification::new(C, me(), DataRange::PROC_LOCAL);
    assert_eq!(
        e.notify_nb(n(), |_| panic!("notify callback failure (expected)")),
        Status::SUCCESS
    );
    assert!(e
        .notify_observed(n(), |_| panic!("outcome callback failure (expected)"))
        .unwrap());
    assert_eq!(
        e.deregister_nb(h, |_| panic!("deregistration callback failure (expected)")),
        Status::SUCCESS
    );
    e.notify(n()).unwrap();
    assert_eq!(r.wait_for(3), ["later", "later", "later"]);
    settle(&e);
}

#[test]
fn panicking_registration_callback_still_activates_the_handler() {
    // The registration succeeded; a panic in its callback must not leave the
    // handler pending (never receiving events) forever.
    let e = engine();
    let r = Recorder::default();
    let s = e.register_nb(
        Registration::new(&[C], r.handler("h", Status::SUCCESS)),
        |_, _| panic!("registration callback failure (expected)"),
    );
    assert_eq!(s, Status::SUCCESS);
    settle(&e);
    e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
        .unwrap();
    settle(&e);
    assert_eq!(codes_seen(&r), [C]);
}

// ---------------------------------------------------------------------------
// Arbitrary input
// ---------------------------------------------------------------------------

const EVENT_KEYS: &[&str] = &[
    "pmix.evname",
    "pmix.evfirst",
    "pmix.evlast",
    "pmix.evfirstcat",
    "pmix.evlastcat",
    "pmix.evbefore",
    "pmix.evafter",
    "pmix.evprepend",
    "pmix.evappend",
    "pmix.evrange",
    "pmix.range",
    "pmix.evproc",
    "pmix.evaffected",
    "pmix.evnondef",
    "pmix.evobject",
    "pmix.evjob",
    "pmix.evenv",
];

fn any_proc() -> impl Strategy<Value = Proc> {
    (
        prop::sample::select(vec!["", "test-job", "a", "b"]),
        prop_oneof![0u32..4, Just(Rank::WILDCARD.0), Just(Rank::UNDEF.0)],
    )
        .prop_map(|(n, r)| Proc::new(n, r).unwrap())
}

fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Undef),
        any::<bool>().prop_map(Value::Bool),
        "[a-z]{0,3}".prop_map(Value::String),
        any::<i32>().prop_map(Value::Int),
        any::<i64>().prop_map(Value::Int64),
        any::<u64>().prop_map(Value::Uint64),
        (0u8..10).prop_map(Value::Uint8),
        any::<u8>().prop_map(|r| Value::DataRange(DataRange(r))),
        (0u8..8).prop_map(|r| Value::DataRange(DataRange(r))),
        any::<f64>().prop_map(Value::Double),
        any::<usize>().prop_map(Value::Pointer),
        any::<i32>().prop_map(|s| Value::Status(Status(s))),
        any_proc().prop_map(Value::from),
        vec(any_proc(), 0..3).prop_map(Value::from),
        vec("[a-z]{0,2}", 0..2).prop_map(|v| Value::DataArray(DataArray::String(v))),
    ]
}

fn any_info() -> impl Strategy<Value = Info> {
    let key = prop_oneof![
        3 => prop::sample::select(EVENT_KEYS.to_vec()).prop_map(|k| k.to_string()),
        1 => prop::sample::select(attrs::ALL.iter().map(|a| a.key).collect::<Vec<_>>())
            .prop_map(|k| k.to_string()),
        1 => "[a-z.]{0,6}",
    ];
    (
        key,
        any_value(),
        prop_oneof![Just(0u32), Just(1u32), any::<u32>()],
    )
        .prop_map(|(k, v, f)| Info {
            key: Key::new(k).unwrap(),
            value: v,
            flags: InfoFlags(f),
        })
}

fn any_code() -> impl Strategy<Value = Status> {
    prop_oneof![
        Just(C),
        Just(D),
        Just(Status::EVENT_NODE_DOWN),
        any::<i32>().prop_map(Status)
    ]
}

fn any_origin() -> impl Strategy<Value = Origin> {
    prop::sample::select(vec![Origin::ThisProcess, Origin::ThisNode, Origin::Remote])
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_registrations_and_notifications_give_a_status_and_never_panic(
        regs in vec((vec(any_code(), 0..3), vec(any_info(), 0..4)), 1..6),
        notes in vec(
            (any_code(), any_proc(), any::<u8>(), 0u8..9, vec(any_info(), 0..4), any_origin()),
            1..6,
        ),
    ) {
        let e = engine();
        let calls = std::sync::Arc::new(Mutex::new(0usize));
        for (codes, info) in regs {
            let c = calls.clone();
            let res = e.register(Registration::new(&codes, move |inv: Invocation| {
                *c.lock().unwrap() += 1;
                inv.complete(Status::SUCCESS, vec![]);
            }).infos(info));
            if let Err(s) = res {
                prop_assert!(
                    [Status::ERR_BAD_PARAM, Status::ERR_EVENT_REGISTRATION, Status::ERR_NOT_SUPPORTED]
                        .contains(&s),
                    "registration: {s}"
                );
            }
        }
        for (code, source, wide, narrow, info, origin) in notes {
            // Mostly valid ranges, sometimes anything.
            let range = if wide % 4 == 0 { DataRange(wide) } else { DataRange(narrow) };
            let n = Notification { code, source, range, info };
            if let Err(s) = e.notify(n.clone()) {
                prop_assert!(
                    [Status::ERR_BAD_PARAM, Status::ERR_NOT_SUPPORTED].contains(&s),
                    "notify: {s}"
                );
            }
            match Event::new(n, origin) {
                Ok(ev) => { e.deliver(ev).unwrap(); }
                Err(s) => prop_assert_eq!(s, Status::ERR_BAD_PARAM),
            }
        }
        // The engine is still alive and working.
        settle(&e);
        let r = Recorder::default();
        r.register(&e, "probe", &[Status(-7_777_777)], vec![]).unwrap();
        e.notify(Notification::new(Status(-7_777_777), me(), DataRange::PROC_LOCAL)).unwrap();
        prop_assert_eq!(r.wait_for(1), ["probe"]);
    }
}

/// An info whose value nests `depth` info arrays (the innermost an int).
fn nested_info(depth: usize) -> Info {
    let mut cur = Info::new(Key::new("test.leaf").unwrap(), Value::Int(7));
    for _ in 0..depth {
        cur = Info::new(
            Key::new("test.nest").unwrap(),
            Value::DataArray(DataArray::Info(vec![cur])),
        );
    }
    cur
}

#[test]
fn info_arrays_nested_deeper_than_the_limit_are_refused_by_every_validator() {
    // One limit (MAX_INFO_NESTING) everywhere a caller's data enters: the
    // record decoder, the C conversions, and the validators of events and
    // requests here. The check itself never recurses over the caller's data.
    let e = engine();
    let limit = fastpmix::types::MAX_INFO_NESTING;
    for (depth, want) in [
        (limit, Ok(())),
        (limit + 1, Err(Status::ERR_BAD_PARAM)),
        (5000, Err(Status::ERR_BAD_PARAM)),
    ] {
        let i = nested_info(depth);
        assert_eq!(attrs::check(&i), want, "depth {depth}");
        assert_eq!(
            fastpmix::types::nested_too_deep(std::slice::from_ref(&i)),
            want.is_err()
        );
        let n = Notification::new(C, me(), DataRange::PROC_LOCAL).info(i);
        assert_eq!(e.notify(n).map(|_| ()), want, "notify at depth {depth}");
    }
}
