//! What the progress thread's subsystems (fences, job control, monitors)
//! work with: a narrow context instead of the whole loop. A subsystem sees
//! the shared server state, the time of the round and a way to find a
//! connected process's pidfd; what it wants done to connections — an
//! answer, an answer in parts, a SIGKILL grace another subsystem owns —
//! goes into the [`Outbox`], which the loop carries out after the call.
//! So no subsystem knows the loop, and the loop is the only file that
//! knows them all.

use super::{Cmd, Done, Shared};
use crate::job::REASON;
use crate::types::{Info, Proc, Status};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Instant;

/// How a request is answered: now, or later by a completion posted back
/// to the progress thread (the host's upcall, a fence, a checkpoint).
#[derive(Debug)]
pub(super) enum Answer {
    /// A status and its results.
    Now(Status, Vec<Info>),
    /// Someone else answers it later.
    Later,
}

/// Why a request is refused: a status and a reason for the requester
/// (sent as a `fastpmix.reason` result).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Refusal {
    pub status: Status,
    pub why: String,
}

impl Refusal {
    pub(super) fn new(status: Status, why: impl Into<String>) -> Refusal {
        Refusal {
            status,
            why: why.into(),
        }
    }
}

impl Refusal {
    /// The status and the results that carry the reason.
    pub(super) fn into_result(self) -> (Status, Vec<Info>) {
        (self.status, vec![Info::new(REASON, self.why)])
    }
}

impl From<Refusal> for Answer {
    fn from(r: Refusal) -> Answer {
        let (s, info) = r.into_result();
        Answer::Now(s, info)
    }
}

/// A refusal, as an answer.
pub(super) fn refusal(s: Status, why: impl Into<String>) -> Answer {
    Refusal::new(s, why).into()
}

/// What runs once an answer was sent (the requester's own signal: it
/// hears the result before it is paused or killed).
pub(super) type Then = Box<dyn FnOnce()>;

/// A request in progress: its connection and number, and who asked (the
/// connection's `SO_PEERCRED` identity).
#[derive(Clone, Copy, Debug)]
pub(super) struct Req {
    pub conn: u64,
    pub rid: u64,
    pub me: Proc,
    pub uid: u32,
    pub gid: u32,
}

impl Req {
    /// Completes the request from any thread (posted to the progress thread).
    pub fn done(self, shared: Arc<Shared>) -> Done<Vec<Info>> {
        Done::new(
            move |status, info| {
                shared.command(Cmd::Answer {
                    conn: self.conn,
                    rid: self.rid,
                    status,
                    info,
                })
            },
            Vec::new,
        )
    }
}

/// A SIGKILL grace: `proc` is killed at the end of the server's term
/// grace unless it is gone by then (job control owns the timers; a
/// monitor that terminates a stalled process asks for one).
pub(super) struct GraceOrder {
    pub proc: Proc,
    pub pidfd: OwnedFd,
    pub by: Option<Proc>,
    pub ctl_id: Option<String>,
}

/// One answer to send.
pub(super) struct Outgoing {
    pub conn: u64,
    pub rid: u64,
    pub status: Status,
    pub info: Vec<Info>,
    pub then: Option<Then>,
}

/// What a subsystem asked the loop to do, in order.
#[derive(Default)]
pub(super) struct Outbox {
    /// Requests that will be answered in this many parts (before their
    /// first part is answered).
    pub joins: Vec<(u64, u64, usize)>,
    pub answers: Vec<Outgoing>,
    pub graces: Vec<GraceOrder>,
}

/// A request answered in parts: one `Result` once every part is in.
pub(super) struct Join {
    pub left: usize,
    pub parts: Vec<(Status, Vec<Info>)>,
    pub then: Vec<Then>,
}

/// One answer from the parts: `PMIX_SUCCESS` when every part succeeded,
/// `PMIX_ERR_PARTIAL_SUCCESS` when some did, else the first part's error;
/// the results of every part, in the order the parts came in.
pub(super) fn merge(parts: Vec<(Status, Vec<Info>)>) -> (Status, Vec<Info>) {
    let ok = parts.iter().filter(|(s, _)| s.is_success()).count();
    let status = match parts.first() {
        Some(_) if ok == parts.len() => Status::SUCCESS,
        Some((s, _)) if ok == 0 => *s,
        Some(_) => Status::ERR_PARTIAL_SUCCESS,
        None => Status::ERROR,
    };
    (status, parts.into_iter().flat_map(|(_, i)| i).collect())
}

impl Outbox {
    /// Nothing asked for.
    pub(super) fn is_empty(&self) -> bool {
        self.joins.is_empty() && self.answers.is_empty() && self.graces.is_empty()
    }
}

/// A subsystem's view of the server during one call.
pub(super) struct Ctx<'a> {
    pub shared: &'a Arc<Shared>,
    pub out: &'a mut Outbox,
    pub now: Instant,
    /// A duplicate of a connected process's pidfd.
    pub pidfd: &'a dyn Fn(&Proc) -> Option<OwnedFd>,
}

impl Ctx<'_> {
    /// Answers request `rid` on `conn` (nothing for [`Answer::Later`]).
    pub(super) fn answer(&mut self, conn: u64, rid: u64, a: Answer) {
        if let Answer::Now(status, info) = a {
            self.answer_then(conn, rid, status, info, None);
        }
    }

    /// Answers, then runs `then` once the answer was sent.
    pub(super) fn answer_then(
        &mut self,
        conn: u64,
        rid: u64,
        status: Status,
        info: Vec<Info>,
        then: Option<Then>,
    ) {
        self.out.answers.push(Outgoing {
            conn,
            rid,
            status,
            info,
            then,
        });
    }

    /// Request `rid` on `conn` will be answered in `parts` parts.
    pub(super) fn join(&mut self, conn: u64, rid: u64, parts: usize) {
        self.out.joins.push((conn, rid, parts));
    }
}

/// A subsystem with timers: the loop sleeps until the earliest
/// [`Timed::deadline`] of all and then calls every [`Timed::tick`].
pub(super) trait Timed {
    fn deadline(&self) -> Option<Instant>;
    fn tick(&mut self, cx: &mut Ctx);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(s: Status, why: &str) -> (Status, Vec<Info>) {
        (s, vec![Info::new(crate::job::REASON, why.to_owned())])
    }

    #[test]
    fn a_request_in_parts_succeeds_when_every_part_did_and_keeps_every_reason() {
        let (s, info) = merge(vec![
            part(Status::SUCCESS, "here"),
            part(Status::SUCCESS, "there"),
        ]);
        assert_eq!(s, Status::SUCCESS);
        let why: Vec<_> = info.iter().filter_map(|i| i.value.as_str()).collect();
        assert_eq!(why, ["here", "there"]);
    }

    #[test]
    fn a_request_in_parts_is_partial_when_some_part_failed_and_the_first_error_when_all_did() {
        let partial = merge(vec![
            part(Status::ERR_NOT_FOUND, "here"),
            part(Status::SUCCESS, "there"),
        ]);
        assert_eq!(partial.0, Status::ERR_PARTIAL_SUCCESS);
        let failed = merge(vec![
            part(Status::ERR_NOT_FOUND, "here"),
            part(Status::ERR_NOT_SUPPORTED, "there"),
        ]);
        assert_eq!(failed.0, Status::ERR_NOT_FOUND);
        assert_eq!(failed.1.len(), 2);
    }
}
