//! fastpmix: PMIx event notification and job management over a lock-free
//! shared-memory fast path.
//!
//! The public modules, for a program embedding fastpmix (see
//! `docs/architecture.md` for every layer, the internal ones included):
//! - [`types`]: PMIx values, statuses, keys and attributes.
//! - [`event`]: the event-chain engine of one process.
//! - [`client`]: a process's connection to its node server.
//! - [`server`]: the node server a resource manager embeds, and its `Host`.
//! - the data store (`PMIx_Put`/`PMIx_Commit`/`PMIx_Get` of any
//!   process) is internal: [`client::Client::put`] and the server's
//!   host upcalls are its API.
//! - [`job`]: job-management pieces (logging sinks, resource usage, cleanup).
//! - [`place`]: the placement of the progress threads.
//! - [`internals`]: not an API; the internal layers (`sync`, `ring`,
//!   `wire`, the fuzz entry point) for this crate's own tests, benches,
//!   binaries and fuzz targets, with no stability promise.
//!
//! The C ABI of `include/pmix.h`, `include/pmix_server.h` and
//! `include/pmix_tool.h` (`src/capi`) is reached through its exported
//! symbols in `libfastpmix.so`/`libfastpmix.a`, not through a Rust module.

pub(crate) mod barrier;
#[cfg(not(loom))]
mod capi;
#[cfg(not(loom))]
pub mod client;
pub mod event;
#[cfg(not(loom))]
pub(crate) mod fuzzing;
#[cfg(not(loom))]
pub mod job;
#[cfg(not(loom))]
pub mod place;
pub(crate) mod ring;
#[cfg(not(loom))]
pub mod server;
pub(crate) mod store;
pub(crate) mod sync;
pub mod types;
pub(crate) mod wire;

pub use types::{DataRange, Info, Key, Nspace, Proc, Rank, Status, Value};

/// The internal layers, reachable from outside the crate only for its own
/// tests, benches, binaries (`src/bin`) and fuzz targets (`fuzz/`). Not an
/// API: anything here may change without notice. Each module re-exports
/// the public items of the crate-private module of the same name.
#[doc(hidden)]
pub mod internals {
    /// `crate::sync`: atomics, futexes, the io_uring reactor, `lock`.
    pub mod sync {
        pub use crate::sync::*;
    }
    /// `crate::ring`: the shared-memory event ring.
    pub mod ring {
        pub use crate::ring::*;
    }
    /// `crate::store`: the shared-memory data store (for its tests).
    #[cfg(not(loom))]
    pub mod store {
        pub use crate::store::*;
    }
    /// `crate::wire`: the event record and the control protocol.
    pub mod wire {
        pub use crate::wire::*;
    }
    /// `crate::fuzzing`: every decoder of foreign bytes, for the fuzzers.
    #[cfg(not(loom))]
    pub mod fuzzing {
        pub use crate::fuzzing::*;
    }
    /// The names of the C functions fastpmix exports but does not
    /// implement (`src/capi/unsupported.rs`), for the C ABI's tests.
    #[cfg(not(loom))]
    pub mod unsupported {
        pub use crate::capi::unsupported::{all_names, NOT_SUPPORTED};
    }
    /// A registration whose handler runs as a C handler does (its results
    /// kept in the chain's C array) and the C types it takes, for the C
    /// chain bench.
    #[cfg(not(loom))]
    pub mod capi {
        pub use crate::capi::c_registration;
        pub use crate::capi::ctypes::{pmix_info_t, pmix_proc_t, EventCompleteFn};
    }
}

/// The README's examples run as doc tests, so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
