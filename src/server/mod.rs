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

mod cache;
pub mod dir;
mod fence;
mod gate;
mod handoff;
mod host;
pub mod jobinfo;
pub mod jobkeys;
mod jobs;
mod monitor;
mod progress;
pub mod query;
pub mod regex;
pub mod routing;

pub use jobs::{DEFAULT_CHECKPOINT_TIMEOUT, DEFAULT_TERM_GRACE, TERM_GRACE_MS};

pub(crate) use fence::options as fence_options;

pub use cache::DEFAULT_CAPACITY as DEFAULT_CACHE_SIZE;
pub use gate::{HELLO_DEADLINE, PENDING_PER_UID};
pub use host::{Done, Host, HostEvent, NoHost};

/// Server attribute: capacity of the event cache (environment events) and
/// of each namespace's retention area (job events for clients that have
/// not connected yet), in events. `Uint32`/`Size`; default
/// [`DEFAULT_CACHE_SIZE`] (512, as OpenPMIx).
pub const CACHE_SIZE: Key = Key::from_static("fastpmix.srv.cache.size");

use crate::event::{Engine, EventClass, Notification, Origin};
use crate::ring::{RingWriter, Segment, Wake};
use crate::sync::Latch;
use crate::types::{attrs, DataRange, Info, Key, Nspace, Proc, Rank, Status, Value};
use crate::wire::{event_into_record, now_realtime_ns, WireEvent};
use host::EnvRefs;
use routing::{Route, Via};
use shm_layout::Geometry;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Most bytes a namespace's job information may take encoded: every
/// client gets it in its `Welcome`, which must fit in one control frame
/// ([`crate::wire::control::MAX_FRAME`]) with the cached events. About
/// 1 450 ranks of [`jobinfo::single_node`].
pub const MAX_JOB_INFO: usize = crate::wire::control::MAX_FRAME / 2;

/// The encoded size of job information, as a `Welcome` carries it.
fn job_info_size(info: &[Info]) -> Result<usize, Status> {
    let recs: Vec<_> = info.iter().map(crate::wire::info_to_record).collect();
    rkyv::to_bytes::<rkyv::rancor::Error>(&recs)
        .map(|b| b.len())
        .map_err(|_| Status::ERR_BAD_PARAM)
}

/// Environment variable overriding the server's placement when neither the
/// builder nor `PMIX_BIND_PROGRESS_THREAD` sets it: `none`, `auto` or
/// `cpu:LIST`.
pub const BIND_PROGRESS_ENV: &str = "FASTPMIX_SERVER_BIND_PROGRESS";

/// The progress thread's plan: explicit placement, else the environment,
/// else `Auto`. Without hwloc it runs unpinned (unless `required`).
fn server_plan(
    explicit: Option<crate::place::Placement>,
    required: bool,
) -> Result<crate::place::Plan, Status> {
    use crate::place::{self, Placement, Role};
    let p = match explicit {
        Some(p) => p,
        None => place::from_env(BIND_PROGRESS_ENV, "server")?.unwrap_or(Placement::Auto),
    };
    place::plan_or_unpinned(&p, Role::Server, required, "server")
}

/// Environment variable naming the server's control socket (set by
/// [`Server::setup_fork`]).
pub const SERVER_ADDR_ENV: &str = "FASTPMIX_SERVER_ADDR";
/// `PMIX_NAMESPACE` (what `setup_fork` sets for the child).
pub const NAMESPACE_ENV: &str = "PMIX_NAMESPACE";
/// `PMIX_RANK`.
pub const RANK_ENV: &str = "PMIX_RANK";

/// Receives one line per routed event.
type TraceFn = Arc<dyn Fn(&str) + Send + Sync>;

/// Configures a [`Server`].
pub struct ServerBuilder {
    me: Option<Proc>,
    dir: Option<PathBuf>,
    dir_base: Option<PathBuf>,
    geometry: Geometry,
    host: Arc<dyn Host>,
    trace: Option<TraceFn>,
    cache_size: usize,
    attrs: Vec<Info>,
    placement: Option<crate::place::Placement>,
    term_grace: std::time::Duration,
    log_sinks: Option<crate::job::log::Sinks>,
    monitoring: bool,
    direct_bells: usize,
}

impl ServerBuilder {
    /// How many namespaces' doorbells the progress thread sleeps on
    /// directly, in its one `futex_waitv` (default and most:
    /// [`Reactor::MAX_WORDS`](crate::sync::Reactor::MAX_WORDS)); the
    /// doorbells of namespaces registered beyond them are io_uring futex
    /// watches, which cost a little more per wake-up. For the tests of that
    /// second path.
    #[doc(hidden)]
    pub fn direct_bells(mut self, n: usize) -> Self {
        self.direct_bells = n.min(crate::sync::Reactor::MAX_WORDS);
        self
    }

    /// Where `PMIx_Log`'s local channels write (default: this process's
    /// stdout and stderr, and the node's syslog socket `/dev/log`).
    pub fn log_sinks(mut self, s: crate::job::log::Sinks) -> Self {
        self.log_sinks = Some(s);
        self
    }

    /// Where the progress thread runs (hwloc; default: the environment's
    /// [`BIND_PROGRESS_ENV`], else `Auto`: the last PU of the node within
    /// the caller's binding, see `place`). The `PMIX_BIND_PROGRESS_THREAD`
    /// attribute overrides it. A placement that cannot be applied is
    /// reported on stderr and the thread runs unpinned (with
    /// `PMIX_BIND_REQUIRED`, `start` fails with `PMIX_ERR_NOT_AVAILABLE`).
    pub fn placement(mut self, p: crate::place::Placement) -> Self {
        self.placement = Some(p);
        self
    }

    /// A server attribute (`PMIx_server_init`'s info): [`CACHE_SIZE`],
    /// [`TERM_GRACE_MS`], `PMIX_SERVER_ENABLE_MONITORING` (default true;
    /// false hands every monitor request to the host, which the server
    /// would otherwise serve itself: heartbeats, files, resource usage).
    /// Unknown keys are ignored unless `PMIX_INFO_REQD` (then
    /// `PMIX_ERR_NOT_SUPPORTED` at `start`); a bad value is
    /// `PMIX_ERR_BAD_PARAM` at `start`.
    pub fn attribute(mut self, i: Info) -> Self {
        self.attrs.push(i);
        self
    }

    /// Capacity of the event cache and of each retention area (events).
    pub fn cache_size(mut self, n: usize) -> Self {
        self.cache_size = n;
        self
    }

    /// The server's own identity (source of the events it generates).
    /// Default: namespace `fastpmix-server-<pid>-<n>` (n counts the servers
    /// of this process), rank 0.
    pub fn me(mut self, p: Proc) -> Self {
        self.me = Some(p);
        self
    }

    /// Directory for the control socket. Default: a private directory
    /// the server makes (`mkdtemp`, 0700; 0711 once a client of another
    /// uid is registered) under `$TMPDIR` or `/tmp` — or under
    /// [`dir_in`](Self::dir_in) — and removes on stop. A directory given
    /// here is the host's: it must be a directory of the server's euid
    /// that others cannot write to ([`dir::check_private`]; else `start`
    /// is `PMIX_ERR_BAD_PARAM`), the host sets who may search it, and it
    /// is left in place on stop.
    pub fn dir(mut self, d: impl Into<PathBuf>) -> Self {
        self.dir = Some(d.into());
        self
    }

    /// Where the server makes its private control directory (instead of
    /// `$TMPDIR`): `PMIX_SERVER_TMPDIR`.
    pub fn dir_in(mut self, base: impl Into<PathBuf>) -> Self {
        self.dir_base = Some(base.into());
        self
    }

    /// Ring geometry of every namespace segment.
    pub fn geometry(mut self, g: Geometry) -> Self {
        self.geometry = g;
        self
    }

    /// The embedding daemon's callbacks.
    pub fn host(mut self, h: Arc<dyn Host>) -> Self {
        self.host = h;
        self
    }

    /// Calls `f` with one readable line per event the server routes
    /// (`fastpmix run --trace-events`).
    pub fn trace(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.trace = Some(Arc::new(f));
        self
    }

    /// Starts the server: binds the control socket and the progress thread.
    pub fn start(mut self) -> Result<Server, Status> {
        let mut bind_required = false;
        for a in &self.attrs {
            if a.key == attrs::PMIX_BIND_PROGRESS_THREAD {
                let v = a.value.as_str().ok_or(Status::ERR_BAD_PARAM)?;
                self.placement =
                    Some(crate::place::Placement::from_attribute(v).ok_or(Status::ERR_BAD_PARAM)?);
            } else if a.key == attrs::PMIX_BIND_REQUIRED {
                bind_required = a.value.as_flag().ok_or(Status::ERR_BAD_PARAM)?;
            } else if a.key == CACHE_SIZE {
                let n = a
                    .value
                    .as_integer()
                    .filter(|n| *n > 0)
                    .ok_or(Status::ERR_BAD_PARAM)?;
                self.cache_size = usize::try_from(n).map_err(|_| Status::ERR_BAD_PARAM)?;
            } else if a.key == TERM_GRACE_MS {
                let n = a
                    .value
                    .as_integer()
                    .filter(|n| (0..=u32::MAX as i128).contains(n))
                    .ok_or(Status::ERR_BAD_PARAM)?;
                self.term_grace = std::time::Duration::from_millis(n as u64);
            } else if a.key == attrs::PMIX_SERVER_ENABLE_MONITORING {
                self.monitoring = a.value.as_flag().ok_or(Status::ERR_BAD_PARAM)?;
            } else if a.is_required() {
                return Err(Status::ERR_NOT_SUPPORTED);
            }
        }
        // Decided here, on the host's thread, which holds its binding (and
        // before anything is created that a refusal would have to undo).
        let plan = server_plan(self.placement.take(), bind_required)?;
        // Segments of this user's servers that died without cleaning up
        // (SIGKILL) would stay in /dev/shm for good: remove them. A live
        // server's segments are left alone (its pid exists).
        let _ = Segment::remove_stale();
        // And the control directories they left (a socket, no records).
        dir::remove_stale(&dir::temp_base());
        let pid = std::process::id();
        let me = match self.me {
            Some(p) => p,
            None => {
                static N: Mutex<u64> = Mutex::new(0);
                let n = {
                    let mut g = lock(&N);
                    *g += 1;
                    *g
                };
                Proc::new(&format!("fastpmix-server-{pid}-{n}"), 0)?
            }
        };
        // The socket lives in a directory of ours that nobody else can
        // have made or can replace (`dir`): a predictable name under the
        // shared temp directory would be another user's to take first.
        let (dir, own_dir) = match self.dir {
            Some(d) => {
                dir::check_private(&d).map_err(|e| {
                    eprintln!("fastpmix server: refusing the control directory: {e}");
                    Status::ERR_BAD_PARAM
                })?;
                (d, false)
            }
            None => {
                let base = self.dir_base.unwrap_or_else(dir::temp_base);
                let d = dir::private_dir(&base, &format!("fastpmix-{pid}-")).map_err(|e| {
                    eprintln!("fastpmix server: {e}");
                    Status::ERR_INIT
                })?;
                (d, true)
            }
        };
        let sock_path = dir.join("ctl");
        let listener = match bind_control(&sock_path) {
            Ok(l) => l,
            Err(e) => {
                eprintln!(
                    "fastpmix server: cannot listen on {}: {e}",
                    sock_path.display()
                );
                if own_dir {
                    let _ = std::fs::remove_dir(&dir);
                }
                return Err(Status::ERR_INIT);
            }
        };
        let engine_plan = plan.clone();
        let engine = Engine::builder(me)
            .thread_name("fastpmix-srv-ev")
            .on_start(move || crate::place::apply(&engine_plan).is_ok() && engine_plan.owns_core)
            .build()?;
        let wake = eventfd()?;
        let shared = Arc::new(Shared {
            me,
            host: self.host,
            engine,
            geometry: self.geometry,
            nspaces: Mutex::new(FastMap::default()),
            cmds: Mutex::new(Vec::new()),
            wake,
            env_refs: EnvRefs::default(),
            cache: Mutex::new(cache::Cache::new(self.cache_size)),
            scratch: Mutex::new(Scratch {
                bytes: rkyv::util::AlignedVec::with_capacity(1024),
                rec: Default::default(),
            }),
            plan,
            bound: Mutex::new(None),
            seqs: Mutex::new(FastMap::default()),
            own_seqs: Mutex::new(FastMap::default()),
            trace: self.trace,
            stopping: Latch::default(),
            sock_path: sock_path.clone(),
            own_dir: own_dir.then(|| dir.clone()),
            dir_open: Mutex::new(false),
            // SAFETY: geteuid cannot fail.
            euid: unsafe { libc::geteuid() },
            declared: Mutex::new(HashMap::new()),
            term_grace: self.term_grace,
            monitoring: self.monitoring,
            direct_bells: self.direct_bells,
            log_sinks: Mutex::new(
                self.log_sinks
                    .unwrap_or_else(crate::job::log::Sinks::process),
            ),
            worker: handoff::Worker::new(),
        });
        let s = shared.clone();
        let (bound_tx, bound_rx) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("fastpmix-srv".into())
            .spawn(move || {
                let _ = bound_tx.send(crate::place::apply(&s.plan));
                progress::run(s, listener)
            })
            .map_err(|_| Status::ERR_OUT_OF_RESOURCE)?;
        let server = Server {
            shared,
            thread: Mutex::new(Some(thread)),
            dir: own_dir.then_some(dir),
        };
        let bound = match bound_rx.recv() {
            Ok(Ok(cpus)) => format!("bound to CPUs {cpus:?}"),
            Ok(Err(e)) => {
                if let Err(s) = crate::place::refuse_or(bind_required, &e, "server") {
                    drop(server); // stops it
                    return Err(s);
                }
                format!("not pinned ({e})")
            }
            Err(_) => "not started".into(),
        };
        *lock(&server.shared.bound) = Some(bound);
        Ok(server)
    }
}

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

/// A registered namespace and its ring.
pub(crate) struct Ns {
    pub seg: Segment,
    pub writer: Mutex<RingWriter>,
    pub info: Vec<Info>,
    pub clients: FastMap<Rank, ClientSlot>,
    /// The uid/gid the segment belongs to (the first client's).
    pub owner: Option<(u32, u32)>,
    /// Registered clients that never connected (job events are retained
    /// for them); zero makes retention free.
    pub pending: usize,
}

/// Which sleeping clients of ring `r` an event is for, so the writer wakes
/// only those: the members of a custom range, and never a client's own
/// relayed event's source (it drops its own record). Anyone left asleep is
/// still woken once half the ring is unread (`ring::Wake`).
fn ring_wake<'a>(
    x: &Ns,
    r: &Nspace,
    from: Via,
    n: &Notification,
    custom: &[Proc],
    only: &'a mut Vec<u32>,
) -> Wake<'a> {
    let entry = |rank: &Rank| x.clients.get(rank).and_then(|c| c.entry);
    if n.range == DataRange::CUSTOM
        && !custom
            .iter()
            .any(|p| p.nspace == *r && p.rank == Rank::WILDCARD)
    {
        only.clear();
        only.extend(
            custom
                .iter()
                .filter(|p| p.nspace == *r)
                .filter_map(|p| entry(&p.rank)),
        );
        return Wake::Only(only);
    }
    match from {
        Via::Client if n.source.nspace == *r => {
            entry(&n.source.rank).map_or(Wake::All, Wake::AllBut)
        }
        _ => Wake::All,
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
    /// A late answer (the host completed a request): write it.
    Reply {
        /// Connection id.
        conn: u64,
        /// The `Result` frame.
        frame: Vec<u8>,
    },
    /// One part of a request answered in parts (the host's share of a
    /// job-control request that also names this node's processes).
    Part {
        /// Connection id.
        conn: u64,
        /// Request number.
        rid: u64,
        /// The part's status.
        status: Status,
        /// The part's results.
        info: Vec<Info>,
    },
    /// A client was registered: a Hello waiting for it may go on.
    Registered,
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
    scratch: Mutex<Scratch>,
    /// Where the progress thread runs and why (`place::plan`).
    pub plan: crate::place::Plan,
    /// What the progress thread got bound to (for `inspect`).
    pub bound: Mutex<Option<String>>,
    seqs: Mutex<FastMap<Proc, u64>>,
    /// Per client: how many of its events went into its own namespace's
    /// ring since it connected (the `source_seq` of those records, and the
    /// entry's `own_relayed`): its reader tells which records it missed
    /// were its own.
    own_seqs: Mutex<FastMap<Proc, u64>>,
    trace: Option<TraceFn>,
    pub stopping: Latch,
    pub sock_path: PathBuf,
    /// The control directory when the server made it (mode 0700).
    own_dir: Option<PathBuf>,
    /// Whether [`Shared::own_dir`] was opened to other uids (0711).
    dir_open: Mutex<bool>,
    pub euid: u32,
    /// What processes declared with job control (preemptible, checkpoint
    /// methods); read by the host-facing API too.
    pub declared: Mutex<HashMap<Proc, jobs::Declared>>,
    pub term_grace: std::time::Duration,
    /// `PMIX_SERVER_ENABLE_MONITORING`: whether the server serves
    /// heartbeat, file and resource-usage monitors itself.
    pub monitoring: bool,
    /// Namespaces whose doorbell the progress thread sleeps on directly
    /// ([`ServerBuilder::direct_bells`]).
    pub direct_bells: usize,
    pub log_sinks: Mutex<crate::job::log::Sinks>,
    pub worker: handoff::Worker,
}

pub(crate) use crate::types::fasthash::FastMap;

/// What `dispatch` reuses from one event to the next.
struct Scratch {
    bytes: rkyv::util::AlignedVec,
    rec: shm_layout::record::EventRecord,
}

use crate::sync::lock;

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
    fn open_dir(&self) -> Result<(), Status> {
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
    fn own_seq(&self, p: &Proc, into_own_ring: bool) -> u64 {
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

    fn next_seq(&self, p: &Proc) -> u64 {
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

    /// Routes an event the server generates on its own, with no caller to
    /// take an error (monitor updates, a checkpoint's relay). One that
    /// cannot be published (a report with many fields or targets can be
    /// larger than a ring slot) reaches the same receivers as
    /// `EVENTS_LOST` with a count of 1, its affected process, monitor ID
    /// and the reason: nothing is lost silently.
    pub fn publish_or_report(&self, n: Notification, class: EventClass) {
        let keep = |i: &&Info| {
            i.key == attrs::PMIX_EVENT_CUSTOM_RANGE
                || i.key == attrs::PMIX_MONITOR_ID
                || i.key == attrs::PMIX_EVENT_AFFECTED_PROC
        };
        let (code, source, range) = (n.code, n.source, n.range);
        let mut info: Vec<Info> = n.info.iter().filter(keep).cloned().collect();
        let Err(why) = self.dispatch(Via::Server, n, class) else {
            return;
        };
        info.push(Info::new(crate::types::EVENTS_LOST_COUNT, Value::Uint64(1)));
        info.push(Info::new(
            attrs::PMIX_EVENT_TEXT_MESSAGE,
            format!(
                "an event of the server ({code}) could not be published ({why}): most likely larger than a ring slot; select fewer fields or targets"
            ),
        ));
        let lost = Notification {
            code: crate::types::EVENTS_LOST,
            source,
            range,
            info,
        };
        if let Err(s) = self.dispatch(Via::Server, lost, class) {
            self.say(&format!(
                "event {code} not published: {why}, nor its notice: {s}"
            ));
        }
    }

    /// Routes and publishes one event. `Ok(route)` once every ring that
    /// must get it has it; errors (nothing published) are for the caller.
    pub fn dispatch(
        &self,
        from: Via,
        mut n: Notification,
        class: EventClass,
    ) -> Result<Route, Status> {
        // Validate once, as the server's engine would (range, types, custom
        // range rules).
        let origin = match from {
            Via::Server => Origin::ThisProcess,
            Via::Client | Via::Host | Via::Tool => Origin::ThisNode,
        };
        crate::event::Event::validate(&n)?;
        if n.range == DataRange::PROC_LOCAL {
            return Err(Status::ERR_BAD_PARAM);
        }
        let custom = custom_targets(&n.info);
        let route = {
            let ns = self.nspaces();
            let local: Vec<&Nspace> = ns.keys().collect();
            let is_local = |p: &Proc| {
                ns.get(&p.nspace)
                    .is_some_and(|x| x.clients.contains_key(&p.rank))
            };
            // A namespace-range event the server generates about a process
            // (a monitor alert) is scoped to that process's namespace.
            let scope = match from {
                Via::Server => affected(&n.info).unwrap_or(n.source),
                _ => n.source,
            };
            let route = routing::route(from, &scope, n.range, &custom, &local, is_local);
            // A client's event into its own ring: its reader skips it, and
            // must be able to tell it from the others it may miss.
            let own_ring = from == Via::Client && route.rings.contains(&n.source.nspace);
            if !route.rings.is_empty() {
                // The infos are lent to the record encoder, not copied.
                let w = WireEvent {
                    code: n.code,
                    source: n.source,
                    range: n.range,
                    info: std::mem::take(&mut n.info),
                    class,
                    source_seq: if from == Via::Client {
                        self.own_seq(&n.source, own_ring)
                    } else {
                        self.next_seq(&n.source)
                    },
                    timestamp_ns: now_realtime_ns(),
                };
                // One record and one encoding for every ring, both reused
                // from the previous event (lock order: nspaces, scratch,
                // cache).
                let mut scratch = lock(&self.scratch);
                let Scratch { bytes: kept, rec } = &mut *scratch;
                event_into_record(&w, rec);
                n.info = w.info;
                if from == Via::Client {
                    rec.flags |= shm_layout::record::flags::RELAYED;
                }
                let mut buf = std::mem::take(kept);
                buf.clear();
                let bytes = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(&*rec, buf)
                    .map_err(|_| Status::ERR_BAD_PARAM)?;
                let mut only = Vec::new();
                let published =
                    route
                        .rings
                        .iter()
                        .try_for_each(|r| -> Result<(), crate::ring::PublishError> {
                            let Some(x) = ns.get(r) else { return Ok(()) };
                            let wake = ring_wake(x, r, from, &n, &custom, &mut only);
                            lock(&x.writer).publish_bytes_to(&bytes, wake)?;
                            if own_ring && *r == n.source.nspace {
                                // After the publish (Release): the reader that sees
                                // this number sees the record (`RingReader::own_relayed`).
                                let entry = x.clients.get(&n.source.rank).and_then(|c| c.entry);
                                if let Some(e) = entry {
                                    x.seg.region().own_relayed(e).store_release(rec.source_seq);
                                }
                            }
                            Ok(())
                        });
                *kept = bytes;
                published.map_err(|_| Status::ERR_BAD_PARAM)?;
                // Same critical section as the publish (see cache.rs).
                let cacheable = rec.flags & shm_layout::record::flags::DO_NOT_CACHE == 0
                    && (class == EventClass::Environment
                        || route
                            .rings
                            .iter()
                            .any(|r| ns.get(r).is_some_and(|x| x.pending > 0)));
                if cacheable {
                    let rec = Arc::new(rec.clone());
                    let mut c = lock(&self.cache);
                    if class == EventClass::Environment {
                        c.add_environment(rec, cache::Scope::of(n.range, scope.nspace, &custom));
                    } else {
                        for r in &route.rings {
                            let Some(x) = ns.get(r) else { continue };
                            let owed: Vec<Rank> = x
                                .clients
                                .iter()
                                .filter(|(rank, cl)| {
                                    cl.entry.is_none()
                                        && !cl.ever_connected
                                        && (n.range != DataRange::CUSTOM
                                            || custom.iter().any(|p| {
                                                p.covers(&Proc {
                                                    nspace: *r,
                                                    rank: **rank,
                                                })
                                            }))
                                })
                                .map(|(rank, _)| *rank)
                                .collect();
                            c.retain_job(*r, rec.clone(), owed);
                        }
                    }
                }
            }
            route
        };
        // PMIX_EVENT_PROXY, the server that brought the event onto this
        // node: for the host (which relays it on) and this process's own
        // handlers; not on this server's own events, whose source names it.
        // An event the host relays from another node's server keeps the
        // proxy it names. Records carry it only when the host gave it: a
        // client adds this server when the record names none (no ring
        // bytes; see `client::with_proxy`).
        // Building the engine's event costs a second validation: skipped
        // while the server process registered no handler (as a handler
        // registered concurrently may miss any live event).
        let handlers = route.server_handlers && self.engine.handler_count() > 0;
        // Nobody looks at the infos past this point on a client's LOCAL
        // event between clients (no upcall, no handler): no proxy added.
        let looked_at = route.upcall || handlers || self.trace.is_some();
        if looked_at
            && n.source != self.me
            && !n.info.iter().any(|i| i.key == attrs::PMIX_EVENT_PROXY)
        {
            n.info.push(Info::new(
                attrs::PMIX_EVENT_PROXY,
                crate::types::Value::from(self.me),
            ));
        }
        if let Some(t) = &self.trace {
            t(&trace_line(from, &n, &route));
        }
        if route.upcall {
            let he = HostEvent {
                code: n.code,
                source: n.source,
                range: n.range,
                // Moved when no handler of ours needs them after the host.
                info: if handlers {
                    n.info.clone()
                } else {
                    std::mem::take(&mut n.info)
                },
            };
            self.host.notify_event(&he, Done::ignored());
        }
        if handlers {
            if let Ok(ev) = crate::event::Event::new(n, origin) {
                let _ = self.engine.deliver(ev.with_class(class));
            }
        }
        Ok(route)
    }
}

pub(super) fn custom_targets(info: &[Info]) -> Vec<Proc> {
    info.iter()
        .filter(|i| i.key.as_str() == attrs::PMIX_EVENT_CUSTOM_RANGE.as_str())
        .flat_map(|i| i.value.as_procs().unwrap_or_default())
        .collect()
}

fn affected(info: &[Info]) -> Option<Proc> {
    info.iter()
        .find(|i| i.key == attrs::PMIX_EVENT_AFFECTED_PROC)
        .and_then(|i| match &i.value {
            crate::types::Value::Proc(p) => Some(**p),
            _ => None,
        })
}

/// Whether an event with this code tells that a process ended (the host's
/// way to report the death of a process that never connected).
pub fn reports_an_end(code: Status) -> bool {
    [
        Status::EVENT_PROC_TERMINATED,
        Status::PROC_TERMINATED,
        Status::ERR_PROC_ABORTED,
        Status::ERR_PROC_TERM_WO_SYNC,
        Status::ERR_PROC_KILLED_BY_CMD,
        Status::ERR_PROC_FAILED_TO_START,
        Status::ERR_PROC_ABORTED_BY_SIG,
        Status::ERR_EXIT_NONZERO_TERM,
    ]
    .contains(&code)
}

/// Most clients one namespace's ring can hold with geometry `g`: each
/// client may pin one data slot, and an index entry names a data slot in
/// 16 bits (`slot_count + client_capacity + 1` ≤ 65 535).
pub fn max_local_clients(g: &Geometry) -> u32 {
    shm_layout::MAX_DATA_SLOTS.saturating_sub(g.slot_count + 1)
}

/// The ring geometry of a namespace registered with `info`: `g` with room
/// for `PMIX_LOCAL_SIZE` clients when that is more than
/// `g.client_capacity`. Errors carry the reason.
pub fn client_capacity(g: &Geometry, info: &[Info]) -> Result<Geometry, (Status, String)> {
    let mut out = *g;
    let Some(i) = info.iter().find(|i| i.key == attrs::PMIX_LOCAL_SIZE) else {
        return Ok(out);
    };
    let n = i
        .value
        .as_integer()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            (
                Status::ERR_BAD_PARAM,
                format!(
                    "PMIX_LOCAL_SIZE must be an unsigned integer, not {:?}",
                    i.value
                ),
            )
        })?;
    let max = max_local_clients(g);
    if n > max {
        return Err((
            Status::ERR_OUT_OF_RESOURCE,
            format!(
                "PMIX_LOCAL_SIZE {n}: a namespace's ring holds at most {max} local clients with {} ring slots (slot_count + clients + 1 must fit in 16 bits); split the node's processes over several namespaces",
                g.slot_count
            ),
        ));
    }
    out.client_capacity = out.client_capacity.max(n);
    Ok(out)
}

/// The report `fastpmix inspect` prints.
pub(crate) fn inspect_text(shared: &Shared) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "server {} (socket {})",
        shared.me,
        shared.sock_path.display()
    );
    let _ = writeln!(
        t,
        "progress thread: {}; {}",
        shared.plan.reason,
        lock(&shared.bound).as_deref().unwrap_or("not started")
    );
    thread_lines(&mut t, std::process::id(), "  ");
    {
        let c = lock(&shared.cache);
        let (env, job) = c.occupancy();
        let _ = writeln!(
            t,
            "cache: {env} environment event(s), {job} job event(s) retained for clients not yet connected (capacity {} each)",
            c.capacity()
        );
    }
    let m = shared.nspaces();
    let mut names: Vec<&Nspace> = m.keys().collect();
    names.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    for n in names {
        let ns = &m[n];
        let st = ns.seg.region().state();
        let _ = writeln!(
            t,
            "namespace {n}: ring {} ({} slots of {} B, {} client entries), head {}, {} registered clients",
            ns.seg.name(),
            ns.seg.region().geometry().slot_count,
            ns.seg.region().geometry().slot_size,
            ns.seg.region().geometry().client_capacity,
            st.head,
            ns.clients.len()
        );
        let mut ranks: Vec<(&Rank, &ClientSlot)> = ns.clients.iter().collect();
        ranks.sort_by_key(|(r, _)| r.0);
        for (r, c) in ranks {
            let state = match (c.entry, c.finalized) {
                (Some(_), true) => "finalized",
                (Some(_), false) => "connected",
                (None, true) => "gone (finalized)",
                (None, false) => "not connected",
            };
            match c.entry {
                Some(e) => {
                    let cl = st.clients.iter().find(|x| x.index == e);
                    let cursor = ns.seg.region().cursor_of(e);
                    let _ = writeln!(
                        t,
                        "  rank {:<5} pid {:<8} {state:<16} entry {e:<3} cursor {cursor:<8} lag {:<6} lost {:<6} {}",
                        r.0,
                        c.pid.unwrap_or(0),
                        st.head.saturating_sub(cursor),
                        cl.map_or(0, |x| x.lost),
                        if cl.is_some_and(|x| x.waiting) { "asleep" } else { "awake" },
                    );
                    if let Some(pid) = c.pid.and_then(|p| u32::try_from(p).ok()) {
                        if let Some(cpus) = crate::place::process_cpus(pid) {
                            let _ = writeln!(t, "        process: CPUs {cpus}");
                        }
                        thread_lines(&mut t, pid, "        ");
                    }
                }
                None => {
                    let _ = writeln!(t, "  rank {:<5} {state}", r.0);
                }
            }
        }
    }
    t
}

/// One line per progress thread of `pid`: where it may and did last run.
fn thread_lines(t: &mut String, pid: u32, indent: &str) {
    use std::fmt::Write as _;
    for th in crate::place::progress_threads(pid) {
        let last = th.last_cpu.map_or("?".to_owned(), |c| c.to_string());
        let _ = writeln!(
            t,
            "{indent}thread {} (tid {}): CPUs {}, last ran on CPU {last}",
            th.name, th.tid, th.allowed
        );
    }
}

fn trace_line(from: Via, n: &Notification, r: &Route) -> String {
    let rings: Vec<&str> = r.rings.iter().map(|n| n.as_str()).collect();
    format!(
        "event {} ({}) from {} [{:?}] range {:?} -> rings [{}]{}{}",
        n.code,
        n.code.0,
        n.source,
        from,
        n.range,
        rings.join(", "),
        if r.upcall { " +host" } else { "" },
        if r.server_handlers { " +server" } else { "" },
    )
}

impl Server {
    /// Configure a server.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            me: None,
            dir: None,
            dir_base: None,
            geometry: Geometry::default(),
            host: Arc::new(NoHost),
            trace: None,
            cache_size: cache::DEFAULT_CAPACITY,
            attrs: Vec::new(),
            placement: None,
            term_grace: DEFAULT_TERM_GRACE,
            monitoring: true,
            log_sinks: None,
            direct_bells: crate::sync::Reactor::MAX_WORDS,
        }
    }

    /// The server's identity.
    pub fn me(&self) -> Proc {
        self.shared.me
    }

    /// The control socket's path.
    pub fn address(&self) -> &Path {
        &self.shared.sock_path
    }

    /// The server process's own event engine (register handlers for
    /// `PMIX_ERR_LOST_CONNECTION` and friends here).
    pub fn engine(&self) -> &Engine {
        &self.shared.engine
    }

    /// Registers a namespace and its job information (what its clients may
    /// query: job size, local peers, maps...; see [`jobinfo`]). Creates its
    /// ring, whose client table holds `PMIX_LOCAL_SIZE` clients (from
    /// `info`) or the builder's geometry's `client_capacity` (default 64),
    /// whichever is larger: [`client_capacity`]. Refused, with the limit
    /// and how to raise it on stderr: job information larger than
    /// [`MAX_JOB_INFO`] (`PMIX_ERR_BAD_PARAM`), a `PMIX_LOCAL_SIZE` that is
    /// not an unsigned integer (`PMIX_ERR_BAD_PARAM`) or larger than
    /// [`max_local_clients`] (`PMIX_ERR_OUT_OF_RESOURCE`).
    pub fn register_nspace(&self, ns: &Nspace, info: Vec<Info>) -> Result<(), Status> {
        self.live()?;
        if ns.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let info = jobkeys::normalize(info);
        let size = job_info_size(&info)?;
        if size > MAX_JOB_INFO {
            self.shared.say(&format!(
                "register_nspace {ns} refused: its job information is {size} bytes encoded, more than the {MAX_JOB_INFO} a client's Welcome can carry (MAX_JOB_INFO, a build-time limit of the control protocol: about 1 450 ranks of per-process data on one node); register less per-process data"
            ));
            return Err(Status::ERR_BAD_PARAM);
        }
        let g = client_capacity(&self.shared.geometry, &info).inspect_err(|(_, why)| {
            self.shared
                .say(&format!("register_nspace {ns} refused: {why}"));
        });
        let g = g.map_err(|(s, _)| s)?;
        let mut m = self.shared.nspaces();
        if m.contains_key(ns) {
            return Err(Status::ERR_BAD_PARAM);
        }
        let seg = Segment::create(g).map_err(|e| {
            self.shared.say(&format!(
                "cannot create the ring of namespace {ns} ({} clients): {e}",
                g.client_capacity
            ));
            Status::ERR_OUT_OF_RESOURCE
        })?;
        let writer = Mutex::new(RingWriter::new(seg.region().clone()));
        m.insert(
            *ns,
            Ns {
                seg,
                writer,
                info,
                clients: FastMap::default(),
                owner: None,
                pending: 0,
            },
        );
        drop(m);
        self.shared.command(Cmd::Watch(*ns));
        Ok(())
    }

    /// Removes a namespace, its clients and its ring.
    pub fn deregister_nspace(&self, ns: &Nspace) -> Result<(), Status> {
        self.live()?;
        if self.shared.nspaces().remove(ns).is_none() {
            return Err(Status::ERR_NOT_FOUND);
        }
        self.shared.command(Cmd::Forget(*ns));
        Ok(())
    }

    /// Registers a local client: it may connect as `proc` when its socket
    /// peer credentials carry `uid`/`gid`. The namespace's ring belongs to
    /// its first client's uid; all its clients must share it. Refused with
    /// `PMIX_ERR_OUT_OF_RESOURCE` (and the limit on stderr) when the other
    /// registered clients that hold or may still claim an entry of the
    /// ring's client table already fill it, so that every registered
    /// client can connect at once (a fence over them all completes); ones
    /// that finalized, left, or were reported ended do not count.
    pub fn register_client(&self, proc: &Proc, uid: u32, gid: u32) -> Result<(), Status> {
        self.live()?;
        if !proc.rank.is_real() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut m = self.shared.nspaces();
        let ns = m.get_mut(&proc.nspace).ok_or(Status::ERR_NOT_FOUND)?;
        let cap = ns.seg.region().geometry().client_capacity;
        let others = ns
            .clients
            .iter()
            .filter(|(r, c)| **r != proc.rank && c.may_hold_an_entry())
            .count();
        if others >= cap as usize {
            self.shared.say(&format!(
                "register_client {proc} refused: namespace {} has {others} registered clients that hold or may claim an entry of its ring's client table, which has {cap} (sized at register_nspace from PMIX_LOCAL_SIZE, or the server geometry's client_capacity when larger); register the namespace with PMIX_LOCAL_SIZE of at least {}, or deregister clients that will not come",
                proc.nspace,
                others + 1
            ));
            return Err(Status::ERR_OUT_OF_RESOURCE);
        }
        match ns.owner {
            Some((u, _)) if u != uid => return Err(Status::ERR_BAD_PARAM),
            Some(_) => {}
            None => {
                if uid != self.shared.euid {
                    ns.seg
                        .set_owner(uid, gid)
                        .map_err(|_| Status::ERR_NOT_SUPPORTED)?;
                }
                ns.owner = Some((uid, gid));
            }
        }
        if uid != self.shared.euid {
            self.shared.open_dir()?;
        }
        let old = ns.clients.insert(
            proc.rank,
            ClientSlot {
                uid,
                gid,
                ..ClientSlot::default()
            },
        );
        if old.is_none_or(|o| o.ever_connected) {
            ns.pending += 1;
        }
        drop(m);
        // A host may fork and exec before it registers: the process's
        // Hello may be waiting for this.
        self.shared.command(Cmd::Registered);
        Ok(())
    }

    /// Forgets a client. A connected one is disconnected (its socket is
    /// closed and its entry released; the host hears `client_finalized`
    /// with `lost = false`: the server asked for it).
    pub fn deregister_client(&self, proc: &Proc) -> Result<(), Status> {
        self.live()?;
        let mut m = self.shared.nspaces();
        let ns = m.get_mut(&proc.nspace).ok_or(Status::ERR_NOT_FOUND)?;
        let slot = ns.clients.remove(&proc.rank).ok_or(Status::ERR_NOT_FOUND)?;
        if !slot.ever_connected && !slot.ended {
            ns.pending = ns.pending.saturating_sub(1);
        }
        drop(m);
        // What was kept for it is for nobody now (not for a client
        // registered later under the same name).
        lock(&self.shared.cache).forget_client(proc);
        // Even when not connected: a fence waiting for it must fail.
        self.shared.command(Cmd::Disconnect(*proc));
        Ok(())
    }

    /// The environment a child needs to find this server as `proc`, whether
    /// or not `proc` is registered yet.
    pub fn setup_fork(&self, proc: &Proc) -> Result<Vec<(String, String)>, Status> {
        self.live()?;
        // Any order the Standard allows: resource managers call this before
        // registering the client (and in the child they forked, where a lock
        // another thread held at the fork stays held, so nothing here
        // locks). The process must be registered by the time it connects.
        Ok(vec![
            (NAMESPACE_ENV.into(), proc.nspace.as_str().into()),
            (RANK_ENV.into(), proc.rank.0.to_string()),
            (
                SERVER_ADDR_ENV.into(),
                self.shared.sock_path.display().to_string(),
            ),
        ])
    }

    /// An event handed to the server by its host (never echoed back to the
    /// host). The source is the notification's. An event saying that a
    /// process ended ([`reports_an_end`]) about a registered client that is
    /// not connected marks it ended: fences stop waiting for it (they fail
    /// with `PMIX_ERR_LOST_CONNECTION`), as for a deregistered one.
    pub fn notify(&self, n: Notification) -> Result<(), Status> {
        self.live()?;
        if reports_an_end(n.code) {
            self.mark_ended(&n.info);
        }
        let class = EventClass::of(n.code);
        self.shared.dispatch(Via::Host, n, class).map(|_| ())
    }

    /// Marks the not-connected registered clients `info` names as affected
    /// ended.
    fn mark_ended(&self, info: &[Info]) {
        let mut ended = Vec::new();
        {
            let mut m = self.shared.nspaces();
            let named = info
                .iter()
                .filter(|i| {
                    i.key == attrs::PMIX_EVENT_AFFECTED_PROC
                        || i.key == attrs::PMIX_EVENT_AFFECTED_PROCS
                })
                .filter_map(|i| i.value.as_procs())
                .flatten();
            for p in named {
                let Some(ns) = m.get_mut(&p.nspace) else {
                    continue;
                };
                let ranks: Vec<Rank> = if p.rank == Rank::WILDCARD {
                    ns.clients.keys().copied().collect()
                } else {
                    vec![p.rank]
                };
                for r in ranks {
                    let Some(c) = ns.clients.get_mut(&r) else {
                        continue;
                    };
                    if c.entry.is_some() || c.ended || c.finalized {
                        continue;
                    }
                    c.ended = true;
                    if !c.ever_connected {
                        ns.pending = ns.pending.saturating_sub(1);
                    }
                    ended.push(Proc {
                        nspace: p.nspace,
                        rank: r,
                    });
                }
            }
        }
        if ended.is_empty() {
            return;
        }
        {
            let mut c = lock(&self.shared.cache);
            for p in &ended {
                c.forget_client(p);
            }
        }
        self.shared.command(Cmd::Settle);
    }

    /// An event the server generates itself, with the server as source
    /// (passed up to the host as its range says).
    pub fn notify_as_server(&self, mut n: Notification) -> Result<(), Status> {
        self.live()?;
        n.source = self.shared.me;
        let class = EventClass::of(n.code);
        self.shared.dispatch(Via::Server, n, class).map(|_| ())
    }

    /// `PMIX_JCTRL_PREEMPT_ALERT` (from the host) to the processes among
    /// `targets` (empty: all) that declared `PMIX_JOB_CTRL_PREEMPTIBLE`,
    /// with `info` attached. Returns how many it reached.
    pub fn preempt_alert(&self, targets: &[Proc], info: Vec<Info>) -> Result<usize, Status> {
        self.live()?;
        self.shared.preempt_alert(targets, info)
    }

    /// The cache's occupancy: environment events cached, and job events
    /// retained for clients that have not connected yet.
    pub fn cache_occupancy(&self) -> (usize, usize) {
        lock(&self.shared.cache).occupancy()
    }

    /// Snapshot of namespaces and their clients (for `fastpmix inspect`).
    pub fn namespaces(&self) -> Vec<NspaceState> {
        let m = self.shared.nspaces();
        let mut v: Vec<NspaceState> = m
            .iter()
            .map(|(n, ns)| {
                let st = ns.seg.region().state();
                let mut clients: Vec<ClientState> = ns
                    .clients
                    .iter()
                    .map(|(r, c)| ClientState {
                        rank: *r,
                        pid: c.pid,
                        connected: c.entry.is_some(),
                        ever_connected: c.ever_connected,
                        finalized: c.finalized,
                        cursor: c.entry.map(|e| ns.seg.region().cursor_of(e)),
                        requests: c.requests,
                    })
                    .collect();
                clients.sort_by_key(|c| c.rank.0);
                NspaceState {
                    nspace: *n,
                    segment: ns.seg.name().to_owned(),
                    head: st.head,
                    clients,
                }
            })
            .collect();
        v.sort_by(|a, b| a.nspace.as_str().cmp(b.nspace.as_str()));
        v
    }

    fn live(&self) -> Result<(), Status> {
        if self.shared.stopping.is_set() {
            Err(Status::ERR_INIT)
        } else {
            Ok(())
        }
    }

    /// Stops the progress thread, disconnects every client and removes the
    /// rings and the socket. Idempotent.
    pub fn stop(&self) {
        let t = lock(&self.thread).take();
        let Some(t) = t else { return };
        self.shared.stopping.set();
        self.shared.command(Cmd::Stop);
        let _ = t.join();
        self.shared.engine.shutdown();
        self.shared.nspaces().clear();
        let _ = std::fs::remove_file(&self.shared.sock_path);
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir(d);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One namespace as [`Server::namespaces`] reports it.
#[derive(Debug, Clone)]
pub struct NspaceState {
    /// The namespace.
    pub nspace: Nspace,
    /// Its ring segment.
    pub segment: String,
    /// Records published into it so far.
    pub head: u64,
    /// Its registered clients.
    pub clients: Vec<ClientState>,
}

/// One registered client.
#[derive(Debug, Clone)]
pub struct ClientState {
    /// Its rank.
    pub rank: Rank,
    /// Its pid once connected.
    pub pid: Option<i32>,
    /// Connected now.
    pub connected: bool,
    /// Connected at least once (a PMIx client, not a plain program).
    pub ever_connected: bool,
    /// Called finalize.
    pub finalized: bool,
    /// Its ring cursor while connected.
    pub cursor: Option<u64>,
    /// Requests it sent on its control socket after `Hello` (the slow
    /// path: events never travel there).
    pub requests: u64,
}

/// Binds the control socket at `path` (a stale socket of ours there is
/// replaced: the directory is private), non-blocking, mode 0666: who may
/// reach it is the directory's business (private to the server's uid until
/// a client of another uid is registered, see [`Server::register_client`]),
/// and who is who is `SO_PEERCRED`'s.
fn bind_control(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let listener = UnixListener::bind(path)?;
    listener.set_nonblocking(true)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    Ok(listener)
}

fn eventfd() -> Result<OwnedFd, Status> {
    // SAFETY: plain syscall; the result is checked before use.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(Status::ERR_OUT_OF_RESOURCE);
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
