//! The server's progress thread: one io_uring reactor waiting on the
//! listening socket, every connection, every client's pidfd, every
//! namespace's submission doorbell and the API eventfd. The doorbells of the
//! first [`Reactor::MAX_WORDS`] namespaces are not io_uring watches: the
//! thread sleeps on them and on the ring's completions in one
//! `futex_waitv` (`Reactor::wait_with`), which a client's ring wakes
//! sooner; those of later namespaces are watches.

use super::fence::Fences;
use super::jobs::JobState;
use super::monitor::Monitors;
use super::routing::Via;
use super::{lock, Cmd, Done, Shared};
use crate::event::{EventClass, Notification};
use crate::ring::{Collected, Collector, Region};
use crate::sync::{pidfd_open, Reactor, Token};
use crate::types::{attrs, DataRange, Info, Nspace, Proc, Status, Value};
use crate::wire::control::{
    self, ArchivedRequest, FrameError, FrameReader, PeerCred, Reply, PROTOCOL_VERSION,
};
use crate::wire::{event_from_archived, info_to_record, proc_to_record};
use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;

pub(super) const LISTEN: u64 = 1;
const WAKE: u64 = 2;
const KIND_SHIFT: u32 = 56;
pub(super) const CONN: u64 = 1 << KIND_SHIFT;
const PIDFD: u64 = 2 << KIND_SHIFT;
const BELL: u64 = 3 << KIND_SHIFT;
/// A process whose connection closed but which still runs (its cleanup
/// waits for its exit).
const EXIT: u64 = 4 << KIND_SHIFT;
/// A connection whose replies did not fit its socket buffer can take more.
const WRITE: u64 = 5 << KIND_SHIFT;
const ID_MASK: u64 = (1 << KIND_SHIFT) - 1;

/// Records taken from one submission queue per round.
const DRAIN_BATCH: usize = 64;

/// Reply bytes a connection may have waiting for room in its socket: a
/// peer further behind is not reading its replies.
const MAX_BACKLOG: usize = 4 * control::MAX_FRAME;

pub(super) struct Conn {
    stream: UnixStream,
    frames: FrameReader,
    pub cred: PeerCred,
    /// Set once `Hello` was accepted: who, and the client-table entry.
    pub who: Option<(Proc, u32)>,
    pub pidfd: Option<OwnedFd>,
    /// Codes this client registered (for the host's reference counts).
    codes: Vec<Status>,
    finalized: bool,
    /// Reply bytes the socket could not take yet (a `Welcome` with the job
    /// information of a large namespace exceeds a socket buffer).
    out: Vec<u8>,
    /// No request of it was accepted yet (`gate`: deadline and cap).
    pub pending: bool,
}

impl Conn {
    /// A connection just accepted: pending.
    pub(super) fn new(stream: UnixStream, cred: PeerCred) -> Conn {
        Conn {
            stream,
            frames: FrameReader::default(),
            cred,
            who: None,
            pidfd: None,
            codes: Vec::new(),
            finalized: false,
            out: Vec::new(),
            pending: true,
        }
    }
}

pub(super) struct Watch {
    id: u64,
    collector: Collector,
    pub region: Region,
    bell: Bell,
    /// Connected clients: entry → proc.
    pub entries: HashMap<u32, Proc>,
}

/// How the progress thread sleeps on a namespace's submission doorbell.
#[derive(Clone, Copy)]
enum Bell {
    /// One of the words of its `futex_waitv`: the value to sleep on, once
    /// every queue was seen empty.
    Direct(Option<u32>),
    /// An io_uring futex watch.
    Watched { armed: bool },
}

pub(super) struct Loop {
    pub shared: Arc<Shared>,
    pub(super) reactor: Reactor,
    pub(super) listener: UnixListener,
    pub conns: HashMap<u64, Conn>,
    pub watches: HashMap<Nspace, Watch>,
    next_id: u64,
    pub jobs: JobState,
    pub mons: Monitors,
    pub fences: Fences,
    /// Requests answered in parts, by connection and request number.
    pub joins: HashMap<(u64, u64), super::handoff::Join>,
    /// Most watches with a [`Bell::Direct`]: `shared.direct_bells`, or 0
    /// when the reactor cannot sleep on words.
    direct_max: usize,
    /// Pending connections and accept back-off (`gate`).
    pub(super) gate: super::gate::Gate,
    /// Hellos from processes not registered yet, by connection: a host may
    /// fork and exec before it registers. Each waits for
    /// [`Cmd::Registered`] while its connection is pending (the gate's
    /// deadline then refuses it with the reason).
    pub(super) parked: HashMap<u64, Parked>,
}

/// A Hello waiting for its process's registration.
pub(super) struct Parked {
    version: u32,
    nspace: String,
    rank: u32,
}

pub(super) fn run(shared: Arc<Shared>, listener: UnixListener) {
    let reactor = match Reactor::new(256) {
        Ok(r) => r,
        Err(e) => {
            shared.say(&format!("cannot start its io_uring reactor: {e}"));
            return;
        }
    };
    let direct_max = if reactor.can_wait_with() {
        shared.direct_bells
    } else {
        0
    };
    let mut l = Loop {
        shared,
        reactor,
        listener,
        conns: HashMap::new(),
        watches: HashMap::new(),
        next_id: 1,
        jobs: JobState::default(),
        mons: Monitors::default(),
        fences: Fences::default(),
        joins: HashMap::new(),
        direct_max,
        gate: Default::default(),
        parked: HashMap::new(),
    };
    if let Err(e) = l.arm_fixed() {
        l.shared.say(&format!("cannot watch its sockets: {e}"));
        return;
    }
    let mut out = Vec::new();
    let mut busy = false;
    loop {
        out.clear();
        // Job-management and fence timers are deadlines of this one wait.
        let timeout = if busy {
            Some(std::time::Duration::ZERO)
        } else {
            [l.jobs_deadline(), l.fence_deadline(), l.gate_deadline()]
                .into_iter()
                .flatten()
                .min()
                .map(|d| d.saturating_duration_since(std::time::Instant::now()))
        };
        let waited = if busy || l.direct_max == 0 {
            l.reactor.wait(timeout, &mut out)
        } else {
            let bells = l.watches.values().filter_map(|w| match w.bell {
                Bell::Direct(v) => Some((w.collector.bell(), v?)),
                Bell::Watched { .. } => None,
            });
            l.reactor.wait_with(timeout, bells, &mut out)
        };
        if let Err(e) = waited {
            l.shared.say(&format!("reactor wait failed: {e}"));
            return;
        }
        for &(Token(t), res) in &out {
            match (t & !ID_MASK, t & ID_MASK) {
                (0, LISTEN) => l.accept(),
                (0, WAKE) if l.commands() => return l.shutdown(),
                (CONN, id) => l.readable(id, res),
                (PIDFD, id) => l.drop_conn(id, "process exited"),
                (WRITE, id) => l.flush(id),
                (EXIT, id) => {
                    if let Some((_, p)) = l.jobs.exits.remove(&id) {
                        l.run_cleanup(&p);
                    }
                }
                (BELL, id) => {
                    if let Some(w) = l.watches.values_mut().find(|w| w.id == id) {
                        w.bell = Bell::Watched { armed: false };
                    }
                }
                _ => {}
            }
        }
        l.drain();
        l.jobs_tick(std::time::Instant::now());
        l.fence_tick(std::time::Instant::now());
        l.gate_tick(std::time::Instant::now());
        busy = !l.arm_bells();
    }
}

impl Loop {
    pub(super) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn arm_fixed(&mut self) -> std::io::Result<()> {
        self.reactor
            .watch_readable(self.listener.as_raw_fd(), Token(LISTEN))?;
        self.reactor
            .watch_readable(self.shared.wake.as_raw_fd(), Token(WAKE))
    }

    /// Processes API commands. `true`: stop.
    fn commands(&mut self) -> bool {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live buffer (non-blocking fd).
        unsafe { libc::read(self.shared.wake.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        let cmds = std::mem::take(&mut *lock(&self.shared.cmds));
        for c in cmds {
            match c {
                Cmd::Stop => return true,
                Cmd::Reply { conn, frame } => {
                    self.send_frame(conn, frame);
                }
                Cmd::Part {
                    conn,
                    rid,
                    status,
                    info,
                } => self.answer(conn, rid, Some((status, info))),
                Cmd::Watch(ns) => {
                    let region = match self.shared.nspaces().get(&ns) {
                        Some(x) => x.seg.region().clone(),
                        None => continue,
                    };
                    let id = self.id();
                    if let Some(old) = self.watches.remove(&ns) {
                        self.unwatch(&old);
                    }
                    let direct = self.watches.values();
                    let direct = direct.filter(|w| matches!(w.bell, Bell::Direct(_)));
                    let bell = if direct.count() < self.direct_max {
                        Bell::Direct(None)
                    } else {
                        Bell::Watched { armed: false }
                    };
                    self.watches.insert(
                        ns,
                        Watch {
                            id,
                            collector: Collector::new(region.clone()),
                            region,
                            bell,
                            entries: HashMap::new(),
                        },
                    );
                }
                Cmd::Disconnect(p) => {
                    let ids: Vec<u64> = self
                        .conns
                        .iter()
                        .filter(|(_, c)| c.who.is_some_and(|(q, _)| q == p))
                        .map(|(id, _)| *id)
                        .collect();
                    for id in ids {
                        if let Some(c) = self.conns.get_mut(&id) {
                            c.finalized = true; // deregistered on purpose: not lost
                        }
                        self.drop_conn(id, "client deregistered");
                    }
                    self.fence_settle();
                }
                Cmd::Settle => self.fence_settle(),
                Cmd::Registered => self.unpark(),
                Cmd::Forget(ns) => {
                    lock(&self.shared.cache).forget(&ns);
                    if let Some(w) = self.watches.remove(&ns) {
                        self.unwatch(&w);
                        let ids: Vec<u64> = self
                            .conns
                            .iter()
                            .filter(|(_, c)| c.who.is_some_and(|(p, _)| p.nspace == ns))
                            .map(|(id, _)| *id)
                            .collect();
                        for id in ids {
                            self.drop_conn(id, "namespace deregistered");
                        }
                    }
                    self.fence_settle();
                }
            }
        }
        let _ = self
            .reactor
            .watch_readable(self.shared.wake.as_raw_fd(), Token(WAKE));
        false
    }

    fn readable(&mut self, id: u64, _res: i32) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let filled = c.frames.fill(&c.stream);
        // Handle every complete frame, even when the peer closed after them.
        loop {
            let Some(c) = self.conns.get_mut(&id) else {
                return;
            };
            // Copied once into its own aligned buffer and validated once.
            let req = match c.frames.next_request() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => return self.refuse_and_drop(id, Status::ERR_BAD_PARAM, &e.to_string()),
            };
            if !self.request(id, &req) {
                return;
            }
            if !self.parked.contains_key(&id) {
                self.unpend(id);
            }
        }
        match filled {
            Ok(()) => {
                if let Some(c) = self.conns.get(&id) {
                    let fd = c.stream.as_raw_fd();
                    if self.reactor.watch_readable(fd, Token(CONN | id)).is_err() {
                        self.drop_conn(id, "cannot watch the connection");
                    }
                }
            }
            Err(FrameError::Closed) => self.drop_conn(id, "connection closed"),
            Err(e) => self.drop_conn(id, &e.to_string()),
        }
    }

    /// Handles one request. `false`: the connection was dropped.
    fn request(&mut self, id: u64, req: &ArchivedRequest) -> bool {
        let who = self.conns.get(&id).and_then(|c| c.who);
        let authenticated = who.is_some();
        if let Some((p, _)) = who {
            if let Some(slot) = self
                .shared
                .nspaces()
                .get_mut(&p.nspace)
                .and_then(|ns| ns.clients.get_mut(&p.rank))
            {
                slot.requests += 1;
            }
        }
        let tool = self.conns.get(&id).is_some_and(|c| {
            c.who.is_none() && (c.cred.uid == self.shared.euid || c.cred.uid == 0)
        });
        match req {
            ArchivedRequest::ToolNotify { .. } | ArchivedRequest::Inspect if !tool => {
                self.refuse_and_drop(
                    id,
                    Status::ERR_NO_PERMISSIONS,
                    "tools must run as the server's user",
                );
                false
            }
            ArchivedRequest::ToolNotify {
                code,
                range,
                source,
                info,
            } => {
                let status = match tool_event(code.to_native(), *range, source, info) {
                    Ok(n) => {
                        let class = EventClass::of(n.code);
                        match self.shared.dispatch(Via::Tool, n, class) {
                            Ok(_) => Status::SUCCESS,
                            Err(s) => s,
                        }
                    }
                    Err(s) => s,
                };
                self.reply(id, &Reply::Done { status: status.0 })
            }
            ArchivedRequest::Inspect => {
                let text = super::inspect_text(&self.shared);
                self.reply(id, &Reply::Text { text })
            }
            ArchivedRequest::Hello {
                version,
                nspace,
                rank,
            } => {
                if authenticated || self.parked.contains_key(&id) {
                    self.refuse_and_drop(id, Status::ERR_BAD_PARAM, "second Hello");
                    return false;
                }
                let p = Parked {
                    version: version.to_native(),
                    nspace: nspace.as_str().to_owned(),
                    rank: rank.to_native(),
                };
                if !self.registered(&p) {
                    self.parked.insert(id, p);
                    return true;
                }
                self.welcome(id, &p)
            }
            _ if !authenticated => {
                self.refuse_and_drop(id, Status::ERR_NO_PERMISSIONS, "Hello first");
                false
            }
            ArchivedRequest::RegisterEvents { codes } => {
                let codes: Vec<Status> = codes.iter().map(|c| Status(c.to_native())).collect();
                let fresh = self.shared.env_refs.add(&codes);
                if let Some(c) = self.conns.get_mut(&id) {
                    c.codes.extend(codes.iter().filter(|c| c.is_system_event()));
                }
                if !fresh.is_empty() {
                    self.shared.host.register_events(&fresh, Done::ignored());
                }
                self.reply(id, &Reply::Done { status: 0 })
            }
            ArchivedRequest::DeregisterEvents { codes } => {
                let codes: Vec<Status> = codes.iter().map(|c| Status(c.to_native())).collect();
                self.forget_codes(id, &codes);
                self.reply(id, &Reply::Done { status: 0 })
            }
            ArchivedRequest::Allocate {
                id: rid,
                directive,
                info,
            } => {
                let rid = rid.to_native();
                match decode_infos(info) {
                    Ok(info) => self.allocate(id, rid, *directive, info),
                    Err(s) => self.answer(
                        id,
                        rid,
                        super::handoff::refusal(s, "undecodable attributes"),
                    ),
                }
                self.conns.contains_key(&id)
            }
            ArchivedRequest::JobControl {
                id: rid,
                targets,
                directives,
            } => {
                let rid = rid.to_native();
                let t: Result<Vec<Proc>, Status> = targets
                    .iter()
                    .map(crate::wire::proc_from_archived)
                    .collect();
                match (t, decode_infos(directives)) {
                    (Ok(t), Ok(d)) => self.job_control(id, rid, t, d),
                    (Err(s), _) | (_, Err(s)) => {
                        self.answer(id, rid, super::handoff::refusal(s, "undecodable request"))
                    }
                }
                self.conns.contains_key(&id)
            }
            ArchivedRequest::Monitor {
                id: rid,
                monitor,
                error,
                directives,
            } => {
                let rid = rid.to_native();
                let m = crate::wire::info_from_archived(monitor);
                match (m, decode_infos(directives)) {
                    (Ok(m), Ok(d)) => self.monitor(id, rid, m, Status(error.to_native()), d),
                    (Err(s), _) | (_, Err(s)) => {
                        self.answer(id, rid, super::handoff::refusal(s, "undecodable request"))
                    }
                }
                self.conns.contains_key(&id)
            }
            ArchivedRequest::Abort {
                id: rid,
                status,
                msg,
                targets,
            } => {
                let rid = rid.to_native();
                let t: Result<Vec<Proc>, Status> = targets
                    .iter()
                    .map(crate::wire::proc_from_archived)
                    .collect();
                match t {
                    Ok(t) => self.abort(id, rid, Status(status.to_native()), msg.as_str(), t),
                    Err(s) => {
                        self.answer(id, rid, super::handoff::refusal(s, "undecodable targets"))
                    }
                }
                self.conns.contains_key(&id)
            }
            ArchivedRequest::Log {
                id: rid,
                data,
                directives,
            } => {
                let rid = rid.to_native();
                match (decode_infos(data), decode_infos(directives)) {
                    (Ok(a), Ok(d)) => self.log(id, rid, a, d),
                    (Err(s), _) | (_, Err(s)) => {
                        self.answer(id, rid, super::handoff::refusal(s, "undecodable request"))
                    }
                }
                self.conns.contains_key(&id)
            }
            ArchivedRequest::Fence {
                id: rid,
                procs,
                info,
            } => {
                let rid = rid.to_native();
                let p: Result<Vec<Proc>, Status> =
                    procs.iter().map(crate::wire::proc_from_archived).collect();
                match (p, decode_infos(info)) {
                    (Ok(p), Ok(i)) => self.fence(id, rid, p, i),
                    (Err(s), _) | (_, Err(s)) => {
                        self.answer(id, rid, super::handoff::refusal(s, "undecodable request"))
                    }
                }
                self.conns.contains_key(&id)
            }
            ArchivedRequest::Query {
                id: rid,
                keys,
                qualifiers,
            } => {
                let rid = rid.to_native();
                let uid = self.conns.get(&id).map_or(u32::MAX, |c| c.cred.uid);
                let a = match (who, super::query::decode(keys, qualifiers)) {
                    (Some((caller, _)), Ok(q)) => {
                        Some(super::query::answer(&self.shared, &caller, uid, &q))
                    }
                    (_, Err(s)) => super::handoff::refusal(s, "undecodable query"),
                    (None, _) => super::handoff::refusal(Status::ERR_NO_PERMISSIONS, "Hello first"),
                };
                self.answer(id, rid, a);
                self.conns.contains_key(&id)
            }
            ArchivedRequest::Finalize => {
                let who = self.conns.get_mut(&id).and_then(|c| {
                    c.finalized = true;
                    c.who
                });
                if let Some((p, _)) = who {
                    if let Some(ns) = self.shared.nspaces().get_mut(&p.nspace) {
                        if let Some(s) = ns.clients.get_mut(&p.rank) {
                            s.finalized = true;
                        }
                    }
                }
                self.reply(id, &Reply::Done { status: 0 })
            }
        }
    }

    fn forget_codes(&mut self, id: u64, codes: &[Status]) {
        let mut removed = Vec::new();
        if let Some(c) = self.conns.get_mut(&id) {
            for code in codes {
                if let Some(i) = c.codes.iter().position(|x| x == code) {
                    c.codes.swap_remove(i);
                    removed.push(*code);
                }
            }
        }
        let gone = self.shared.env_refs.remove(&removed);
        if !gone.is_empty() {
            self.shared.host.deregister_events(&gone, Done::ignored());
        }
    }

    /// Whether the process a Hello names is registered.
    fn registered(&self, p: &Parked) -> bool {
        let Ok(proc) = Proc::new(&p.nspace, p.rank) else {
            return true; // refused by `hello` with its reason
        };
        self.shared
            .nspaces()
            .get(&proc.nspace)
            .is_some_and(|ns| ns.clients.contains_key(&proc.rank))
    }

    /// Answers a Hello: `Welcome`, or refused and dropped. `false`: the
    /// connection was dropped.
    fn welcome(&mut self, id: u64, p: &Parked) -> bool {
        match self.hello(id, p.version, &p.nspace, p.rank) {
            Ok(reply) => self.reply(id, &reply),
            Err((s, why)) => {
                self.refuse_and_drop(id, s, &why);
                false
            }
        }
    }

    /// Answers the parked Hellos whose process is registered now.
    fn unpark(&mut self) {
        let ready: Vec<u64> = self
            .parked
            .iter()
            .filter(|(_, p)| self.registered(p))
            .map(|(id, _)| *id)
            .collect();
        for id in ready {
            if let Some(p) = self.parked.remove(&id) {
                if self.welcome(id, &p) {
                    self.unpend(id);
                }
            }
        }
    }

    /// A parked Hello whose connection reached the gate's deadline: refused
    /// with the reason the process was not let in.
    pub(super) fn refuse_parked(&mut self, id: u64) -> bool {
        let Some(p) = self.parked.remove(&id) else {
            return false;
        };
        let why = match Proc::new(&p.nspace, p.rank) {
            Ok(proc) if self.shared.nspaces().contains_key(&proc.nspace) => {
                format!("{proc} is not a registered client")
            }
            _ => format!("namespace {} is not registered", p.nspace),
        };
        self.refuse_and_drop(id, Status::ERR_NOT_FOUND, &why);
        true
    }

    fn hello(
        &mut self,
        id: u64,
        version: u32,
        nspace: &str,
        rank: u32,
    ) -> Result<Reply, (Status, String)> {
        if version != PROTOCOL_VERSION {
            return Err((
                Status::ERR_NOT_SUPPORTED,
                format!("protocol version {version}, server speaks {PROTOCOL_VERSION}"),
            ));
        }
        let cred = self
            .conns
            .get(&id)
            .map(|c| c.cred)
            .ok_or((Status::ERROR, String::new()))?;
        let proc = Proc::new(nspace, rank).map_err(|s| (s, "invalid namespace".to_string()))?;
        let (reply, entry) = {
            let mut m = self.shared.nspaces();
            let ns = m.get_mut(&proc.nspace).ok_or((
                Status::ERR_NOT_FOUND,
                format!("namespace {nspace} is not registered"),
            ))?;
            let slot = ns.clients.get(&proc.rank).ok_or((
                Status::ERR_NOT_FOUND,
                format!("{proc} is not a registered client"),
            ))?;
            if slot.uid != cred.uid || slot.gid != cred.gid {
                return Err((
                    Status::ERR_NO_PERMISSIONS,
                    format!(
                        "{proc} is registered for uid {} gid {}, the peer is uid {} gid {}",
                        slot.uid, slot.gid, cred.uid, cred.gid
                    ),
                ));
            }
            if slot.entry.is_some() {
                return Err((
                    Status::ERR_BAD_PARAM,
                    format!("{proc} is already connected"),
                ));
            }
            let region = ns.seg.region();
            let head = region.state().head;
            let entry = region.claim_client(cred.pid as u32, head).ok_or((
                Status::ERR_OUT_OF_RESOURCE,
                "the namespace's client table is full".to_string(),
            ))?;
            // Its own records count from 1 again, as the claimed entry's
            // `own_relayed` does from 0 (lock order: nspaces, own_seqs).
            self.shared.restart_own_seq(&proc);
            let handoff = lock(&self.shared.cache).handoff(&proc);
            let slot = ns.clients.get_mut(&proc.rank).expect("checked above");
            slot.entry = Some(entry);
            slot.pid = Some(cred.pid);
            slot.finalized = false;
            if !slot.ever_connected && !slot.ended {
                ns.pending = ns.pending.saturating_sub(1);
            }
            slot.ever_connected = true;
            slot.ended = false;
            (
                Reply::Welcome {
                    segment: ns.seg.name().to_owned(),
                    client: entry,
                    server: proc_to_record(&self.shared.me),
                    job_info: ns.info.iter().map(info_to_record).collect(),
                    replay: handoff.events.iter().map(|r| (**r).clone()).collect(),
                    lost: handoff.lost,
                    cache_size: handoff.capacity,
                },
                entry,
            )
        };
        if let Some(w) = self.watches.get_mut(&proc.nspace) {
            w.entries.insert(entry, proc);
        }
        let pidfd = pidfd_open(cred.pid).ok();
        if let Some(fd) = &pidfd {
            let _ = self
                .reactor
                .watch_readable(fd.as_raw_fd(), Token(PIDFD | id));
        }
        if let Some(c) = self.conns.get_mut(&id) {
            c.who = Some((proc, entry));
            c.pidfd = pidfd;
        }
        self.shared.host.client_connected(&proc, Done::ignored());
        Ok(reply)
    }

    /// Sends a reply; `false` (connection dropped) if it cannot.
    fn reply(&mut self, id: u64, r: &Reply) -> bool {
        self.send_frame(id, control::frame(r))
    }

    /// Writes one frame, or queues it behind the bytes the socket could not
    /// take yet; a connection that is gone is skipped (a late answer of the
    /// host for a client that left).
    pub(super) fn send_frame(&mut self, id: u64, frame: Vec<u8>) -> bool {
        let Some(c) = self.conns.get_mut(&id) else {
            return false;
        };
        if c.out.len() + frame.len() > MAX_BACKLOG {
            self.drop_conn(id, "not reading its replies");
            return false;
        }
        let was_idle = c.out.is_empty();
        c.out.extend_from_slice(&frame);
        if was_idle {
            self.flush(id);
        }
        self.conns.contains_key(&id)
    }

    /// Writes what the socket takes of a connection's queued replies; the
    /// rest waits for the socket to be writable.
    fn flush(&mut self, id: u64) {
        let Some(c) = self.conns.get_mut(&id).filter(|c| !c.out.is_empty()) else {
            return;
        };
        let mut sent = 0;
        let r = loop {
            match (&c.stream).write(&c.out[sent..]) {
                Ok(0) => break Err(()),
                Ok(n) => {
                    sent += n;
                    if sent == c.out.len() {
                        break Ok(());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break Ok(()),
                Err(_) => break Err(()),
            }
        };
        c.out.drain(..sent);
        let fd = c.stream.as_raw_fd();
        let wait = !c.out.is_empty();
        if r.is_err() || (wait && self.reactor.watch_writable(fd, Token(WRITE | id)).is_err()) {
            self.drop_conn(id, "cannot write a reply");
        }
    }

    /// Watches a pidfd for the process's exit (token `EXIT | id`).
    pub(super) fn watch_exit(&mut self, fd: &OwnedFd, id: u64) -> bool {
        self.reactor
            .watch_readable(fd.as_raw_fd(), Token(EXIT | id))
            .is_ok()
    }

    fn refuse_and_drop(&mut self, id: u64, s: Status, why: &str) {
        let _ = self.reply(
            id,
            &Reply::Refused {
                status: s.0,
                why: why.to_owned(),
            },
        );
        self.drop_conn(id, why);
    }

    /// Forgets a connection. A client that had not finalized is lost: the
    /// host hears it and the server's own handlers get
    /// `PMIX_ERR_LOST_CONNECTION` with the client as affected proc.
    pub(super) fn drop_conn(&mut self, id: u64, _why: &str) {
        self.unpend(id);
        let Some(c) = self.conns.remove(&id) else {
            return;
        };
        self.parked.remove(&id);
        let _ = self.reactor.cancel(Token(CONN | id));
        let _ = self.reactor.cancel(Token(PIDFD | id));
        let _ = self.reactor.cancel(Token(WRITE | id));
        self.forget_joins(id);
        let Some((proc, entry)) = c.who else { return };
        let exit_id = self.id();
        self.jobs_proc_ended(proc, c.pidfd, exit_id);
        let codes = c.codes.clone();
        let gone = self.shared.env_refs.remove(&codes);
        if !gone.is_empty() {
            self.shared.host.deregister_events(&gone, Done::ignored());
        }
        let mut ckpts = Vec::new();
        if let Some(w) = self.watches.get_mut(&proc.nspace) {
            w.entries.remove(&entry);
            // Its queue may still hold records submitted before it died:
            // route them (they were sent), then release the entry.
            drain_one(&self.shared, &mut w.collector, entry, proc, &mut ckpts);
            w.collector.discard(entry);
            w.region.release_client(entry);
        }
        for (source, route, n) in ckpts {
            self.checkpoint_complete(source, &route, &n);
        }
        if let Some(ns) = self.shared.nspaces().get_mut(&proc.nspace) {
            if let Some(s) = ns.clients.get_mut(&proc.rank) {
                s.entry = None;
                s.pid = None;
            }
        }
        // Fences it had not entered cannot complete any more.
        self.fence_settle();
        let lost = !c.finalized;
        self.shared
            .host
            .client_finalized(&proc, lost, Done::ignored());
        if lost && !self.shared.stopping.is_set() {
            self.report_death(proc);
        }
    }

    /// A client's connection ended before `PMIx_Finalize`: the server
    /// process's own handlers get `PMIX_ERR_LOST_CONNECTION` (as
    /// OpenPMIx raises it), and unless the host reports deaths itself the
    /// client's namespace gets `PMIX_ERR_PROC_ABORTED`; both name the dead
    /// client as source and affected process.
    fn report_death(&mut self, proc: Proc) {
        let affected = || Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, Value::Proc(Box::new(proc)));
        let n = Notification::new(Status::ERR_LOST_CONNECTION, proc, DataRange::PROC_LOCAL)
            .info(affected());
        let _ = self.shared.engine.notify(n);
        if self.shared.host.reports_client_deaths() {
            return;
        }
        let n = Notification::new(Status::ERR_PROC_ABORTED, proc, DataRange::NAMESPACE)
            .info(affected());
        let class = EventClass::of(n.code);
        let _ = self.shared.dispatch(Via::Server, n, class);
    }

    /// Routes every record queued by every connected client. A client's
    /// checkpoint report is acted on after the round (it needs the whole
    /// loop; the round borrows the watches).
    fn drain(&mut self) {
        let mut ckpts = Vec::new();
        for w in self.watches.values_mut() {
            let Watch {
                collector, entries, ..
            } = w;
            for (&entry, &source) in entries.iter() {
                drain_one(&self.shared, collector, entry, source, &mut ckpts);
            }
        }
        for (source, route, n) in ckpts {
            self.checkpoint_complete(source, &route, &n);
        }
    }

    /// A watch removed from the table: its doorbell is no longer slept on.
    fn unwatch(&mut self, w: &Watch) {
        if let Bell::Watched { .. } = w.bell {
            let _ = self.reactor.cancel(Token(BELL | w.id));
        }
    }

    /// Gets every namespace's doorbell ready for the next sleep: a direct
    /// one's value to sleep on, an io_uring watch armed where it is not.
    /// `false`: some queue filled up meanwhile (drain again first).
    fn arm_bells(&mut self) -> bool {
        let mut quiet = true;
        for w in self.watches.values_mut() {
            if let Bell::Watched { armed: true } = w.bell {
                continue;
            }
            let ready = w.collector.prepare_sleep(w.entries.keys().copied());
            w.bell = match (w.bell, ready) {
                (Bell::Direct(_), ready) => Bell::Direct(ready),
                (watched, None) => watched,
                (Bell::Watched { .. }, Some(bell)) => {
                    // The bell lives in the namespace's mapping, which
                    // `w.region` keeps mapped; the watch is cancelled
                    // (Forget) or reaped before the watch is dropped.
                    // SAFETY: the word outlives the watch (above).
                    let armed = unsafe {
                        self.reactor
                            .watch_futex(w.collector.bell(), bell, Token(BELL | w.id))
                    };
                    Bell::Watched {
                        armed: armed.is_ok(),
                    }
                }
            };
            quiet &= matches!(
                w.bell,
                Bell::Direct(Some(_)) | Bell::Watched { armed: true }
            );
        }
        quiet
    }

    fn shutdown(mut self) {
        let ids: Vec<u64> = self.conns.keys().copied().collect();
        for id in ids {
            if let Some(c) = self.conns.get_mut(&id) {
                c.finalized = true; // the server leaves; nobody was lost
            }
            self.drop_conn(id, "server stopping");
        }
    }
}

/// Routes up to [`DRAIN_BATCH`] records of one queue: a client that
/// floods cannot hold the progress thread (the loop comes back for the
/// rest after serving the others). A checkpoint report is kept in `ckpts`.
fn drain_one(
    shared: &Shared,
    collector: &mut Collector,
    entry: u32,
    source: Proc,
    ckpts: &mut Vec<(Proc, super::routing::Route, Notification)>,
) {
    for _ in 0..DRAIN_BATCH {
        let n = match collector.pop(entry) {
            Collected::Empty => return,
            Collected::Corrupt { why, .. } => {
                shared.say(&format!("submission from {source} dropped: {why}"));
                continue;
            }
            Collected::Record { rec, .. } => match event_from_archived(rec) {
                Ok(ev) => ev,
                Err(s) => {
                    shared.say(&format!("submission from {source} refused: {s}"));
                    continue;
                }
            },
        };
        // The source is who the socket said, never what the record says.
        let notification = Notification {
            code: n.code,
            source,
            range: n.range,
            info: n.info,
        };
        let class = if n.class == EventClass::Environment {
            EventClass::Environment
        } else {
            EventClass::Job
        };
        let ckpt = (n.code == Status::JCTRL_CHECKPOINT_COMPLETE).then(|| notification.clone());
        match shared.dispatch(Via::Client, notification, class) {
            Ok(route) => {
                if let Some(n) = ckpt {
                    ckpts.push((source, route, n));
                }
            }
            Err(s) => shared.say(&format!("event from {source} refused: {s}")),
        }
    }
}

fn decode_infos(
    v: &rkyv::vec::ArchivedVec<shm_layout::record::ArchivedInfoRecord>,
) -> Result<Vec<Info>, Status> {
    v.iter().map(crate::wire::info_from_archived).collect()
}

/// A tool's event, checked like any other input from a socket.
fn tool_event(
    code: i32,
    range: u8,
    source: &shm_layout::record::ArchivedProcRecord,
    info: &rkyv::vec::ArchivedVec<shm_layout::record::ArchivedInfoRecord>,
) -> Result<Notification, Status> {
    let source = crate::wire::proc_from_archived(source)?;
    let info = info
        .iter()
        .map(crate::wire::info_from_archived)
        .collect::<Result<Vec<Info>, Status>>()?;
    Ok(Notification {
        code: Status(code),
        source,
        range: DataRange(range),
        info,
    })
}
