//! The event records the ring benches publish, their encoding with a
//! patchable timestamp, and the cost of reading one back.

use super::TS_SENTINEL;
use fastpmix::internals::ring::{ArchivedEventRecord, EventRecord};
use rkyv::util::AlignedVec;
use shm_layout::record::{InfoRecord, ProcRecord, ValueRecord};
use std::time::Instant;

const NSPACE: &str = "prterun-node017-41522@1";

fn info(key: &str, value: ValueRecord) -> InfoRecord {
    InfoRecord {
        key: key.into(),
        flags: 0,
        value,
    }
}

/// A typical event: a source, one affected proc and 8 infos with short
/// keys and scalar or short string values.
pub fn typical(seq: u64) -> EventRecord {
    EventRecord {
        code: -146,
        range: 3,
        flags: 0,
        source: ProcRecord {
            nspace: NSPACE.into(),
            rank: 0,
        },
        source_seq: seq as u32,
        timestamp_ns: 0,
        custom_range: vec![],
        affected: vec![ProcRecord {
            nspace: NSPACE.into(),
            rank: 17,
        }],
        info: vec![
            info("pmix.evname", ValueRecord::String("proc-aborted".into())),
            info("pmix.hname", ValueRecord::String("node017".into())),
            info("pmix.rank", ValueRecord::Rank(17)),
            info("pmix.job.status", ValueRecord::Status(-146)),
            info("pmix.exit.code", ValueRecord::Int(134)),
            info("pmix.evtime", ValueRecord::Time(1_717_171_717)),
            info("pmix.job.size", ValueRecord::Uint32(256)),
            info("pmix.evterm", ValueRecord::Bool(false)),
        ],
        lane_entry: 0,
        lane_pos: 0,
    }
}

/// A small event: code, source and sequence, no infos.
pub fn small(seq: u64) -> EventRecord {
    EventRecord {
        code: -331,
        range: 1,
        flags: 0,
        source: ProcRecord {
            nspace: "job".into(),
            rank: 0,
        },
        source_seq: seq as u32,
        timestamp_ns: 0,
        custom_range: vec![],
        affected: vec![],
        info: vec![],
        lane_entry: 0,
        lane_pos: 0,
    }
}

/// Archives a record.
pub fn encode(rec: &EventRecord) -> AlignedVec {
    rkyv::to_bytes::<rkyv::rancor::Error>(rec).expect("bench record encodes")
}

/// A pre-encoded record whose timestamp can be patched per send.
pub struct Encoded {
    /// The archived bytes.
    pub bytes: AlignedVec,
    ts_at: usize,
}

impl Encoded {
    /// Encodes `rec` (its timestamp is replaced) with extra `flags`.
    pub fn new(rec: &EventRecord, flags: u32) -> Encoded {
        let mut r = rec.clone();
        r.timestamp_ns = TS_SENTINEL;
        r.flags |= flags;
        let bytes = encode(&r);
        let pat = TS_SENTINEL.to_le_bytes();
        let hits: Vec<usize> = bytes
            .windows(8)
            .enumerate()
            .filter(|(_, w)| *w == pat)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(hits.len(), 1, "timestamp sentinel found exactly once");
        Encoded {
            bytes,
            ts_at: hits[0],
        }
    }

    /// Sets the archived `timestamp_ns`.
    pub fn stamp(&mut self, ns: u64) {
        self.bytes[self.ts_at..self.ts_at + 8].copy_from_slice(&ns.to_le_bytes());
    }
}

/// Mean ns of one `rkyv::access` (validated) over `batch` calls.
pub fn access_validated(bytes: &[u8], batch: u64) -> f64 {
    let t = Instant::now();
    for _ in 0..batch {
        let r =
            rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(std::hint::black_box(bytes))
                .expect("valid record");
        std::hint::black_box(r);
    }
    t.elapsed().as_nanos() as f64 / batch as f64
}

/// Mean ns of one `rkyv::access_unchecked` over `batch` calls.
///
/// `bytes` must be a record archived by [`encode`] (this build's schema).
pub fn access_unchecked(bytes: &[u8], batch: u64) -> f64 {
    assert!(rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(bytes).is_ok());
    let t = Instant::now();
    for _ in 0..batch {
        // SAFETY: `bytes` was produced by `rkyv::to_bytes` for
        // `EventRecord` in this process (aligned buffer) and validated
        // just above; it is not modified meanwhile.
        let r =
            unsafe { rkyv::access_unchecked::<ArchivedEventRecord>(std::hint::black_box(bytes)) };
        std::hint::black_box(r);
    }
    t.elapsed().as_nanos() as f64 / batch as f64
}
