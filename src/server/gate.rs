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

use super::Shared;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

/// How long a connection may stay without a first accepted request.
pub const HELLO_DEADLINE: Duration = Duration::from_secs(5);

/// Pending connections one uid may hold beyond its registered clients not
/// yet connected.
pub const PENDING_PER_UID: usize = 16;

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

impl Gate {
    /// A connection of `uid` was accepted: may it stay pending? `false`:
    /// close it at once (said once per episode).
    pub(super) fn admit(&mut self, shared: &Shared, uid: u32) -> bool {
        self.backoff = Duration::ZERO;
        if self.may_wait(shared, uid) {
            return true;
        }
        *self.closed.entry(uid).or_default() += 1;
        if self.told.insert(uid) {
            shared.say(&format!(
                "uid {uid} holds {} connections that have not said hello: \
                 closing its further ones at once",
                self.by_uid.get(&uid).copied().unwrap_or(0)
            ));
        }
        false
    }

    /// Connection `id` of `uid` is pending from `now`.
    pub(super) fn pending(&mut self, uid: u32, id: u64, now: Instant) {
        *self.by_uid.entry(uid).or_default() += 1;
        self.deadlines.push_back((now + HELLO_DEADLINE, id));
    }

    /// Out of descriptors (or memory): the listener stays readable, so it
    /// is not watched again until the back-off passes.
    pub(super) fn pause(&mut self, shared: &Shared, e: &std::io::Error, open: usize, now: Instant) {
        let first = self.backoff.is_zero();
        self.backoff = if first {
            BACKOFF_MIN
        } else {
            (self.backoff * 2).min(BACKOFF_MAX)
        };
        self.paused_until = Some(now + self.backoff);
        if first {
            shared.say(&format!(
                "cannot accept a connection ({e}; {open} open): accepting paused, retried every \
                 {BACKOFF_MIN:?} to {BACKOFF_MAX:?} until it succeeds"
            ));
        }
    }

    /// May one more pending connection of `uid` stay?
    fn may_wait(&self, shared: &Shared, uid: u32) -> bool {
        let now = self.by_uid.get(&uid).copied().unwrap_or(0);
        if now < PENDING_PER_UID {
            return true;
        }
        // Only past the base allowance: count this uid's registered
        // clients that are not connected.
        let expected: usize = shared
            .nspaces()
            .values()
            .filter(|ns| ns.owner.is_some_and(|(u, _)| u == uid))
            .map(|ns| ns.clients.values().filter(|c| c.entry.is_none()).count())
            .sum();
        now < PENDING_PER_UID + expected
    }

    /// A pending connection of `uid` spoke or is going away.
    pub(super) fn unpend(&mut self, shared: &Shared, uid: u32) {
        if let Some(n) = self.by_uid.get_mut(&uid) {
            *n -= 1;
            if *n == 0 {
                self.by_uid.remove(&uid);
                self.told.remove(&uid);
                if let Some(k) = self.closed.remove(&uid) {
                    shared.say(&format!(
                        "uid {uid}: {k} connection(s) closed at once for having too many \
                         waiting to say hello"
                    ));
                }
            }
        }
    }

    /// The next time [`Gate::due`] has something to do.
    pub(super) fn deadline(&self) -> Option<Instant> {
        [self.deadlines.front().map(|d| d.0), self.paused_until]
            .into_iter()
            .flatten()
            .min()
    }

    /// The connections whose deadline passed (those still pending are to
    /// be closed), and whether accepting resumes.
    pub(super) fn due(&mut self, now: Instant) -> (Vec<u64>, bool) {
        let mut expired = Vec::new();
        while let Some(&(at, id)) = self.deadlines.front() {
            if at > now {
                break;
            }
            self.deadlines.pop_front();
            expired.push(id);
        }
        let resume = self.paused_until.is_some_and(|t| t <= now);
        if resume {
            self.paused_until = None;
        }
        (expired, resume)
    }
}
