//! The fence barrier: `PMIx_Fence` over every process of a namespace that
//! runs wholly on this node, carried out in shared memory by the
//! participants (the last to enter wakes the others with one
//! `FUTEX_WAKE`), instead of a round trip through the server's progress
//! thread and each client's control thread.
//!
//! - `protocol.rs`: enter, wait, expire, close, and the commit
//!   accounting, over a memory trait (loom model in `model.rs`);
//! - `area.rs`: the barrier as a shared-memory object.
//!
//! The layout and its orderings are `shm_layout::barrier` and
//! docs/shm-format.md; which fences take it, `client/fence.rs`; what the
//! server keeps, `server/barrier.rs`.

#[cfg(not(loom))]
mod area;
#[cfg(all(loom, test))]
mod model;
#[cfg_attr(loom, allow(dead_code))]
mod protocol;

#[cfg(not(loom))]
pub(crate) use area::Area;
#[cfg_attr(loom, allow(unused_imports))]
pub(crate) use protocol::{
    applied, close, complete, enter, is_closed, wait, wait_applied, wake_sleepers, BarrierMemory,
    Entry,
};
#[cfg_attr(loom, allow(unused_imports))]
pub use shm_layout::barrier::outcome;
