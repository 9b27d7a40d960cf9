//! The client library: connects to the node server, maps its namespace's
//! ring, hosts the process's event engine.
//!
//! Threads: the engine's progress thread, which reads the ring itself (it
//! sleeps on its ring wake word, the ring's doorbell and its own queue's at
//! once, one `futex_waitv`) and runs every handler; and a control thread
//! that reads the socket (replies, and the server's death: the
//! socket closes when the server process dies, so `PMIX_ERR_LOST_CONNECTION`
//! reaches the handlers at once, not after a timeout).
//!
//! One client per process: [`Client::init`] twice returns the same client
//! until [`Client::finalize`].

mod fence;
mod get;
mod jobs;
mod placement;
mod query;

pub use crate::server::query::Query;
pub use jobs::{Callback, Outcome};
pub use placement::BIND_PROGRESS_ENV;

use crate::event::{
    Engine, Event, EventClass, Feed, HandlerRef, Keeper, Notification, Origin, Registration,
};
use crate::ring::{Next, RingReader, Segment, SubmitError, Submitter};
use crate::server::{NAMESPACE_ENV, RANK_ENV, SERVER_ADDR_ENV};
use crate::sync::{Cell32, Latch};
use crate::types::{attrs, DataRange, Info, Proc, Status, Value};
use crate::wire::control::{self, ArchivedReply, Request, PROTOCOL_VERSION};
use crate::wire::{
    event_from_archived, event_into_record, info_from_archived, now_realtime_ns,
    proc_from_archived, WireEvent,
};
use shm_layout::record::flags;
use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use crate::types::{EVENTS_LOST, EVENTS_LOST_COUNT};

/// How long `init` waits for the server's answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a notify waits for room in a full submission queue.
const SUBMIT_TIMEOUT: Duration = Duration::from_secs(5);

static CURRENT: Mutex<Option<Client>> = Mutex::new(None);

/// A reply frame from the control thread, or the connection's loss.
type ReplyBody = Result<Vec<u8>, Status>;

use crate::sync::lock;

/// This process's connection to its node server.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("me", &self.inner.me)
            .finish()
    }
}

struct Inner {
    me: Proc,
    server: Proc,
    engine: Engine,
    job_info: Vec<Info>,
    /// Where the job's ranks are, read once from `job_info`.
    job_map: crate::server::jobkeys::JobMap,
    /// Requests are serialised; each waits for its reply on `replies`.
    ctl: Mutex<(UnixStream, mpsc::Receiver<ReplyBody>)>,
    /// The submission queue, and the record every `notify` encodes
    /// through (its strings and vectors keep their heap buffers).
    submitter: Mutex<(Submitter, shm_layout::record::EventRecord)>,
    /// Codes of each registration, for the server's environment refcounts.
    codes: Mutex<HashMap<u64, Vec<Status>>>,
    /// Events offered to every new registration (see [`ReplayCache`]).
    replay: Arc<Mutex<ReplayCache>>,
    stop: Arc<Latch>,
    lost: Arc<Latch>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Job-management requests waiting for their `Result`.
    pending: Arc<Mutex<jobs::Pending>>,
    /// This client's entry in the namespace's client table.
    entry: u32,
    seg: Segment,
    /// [`Client::placement`].
    placement: String,
    /// The process that connected: a child it forks shares the connection
    /// and the submission queue, but not the threads that serve them.
    pid: u32,
}

/// Where to find the server and who this process is.
#[derive(Debug, Clone)]
pub struct Params {
    /// The server's control socket.
    pub server: PathBuf,
    /// This process.
    pub me: Proc,
    /// Where the progress thread runs (see `place`; default `Auto`).
    pub placement: crate::place::Placement,
    /// Fail init with `PMIX_ERR_NOT_AVAILABLE` when the placement cannot
    /// be applied (`PMIX_BIND_REQUIRED`); otherwise the thread runs
    /// unpinned and says so on stderr.
    pub bind_required: bool,
}

impl Params {
    /// Explicit parameters with the default placement (`Auto`).
    pub fn new(server: impl Into<PathBuf>, me: Proc) -> Params {
        Params {
            server: server.into(),
            me,
            placement: crate::place::Placement::Auto,
            bind_required: false,
        }
    }

    /// From `PMIX_NAMESPACE`, `PMIX_RANK`, `FASTPMIX_SERVER_ADDR` and
    /// [`BIND_PROGRESS_ENV`] (a malformed value is `PMIX_ERR_BAD_PARAM`).
    pub fn from_env() -> Result<Params, Status> {
        let ns = std::env::var(NAMESPACE_ENV).map_err(|_| Status::ERR_INIT)?;
        let rank: u32 = std::env::var(RANK_ENV)
            .ok()
            .and_then(|r| r.parse().ok())
            .ok_or(Status::ERR_INIT)?;
        let server = std::env::var_os(SERVER_ADDR_ENV).ok_or(Status::ERR_INIT)?;
        Ok(Params {
            server: server.into(),
            me: Proc::new(&ns, rank).map_err(|_| Status::ERR_INIT)?,
            placement: placement::from_env()?,
            bind_required: false,
        })
    }
}

impl Client {
    /// Connects using the environment the server's `setup_fork` provided.
    /// A second call returns the same client.
    pub fn init() -> Result<Client, Status> {
        let mut cur = lock(&CURRENT);
        if let Some(c) = &*cur {
            return Ok(c.clone());
        }
        let c = Client::connect(&Params::from_env()?)?;
        *cur = Some(c.clone());
        Ok(c)
    }

    /// Connects with explicit parameters (the process-wide client is set
    /// unless one exists: then that one is returned).
    pub fn init_with(p: &Params) -> Result<Client, Status> {
        let mut cur = lock(&CURRENT);
        if let Some(c) = &*cur {
            return Ok(c.clone());
        }
        let c = Client::connect(p)?;
        *cur = Some(c.clone());
        Ok(c)
    }

    fn connect(p: &Params) -> Result<Client, Status> {
        // Decided here, on the thread that holds the process's binding.
        let plan = placement::decide(&p.placement, p.bind_required)?;
        let mut stream = UnixStream::connect(&p.server).map_err(|_| Status::ERR_UNREACH)?;
        stream
            .set_read_timeout(Some(CONNECT_TIMEOUT))
            .map_err(|_| Status::ERR_INIT)?;
        control::send(
            &mut stream,
            &Request::Hello {
                version: PROTOCOL_VERSION,
                nspace: p.me.nspace.as_str().to_owned(),
                rank: p.me.rank.0,
            },
        )
        .map_err(|_| Status::ERR_UNREACH)?;
        let body = control::read_body(&mut stream).map_err(|_| Status::ERR_UNREACH)?;
        let (segment, entry, server, job_info, replay) =
            match control::reply(&body).map_err(|_| Status::ERR_INIT)? {
                ArchivedReply::Welcome {
                    segment,
                    client,
                    server,
                    job_info,
                    replay,
                    lost,
                    cache_size,
                } => {
                    let server = proc_from_archived(server).map_err(|_| Status::ERR_INIT)?;
                    let mut cache = ReplayCache::new(server, cache_size.to_native());
                    for r in replay.iter() {
                        // An undecodable record is an event this client lost.
                        match event_from_archived(r).and_then(|mut w| {
                            add_proxy(&mut w, server);
                            into_event(w)
                        }) {
                            Ok(ev) => cache.push(Arc::new(ev)),
                            Err(_) => cache.push_wire(lost_event(server, 1)),
                        }
                    }
                    if lost.to_native() > 0 {
                        cache.push_wire(lost_event(server, lost.to_native()));
                    }
                    (
                        segment.as_str().to_owned(),
                        client.to_native(),
                        server,
                        job_info
                            .iter()
                            .map(info_from_archived)
                            .collect::<Result<Vec<Info>, Status>>()
                            .map_err(|_| Status::ERR_INIT)?,
                        cache,
                    )
                }
                ArchivedReply::Refused { status, why } => {
                    eprintln!(
                        "fastpmix client {}: the server refused: {}",
                        p.me,
                        why.as_str()
                    );
                    return Err(Status(status.to_native()));
                }
                ArchivedReply::Done { .. }
                | ArchivedReply::Text { .. }
                | ArchivedReply::Result { .. } => return Err(Status::ERR_INIT),
            };
        // Where the host registered the local peers' bindings, their cores
        // are compute cores too.
        let plan = placement::beside_peers(plan, &p.placement, &placement::peer_cpus(&job_info));
        let replay = Arc::new(Mutex::new(replay));
        stream
            .set_read_timeout(None)
            .map_err(|_| Status::ERR_INIT)?;
        let seg =
            Segment::open(&segment, CONNECT_TIMEOUT).map_err(|_| Status::ERR_NO_PERMISSIONS)?;
        let reader = RingReader::adopt(seg.region().clone(), entry).ok_or(Status::ERR_INIT)?;
        let submitter = Submitter::new(seg.region().clone(), entry);
        let feed = RingFeed {
            reader,
            me: p.me,
            server,
            losses: LossAccount::default(),
        };
        let (bound_tx, bound_rx) = mpsc::sync_channel(1);
        let engine = Engine::builder(p.me)
            .thread_name("fastpmix-events")
            .feed(Box::new(feed))
            .keeper(Arc::new(ReplayKeeper(replay.clone())))
            .on_start(placement::start_hook(plan.clone(), bound_tx))
            .build()?;
        let placement = placement::settle(&plan, &bound_rx, p.bind_required)?;
        let stop = Arc::new(Latch::default());
        let lost = Arc::new(Latch::default());
        let (tx, rx) = mpsc::channel();
        let read_half = stream.try_clone().map_err(|_| Status::ERR_INIT)?;
        let mut threads = Vec::new();
        let (cb_tx, cb_rx) = mpsc::channel();
        let pending = Arc::new(jobs::Pending::new(cb_tx));
        threads.push(
            std::thread::Builder::new()
                .name("fastpmix-cb".into())
                .spawn(move || jobs::callback_thread(cb_rx))
                .map_err(|_| Status::ERR_OUT_OF_RESOURCE)?,
        );
        {
            let (engine, stop, lost, me) = (engine.clone(), stop.clone(), lost.clone(), p.me);
            let ctl = Control {
                s: read_half,
                tx,
                pending: pending.clone(),
            };
            threads.push(
                std::thread::Builder::new()
                    .name("fastpmix-ctl".into())
                    .spawn(move || control_thread(ctl, engine, stop, lost, me, server))
                    .map_err(|_| Status::ERR_OUT_OF_RESOURCE)?,
            );
        }
        let client = Client {
            inner: Arc::new(Inner {
                pid: std::process::id(),
                me: p.me,
                server,
                engine,
                job_map: crate::server::jobkeys::JobMap::from_info(&job_info),
                job_info,
                ctl: Mutex::new((stream, rx)),
                submitter: Mutex::new((submitter, Default::default())),
                codes: Mutex::new(HashMap::new()),
                replay,
                stop,
                lost,
                threads: Mutex::new(threads),
                pending,
                entry,
                seg,
                placement,
            }),
        };
        // A one-shot handler's environment codes are forgotten like a
        // deregistered one's (a weak reference: the engine must not keep
        // the client alive).
        let weak = Arc::downgrade(&client.inner);
        client.inner.engine.on_retire(move |r| {
            if let Some(inner) = weak.upgrade() {
                Client { inner }.forget_registration(r);
            }
        });
        Ok(client)
    }

    /// Where the progress thread runs and why (one line, as `fastpmix
    /// inspect` shows it).
    pub fn placement(&self) -> &str {
        &self.inner.placement
    }

    /// This process.
    pub fn me(&self) -> Proc {
        self.inner.me
    }

    /// The server's identity.
    pub fn server(&self) -> Proc {
        self.inner.server
    }

    /// This process's event engine.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The job information the server registered for this namespace.
    pub fn job_info(&self) -> &[Info] {
        &self.inner.job_info
    }

    /// Has the connection to the server been lost?
    pub fn is_lost(&self) -> bool {
        self.inner.lost.is_set()
    }

    /// Whether this is a child forked after the connection was made. Such
    /// a child must not use it: its requests would take the parent's
    /// replies and its records the parent's sequence, and the threads that
    /// serve the connection stayed in the parent. Every call then returns
    /// `PMIX_ERR_INIT` at once, and the parent's connection is untouched.
    pub fn forked(&self) -> bool {
        std::process::id() != self.inner.pid
    }

    fn live(&self) -> Result<(), Status> {
        if self.forked() || self.inner.stop.is_set() {
            Err(Status::ERR_INIT)
        } else if self.inner.lost.is_set() {
            Err(Status::ERR_UNREACH)
        } else {
            Ok(())
        }
    }

    fn request(&self, r: &Request) -> Result<Status, Status> {
        self.live()?;
        let g = lock(&self.inner.ctl);
        control::send(&g.0, r).map_err(|e| control::send_status(&e))?;
        let body = g.1.recv().map_err(|_| Status::ERR_UNREACH)??;
        let mut aligned = rkyv::util::AlignedVec::<16>::new();
        aligned.extend_from_slice(&body);
        match control::reply(&aligned).map_err(|_| Status::ERR_UNREACH)? {
            ArchivedReply::Done { status } => Ok(Status(status.to_native())),
            ArchivedReply::Refused { status, .. } => Err(Status(status.to_native())),
            ArchivedReply::Welcome { .. }
            | ArchivedReply::Text { .. }
            | ArchivedReply::Result { .. } => Err(Status::ERROR),
        }
    }

    /// Registers an event handler (`PMIx_Register_event_handler`). Handlers
    /// for environment codes are announced to the server, which tells its
    /// host once per code.
    pub fn register(&self, reg: Registration) -> Result<HandlerRef, Status> {
        match self.register_inline(reg)? {
            Ok(r) => Ok(r),
            Err(reg) => self.register_then(reg, |_, _| {}),
        }
    }

    /// The fast path of [`Client::register`]: when no cached event could
    /// reach the handler there is nothing to replay, so it is activated
    /// right here, on the caller's thread, without a trip through the
    /// progress thread. Under the replay cache's lock, so that an event
    /// being cached meanwhile either is seen here (queued path) or finds
    /// the handler in [`ReplayCache::inline`] (delivered to it by the
    /// progress thread). `Ok(Err(reg))`: take the queued path.
    fn register_inline(
        &self,
        reg: Registration,
    ) -> Result<Result<HandlerRef, Registration>, Status> {
        let engine = &self.inner.engine;
        if engine.on_progress_thread() || self.live().is_err() {
            return Ok(Err(reg));
        }
        let mut cache = lock(&self.inner.replay);
        if cache.inline.len() >= MAX_INLINE || cache.may_reach(reg.codes()) {
            return Ok(Err(reg));
        }
        let env = Self::environment_codes(&reg);
        let r = engine.register(reg)?;
        cache.inline.push(r);
        drop(cache);
        self.announce(r, env)?;
        Ok(Ok(r))
    }

    /// [`Client::register`] that also calls `on_active` with the outcome
    /// right before the handler becomes active, on the progress thread:
    /// the C ABI's non-blocking registration callback, which the Standard
    /// runs before any event reaches the handler. Called from a handler,
    /// this returns the reference at once and the handler becomes active
    /// (and is offered the cached events) when the current work returns.
    pub fn register_then(
        &self,
        reg: Registration,
        on_active: impl FnOnce(Status, HandlerRef) + Send + 'static,
    ) -> Result<HandlerRef, Status> {
        if let Err(e) = self.live() {
            on_active(e, HandlerRef(0));
            return Err(e);
        }
        let env = Self::environment_codes(&reg);
        let engine = &self.inner.engine;
        // Activation happens on the progress thread right after the
        // callback: the events cached so far are offered to the new handler
        // alone, before any later event (FIFO), so each reaches it exactly
        // once.
        let (tx, rx) = mpsc::channel();
        let (cache, eng) = (self.inner.replay.clone(), engine.clone());
        // Called exactly once: by the engine, or below when it refuses.
        let slot = Arc::new(Mutex::new(Some(on_active)));
        let on = slot.clone();
        let r = match engine.register_deferred(reg, move |s, r| {
            if let Some(f) = lock(&on).take() {
                f(s, r);
            }
            if s.is_success() {
                for ev in lock(&cache).events() {
                    let _ = eng.deliver_to(ev.clone(), r);
                }
            }
            let _ = tx.send(s);
        }) {
            Ok(r) => r,
            Err(e) => {
                if let Some(f) = lock(&slot).take() {
                    f(e, HandlerRef(0));
                }
                return Err(e);
            }
        };
        // From inside a handler this thread cannot wait for its own queue:
        // the handler stays pending until the current work returns.
        if !engine.on_progress_thread() {
            rx.recv().map_err(|_| Status::ERR_INIT)?.into_result()?;
        }
        self.announce(r, env)?;
        Ok(r)
    }

    /// The environment codes of a registration: the server is told of them,
    /// unless it takes only this process's own events (PROC_LOCAL), which
    /// the host has no part in.
    fn environment_codes(reg: &Registration) -> Vec<Status> {
        if reg.proc_local() {
            return Vec::new();
        }
        reg.codes()
            .iter()
            .copied()
            .filter(|c| c.is_system_event())
            .collect()
    }

    /// Tells the server about a registration's environment codes (it tells
    /// its host once per code).
    fn announce(&self, r: HandlerRef, env: Vec<Status>) -> Result<(), Status> {
        if env.is_empty() {
            return Ok(());
        }
        let codes = env.iter().map(|c| c.0).collect();
        lock(&self.inner.codes).insert(r.0, env);
        self.request(&Request::RegisterEvents { codes })?;
        Ok(())
    }

    /// Non-blocking registration (the C ABI's `PMIx_Register_event_handler`
    /// with a callback). The handler takes its place and name among this
    /// process's registrations before this returns, as *pending*: chains
    /// skip it, but a later registration placed BEFORE or AFTER it finds
    /// it. On the progress thread, right before the handler becomes
    /// active: its environment codes are announced to the server (as the
    /// blocking form does before returning), `on_active` gets the outcome,
    /// and the events cached so far are offered to the handler alone,
    /// ahead of any later event. On an error return `on_active` is never
    /// called.
    pub fn register_nb(
        &self,
        reg: Registration,
        on_active: impl FnOnce(Status, HandlerRef) + Send + 'static,
    ) -> Result<(), Status> {
        self.live()?;
        let env = Self::environment_codes(&reg);
        let (cache, eng) = (self.inner.replay.clone(), self.inner.engine.clone());
        // Weak: the closure waits in the engine's queue; it must not keep
        // the client alive by itself.
        let me = Arc::downgrade(&self.inner);
        self.inner
            .engine
            .register_nb(reg, move |s, r| {
                if s.is_success() {
                    if let Some(inner) = me.upgrade() {
                        // A lost server only costs the environment events;
                        // the handler itself is registered.
                        let _ = Client { inner }.announce(r, env);
                    }
                }
                on_active(s, r);
                if s.is_success() {
                    for ev in lock(&cache).events() {
                        let _ = eng.deliver_to(ev.clone(), r);
                    }
                }
            })
            .into_result()
    }

    /// Deregisters a handler (`PMIx_Deregister_event_handler`).
    pub fn deregister(&self, r: HandlerRef) -> Result<(), Status> {
        self.inner.engine.deregister(r)?;
        self.forget_registration(r);
        Ok(())
    }

    /// What this client kept about a registration that is gone: its place
    /// among the inline replays, and the environment codes the server was
    /// told of (it tells its host when the last one goes).
    fn forget_registration(&self, r: HandlerRef) {
        lock(&self.inner.replay).inline.retain(|x| *x != r);
        if let Some(codes) = lock(&self.inner.codes).remove(&r.0) {
            let _ = self.request(&Request::DeregisterEvents {
                codes: codes.iter().map(|c| c.0).collect(),
            });
        }
    }

    /// `PMIx_Notify_event`: runs this process's in-range handlers and, unless
    /// the range is `PMIX_RANGE_PROC_LOCAL`, sends the event to the server
    /// through the submission queue (the server stamps the source and
    /// relays it; it never comes back to this process). The source is
    /// always this process.
    pub fn notify(&self, mut n: Notification) -> Result<(), Status> {
        self.live()?;
        n.source = self.inner.me;
        let class = EventClass::of(n.code);
        // Validate first: nothing is delivered or sent for a bad event.
        Event::validate(&n)?;
        if n.range != DataRange::PROC_LOCAL {
            // Sent before the local chain runs: a notify the server cannot
            // take (too large, server gone) leaves no trace anywhere. The
            // infos are lent to the encoder, not copied.
            let w = WireEvent {
                code: n.code,
                source: n.source,
                range: n.range,
                info: std::mem::take(&mut n.info),
                class,
                source_seq: 0,
                timestamp_ns: now_realtime_ns(),
            };
            let sent = self.submit(&w);
            n.info = w.info;
            sent?;
        }
        if n.range != DataRange::RM {
            self.inner.engine.notify(n)?;
        }
        Ok(())
    }

    /// Queues a record for the server, waiting for room in slices so that
    /// the server's death (noticed by the control thread) ends the wait.
    fn submit(&self, w: &WireEvent) -> Result<(), Status> {
        let deadline = std::time::Instant::now() + SUBMIT_TIMEOUT;
        let mut guard = lock(&self.inner.submitter);
        let (sub, rec) = &mut *guard;
        event_into_record(w, rec);
        loop {
            match sub.submit(rec, Some(Duration::from_millis(20))) {
                Ok(_) => return Ok(()),
                Err(SubmitError::TooLarge { .. }) => return Err(Status::ERR_BAD_PARAM),
                Err(SubmitError::Full) => {
                    self.live()?;
                    if std::time::Instant::now() >= deadline {
                        return Err(Status::ERR_TIMEOUT);
                    }
                }
            }
        }
    }

    /// `PMIx_Finalize`: tells the server, stops the threads, detaches. The
    /// process may `init` again afterwards. Idempotent.
    pub fn finalize(&self) -> Result<(), Status> {
        if self.inner.stop.is_set() {
            return Ok(());
        }
        let r = if self.inner.lost.is_set() {
            Ok(())
        } else {
            self.request(&Request::Finalize).map(|_| ())
        };
        self.inner.stop.set();
        {
            let g = lock(&self.inner.ctl);
            let _ = g.0.shutdown(std::net::Shutdown::Both);
        }
        lock(&self.inner.pending).close(Status::ERR_INIT);
        for t in lock(&self.inner.threads).drain(..) {
            // Finalize called from a job-management callback: that thread
            // ends by itself once its queue is closed.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
        self.inner.engine.shutdown();
        let mut cur = lock(&CURRENT);
        if cur
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(&c.inner, &self.inner))
        {
            *cur = None;
        }
        r
    }
}

/// The control thread's ends: the socket, the synchronous replies' channel
/// and the numbered requests.
struct Control {
    s: UnixStream,
    tx: mpsc::Sender<ReplyBody>,
    pending: Arc<Mutex<jobs::Pending>>,
}

/// Reads replies and notices the server's death (the socket closes).
/// `Result`s go to their numbered request; other replies, in order, to the
/// synchronous caller.
fn control_thread(
    mut c: Control,
    engine: Engine,
    stop: Arc<Latch>,
    lost: Arc<Latch>,
    me: Proc,
    server: Proc,
) {
    // The server's death is watched through a pidfd too: a killed server's
    // socket may close well after it died (the kernel releases the files
    // its io_uring holds asynchronously: tens of ms, seconds on a loaded
    // machine), while a pidfd is readable as soon as the process exited.
    // SO_PEERCRED names the process that listens (pid 0: not visible in
    // this pid namespace; then the socket alone tells).
    let server_exit = control::peer_cred(&c.s)
        .ok()
        .filter(|p| p.pid > 0)
        .and_then(|p| crate::sync::pidfd_open(p.pid).ok());
    loop {
        if let Some(pidfd) = &server_exit {
            if !readable_or_exited(&c.s, pidfd) {
                break;
            }
        }
        let Ok(body) = control::read_body(&mut c.s) else {
            break;
        };
        if matches!(control::reply(&body), Ok(ArchivedReply::Result { .. })) {
            lock(&c.pending).result(&body);
        } else if c.tx.send(Ok(body.to_vec())).is_err() {
            break;
        }
    }
    lock(&c.pending).close(Status::ERR_UNREACH);
    if stop.is_set() {
        return;
    }
    lost.set();
    let _ = c.tx.send(Err(Status::ERR_UNREACH));
    let n =
        Notification::new(Status::ERR_LOST_CONNECTION, me, DataRange::PROC_LOCAL).info(Info::new(
            attrs::PMIX_EVENT_AFFECTED_PROC,
            Value::Proc(Box::new(server)),
        ));
    let _ = engine.notify(n);
}

/// Waits until `s` has something to read (bytes, or its end) or the
/// process behind `pidfd` exited. `false`: it exited and `s` has nothing.
fn readable_or_exited(s: &UnixStream, pidfd: &std::os::fd::OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    let mut fds = [
        libc::pollfd {
            fd: s.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: two initialised pollfds in a live local array, of the
        // length passed; both descriptors are borrowed for the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n >= 0 {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true; // the read decides
        }
    }
    fds[0].revents != 0 || fds[1].revents == 0
}

/// The client's ring as the engine's [`Feed`]: the progress thread reads
/// records itself and sleeps on its ring wake word, the ring's doorbell and
/// its own doorbell at once.
/// Every record it cannot deliver (lag, corruption, undecodable) becomes
/// an [`EVENTS_LOST`] event carrying the count.
struct RingFeed {
    reader: RingReader,
    me: Proc,
    server: Proc,
    losses: LossAccount,
}

/// What the reader missed to lag, less its own records: a client that
/// notifies its own namespace skips its relayed records anyway, so missing
/// them is no loss (a notifier flooding its namespace was told it lost
/// thousands of events). The server numbers a client's records in its own
/// ring 1, 2, 3… (`source_seq`) and keeps the last number in the client's
/// entry (`own_relayed`), so the own records inside a gap are known:
/// exactly at the next own record read, or once the reader has caught up;
/// until then the gap's count waits here.
#[derive(Default)]
struct LossAccount {
    /// Missed to lag, not reported yet (some may be own records).
    pending: u64,
    /// The `source_seq` of the last own record accounted for: read, or
    /// known to have been in a gap.
    own_last: u64,
}

impl LossAccount {
    /// A gap of `missed` records; `relayed` is the entry's `own_relayed`
    /// loaded after the poll that found it. The lost to report now.
    fn gap(&mut self, missed: u64, relayed: u64) -> u64 {
        self.pending += missed;
        if relayed <= self.own_last {
            // No own record beyond those accounted for was published
            // before the gap was found: none is in it.
            std::mem::take(&mut self.pending)
        } else {
            0
        }
    }

    /// An own record numbered `seq` was read: own records between the last
    /// one and it were in the gaps before it. The lost to report now.
    fn own(&mut self, seq: u64) -> u64 {
        let in_gaps = seq.saturating_sub(self.own_last.saturating_add(1));
        self.own_last = self.own_last.max(seq);
        std::mem::take(&mut self.pending).saturating_sub(in_gaps)
    }

    /// The reader caught up (its poll found nothing) with `relayed` loaded
    /// before that poll: every own record up to it lies behind the cursor,
    /// so those not read were in gaps. The lost to report now.
    fn caught_up(&mut self, relayed: u64) -> u64 {
        if self.pending == 0 || relayed < self.own_last {
            // Nothing waits, or an own record was read before its number
            // was stored: settled at the next chance.
            return 0;
        }
        let in_gaps = relayed - self.own_last;
        self.own_last = relayed;
        std::mem::take(&mut self.pending).saturating_sub(in_gaps)
    }
}

/// Records taken per `pump`, so local work interleaves with a flood.
const PUMP_BATCH: usize = 64;

impl RingFeed {
    fn lost(&self, n: u64, out: &mut Vec<Event>) {
        // The keeper keeps it for handlers registered later.
        if let Ok(e) = into_event(lost_event(self.server, n)) {
            out.push(e);
        }
    }
}

/// What one poll of the ring came to.
enum Step {
    /// This client's own record, numbered: skipped.
    Own(u64),
    /// Handed to the engine.
    Delivered,
    /// Lost to corruption or a bad record.
    Lost(u64),
    /// A gap of this many records.
    Gap(u64),
    /// Nothing to read.
    Empty,
}

impl Feed for RingFeed {
    fn pump(&mut self, out: &mut Vec<Event>) -> usize {
        let before = out.len();
        for _ in 0..PUMP_BATCH {
            // Loaded before the poll only while a gap waits to be settled.
            let relayed_before = (self.losses.pending > 0).then(|| self.reader.own_relayed());
            let step = match self.reader.try_next() {
                Next::Record(r) => {
                    let rec = r.record();
                    // Our own event relayed back is never echoed: seen
                    // on the archived source, before any decoding (a
                    // sender that sleeps through its own events reads
                    // them in batches when half the ring is unread).
                    if rec.flags.to_native() & flags::RELAYED != 0
                        && rec.source.rank.to_native() == self.me.rank.0
                        && rec.source.nspace.as_str() == self.me.nspace.as_str()
                    {
                        Step::Own(rec.source_seq.to_native())
                    } else {
                        let decoded = event_from_archived(rec);
                        drop(r);
                        let ev = decoded.and_then(|mut w| {
                            add_proxy(&mut w, self.server);
                            into_event(w)
                        });
                        match ev {
                            Ok(ev) => {
                                out.push(ev);
                                Step::Delivered
                            }
                            Err(_) => Step::Lost(1),
                        }
                    }
                }
                Next::Lagged { missed } => Step::Gap(missed),
                Next::Corrupt { .. } => Step::Lost(1),
                Next::Empty => Step::Empty,
            };
            let lost = match step {
                Step::Own(seq) => self.losses.own(seq),
                Step::Gap(missed) => {
                    let relayed = self.reader.own_relayed();
                    self.losses.gap(missed, relayed)
                }
                Step::Lost(n) => n,
                Step::Delivered => 0,
                Step::Empty => relayed_before.map_or(0, |r| self.losses.caught_up(r)),
            };
            if lost > 0 {
                self.lost(lost, out);
            }
            if matches!(step, Step::Empty) {
                break;
            }
        }
        out.len() - before
    }

    fn ready(&self) -> bool {
        self.reader.has_news()
    }

    /// The ring reader's policy: spin only while runnable threads do not
    /// outnumber the cores (16 clients woken at once on 2 cores must not
    /// each burn their window).
    fn spin(&mut self, window: Duration) -> Duration {
        // No window (the placement gave this thread no core of its own):
        // the load need not be read at all (it cost five syscalls per
        // 50 ms of an idle receiver).
        if window.is_zero() {
            return Duration::ZERO;
        }
        self.reader.spin_budget().min(window)
    }

    fn prepare_sleep(&self) -> Option<[(&Cell32, u32); 2]> {
        self.reader.prepare_sleep()
    }

    fn end_sleep(&self) {
        self.reader.end_sleep()
    }
}

/// The client's [`Keeper`]: keeps for later registrations, from the ring
/// and this process's own PROC_LOCAL notifications alike, environment
/// events, `EVENTS_LOST` notices, and job events no handler took (not yet
/// received by this process) — unless `PMIX_EVENT_DO_NOT_CACHE`.
struct ReplayKeeper(Arc<Mutex<ReplayCache>>);

impl Keeper for ReplayKeeper {
    fn keep(
        &self,
        ev: &Arc<Event>,
        matched: bool,
        seen: &dyn Fn(HandlerRef) -> bool,
        progress: bool,
    ) -> Vec<HandlerRef> {
        let no_cache = ev
            .info()
            .iter()
            .any(|i| i.key == attrs::PMIX_EVENT_DO_NOT_CACHE && i.value.as_flag() == Some(true));
        let keep = !no_cache
            && (ev.class() == EventClass::Environment || ev.code() == EVENTS_LOST || !matched);
        // Inline handlers (`Client::register`'s fast path) the deciding
        // snapshot held are safe from then on, on the progress thread,
        // whose snapshots only grow newer: they are forgotten there only.
        if !keep {
            // Not kept: a handler registered meanwhile raced a live event,
            // as any registration may (skipped when the lock is busy).
            if progress {
                if let Ok(mut cache) = self.0.try_lock() {
                    if !cache.inline.is_empty() {
                        cache.inline.retain(|r| !seen(*r));
                    }
                }
            }
            return Vec::new();
        }
        let mut cache = lock(&self.0);
        cache.push(ev.clone());
        // An inline handler registered after the deciding snapshot found no
        // match for this event in the list because it was not there yet: it
        // gets the event now, alone.
        if progress {
            cache.inline.retain(|r| !seen(*r));
            cache.inline.clone()
        } else {
            cache.inline.iter().copied().filter(|r| !seen(*r)).collect()
        }
    }
}

/// Events a newly registered handler is offered, oldest first: the server's
/// cached environment events and the job events published for this client
/// before it connected (both from `Welcome`), environment events seen on
/// the ring or notified PROC_LOCAL by this process since, job events from
/// either that no handler took when they arrived, and `EVENTS_LOST`
/// notices. Bounded by what the server keeps for a client (its capacity
/// in environment events and as many job events, plus one notice: the
/// hand-off always fits); the oldest go first, and are counted: a handler
/// registered later is offered an `EVENTS_LOST` notice with that count
/// first.
struct ReplayCache {
    events: std::collections::VecDeque<Arc<Event>>,
    cap: usize,
    /// Events dropped from the front so far (a dropped `EVENTS_LOST`
    /// notice counts as the events it reported).
    evicted: u64,
    /// The notice for `evicted`, built when first offered.
    notice: Option<Arc<Event>>,
    server: Proc,
    /// Handlers registered inline (without a replay, under this cache's
    /// lock) that a dispatch may not have seen yet; see [`ReplayKeeper`].
    inline: Vec<HandlerRef>,
}

/// Most inline registrations awaiting a dispatch before registration takes
/// the queued path again (bounds [`ReplayCache::inline`] when no event
/// arrives for a long time).
const MAX_INLINE: usize = 256;

impl ReplayCache {
    /// `server_cap`: the server's cache capacity.
    fn new(server: Proc, server_cap: u32) -> ReplayCache {
        let cap = usize::try_from(server_cap).unwrap_or(usize::MAX / 4);
        ReplayCache {
            events: Default::default(),
            cap: cap.saturating_mul(2).saturating_add(1),
            evicted: 0,
            notice: None,
            server,
            inline: Vec::new(),
        }
    }

    fn push(&mut self, ev: Arc<Event>) {
        if self.events.len() >= self.cap {
            if let Some(old) = self.events.pop_front() {
                self.evicted = self.evicted.saturating_add(lost_count(&old));
                self.notice = None;
            }
        }
        self.events.push_back(ev);
    }

    /// Could a cached event reach a handler for `codes` (empty: a default
    /// handler)? By code only: filters can only narrow it.
    fn may_reach(&self, codes: &[Status]) -> bool {
        let notice = self.evicted > 0;
        if codes.is_empty() {
            notice || !self.events.is_empty()
        } else {
            notice && codes.contains(&EVENTS_LOST)
                || self.events.iter().any(|e| codes.contains(&e.code()))
        }
    }

    fn push_wire(&mut self, w: WireEvent) {
        if let Ok(ev) = into_event(w) {
            self.push(Arc::new(ev));
        }
    }

    /// What a new handler is offered, oldest first.
    fn events(&mut self) -> impl Iterator<Item = &Arc<Event>> {
        if self.evicted > 0 && self.notice.is_none() {
            self.notice = into_event(lost_event(self.server, self.evicted))
                .ok()
                .map(Arc::new);
        }
        self.notice.iter().chain(self.events.iter())
    }
}

/// How many events dropping `ev` from the replay list loses.
fn lost_count(ev: &Event) -> u64 {
    if ev.code() != EVENTS_LOST {
        return 1;
    }
    ev.info()
        .iter()
        .find(|i| i.key == EVENTS_LOST_COUNT)
        .and_then(|i| match i.value {
            Value::Uint64(n) => Some(n),
            _ => None,
        })
        .unwrap_or(1)
}

/// `PMIX_EVENT_PROXY` for an event the server routed: the proxy the record
/// names (another node's server, relayed by the host), else `server`. The
/// server leaves it out of its records to save ring bytes. Not added to the
/// server's own events, whose source already names it: each attribute
/// costs every C receiver a 512-byte key copy and an allocation per event
/// (+25 % client CPU in `tput-1` when it was added to every event).
fn add_proxy(w: &mut WireEvent, server: Proc) {
    if w.source != server && !w.info.iter().any(|i| i.key == attrs::PMIX_EVENT_PROXY) {
        w.info
            .push(Info::new(attrs::PMIX_EVENT_PROXY, Value::from(server)));
    }
}

/// The `EVENTS_LOST` notice for `n` events.
fn lost_event(server: Proc, n: u64) -> WireEvent {
    WireEvent {
        code: EVENTS_LOST,
        source: server,
        range: DataRange::PROC_LOCAL,
        info: vec![Info::new(EVENTS_LOST_COUNT, Value::Uint64(n))],
        class: EventClass::Job,
        source_seq: 0,
        timestamp_ns: now_realtime_ns(),
    }
}

/// The engine event for a record from the ring, the replay hand-off, or a
/// local notice.
fn into_event(w: WireEvent) -> Result<Event, Status> {
    let origin = if w.range == DataRange::PROC_LOCAL {
        Origin::ThisProcess
    } else {
        Origin::ThisNode
    };
    let n = Notification {
        code: w.code,
        source: w.source,
        range: w.range,
        info: w.info,
    };
    Ok(Event::new(n, origin)?.with_class(w.class))
}

#[cfg(test)]
mod loss_tests {
    use super::LossAccount;

    #[test]
    fn a_reader_that_never_notifies_is_told_of_every_gap_at_once() {
        let mut a = LossAccount::default();
        assert_eq!(a.gap(10, 0), 10);
        assert_eq!(a.gap(3, 0), 3);
        assert_eq!(a.pending, 0);
    }

    #[test]
    fn own_records_inside_a_gap_are_settled_at_the_next_own_record() {
        let mut a = LossAccount::default();
        assert_eq!(a.own(1), 0);
        assert_eq!(a.own(2), 0);
        // A gap of 5 while own records 3..=7 were published: undecided.
        assert_eq!(a.gap(5, 7), 0);
        // Own record 8: 3..=7 were the gap. Nothing else was lost.
        assert_eq!(a.own(8), 0);
        // Own 9 read; a gap of 10 holding own 10..=12 and 7 others.
        assert_eq!(a.own(9), 0);
        assert_eq!(a.gap(10, 12), 0);
        assert_eq!(a.own(13), 7);
    }

    #[test]
    fn a_gap_after_the_last_own_record_is_settled_once_caught_up() {
        let mut a = LossAccount::default();
        assert_eq!(a.own(1), 0);
        assert_eq!(a.gap(6, 3), 0);
        // Caught up, with own 2 and 3 published before the last poll: they
        // were in the gap with 4 others.
        assert_eq!(a.caught_up(3), 4);
        assert_eq!((a.pending, a.own_last), (0, 3));
        // Own 4 and 5 in a later gap of 2: nothing else was lost.
        assert_eq!(a.gap(2, 5), 0);
        assert_eq!(a.own(6), 0);
        assert_eq!(a.gap(1, 6), 1);
    }
}
