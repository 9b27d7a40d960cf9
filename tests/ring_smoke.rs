//! First end-to-end checks of the ring API on both backends.

use fastpmix::internals::ring::{
    EventRecord, Next, Region, RingReader, RingWriter, Segment, Start,
};
use shm_layout::record::{InfoRecord, ProcRecord, ValueRecord};
use shm_layout::Geometry;
use std::time::Duration;

fn rec(n: u64) -> EventRecord {
    EventRecord {
        code: -331,
        range: 3,
        flags: 0,
        source: ProcRecord {
            nspace: "job".into(),
            rank: 1,
        },
        source_seq: n as u32,
        timestamp_ns: 0,
        custom_range: vec![],
        affected: vec![],
        info: vec![InfoRecord {
            key: "k".into(),
            flags: 0,
            value: ValueRecord::Uint64(n),
        }],
        lane_entry: 0,
        lane_pos: 0,
    }
}

fn roundtrip(region: Region) {
    let mut w = RingWriter::new(region.clone());
    let mut r = RingReader::attach(region, Start::Head).unwrap();
    for n in 0..1000 {
        w.publish(&rec(n)).unwrap();
        match r.try_next() {
            Next::Record(x) => {
                assert_eq!(x.seq(), n);
                assert_eq!(x.source_seq.to_native() as u64, n);
                assert_eq!(x.to_owned(), rec(n));
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(r.try_next(), Next::Empty));
}

#[test]
fn heap_ring_round_trips_records_in_order() {
    roundtrip(
        Region::heap(
            Geometry {
                slot_count: 8,
                ..Geometry::default()
            },
            0,
        )
        .unwrap(),
    );
}

#[test]
fn shm_ring_round_trips_records_in_order() {
    let seg = Segment::create(Geometry {
        slot_count: 8,
        ..Geometry::default()
    })
    .unwrap();
    let reader_side = Segment::open(seg.name(), Duration::from_secs(1)).unwrap();
    let mut w = RingWriter::new(seg.region().clone());
    let mut r = RingReader::attach(reader_side.region().clone(), Start::Head).unwrap();
    w.publish(&rec(7)).unwrap();
    match r.try_next() {
        Next::Record(x) => assert_eq!(x.to_owned(), rec(7)),
        other => panic!("{other:?}"),
    }
    drop((w, r));
    let seg2 = Segment::create(Geometry {
        slot_count: 8,
        ..Geometry::default()
    })
    .unwrap();
    roundtrip(seg2.region().clone());
}

#[test]
fn lagging_reader_learns_exactly_how_many_records_it_missed() {
    let region = Region::heap(
        Geometry {
            slot_count: 8,
            ..Geometry::default()
        },
        0,
    )
    .unwrap();
    let mut w = RingWriter::new(region.clone());
    let mut r = RingReader::attach(region, Start::Head).unwrap();
    for n in 0..20 {
        w.publish(&rec(n)).unwrap();
    }
    match r.try_next() {
        Next::Lagged { missed } => assert_eq!(missed, 12),
        other => panic!("{other:?}"),
    }
    for n in 12..20 {
        match r.try_next() {
            Next::Record(x) => assert_eq!(x.source_seq.to_native() as u64, n),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(r.lost(), 12);
}

#[test]
fn submission_queue_carries_client_records_to_the_server_in_order() {
    use fastpmix::internals::ring::{Collected, Collector, Submitter};
    let seg = Segment::create(Geometry {
        submit_depth: 2,
        ..Geometry::default()
    })
    .unwrap();
    let client_side = Segment::open(seg.name(), Duration::from_secs(1)).unwrap();
    let mut collector = Collector::new(seg.region().clone());
    let producer = std::thread::spawn(move || {
        let mut s = Submitter::new(client_side.region().clone(), 3);
        for n in 0..100 {
            // depth 2: the producer waits for the server most of the time.
            s.submit(&rec(n), Some(Duration::from_secs(10))).unwrap();
        }
    });
    let mut got = Vec::new();
    while got.len() < 100 {
        match collector.pop(3) {
            Collected::Record { client, rec } => {
                assert_eq!(client, 3);
                got.push(rec.source_seq.to_native() as u64);
            }
            Collected::Empty => {
                collector.wait([3u32].into_iter(), Some(Duration::from_millis(100)))
            }
            Collected::Corrupt { why, .. } => panic!("{why}"),
        }
    }
    producer.join().unwrap();
    assert_eq!(got, (0..100).collect::<Vec<u64>>());
}

#[test]
fn a_reused_client_entry_starts_clean() {
    let region = Region::heap(
        Geometry {
            slot_count: 8,
            client_capacity: 1,
            ..Geometry::default()
        },
        0,
    )
    .unwrap();
    let mut w = RingWriter::new(region.clone());
    let mut r = RingReader::attach(region.clone(), Start::Head).unwrap();
    for n in 0..20 {
        w.publish(&rec(n)).unwrap();
    }
    assert!(matches!(r.try_next(), Next::Lagged { missed: 12 }));
    assert_eq!(r.lost(), 12);
    let entry = r.client();
    drop(r);
    let r2 = RingReader::attach(region.clone(), Start::Head).unwrap();
    assert_eq!(r2.client(), entry, "the single entry is reused");
    assert_eq!(r2.lost(), 0, "lost count of the previous owner leaked");
    assert_eq!(region.cursor_of(entry), 20);
    let st = &region.state().clients[entry as usize];
    assert_eq!(
        (st.cursor, st.lost, st.heartbeat, st.held_slot),
        (20, 0, 0, u32::MAX)
    );
}
