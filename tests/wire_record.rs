//! The conversions between in-process PMIx types and the shared-memory record
//! schema (`fastpmix::internals::wire`): every value survives the trip through rkyv
//! bytes unchanged, an event's infos travel verbatim, the derived routing
//! index says what the infos say, and hostile records are refused with
//! `PMIX_ERR_BAD_PARAM`, never a panic. Each test is named after the rule it
//! checks.

use fastpmix::event::EventClass;
use fastpmix::internals::wire::{
    derived_fields_consistent, event_from_archived, event_into_record, event_to_record,
    info_from_archived, info_to_record, now_realtime_ns, proc_from_archived, proc_to_record,
    relayable_as_is, value_from_archived, value_to_record, WireEvent, MAX_INFO_NESTING,
};
use fastpmix::types::attrs;
use fastpmix::types::{AllocDirective, DataArray, InfoFlags, Timeval, MAX_KEYLEN, MAX_NSLEN};
use fastpmix::{DataRange, Info, Key, Proc, Rank, Status, Value};
use proptest::prelude::*;
use rkyv::rancor::Error as RkyvError;
use rkyv::util::AlignedVec;
use shm_layout::record::{
    flags, ArchivedEventRecord, ArchivedInfoRecord, ArchivedProcRecord, ArchivedValueRecord,
    EventRecord, InfoRecord, ProcRecord, ValueRecord,
};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn bytes_of_value(r: &ValueRecord) -> AlignedVec {
    rkyv::to_bytes::<RkyvError>(r).expect("serialize value record")
}

fn bytes_of_info(r: &InfoRecord) -> AlignedVec {
    rkyv::to_bytes::<RkyvError>(r).expect("serialize info record")
}

fn bytes_of_proc(r: &ProcRecord) -> AlignedVec {
    rkyv::to_bytes::<RkyvError>(r).expect("serialize proc record")
}

fn bytes_of_event(r: &EventRecord) -> AlignedVec {
    rkyv::to_bytes::<RkyvError>(r).expect("serialize event record")
}

fn access_value(b: &[u8]) -> &ArchivedValueRecord {
    rkyv::access::<ArchivedValueRecord, RkyvError>(b).expect("valid value record")
}

fn access_info(b: &[u8]) -> &ArchivedInfoRecord {
    rkyv::access::<ArchivedInfoRecord, RkyvError>(b).expect("valid info record")
}

fn access_proc(b: &[u8]) -> &ArchivedProcRecord {
    rkyv::access::<ArchivedProcRecord, RkyvError>(b).expect("valid proc record")
}

fn access_event(b: &[u8]) -> &ArchivedEventRecord {
    rkyv::access::<ArchivedEventRecord, RkyvError>(b).expect("valid event record")
}

/// Encode, archive, validate, decode.
fn value_round_trip(v: &Value) -> Result<Value, Status> {
    let bytes = bytes_of_value(&value_to_record(v));
    value_from_archived(access_value(&bytes))
}

fn event_round_trip(e: &WireEvent) -> Result<WireEvent, Status> {
    let bytes = bytes_of_event(&event_to_record(e));
    event_from_archived(access_event(&bytes))
}

/// `PartialEq`, except that floats compare by bits (so NaN equals itself).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
        (Value::DataArray(DataArray::Info(x)), Value::DataArray(DataArray::Info(y))) => {
            same_infos(x, y)
        }
        _ => a == b,
    }
}

fn same_infos(a: &[Info], b: &[Info]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.key == y.key && x.flags == y.flags && same_value(&x.value, &y.value))
}

fn same_event(a: &WireEvent, b: &WireEvent) -> bool {
    a.code == b.code
        && a.source == b.source
        && a.range == b.range
        && a.class == b.class
        && a.source_seq == b.source_seq
        && a.timestamp_ns == b.timestamp_ns
        && same_infos(&a.info, &b.info)
}

fn p(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).expect("valid proc")
}

fn event(range: DataRange, info: Vec<Info>) -> WireEvent {
    WireEvent {
        code: Status(-1234),
        source: p("job-1", 3),
        range,
        info,
        class: EventClass::Job,
        source_seq: 42,
        timestamp_ns: 1_700_000_000_123_456_789,
    }
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

fn nspace_strategy() -> impl Strategy<Value = Proc> {
    ("[^\u{0}]{0,24}", any::<u32>())
        .prop_filter_map("nspace fits", |(ns, r)| Proc::new(&ns, r).ok())
}

fn key_strategy() -> impl Strategy<Value = Key> {
    prop_oneof![
        "[^\u{0}]{0,32}".prop_filter_map("key fits", |k| Key::new(k).ok()),
        Just(attrs::PMIX_EVENT_TEXT_MESSAGE),
        Just(Key::EMPTY),
    ]
}

fn leaf_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Undef),
        any::<bool>().prop_map(Value::Bool),
        any::<u8>().prop_map(Value::Byte),
        "\\PC{0,40}".prop_map(Value::String),
        any::<u64>().prop_map(Value::Size),
        any::<i32>().prop_map(Value::Pid),
        any::<i32>().prop_map(Value::Int),
        any::<i8>().prop_map(Value::Int8),
        any::<i16>().prop_map(Value::Int16),
        any::<i32>().prop_map(Value::Int32),
        any::<i64>().prop_map(Value::Int64),
        any::<u32>().prop_map(Value::Uint),
        any::<u8>().prop_map(Value::Uint8),
        any::<u16>().prop_map(Value::Uint16),
        any::<u32>().prop_map(Value::Uint32),
        any::<u64>().prop_map(Value::Uint64),
        any::<f32>().prop_map(Value::Float),
        any::<f64>().prop_map(Value::Double),
        (any::<i64>(), any::<i64>()).prop_map(|(sec, usec)| Value::Timeval(Timeval { sec, usec })),
        any::<i64>().prop_map(Value::Time),
        any::<i32>().prop_map(|s| Value::Status(Status(s))),
        nspace_strategy().prop_map(|p| Value::Proc(Box::new(p))),
        any::<u32>().prop_map(|r| Value::Rank(Rank(r))),
        any::<u8>().prop_map(|r| Value::DataRange(DataRange(r))),
        any::<u8>().prop_map(|d| Value::AllocDirective(AllocDirective(d))),
        prop::collection::vec(any::<u8>(), 0..48).prop_map(Value::ByteObject),
        prop::collection::vec(nspace_strategy(), 0..4)
            .prop_map(|v| Value::DataArray(DataArray::Proc(v))),
        prop::collection::vec("\\PC{0,12}", 0..4)
            .prop_map(|v| Value::DataArray(DataArray::String(v))),
        prop::collection::vec(any::<u32>(), 0..8)
            .prop_map(|v| Value::DataArray(DataArray::Uint32(v))),
        any::<usize>().prop_map(Value::Pointer),
    ]
}

fn info_with(value: impl Strategy<Value = Value>) -> impl Strategy<Value = Info> {
    (key_strategy(), any::<u32>(), value).prop_map(|(key, f, value)| Info {
        key,
        value,
        flags: InfoFlags(f),
    })
}

/// Every variant, with info arrays nested up to depth 2.
fn any_value() -> impl Strategy<Value = Value> {
    leaf_value().prop_recursive(2, 48, 4, |inner| {
        prop::collection::vec(info_with(inner), 0..4)
            .prop_map(|v| Value::DataArray(DataArray::Info(v)))
    })
}

fn any_info() -> impl Strategy<Value = Info> {
    info_with(any_value())
}

/// Infos that drive the derived fields, mixed with arbitrary ones.
fn event_info() -> impl Strategy<Value = Info> {
    let procs = || prop::collection::vec(nspace_strategy(), 0..3);
    prop_oneof![
        3 => any_info(),
        1 => procs().prop_map(|v| Info::new(attrs::PMIX_EVENT_CUSTOM_RANGE, v)),
        1 => nspace_strategy().prop_map(|p| Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, p)),
        1 => procs().prop_map(|v| Info::new(attrs::PMIX_EVENT_AFFECTED_PROCS, v)),
        1 => any::<bool>().prop_map(|b| Info::new(attrs::PMIX_EVENT_NON_DEFAULT, b)),
        1 => any::<bool>().prop_map(|b| Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, b)),
    ]
}

fn any_event() -> impl Strategy<Value = WireEvent> {
    (
        any::<i32>(),
        nspace_strategy(),
        any::<u8>(),
        prop::collection::vec(event_info(), 0..6),
        any::<bool>(),
        any::<u32>(),
        any::<u64>(),
    )
        .prop_map(|(code, source, range, info, env, seq, ts)| WireEvent {
            code: Status(code),
            source,
            range: DataRange(range),
            info,
            class: if env {
                EventClass::Environment
            } else {
                EventClass::Job
            },
            source_seq: seq,
            timestamp_ns: ts,
        })
}

/// Raw strings as another process may write them: any length up to past the
/// limits, sometimes with NUL bytes.
fn raw_string(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        "[^\u{0}]{0,16}".boxed(),
        "[a\u{0}]{0,16}".boxed(),
        (0..=max).prop_map(|n| "n".repeat(n)).boxed(),
    ]
}

fn raw_proc() -> impl Strategy<Value = ProcRecord> {
    (raw_string(MAX_NSLEN + 40), any::<u32>())
        .prop_map(|(nspace, rank)| ProcRecord { nspace, rank })
}

/// Arbitrary value records, including invalid namespaces and keys.
fn raw_value() -> impl Strategy<Value = ValueRecord> {
    let leaf = prop_oneof![
        Just(ValueRecord::Undef),
        any::<bool>().prop_map(ValueRecord::Bool),
        raw_string(64).prop_map(ValueRecord::String),
        any::<f64>().prop_map(ValueRecord::Double),
        (any::<i64>(), any::<i64>()).prop_map(|(s, u)| ValueRecord::Timeval(s, u)),
        raw_proc().prop_map(ValueRecord::Proc),
        prop::collection::vec(raw_proc(), 0..3).prop_map(ValueRecord::ProcArray),
        prop::collection::vec(raw_string(8), 0..3).prop_map(ValueRecord::StringArray),
        any::<u8>().prop_map(ValueRecord::DataRange),
        any::<u8>().prop_map(ValueRecord::AllocDirective),
        any::<u64>().prop_map(ValueRecord::Pointer),
    ];
    leaf.prop_recursive(2, 24, 3, |inner| {
        prop::collection::vec(
            (raw_string(MAX_KEYLEN + 40), any::<u32>(), inner)
                .prop_map(|(key, flags, value)| InfoRecord { key, flags, value }),
            0..3,
        )
        .prop_map(ValueRecord::InfoArray)
    })
}

/// Does this record satisfy every type invariant of the in-process types?
fn raw_is_valid(v: &ValueRecord) -> bool {
    let ns_ok = |p: &ProcRecord| p.nspace.len() <= MAX_NSLEN && !p.nspace.contains('\0');
    match v {
        ValueRecord::Proc(p) => ns_ok(p),
        ValueRecord::ProcArray(l) => l.iter().all(ns_ok),
        ValueRecord::InfoArray(l) => l
            .iter()
            .all(|i| i.key.len() <= MAX_KEYLEN && !i.key.contains('\0') && raw_is_valid(&i.value)),
        ValueRecord::Pointer(a) => usize::try_from(*a).is_ok(),
        _ => true,
    }
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any value, nested info arrays included, comes back identical
    /// (floats bit for bit, NaN payloads too).
    #[test]
    fn every_value_round_trips_unchanged(v in any_value()) {
        let back = value_round_trip(&v).expect("a valid value decodes");
        prop_assert!(same_value(&v, &back), "sent {v:?}, got {back:?}");
    }

    /// Any info (key, directive bits, value) comes back identical.
    #[test]
    fn every_info_round_trips_unchanged(i in any_info()) {
        let bytes = bytes_of_info(&info_to_record(&i));
        let back = info_from_archived(access_info(&bytes)).expect("a valid info decodes");
        prop_assert!(same_infos(std::slice::from_ref(&i), std::slice::from_ref(&back)));
    }

    /// Any event comes back identical, and the record its sender built has
    /// consistent derived fields.
    #[test]
    fn every_event_round_trips_with_consistent_derived_fields(e in any_event()) {
        let bytes = bytes_of_event(&event_to_record(&e));
        let archived = access_event(&bytes);
        let back = event_from_archived(archived).expect("a valid event decodes");
        prop_assert!(same_event(&e, &back), "sent {e:?}, got {back:?}");
        prop_assert!(derived_fields_consistent(archived));
    }

    /// Whatever another process wrote, decoding never panics: it succeeds
    /// exactly when every invariant holds (and then re-encodes to the same
    /// bytes), and otherwise refuses with PMIX_ERR_BAD_PARAM.
    #[test]
    fn hostile_value_records_decode_or_are_refused_never_panic(r in raw_value()) {
        let bytes = bytes_of_value(&r);
        match value_from_archived(access_value(&bytes)) {
            Ok(v) => {
                prop_assert!(raw_is_valid(&r), "accepted invalid {r:?}");
                let again = bytes_of_value(&value_to_record(&v));
                prop_assert_eq!(again.as_slice(), bytes.as_slice());
            }
            Err(s) => {
                prop_assert!(!raw_is_valid(&r), "refused valid {r:?}");
                prop_assert_eq!(s, Status::ERR_BAD_PARAM);
            }
        }
    }
}

#[test]
fn every_value_kind_round_trips_unchanged() {
    let nested = vec![Info::new(
        attrs::PMIX_EVENT_TEXT_MESSAGE,
        Value::DataArray(DataArray::Info(vec![Info::required(
            attrs::PMIX_EVENT_AFFECTED_PROC,
            p("inner", 9),
        )])),
    )];
    let all = [
        Value::Undef,
        Value::Bool(true),
        Value::Byte(0xab),
        Value::String("héllo".into()),
        Value::Size(u64::MAX),
        Value::Pid(-7),
        Value::Int(i32::MIN),
        Value::Int8(-128),
        Value::Int16(-300),
        Value::Int32(77),
        Value::Int64(i64::MIN),
        Value::Uint(u32::MAX),
        Value::Uint8(200),
        Value::Uint16(65535),
        Value::Uint32(1),
        Value::Uint64(u64::MAX - 1),
        Value::Float(f32::NAN),
        Value::Double(-0.0),
        Value::Timeval(Timeval {
            sec: 1_700_000_000,
            usec: 999_999,
        }),
        Value::Time(-1),
        Value::Status(Status::ERR_BAD_PARAM),
        Value::Proc(Box::new(p("ns", 0))),
        Value::Rank(Rank::WILDCARD),
        Value::DataRange(DataRange(200)),
        Value::AllocDirective(AllocDirective(0)),
        Value::ByteObject(vec![0, 1, 2, 255]),
        Value::DataArray(DataArray::Info(nested)),
        Value::DataArray(DataArray::Proc(vec![p("a", 1), p("", u32::MAX)])),
        Value::DataArray(DataArray::String(vec!["x".into(), String::new()])),
        Value::DataArray(DataArray::Uint32(vec![0, u32::MAX])),
        Value::Pointer(usize::MAX),
    ];
    for v in &all {
        let back = value_round_trip(v).expect("decodes");
        assert!(same_value(v, &back), "sent {v:?}, got {back:?}");
    }
}

#[test]
fn pointer_travels_as_its_address() {
    let addr = 0x7fff_dead_beef_usize;
    assert_eq!(
        value_to_record(&Value::Pointer(addr)),
        ValueRecord::Pointer(addr as u64)
    );
}

#[test]
fn proc_round_trips_with_longest_namespace_and_reserved_ranks() {
    for rank in [Rank::UNDEF, Rank::WILDCARD, Rank::LOCAL_NODE, Rank(0)] {
        let pr = Proc::new(&"z".repeat(MAX_NSLEN), rank.0).expect("255 bytes is allowed");
        let bytes = bytes_of_proc(&proc_to_record(&pr));
        assert_eq!(proc_from_archived(access_proc(&bytes)), Ok(pr));
    }
}

// ---------------------------------------------------------------------------
// Events: verbatim infos, derived routing index
// ---------------------------------------------------------------------------

#[test]
fn info_list_travels_verbatim_in_order() {
    // Routing infos, duplicates, a required flag, a false flag, an unknown key
    // and an empty (removed) key: all travel as given, in the given order.
    let info = vec![
        Info::new(attrs::PMIX_EVENT_TEXT_MESSAGE, "first"),
        Info::required(attrs::PMIX_EVENT_AFFECTED_PROC, p("b", 1)),
        Info::new(attrs::PMIX_EVENT_NON_DEFAULT, false),
        Info::new(Key::new("vendor.custom").unwrap(), Value::Uint16(7)),
        Info::new(Key::EMPTY, Value::Undef),
        Info::new(attrs::PMIX_EVENT_TEXT_MESSAGE, "second"),
        Info {
            key: attrs::PMIX_EVENT_CUSTOM_RANGE,
            value: vec![p("c", 0), p("c", 1)].into(),
            flags: InfoFlags(InfoFlags::REQD.0 | InfoFlags::QUALIFIER.0 | 0x8000_0000),
        },
    ];
    let e = event(DataRange::CUSTOM, info);
    let rec = event_to_record(&e);
    let sent: Vec<InfoRecord> = e.info.iter().map(info_to_record).collect();
    assert_eq!(rec.info, sent, "the record holds the infos verbatim");
    let back = event_round_trip(&e).expect("decodes");
    assert_eq!(back, e);
}

#[test]
fn event_header_fields_round_trip() {
    let mut e = event(DataRange::NAMESPACE, vec![]);
    e.code = Status::ERR_BAD_PARAM;
    e.source = Proc::SMS;
    e.source_seq = u32::MAX;
    e.timestamp_ns = now_realtime_ns();
    e.class = EventClass::Environment;
    assert_eq!(event_round_trip(&e), Ok(e.clone()));
    e.class = EventClass::Job;
    e.range = DataRange(250); // newtypes hold any value
    assert_eq!(event_round_trip(&e), Ok(e));
}

#[test]
fn custom_range_is_derived_from_the_custom_range_info() {
    let targets = vec![p("t", 0), p("t", Rank::WILDCARD.0), p("u", 4)];
    let e = event(
        DataRange::CUSTOM,
        vec![
            Info::new(attrs::PMIX_EVENT_TEXT_MESSAGE, "x"),
            Info::new(attrs::PMIX_EVENT_CUSTOM_RANGE, targets.clone()),
        ],
    );
    let rec = event_to_record(&e);
    let want: Vec<ProcRecord> = targets.iter().map(proc_to_record).collect();
    assert_eq!(rec.custom_range, want);
    assert!(rec.affected.is_empty());
    assert_eq!(rec.flags, 0);
}

#[test]
fn custom_range_accepts_a_single_proc_as_the_engine_does() {
    let e = event(
        DataRange::CUSTOM,
        vec![Info::new(attrs::PMIX_EVENT_CUSTOM_RANGE, p("one", 2))],
    );
    assert_eq!(
        event_to_record(&e).custom_range,
        vec![proc_to_record(&p("one", 2))]
    );
}

#[test]
fn affected_collects_affected_proc_and_affected_procs_in_info_order() {
    let e = event(
        DataRange::NAMESPACE,
        vec![
            Info::new(attrs::PMIX_EVENT_AFFECTED_PROCS, vec![p("a", 1), p("a", 2)]),
            Info::new(attrs::PMIX_EVENT_TEXT_MESSAGE, "between"),
            Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, p("b", 7)),
        ],
    );
    let rec = event_to_record(&e);
    let want: Vec<ProcRecord> = [p("a", 1), p("a", 2), p("b", 7)]
        .iter()
        .map(proc_to_record)
        .collect();
    assert_eq!(rec.affected, want);
    assert!(rec.custom_range.is_empty());
}

#[test]
fn flags_follow_non_default_and_do_not_cache_infos() {
    let rec = event_to_record(&event(
        DataRange::LOCAL,
        vec![
            Info::new(attrs::PMIX_EVENT_NON_DEFAULT, true),
            Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, true),
        ],
    ));
    assert_eq!(rec.flags, flags::NON_DEFAULT | flags::DO_NOT_CACHE);
    // A void value (as C loads with a NULL pointer) means "set".
    let rec = event_to_record(&event(
        DataRange::LOCAL,
        vec![Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, Value::Undef)],
    ));
    assert_eq!(rec.flags, flags::DO_NOT_CACHE);
}

#[test]
fn false_flag_infos_set_no_bit() {
    let rec = event_to_record(&event(
        DataRange::LOCAL,
        vec![
            Info::new(attrs::PMIX_EVENT_NON_DEFAULT, false),
            Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, false),
        ],
    ));
    assert_eq!(rec.flags, 0);
}

#[test]
fn environment_class_sets_the_environment_bit_and_comes_back() {
    let mut e = event(
        DataRange::GLOBAL,
        vec![Info::new(attrs::PMIX_EVENT_NON_DEFAULT, true)],
    );
    e.class = EventClass::Environment;
    let rec = event_to_record(&e);
    assert_eq!(rec.flags, flags::NON_DEFAULT | flags::ENVIRONMENT);
    let bytes = bytes_of_event(&rec);
    let back = event_from_archived(access_event(&bytes)).unwrap();
    assert_eq!(back.class, EventClass::Environment);
    e.class = EventClass::Job;
    assert_eq!(event_to_record(&e).flags & flags::ENVIRONMENT, 0);
}

/// A change made to an honest record's derived fields.
type Tamper = fn(&mut EventRecord);

/// A custom-range event with every derived field set.
fn routed_event() -> WireEvent {
    event(
        DataRange::CUSTOM,
        vec![
            Info::new(attrs::PMIX_EVENT_CUSTOM_RANGE, vec![p("t", 0), p("t", 1)]),
            Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, p("a", 5)),
            Info::new(attrs::PMIX_EVENT_NON_DEFAULT, true),
        ],
    )
}

#[test]
fn derived_fields_consistent_catches_tampered_records() {
    let e = routed_event();
    let honest = event_to_record(&e);
    assert!(derived_fields_consistent(access_event(&bytes_of_event(
        &honest
    ))));

    let tampers: [(&str, Tamper); 8] = [
        ("custom target added", |r| {
            r.custom_range.push(proc_to_record(&p("evil", 0)))
        }),
        ("custom target dropped", |r| {
            r.custom_range.pop();
        }),
        ("custom targets reordered", |r| r.custom_range.reverse()),
        ("affected rank changed", |r| r.affected[0].rank = 6),
        ("affected cleared", |r| r.affected.clear()),
        ("non-default cleared", |r| r.flags &= !flags::NON_DEFAULT),
        ("do-not-cache set", |r| r.flags |= flags::DO_NOT_CACHE),
        ("unknown bit set", |r| r.flags |= 0x100),
    ];
    for (what, tamper) in tampers {
        let mut rec = honest.clone();
        tamper(&mut rec);
        let bytes = bytes_of_event(&rec);
        let archived = access_event(&bytes);
        assert!(!derived_fields_consistent(archived), "missed: {what}");
        // The receiver ignores the derived fields: same event either way.
        assert_eq!(event_from_archived(archived).as_ref(), Ok(&e), "{what}");
    }
    // Toggling the class bit is not a derived-field inconsistency.
    let mut rec = honest.clone();
    rec.flags |= flags::ENVIRONMENT;
    assert!(derived_fields_consistent(access_event(&bytes_of_event(
        &rec
    ))));
}

/// The server relays a client's record as its own bytes only when that is
/// exactly the record it would build: the record names the authenticated
/// submitter and its derived fields say what its infos say. Any other
/// record is encoded again from the validated event.
#[test]
fn a_submitted_record_is_relayed_as_is_only_when_it_names_its_submitter_and_its_derived_fields_are_honest(
) {
    let e = routed_event();
    let honest = event_to_record(&e);
    let bytes = bytes_of_event(&honest);
    assert!(relayable_as_is(access_event(&bytes), &e.source, &e.info));
    // Another source than the submitter: re-encoded with the real one.
    for other in [p("job-1", 4), p("job-2", 3)] {
        assert!(
            !relayable_as_is(access_event(&bytes), &other, &e.info),
            "{other}"
        );
    }
    // The class bit is the submitter's to set.
    let mut env = honest.clone();
    env.flags |= flags::ENVIRONMENT;
    let b = bytes_of_event(&env);
    assert!(relayable_as_is(access_event(&b), &e.source, &e.info));
    let tampers: [(&str, Tamper); 6] = [
        ("custom target added", |r| {
            r.custom_range.push(proc_to_record(&p("evil", 0)))
        }),
        ("custom targets reordered", |r| r.custom_range.reverse()),
        ("affected cleared", |r| r.affected.clear()),
        ("do-not-cache set", |r| r.flags |= flags::DO_NOT_CACHE),
        ("relayed set by the client", |r| r.flags |= flags::RELAYED),
        ("unknown bit set", |r| r.flags |= 0x100),
    ];
    for (what, tamper) in tampers {
        let mut rec = honest.clone();
        tamper(&mut rec);
        let b = bytes_of_event(&rec);
        assert!(
            !relayable_as_is(access_event(&b), &e.source, &e.info),
            "relayed as is: {what}"
        );
    }
}

#[test]
fn now_realtime_ns_is_the_wall_clock() {
    let a = now_realtime_ns();
    let sys = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let b = now_realtime_ns();
    assert!(a <= sys && sys <= b, "{a} {sys} {b}");
    assert!(a > 1_600_000_000_000_000_000, "after 2020");
}

// ---------------------------------------------------------------------------
// Hostile records
// ---------------------------------------------------------------------------

fn bad(nspace: String) -> ProcRecord {
    ProcRecord { nspace, rank: 0 }
}

fn hostile_nspaces() -> Vec<String> {
    vec![
        "n".repeat(300),
        "n".repeat(MAX_NSLEN + 1),
        "ab\0cd".into(),
        "\0".into(),
    ]
}

fn hostile_keys() -> Vec<String> {
    vec![
        "k".repeat(600),
        "k".repeat(MAX_KEYLEN + 1),
        "pmix.\0evil".into(),
    ]
}

#[test]
fn overlong_or_nul_nspace_is_bad_param_in_every_position() {
    for ns in hostile_nspaces() {
        let bytes = bytes_of_proc(&bad(ns.clone()));
        assert_eq!(
            proc_from_archived(access_proc(&bytes)),
            Err(Status::ERR_BAD_PARAM)
        );

        for v in [
            ValueRecord::Proc(bad(ns.clone())),
            ValueRecord::ProcArray(vec![proc_to_record(&p("ok", 1)), bad(ns.clone())]),
        ] {
            let bytes = bytes_of_value(&v);
            assert_eq!(
                value_from_archived(access_value(&bytes)),
                Err(Status::ERR_BAD_PARAM)
            );
        }

        let mut rec = event_to_record(&event(DataRange::NAMESPACE, vec![]));
        rec.source = bad(ns.clone());
        let bytes = bytes_of_event(&rec);
        let archived = access_event(&bytes);
        assert_eq!(event_from_archived(archived), Err(Status::ERR_BAD_PARAM));
        assert!(!derived_fields_consistent(archived));
    }
}

#[test]
fn overlong_or_nul_key_is_bad_param_at_any_depth() {
    for key in hostile_keys() {
        let top = InfoRecord {
            key: key.clone(),
            flags: 0,
            value: ValueRecord::Undef,
        };
        let bytes = bytes_of_info(&top);
        assert_eq!(
            info_from_archived(access_info(&bytes)),
            Err(Status::ERR_BAD_PARAM)
        );

        let nested = ValueRecord::InfoArray(vec![InfoRecord {
            key: "ok".into(),
            flags: 0,
            value: ValueRecord::InfoArray(vec![top.clone()]),
        }]);
        let bytes = bytes_of_value(&nested);
        assert_eq!(
            value_from_archived(access_value(&bytes)),
            Err(Status::ERR_BAD_PARAM)
        );

        let mut rec = event_to_record(&event(DataRange::NAMESPACE, vec![]));
        rec.info.push(top);
        let bytes = bytes_of_event(&rec);
        assert_eq!(
            event_from_archived(access_event(&bytes)),
            Err(Status::ERR_BAD_PARAM)
        );
    }
}

#[test]
fn longest_valid_key_and_nspace_are_accepted() {
    let i = InfoRecord {
        key: "k".repeat(MAX_KEYLEN),
        flags: 0,
        value: ValueRecord::Proc(bad("n".repeat(MAX_NSLEN))),
    };
    let bytes = bytes_of_info(&i);
    let back = info_from_archived(access_info(&bytes)).expect("limits are inclusive");
    assert_eq!(back.key.as_str().len(), MAX_KEYLEN);
}

#[test]
fn out_of_range_enum_values_are_kept_not_refused() {
    for v in [ValueRecord::DataRange(255), ValueRecord::AllocDirective(77)] {
        let bytes = bytes_of_value(&v);
        let back = value_from_archived(access_value(&bytes)).expect("newtypes hold any value");
        assert_eq!(value_to_record(&back), v);
    }
}

fn nest(depth: usize) -> ValueRecord {
    let mut v = ValueRecord::Uint8(1);
    for _ in 0..depth {
        v = ValueRecord::InfoArray(vec![InfoRecord {
            key: "n".into(),
            flags: 0,
            value: v,
        }]);
    }
    v
}

#[test]
fn info_arrays_nested_beyond_the_limit_are_bad_param() {
    let bytes = bytes_of_value(&nest(MAX_INFO_NESTING));
    assert!(value_from_archived(access_value(&bytes)).is_ok());
    let bytes = bytes_of_value(&nest(MAX_INFO_NESTING + 1));
    assert_eq!(
        value_from_archived(access_value(&bytes)),
        Err(Status::ERR_BAD_PARAM)
    );
}

proptest! {
    /// The server encodes every event through one reused record
    /// (`event_into_record`): whatever the previous event left in it, the
    /// record equals a fresh `event_to_record` of the new event.
    #[test]
    fn a_reused_record_equals_a_fresh_one(a in any_event(), b in any_event()) {
        let mut r = event_to_record(&a);
        // Compared as bytes: a NaN value is not equal to itself.
        for e in [&b, &a] {
            event_into_record(e, &mut r);
            let (got, want) = (bytes_of_event(&r), bytes_of_event(&event_to_record(e)));
            prop_assert_eq!(got.as_slice(), want.as_slice());
        }
    }
}
