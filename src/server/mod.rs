//! The node server: a library a resource-manager daemon embeds (or the
//! launcher, `fastpmix run`). It owns one ring segment per namespace, a
//! control socket for the slow path and one progress thread.
//!
//! - **Rings.** Each registered namespace gets its own segment, owner-only
//!   (0600) and owned by the namespace's uid: a client can map only its own
//!   namespace's ring. Node-wide events are published into every ring they
//!   target (see [`routing`]). Clients submit their events through their
//!   entry's submission queue in the same segment; the progress thread
//!   copies them out, stamps the authenticated source and routes them.
//! - **Control socket.** A Unix stream socket; `SO_PEERCRED` (pid, uid, gid)
//!   authenticates a client's `Hello` against the registered client. The
//!   event path never touches it.
//! - **Progress thread.** One thread waits on everything at once through an
//!   io_uring reactor ([`crate::sync::Reactor`]): the submission doorbell of
//!   every namespace (futex), the listening socket and every connection, a
//!   pidfd per client (death), and an eventfd for API calls.
//!
//! No process-global state: two servers may live in one process.

mod api;
mod barrier;
mod builder;
mod cache;
mod conn;
mod connection;
mod data;
pub mod dir;
mod directives;
mod dispatch;
mod dpm;
mod early;
mod exchange;
mod fence;
mod gate;
mod handoff;
mod hello;
mod host;
mod inspect;
pub mod jobinfo;
pub mod jobkeys;
mod jobs;
mod monitor;
mod monitor_usage;
mod outbox;
mod own_data;
mod progress;
pub(crate) mod pubsub;
pub mod query;
pub mod regex;
mod request;
pub mod routing;
mod shared;
mod worker;

pub use jobs::{DEFAULT_CHECKPOINT_TIMEOUT, DEFAULT_TERM_GRACE, TERM_GRACE_MS};

pub(crate) use exchange::{reserved_key, GetOptions};
pub(crate) use fence::options as fence_options;

pub use cache::DEFAULT_CAPACITY as DEFAULT_CACHE_SIZE;
pub use gate::{HELLO_DEADLINE, PENDING_PER_UID};
pub use host::{Done, Host, HostEvent, NoHost};

pub(crate) use crate::sync::lock;
pub(crate) use crate::types::fasthash::FastMap;
pub use api::{client_capacity, max_local_clients, reports_an_end, ClientState, NspaceState};
pub use builder::{ServerBuilder, BIND_PROGRESS_ENV, MAX_JOB_INFO};
pub(crate) use dispatch::custom_targets;
pub(crate) use inspect::inspect_text;
pub(crate) use shared::{ClientSlot, Cmd, Ns, Shared};

/// Server attribute: capacity of the event cache (environment events) and
/// of each namespace's retention area (job events for clients that have
/// not connected yet), in events. `Uint32`/`Size`; default
/// [`DEFAULT_CACHE_SIZE`] (512, as OpenPMIx).
pub const CACHE_SIZE: Key = Key::from_static("fastpmix.srv.cache.size");

/// Job information the server adds to what a client receives when it
/// connects (`Bool` true) if its host carries no events
/// ([`Host::relays_events`]): the client then refuses, with
/// `PMIX_ERR_NOT_SUPPORTED`, the events only the host could deliver.
pub const HOST_RELAYS_NO_EVENTS: Key = Key::from_static("fastpmix.srv.norelay");

use crate::types::Key;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Environment variable naming the server's control socket (set by
/// [`Server::setup_fork`]).
pub const SERVER_ADDR_ENV: &str = "FASTPMIX_SERVER_ADDR";
/// The node as the server's hwloc sees it (`place::Machine::to_text`),
/// set by [`Server::setup_fork`]: a client places its progress thread from
/// it instead of loading the topology itself (milliseconds of CPU in every
/// rank's `PMIx_Init`).
pub const MACHINE_ENV: &str = "FASTPMIX_MACHINE";
/// `PMIX_NAMESPACE` (what `setup_fork` sets for the child).
pub const NAMESPACE_ENV: &str = "PMIX_NAMESPACE";
/// `PMIX_RANK`.
pub const RANK_ENV: &str = "PMIX_RANK";

/// A running node server. Stops on [`Server::stop`] or drop.
pub struct Server {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    dir: Option<PathBuf>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("me", &self.shared.me)
            .finish()
    }
}
