//! `PMIx_Fence` across the local processes of this node, on the progress
//! thread (no data collection yet).
//!
//! A fence is keyed by its participant set: the named processes with every
//! wildcard expanded to the ranks registered at entry, sorted, duplicates
//! removed (so `ns:*` and the explicit list of every rank of `ns` are the
//! same fence). It completes, for everyone in it at once, when every
//! participant has entered. Each set has a queue of instances: a process
//! that enters again while an earlier instance is still open (two
//! `fence_nb` in a row) joins the next one, so back-to-back fences over the
//! same set stay separate barriers that complete in order.
//!
//! Failures answer everyone who entered the instance:
//! - a participant that leaves (dies, finalizes, is deregistered) before
//!   entering: `PMIX_ERR_LOST_CONNECTION` (one that entered and then left
//!   still counts: it reached the fence). A registered process that never
//!   connected leaves when the host deregisters it or reports its end
//!   (`Server::notify` of an event such as `PMIX_EVENT_PROC_TERMINATED`
//!   naming it: how `fastpmix run` tells of a rank that exited before
//!   `PMIx_Init`);
//! - a `PMIX_TIMEOUT` that passes (the earliest of the entrants'):
//!   `PMIX_ERR_TIMEOUT`; the instance is abandoned.
//!
//! Refused at entry, answering the caller only: `PMIX_COLLECT_DATA` true
//! or a required unknown attribute (`PMIX_ERR_NOT_SUPPORTED`); a
//! participant namespace that is not registered here, a rank that is not
//! a registered client, a special rank other than the wildcard, a caller
//! that is not among the participants (`PMIX_ERR_BAD_PARAM`). The last
//! one keeps processes out of each other's fences: every set holds its
//! callers, so no one can enter, and so complete, a fence of others. A
//! namespace of another uid is refused as if it were not registered (root
//! may name any): a fence must not tell who else runs on the node.

use super::outbox::{refusal, Ctx, Req, Timed};
use super::{FastMap, Ns, Shared};
use crate::job::REASON;
use crate::types::{attrs, Info, Nspace, Proc, Rank, Status};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Open fences, by participant set.
#[derive(Default)]
pub(super) struct Fences {
    open: HashMap<Vec<Proc>, VecDeque<Instance>>,
}

#[derive(Default)]
struct Instance {
    entered: Vec<Entrant>,
    deadline: Option<Instant>,
}

/// Who entered, and where their answer goes.
struct Entrant {
    proc: Proc,
    conn: u64,
    rid: u64,
}

impl Instance {
    fn has(&self, p: &Proc) -> bool {
        self.entered.iter().any(|e| e.proc == *p)
    }
}

/// A fence's timeout from its attributes, or why the fence is refused.
/// The client checks the same before sending (an error at once), the
/// server again (the client is not trusted).
pub(crate) fn options(info: &[Info]) -> Result<Option<Duration>, Status> {
    attrs::check_all(info)?;
    let mut timeout = None;
    for i in info {
        if i.key == attrs::PMIX_COLLECT_DATA {
            if i.value.as_flag() == Some(true) {
                return Err(Status::ERR_NOT_SUPPORTED);
            }
        } else if i.key == attrs::PMIX_TIMEOUT {
            // Checked as an `int` above; 0 means no timeout (the Standard).
            let secs = i.value.as_integer().ok_or(Status::ERR_BAD_PARAM)?;
            if secs < 0 {
                return Err(Status::ERR_BAD_PARAM);
            }
            if secs > 0 {
                timeout = Some(Duration::from_secs(secs as u64));
            }
        } else if i.is_required() {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
    }
    Ok(timeout)
}

/// Has `p` left for good: deregistered, finalized, connected once and
/// gone since, or reported ended by the host? A registered process that
/// never connected may still come, until the host says it ended.
fn gone(m: &FastMap<Nspace, Ns>, p: &Proc) -> bool {
    match m.get(&p.nspace).and_then(|ns| ns.clients.get(&p.rank)) {
        None => true,
        Some(s) => s.finalized || s.ended || (s.ever_connected && s.entry.is_none()),
    }
}

/// The concrete participant set, sorted. `uid`: the caller's.
fn participants(
    shared: &Shared,
    me: &Proc,
    uid: u32,
    procs: &[Proc],
) -> Result<Vec<Proc>, (Status, String)> {
    let whole = [Proc {
        nspace: me.nspace,
        rank: Rank::WILDCARD,
    }];
    let given = if procs.is_empty() { &whole[..] } else { procs };
    let m = shared.nspaces();
    let mut set = Vec::new();
    for p in given {
        let bad = |why: &str| {
            (
                Status::ERR_BAD_PARAM,
                format!("fence participant {p}: {why}"),
            )
        };
        let ns = m
            .get(&p.nspace)
            .filter(|ns| uid == 0 || ns.owner.is_none_or(|(u, _)| u == uid))
            .ok_or_else(|| bad("namespace not registered on this node"))?;
        if p.rank == Rank::WILDCARD {
            set.extend(ns.clients.keys().map(|r| Proc {
                nspace: p.nspace,
                rank: *r,
            }));
        } else if p.rank.is_real() && ns.clients.contains_key(&p.rank) {
            set.push(*p);
        } else {
            return Err(bad("not a registered process of this node"));
        }
    }
    set.sort_by(|a, b| (a.nspace.as_str(), a.rank.0).cmp(&(b.nspace.as_str(), b.rank.0)));
    set.dedup();
    if !set.contains(me) {
        return Err((
            Status::ERR_BAD_PARAM,
            format!("{me} is not among the fence's participants"),
        ));
    }
    Ok(set)
}

impl Fences {
    /// `PMIx_Fence` from a client.
    pub(super) fn enter(&mut self, cx: &mut Ctx, r: Req, procs: Vec<Proc>, info: Vec<Info>) {
        let (me, uid, conn, rid) = (r.me, r.uid, r.conn, r.rid);
        let timeout = match options(&info) {
            Ok(t) => t,
            Err(s) => return cx.answer(conn, rid, refusal(s, "fence attributes refused")),
        };
        let set = match participants(cx.shared, &me, uid, &procs) {
            Ok(s) => s,
            Err((s, why)) => return cx.answer(conn, rid, refusal(s, why)),
        };
        let deadline = timeout.map(|t| cx.now + t);
        let q = self.open.entry(set).or_default();
        let i = match q.iter().position(|i| !i.has(&me)) {
            Some(i) => i,
            None => {
                q.push_back(Instance::default());
                q.len() - 1
            }
        };
        let inst = &mut q[i];
        inst.entered.push(Entrant {
            proc: me,
            conn,
            rid,
        });
        inst.deadline = match (inst.deadline, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.settle(cx);
    }

    /// Completes every instance all participants entered, and fails every
    /// instance a participant left before entering. Called after an entry
    /// and whenever a process may have left.
    pub(super) fn settle(&mut self, cx: &mut Ctx) {
        if self.open.is_empty() {
            return;
        }
        let mut done: Vec<(Vec<Entrant>, Status, Option<String>)> = Vec::new();
        {
            let m = cx.shared.nspaces();
            for (set, q) in self.open.iter_mut() {
                q.retain_mut(|inst| {
                    if let Some(p) = set.iter().find(|p| !inst.has(p) && gone(&m, p)) {
                        let why = format!("{p} left before entering the fence");
                        let e = std::mem::take(&mut inst.entered);
                        done.push((e, Status::ERR_LOST_CONNECTION, Some(why)));
                        false
                    } else if inst.entered.len() == set.len() {
                        done.push((std::mem::take(&mut inst.entered), Status::SUCCESS, None));
                        false
                    } else {
                        true
                    }
                });
            }
        }
        self.open.retain(|_, q| !q.is_empty());
        // Answered after the map is consistent: a failed write drops that
        // connection, which settles again.
        for (entrants, s, why) in done {
            answer(cx, entrants, s, why);
        }
    }
}

fn answer(cx: &mut Ctx, entrants: Vec<Entrant>, s: Status, why: Option<String>) {
    let info: Vec<Info> = why.map(|w| Info::new(REASON, w)).into_iter().collect();
    for e in entrants {
        cx.answer_then(e.conn, e.rid, s, info.clone(), None);
    }
}

impl Timed for Fences {
    /// The earliest fence timeout.
    fn deadline(&self) -> Option<Instant> {
        self.open
            .values()
            .flatten()
            .filter_map(|i| i.deadline)
            .min()
    }

    /// Abandons the fences whose timeout passed.
    fn tick(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let mut due = Vec::new();
        for q in self.open.values_mut() {
            q.retain_mut(|i| {
                if i.deadline.is_some_and(|d| d <= now) {
                    due.push(std::mem::take(&mut i.entered));
                    false
                } else {
                    true
                }
            });
        }
        self.open.retain(|_, q| !q.is_empty());
        for e in due {
            let why = "the fence's PMIX_TIMEOUT passed".to_string();
            answer(cx, e, Status::ERR_TIMEOUT, Some(why));
        }
    }
}
