//! The control socket's door: who may wait there before saying who they
//! are, for how long, and what the server does when it runs out of file
//! descriptors.
//!
//! Anyone who can reach the socket can connect (the directory decides who
//! can reach it; `SO_PEERCRED` decides who is who once a peer speaks). A
//! connection is *pending* until its first request was accepted (`Hello`
//! from a registered client, or a tool's request from the server's uid or
//! root). Pending connections are bounded twice:
//!
//! - in time: one that has not spoken within [`HELLO_DEADLINE`] is closed
//!   (one whose Hello names a process not registered yet waits as long,
//!   then is refused with the reason);
//! - in number, per peer uid: [`PENDING_PER_UID`] plus the number of that
//!   uid's registered clients not yet connected (a job's ranks all connect
//!   at once at start). A connection beyond that is closed as soon as it is
//!   accepted.
//!
//! So idle connections from one user hold at most a few descriptors, for a
//! few seconds, and never those another user's registered clients need.
//! When `accept` fails for want of descriptors (`EMFILE`, `ENFILE`) or
//! memory, the listener is left unwatched for a back-off (10 ms doubling to
//! 1 s) instead of being re-armed while still readable, which would spin;
//! the server says so once per episode through its trace sink.

use super::progress::{Conn, Loop};
use crate::sync::Token;
use crate::wire::control;
use std::collections::{HashMap, HashSet, VecDeque};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long a connection may stay without a first accepted request.
pub const HELLO_DEADLINE: Duration = Duration::from_secs(5);

/// Pending connections one uid may hold beyond its registered clients not
/// yet connected.
pub const PENDING_PER_UID: usize = 16;

/// Connections taken from the listener per round of the progress thread
/// (then the other work of the round; the listener fires again at once).
const ACCEPT_BATCH: usize = 64;

const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// The state of the door, kept by the progress thread.
#[derive(Default)]
pub(super) struct Gate {
    /// Deadlines of pending connections, in accept order (so in deadline
    /// order); entries of connections gone or no longer pending are skipped.
    deadlines: VecDeque<(Instant, u64)>,
    /// Pending connections per peer uid.
    by_uid: HashMap<u32, usize>,
    /// Uids told about (their excess connections are being closed) since
    /// they last had none pending.
    told: HashSet<u32>,
    /// Accepting is paused until then (descriptors ran out).
    paused_until: Option<Instant>,
    backoff: Duration,
    /// Connections closed at once since the last report, per uid.
    closed: HashMap<u32, u64>,
}

impl Loop {
    /// Takes new connections from the listener.
    pub(super) fn accept(&mut self) {
        let mut taken = 0;
        while taken < ACCEPT_BATCH {
            taken += 1;
            match self.listener.accept() {
                Ok((stream, _)) => {
                    self.gate.backoff = Duration::ZERO;
                    let Ok(cred) = control::peer_cred(&stream) else {
                        continue;
                    };
                    if !self.may_wait(cred.uid) {
                        *self.gate.closed.entry(cred.uid).or_default() += 1;
                        if self.gate.told.insert(cred.uid) {
                            self.shared.say(&format!(
                                "uid {} holds {} connections that have not said hello: \
                                 closing its further ones at once",
                                cred.uid,
                                self.gate.by_uid.get(&cred.uid).copied().unwrap_or(0)
                            ));
                        }
                        continue; // dropped: closed
                    }
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let id = self.id();
                    if self
                        .reactor
                        .watch_readable(stream.as_raw_fd(), Token(super::progress::CONN | id))
                        .is_err()
                    {
                        continue;
                    }
                    *self.gate.by_uid.entry(cred.uid).or_default() += 1;
                    self.gate
                        .deadlines
                        .push_back((Instant::now() + HELLO_DEADLINE, id));
                    self.conns.insert(id, Conn::new(stream, cred));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR | libc::ECONNABORTED | libc::EPROTO) => continue,
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
                        return self.pause_accepting(&e);
                    }
                    _ => break,
                },
            }
        }
        let _ = self
            .reactor
            .watch_readable(self.listener.as_raw_fd(), Token(super::progress::LISTEN));
    }

    /// Out of descriptors (or memory): the listener stays readable, so it
    /// is not watched again until the back-off passes.
    fn pause_accepting(&mut self, e: &std::io::Error) {
        let first = self.gate.backoff.is_zero();
        self.gate.backoff = if first {
            BACKOFF_MIN
        } else {
            (self.gate.backoff * 2).min(BACKOFF_MAX)
        };
        self.gate.paused_until = Some(Instant::now() + self.gate.backoff);
        if first {
            self.shared.say(&format!(
                "cannot accept a connection ({e}; {} open): accepting paused, retried every \
                 {BACKOFF_MIN:?} to {BACKOFF_MAX:?} until it succeeds",
                self.conns.len()
            ));
        }
    }

    /// May one more pending connection of `uid` stay?
    fn may_wait(&self, uid: u32) -> bool {
        let now = self.gate.by_uid.get(&uid).copied().unwrap_or(0);
        if now < PENDING_PER_UID {
            return true;
        }
        // Only past the base allowance: count this uid's registered
        // clients that are not connected.
        let expected: usize = self
            .shared
            .nspaces()
            .values()
            .filter(|ns| ns.owner.is_some_and(|(u, _)| u == uid))
            .map(|ns| ns.clients.values().filter(|c| c.entry.is_none()).count())
            .sum();
        now < PENDING_PER_UID + expected
    }

    /// Connection `id` spoke (its first request was accepted) or is going
    /// away: it no longer counts as pending.
    pub(super) fn unpend(&mut self, id: u64) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        if !std::mem::take(&mut c.pending) {
            return;
        }
        let uid = c.cred.uid;
        if let Some(n) = self.gate.by_uid.get_mut(&uid) {
            *n -= 1;
            if *n == 0 {
                self.gate.by_uid.remove(&uid);
                self.gate.told.remove(&uid);
                if let Some(k) = self.gate.closed.remove(&uid) {
                    self.shared.say(&format!(
                        "uid {uid}: {k} connection(s) closed at once for having too many \
                         waiting to say hello"
                    ));
                }
            }
        }
    }

    /// The next time [`Loop::gate_tick`] has something to do.
    pub(super) fn gate_deadline(&self) -> Option<Instant> {
        [
            self.gate.deadlines.front().map(|d| d.0),
            self.gate.paused_until,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Closes pending connections past their deadline; resumes accepting
    /// when the back-off passed.
    pub(super) fn gate_tick(&mut self, now: Instant) {
        while let Some(&(at, id)) = self.gate.deadlines.front() {
            if at > now {
                break;
            }
            self.gate.deadlines.pop_front();
            if self.conns.get(&id).is_some_and(|c| c.pending) && !self.refuse_parked(id) {
                self.drop_conn(id, "no hello within the deadline");
            }
        }
        if self.gate.paused_until.is_some_and(|t| t <= now) {
            self.gate.paused_until = None;
            self.accept();
        }
    }
}
