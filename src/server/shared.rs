//! What the API threads and the progress thread share: the registered
//! namespaces and clients, the command queue, sequence numbers.

use super::cache;
use super::dir;
use super::host::EnvRefs;
use super::lock;
use super::worker::Worker;
use super::FastMap;
use super::Host;
use crate::event::Engine;
use crate::ring::RingWriter;
use crate::ring::Segment;
use crate::sync::Latch;
use crate::types::Info;
use crate::types::Nspace;
use crate::types::Proc;
use crate::types::Rank;
use crate::types::Status;
use shm_layout::Geometry;
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;

/// Receives one line per routed event.
pub(super) type TraceFn = Arc<dyn Fn(&str) + Send + Sync>;

/// How a process said it can be checkpointed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CkptMethod {
    /// Deliver this event code to it.
    Event(Status),
    /// Send it this signal.
    Signal(i32),
}

/// What a process declared about itself with a job-control call.
#[derive(Clone, Debug, Default)]
pub(crate) struct Declared {
    pub preemptible: bool,
    pub ckpt: Vec<CkptMethod>,
}

/// A registered namespace and its ring.
pub(crate) struct Ns {
    pub seg: Segment,
    /// What its processes committed and other nodes sent.
    pub data: super::data::NsData,
    /// Its fence barrier in shared memory, when every rank runs here.
    pub barrier: Option<crate::barrier::Area>,
    pub writer: Mutex<RingWriter>,
    pub info: Vec<Info>,
    pub clients: FastMap<Rank, ClientSlot>,
    /// The uid/gid the segment belongs to (the first client's).
    pub owner: Option<(u32, u32)>,
    /// Registered clients that never connected (job events are retained
    /// for them); zero makes retention free.
    pub pending: usize,
    /// Where the job's ranks are, read once from `info` at registration.
    pub job_map: super::jobkeys::JobMap,
    /// `job_map`'s local peers (`PMIX_LOCAL_PEERS`, else the maps),
    /// sorted for lookups: a host may register
    /// its clients one by one as it starts them, and a rank named here is
    /// local before it is registered.
    pub local_peers: Vec<u32>,
    /// Local peers the host deregistered: gone, though the job
    /// information still names them.
    pub deregistered: Vec<u32>,
    /// Where the next client-table claim starts looking: the entry after
    /// the last one claimed, so that N clients connecting cost N probes of
    /// the table, not N²/2.
    pub claim_from: u32,
}

impl Ns {
    /// The job's size as registered (`PMIX_JOB_SIZE`), if it was.
    pub fn job_size(&self) -> Option<u32> {
        crate::types::find_info(&self.info, &crate::types::attrs::PMIX_JOB_SIZE)
            .and_then(|i| i.value.as_integer())
            .and_then(|s| u32::try_from(s).ok())
    }

    /// Whether `rank` runs on this node: a registered client, or one the
    /// job information places here (it may not be registered yet).
    pub fn is_local(&self, rank: Rank) -> bool {
        self.clients.contains_key(&rank) || self.local_peers.binary_search(&rank.0).is_ok()
    }

    /// Whether local process `rank` has left for good (deregistered,
    /// finalized, connected once and gone since, or reported ended by the
    /// host). A registered process that never connected, or a local peer
    /// not registered yet, may still come.
    pub fn has_left(&self, rank: Rank) -> bool {
        match self.clients.get(&rank) {
            None => {
                self.local_peers.binary_search(&rank.0).is_err()
                    || self.deregistered.contains(&rank.0)
            }
            Some(s) => s.finalized || s.ended || (s.ever_connected && s.entry.is_none()),
        }
    }
}

/// A registered client.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientSlot {
    pub uid: u32,
    pub gid: u32,
    /// Client-table entry while connected.
    pub entry: Option<u32>,
    pub pid: Option<i32>,
    pub finalized: bool,
    /// Connected at least once.
    pub ever_connected: bool,
    /// The host reported that the process ended (an event such as
    /// `PMIX_EVENT_PROC_TERMINATED` naming it) while it was not connected:
    /// it will never come, so fences stop waiting for it.
    pub ended: bool,
    /// Requests it sent on its control socket after `Hello`.
    pub requests: u64,
}

impl ClientSlot {
    /// Holds a client-table entry now, or may still claim one: connected,
    /// or registered and neither connected yet nor reported ended. One
    /// that finalized, or connected and left, has given its entry back.
    pub fn may_hold_an_entry(&self) -> bool {
        self.entry.is_some() || !(self.ever_connected || self.ended || self.finalized)
    }
}

/// Commands from API threads to the progress thread.
pub(crate) enum Cmd {
    /// A namespace appeared: watch its submission doorbell.
    Watch(Nspace),
    /// A namespace went away.
    Forget(Nspace),
    /// A client was deregistered: close its connection (if it has one)
    /// and fail the fences waiting for it.
    Disconnect(Proc),
    /// A process left for good without a connection to close (the host
    /// reported the end of one that never connected): fail the fences
    /// waiting for it.
    Settle,
    /// A late answer (the host completed a request, or its part of a
    /// request answered in parts): sent, or merged with the other parts.
    Answer {
        /// Connection id.
        conn: u64,
        /// Request number.
        rid: u64,
        /// Its status.
        status: Status,
        /// Its results.
        info: Vec<Info>,
    },
    /// A client was registered: a Hello waiting for it may go on.
    Registered,
    /// The host completed `client_finalized` for connection `conn`: its
    /// `PMIx_Finalize` returns.
    Finalized {
        /// Connection id.
        conn: u64,
    },
    /// The host's `fence_nb` completed fence `id`.
    FenceDone {
        /// The fence's number.
        id: u64,
        /// The host's status.
        status: Status,
        /// Every node's contribution.
        data: Vec<u8>,
    },
    /// The host's `direct_modex` for `proc` completed.
    Modex {
        /// Whose data was asked for.
        proc: Proc,
        /// The host's status.
        status: Status,
        /// The other node's answer.
        data: Vec<u8>,
    },
    /// The host asks for a local process's data for another node
    /// (`Server::dmodex_request`).
    Serve {
        /// The local process.
        proc: Proc,
        /// Where the answer goes.
        done: super::Done<Vec<u8>>,
    },
    /// Stop.
    Stop,
}

pub(crate) struct Shared {
    pub me: Proc,
    pub host: Arc<dyn Host>,
    pub engine: Engine,
    pub geometry: Geometry,
    pub nspaces: Mutex<FastMap<Nspace, Ns>>,
    pub cmds: Mutex<Vec<Cmd>>,
    pub wake: OwnedFd,
    pub env_refs: EnvRefs,
    pub cache: Mutex<cache::Cache>,
    /// Record and encoding buffer reused by `dispatch`.
    pub(super) scratch: Mutex<Scratch>,
    /// Where the progress thread runs and why (`place::plan`).
    pub plan: crate::place::Plan,
    /// What the progress thread got bound to (for `inspect`).
    pub bound: Mutex<Option<String>>,
    pub(super) seqs: Mutex<FastMap<Proc, u64>>,
    /// Per client: how many of its events went into its own namespace's
    /// ring since it connected (the `source_seq` of those records, and the
    /// entry's `own_relayed`): its reader tells which records it missed
    /// were its own.
    pub(super) own_seqs: Mutex<FastMap<Proc, u64>>,
    pub(super) trace: Option<TraceFn>,
    pub stopping: Latch,
    pub sock_path: PathBuf,
    /// The control directory when the server made it (mode 0700).
    pub(super) own_dir: Option<PathBuf>,
    /// The directory's liveness lock (`dir::hold`), held while the
    /// server lives.
    pub(super) _dir_alive: Option<std::fs::File>,
    /// Whether [`Shared::own_dir`] was opened to other uids (0711).
    pub(super) dir_open: Mutex<bool>,
    pub euid: u32,
    /// What processes declared with job control (preemptible, checkpoint
    /// methods); read by the host-facing API too.
    pub declared: Mutex<HashMap<Proc, Declared>>,
    pub term_grace: std::time::Duration,
    /// `PMIX_SERVER_ENABLE_MONITORING`: whether the server serves
    /// heartbeat, file and resource-usage monitors itself.
    pub monitoring: bool,
    /// Namespaces whose doorbell the progress thread sleeps on directly
    /// ([`ServerBuilder::direct_bells`]).
    pub direct_bells: usize,
    pub log_sinks: Mutex<crate::job::log::Sinks>,
    pub worker: Worker,
    /// What the host process stored for itself (`PMIx_Store_internal`).
    pub(super) own_data: super::own_data::OwnData,
    /// Clients registered before their namespace (`early`).
    pub(super) early: super::early::EarlyClients,
}

/// What `dispatch` reuses from one event to the next.
pub(super) struct Scratch {
    pub bytes: rkyv::util::AlignedVec,
    pub rec: shm_layout::record::EventRecord,
    /// A lane record's copy for other namespaces' rings (`LANED` cleared).
    pub unlaned: rkyv::util::AlignedVec,
}

impl Shared {
    pub fn nspaces(&self) -> MutexGuard<'_, FastMap<Nspace, Ns>> {
        lock(&self.nspaces)
    }

    /// Tells the operator something about the server itself (a resource
    /// running out, a refused directory): through the trace sink when the
    /// host set one, else on stderr.
    pub(crate) fn say(&self, msg: &str) {
        match &self.trace {
            Some(t) => t(msg),
            None => eprintln!("fastpmix server: {msg}"),
        }
    }

    /// Lets other uids reach the control socket: the directory the server
    /// made goes from 0700 to 0711 (search only: they can neither list it
    /// nor create anything in it). Called when a client of another uid is
    /// registered; a directory the host gave is the host's to set.
    pub(super) fn open_dir(&self) -> Result<(), Status> {
        let Some(d) = &self.own_dir else {
            return Ok(());
        };
        let mut open = lock(&self.dir_open);
        if !*open {
            dir::set_dir_mode(d, 0o711).map_err(|e| {
                self.say(&format!("cannot open {} to other users: {e}", d.display()));
                Status::ERR_NOT_SUPPORTED
            })?;
            *open = true;
        }
        Ok(())
    }

    pub fn command(&self, c: Cmd) {
        lock(&self.cmds).push(c);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe { libc::write(self.wake.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    /// The `source_seq` of a client's event: its count of events in its own
    /// ring, one more when this one goes there too.
    pub(super) fn own_seq(&self, p: &Proc, into_own_ring: bool) -> u64 {
        let mut m = lock(&self.own_seqs);
        if let Some(n) = m.get_mut(p) {
            *n += u64::from(into_own_ring);
            return *n;
        }
        let n = u64::from(into_own_ring);
        m.insert(*p, n);
        n
    }

    /// A client (re)connected: its own records count from 1 again, as its
    /// entry's `own_relayed` does from 0.
    pub(crate) fn restart_own_seq(&self, p: &Proc) {
        lock(&self.own_seqs).remove(p);
    }

    pub(super) fn next_seq(&self, p: &Proc) -> u64 {
        let mut m = lock(&self.seqs);
        // Looked up before `entry`, which would copy the 260-byte key on
        // every event.
        if let Some(n) = m.get_mut(p) {
            *n += 1;
            return *n;
        }
        m.insert(*p, 1);
        1
    }
}
