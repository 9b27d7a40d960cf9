//! Job management (the Standard's "Job Management and Reporting" chapter and
//! RFC0015): the pieces the server carries out on this node and the
//! launcher's default host.
//!
//! - [`usage`]: resource usage read from /proc (process, node, disk, network).
//! - [`cleanup`]: `PMIX_REGISTER_CLEANUP[_DIR]` parsing and the symlink-safe,
//!   permission-checked removal run when the registering process ends.
//! - [`log`]: `PMIx_Log` channel selection, output formats, local syslog.
//! - [`alloc`]: the default host's core allocator (hwloc topology).

pub mod alloc;
pub mod cleanup;
pub mod log;
pub mod usage;

use crate::types::{Key, Status};

/// Key of the `String` info that explains a refusal in the results of a
/// job-management call (the Standard asks for "the reason in the results"
/// without naming a key).
pub const REASON: Key = Key::from_static("fastpmix.reason");

/// fastpmix event: an allocation granted with `PMIX_ALLOC_TIME` is about to
/// expire (sent to the holder before its cores are taken back). Below
/// `PMIX_EXTERNAL_ERR_BASE`, like the client's `EVENTS_LOST` (-3001).
pub const ALLOC_EXPIRING: Status = Status(-3002);
/// Key of the `Uint32` info of [`ALLOC_EXPIRING`]: seconds left.
pub const ALLOC_REMAINING: Key = Key::from_static("fastpmix.alloc.remaining");
