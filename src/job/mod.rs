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
