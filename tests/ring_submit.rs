//! Submission queues (client → server): error paths on both backends, and
//! corrupted counters and bytes. The happy path is in ring_smoke.rs.

use fastpmix::internals::ring::{
    Collected, Collector, EventRecord, Region, Segment, SpinPolicy, SubmitError, Submitter,
};
use shm_layout::record::ProcRecord;
use shm_layout::{Geometry, SubmitHeader};
use std::mem::offset_of;
use std::os::unix::fs::FileExt;
use std::time::Duration;

fn rec(n: u64, pad: usize) -> EventRecord {
    EventRecord {
        code: 7,
        range: 3,
        flags: 0,
        source: ProcRecord {
            nspace: "x".repeat(pad.max(1)),
            rank: 0,
        },
        source_seq: n as u32,
        timestamp_ns: 0,
        custom_range: vec![],
        affected: vec![],
        info: vec![],
        lane_entry: 0,
        lane_pos: 0,
    }
}

fn geometry() -> Geometry {
    Geometry {
        submit_depth: 2,
        client_capacity: 2,
        ..Geometry::default()
    }
}

fn drain(c: &mut Collector, client: u32) -> Vec<u64> {
    let mut v = Vec::new();
    while let Collected::Record { rec, .. } = c.pop(client) {
        v.push(rec.source_seq.to_native() as u64);
    }
    v
}

fn full_queue_times_out_then_nothing_is_lost(region: Region) {
    let mut s = Submitter::new(region.clone(), 1);
    let mut c = Collector::new(region);
    s.submit(&rec(0, 1), Some(Duration::ZERO)).unwrap();
    s.submit(&rec(1, 1), Some(Duration::ZERO)).unwrap();
    // Full: the producer waits for the timeout, then says so.
    assert_eq!(
        s.submit(&rec(2, 1), Some(Duration::from_millis(20))),
        Err(SubmitError::Full)
    );
    assert_eq!(drain(&mut c, 1), [0, 1]);
    s.submit(&rec(2, 1), Some(Duration::ZERO)).unwrap();
    assert_eq!(drain(&mut c, 1), [2]);
    // Other queues are independent.
    assert!(matches!(c.pop(0), Collected::Empty));
}

fn record_larger_than_a_slot_is_refused(region: Region) {
    let mut s = Submitter::new(region.clone(), 0);
    let mut c = Collector::new(region);
    let err = s.submit(&rec(0, 4000), Some(Duration::ZERO)).unwrap_err();
    assert!(
        matches!(err, SubmitError::TooLarge { max: 1008, .. }),
        "{err:?}"
    );
    assert!(matches!(c.pop(0), Collected::Empty), "nothing was queued");
}

#[test]
fn heap_full_submission_queue_times_out_and_loses_nothing() {
    full_queue_times_out_then_nothing_is_lost(Region::heap(geometry(), 0).unwrap());
}

#[test]
fn shm_full_submission_queue_times_out_and_loses_nothing() {
    let seg = Segment::create(geometry()).unwrap();
    full_queue_times_out_then_nothing_is_lost(seg.region().clone());
}

#[test]
fn heap_submission_larger_than_a_slot_is_refused() {
    record_larger_than_a_slot_is_refused(Region::heap(geometry(), 0).unwrap());
}

#[test]
fn shm_submission_larger_than_a_slot_is_refused() {
    let seg = Segment::create(geometry()).unwrap();
    record_larger_than_a_slot_is_refused(seg.region().clone());
}

/// Writes into the segment through its /dev/shm file, as a misbehaving
/// client process could.
fn scribble(seg: &Segment, off: u64, bytes: &[u8]) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm{}", seg.name()))
        .unwrap();
    f.write_at(bytes, off).unwrap();
}

#[test]
fn corrupted_producer_counter_is_reported_and_the_queue_resynchronises() {
    let seg = Segment::create(geometry()).unwrap();
    let o = seg.region().offsets();
    let mut s = Submitter::new(seg.region().clone(), 1);
    let mut c = Collector::new(seg.region().clone());
    s.submit(&rec(0, 1), Some(Duration::ZERO)).unwrap();
    let produced = o.submit_header(1) + offset_of!(SubmitHeader, produced) as u64;
    scribble(&seg, produced, &1000u64.to_le_bytes());
    assert!(matches!(c.pop(1), Collected::Corrupt { client: 1, .. }));
    // Resynchronised to the producer's counter: nothing left, no hang.
    assert!(matches!(c.pop(1), Collected::Empty));
}

#[test]
fn submitted_bytes_that_are_not_a_record_are_reported_and_skipped() {
    let seg = Segment::create(geometry()).unwrap();
    let o = seg.region().offsets();
    let mut s = Submitter::new(seg.region().clone(), 0);
    let mut c = Collector::new(seg.region().clone());
    s.submit_bytes(&[0xAB; 64], Some(Duration::ZERO)).unwrap();
    s.submit(&rec(1, 1), Some(Duration::ZERO)).unwrap();
    match c.pop(0) {
        Collected::Corrupt { client: 0, why } => assert!(why.contains("validation"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(drain(&mut c, 0), [1], "the next record is still delivered");
    // A length word beyond the slot is reported too.
    s.submit(&rec(2, 1), Some(Duration::ZERO)).unwrap();
    let slot0 = o.submit_slot(0, 0, geometry().slot_size);
    let len_off = slot0 + 8; // SlotHeader.len
    scribble(&seg, len_off, &u32::MAX.to_le_bytes());
    assert!(matches!(c.pop(0), Collected::Corrupt { .. }));
}

#[test]
fn readers_spin_only_with_a_spare_core() {
    let b = Duration::from_micros(20);
    assert_eq!(
        SpinPolicy::decide(b, 1, Some(0)),
        Duration::ZERO,
        "one core: never spin"
    );
    assert_eq!(
        SpinPolicy::decide(b, 2, Some(2)),
        b,
        "as many runnable as cores"
    );
    assert_eq!(
        SpinPolicy::decide(b, 2, Some(3)),
        Duration::ZERO,
        "oversubscribed"
    );
    assert_eq!(SpinPolicy::decide(b, 2, None), b, "unknown load");
    assert_eq!(SpinPolicy::never().budget(), Duration::ZERO);
}

/// Readers woken together share the CPUs: a reader may spin only while
/// every other reader of its ring is asleep (announced with its sleeper
/// bit), so that in a fan-out the last one to finish spins, not all.
#[test]
fn a_reader_sees_whether_another_reader_of_its_ring_is_awake() {
    use fastpmix::internals::ring::{RingReader, RingWriter, Start};
    let g = Geometry {
        client_capacity: 4,
        ..Geometry::default()
    };
    let region = Region::heap(g, 0).unwrap();
    let mut alone = RingReader::attach(region.clone(), Start::Head).unwrap();
    assert!(!alone.peers_awake(), "no other reader");
    drop(alone);

    let mut w = RingWriter::new(region.clone());
    let mut a = RingReader::attach(region.clone(), Start::Head).unwrap();
    let b = RingReader::attach(region.clone(), Start::Head).unwrap();
    assert!(a.peers_awake(), "b attached and not asleep");
    assert!(b.prepare_sleep().is_some(), "nothing published yet");
    assert!(!a.peers_awake(), "b announced its sleep");
    // A publish for every reader wakes b: awake until it sleeps again.
    w.publish(&rec(1, 1)).unwrap();
    b.end_sleep();
    assert!(a.peers_awake(), "b was woken");
}

/// What the server relays as it came: the popped record's own bytes with
/// the sequence number, timestamp and `RELAYED` flag stamped in, every
/// other field untouched; nothing to relay before a record was popped or
/// after a pop that found none.
#[test]
fn relay_last_stamps_the_popped_record_in_its_own_bytes() {
    use shm_layout::record::{flags, ArchivedEventRecord};
    let seg = Segment::create(geometry()).unwrap();
    let mut s = Submitter::new(seg.region().clone(), 0);
    let mut c = Collector::new(seg.region().clone());
    assert!(c.relay_last(1, 2).is_none(), "nothing popped yet");
    let mut sent = rec(5, 3);
    sent.flags = flags::NON_DEFAULT;
    s.submit(&sent, Some(Duration::ZERO)).unwrap();
    assert!(matches!(c.pop(0), Collected::Record { client: 0, .. }));
    assert_eq!(c.last().map(|r| r.source_seq.to_native()), Some(5));
    let bytes = c
        .relay_last(77, 1_700_000_000_000_000_000)
        .unwrap()
        .to_vec();
    let mut aligned = rkyv::util::AlignedVec::<16>::new();
    aligned.extend_from_slice(&bytes);
    let got = rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(&aligned).unwrap();
    let got: EventRecord = rkyv::deserialize::<_, rkyv::rancor::Error>(got).unwrap();
    let mut want = sent.clone();
    want.source_seq = 77;
    want.timestamp_ns = 1_700_000_000_000_000_000;
    want.flags |= flags::RELAYED;
    assert_eq!(got, want);
    assert!(matches!(c.pop(0), Collected::Empty));
    assert!(c.relay_last(1, 2).is_none(), "the last pop found nothing");
    assert!(c.last().is_none());
}
