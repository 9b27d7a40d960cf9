//! The per-node event ring: a node server publishes rkyv event records into a
//! shared-memory broadcast ring; co-located readers pick them up zero-copy
//! and sleep on a shared futex when there is nothing to read.
//!
//! - [`Segment`]: the `shm_open` lifecycle (create 0600, open with validation,
//!   unlink on drop, stale removal).
//! - [`Region`]: the validated memory (mapped, or on the heap for the
//!   in-process backend).
//! - [`RingWriter`]: the single writer (the server's progress thread).
//! - [`RingReader`]: one reader per client-table entry.
//! - [`Submitter`]/[`Collector`]: the client and server ends of the
//!   submission queues.
//!
//! All of these live in `mapped/` (real memory), which loom builds leave
//! out: `protocol.rs` and `submit.rs` run over a memory trait, so the loom
//! models (`model.rs`) check the same code.
//!
//! The protocol and its memory-ordering pairs are in docs/shm-format.md.

#[cfg(all(loom, test))]
pub mod model;
// Under loom only the models (tests) use the protocol.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod lane;
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod protocol;
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod submit;

// Everything over real shared memory (segment, region, writer, readers, the
// queues' two ends): the one place the loom build leaves out.
#[cfg(not(loom))]
mod mapped;
#[cfg(not(loom))]
pub use mapped::{
    ClientState, Collected, Collector, Next, OpenError, RecordRef, Region, RingReader, RingState,
    RingWriter, Segment, SegmentError, Start, Submitter, WriteError, NAME_PREFIX,
};
// The `shm_open` helpers the data store's chunks share with the segments.
#[cfg(not(loom))]
pub(crate) use mapped::{
    alive_lock_held, create_object, hold_alive_lock, map_shared, shm_open, shm_unlink,
    too_young_to_be_stale,
};

pub use lane::Lane;
pub use protocol::{online_cpus, PublishError, SpinPolicy, Wake};
pub use shm_layout::record::{ArchivedEventRecord, EventRecord};
pub use submit::{Popped, SubmitError};
