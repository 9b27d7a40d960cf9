//! The client library: connects to the node server, maps its namespace's
//! ring, hosts the process's event engine.
//!
//! Threads: the engine's progress thread (`fastpmix-events`), which reads
//! the ring itself (it sleeps on its ring wake word, the ring's doorbell
//! and its own queue's at once, one `futex_waitv`) and runs every handler;
//! a control thread (`fastpmix-ctl`) that reads the socket (replies, and
//! the server's death: the socket closes when the server process dies, so
//! `PMIX_ERR_LOST_CONNECTION` reaches the handlers at once, not after a
//! timeout); and the process's one callback thread (`fastpmix-cb`,
//! shared with the C ABI's deferred callbacks).
//!
//! Where things are:
//! - `connect.rs`: [`Params`], `Hello`/`Welcome`, starting the threads;
//! - `control.rs`: requests on the socket, the numbered requests' answers
//!   and the control thread;
//! - `callbacks.rs`: the callback thread and the order it keeps;
//! - `feed.rs`: the ring as the engine's feed, losses, wire → engine event;
//! - `replay.rs`: the events a new registration is offered;
//! - `register.rs`: handler registrations;
//! - `data.rs`: `PMIx_Put`, `PMIx_Commit`, `PMIx_Get` of any process
//!   (the namespace's shared-memory store first, the server when the data
//!   is not there yet);
//! - `jobs.rs`, `fence.rs`, `query.rs`, `get.rs`: the PMIx calls built on
//!   numbered requests and job information; `placement.rs`: where the
//!   progress thread runs.
//!
//! This file: the [`Client`] type, its state, notify and finalize.
//!
//! One client per process: [`Client::init`] twice returns the same client
//! until [`Client::finalize`].

mod barrier;
pub(crate) mod callbacks;
mod connect;
mod control;
mod data;
mod dpm;
mod feed;
mod fence;
mod get;
mod jobs;
mod losses;
mod placement;
mod pubsub;
mod query;
mod register;
mod replay;

pub use crate::server::query::Query;
pub use connect::Params;
pub use dpm::Spawned;
pub use jobs::{Callback, Outcome};
pub use placement::BIND_PROGRESS_ENV;
pub use pubsub::Found;

use crate::event::{Engine, Event, EventClass, Notification};
use crate::ring::{Lane, Segment, SubmitError, Submitter};
use crate::sync::{lock, Latch};
use crate::types::{attrs, DataRange, Info, Proc, Rank, Status};
use crate::wire::control::Request;
use crate::wire::{event_into_record, now_realtime_ns, WireEvent};
use std::collections::HashMap;
use std::os::unix::net::UnixStream;
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

/// Says `what` on stderr as `fastpmix client <who>: <what>`: the client
/// library's one diagnostic channel. A client has no sink of its host's
/// (the server has its trace sink), and a status cannot carry a reason
/// (`PMIx_Init` refused: which check, which file). Written with `writeln!`,
/// not `eprintln!`, which panics when stderr cannot be written: this runs
/// under C callers.
fn say(who: &dyn std::fmt::Display, what: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "fastpmix client {who}: {what}");
}

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
    /// Whether the server's host carries events beyond this node (see
    /// [`crate::server::HOST_RELAYS_NO_EVENTS`]).
    host_relays: bool,
    /// Synchronous requests are serialised; each waits for its reply on
    /// the channel the control thread fills.
    ctl: Mutex<(UnixStream, mpsc::Receiver<control::ReplyBody>)>,
    /// The submission queue, and the record every `notify` encodes
    /// through (its strings and vectors keep their heap buffers).
    submitter: Mutex<(Submitter, shm_layout::record::EventRecord)>,
    /// Codes of each registration, for the server's environment refcounts.
    codes: Mutex<HashMap<u64, Vec<Status>>>,
    /// Events offered to every new registration (see
    /// [`ReplayCache`](replay::ReplayCache)).
    replay: Arc<Mutex<replay::ReplayCache>>,
    stop: Arc<Latch>,
    lost: Arc<Latch>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Numbered requests waiting for their `Result`.
    pending: Arc<Mutex<control::Pending>>,
    /// This client's entry in the namespace's client table.
    entry: u32,
    /// What it put, and its view of the namespace's data store.
    kv: Mutex<data::Kv>,
    /// The namespace's fence barrier in shared memory, if it has one.
    barrier: barrier::FenceBarrier,
    seg: Segment,
    /// [`Client::placement`].
    placement: String,
    /// The process that connected: a child it forks shares the connection
    /// and the submission queue, but not the threads that serve them.
    forks: crate::sync::ForkWatch,
}

impl Client {
    /// Connects using the environment the server's `setup_fork` provided.
    /// A second call returns the same client.
    pub fn init() -> Result<Client, Status> {
        let mut cur = lock(&CURRENT);
        if let Some(c) = &*cur {
            return Ok(c.clone());
        }
        let c = Client::attach(&Params::from_env()?)?;
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
        let c = Client::attach(p)?;
        *cur = Some(c.clone());
        Ok(c)
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
        self.inner.forks.forked()
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
        // Nor for one only the host could deliver, when it cannot.
        if !self.inner.host_relays && !self.reaches_without_the_host(&n) {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
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

    /// Whether the event reaches every process its range names without
    /// the host: not RM (the host itself), and for a custom range, only
    /// processes of this node (ranks of this namespace among its local
    /// peers; its wildcard when every rank is local). A process of another
    /// namespace counts as remote: the client cannot tell where it runs.
    /// The server acts on a checkpoint's completion itself, whatever its
    /// range.
    fn reaches_without_the_host(&self, n: &Notification) -> bool {
        if n.code == Status::JCTRL_CHECKPOINT_COMPLETE {
            return true;
        }
        match n.range {
            DataRange::RM => false,
            DataRange::CUSTOM => {
                let me = self.inner.me;
                let wild = Proc {
                    nspace: me.nspace,
                    rank: Rank::WILDCARD,
                };
                // The local peers as read once at connect (else only me).
                let peers = &self.inner.job_map.local_peers;
                let local: &[u32] = if peers.is_empty() {
                    std::slice::from_ref(&me.rank.0)
                } else {
                    peers
                };
                let size = match self.job_get(&wild, &attrs::PMIX_JOB_SIZE) {
                    Ok(v) => v.as_integer().unwrap_or(0) as u64,
                    Err(_) => 0,
                };
                crate::server::custom_targets(&n.info).iter().all(|p| {
                    p.nspace == me.nspace
                        && if p.rank == Rank::WILDCARD {
                            local.len() as u64 == size
                        } else {
                            local.contains(&p.rank.0)
                        }
                })
            }
            _ => true,
        }
    }

    /// Queues a record for the server (and, when it is also for this
    /// namespace's other clients, for them: they read it from the queue,
    /// woken by this thread, see `ring::lane`), waiting for room in slices so that
    /// the server's death (noticed by the control thread) ends the wait.
    fn submit(&self, w: &WireEvent) -> Result<(), Status> {
        // From the first time the queue stays full (no clock read on the
        // path of an event that fits).
        let mut deadline = None;
        let mut guard = lock(&self.inner.submitter);
        let (sub, rec) = &mut *guard;
        event_into_record(w, rec);
        let mut ranks = Vec::new();
        let lane = lanes(w, &self.inner.me, &mut ranks);
        loop {
            match sub.submit_to(rec, Some(Duration::from_millis(20)), lane) {
                Ok(_) => return Ok(()),
                Err(SubmitError::TooLarge { .. }) => return Err(Status::ERR_BAD_PARAM),
                Err(SubmitError::Full) => {
                    self.live()?;
                    let now = std::time::Instant::now();
                    if now >= *deadline.get_or_insert(now + SUBMIT_TIMEOUT) {
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
        control::close(&self.inner.pending, Status::ERR_INIT);
        for t in lock(&self.inner.threads).drain(..) {
            // The control thread runs callbacks itself only when no
            // callback thread could be started; it cannot join itself.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
        // Every callback posted so far (the completions above among them)
        // has run when this returns. Not from a callback (the thread cannot
        // wait for itself) nor from a handler: a callback may be waiting
        // for the progress thread (a non-blocking deregistration), and this
        // one would wait for it.
        if !self.inner.engine.on_progress_thread() {
            callbacks::flush();
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

/// Whether an event from `me` goes into its own namespace's ring, so that
/// its peers read it from `me`'s lane, and which of them it is for: every
/// range but RM (and PROC_LOCAL, which never leaves the process) takes in
/// `me`'s namespace, a custom range when it names a process of it (its
/// ranks, gathered into `ranks`, or all of them for the wildcard). Readers
/// filter a custom range again (`feed::names_me`).
fn lanes<'a>(w: &WireEvent, me: &Proc, ranks: &'a mut Vec<u32>) -> Lane<'a> {
    match w.range {
        DataRange::RM | DataRange::PROC_LOCAL => Lane::No,
        DataRange::CUSTOM => {
            let mine = crate::server::custom_targets(&w.info)
                .into_iter()
                .filter(|p| p.nspace == me.nspace);
            for p in mine {
                if p.rank == Rank::WILDCARD {
                    return Lane::All;
                }
                ranks.push(p.rank.0);
            }
            if ranks.is_empty() {
                Lane::No
            } else {
                Lane::Ranks(ranks)
            }
        }
        _ => Lane::All,
    }
}
