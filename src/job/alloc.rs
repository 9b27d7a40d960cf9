//! The default host's allocator: `PMIx_Allocation_request` carried out for
//! real on this one node, over the CPUs (hwloc PUs, by OS index) this process
//! may run on. Holders are the requesting processes (`Proc`, compared exactly).
//!
//! # Pool and requests
//!
//! The pool is the CPUs given to [`Allocator::new`], or (for
//! [`Allocator::from_topology`]) the process's hwloc CPU binding ∩ the
//! topology's allowed CPU set: what `sched_getaffinity` reports, so a launcher
//! run under `taskset` or a cgroup only hands out what it may use. A CPU is
//! *held* by at most one allocation, otherwise it is *free*. Counted requests
//! get the lowest-numbered free CPUs; counted releases give back the
//! highest-numbered held ones.
//!
//! Attributes are type-checked with [`attrs::check`]; a key given twice, a
//! zero `PMIX_ALLOC_NUM_CPUS` or `PMIX_ALLOC_TIME`, a garbled
//! `PMIX_ALLOC_CPU_LIST` or a `NUM_CPUS` that disagrees with the `CPU_LIST`
//! beside it are `ERR_BAD_PARAM`. `PMIX_ALLOC_NUM_NODES` must be absent or 1
//! and `PMIX_ALLOC_NODE_LIST` absent or this host's name (this host manages
//! one node: else `ERR_OUT_OF_RESOURCE`). Other keys are ignored, unless
//! marked `PMIX_INFO_REQD` (then `ERR_NOT_SUPPORTED`).
//!
//! - `NEW` (1): `NUM_CPUS` or `CPU_LIST` (every listed CPU in the pool and
//!   free), optional `ALLOC_TIME` (seconds) and `REQ_ID` (unique among the
//!   holder's live allocations, else `ERR_BAD_PARAM`). Ids `alloc-1`,
//!   `alloc-2`, ... are never reused, not even after the allocation ends.
//! - `EXTEND` (2): names an allocation by `ALLOC_ID` or by `REQ_ID` (searched
//!   among the caller's own); adds `NUM_CPUS`/`CPU_LIST` and/or `ALLOC_TIME`
//!   seconds (the deadline moves; an allocation without a time limit cannot
//!   be extended in time: `ERR_BAD_PARAM`).
//! - `RELEASE` (3): gives back the named allocation's `CPU_LIST`/`NUM_CPUS`
//!   (each must be held by it). With neither, everything: the allocation ends
//!   (forgetting any loan).
//!   It also ends when an explicit release leaves it no CPU and no loan.
//! - `RELEASE` with `ALLOC_TIME` is a **loan** for that many seconds: the CPUs
//!   (default: all held) become free, others may be granted them, and they are
//!   recorded as lent by the allocation, which lives on even with no CPU. A
//!   second loan joins the first and the loan ends at the later of the two.
//! - `REAQUIRE` (4): takes back as many CPUs as are lent: the lent ones that
//!   are free, topped up with other free CPUs; all or nothing
//!   (`ERR_OUT_OF_RESOURCE` and the reason). `NUM_CPUS`/`CPU_LIST` are ignored.
//! - Any other directive, `PMIX_ALLOC_EXTERNAL` (≥ 128) included:
//!   `ERR_NOT_SUPPORTED` (this host defines no directive of its own).
//!
//! Success returns the allocation as it is after the change: `ALLOC_ID`,
//! `NUM_CPUS`, `CPU_LIST`, `NUM_NODES` 1, `NODE_LIST` (hostname), then
//! `ALLOC_TIME` (total seconds granted) if limited and `REQ_ID` if given. An
//! ended allocation is reported with 0 CPUs. A refusal ([`Refusal`]) carries a
//! status and [`REASON`] saying exactly why, and changes nothing. Naming an
//! unknown id is `ERR_NOT_FOUND`, someone else's `ERR_NO_PERMISSIONS`.
//!
//! # Time
//!
//! Nothing here reads a clock: each call takes `now`, and the owner calls
//! [`Allocator::tick`] at [`Allocator::next_deadline`]. Only `tick` acts on
//! time: an allocation past its deadline lives until the next tick. For an
//! allocation with a time limit `tick` reports, in this order:
//! 1. [`Expiry::Warning`] once, [`WARNING_LEAD`] before the deadline (half
//!    the limit if that is shorter, i.e. for a 1 s limit), so the server can
//!    send [`ALLOC_EXPIRING`](crate::job::ALLOC_EXPIRING) before the CPUs go.
//!    A late tick still warns before expiring; an extension re-arms it.
//! 2. [`Expiry::Expired`] at the deadline: the allocation ends (with any loan)
//!    and its CPUs are free.
//!
//! When a loan ends `tick` reacquires as `REAQUIRE` does ([`Expiry::Reacquired`]),
//! after the same tick's expiries have freed their CPUs. If not enough CPUs
//! are free, [`Expiry::ReacquireFailed`] tells the holder; the loan stays
//! recorded (no automatic retry) and a later `REAQUIRE` may take it back.
//! [`Allocator::release_holder`] ends all of an exited holder's allocations.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::panic::catch_unwind;
use std::time::{Duration, Instant};

use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::Topology;

use crate::job::REASON;
use crate::types::attrs::PMIX_ALLOC_TIME as TIME;
use crate::types::attrs::{self, PMIX_ALLOC_CPU_LIST as CPU_LIST, PMIX_ALLOC_ID as ALLOC_ID};
use crate::types::attrs::{PMIX_ALLOC_NODE_LIST as NODE_LIST, PMIX_ALLOC_NUM_CPUS as NUM_CPUS};
use crate::types::attrs::{PMIX_ALLOC_NUM_NODES as NUM_NODES, PMIX_ALLOC_REQ_ID as REQ_ID};
use crate::types::{find_info, AllocDirective, Info, Key, Proc, Status};

/// How long before a time-limited allocation's deadline its holder is warned
/// ([`Expiry::Warning`]); half the limit when the limit is shorter than twice
/// this (a 1 s allocation is warned after 0.5 s).
pub const WARNING_LEAD: Duration = Duration::from_secs(1);

/// Most CPUs one list may name: a peer's "0-4294967295" must not allocate
/// 16 GiB. Far above any machine's CPU count (Linux caps it at 8192).
const MAX_LIST: usize = 1 << 16;

/// A refused request: the status and results holding [`REASON`].
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// Why, as a PMIx status.
    pub status: Status,
    /// `[REASON "<text>"]`.
    pub results: Vec<Info>,
}

impl Refusal {
    fn new(status: Status, reason: impl Into<String>) -> Refusal {
        let results = vec![Info::new(REASON, reason.into())];
        Refusal { status, results }
    }

    /// The [`REASON`] text.
    pub fn reason(&self) -> &str {
        let r = find_info(&self.results, &REASON);
        r.and_then(|i| i.value.as_str()).unwrap_or("")
    }
}

fn bad(reason: impl Into<String>) -> Refusal {
    Refusal::new(Status::ERR_BAD_PARAM, reason)
}

/// What [`Allocator::tick`] did; each names the holder to tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// The allocation's time is nearly up (sent once per deadline).
    Warning {
        /// Its holder.
        holder: Proc,
        /// Its `PMIX_ALLOC_ID`.
        id: String,
        /// Whole seconds left, rounded up (0 if the tick came late).
        remaining_secs: u32,
        /// The CPUs that will be taken.
        cpus: Vec<u32>,
    },
    /// The time is up: the allocation ended and these CPUs are free.
    Expired {
        /// Its holder.
        holder: Proc,
        /// Its `PMIX_ALLOC_ID`.
        id: String,
        /// The CPUs it held.
        cpus: Vec<u32>,
    },
    /// A loan ended and the allocation holds these CPUs again.
    Reacquired {
        /// Its holder.
        holder: Proc,
        /// Its `PMIX_ALLOC_ID`.
        id: String,
        /// The CPUs taken back.
        cpus: Vec<u32>,
    },
    /// A loan ended but not enough CPUs were free; the loan stays recorded.
    ReacquireFailed {
        /// Its holder.
        holder: Proc,
        /// Its `PMIX_ALLOC_ID`.
        id: String,
        /// Why, e.g. "2 lent CPUs to take back, 1 free (CPUs 2 held by alloc-3)".
        reason: String,
    },
}

struct Limit {
    secs: u32,
    deadline: Instant,
    warned: bool,
}

impl Limit {
    fn warn_at(&self) -> Instant {
        let lead = WARNING_LEAD.min(Duration::from_secs(self.secs.into()) / 2);
        self.deadline - lead
    }
}

struct Loan {
    cpus: BTreeSet<u32>,
    until: Instant,
    /// Its end passed and reacquiring failed: `tick` leaves it alone.
    overdue: bool,
}

struct Allocation {
    id: String,
    holder: Proc,
    req_id: Option<String>,
    cpus: BTreeSet<u32>,
    limit: Option<Limit>,
    loan: Option<Loan>,
}

/// The CPUs of this node and who holds them (see the module documentation).
pub struct Allocator {
    pool: Vec<u32>,
    hostname: String,
    /// Live allocations, oldest first.
    allocs: Vec<Allocation>,
    last_id: u64,
}

/// The request attributes this host acts on, type-checked.
#[derive(Default)]
struct Req {
    num_cpus: Option<u64>,
    cpu_list: Option<Vec<u32>>,
    time: Option<u32>,
    req_id: Option<String>,
    alloc_id: Option<String>,
}

enum Want {
    Count(u64),
    List(Vec<u32>),
}

/// The Standard's name of `key` ("PMIX_ALLOC_TIME"), for reasons.
fn name(key: &Key) -> &str {
    let spec = attrs::ALL.iter().find(|a| key == a.key);
    spec.map_or(key.as_str(), |a| a.name)
}

fn once<T>(slot: &mut Option<T>, key: &Key, v: T) -> Result<(), Refusal> {
    match slot.replace(v) {
        Some(_) => Err(bad(format!("{} given twice", name(key)))),
        None => Ok(()),
    }
}

impl Req {
    fn parse(info: &[Info], hostname: &str) -> Result<Req, Refusal> {
        let mut r = Req::default();
        for i in info {
            let k = &i.key;
            // check() fails only for keys of the table, which have a type.
            if let (Err(_), Some(ty)) = (attrs::check(i), k.attr_type()) {
                let msg = format!("{} must be {ty:?}, got {:?}", name(k), i.value);
                return Err(bad(msg));
            }
            // check() passed: integers fit the documented type.
            let int = i.value.as_integer().unwrap_or(0);
            let text = i.value.as_str().unwrap_or("");
            if *k == NUM_CPUS || *k == TIME || *k == NUM_NODES {
                if int == 0 {
                    return Err(bad(format!("{} must be > 0", name(k))));
                }
                if *k == NUM_CPUS {
                    once(&mut r.num_cpus, k, int as u64)?;
                } else if *k == TIME {
                    once(&mut r.time, k, int as u32)?;
                } else if int > 1 {
                    let m = format!("{int} nodes requested: this host manages one ({hostname})");
                    return Err(Refusal::new(Status::ERR_OUT_OF_RESOURCE, m));
                }
            } else if *k == CPU_LIST {
                let msg =
                    || format!("invalid PMIX_ALLOC_CPU_LIST {text:?} (expected e.g. \"0,2-3\")");
                once(
                    &mut r.cpu_list,
                    k,
                    parse_cpu_list(text).map_err(|_| bad(msg()))?,
                )?;
            } else if *k == REQ_ID {
                once(&mut r.req_id, k, text.to_owned())?;
            } else if *k == ALLOC_ID {
                once(&mut r.alloc_id, k, text.to_owned())?;
            } else if *k == NODE_LIST {
                if text.split(',').any(|n| n != hostname) {
                    let m = format!("node list {text:?}: this host manages only {hostname}");
                    return Err(Refusal::new(Status::ERR_OUT_OF_RESOURCE, m));
                }
            } else if i.is_required() {
                let m = format!(
                    "required attribute {} is not supported by this host",
                    name(k)
                );
                return Err(Refusal::new(Status::ERR_NOT_SUPPORTED, m));
            }
        }
        Ok(r)
    }

    /// The CPUs asked for, if any.
    fn want(&self) -> Result<Option<Want>, Refusal> {
        Ok(match (self.num_cpus, &self.cpu_list) {
            (None, None) => None,
            (Some(n), None) => Some(Want::Count(n)),
            (_, Some(l)) if l.is_empty() => return Err(bad("PMIX_ALLOC_CPU_LIST names no CPU")),
            (Some(n), Some(l)) if n != l.len() as u64 => {
                let (list, len) = (format_cpu_list(l), l.len());
                return Err(bad(format!(
                    "PMIX_ALLOC_NUM_CPUS {n} but PMIX_ALLOC_CPU_LIST {list:?} names {len}"
                )));
            }
            (_, Some(l)) => Some(Want::List(l.clone())),
        })
    }
}

impl Allocator {
    /// An allocator over `cpus` (OS indices; sorted and deduplicated) on the
    /// node `hostname`.
    pub fn new(mut cpus: Vec<u32>, hostname: String) -> Allocator {
        cpus.sort_unstable();
        cpus.dedup();
        Allocator {
            pool: cpus,
            hostname,
            allocs: Vec::new(),
            last_id: 0,
        }
    }

    /// An allocator over the CPUs this process may run on: its hwloc CPU
    /// binding (the union over its threads, so a pinned progress thread does
    /// not shrink it) ∩ the topology's allowed set, on the node named by
    /// `gethostname`. `ERR_NOT_AVAILABLE` if hwloc fails (a panic in
    /// hwlocality included) or yields no CPU, or `gethostname` fails.
    pub fn from_topology() -> Result<Allocator, Status> {
        let cpus = catch_unwind(|| {
            let topology = Topology::new().ok()?;
            let allowed = topology.allowed_cpuset().clone_target();
            let mut set = topology
                .cpu_binding(CpuBindingFlags::PROCESS)
                .unwrap_or_else(|_| allowed.clone());
            set &= allowed;
            // Bounded by the machine, so that iterating always ends.
            set &= topology.complete_cpuset().clone_target();
            Some(
                set.iter_set()
                    .filter_map(|i| u32::try_from(usize::from(i)).ok())
                    .collect::<Vec<u32>>(),
            )
        });
        let cpus = cpus.ok().flatten().filter(|c| !c.is_empty());
        let host = nix::unistd::gethostname().map_err(|_| Status::ERR_NOT_AVAILABLE)?;
        let host = host.to_string_lossy().into_owned();
        Ok(Allocator::new(cpus.ok_or(Status::ERR_NOT_AVAILABLE)?, host))
    }

    /// The pool, ascending.
    pub fn cpus(&self) -> &[u32] {
        &self.pool
    }

    /// The CPUs no allocation holds (lent CPUs are free), ascending.
    pub fn free_cpus(&self) -> Vec<u32> {
        let held = |c: &u32| self.allocs.iter().any(|a| a.cpus.contains(c));
        self.pool.iter().copied().filter(|c| !held(c)).collect()
    }

    /// Carries out one `PMIx_Allocation_request` from `holder`: the results,
    /// or a refusal that changed nothing. See the module documentation.
    pub fn request(
        &mut self,
        holder: &Proc,
        directive: AllocDirective,
        info: &[Info],
        now: Instant,
    ) -> Result<Vec<Info>, Refusal> {
        let what = match directive {
            AllocDirective::NEW => "PMIX_ALLOC_NEW",
            AllocDirective::EXTEND => "PMIX_ALLOC_EXTEND",
            AllocDirective::RELEASE => "PMIX_ALLOC_RELEASE",
            AllocDirective::REAQUIRE => "PMIX_ALLOC_REAQUIRE",
            d => {
                let kind = if d.0 >= AllocDirective::EXTERNAL.0 {
                    "implementer-defined (>= PMIX_ALLOC_EXTERNAL) and this host defines none"
                } else {
                    "not a PMIx allocation directive"
                };
                return Err(Refusal::new(
                    Status::ERR_NOT_SUPPORTED,
                    format!("directive {} is {kind}", d.0),
                ));
            }
        };
        let req = Req::parse(info, &self.hostname)?;
        if directive == AllocDirective::NEW {
            return self.grant(holder, &req, now);
        }
        let i = self.find(holder, &req, what)?;
        match directive {
            AllocDirective::EXTEND => self.extend(i, &req),
            AllocDirective::RELEASE => self.release(i, &req, now),
            _ => self.reacquire(i),
        }
    }

    fn grant(&mut self, holder: &Proc, req: &Req, now: Instant) -> Result<Vec<Info>, Refusal> {
        let want = req.want()?;
        let want = want.ok_or_else(|| {
            bad("PMIX_ALLOC_NEW needs PMIX_ALLOC_NUM_CPUS or PMIX_ALLOC_CPU_LIST")
        })?;
        if let Some(r) = &req.req_id {
            if let Some(a) = self
                .allocs
                .iter()
                .find(|a| a.holder == *holder && a.req_id.as_ref() == Some(r))
            {
                return Err(bad(format!(
                    "{holder} already has an allocation with request id {r:?} ({})",
                    a.id
                )));
            }
        }
        let cpus = self.pick(&want)?;
        self.last_id += 1;
        let limit = req.time.map(|secs| Limit {
            secs,
            deadline: now + secs_dur(secs),
            warned: false,
        });
        let a = Allocation {
            id: format!("alloc-{}", self.last_id),
            holder: *holder,
            req_id: req.req_id.clone(),
            cpus: cpus.into_iter().collect(),
            limit,
            loan: None,
        };
        let out = self.describe(&a);
        self.allocs.push(a);
        Ok(out)
    }

    fn extend(&mut self, i: usize, req: &Req) -> Result<Vec<Info>, Refusal> {
        let want = req.want()?;
        if want.is_none() && req.time.is_none() {
            return Err(bad("PMIX_ALLOC_EXTEND needs PMIX_ALLOC_NUM_CPUS, PMIX_ALLOC_CPU_LIST or PMIX_ALLOC_TIME"));
        }
        let a = &self.allocs[i];
        if let Some(t) = req.time {
            let Some(l) = &a.limit else {
                return Err(bad(format!("{} has no time limit to extend", a.id)));
            };
            if l.secs.checked_add(t).is_none() {
                return Err(bad(format!(
                    "{} s more would overflow the time limit of {}",
                    t, a.id
                )));
            }
        }
        let cpus = want.map(|w| self.pick(&w)).transpose()?;
        let a = &mut self.allocs[i];
        a.cpus.extend(cpus.into_iter().flatten());
        if let (Some(t), Some(l)) = (req.time, &mut a.limit) {
            l.secs += t;
            l.deadline += secs_dur(t);
            l.warned = false;
        }
        Ok(self.describe(&self.allocs[i]))
    }

    fn release(&mut self, i: usize, req: &Req, now: Instant) -> Result<Vec<Info>, Refusal> {
        let want = req.want()?;
        let a = &self.allocs[i];
        let held = format_cpu_list(&a.cpus.iter().copied().collect::<Vec<_>>());
        let chosen: Vec<u32> = match &want {
            None => a.cpus.iter().copied().collect(),
            Some(Want::List(l)) => {
                let foreign: Vec<u32> = l.iter().copied().filter(|c| !a.cpus.contains(c)).collect();
                if !foreign.is_empty() {
                    let f = format_cpu_list(&foreign);
                    return Err(bad(format!(
                        "CPUs {f} are not held by {} (it holds {held:?})",
                        a.id
                    )));
                }
                l.clone()
            }
            Some(Want::Count(n)) if *n > a.cpus.len() as u64 => {
                return Err(bad(format!(
                    "{n} CPUs to release but {} holds {} ({held:?})",
                    a.id,
                    a.cpus.len()
                )));
            }
            Some(Want::Count(n)) => a.cpus.iter().rev().take(*n as usize).copied().collect(),
        };
        if req.time.is_some() && chosen.is_empty() {
            return Err(bad(format!("{} holds no CPU to lend", a.id)));
        }
        let a = &mut self.allocs[i];
        for c in &chosen {
            a.cpus.remove(c);
        }
        if let Some(t) = req.time {
            let until = now + secs_dur(t);
            let loan = a.loan.get_or_insert(Loan {
                cpus: BTreeSet::new(),
                until,
                overdue: false,
            });
            loan.cpus.extend(chosen);
            loan.until = loan.until.max(until);
            loan.overdue = false;
        } else if want.is_none() || (a.cpus.is_empty() && a.loan.is_none()) {
            let a = self.allocs.remove(i);
            return Ok(self.describe(&a));
        }
        Ok(self.describe(&self.allocs[i]))
    }

    fn reacquire(&mut self, i: usize) -> Result<Vec<Info>, Refusal> {
        let a = &self.allocs[i];
        let Some(loan) = &a.loan else {
            return Err(bad(format!("{} has no lent CPUs to reacquire", a.id)));
        };
        let cpus = self
            .reclaim(&loan.cpus)
            .map_err(|r| Refusal::new(Status::ERR_OUT_OF_RESOURCE, r))?;
        let a = &mut self.allocs[i];
        a.cpus.extend(cpus);
        a.loan = None;
        Ok(self.describe(&self.allocs[i]))
    }

    /// The allocation `req` names by `PMIX_ALLOC_ID` (or `REQ_ID`), if it is
    /// `holder`'s.
    fn find(&self, holder: &Proc, req: &Req, what: &str) -> Result<usize, Refusal> {
        let not_found = |m: String| Refusal::new(Status::ERR_NOT_FOUND, m);
        let i = match (&req.alloc_id, &req.req_id) {
            (Some(id), _) => self
                .allocs
                .iter()
                .position(|a| a.id == *id)
                .ok_or_else(|| not_found(format!("no allocation {id}")))?,
            (None, Some(r)) => {
                let own = |a: &Allocation| a.holder == *holder && a.req_id.as_ref() == Some(r);
                let m = || format!("{holder} has no allocation with request id {r:?}");
                self.allocs
                    .iter()
                    .position(own)
                    .ok_or_else(|| not_found(m()))?
            }
            (None, None) => {
                return Err(bad(format!(
                    "{what} needs PMIX_ALLOC_ID or PMIX_ALLOC_REQ_ID"
                )))
            }
        };
        let a = &self.allocs[i];
        if a.holder != *holder {
            let m = format!("{} is held by {}, not by {holder}", a.id, a.holder);
            return Err(Refusal::new(Status::ERR_NO_PERMISSIONS, m));
        }
        if let (Some(r), Some(_)) = (&req.req_id, &req.alloc_id) {
            if a.req_id.as_ref() != Some(r) {
                return Err(bad(format!(
                    "{} was not requested with request id {r:?}",
                    a.id
                )));
            }
        }
        Ok(i)
    }

    /// The CPUs for `want`, all free, or the refusal saying who holds them.
    fn pick(&self, want: &Want) -> Result<Vec<u32>, Refusal> {
        let free = self.free_cpus();
        let out = |m: String| Refusal::new(Status::ERR_OUT_OF_RESOURCE, m);
        match want {
            Want::Count(n) if free.len() as u64 >= *n => Ok(free[..*n as usize].to_vec()),
            Want::Count(n) => Err(out(format!(
                "{n} CPUs requested, {} free ({})",
                free.len(),
                self.held_note()
            ))),
            Want::List(l) => {
                if let Some(c) = l.iter().find(|c| self.pool.binary_search(c).is_err()) {
                    let pool = format_cpu_list(&self.pool);
                    return Err(bad(format!(
                        "CPU {c} is not managed by this host (CPUs {pool})"
                    )));
                }
                let busy: Vec<u32> = l.iter().copied().filter(|c| !free.contains(c)).collect();
                if !busy.is_empty() {
                    let list = format_cpu_list(l);
                    return Err(out(format!(
                        "CPUs {list} requested: {}",
                        self.holders(&busy)
                    )));
                }
                Ok(l.clone())
            }
        }
    }

    /// As many free CPUs as `lent`: the lent ones first.
    fn reclaim(&self, lent: &BTreeSet<u32>) -> Result<Vec<u32>, String> {
        let free = self.free_cpus();
        if free.len() < lent.len() {
            return Err(format!(
                "{} lent CPUs to take back, {} free ({})",
                lent.len(),
                free.len(),
                self.held_note()
            ));
        }
        let (mut take, others): (Vec<u32>, Vec<u32>) =
            free.into_iter().partition(|c| lent.contains(c));
        take.extend(others.into_iter().take(lent.len() - take.len()));
        take.sort_unstable();
        Ok(take)
    }

    /// "CPUs 0-1 held by alloc-1; CPUs 3 held by alloc-2" for `cpus`.
    fn holders(&self, cpus: &[u32]) -> String {
        let mut parts = Vec::new();
        for a in &self.allocs {
            let mine: Vec<u32> = cpus
                .iter()
                .copied()
                .filter(|c| a.cpus.contains(c))
                .collect();
            if !mine.is_empty() {
                parts.push(format!("CPUs {} held by {}", format_cpu_list(&mine), a.id));
            }
        }
        parts.join("; ")
    }

    /// Who holds what, or the pool when nothing is held.
    fn held_note(&self) -> String {
        match self.holders(&self.pool) {
            s if s.is_empty() => format!("this host manages CPUs {}", format_cpu_list(&self.pool)),
            s => s,
        }
    }

    fn describe(&self, a: &Allocation) -> Vec<Info> {
        let cpus: Vec<u32> = a.cpus.iter().copied().collect();
        let mut out = vec![
            Info::new(ALLOC_ID, a.id.clone()),
            Info::new(NUM_CPUS, cpus.len() as u64),
            Info::new(CPU_LIST, format_cpu_list(&cpus)),
            Info::new(NUM_NODES, 1u64),
            Info::new(NODE_LIST, self.hostname.clone()),
        ];
        out.extend(a.limit.as_ref().map(|l| Info::new(TIME, l.secs)));
        out.extend(a.req_id.clone().map(|r| Info::new(REQ_ID, r)));
        out
    }

    /// When [`tick`](Self::tick) must run next: the earliest pending warning,
    /// deadline or loan end. `None` when nothing is timed.
    pub fn next_deadline(&self) -> Option<Instant> {
        let limits = self.allocs.iter().filter_map(|a| a.limit.as_ref());
        let limits = limits.map(|l| if l.warned { l.deadline } else { l.warn_at() });
        let loans = self
            .allocs
            .iter()
            .filter_map(|a| a.loan.as_ref().filter(|l| !l.overdue).map(|l| l.until));
        limits.chain(loans).min()
    }

    /// Everything due at `now`: warnings, expiries (CPUs freed), then loan
    /// ends (reacquired or failed), in allocation order.
    pub fn tick(&mut self, now: Instant) -> Vec<Expiry> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.allocs.len() {
            let a = &mut self.allocs[i];
            if let Some(l) = &mut a.limit {
                if !l.warned && now >= l.warn_at() {
                    l.warned = true;
                    let left = l.deadline.saturating_duration_since(now);
                    let remaining_secs =
                        (left.as_secs() + u64::from(left.subsec_nanos() > 0)) as u32;
                    let (holder, id, cpus) =
                        (a.holder, a.id.clone(), a.cpus.iter().copied().collect());
                    out.push(Expiry::Warning {
                        holder,
                        id,
                        remaining_secs,
                        cpus,
                    });
                }
                if now >= l.deadline {
                    let a = self.allocs.remove(i);
                    let cpus = a.cpus.into_iter().collect();
                    out.push(Expiry::Expired {
                        holder: a.holder,
                        id: a.id,
                        cpus,
                    });
                    continue;
                }
            }
            i += 1;
        }
        // Second pass: loans take back what this tick's expiries freed.
        for i in 0..self.allocs.len() {
            let due = self.allocs[i]
                .loan
                .as_ref()
                .filter(|l| !l.overdue && now >= l.until);
            let Some(lent) = due.map(|l| l.cpus.clone()) else {
                continue;
            };
            let result = self.reclaim(&lent);
            let a = &mut self.allocs[i];
            let (holder, id) = (a.holder, a.id.clone());
            match result {
                Ok(cpus) => {
                    a.cpus.extend(&cpus);
                    a.loan = None;
                    out.push(Expiry::Reacquired { holder, id, cpus });
                }
                Err(reason) => {
                    if let Some(l) = &mut a.loan {
                        l.overdue = true;
                    }
                    out.push(Expiry::ReacquireFailed { holder, id, reason });
                }
            }
        }
        out
    }

    /// `holder` ended: all its allocations end. Returns the CPUs freed
    /// (ascending; lent CPUs were already free).
    pub fn release_holder(&mut self, holder: &Proc) -> Vec<u32> {
        let mut freed = Vec::new();
        self.allocs.retain(|a| {
            if a.holder == *holder {
                freed.extend(&a.cpus);
            }
            a.holder != *holder
        });
        freed.sort_unstable();
        freed
    }

    /// One line per live allocation (oldest first; empty when none), e.g.
    /// `alloc-1 job:0 req "a": CPUs 0-1 (2), limit 10 s, warned, lent 2 (overdue)`.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for a in &self.allocs {
            let cpus: Vec<u32> = a.cpus.iter().copied().collect();
            let _ = write!(s, "{} {}", a.id, a.holder);
            if let Some(r) = &a.req_id {
                let _ = write!(s, " req {r:?}");
            }
            let _ = write!(s, ": CPUs {} ({})", format_cpu_list(&cpus), cpus.len());
            if let Some(l) = &a.limit {
                let _ = write!(
                    s,
                    ", limit {} s{}",
                    l.secs,
                    if l.warned { ", warned" } else { "" }
                );
            }
            if let Some(l) = &a.loan {
                let lent: Vec<u32> = l.cpus.iter().copied().collect();
                let _ = write!(
                    s,
                    ", lent {}{}",
                    format_cpu_list(&lent),
                    if l.overdue { " (overdue)" } else { "" }
                );
            }
            s.push('\n');
        }
        s
    }
}

fn secs_dur(secs: u32) -> Duration {
    Duration::from_secs(secs.into())
}

/// Parses "0,2-3" into ascending, deduplicated OS indices. "" is the empty
/// list. `ERR_BAD_PARAM` for anything but decimal numbers and `a-b` ranges
/// with `a <= b` separated by single commas (no spaces, signs or empty
/// pieces), or for more than 65536 CPUs.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, Status> {
    // u32::from_str also takes a leading '+': digits only.
    let num = |t: &str| {
        let digits = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        t.parse::<u32>()
            .ok()
            .filter(|_| digits)
            .ok_or(Status::ERR_BAD_PARAM)
    };
    let mut out = Vec::new();
    if s.is_empty() {
        return Ok(out);
    }
    for piece in s.split(',') {
        let (lo, hi) = match piece.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(piece)?, num(piece)?),
        };
        if lo > hi || out.len() + (hi - lo) as usize >= MAX_LIST {
            return Err(Status::ERR_BAD_PARAM);
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `cpus` (any order) as ascending ranges: `[0, 1, 2, 3, 5]` is "0-3,5".
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut s = String::new();
    let mut i = 0;
    while i < v.len() {
        let start = v[i];
        while i + 1 < v.len() && v[i] + 1 == v[i + 1] {
            i += 1;
        }
        let sep = if s.is_empty() { "" } else { "," };
        let _ = if v[i] == start {
            write!(s, "{sep}{start}")
        } else {
            write!(s, "{sep}{start}-{}", v[i])
        };
        i += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    // The allocator's rules are tested through the public API in
    // tests/job_alloc.rs; here the CPU-list syntax and the hwloc pool.
    use super::*;

    #[test]
    fn cpu_lists_round_trip_through_parse_and_format() {
        for (text, cpus) in [
            ("", vec![]),
            ("0", vec![0]),
            ("0-3,5", vec![0, 1, 2, 3, 5]),
            ("1,3,5-6,9-11", vec![1, 3, 5, 6, 9, 10, 11]),
            ("4294967295", vec![u32::MAX]),
        ] {
            assert_eq!(parse_cpu_list(text), Ok(cpus.clone()), "{text:?}");
            assert_eq!(format_cpu_list(&cpus), text);
        }
        // Unsorted, duplicated or overlapping input is normalised.
        assert_eq!(parse_cpu_list("3,0-1,1,2"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(format_cpu_list(&[5, 3, 4, 0, 3]), "0,3-5");
    }

    #[test]
    fn cpu_list_garbage_is_a_bad_param() {
        for bad in [
            "1-",
            "-1",
            "a",
            "3-1",
            ",",
            "1,",
            ",1",
            "1,,2",
            " 1",
            "1 ",
            "+1",
            "1-2-3",
            "0x1",
            "4294967296",
            "0-4294967295",
            "1;2",
        ] {
            assert_eq!(parse_cpu_list(bad), Err(Status::ERR_BAD_PARAM), "{bad:?}");
        }
        assert_eq!(parse_cpu_list("0-65535").map(|v| v.len()), Ok(MAX_LIST));
        assert!(parse_cpu_list("0-65535,70000").is_err());
    }

    /// The CPUs the kernel lets this (unpinned) test thread run on.
    fn affinity() -> Vec<u32> {
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        let cpus = 0..nix::sched::CpuSet::count();
        cpus.filter(|&c| set.is_set(c).unwrap())
            .map(|c| c as u32)
            .collect()
    }

    #[test]
    fn from_topology_pools_the_cpus_of_sched_getaffinity() {
        let a = Allocator::from_topology().unwrap();
        assert_eq!(a.cpus(), affinity().as_slice());
        assert_eq!(a.free_cpus(), a.cpus());
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(a.hostname, host.trim());
        assert!(!a.cpus().is_empty());
    }
}
