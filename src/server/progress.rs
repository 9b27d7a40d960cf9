//! The server's progress thread: one io_uring reactor waiting on the
//! listening socket, every connection, every client's pidfd, every
//! namespace's submission doorbell and the API eventfd. The doorbells of the
//! first [`Reactor::MAX_WORDS`] namespaces are not io_uring watches: the
//! thread sleeps on them and on the ring's completions in one
//! `futex_waitv` (`Reactor::wait_with`), which a client's ring wakes
//! sooner; those of later namespaces are watches.

use super::conn::{pidfd_of, Conn, Parked};
use super::dpm::Connects;
use super::exchange::Exchange;
use super::fence::Fences;
use super::jobs::JobState;
use super::monitor::Monitors;
use super::outbox::{merge, Ctx, Join, Outbox, Outgoing, Then, Timed};
use super::routing::Via;
use super::{lock, Cmd, Shared};
use crate::event::{Event, Notification, Origin};
use crate::ring::{Collected, Collector, Region};
use crate::sync::{Reactor, Token};
use crate::types::{Info, Nspace, Proc, Status};
use crate::wire::control::{self, Reply};
use crate::wire::{event_from_archived, info_to_record, relayable_as_is};
use shm_layout::record::ArchivedEventRecord;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::sync::Arc;
use std::time::Instant;

pub(super) const LISTEN: u64 = 1;
pub(super) const WAKE: u64 = 2;
const KIND_SHIFT: u32 = 56;
pub(super) const CONN: u64 = 1 << KIND_SHIFT;
pub(super) const PIDFD: u64 = 2 << KIND_SHIFT;
pub(super) const BELL: u64 = 3 << KIND_SHIFT;
/// A process whose connection closed but which still runs (its cleanup
/// waits for its exit).
pub(super) const EXIT: u64 = 4 << KIND_SHIFT;
/// A connection whose replies did not fit its socket buffer can take more.
pub(super) const WRITE: u64 = 5 << KIND_SHIFT;
const ID_MASK: u64 = (1 << KIND_SHIFT) - 1;

/// Records taken from one submission queue per round.
const DRAIN_BATCH: usize = 64;

/// Reply bytes a connection may have waiting for room in its socket: a
/// peer further behind is not reading its replies.
pub(super) const MAX_BACKLOG: usize = 4 * control::MAX_FRAME;

pub(super) struct Watch {
    id: u64,
    pub collector: Collector,
    pub region: Region,
    bell: Bell,
    /// Connected clients: entry → proc.
    pub entries: Entries,
}

/// A namespace's connected clients by client-table entry. Every round of
/// the progress thread visits each entry's queue (twice when it goes to
/// sleep): the entries are kept apart from their 260-byte procs, so that
/// the visit walks a short list, not a map of procs (with 256 clients the
/// map is 67 KiB, larger than a core's first-level cache).
#[derive(Default)]
pub(super) struct Entries {
    ids: Vec<u32>,
    procs: HashMap<u32, Proc>,
}

impl Entries {
    pub(super) fn insert(&mut self, entry: u32, proc: Proc) {
        if self.procs.insert(entry, proc).is_none() {
            self.ids.push(entry);
        }
    }

    pub(super) fn remove(&mut self, entry: u32) {
        if self.procs.remove(&entry).is_some() {
            self.ids.retain(|&e| e != entry);
        }
    }

    /// Every entry, in the order they connected.
    pub(super) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.ids.iter().copied()
    }

    pub(super) fn proc(&self, entry: u32) -> Option<&Proc> {
        self.procs.get(&entry)
    }
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
    pub(super) shared: Arc<Shared>,
    pub(super) reactor: Reactor,
    pub(super) listener: UnixListener,
    pub(super) conns: HashMap<u64, Conn>,
    pub(super) watches: HashMap<Nspace, Watch>,
    pub(super) next_id: u64,
    /// The subsystems with timers and requests of their own.
    pub(super) subs: Subsystems,
    /// What the subsystems asked for during the current call.
    pub(super) outbox: Outbox,
    /// Requests answered in parts, by connection and request number.
    pub(super) joins: HashMap<(u64, u64), Join>,
    /// Closed connections whose process still runs: its cleanup at exit.
    pub(super) exits: HashMap<u64, (OwnedFd, Proc)>,
    /// Most watches with a [`Bell::Direct`]: `shared.direct_bells`, or 0
    /// when the reactor cannot sleep on words.
    pub(super) direct_max: usize,
    /// Pending connections and accept back-off (`gate`).
    pub(super) gate: super::gate::Gate,
    /// Hellos from processes not registered yet, by connection: a host may
    /// fork and exec before it registers. Each waits for
    /// [`Cmd::Registered`] while its connection is pending (the gate's
    /// deadline then refuses it with the reason).
    pub(super) parked: HashMap<u64, Parked>,
}

/// The progress thread's subsystems; each sees the rest of the server
/// only through an [`Ctx`].
#[derive(Default)]
pub(super) struct Subsystems {
    pub fences: Fences,
    pub jobs: JobState,
    pub mons: Monitors,
    pub exchange: Exchange,
    pub connects: Connects,
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
        subs: Subsystems::default(),
        outbox: Outbox::default(),
        joins: HashMap::new(),
        exits: HashMap::new(),
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
        // The subsystems' timers are deadlines of this one wait.
        let timeout = if busy {
            Some(std::time::Duration::ZERO)
        } else {
            let s = &l.subs;
            [
                s.fences.deadline(),
                s.jobs.deadline(),
                s.mons.deadline(),
                s.exchange.deadline(),
                l.gate.deadline(),
            ]
            .into_iter()
            .flatten()
            .min()
            .map(|d| d.saturating_duration_since(Instant::now()))
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
                    if let Some((_, p)) = l.exits.remove(&id) {
                        l.subs.jobs.run_cleanup(&l.shared, &p);
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
        // Timers run only when one is due: most rounds are an event's, and
        // with no timer set the clock is not read at all.
        let mut clock = None;
        let mut due =
            |d: Option<Instant>| d.is_some_and(|d| d <= *clock.get_or_insert_with(Instant::now));
        let s = &l.subs;
        if due(s.fences.deadline())
            || due(s.jobs.deadline())
            || due(s.mons.deadline())
            || due(s.exchange.deadline())
        {
            l.with_subsystems(|s, cx| {
                s.fences.tick(cx);
                s.jobs.tick(cx);
                s.mons.tick(cx);
                s.exchange.tick(cx);
            });
        }
        if due(l.gate.deadline()) {
            l.gate_tick(clock.unwrap_or_else(Instant::now));
        }
        busy = !l.arm_bells();
    }
}

impl Loop {
    pub(super) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(super) fn arm_fixed(&mut self) -> std::io::Result<()> {
        self.reactor
            .watch_readable(self.listener.as_raw_fd(), Token(LISTEN))?;
        self.reactor
            .watch_readable(self.shared.wake.as_raw_fd(), Token(WAKE))
    }

    /// Processes API commands. `true`: stop.
    pub(super) fn commands(&mut self) -> bool {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live buffer (non-blocking fd).
        unsafe { libc::read(self.shared.wake.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        let cmds = std::mem::take(&mut *lock(&self.shared.cmds));
        for c in cmds {
            match c {
                Cmd::Stop => return true,
                Cmd::Answer {
                    conn,
                    rid,
                    status,
                    info,
                } => self.answer(conn, rid, status, info, None),
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
                            entries: Entries::default(),
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
                    self.settle_fences();
                }
                Cmd::Settle => self.settle_fences(),
                Cmd::Registered => self.unpark(),
                Cmd::Finalized { conn } => {
                    // Gone meanwhile: nobody waits for the reply.
                    if self.conns.contains_key(&conn) {
                        self.reply(conn, &Reply::Done { status: 0 });
                    }
                }
                Cmd::FenceDone { id, status, data } => self.with_subsystems(|s, cx| {
                    let got = s.fences.host_done(cx, id, status, data);
                    s.exchange.collected(cx, &got);
                }),
                Cmd::Modex { proc, status, data } => {
                    self.with_subsystems(|s, cx| s.exchange.modex_done(cx, proc, status, data))
                }
                Cmd::Serve { proc, done } => {
                    self.with_subsystems(|s, cx| s.exchange.serve(cx, proc, done))
                }
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
                    self.settle_fences();
                }
            }
        }
        let _ = self
            .reactor
            .watch_readable(self.shared.wake.as_raw_fd(), Token(WAKE));
        false
    }

    /// Runs `f` on the subsystems with a context over the rest of the
    /// loop, then carries out what they put in the outbox.
    pub(super) fn with_subsystems<R>(
        &mut self,
        f: impl FnOnce(&mut Subsystems, &mut Ctx) -> R,
    ) -> R {
        let conns = &self.conns;
        let pidfd = |p: &Proc| pidfd_of(conns, p);
        let mut cx = Ctx {
            shared: &self.shared,
            out: &mut self.outbox,
            now: Instant::now(),
            pidfd: &pidfd,
        };
        let r = f(&mut self.subs, &mut cx);
        self.deliver();
        r
    }

    /// Completes the fences every participant entered and fails those a
    /// participant left; ends the Gets and host requests waiting for the
    /// commit of a process that left.
    pub(super) fn settle_fences(&mut self) {
        super::barrier::settle(&self.shared);
        self.with_subsystems(|s, cx| {
            s.fences.settle(cx);
            s.exchange.settle(cx);
            s.connects.settle(cx);
        });
    }

    /// Carries out the outbox: parts announced, graces started, answers
    /// sent (each may drop its connection, which settles again).
    pub(super) fn deliver(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        let out = std::mem::take(&mut self.outbox);
        for (conn, rid, parts) in out.joins {
            self.joins.insert(
                (conn, rid),
                Join {
                    left: parts,
                    parts: Vec::new(),
                    then: Vec::new(),
                },
            );
        }
        if !out.graces.is_empty() {
            let deadline = Instant::now() + self.shared.term_grace;
            for g in out.graces {
                self.subs.jobs.grace(deadline, g);
            }
        }
        for Outgoing {
            conn,
            rid,
            status,
            info,
            then,
        } in out.answers
        {
            self.answer(conn, rid, status, info, then);
        }
    }

    /// Sends a `Result` now, or, for a request answered in parts, records
    /// this part (the last one sends the merged answer); then `then`.
    pub(super) fn answer(
        &mut self,
        conn: u64,
        rid: u64,
        s: Status,
        info: Vec<Info>,
        then: Option<Then>,
    ) {
        let Some(j) = self.joins.get_mut(&(conn, rid)) else {
            self.send_frame(conn, result_frame(rid, s, &info));
            if let Some(f) = then {
                f();
            }
            return;
        };
        j.parts.push((s, info));
        j.then.extend(then);
        j.left -= 1;
        if j.left > 0 {
            return;
        }
        let Some(j) = self.joins.remove(&(conn, rid)) else {
            return;
        };
        let (s, info) = merge(j.parts);
        self.send_frame(conn, result_frame(rid, s, &info));
        for f in j.then {
            f();
        }
    }

    /// The connection `conn` closed: its requests in parts will not be
    /// answered, but what waited for their answers was asked for and runs.
    pub(super) fn forget_joins(&mut self, conn: u64) {
        let keys: Vec<(u64, u64)> = self.joins.keys().filter(|k| k.0 == conn).copied().collect();
        for k in keys {
            if let Some(j) = self.joins.remove(&k) {
                for f in j.then {
                    f();
                }
            }
        }
    }

    /// Routes every record queued by every connected client. A client's
    /// checkpoint report is acted on after the round (it needs the whole
    /// loop; the round borrows the watches).
    pub(super) fn drain(&mut self) {
        let mut ckpts = Vec::new();
        for w in self.watches.values_mut() {
            let Watch {
                collector, entries, ..
            } = w;
            // Every queue is looked at: an empty one costs two loads, not a
            // call and a copy of its 260-byte source.
            for entry in entries.ids() {
                if !collector.holds(entry) {
                    continue;
                }
                if let Some(source) = entries.proc(entry) {
                    drain_one(&self.shared, collector, entry, source, &mut ckpts);
                }
            }
        }
        self.checkpoints_complete(ckpts);
    }

    /// Clients' checkpoint reports, for the requests waiting for them.
    pub(super) fn checkpoints_complete(
        &mut self,
        ckpts: Vec<(Proc, super::routing::Route, Notification)>,
    ) {
        if ckpts.is_empty() {
            return;
        }
        self.with_subsystems(|s, cx| {
            for (source, route, n) in ckpts {
                s.jobs.checkpoint_complete(cx, source, &route, &n);
            }
        });
    }

    /// A watch removed from the table: its doorbell is no longer slept on.
    pub(super) fn unwatch(&mut self, w: &Watch) {
        if let Bell::Watched { .. } = w.bell {
            let _ = self.reactor.cancel(Token(BELL | w.id));
        }
    }

    /// Gets every namespace's doorbell ready for the next sleep: a direct
    /// one's value to sleep on, an io_uring watch armed where it is not.
    /// `false`: some queue filled up meanwhile (drain again first).
    pub(super) fn arm_bells(&mut self) -> bool {
        let mut quiet = true;
        for w in self.watches.values_mut() {
            if let Bell::Watched { armed: true } = w.bell {
                continue;
            }
            let ready = w.collector.prepare_sleep(w.entries.ids());
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
pub(super) fn drain_one(
    shared: &Shared,
    collector: &mut Collector,
    entry: u32,
    source: &Proc,
    ckpts: &mut Vec<(Proc, super::routing::Route, Notification)>,
) {
    let source = *source;
    for _ in 0..DRAIN_BATCH {
        // The slot of the record before is released only now that it is
        // routed: a lane record's ring copy is published by then.
        collector.finish();
        let (mut ev, as_is) = match collector.pop(entry) {
            Collected::Empty => return,
            Collected::Corrupt { why, .. } => {
                shared.say(&format!("submission from {source} dropped: {why}"));
                continue;
            }
            Collected::Record { rec, .. } => match submitted_event(rec, source) {
                Ok(x) => x,
                Err(why) => {
                    shared.say(&why);
                    continue;
                }
            },
        };
        let ckpt = (ev.code() == Status::JCTRL_CHECKPOINT_COMPLETE).then(|| Notification {
            code: ev.code(),
            source,
            range: ev.range(),
            info: ev.info().to_vec(),
        });
        // A lane record (`ring::lane`): its peers had it from the queue.
        let lane = collector.lane();
        let relay = as_is.then_some(&mut *collector);
        match shared.dispatch_event(Via::Client, &mut ev, relay, lane) {
            Ok((route, to_engine)) => {
                if to_engine {
                    let _ = shared.engine.deliver(ev);
                }
                if let Some(n) = ckpt {
                    ckpts.push((source, route, n));
                }
            }
            Err(s) => shared.say(&format!("event from {source} refused: {s}")),
        }
    }
    collector.finish();
}

/// A client's submitted record as the event it carries, decoded and
/// validated once, its source the authenticated submitter (never what the
/// record says); `true` when the record can be relayed as its bytes are.
fn submitted_event(rec: &ArchivedEventRecord, source: Proc) -> Result<(Event, bool), String> {
    let w =
        event_from_archived(rec).map_err(|s| format!("submission from {source} refused: {s}"))?;
    let n = Notification {
        code: w.code,
        source,
        range: w.range,
        info: w.info,
    };
    let ev = Event::of_class(n, Origin::ThisNode, w.class)
        .map_err(|s| format!("event from {source} refused: {s}"))?;
    let as_is = relayable_as_is(rec, &source, ev.info());
    Ok((ev, as_is))
}

/// A `Result` frame.
fn result_frame(rid: u64, s: Status, info: &[Info]) -> Vec<u8> {
    control::frame(&Reply::Result {
        id: rid,
        status: s.0,
        info: info.iter().map(info_to_record).collect(),
    })
}
