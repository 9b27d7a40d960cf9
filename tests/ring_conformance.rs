//! Conformance suite of the event ring, run over both
//! backends: `heap::*` on the in-process ring (`Region::heap`), `shm::*` on a
//! shared-memory segment (`Segment::create` for the writer, a second
//! `Segment::open` mapping per reader). Each test is named after the rule it
//! checks; the rule bodies are the generic functions below, instantiated for
//! both backends by `both_backends!`.
//!
//! `tools/miri` runs the `heap` half under miri (counts shrink under
//! `cfg(miri)`).

use fastpmix::internals::ring::{
    EventRecord, Next, PublishError, Region, RingReader, RingWriter, Segment, SpinPolicy, Start,
    Wake, WriteError,
};
use shm_layout::record::{flags, InfoRecord, ProcRecord, ValueRecord};
use shm_layout::Geometry;
use shm_layout::{client_state, interest_bit, sleeper_bit, sleeper_word};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Turns a hang into a failure (never asserted as a time).
const HANG: Duration = Duration::from_secs(20);

/// How many times a loop that would be long under miri runs.
fn scaled(normal: u64, miri: u64) -> u64 {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    Heap,
    Shm,
}

/// A ring under test: the writer's region, and (for shm) the segment whose
/// name readers open with their own mapping. Dropping it unlinks the segment.
struct Ring {
    region: Region,
    seg: Option<Segment>,
}

impl Backend {
    fn ring(self, g: Geometry) -> Ring {
        match self {
            Backend::Heap => Ring {
                region: Region::heap(g, 0).expect("valid geometry"),
                seg: None,
            },
            Backend::Shm => {
                let seg = Segment::create(g).expect("create segment");
                Ring {
                    region: seg.region().clone(),
                    seg: Some(seg),
                }
            }
        }
    }
}

impl Ring {
    /// The one writer.
    fn writer(&self) -> RingWriter {
        RingWriter::new(self.region.clone())
    }

    /// A region for a reader: the same heap memory, or a fresh mapping of
    /// the segment opened by name (as another process would).
    fn reader_region(&self) -> Region {
        match &self.seg {
            None => self.region.clone(),
            Some(s) => Segment::open(s.name(), Duration::from_secs(5))
                .expect("open segment by name")
                .region()
                .clone(),
        }
    }

    fn try_attach(&self, start: Start) -> Option<RingReader> {
        RingReader::attach(self.reader_region(), start)
    }

    fn attach(&self, start: Start) -> RingReader {
        self.try_attach(start).expect("a free client-table entry")
    }
}

fn geometry(slot_count: u32, client_capacity: u32) -> Geometry {
    Geometry {
        slot_count,
        client_capacity,
        ..Geometry::default()
    }
}

/// Record `n` of a stream: content varies with `n` (lengths, variants), so a
/// record read from the wrong slot or a torn one cannot compare equal.
fn event(n: u64) -> EventRecord {
    let k = (n % 5) as usize;
    EventRecord {
        code: -(n as i32 % 1000) - 1,
        range: (n % 8) as u8,
        flags: (n % 8) as u32,
        source: ProcRecord {
            nspace: format!("job-{}", n % 3),
            rank: n as u32,
        },
        source_seq: n as u32,
        timestamp_ns: n.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        custom_range: (0..k)
            .map(|r| ProcRecord {
                nspace: "c".repeat(r),
                rank: r as u32,
            })
            .collect(),
        affected: vec![ProcRecord {
            nspace: "aff".into(),
            rank: (n / 2) as u32,
        }],
        info: (0..k)
            .map(|i| InfoRecord {
                key: format!("key.{n}.{i}"),
                flags: i as u32,
                value: match i {
                    0 => ValueRecord::Uint64(n),
                    1 => ValueRecord::String("v".repeat((n % 40) as usize)),
                    2 => ValueRecord::Int32(-(n as i32)),
                    _ => ValueRecord::Uint32Array((0..(n % 7) as u32).collect()),
                },
            })
            .collect(),
        lane_entry: 0,
        lane_pos: 0,
    }
}

/// Expects a record with ring sequence `seq` and content `event(source)`,
/// checked both zero-copy (archived fields) and as an owned copy.
fn expect_event(r: &mut RingReader, seq: u64, source: u64) {
    match r.try_next() {
        Next::Record(x) => {
            assert_eq!(x.seq(), seq, "ring sequence");
            assert_eq!(
                x.source_seq.to_native() as u64,
                source,
                "archived source_seq"
            );
            assert_eq!(x.code.to_native(), event(source).code, "archived code");
            assert_eq!(
                x.source.nspace.as_str(),
                event(source).source.nspace,
                "archived nspace"
            );
            assert!(!x.is_empty(), "a record has at least its root");
            assert_eq!(x.to_owned(), event(source), "owned copy of record {seq}");
        }
        other => panic!("expected record {seq}, got {other:?}"),
    }
}

fn expect_empty(r: &mut RingReader) {
    match r.try_next() {
        Next::Empty => {}
        other => panic!("expected Empty, got {other:?}"),
    }
}

fn expect_lagged(r: &mut RingReader, want: u64) {
    match r.try_next() {
        Next::Lagged { missed } => assert_eq!(missed, want, "records reported missed"),
        other => panic!("expected Lagged {{ missed: {want} }}, got {other:?}"),
    }
}

fn publish_range(w: &mut RingWriter, from: u64, to: u64) {
    for n in from..to {
        assert_eq!(
            w.publish(&event(n)).expect("publish"),
            n,
            "publish returns the sequence"
        );
    }
}

/// Polls `cond` (a rule about shared state another thread moves) until it
/// holds; fails instead of hanging.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < HANG, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Exhaustive on purpose: a new `ValueRecord` variant fails to compile here
/// until the round-trip test covers it.
fn variant_index(v: &ValueRecord) -> usize {
    use ValueRecord::*;
    match v {
        Undef => 0,
        Bool(_) => 1,
        Byte(_) => 2,
        String(_) => 3,
        Size(_) => 4,
        Pid(_) => 5,
        Int(_) => 6,
        Int8(_) => 7,
        Int16(_) => 8,
        Int32(_) => 9,
        Int64(_) => 10,
        Uint(_) => 11,
        Uint8(_) => 12,
        Uint16(_) => 13,
        Uint32(_) => 14,
        Uint64(_) => 15,
        Float(_) => 16,
        Double(_) => 17,
        Timeval(_, _) => 18,
        Time(_) => 19,
        Status(_) => 20,
        Proc(_) => 21,
        Rank(_) => 22,
        DataRange(_) => 23,
        AllocDirective(_) => 24,
        ByteObject(_) => 25,
        InfoArray(_) => 26,
        ProcArray(_) => 27,
        StringArray(_) => 28,
        Uint32Array(_) => 29,
        Pointer(_) => 30,
    }
}
const VARIANTS: usize = 31;

fn info(key: &str, value: ValueRecord) -> InfoRecord {
    InfoRecord {
        key: key.into(),
        flags: 0,
        value,
    }
}

/// One value of every kind, with edge values, and an InfoArray nested three
/// levels deep that itself holds several kinds.
fn every_value() -> Vec<ValueRecord> {
    let proc_ = |s: &str, r| ProcRecord {
        nspace: s.into(),
        rank: r,
    };
    let nested = ValueRecord::InfoArray(vec![
        info("outer.a", ValueRecord::Int16(-2)),
        info(
            "outer.b",
            ValueRecord::InfoArray(vec![
                info(
                    "mid",
                    ValueRecord::StringArray(vec!["x".into(), String::new()]),
                ),
                info("mid.empty", ValueRecord::InfoArray(vec![])),
                info(
                    "mid.deep",
                    ValueRecord::InfoArray(vec![
                        info("leaf.proc", ValueRecord::Proc(proc_("deep", 9))),
                        info("leaf.bytes", ValueRecord::ByteObject(vec![0, 255, 7])),
                    ]),
                ),
            ]),
        ),
    ]);
    vec![
        ValueRecord::Undef,
        ValueRecord::Bool(true),
        ValueRecord::Bool(false),
        ValueRecord::Byte(0xAB),
        ValueRecord::String("héllo, wörld".into()),
        ValueRecord::String(String::new()),
        ValueRecord::Size(u64::MAX),
        ValueRecord::Pid(-1),
        ValueRecord::Int(i32::MIN),
        ValueRecord::Int8(i8::MIN),
        ValueRecord::Int16(i16::MIN),
        ValueRecord::Int32(i32::MAX),
        ValueRecord::Int64(i64::MIN),
        ValueRecord::Uint(u32::MAX),
        ValueRecord::Uint8(u8::MAX),
        ValueRecord::Uint16(u16::MAX),
        ValueRecord::Uint32(0x1234_5678),
        ValueRecord::Uint64(u64::MAX),
        ValueRecord::Float(-1.5e-7),
        ValueRecord::Double(f64::MAX),
        ValueRecord::Double(f64::MIN_POSITIVE),
        ValueRecord::Timeval(-3, 999_999),
        ValueRecord::Time(1_700_000_000),
        ValueRecord::Status(-25),
        ValueRecord::Proc(proc_("ns", u32::MAX)),
        ValueRecord::Rank(u32::MAX - 1),
        ValueRecord::DataRange(4),
        ValueRecord::AllocDirective(2),
        ValueRecord::ByteObject(vec![]),
        ValueRecord::ByteObject((0..=255).collect()),
        nested,
        ValueRecord::ProcArray(vec![proc_("a", 0), proc_("", 1)]),
        ValueRecord::StringArray(vec![]),
        ValueRecord::Uint32Array(vec![0, u32::MAX]),
        ValueRecord::Pointer(0xDEAD_BEEF_0000_0001),
    ]
}

fn record_with(info: Vec<InfoRecord>, n: u64) -> EventRecord {
    EventRecord {
        code: -147,
        range: 6,
        flags: flags::NON_DEFAULT | flags::DO_NOT_CACHE | flags::ENVIRONMENT,
        source: ProcRecord {
            nspace: "src".into(),
            rank: 3,
        },
        source_seq: n as u32,
        timestamp_ns: u64::MAX,
        custom_range: vec![ProcRecord {
            nspace: "custom".into(),
            rank: 0,
        }],
        affected: vec![ProcRecord {
            nspace: "affected".into(),
            rank: u32::MAX,
        }],
        info,
        lane_entry: 0,
        lane_pos: 0,
    }
}

// ---------------------------------------------------------------------------
// Order and content.

fn records_come_out_in_publish_order_with_their_content(b: Backend) {
    let ring = b.ring(geometry(8, 4));
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    let mut next = 0;
    // Batches below, at and around the ring size, across many wraparounds.
    for batch in [1, 3, 8, 7, 1, 8, 5, 2, 8, 8, 6]
        .into_iter()
        .cycle()
        .take(scaled(40, 12) as usize)
    {
        publish_range(&mut w, next, next + batch);
        for n in next..next + batch {
            expect_event(&mut r, n, n);
        }
        expect_empty(&mut r);
        next += batch;
    }
    assert_eq!(w.published(), next);
    assert_eq!(r.cursor(), next);
    assert_eq!(r.lost(), 0, "a reader that kept up lost nothing");
}

fn every_value_variant_round_trips_including_nested_info_arrays(b: Backend) {
    let ring = b.ring(Geometry {
        slot_count: 8,
        client_capacity: 2,
        slot_size: 8192,
        ..Geometry::default()
    });
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    let values = every_value();
    let mut seen = [false; VARIANTS];
    for v in &values {
        seen[variant_index(v)] = true;
        if let ValueRecord::InfoArray(inner) = v {
            for i in inner {
                seen[variant_index(&i.value)] = true;
            }
        }
    }
    assert!(
        seen.iter().all(|&s| s),
        "test data covers every ValueRecord variant"
    );

    // One record per value, then one record holding all of them.
    let mut recs: Vec<EventRecord> = values
        .iter()
        .enumerate()
        .map(|(i, v)| record_with(vec![info(&format!("k{i}"), v.clone())], i as u64))
        .collect();
    recs.push(record_with(
        values
            .iter()
            .enumerate()
            .map(|(i, v)| info(&format!("all.{i}"), v.clone()))
            .collect(),
        999,
    ));
    for (i, rec) in recs.iter().enumerate() {
        let seq = w.publish(rec).expect("publish");
        assert_eq!(seq, i as u64);
        match r.try_next() {
            Next::Record(x) => {
                assert_eq!(x.seq(), seq);
                assert_eq!(&x.to_owned(), rec, "record {i} round-trips");
            }
            other => panic!("record {i}: {other:?}"),
        }
    }
    expect_empty(&mut r);
}

// ---------------------------------------------------------------------------
// Broadcast and start positions.

fn every_attached_reader_sees_every_record(b: Backend) {
    let ring = b.ring(geometry(16, 4));
    let mut w = ring.writer();
    let mut readers: Vec<RingReader> = (0..4).map(|_| ring.attach(Start::Head)).collect();
    let mut clients: Vec<u32> = readers.iter().map(RingReader::client).collect();
    clients.sort_unstable();
    clients.dedup();
    assert_eq!(
        clients.len(),
        4,
        "each reader has its own client-table entry"
    );
    let total = scaled(200, 40);
    let mut next = 0;
    let mut batch_no = 0u64;
    while next < total {
        let batch = (next % 3 + 1).min(total - next);
        publish_range(&mut w, next, next + batch);
        // Readers interleave differently: reader i drains after every
        // (i+1)-th batch, so it is up to 4 × 3 = 12 < slot_count behind.
        for (i, r) in readers.iter_mut().enumerate() {
            if batch_no % (i as u64 + 1) == 0 {
                while r.cursor() < next + batch {
                    let c = r.cursor();
                    expect_event(r, c, c);
                }
            }
        }
        next += batch;
        batch_no += 1;
    }
    for r in readers.iter_mut() {
        while r.cursor() < total {
            let c = r.cursor();
            expect_event(r, c, c);
        }
    }
    for r in readers.iter_mut() {
        expect_empty(r);
        assert_eq!(r.cursor(), total);
        assert_eq!(r.lost(), 0);
    }
}

fn reader_attached_at_head_sees_only_later_records(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let mut w = ring.writer();
    publish_range(&mut w, 0, 5);
    let mut r = ring.attach(Start::Head);
    assert_eq!(r.cursor(), 5);
    expect_empty(&mut r);
    publish_range(&mut w, 5, 8);
    for n in 5..8 {
        expect_event(&mut r, n, n);
    }
    expect_empty(&mut r);
}

fn reader_attached_at_oldest_sees_the_last_slot_count_records(b: Backend) {
    let ring = b.ring(geometry(8, 3));
    let mut w = ring.writer();
    // Fewer than slot_count published: all of them.
    publish_range(&mut w, 0, 3);
    let mut early = ring.attach(Start::Oldest);
    for n in 0..3 {
        expect_event(&mut early, n, n);
    }
    expect_empty(&mut early);
    drop(early);
    // Several laps published: exactly the last slot_count, nothing older.
    publish_range(&mut w, 3, 29);
    let mut late = ring.attach(Start::Oldest);
    assert_eq!(late.cursor(), 29 - 8);
    for n in 21..29 {
        expect_event(&mut late, n, n);
    }
    expect_empty(&mut late);
    assert_eq!(
        late.lost(),
        0,
        "starting at the oldest record is not a loss"
    );
}

// ---------------------------------------------------------------------------
// Overwrite-oldest with exact lag.

fn lagging_reader_learns_exactly_how_many_records_it_missed_then_continues_at_the_oldest(
    b: Backend,
) {
    let n = 8;
    let ring = b.ring(geometry(n as u32, 2));
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    let mut head = 0;
    let mut lost = 0;
    // Per episode: records published, how many of them the reader reads,
    // then records published while it does not read.
    for (pre, read, more) in [
        (0, 0, n + 1),
        (5, 3, 5 * n + 3),
        (8, 8, 2 * n),
        (4, 1, 10 * n + 7),
        (0, 0, 3 * n),
        (2, 0, n - 2),
        (0, 0, 1),
    ] {
        publish_range(&mut w, head, head + pre);
        head += pre;
        let start = r.cursor();
        for s in start..start + read {
            expect_event(&mut r, s, s);
        }
        publish_range(&mut w, head, head + more);
        head += more;
        let cursor = r.cursor();
        let missed = (head - cursor).saturating_sub(n);
        if missed > 0 {
            expect_lagged(&mut r, missed);
            lost += missed;
        }
        assert_eq!(r.lost(), lost, "lost() accumulates every reported loss");
        assert_eq!(
            r.cursor(),
            head - (head - cursor).min(n),
            "continues at the oldest available record"
        );
        for s in r.cursor()..head {
            expect_event(&mut r, s, s);
        }
        expect_empty(&mut r);
    }
    assert!(lost > 0);
    let st = ring.region.state();
    let me = &st.clients[r.client() as usize];
    assert_eq!(me.lost, lost, "the client table shows the same loss");
}

fn reader_exactly_slot_count_behind_loses_nothing(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    for lap in 0..3 {
        publish_range(&mut w, lap * 8, lap * 8 + 8);
        for s in lap * 8..lap * 8 + 8 {
            expect_event(&mut r, s, s);
        }
    }
    expect_empty(&mut r);
    assert_eq!(r.lost(), 0);
}

// ---------------------------------------------------------------------------
// Records too large for a slot.

fn big_record(payload: usize) -> EventRecord {
    record_with(
        vec![info("payload", ValueRecord::String("x".repeat(payload)))],
        payload as u64,
    )
}

fn encoded_len(rec: &EventRecord) -> usize {
    rkyv::to_bytes::<rkyv::rancor::Error>(rec)
        .expect("encode")
        .len()
}

fn record_larger_than_a_slot_is_refused_and_nothing_is_published(b: Backend) {
    let ring = b.ring(Geometry {
        slot_count: 8,
        client_capacity: 2,
        slot_size: 256,
        ..Geometry::default()
    });
    let cap = 256 - 16; // slot_size minus the slot header
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    publish_range(&mut w, 0, 1);
    expect_event(&mut r, 0, 0);

    let big = big_record(1000);
    match w.publish(&big) {
        Err(WriteError::Publish(PublishError::TooLarge { len, max })) => {
            assert_eq!(max, cap, "the error names the slot capacity");
            assert_eq!(len, encoded_len(&big), "the error names the record size");
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    match w.publish_bytes(&vec![0u8; cap + 1]) {
        Err(PublishError::TooLarge { len, max }) => assert_eq!((len, max), (cap + 1, cap)),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert_eq!(w.published(), 1, "head unchanged");
    let st = ring.region.state();
    assert_eq!(st.head, 1, "head unchanged in the shared header");
    assert_eq!(st.refused, 2, "refusals are counted");
    expect_empty(&mut r);

    // The next record gets the next sequence: no hole where the refused was.
    assert_eq!(w.publish(&event(1)).expect("publish"), 1);
    expect_event(&mut r, 1, 1);
}

fn largest_record_that_fits_a_slot_is_accepted_and_the_next_size_up_is_refused(b: Backend) {
    let ring = b.ring(Geometry {
        slot_count: 8,
        client_capacity: 2,
        slot_size: 512,
        ..Geometry::default()
    });
    let cap = 512 - 16;
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    // Search down from just above where the payload alone would fill the slot.
    let overhead = encoded_len(&big_record(0));
    let fits = (0..(cap - overhead) + 32)
        .rev()
        .find(|&p| encoded_len(&big_record(p)) <= cap)
        .expect("some payload fits");
    let too_big = fits + 1;
    assert!(
        encoded_len(&big_record(too_big)) > cap,
        "rkyv padding: the next size up no longer fits"
    );
    let seq = w
        .publish(&big_record(fits))
        .expect("a record of at most the capacity fits");
    match r.try_next() {
        Next::Record(x) => {
            assert_eq!(x.seq(), seq);
            assert!(x.len() <= cap);
            assert_eq!(x.to_owned(), big_record(fits));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        w.publish(&big_record(too_big)),
        Err(WriteError::Publish(PublishError::TooLarge { .. }))
    ));
    expect_empty(&mut r);
}

fn bytes_that_fail_validation_are_reported_corrupt_and_skipped(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    assert_eq!(w.publish_bytes(&[0xFF; 64]).expect("bytes fit"), 0);
    assert_eq!(w.publish_bytes(&[]).expect("empty fits"), 1);
    assert_eq!(w.publish(&event(2)).expect("publish"), 2);
    for bad in [0, 1] {
        match r.try_next() {
            Next::Corrupt { seq, why } => {
                assert_eq!(seq, bad);
                assert!(!why.is_empty(), "the reason is reported");
            }
            other => panic!("garbage record {bad} must be Corrupt, got {other:?}"),
        }
    }
    expect_event(&mut r, 2, 2);
    expect_empty(&mut r);
}

// ---------------------------------------------------------------------------
// Pins.

fn pinned_record_is_never_overwritten_while_held(b: Backend) {
    let n = 8u64;
    let ring = b.ring(geometry(n as u32, 2));
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    publish_range(&mut w, 0, 3);
    expect_event(&mut r, 0, 0);
    let laps = scaled(10, 3);
    {
        let held = match r.try_next() {
            Next::Record(x) => x,
            other => panic!("{other:?}"),
        };
        assert_eq!(held.seq(), 1);
        let before = held.to_owned();
        let addr = held.record() as *const _ as usize;
        let len = held.len();
        // The writer laps the ring many times while the record is pinned.
        publish_range(&mut w, 3, 3 + laps * n);
        assert_eq!(held.seq(), 1);
        assert_eq!(
            held.record() as *const _ as usize,
            addr,
            "still the same bytes (zero-copy)"
        );
        assert_eq!(held.len(), len);
        assert_eq!(held.source_seq.to_native(), 1, "archived field unchanged");
        assert_eq!(
            held.to_owned(),
            before,
            "content unchanged after {laps} laps"
        );
        assert_eq!(before, event(1));
    }
    // Released: the reader is now 3 + laps*n - 2 behind.
    let head = 3 + laps * n;
    expect_lagged(&mut r, head - n - 2);
    for s in head - n..head {
        expect_event(&mut r, s, s);
    }
    expect_empty(&mut r);
}

fn writer_never_runs_out_of_slots_while_every_reader_holds_a_pin(b: Backend) {
    let n = 8u64;
    let readers = 4u64;
    let ring = b.ring(geometry(n as u32, readers as u32));
    let mut w = ring.writer();
    let mut rs: Vec<RingReader> = (0..readers).map(|_| ring.attach(Start::Head)).collect();
    publish_range(&mut w, 0, readers);
    // Reader i skips i records and pins record i.
    for (i, r) in rs.iter_mut().enumerate() {
        for s in 0..i as u64 {
            expect_event(r, s, s);
        }
    }
    let held: Vec<_> = rs
        .iter_mut()
        .map(|r| match r.try_next() {
            Next::Record(x) => x,
            other => panic!("{other:?}"),
        })
        .collect();
    let total = readers + scaled(10, 3) * n;
    for s in readers..total {
        match w.publish(&event(s)) {
            Ok(seq) => assert_eq!(seq, s),
            Err(e) => panic!("publish {s} with {readers} pinned slots: {e}"),
        }
    }
    for (i, x) in held.iter().enumerate() {
        assert_eq!(x.seq(), i as u64);
        assert_eq!(x.to_owned(), event(i as u64), "pinned record {i} intact");
    }
    drop(held);
    for (i, r) in rs.iter_mut().enumerate() {
        expect_lagged(r, total - n - (i as u64 + 1));
    }
}

// ---------------------------------------------------------------------------
// Client table and state.

fn client_table_entries_are_claimed_by_attach_and_freed_by_drop(b: Backend) {
    let ring = b.ring(geometry(8, 3));
    let pid = std::process::id();
    let a = ring.attach(Start::Head);
    let bb = ring.attach(Start::Head);
    let c = ring.attach(Start::Oldest);
    let mut got = [a.client(), bb.client(), c.client()];
    got.sort_unstable();
    assert_eq!(got, [0, 1, 2], "three distinct entries");
    assert!(
        ring.try_attach(Start::Head).is_none(),
        "attach returns None when the table is full"
    );
    let st = ring.region.state();
    assert_eq!(st.clients.len(), 3);
    for e in &st.clients {
        assert_eq!(e.state, client_state::ACTIVE);
        assert_eq!(e.pid, pid, "the entry records the reader's pid");
        assert_eq!(e.generation, 1);
        assert_eq!(e.held_slot, u32::MAX, "nothing pinned");
    }
    let freed = bb.client();
    drop(bb);
    assert_eq!(
        ring.region.client_state(freed),
        client_state::FREE,
        "drop frees the entry"
    );
    let again = ring
        .try_attach(Start::Head)
        .expect("a freed entry can be claimed again");
    assert_eq!(again.client(), freed);
    assert_eq!(
        ring.region.state().clients[freed as usize].generation,
        2,
        "reassignment bumps the generation"
    );
    assert!(ring.try_attach(Start::Head).is_none());
    drop((a, c, again));
    assert!(ring
        .region
        .state()
        .clients
        .iter()
        .all(|e| e.state == client_state::FREE));
}

fn region_state_reports_head_cursors_lost_counts_and_waiting_flags(b: Backend) {
    let ring = b.ring(geometry(8, 3));
    let mut w = ring.writer();
    let mut fast = ring.attach(Start::Head);
    let mut slow = ring.attach(Start::Head);
    publish_range(&mut w, 0, 5);
    for s in 0..5 {
        expect_event(&mut fast, s, s);
    }
    publish_range(&mut w, 5, 20);
    expect_lagged(&mut slow, 12);
    let (fast_c, slow_c) = (fast.client() as usize, slow.client() as usize);
    let held = match slow.try_next() {
        Next::Record(x) => x,
        other => panic!("{other:?}"),
    };
    let st = ring.region.state();
    assert_eq!(st.head, 20);
    assert_eq!(st.clients[fast_c].cursor, 5);
    assert_eq!(st.clients[fast_c].lost, 0);
    assert_eq!(
        st.clients[slow_c].cursor, 12,
        "the cursor moved to the oldest record"
    );
    assert_eq!(st.clients[slow_c].lost, 12);
    assert_ne!(
        st.clients[slow_c].held_slot,
        u32::MAX,
        "a held record shows its pinned slot"
    );
    assert!(
        st.sleeper_words[0] == 0 && st.clients.iter().all(|c| !c.waiting),
        "nobody asleep"
    );
    assert_eq!((st.wakes, st.refused), (0, 0));
    drop(held);
    assert_eq!(ring.region.state().clients[slow_c].cursor, 13);
    assert_eq!(ring.region.state().clients[slow_c].held_slot, u32::MAX);

    // A reader asleep in wait(None) shows as waiting, with its bit in the
    // ring's sleepers mask; both are cleared once a publish woke it.
    drop((fast, slow));
    let (client, rx, t) = spawn_sleeper(ring.attach(Start::Head), 1);
    eventually("the reader is asleep", || asleep(&ring, client));
    let st = ring.region.state();
    assert!(st.clients[client as usize].waiting);
    assert_eq!(st.sleeper_words[0], sleeper_bit(client));
    assert_eq!(st.clients[client as usize].cursor, 20);
    w.publish(&event(20)).expect("publish");
    rx.recv_timeout(HANG).expect("the sleeper woke");
    t.join().unwrap();
    let st = ring.region.state();
    assert_eq!(
        st.sleeper_words[0], 0,
        "the writer took the sleeper's bit when it woke it"
    );
    assert!(
        !st.clients[client as usize].waiting,
        "the reader cleared its waiting flag"
    );
    assert_eq!(st.wakes, 1);
    assert_eq!(st.clients[client as usize].cursor, 21);
}

// ---------------------------------------------------------------------------
// Wakeups.

/// Spawns a reader thread that reads on until its cursor passed `want`
/// records (read, reported lost, or passed over as for others), sleeping
/// in `wait(None)` whenever the ring is empty. Returns (records, missed,
/// sleeps).
fn spawn_sleeper(
    mut r: RingReader,
    want: u64,
) -> (
    u32,
    mpsc::Receiver<(u64, u64, u64)>,
    std::thread::JoinHandle<()>,
) {
    r.set_spin(SpinPolicy::never());
    let client = r.client();
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let (mut got, mut missed, mut sleeps) = (0, 0, 0);
        let end = r.cursor() + want;
        while r.cursor() < end {
            // (`Next` borrows the reader until the end of the match, so the
            // wait happens after it.)
            let empty = match r.try_next() {
                Next::Record(x) => {
                    assert_eq!(x.source_seq.to_native() as u64, x.seq());
                    got += 1;
                    false
                }
                Next::Lagged { missed: m } => {
                    missed += m;
                    false
                }
                Next::Empty => true,
                Next::Corrupt { seq, why } => panic!("corrupt {seq}: {why}"),
                Next::LaneCopy { lane, pos } => panic!("no lane read, yet lane {lane} at {pos}"),
            };
            if empty {
                sleeps += 1;
                r.wait(None);
            }
        }
        tx.send((got, missed, sleeps)).unwrap();
    });
    (client, rx, t)
}

fn asleep(ring: &Ring, client: u32) -> bool {
    let st = ring.region.state();
    st.clients[client as usize].waiting
        && st.sleeper_words[sleeper_word(client) as usize] & sleeper_bit(client) != 0
}

fn publishing_with_no_sleeper_issues_no_futex_wake(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let mut w = ring.writer();
    let mut r = ring.attach(Start::Head);
    let total = scaled(300, 40);
    for s in 0..total {
        w.publish(&event(s)).expect("publish");
        expect_event(&mut r, s, s);
        expect_empty(&mut r);
    }
    assert_eq!(w.wakes(), 0, "no FUTEX_WAKE without a sleeper");
    let st = ring.region.state();
    assert_eq!(st.wakes, 0);
    assert_eq!(st.sleeper_words[0], 0);
}

fn sleeping_reader_is_woken_by_the_next_publish(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let mut w = ring.writer();
    let (client, rx, t) = spawn_sleeper(ring.attach(Start::Head), 1);
    eventually("the reader is asleep", || asleep(&ring, client));
    assert_eq!(w.wakes(), 0);
    w.publish(&event(0)).expect("publish");
    let (got, missed, sleeps) = rx
        .recv_timeout(HANG)
        .expect("the sleeping reader woke and read the record");
    t.join().unwrap();
    assert_eq!((got, missed), (1, 0));
    assert_eq!(
        w.wakes(),
        1,
        "exactly one wake for one sleeper and one record"
    );
    assert!(sleeps >= 1);
    let st = ring.region.state();
    assert!(
        !st.clients[client as usize].waiting,
        "the waiting flag is cleared after waking"
    );
}

fn every_sleeping_reader_is_woken_by_one_publish_with_one_wake(b: Backend) {
    let ring = b.ring(geometry(8, 3));
    let mut w = ring.writer();
    let sleepers: Vec<_> = (0..3)
        .map(|_| spawn_sleeper(ring.attach(Start::Head), 1))
        .collect();
    for (client, _, _) in &sleepers {
        eventually("every reader is asleep", || asleep(&ring, *client));
    }
    w.publish(&event(0)).expect("publish");
    for (_, rx, t) in sleepers {
        let (got, _, _) = rx.recv_timeout(HANG).expect("every sleeper woke");
        t.join().unwrap();
        assert_eq!(got, 1);
    }
    assert_eq!(
        w.wakes(),
        1,
        "one FUTEX_WAKE, on the doorbell, wakes every sleeper"
    );
    assert_eq!(ring.region.state().sleeper_words[0], 0);
}

/// A record for some readers wakes those and leaves the others asleep, their
/// wake words untouched (the sender of a relayed event is not woken to skip
/// its own record).
fn only_the_sleepers_a_record_is_for_are_woken(b: Backend) {
    let ring = b.ring(geometry(8, 3));
    let mut w = ring.writer();
    let (skip, srx, st) = spawn_sleeper(ring.attach(Start::Head), 2);
    let (want, wrx, wt) = spawn_sleeper(ring.attach(Start::Head), 1);
    for c in [skip, want] {
        eventually("both readers are asleep", || asleep(&ring, c));
    }
    let skip_word = ring.region.state().clients[skip as usize].wake;
    w.publish_to(&event(0), Wake::AllBut(skip))
        .expect("publish");
    assert_eq!(wrx.recv_timeout(HANG).expect("the target woke").0, 1);
    wt.join().unwrap();
    assert_eq!(w.wakes(), 1, "one wake: the target's");
    assert!(asleep(&ring, skip), "the other reader sleeps on");
    assert_eq!(ring.region.state().clients[skip as usize].wake, skip_word);
    assert!(
        srx.recv_timeout(Duration::from_millis(50)).is_err(),
        "the reader left asleep did not run"
    );
    // A record for it wakes it, and it reads both.
    w.publish_to(&event(1), Wake::Only(&[skip]))
        .expect("publish");
    let (got, missed, _) = srx.recv_timeout(HANG).expect("woken by its record");
    st.join().unwrap();
    assert_eq!((got, missed), (2, 0));
    assert_eq!(w.wakes(), 2);
}

/// A sleeper lapped only by records for others is not woken for them and
/// loses nothing: 42 records for nobody into a ring of 8 wake nobody; a
/// record for every reader then wakes it, and it reads the 8 records still
/// in the ring, that one the last, passing over the 35 before them without
/// a loss (none was for it).
fn a_sleeper_lapped_by_records_for_others_is_not_woken_and_loses_nothing(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let mut w = ring.writer();
    let total = 42u64;
    let (client, rx, t) = spawn_sleeper(ring.attach(Start::Head), total + 1);
    eventually("the reader is asleep", || asleep(&ring, client));
    for s in 0..total {
        w.publish_to(&event(s), Wake::Only(&[])).expect("publish");
    }
    assert_eq!(w.wakes(), 0, "nobody woken for records for nobody");
    assert!(asleep(&ring, client), "the reader sleeps on");
    w.publish_to(&event(total), Wake::All).expect("publish");
    let (got, missed, _) = rx.recv_timeout(HANG).expect("reader finished");
    t.join().unwrap();
    assert_eq!((got, missed), (8, 0), "the ring's records read, none lost");
    assert_eq!(ring.region.state().clients[client as usize].lost, 0);
}

/// With a ring of 64, a record for a few takes no other sleeper's bit
/// except at a sweep, one every 8 publishes (a quarter of half a ring).
/// The sweep wakes a sleeper with half the ring unread only when one of
/// those records is marked for it: 100 records for one reader that does
/// not want their code leave it asleep at each publish, and the sweeps
/// find it once 32 records are unread, at most 40, so it reads them all
/// and loses nothing; another sleeper, none of whose records is for it,
/// is never woken (its bit stays set) and loses nothing either.
fn a_sleeper_with_a_record_for_it_unread_is_found_by_the_periodic_sweep(b: Backend) {
    let ring = b.ring(geometry(64, 2));
    let mut w = ring.writer();
    let total = 100u64;
    let r = ring.attach(Start::Head);
    ring.region.want_nothing(r.client());
    assert!(!ring.region.want(r.client(), interest_bit(CODE_A)));
    let (client, rx, t) = spawn_sleeper(r, total + 1);
    let (other, orx, ot) = spawn_sleeper(ring.attach(Start::Head), total + 1);
    for c in [client, other] {
        eventually("the readers are asleep", || asleep(&ring, c));
    }
    let mut wakes = 0;
    for s in 0..total {
        if w.wakes() > wakes {
            wakes = w.wakes();
            eventually("the woken reader is asleep again", || asleep(&ring, client));
        }
        w.publish_to(&event_coded(s, CODE_B), Wake::Only(&[client]))
            .expect("publish");
    }
    // Woken at 32 to 40 unread records: 100 records give 2 or 3 such
    // wakes (not one per record), all of them the reader's.
    let sweeps = w.wakes();
    assert!((2..=3).contains(&sweeps), "{sweeps} wakes");
    assert!(
        asleep(&ring, other),
        "the reader no record is for sleeps on"
    );
    // A record of the code it wants, for every reader, wakes both.
    eventually("the reader is asleep", || asleep(&ring, client));
    w.publish_to(&event_coded(total, CODE_A), Wake::All)
        .expect("publish");
    let (got, missed, _) = rx.recv_timeout(HANG).expect("reader finished");
    t.join().unwrap();
    assert_eq!((got, missed), (total + 1, 0), "nothing lost to lag");
    let (got, missed, _) = orx.recv_timeout(HANG).expect("the other finished");
    ot.join().unwrap();
    assert_eq!((got, missed), (64, 0), "passed over, none lost");
}

/// A reader the ring lapped is told of a loss exactly when a record that
/// may be for it was among those it missed (lossless or told), and passes
/// over the others. A record for it alone and a record for every reader
/// (whatever its code: the mark does not know what the reader wanted
/// then) may be for it; a record for other readers is not. Checked with a
/// reader that does not read until the test polls it, over a ring of 8:
/// (a) 20 records for nobody, then one for it: no loss, it reads the
/// ring's last 8; (b) one for it, then 20 for nobody: 13 lost; (c) one for
/// it, 20 for nobody, one for it: 14 lost (the first is in the gap though
/// the last is not); (d) one for every reader among 21 for nobody: 14 lost;
/// (e) 21 for every reader: 13 lost.
fn a_lapped_reader_is_told_of_a_loss_only_when_a_record_for_it_was_lost(b: Backend) {
    #[derive(Clone, Copy)]
    enum For {
        Nobody,
        It,
        All,
    }
    let run = |case: &str, plan: Vec<For>, lost: u64| {
        let ring = b.ring(geometry(8, 2));
        let mut w = ring.writer();
        let mut r = ring.attach(Start::Head);
        let c = r.client();
        for (s, f) in plan.into_iter().enumerate() {
            let wake = match f {
                For::Nobody => Wake::Only(&[]),
                For::It => Wake::Only(std::slice::from_ref(&c)),
                For::All => Wake::All,
            };
            w.publish_to(&event(s as u64), wake).expect("publish");
        }
        let (mut got, mut missed) = (0, 0);
        loop {
            match r.try_next() {
                Next::Record(_) => got += 1,
                Next::Lagged { missed: m } => missed += m,
                Next::Empty => break,
                other => panic!("case {case}: {other:?}"),
            }
        }
        assert_eq!((got, missed), (8, lost), "case {case}");
        assert_eq!(
            ring.region.state().clients[c as usize].lost,
            lost,
            "case {case}"
        );
    };
    let nobody = |n| std::iter::repeat_n(For::Nobody, n);
    run("a", nobody(20).chain([For::It]).collect(), 0);
    run("b", [For::It].into_iter().chain(nobody(20)).collect(), 13);
    let c: Vec<_> = [For::It]
        .into_iter()
        .chain(nobody(20))
        .chain([For::It])
        .collect();
    run("c", c, 14);
    run(
        "d",
        nobody(5).chain([For::All]).chain(nobody(16)).collect(),
        14,
    );
    run("e", std::iter::repeat_n(For::All, 21).collect(), 13);
}

/// Entries from 64 on have bits of their own (sleeper word 1 on): a record
/// for entry 65 wakes it, and only it, even when entry 63 sleeps too.
fn a_record_for_an_entry_beyond_64_wakes_that_entry_only(b: Backend) {
    let ring = b.ring(geometry(8, 70));
    let mut w = ring.writer();
    // Entries 0..=65 taken; 63 and 65 sleep, the others stay attached.
    let mut idle: Vec<_> = (0..66).map(|_| ring.attach(Start::Head)).collect();
    let far = idle.pop().expect("entry 65");
    let near = idle.pop().expect("entry 64");
    let other = idle.pop().expect("entry 63");
    assert_eq!((other.client(), near.client(), far.client()), (63, 64, 65));
    idle.push(near);
    let (c63, rx63, t63) = spawn_sleeper(other, 1);
    let (c65, rx65, t65) = spawn_sleeper(far, 1);
    for c in [c63, c65] {
        eventually("both readers are asleep", || asleep(&ring, c));
    }
    assert_ne!(ring.region.state().sleeper_words[1], 0, "entry 65's word");
    w.publish_to(&event(0), Wake::Only(&[c65]))
        .expect("publish");
    assert_eq!(rx65.recv_timeout(HANG).expect("entry 65 woke").0, 1);
    t65.join().unwrap();
    assert_eq!(w.wakes(), 1, "one wake: entry 65's");
    assert!(asleep(&ring, c63), "entry 63 sleeps on");
    w.publish_to(&event(1), Wake::All).expect("publish");
    assert_eq!(rx63.recv_timeout(HANG).expect("entry 63 woke").0, 1);
    t63.join().unwrap();
    drop(idle);
}

/// Record `n` with a code of its own interest bit: `event(n)` whose code
/// is `code`.
fn event_coded(n: u64, code: i32) -> EventRecord {
    EventRecord { code, ..event(n) }
}

/// Two codes with different interest bits.
const CODE_A: i32 = -1;
const CODE_B: i32 = -2;

/// A record every reader sees but one sleeper has no handler for wakes
/// only the sleepers that want its code, each on its own wake word (not
/// the doorbell, which would wake them all); the one left asleep keeps its
/// bit and is woken by the next record of a code it wants, reading both.
fn a_sleeper_is_woken_only_for_the_codes_it_wants(b: Backend) {
    assert_ne!(interest_bit(CODE_A), interest_bit(CODE_B));
    let ring = b.ring(geometry(8, 3));
    let mut w = ring.writer();
    let (picky, prx, pt) = spawn_sleeper(ring.attach(Start::Head), 2);
    let (any, arx, at) = spawn_sleeper(ring.attach(Start::Head), 1);
    ring.region.want_nothing(picky);
    assert!(
        !ring.region.want(picky, interest_bit(CODE_A)),
        "nothing published yet: nothing to look at"
    );
    for c in [picky, any] {
        eventually("both readers are asleep", || asleep(&ring, c));
    }
    let picky_word = ring.region.state().clients[picky as usize].wake;
    w.publish_to(&event_coded(0, CODE_B), Wake::All)
        .expect("publish");
    assert_eq!(arx.recv_timeout(HANG).expect("the other reader woke").0, 1);
    at.join().unwrap();
    assert_eq!(w.wakes(), 1, "one wake: the reader wanting any code");
    assert!(
        asleep(&ring, picky),
        "the reader without a handler sleeps on"
    );
    assert_eq!(ring.region.state().clients[picky as usize].wake, picky_word);
    assert!(
        prx.recv_timeout(Duration::from_millis(50)).is_err(),
        "the reader left asleep did not run"
    );
    w.publish_to(&event_coded(1, CODE_A), Wake::All)
        .expect("publish");
    let (got, missed, _) = prx.recv_timeout(HANG).expect("woken by its code");
    pt.join().unwrap();
    assert_eq!((got, missed), (2, 0));
    assert_eq!(w.wakes(), 2);
}

/// A sleeper that wants no code at all is still woken once half the ring
/// is unread, by records for every reader too, and loses nothing.
fn a_sleeper_wanting_no_code_is_woken_at_half_a_ring_and_loses_nothing(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let mut w = ring.writer();
    let total = 42u64;
    let r = ring.attach(Start::Head);
    ring.region.want_nothing(r.client());
    let (client, rx, t) = spawn_sleeper(r, total + 1);
    for s in 0..total {
        if s % 4 == 0 {
            eventually("the reader is asleep", || asleep(&ring, client));
        }
        w.publish_to(&event_coded(s, CODE_B), Wake::All)
            .expect("publish");
    }
    assert_eq!(w.wakes(), total / 4, "one wake per 4 unread records");
    // A registration for the code: the two records left unread make
    // `want` say so; a wake of the reader (the client's poke) reads them.
    eventually("the reader is asleep", || asleep(&ring, client));
    assert!(ring.region.want(client, interest_bit(CODE_B)));
    assert!(
        !ring.region.want(client, interest_bit(CODE_B)),
        "a code already wanted: nothing new to look at"
    );
    w.publish_to(&event_coded(total, CODE_B), Wake::All)
        .expect("publish");
    let (got, missed, _) = rx.recv_timeout(HANG).expect("reader finished");
    t.join().unwrap();
    assert_eq!((got, missed), (total + 1, 0), "nothing lost to lag");
}

fn burst_of_publishes_issues_at_most_one_wake_per_sleep(b: Backend) {
    let ring = b.ring(geometry(64, 2));
    let mut w = ring.writer();
    let bursts = scaled(40, 4);
    let per_burst = 50;
    let total = bursts * per_burst;
    let (client, rx, t) = spawn_sleeper(ring.attach(Start::Head), total);
    let mut next = 0;
    for _ in 0..bursts {
        // Let the reader drain and go to sleep, then publish a burst.
        eventually("the reader is asleep", || asleep(&ring, client));
        publish_range(&mut w, next, next + per_burst);
        next += per_burst;
    }
    let (got, missed, sleeps) = rx.recv_timeout(HANG).expect("reader finished");
    t.join().unwrap();
    assert_eq!(got + missed, total);
    let wakes = w.wakes();
    assert!(
        wakes >= bursts,
        "each burst found the reader asleep: {wakes} wakes for {bursts} bursts"
    );
    assert!(
        wakes <= sleeps,
        "{wakes} wakes for {sleeps} sleeps: at most one wake per sleep"
    );
}

fn wait_with_a_timeout_returns_when_nothing_is_published(b: Backend) {
    let ring = b.ring(geometry(8, 2));
    let w = ring.writer();
    let mut r = ring.attach(Start::Head);
    r.set_spin(SpinPolicy::never());
    let client = r.client();
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        r.wait(Some(Duration::from_millis(20)));
        let empty = matches!(r.try_next(), Next::Empty);
        tx.send(empty).unwrap();
    });
    let empty = rx.recv_timeout(HANG).expect("wait(Some(timeout)) returned");
    t.join().unwrap();
    assert!(empty, "nothing was published");
    assert!(
        !ring.region.state().clients[client as usize].waiting,
        "the waiting flag is cleared after a timeout"
    );
    assert_eq!(w.wakes(), 0);
}

macro_rules! both_backends {
    ($($rule:ident),* $(,)?) => {
        /// The in-process backend (heap memory).
        mod heap {
            $( #[test] fn $rule() { super::$rule(super::Backend::Heap) } )*
        }
        /// The shared-memory backend (a segment, one mapping per reader).
        mod shm {
            $( #[test] fn $rule() { super::$rule(super::Backend::Shm) } )*
        }
    };
}

both_backends!(
    records_come_out_in_publish_order_with_their_content,
    every_value_variant_round_trips_including_nested_info_arrays,
    every_attached_reader_sees_every_record,
    reader_attached_at_head_sees_only_later_records,
    reader_attached_at_oldest_sees_the_last_slot_count_records,
    lagging_reader_learns_exactly_how_many_records_it_missed_then_continues_at_the_oldest,
    reader_exactly_slot_count_behind_loses_nothing,
    record_larger_than_a_slot_is_refused_and_nothing_is_published,
    largest_record_that_fits_a_slot_is_accepted_and_the_next_size_up_is_refused,
    bytes_that_fail_validation_are_reported_corrupt_and_skipped,
    pinned_record_is_never_overwritten_while_held,
    writer_never_runs_out_of_slots_while_every_reader_holds_a_pin,
    client_table_entries_are_claimed_by_attach_and_freed_by_drop,
    region_state_reports_head_cursors_lost_counts_and_waiting_flags,
    publishing_with_no_sleeper_issues_no_futex_wake,
    sleeping_reader_is_woken_by_the_next_publish,
    every_sleeping_reader_is_woken_by_one_publish_with_one_wake,
    only_the_sleepers_a_record_is_for_are_woken,
    a_sleeper_lapped_by_records_for_others_is_not_woken_and_loses_nothing,
    a_sleeper_with_a_record_for_it_unread_is_found_by_the_periodic_sweep,
    a_lapped_reader_is_told_of_a_loss_only_when_a_record_for_it_was_lost,
    a_record_for_an_entry_beyond_64_wakes_that_entry_only,
    a_sleeper_is_woken_only_for_the_codes_it_wants,
    a_sleeper_wanting_no_code_is_woken_at_half_a_ring_and_loses_nothing,
    burst_of_publishes_issues_at_most_one_wake_per_sleep,
    wait_with_a_timeout_returns_when_nothing_is_published,
);
