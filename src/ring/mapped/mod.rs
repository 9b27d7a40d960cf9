//! The mapped ring: everything that touches real shared memory (the
//! `shm_open` segment, the validated region, the writer, the readers and
//! both ends of the submission queues). Loom builds none of it: its models
//! (`src/ring/model.rs`) run the protocol (`src/ring/protocol.rs`) and the
//! queues (`src/ring/submit.rs`) over loom cells instead, so this module is
//! the one place where the loom build and the real build differ.
//!
//! - `region.rs`: [`Region`], the validated memory (mapped, or on the heap
//!   for the in-process backend); `region/memory.rs`: the memory traits
//!   over it.
//! - `segment.rs`: [`Segment`], the `shm_open` lifecycle.
//! - this file: [`RingWriter`], the single writer.
//! - `reader.rs`: [`RingReader`] and the [`RecordRef`] it lends.
//! - `queues.rs`: [`Submitter`] and [`Collector`], the client and server ends
//!   of the submission queues.

mod queues;
mod reader;
mod region;
mod segment;

pub use queues::{Collected, Collector, Submitter};
pub use reader::{Next, RecordRef, RingReader, Start};
pub use region::{ClientState, OpenError, Region, RingState};
pub(crate) use segment::{
    alive_lock_held, create_object, hold_alive_lock, map as map_shared, shm_open, shm_unlink,
    too_young_to_be_stale,
};
pub use segment::{Segment, SegmentError, NAME_PREFIX};

use super::protocol::{PublishError, RingMemory, Wake, WriterCore};
use shm_layout::interest_bit;
use shm_layout::record::EventRecord;

/// Why a record could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// rkyv could not serialise it.
    Encode(rkyv::rancor::Error),
    /// The ring refused it.
    Publish(PublishError),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Encode(e) => write!(f, "cannot encode event record: {e}"),
            WriteError::Publish(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WriteError {}

/// The ring's only writer. Create it once, right after creating the region.
pub struct RingWriter {
    region: Region,
    core: WriterCore,
    scratch: rkyv::util::AlignedVec,
}

impl RingWriter {
    /// Takes the writer role of a freshly created region.
    pub fn new(region: Region) -> RingWriter {
        let core = WriterCore::new(&region);
        RingWriter {
            region,
            core,
            scratch: rkyv::util::AlignedVec::with_capacity(1024),
        }
    }

    /// Publishes an already encoded record; returns its sequence.
    pub fn publish_bytes(&mut self, bytes: &[u8]) -> Result<u64, PublishError> {
        self.core.publish(&self.region, bytes)
    }

    /// Publishes an already encoded record, waking only the sleeping
    /// readers `wake` names that want `topic`, the
    /// [`interest_bit`](shm_layout::interest_bit) of its code (every reader
    /// still sees it; see [`Wake`]).
    pub fn publish_bytes_to(
        &mut self,
        bytes: &[u8],
        wake: Wake<'_>,
        topic: u64,
    ) -> Result<u64, PublishError> {
        self.core.publish_to(&self.region, bytes, wake, topic)
    }

    /// Encodes and publishes an event record (the encode buffer is reused:
    /// no allocation once it has grown to the largest record).
    pub fn publish(&mut self, rec: &EventRecord) -> Result<u64, WriteError> {
        self.publish_to(rec, Wake::All)
    }

    /// [`RingWriter::publish`], waking only the sleeping readers `wake`
    /// names that want the record's code.
    pub fn publish_to(&mut self, rec: &EventRecord, wake: Wake<'_>) -> Result<u64, WriteError> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let buf = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(rec, buf)
            .map_err(WriteError::Encode)?;
        let r = self
            .core
            .publish_to(&self.region, &buf, wake, interest_bit(rec.code))
            .map_err(WriteError::Publish);
        self.scratch = buf;
        r
    }

    /// The region written to.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Records published so far.
    pub fn published(&self) -> u64 {
        self.region.head().load_acquire()
    }

    /// Futex wakes issued so far (diagnostics: at most one per sleeper
    /// per burst).
    pub fn wakes(&self) -> u64 {
        self.region.wakes().load_relaxed()
    }
}
