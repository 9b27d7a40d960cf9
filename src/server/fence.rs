//! `PMIx_Fence` on the progress thread: a barrier across the participants'
//! local processes and, when some participants run on other nodes, across
//! nodes through the host's `fence_nb`.
//!
//! A fence is keyed by its participant set: the named processes with every
//! wildcard expanded to the job's ranks (those registered here, and every
//! rank below the job's `PMIX_JOB_SIZE`: the others run on other nodes),
//! sorted, duplicates removed (so `ns:*` and the explicit list of every
//! rank of `ns` are the same fence). Each set has a queue of instances: a
//! process that enters again while an earlier instance is still open (two
//! `fence_nb` in a row) joins the next one, so back-to-back fences over the
//! same set stay separate barriers that complete in order.
//!
//! When every local participant has entered, a fence over local processes
//! only completes, for everyone in it at once. One with participants on
//! other nodes goes to the host: `fence_nb` is called once, naming the
//! participants the same way on every node ([`for_host`]), with this
//! node's contribution (with `PMIX_COLLECT_DATA`: the `PMIX_REMOTE` and
//! `PMIX_GLOBAL` items its local participants committed, as blob frames),
//! and the fence completes when the host's callback delivers every node's
//! contributions, which are stored (clients read them from the store).
//!
//! Failures answer everyone who entered the instance:
//! - a local participant that leaves (dies, finalizes, is deregistered)
//!   before entering: `PMIX_ERR_LOST_CONNECTION` (one that entered and then
//!   left still counts: it reached the fence). A registered process that
//!   never connected leaves when the host deregisters it or reports its
//!   end (`Server::notify` of an event such as `PMIX_EVENT_PROC_TERMINATED`
//!   naming it: how `fastpmix run` tells of a rank that exited before
//!   `PMIx_Init`);
//! - a `PMIX_TIMEOUT` that passes (the earliest of the entrants'), at the
//!   host too: `PMIX_ERR_TIMEOUT`; the instance is abandoned (a late
//!   answer of the host is dropped);
//! - the host's error (`PMIX_ERR_NOT_SUPPORTED` from a host without
//!   `fence_nb`); collected data that does not decode:
//!   `PMIX_ERR_UNPACK_FAILURE`, nothing of it stored.
//!
//! Refused at entry, answering the caller only: a required unknown
//! attribute (`PMIX_ERR_NOT_SUPPORTED`); a participant namespace that is
//! not registered here, a rank that is neither a registered client nor
//! below the job's size, a special rank other than the wildcard, a caller
//! that is not among the participants (`PMIX_ERR_BAD_PARAM`). The last one
//! keeps processes out of each other's fences: every set holds its
//! callers, so no one can enter, and so complete, a fence of others. A
//! namespace of another uid is refused as if it were not registered (root
//! may name any): a fence must not tell who else runs on the node.

use super::exchange::import;
use super::outbox::{refusal, Ctx, Req, Timed};
use super::{Cmd, Done, FastMap, Ns, Shared};
use crate::job::REASON;
use crate::store::blob;
use crate::types::{attrs, Info, Nspace, Proc, Rank, Status};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Open fences, by participant set, and those at the host.
#[derive(Default)]
pub(super) struct Fences {
    open: HashMap<Vec<Proc>, Queue>,
    at_host: HashMap<u64, AtHost>,
    next: u64,
}

/// The instances of one participant set.
struct Queue {
    /// The participants registered here.
    local: Vec<Proc>,
    /// Some participants run on other nodes.
    remote: bool,
    /// The participants as the host hears of them ([`for_host`]).
    given: Vec<Proc>,
    q: VecDeque<Instance>,
}

#[derive(Default)]
struct Instance {
    entered: Vec<Entrant>,
    deadline: Option<Instant>,
    collect: bool,
}

/// An instance whose local part is complete, waiting for the host.
struct AtHost {
    entered: Vec<Entrant>,
    deadline: Option<Instant>,
    collect: bool,
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

/// A fence's attributes.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct FenceOptions {
    pub timeout: Option<Duration>,
    pub collect: bool,
}

/// A fence's options from its attributes, or why the fence is refused.
/// The client checks the same before sending (an error at once), the
/// server again (the client is not trusted).
pub(crate) fn options(info: &[Info]) -> Result<FenceOptions, Status> {
    attrs::check_all(info)?;
    let mut o = FenceOptions::default();
    for i in info {
        if i.key == attrs::PMIX_COLLECT_DATA {
            // Present without a value (as Slurm tests it) counts as true.
            o.collect = i.value.as_flag() != Some(false);
        } else if i.key == attrs::PMIX_TIMEOUT {
            // Checked as an `int` above; 0 means no timeout (the Standard).
            let secs = i.value.as_integer().ok_or(Status::ERR_BAD_PARAM)?;
            if secs < 0 {
                return Err(Status::ERR_BAD_PARAM);
            }
            if secs > 0 {
                o.timeout = Some(Duration::from_secs(secs as u64));
            }
        } else if i.is_required() {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
    }
    Ok(o)
}

/// Has `p` left for good ([`Ns::has_left`])? A registered process that
/// never connected, or a local peer not registered yet, may still come,
/// until the host says it ended.
pub(super) fn gone(m: &FastMap<Nspace, Ns>, p: &Proc) -> bool {
    m.get(&p.nspace).is_none_or(|ns| ns.has_left(p.rank))
}

/// The participant set and its local part, both sorted. `uid`: the caller's.
pub(super) fn participants(
    shared: &Shared,
    me: &Proc,
    uid: u32,
    given: &[Proc],
) -> Result<(Vec<Proc>, Vec<Proc>), (Status, String)> {
    let m = shared.nspaces();
    let mut set = Vec::new();
    let mut local = Vec::new();
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
        let proc = |r: u32| Proc {
            nspace: p.nspace,
            rank: Rank(r),
        };
        if p.rank == Rank::WILDCARD {
            let here = ns
                .clients
                .keys()
                .map(|r| r.0)
                .chain(ns.local_peers.iter().copied());
            local.extend(here.clone().map(proc));
            set.extend(here.map(proc));
            set.extend((0..ns.job_size().unwrap_or(0)).map(proc));
        } else if p.rank.is_real() && ns.is_local(p.rank) {
            local.push(*p);
            set.push(*p);
        } else if p.rank.is_real() && ns.job_size().is_some_and(|s| p.rank.0 < s) {
            set.push(*p);
        } else {
            return Err(bad("not a process of the job"));
        }
    }
    let order =
        |a: &Proc, b: &Proc| (a.nspace.as_str(), a.rank.0).cmp(&(b.nspace.as_str(), b.rank.0));
    set.sort_by(order);
    set.dedup();
    local.sort_by(order);
    local.dedup();
    if !local.contains(me) {
        return Err((
            Status::ERR_BAD_PARAM,
            format!("{me} is not among the fence's participants"),
        ));
    }
    Ok((set, local))
}

/// The participant set `set` (sorted, wildcards expanded) as the host
/// hears of it: sorted, each namespace it covers whole (every registered
/// rank and every rank below the job's size) named by its wildcard. Every
/// node's server names one fence alike, however its first caller named
/// the participants, so a host that matches the nodes' contributions by
/// their participant lists (Slurm compares them in order) finds them.
fn for_host(shared: &Shared, set: &[Proc]) -> Vec<Proc> {
    let m = shared.nspaces();
    let mut out = Vec::new();
    let mut i = 0;
    while i < set.len() {
        let ns = set[i].nspace;
        let n = set[i..].iter().take_while(|p| p.nspace == ns).count();
        let whole = m.get(&ns).map(|x| {
            let size = x.job_size().unwrap_or(0);
            let beyond = x.clients.keys().filter(|r| r.0 >= size).count();
            size as usize + beyond
        });
        if whole == Some(n) {
            out.push(Proc {
                nspace: ns,
                rank: Rank::WILDCARD,
            });
        } else {
            out.extend_from_slice(&set[i..i + n]);
        }
        i += n;
    }
    out
}

impl Fences {
    /// `PMIx_Fence` from a client.
    pub(super) fn enter(&mut self, cx: &mut Ctx, r: Req, procs: Vec<Proc>, info: Vec<Info>) {
        let (me, uid, conn, rid) = (r.me, r.uid, r.conn, r.rid);
        let opts = match options(&info) {
            Ok(o) => o,
            Err(s) => return cx.answer(conn, rid, refusal(s, "fence attributes refused")),
        };
        let given = if procs.is_empty() {
            vec![Proc {
                nspace: me.nspace,
                rank: Rank::WILDCARD,
            }]
        } else {
            procs
        };
        let (set, local) = match participants(cx.shared, &me, uid, &given) {
            Ok(s) => s,
            Err((s, why)) => return cx.answer(conn, rid, refusal(s, why)),
        };
        let deadline = opts.timeout.map(|t| cx.now + t);
        let remote = set.len() > local.len();
        let given = if remote && !self.open.contains_key(&set) {
            for_host(cx.shared, &set)
        } else {
            given
        };
        let queue = self.open.entry(set).or_insert_with(|| Queue {
            local,
            remote,
            given,
            q: VecDeque::new(),
        });
        let q = &mut queue.q;
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
        inst.collect |= opts.collect;
        inst.deadline = match (inst.deadline, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.settle(cx);
    }

    /// Completes every instance all local participants entered (or sends
    /// it to the host), and fails every instance a local participant left
    /// before entering. Called after an entry and whenever a process may
    /// have left.
    pub(super) fn settle(&mut self, cx: &mut Ctx) {
        if self.open.is_empty() {
            return;
        }
        let mut done: Vec<(Vec<Entrant>, Status, Option<String>)> = Vec::new();
        let mut to_host: Vec<(Vec<Proc>, Vec<Proc>, Instance)> = Vec::new();
        {
            let m = cx.shared.nspaces();
            for queue in self.open.values_mut() {
                let Queue {
                    local,
                    remote,
                    given,
                    q,
                } = queue;
                let mut kept = VecDeque::with_capacity(q.len());
                for mut inst in q.drain(..) {
                    if let Some(p) = local.iter().find(|p| !inst.has(p) && gone(&m, p)) {
                        let why = format!("{p} left before entering the fence");
                        let e = std::mem::take(&mut inst.entered);
                        done.push((e, Status::ERR_LOST_CONNECTION, Some(why)));
                    } else if inst.entered.len() < local.len() {
                        kept.push_back(inst);
                    } else if *remote {
                        to_host.push((given.clone(), local.clone(), inst));
                    } else {
                        done.push((std::mem::take(&mut inst.entered), Status::SUCCESS, None));
                    }
                }
                *q = kept;
            }
        }
        self.open.retain(|_, q| !q.q.is_empty());
        for (given, local, inst) in to_host {
            self.send_to_host(cx.shared, given, &local, inst);
        }
        // Answered after the map is consistent: a failed write drops that
        // connection, which settles again.
        for (entrants, s, why) in done {
            answer(cx, entrants, s, why);
        }
    }

    /// Calls the host's `fence_nb` for an instance whose local part is
    /// complete; its answer comes back as [`Cmd::FenceDone`].
    fn send_to_host(
        &mut self,
        shared: &Arc<Shared>,
        given: Vec<Proc>,
        local: &[Proc],
        inst: Instance,
    ) {
        self.next += 1;
        let id = self.next;
        let mut data = Vec::new();
        if inst.collect {
            let m = shared.nspaces();
            let mut i = 0;
            while i < local.len() {
                let ns = local[i].nspace;
                let j = local[i..]
                    .iter()
                    .position(|p| p.nspace != ns)
                    .map_or(local.len(), |k| i + k);
                if let Some(n) = m.get(&ns) {
                    let recs = n.data.export(local[i..j].iter().map(|p| p.rank.0));
                    blob::encode(&ns, recs, &mut data);
                }
                i = j;
            }
        }
        let mut info = Vec::new();
        if inst.collect {
            info.push(Info::new(attrs::PMIX_COLLECT_DATA, true));
        }
        if let Some(d) = inst.deadline {
            let secs = d.saturating_duration_since(Instant::now()).as_secs().max(1);
            info.push(Info::new(
                attrs::PMIX_TIMEOUT,
                secs.min(i32::MAX as u64) as i32,
            ));
        }
        self.at_host.insert(
            id,
            AtHost {
                entered: inst.entered,
                deadline: inst.deadline,
                collect: inst.collect,
            },
        );
        let sh = shared.clone();
        let done = Done::new(
            move |status, data| sh.command(Cmd::FenceDone { id, status, data }),
            Vec::new,
        );
        shared.host.fence_nb(&given, &info, &data, done);
    }

    /// The host's `fence_nb` for fence `id` completed. Returns the
    /// namespaces whose data came with it.
    pub(super) fn host_done(
        &mut self,
        cx: &mut Ctx,
        id: u64,
        status: Status,
        data: Vec<u8>,
    ) -> Vec<Nspace> {
        let Some(f) = self.at_host.remove(&id) else {
            return Vec::new(); // timed out meanwhile: its entrants were answered
        };
        let mut got = Vec::new();
        let (s, why) = if !status.is_success() {
            let why = if status == Status::ERR_NOT_SUPPORTED {
                "the host does not support fence_nb: a fence across nodes cannot complete"
            } else {
                "the host's fence_nb failed"
            };
            (status, Some(why.to_owned()))
        } else if f.collect {
            match import(cx.shared, &data) {
                Ok(ns) => {
                    got = ns;
                    (Status::SUCCESS, None)
                }
                Err((s, why)) => (
                    s,
                    Some(format!("the fence's collected data is refused: {why}")),
                ),
            }
        } else {
            (Status::SUCCESS, None)
        };
        answer(cx, f.entered, s, why);
        got
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
        let open = self
            .open
            .values()
            .flat_map(|q| &q.q)
            .filter_map(|i| i.deadline);
        let host = self.at_host.values().filter_map(|f| f.deadline);
        open.chain(host).min()
    }

    /// Abandons the fences whose timeout passed.
    fn tick(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let mut due = Vec::new();
        for queue in self.open.values_mut() {
            queue.q.retain_mut(|i| {
                if i.deadline.is_some_and(|d| d <= now) {
                    due.push(std::mem::take(&mut i.entered));
                    false
                } else {
                    true
                }
            });
        }
        self.open.retain(|_, q| !q.q.is_empty());
        let late: Vec<u64> = self
            .at_host
            .iter()
            .filter(|(_, f)| f.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| *id)
            .collect();
        for id in late {
            if let Some(f) = self.at_host.remove(&id) {
                due.push(f.entered);
            }
        }
        for e in due {
            let why = "the fence's PMIX_TIMEOUT passed".to_string();
            answer(cx, e, Status::ERR_TIMEOUT, Some(why));
        }
    }
}
