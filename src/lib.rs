//! fastpmix: PMIx event notification and job management over a lock-free
//! shared-memory fast path.
//!
//! Layers (see `docs/architecture.md`):
//! - [`types`]: PMIx values and constants.
//! - [`sync`]: the only home of atomics and futexes.
//! - [`event`]: the event-chain engine of one process.
//! - [`ring`]: the shared-memory event ring over `shm-layout`.
//! - [`capi`]: the C ABI of `include/pmix.h` and `include/pmix_server.h`.

#[cfg(not(loom))]
pub mod capi;
#[cfg(not(loom))]
pub mod client;
pub mod event;
#[cfg(not(loom))]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(not(loom))]
pub mod job;
#[cfg(not(loom))]
pub mod place;
pub mod ring;
#[cfg(not(loom))]
pub mod server;
pub mod sync;
pub mod types;
pub mod wire;

pub use types::{DataRange, Info, Key, Nspace, Proc, Rank, Status, Value};

/// The README's examples run as doc tests, so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
