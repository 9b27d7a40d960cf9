//! Configuring and starting a server: the builder, the control socket
//! and the progress thread's placement.

use super::cache;
use super::dir;
use super::host::EnvRefs;
use super::jobs::DEFAULT_TERM_GRACE;
use super::jobs::TERM_GRACE_MS;
use super::lock;
use super::progress;
use super::shared::{Scratch, TraceFn};
use super::worker::Worker;
use super::FastMap;
use super::Host;
use super::NoHost;
use super::Server;
use super::Shared;
use super::CACHE_SIZE;
use crate::event::Engine;
use crate::ring::Segment;
use crate::sync::Latch;
use crate::types::attrs;
use crate::types::Info;
use crate::types::Proc;
use crate::types::Status;
use shm_layout::Geometry;
use std::collections::HashMap;
use std::os::fd::FromRawFd;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

/// Most bytes a namespace's job information may take encoded: every
/// client gets it in its `Welcome`, which must fit in one control frame
/// ([`crate::wire::control::MAX_FRAME`]) with the cached events. About
/// 1 450 ranks of [`jobinfo::single_node`].
pub const MAX_JOB_INFO: usize = crate::wire::control::MAX_FRAME / 2;

/// The encoded size of job information, as a `Welcome` carries it.
pub(super) fn job_info_size(info: &[Info]) -> Result<usize, Status> {
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
pub(super) fn server_plan(
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
        // The node's description for the clients (`setup_fork`), made now
        // from the topology the plan loaded.
        let _ = crate::place::machine_text();
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
        // Before the server exists, what goes wrong is said where its
        // diagnostics will go: the trace sink, else stderr.
        let trace = self.trace.clone();
        let say = |msg: String| match &trace {
            Some(t) => t(&msg),
            None => eprintln!("fastpmix server: {msg}"),
        };
        let (dir, own_dir, dir_alive) = match self.dir {
            Some(d) => {
                dir::check_private(&d).map_err(|e| {
                    say(format!("refusing the control directory: {e}"));
                    Status::ERR_BAD_PARAM
                })?;
                (d, false, None)
            }
            None => {
                let base = self.dir_base.unwrap_or_else(dir::temp_base);
                let d = dir::private_dir(&base, &format!("fastpmix-{pid}-")).map_err(|e| {
                    say(e.to_string());
                    Status::ERR_INIT
                })?;
                // At once: a server in another PID namespace cleaning up
                // must see this one alive (best effort: else the pid says).
                let alive = dir::hold(&d).ok();
                (d, true, alive)
            }
        };
        let sock_path = dir.join("ctl");
        let listener = match bind_control(&sock_path) {
            Ok(l) => l,
            Err(e) => {
                say(format!("cannot listen on {}: {e}", sock_path.display()));
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
                unlaned: rkyv::util::AlignedVec::with_capacity(1024),
            }),
            plan,
            bound: Mutex::new(None),
            seqs: Mutex::new(FastMap::default()),
            own_seqs: Mutex::new(FastMap::default()),
            trace: self.trace,
            stopping: Latch::default(),
            sock_path: sock_path.clone(),
            own_dir: own_dir.then(|| dir.clone()),
            _dir_alive: dir_alive,
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
            worker: Worker::new(),
            own_data: Default::default(),
            early: Default::default(),
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

/// Binds the control socket at `path` (a stale socket of ours there is
/// replaced: the directory is private), non-blocking, mode 0666: who may
/// reach it is the directory's business (private to the server's uid until
/// a client of another uid is registered, see [`Server::register_client`]),
/// and who is who is `SO_PEERCRED`'s.
pub(super) fn bind_control(path: &Path) -> std::io::Result<UnixListener> {
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

pub(super) fn eventfd() -> Result<OwnedFd, Status> {
    // SAFETY: plain syscall; the result is checked before use.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(Status::ERR_OUT_OF_RESOURCE);
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
