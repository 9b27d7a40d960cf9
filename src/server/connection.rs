//! The progress thread's connections: accepting them through the gate,
//! reading their requests and handing each to its handler, writing
//! replies, and what happens when one goes (its process's end reported,
//! its fences settled, its entry released).

use super::conn::Conn;
use super::outbox::Req;
use super::progress::{drain_one, Loop, CONN, EXIT, LISTEN, MAX_BACKLOG, PIDFD, WRITE};
use super::request::{ClientRequest, Request, ToolRequest};
use super::routing::Via;
use super::{dpm, handoff, pubsub, Cmd, Done};
use crate::event::{EventClass, Notification};
use crate::sync::Token;
use crate::types::{attrs, DataRange, Info, Proc, Status, Value};
use crate::wire::control::{self, FrameError, Reply};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

/// Connections taken from the listener per round of the progress thread
/// (then the other work of the round; the listener fires again at once).
const ACCEPT_BATCH: usize = 64;

impl Loop {
    /// Takes new connections from the listener.
    pub(super) fn accept(&mut self) {
        let mut taken = 0;
        while taken < ACCEPT_BATCH {
            taken += 1;
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let Ok(cred) = control::peer_cred(&stream) else {
                        continue;
                    };
                    if !self.gate.admit(&self.shared, cred.uid) {
                        continue; // dropped: closed
                    }
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let id = self.id();
                    let fd = stream.as_raw_fd();
                    if self.reactor.watch_readable(fd, Token(CONN | id)).is_err() {
                        continue;
                    }
                    self.gate.pending(cred.uid, id, Instant::now());
                    self.conns.insert(id, Conn::new(stream, cred));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR | libc::ECONNABORTED | libc::EPROTO) => continue,
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
                        let open = self.conns.len();
                        return self.gate.pause(&self.shared, &e, open, Instant::now());
                    }
                    _ => break,
                },
            }
        }
        let _ = self
            .reactor
            .watch_readable(self.listener.as_raw_fd(), Token(LISTEN));
    }

    /// Connection `id` spoke (its first request was accepted) or is going
    /// away: it no longer counts as pending.
    pub(super) fn unpend(&mut self, id: u64) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        if std::mem::take(&mut c.pending) {
            let uid = c.cred.uid;
            self.gate.unpend(&self.shared, uid);
        }
    }

    /// Closes pending connections past their deadline; resumes accepting
    /// when the back-off passed.
    pub(super) fn gate_tick(&mut self, now: Instant) {
        let (expired, resume) = self.gate.due(now);
        for id in expired {
            if self.conns.get(&id).is_some_and(|c| c.pending) && !self.refuse_parked(id) {
                self.drop_conn(id, "no hello within the deadline");
            }
        }
        if resume {
            self.accept();
        }
    }

    pub(super) fn readable(&mut self, id: u64, _res: i32) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let filled = c.frames.fill(&c.stream);
        // Handle every complete frame, even when the peer closed after them.
        loop {
            let Some(c) = self.conns.get_mut(&id) else {
                return;
            };
            // Copied once into its own aligned buffer, validated once and
            // decoded once.
            let decoded = match c.frames.next_request() {
                Ok(Some(frame)) => Ok(Request::decode(&frame)),
                Ok(None) => break,
                Err(e) => Err(e),
            };
            let req = match decoded {
                Ok(Ok(r)) => r,
                Ok(Err(u)) => match u.rid {
                    Some(rid) => {
                        let (s, info) = u.refusal.into_result();
                        self.answer(id, rid, s, info, None);
                        continue;
                    }
                    None => {
                        let s = u.refusal.status;
                        if !self.reply(id, &Reply::Done { status: s.0 }) {
                            return;
                        }
                        continue;
                    }
                },
                Err(e) => return self.refuse_and_drop(id, Status::ERR_BAD_PARAM, &e.to_string()),
            };
            if !self.request(id, req) {
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
    pub(super) fn request(&mut self, id: u64, req: Request) -> bool {
        let Some(c) = self.conns.get(&id) else {
            return false;
        };
        let (who, cred) = (c.who, c.cred);
        match (req, who) {
            (Request::Tool(t), None) if cred.uid == self.shared.euid || cred.uid == 0 => {
                self.tool_request(id, t)
            }
            (Request::Tool(_), _) => {
                let why = "tools must run as the server's user";
                self.refuse_and_drop(id, Status::ERR_NO_PERMISSIONS, why);
                false
            }
            (
                Request::Hello {
                    version,
                    nspace,
                    rank,
                },
                _,
            ) => self.hello_request(id, version, nspace, rank),
            (Request::Client(_), None) => {
                self.refuse_and_drop(id, Status::ERR_NO_PERMISSIONS, "Hello first");
                false
            }
            (Request::Client(c), Some((me, _))) => {
                let req = |rid| Req {
                    conn: id,
                    rid,
                    me,
                    uid: cred.uid,
                    gid: cred.gid,
                };
                self.client_request(id, me, req, c)
            }
        }
    }

    /// A tool's request.
    pub(super) fn tool_request(&mut self, id: u64, t: ToolRequest) -> bool {
        match t {
            ToolRequest::Notify(n) => {
                let class = EventClass::of(n.code);
                let status = match self.shared.dispatch(Via::Tool, *n, class) {
                    Ok(_) => Status::SUCCESS,
                    Err(s) => s,
                };
                self.reply(id, &Reply::Done { status: status.0 })
            }
            ToolRequest::Inspect => {
                let text = super::inspect_text(&self.shared);
                self.reply(id, &Reply::Text { text })
            }
        }
    }

    /// A connected client's request: one line each.
    pub(super) fn client_request(
        &mut self,
        id: u64,
        me: Proc,
        r: impl Fn(u64) -> Req,
        c: ClientRequest,
    ) -> bool {
        self.count_request(&me);
        use ClientRequest as C;
        match c {
            C::RegisterEvents(codes) => self.register_events(id, codes),
            C::DeregisterEvents(codes) => {
                self.forget_codes(id, &codes);
                self.reply(id, &Reply::Done { status: 0 });
            }
            C::Finalize => self.finalize(id, me),
            C::Allocate {
                rid,
                directive,
                info,
            } => self.with_subsystems(|_, cx| handoff::allocate(cx, r(rid), directive, info)),
            C::Abort {
                rid,
                status,
                msg,
                targets,
            } => self.with_subsystems(|_, cx| handoff::abort(cx, r(rid), status, &msg, targets)),
            C::Log {
                rid,
                data,
                directives,
            } => self.with_subsystems(|_, cx| handoff::log(cx, r(rid), data, directives)),
            C::JobControl {
                rid,
                targets,
                directives,
            } => self.with_subsystems(|s, cx| s.jobs.request(cx, r(rid), targets, directives)),
            C::Monitor {
                rid,
                monitor,
                error,
                directives,
            } => {
                self.with_subsystems(|s, cx| s.mons.request(cx, r(rid), monitor, error, directives))
            }
            C::Fence { rid, procs, info } => {
                self.with_subsystems(|s, cx| s.fences.enter(cx, r(rid), procs, info))
            }
            C::Commit(items) => self.with_subsystems(|s, cx| s.exchange.commit(cx, me, items)),
            C::Get {
                rid,
                proc,
                key,
                info,
            } => self.with_subsystems(|s, cx| s.exchange.get(cx, r(rid), *proc, key, info)),
            C::Publish { rid, info } => {
                self.with_subsystems(|_, cx| pubsub::publish(cx, r(rid), info))
            }
            C::Lookup { rid, keys, info } => {
                self.with_subsystems(|_, cx| pubsub::lookup(cx, r(rid), keys, info))
            }
            C::Unpublish { rid, keys, info } => {
                self.with_subsystems(|_, cx| pubsub::unpublish(cx, r(rid), keys, info))
            }
            C::Spawn {
                rid,
                job_info,
                apps,
            } => self.with_subsystems(|_, cx| dpm::spawn(cx, r(rid), job_info, apps)),
            C::Connect {
                rid,
                disconnect,
                procs,
                info,
            } => {
                self.with_subsystems(|s, cx| s.connects.enter(cx, r(rid), disconnect, procs, info))
            }
            C::Query { rid, queries } => {
                let uid = r(rid).uid;
                let (s, info) = super::query::answer(&self.shared, &me, uid, &queries);
                self.answer(id, rid, s, info, None);
            }
        }
        self.conns.contains_key(&id)
    }

    /// One more request from `me` (for `inspect`).
    pub(super) fn count_request(&self, me: &Proc) {
        let mut m = self.shared.nspaces();
        if let Some(slot) = m
            .get_mut(&me.nspace)
            .and_then(|ns| ns.clients.get_mut(&me.rank))
        {
            slot.requests += 1;
        }
    }

    /// The client registered handlers for `codes` (the host hears of the
    /// environment codes no other client had).
    pub(super) fn register_events(&mut self, id: u64, codes: Vec<Status>) {
        let fresh = self.shared.env_refs.add(&codes);
        if let Some(c) = self.conns.get_mut(&id) {
            c.codes.extend(codes.iter().filter(|c| c.is_system_event()));
        }
        if !fresh.is_empty() {
            self.shared.host.register_events(&fresh, Done::ignored());
        }
        self.reply(id, &Reply::Done { status: 0 });
    }

    /// The client's last handlers for `codes` went away.
    pub(super) fn forget_codes(&mut self, id: u64, codes: &[Status]) {
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

    /// `PMIx_Finalize`: the client leaves on purpose. The host hears
    /// `client_finalized` now, and the client's call returns once the host
    /// completed it (as OpenPMIx does): a host that takes a process ending
    /// without a finalization for an abnormal end (Open MPI's runtime)
    /// must have heard of it before the process can exit.
    pub(super) fn finalize(&mut self, id: u64, me: Proc) {
        if let Some(c) = self.conns.get_mut(&id) {
            c.finalized = true;
            c.host_told = true;
        }
        if let Some(ns) = self.shared.nspaces().get_mut(&me.nspace) {
            if let Some(s) = ns.clients.get_mut(&me.rank) {
                s.finalized = true;
            }
        }
        let shared = self.shared.clone();
        let done = Done::new(
            move |_, ()| shared.command(Cmd::Finalized { conn: id }),
            || (),
        );
        self.shared.host.client_finalized(&me, false, done);
    }

    /// Sends a reply; `false` (connection dropped) if it cannot.
    pub(super) fn reply(&mut self, id: u64, r: &Reply) -> bool {
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
    pub(super) fn flush(&mut self, id: u64) {
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

    pub(super) fn refuse_and_drop(&mut self, id: u64, s: Status, why: &str) {
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
        let pidfd = c.pidfd;
        let wait = self.with_subsystems(|s, cx| {
            s.mons.end(&proc);
            s.jobs.proc_ended(cx, proc, pidfd)
        });
        if let Some((fd, p)) = wait {
            let exit_id = self.id();
            if self.watch_exit(&fd, exit_id) {
                self.exits.insert(exit_id, (fd, p));
            } else {
                self.subs.jobs.run_cleanup(&self.shared, &p);
            }
        }
        let codes = c.codes.clone();
        let gone = self.shared.env_refs.remove(&codes);
        if !gone.is_empty() {
            self.shared.host.deregister_events(&gone, Done::ignored());
        }
        let mut ckpts = Vec::new();
        if let Some(w) = self.watches.get_mut(&proc.nspace) {
            w.entries.remove(entry);
            // Its queue may still hold records submitted before it died:
            // route them (they were sent), then release the entry.
            drain_one(&self.shared, &mut w.collector, entry, &proc, &mut ckpts);
            w.collector.discard(entry);
            w.region.release_client(entry);
        }
        self.checkpoints_complete(ckpts);
        if let Some(ns) = self.shared.nspaces().get_mut(&proc.nspace) {
            if let Some(s) = ns.clients.get_mut(&proc.rank) {
                s.entry = None;
                s.pid = None;
            }
        }
        // Fences it had not entered cannot complete any more.
        self.settle_fences();
        let lost = !c.finalized;
        if !c.host_told {
            self.shared
                .host
                .client_finalized(&proc, lost, Done::ignored());
        }
        if lost && !self.shared.stopping.is_set() {
            self.report_death(proc);
        }
    }

    /// A client's connection ended before `PMIx_Finalize`: unless the host
    /// reports deaths itself the client's namespace gets
    /// `PMIX_ERR_PROC_ABORTED`, and then the server process's own handlers
    /// get `PMIX_ERR_LOST_CONNECTION` (as OpenPMIx raises it); both name
    /// the dead client as source and affected process. The peers' event
    /// is in their ring first: a host handler may end the whole job on
    /// the second (Slurm's kills the step on any event), and the peers
    /// must have been told by then.
    pub(super) fn report_death(&mut self, proc: Proc) {
        let affected = || Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, Value::Proc(Box::new(proc)));
        if !self.shared.host.reports_client_deaths() {
            let n = Notification::new(Status::ERR_PROC_ABORTED, proc, DataRange::NAMESPACE)
                .info(affected());
            let class = EventClass::of(n.code);
            let _ = self.shared.dispatch(Via::Server, n, class);
        }
        let n = Notification::new(Status::ERR_LOST_CONNECTION, proc, DataRange::PROC_LOCAL)
            .info(affected());
        let _ = self.shared.engine.notify_queued(n);
    }
}
