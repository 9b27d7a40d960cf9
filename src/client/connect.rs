//! Connecting: where the server is and who this process is ([`Params`]),
//! the `Hello`/`Welcome` exchange, and the start of everything a client
//! runs — the ring feed and engine, the callback thread, the control
//! thread.
//!
//! A failure says its cause on stderr (`client::say`) and returns the
//! status: `PMIx_Init` has no other way to tell why. A process not started
//! by a PMIx server (no `PMIX_NAMESPACE`…) gets `PMIX_ERR_INIT` quietly.

use super::control::{Control, Pending};
use super::feed::{add_proxy, into_event, lost_event, RingFeed};
use super::replay::{ReplayCache, ReplayKeeper};
use super::{callbacks, placement, say, Client, Inner, CONNECT_TIMEOUT};
use crate::event::Engine;
use crate::ring::{RingReader, Segment, Submitter};
use crate::server::{NAMESPACE_ENV, RANK_ENV, SERVER_ADDR_ENV};
use crate::sync::Latch;
use crate::types::{Info, Proc, Status};
use crate::wire::control::{self, ArchivedReply, FrameError, Request, PROTOCOL_VERSION};
use crate::wire::{event_from_archived, info_from_archived, proc_from_archived};
use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};

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
    /// [`BIND_PROGRESS_ENV`](super::BIND_PROGRESS_ENV) (a malformed value
    /// is `PMIX_ERR_BAD_PARAM`). Any of the first three missing: this
    /// process was not started by a PMIx server, `PMIX_ERR_INIT` quietly
    /// (a singleton's normal case); present but malformed: `PMIX_ERR_INIT`,
    /// and stderr says which.
    pub fn from_env() -> Result<Params, Status> {
        let var = std::env::var_os;
        let (Some(ns), Some(rank), Some(server)) =
            (var(NAMESPACE_ENV), var(RANK_ENV), var(SERVER_ADDR_ENV))
        else {
            return Err(Status::ERR_INIT);
        };
        let bad = |what: String| {
            say(&"(environment)", what);
            Status::ERR_INIT
        };
        let ns = ns
            .into_string()
            .map_err(|v| bad(format!("{NAMESPACE_ENV}={v:?} is not UTF-8")))?;
        let rank: u32 = rank
            .to_str()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| bad(format!("{RANK_ENV}={rank:?} is not a rank")))?;
        let me = Proc::new(&ns, rank).map_err(|s| bad(format!("{NAMESPACE_ENV}={ns:?}: {s}")))?;
        Ok(Params {
            server: server.into(),
            me,
            placement: placement::from_env()?,
            bind_required: false,
        })
    }
}

impl Client {
    /// Connects and starts the client's threads.
    pub(super) fn attach(p: &Params) -> Result<Client, Status> {
        let me = p.me;
        // The status to return, the cause said first.
        let fail = |s: Status, what: &str, cause: &dyn std::fmt::Display| {
            say(&me, format_args!("{what}: {cause}"));
            s
        };
        // Decided here, on the thread that holds the process's binding.
        let plan = placement::decide(&p.placement, p.bind_required)?;
        let mut stream = UnixStream::connect(&p.server).map_err(|e| {
            let what = format!("cannot connect to {}", p.server.display());
            fail(Status::ERR_UNREACH, &what, &e)
        })?;
        stream
            .set_read_timeout(Some(CONNECT_TIMEOUT))
            .map_err(|e| fail(Status::ERR_INIT, "control socket", &e))?;
        control::send(
            &mut stream,
            &Request::Hello {
                version: PROTOCOL_VERSION,
                nspace: me.nspace.as_str().to_owned(),
                rank: me.rank.0,
            },
        )
        .map_err(|e| fail(Status::ERR_UNREACH, "sending Hello", &e))?;
        let welcome = control::read_reply(&mut stream).map_err(|e| match e {
            FrameError::Invalid(_) => fail(Status::ERR_INIT, "the server's answer", &e),
            _ => fail(Status::ERR_UNREACH, "the server's answer", &e),
        })?;
        let bad = |s: Status| fail(Status::ERR_INIT, "the server's Welcome", &s);
        let (segment, entry, server, job_info, replay) = match &*welcome {
            ArchivedReply::Welcome {
                segment,
                client,
                server,
                job_info,
                replay,
                lost,
                cache_size,
            } => {
                let server = proc_from_archived(server).map_err(bad)?;
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
                        .map_err(bad)?,
                    cache,
                )
            }
            ArchivedReply::Refused { status, why } => {
                say(&me, format_args!("the server refused: {}", why.as_str()));
                return Err(Status(status.to_native()));
            }
            ArchivedReply::Done { .. }
            | ArchivedReply::Text { .. }
            | ArchivedReply::Result { .. } => {
                say(
                    &me,
                    "the server answered Hello with something else than Welcome",
                );
                return Err(Status::ERR_INIT);
            }
        };
        drop(welcome);
        // Where the host registered the local peers' bindings, their cores
        // are compute cores too.
        let plan = placement::beside_peers(plan, &p.placement, &placement::peer_cpus(&job_info));
        let replay = Arc::new(Mutex::new(replay));
        stream
            .set_read_timeout(None)
            .map_err(|e| fail(Status::ERR_INIT, "control socket", &e))?;
        let seg = Segment::open(&segment, CONNECT_TIMEOUT).map_err(|e| {
            let what = format!("the ring segment {segment}");
            fail(Status::ERR_NO_PERMISSIONS, &what, &e)
        })?;
        let reader = RingReader::adopt(seg.region().clone(), entry).ok_or(Status::ERR_INIT)?;
        // No handler yet: the server need not wake this client for an
        // event until one is registered for its code (`Client::want`).
        // What arrives meanwhile is read then, or once half the ring is
        // unread, and kept for the registrations to come.
        seg.region().want_nothing(entry);
        let submitter = Submitter::new(seg.region().clone(), entry);
        let (bound_tx, bound_rx) = mpsc::sync_channel(1);
        let engine = Engine::builder(me)
            .thread_name("fastpmix-events")
            .feed(Box::new(RingFeed::new(reader, me, server)))
            .keeper(Arc::new(ReplayKeeper(replay.clone())))
            .on_start(placement::start_hook(plan.clone(), bound_tx))
            .build()?;
        let placement = placement::settle(&plan, &bound_rx, p.bind_required)?;
        let stop = Arc::new(Latch::default());
        let lost = Arc::new(Latch::default());
        let (tx, rx) = mpsc::channel();
        let read_half = stream
            .try_clone()
            .map_err(|e| fail(Status::ERR_INIT, "control socket", &e))?;
        // The process's callback thread, started now: a connected client's
        // completions always have it.
        callbacks::start()
            .map_err(|e| fail(Status::ERR_OUT_OF_RESOURCE, "the callback thread", &e))?;
        let pending = Arc::new(Pending::new());
        let fence_barrier = super::barrier::FenceBarrier::open(seg.name());
        let ctl = Control {
            barrier: fence_barrier.area(),
            s: read_half,
            tx,
            pending: pending.clone(),
            engine: engine.clone(),
            stop: stop.clone(),
            lost: lost.clone(),
            me,
            server,
        };
        let threads = vec![ctl
            .spawn()
            .map_err(|e| fail(Status::ERR_OUT_OF_RESOURCE, "the control thread", &e))?];
        let client = Client {
            inner: Arc::new(Inner {
                forks: crate::sync::ForkWatch::now(),
                me,
                server,
                engine,
                job_map: crate::server::jobkeys::JobMap::from_info(&job_info),
                host_relays: !job_info
                    .iter()
                    .any(|i| i.key == crate::server::HOST_RELAYS_NO_EVENTS),
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
                kv: Mutex::new(super::data::Kv::new(seg.name())),
                barrier: fence_barrier,
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
}
