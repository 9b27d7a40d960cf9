//! The server's event cache:
//!
//! - **Environment events** (`PMIX_SYSTEM_EVENT` codes, or marked as such)
//!   are kept in a bounded FIFO (default [`DEFAULT_CAPACITY`], the size of
//!   OpenPMIx's cache; `ServerBuilder::cache_size`), each with the
//!   processes its range entitles ([`Scope`]). A client receives the cached
//!   events it is entitled to when it connects; its library keeps them up
//!   to date from its ring and replays them to every newly registered
//!   matching handler, oldest first, once, with the real source. An event
//!   evicted from the full cache is one that every client connecting later
//!   and entitled to it will never be offered: each is told the number at
//!   connect time (`EVENTS_LOST`), as for job events below.
//! - **Job events** published into a namespace ring are retained for that
//!   namespace's registered clients that had not connected yet (and are
//!   targeted: a custom range names them), and handed to each of them in
//!   its `Welcome`; an entry is released when no client is owed it. When
//!   the retention area of a namespace is full, the oldest entry is evicted
//!   and every client still owed it is counted as having lost one event: it
//!   is told at connect time (`EVENTS_LOST`).
//!
//! `PMIX_EVENT_DO_NOT_CACHE` keeps an event out of both.
//!
//! The cache is updated under the namespace lock, in the same critical
//! section as the publish, and read under it when a client connects: an
//! event is either in the ring after the new client's start cursor or in
//! its `Welcome`, never neither (nor both).

use crate::types::{DataRange, Nspace, Proc, Rank};
use shm_layout::record::EventRecord;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Default capacity of each cache (events).
pub const DEFAULT_CAPACITY: usize = 512;

struct Entry {
    order: u64,
    rec: Arc<EventRecord>,
    scope: Scope,
}

/// Which clients an environment event is for, from its range: every local
/// client (LOCAL, SESSION, GLOBAL; also namespaces registered later), or
/// the listed processes, a wildcard rank meaning the whole namespace
/// (NAMESPACE: the source's namespace; CUSTOM: the targets). A client of
/// another namespace is handed only what its ring would have carried.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scope {
    Node,
    Procs(Vec<Proc>),
}

impl Scope {
    /// `ns`: the namespace a NAMESPACE-range event is scoped to.
    pub fn of(range: DataRange, ns: Nspace, custom: &[Proc]) -> Scope {
        match range {
            DataRange::NAMESPACE => Scope::Procs(vec![Proc {
                nspace: ns,
                rank: Rank::WILDCARD,
            }]),
            DataRange::CUSTOM => {
                // No process is covered twice: eviction counts once each.
                let mut v: Vec<Proc> = Vec::new();
                for p in custom {
                    let whole = v
                        .iter()
                        .any(|q| q.nspace == p.nspace && q.rank == Rank::WILDCARD);
                    if whole || v.contains(p) {
                        continue;
                    }
                    if p.rank == Rank::WILDCARD {
                        v.retain(|q| q.nspace != p.nspace);
                    }
                    v.push(*p);
                }
                Scope::Procs(v)
            }
            _ => Scope::Node,
        }
    }

    fn covers(&self, p: &Proc) -> bool {
        match self {
            Scope::Node => true,
            Scope::Procs(v) => v.iter().any(|q| q.covers(p)),
        }
    }
}

struct Retained {
    order: u64,
    rec: Arc<EventRecord>,
    owed: Vec<Rank>,
}

/// See the module docs.
pub(crate) struct Cache {
    cap: usize,
    next: u64,
    env: VecDeque<Entry>,
    job: HashMap<Nspace, VecDeque<Retained>>,
    lost: HashMap<Proc, u64>,
    /// Environment events evicted so far: node-wide ones, and per listed
    /// process (wildcard ranks included) for the others.
    env_lost_node: u64,
    env_lost: HashMap<Proc, u64>,
}

/// What a connecting client is handed.
#[derive(Default)]
pub(crate) struct Handoff {
    /// Cached environment events and the job events it is owed, in the
    /// order the server received them.
    pub events: Vec<Arc<EventRecord>>,
    /// Job events it was owed, and environment events it would have been
    /// handed, that were evicted before it connected.
    pub lost: u64,
    /// The cache's capacity.
    pub capacity: u32,
}

impl Cache {
    pub fn new(cap: usize) -> Cache {
        Cache {
            cap: cap.max(1),
            next: 0,
            env: VecDeque::new(),
            job: HashMap::new(),
            lost: HashMap::new(),
            env_lost_node: 0,
            env_lost: HashMap::new(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Occupancy: (environment events, retained job events).
    pub fn occupancy(&self) -> (usize, usize) {
        (self.env.len(), self.job.values().map(VecDeque::len).sum())
    }

    pub fn add_environment(&mut self, rec: Arc<EventRecord>, scope: Scope) {
        self.next += 1;
        if self.env.len() == self.cap {
            if let Some(old) = self.env.pop_front() {
                match old.scope {
                    Scope::Node => self.env_lost_node += 1,
                    Scope::Procs(v) => {
                        for p in v {
                            *self.env_lost.entry(p).or_insert(0) += 1;
                        }
                    }
                }
            }
        }
        self.env.push_back(Entry {
            order: self.next,
            rec,
            scope,
        });
    }

    /// Retains a job event published into `ns`'s ring for `owed` (the
    /// targeted clients of `ns` that have not connected yet).
    pub fn retain_job(&mut self, ns: Nspace, rec: Arc<EventRecord>, owed: Vec<Rank>) {
        if owed.is_empty() {
            return;
        }
        self.next += 1;
        let q = self.job.entry(ns).or_default();
        if q.len() == self.cap {
            if let Some(old) = q.pop_front() {
                for r in old.owed {
                    *self
                        .lost
                        .entry(Proc {
                            nspace: ns,
                            rank: r,
                        })
                        .or_insert(0) += 1;
                }
            }
        }
        q.push_back(Retained {
            order: self.next,
            rec,
            owed,
        });
    }

    /// What `p` gets when it connects; it is no longer owed anything.
    pub fn handoff(&mut self, p: &Proc) -> Handoff {
        let mut mine: Vec<(u64, Arc<EventRecord>)> = self
            .env
            .iter()
            .filter(|e| e.scope.covers(p))
            .map(|e| (e.order, e.rec.clone()))
            .collect();
        let env_lost = self.env_lost_node
            + self
                .env_lost
                .iter()
                .filter(|(q, _)| q.covers(p))
                .map(|(_, n)| n)
                .sum::<u64>();
        if let Some(q) = self.job.get_mut(&p.nspace) {
            for r in q.iter_mut() {
                if let Some(i) = r.owed.iter().position(|x| *x == p.rank) {
                    r.owed.swap_remove(i);
                    mine.push((r.order, r.rec.clone()));
                }
            }
            q.retain(|r| !r.owed.is_empty());
        }
        mine.sort_by_key(|(o, _)| *o);
        Handoff {
            events: mine.into_iter().map(|(_, r)| r).collect(),
            lost: self.lost.remove(p).unwrap_or(0) + env_lost,
            capacity: u32::try_from(self.cap).unwrap_or(u32::MAX),
        }
    }

    /// A client was deregistered: it is owed nothing more, and its losses
    /// are not carried over to a client registered later under its name.
    pub fn forget_client(&mut self, p: &Proc) {
        if let Some(q) = self.job.get_mut(&p.nspace) {
            for r in q.iter_mut() {
                r.owed.retain(|x| *x != p.rank);
            }
            q.retain(|r| !r.owed.is_empty());
        }
        self.lost.remove(p);
        self.env_lost.remove(p);
        self.env.retain_mut(|e| match &mut e.scope {
            Scope::Node => true,
            Scope::Procs(v) => {
                v.retain(|q| q != p);
                !v.is_empty()
            }
        });
    }

    /// A namespace went away.
    pub fn forget(&mut self, ns: &Nspace) {
        self.job.remove(ns);
        self.lost.retain(|p, _| p.nspace != *ns);
        self.env_lost.retain(|p, _| p.nspace != *ns);
        // Events meant for that namespace alone are for nobody now (not
        // for a namespace registered later under the same name).
        self.env.retain_mut(|e| match &mut e.scope {
            Scope::Node => true,
            Scope::Procs(v) => {
                v.retain(|p| p.nspace != *ns);
                !v.is_empty()
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(code: i32) -> Arc<EventRecord> {
        Arc::new(EventRecord {
            code,
            range: 0,
            flags: 0,
            source: shm_layout::record::ProcRecord {
                nspace: "s".into(),
                rank: 0,
            },
            source_seq: 0,
            timestamp_ns: 0,
            custom_range: vec![],
            affected: vec![],
            info: vec![],
            lane_entry: 0,
            lane_pos: 0,
        })
    }
    fn codes(h: &Handoff) -> Vec<i32> {
        h.events.iter().map(|r| r.code).collect()
    }
    fn p(r: u32) -> Proc {
        Proc::new("a", r).unwrap()
    }

    #[test]
    fn environment_cache_is_bounded_and_keeps_the_newest_in_arrival_order() {
        let mut c = Cache::new(3);
        for i in 0..5 {
            c.add_environment(rec(-230 - i), Scope::Node);
        }
        assert_eq!(codes(&c.handoff(&p(0))), vec![-232, -233, -234]);
        // Environment events stay for the next client.
        assert_eq!(codes(&c.handoff(&p(1))), vec![-232, -233, -234]);
    }

    #[test]
    fn a_deregistered_client_is_owed_nothing_and_its_losses_are_not_carried_over() {
        let mut c = Cache::new(1);
        let ns = p(0).nspace;
        c.retain_job(ns, rec(-1), vec![Rank(0), Rank(1)]);
        // Evicts the first: both ranks lost one.
        c.retain_job(ns, rec(-2), vec![Rank(0), Rank(1)]);
        c.forget_client(&p(1));
        assert_eq!(c.occupancy(), (0, 1), "still owed to rank 0");
        c.forget_client(&p(0));
        assert_eq!(c.occupancy(), (0, 0));
        let h = c.handoff(&p(1));
        assert!(h.events.is_empty());
        assert_eq!(h.lost, 0, "a rank registered again starts afresh");
    }

    #[test]
    fn job_events_are_handed_to_each_owed_client_once_then_released() {
        let mut c = Cache::new(8);
        let ns = Nspace::new("a").unwrap();
        c.add_environment(rec(-231), Scope::Node);
        c.retain_job(ns, rec(-1), vec![Rank(0), Rank(1)]);
        c.add_environment(rec(-232), Scope::Node);
        assert_eq!(
            codes(&c.handoff(&p(0))),
            vec![-231, -1, -232],
            "arrival order"
        );
        assert_eq!(codes(&c.handoff(&p(0))), vec![-231, -232], "once");
        assert_eq!(c.occupancy(), (2, 1));
        assert_eq!(codes(&c.handoff(&p(1))), vec![-231, -1, -232]);
        assert_eq!(c.occupancy(), (2, 0), "released when nobody is owed it");
    }

    #[test]
    fn evicting_a_job_event_counts_it_lost_for_every_client_still_owed_it() {
        let mut c = Cache::new(2);
        let ns = Nspace::new("a").unwrap();
        for i in 0..3 {
            c.retain_job(ns, rec(-10 - i), vec![Rank(0)]);
        }
        let h = c.handoff(&p(0));
        assert_eq!(codes(&h), vec![-11, -12]);
        assert_eq!(h.lost, 1);
        assert_eq!(c.handoff(&p(0)).lost, 0, "told once");
    }

    fn ns(n: &str) -> Nspace {
        Nspace::new(n).unwrap()
    }

    #[test]
    fn environment_events_are_handed_only_to_the_clients_their_range_entitles() {
        let mut c = Cache::new(8);
        let b0 = Proc::new("b", 0).unwrap();
        let custom = [Proc::new("a", 1).unwrap(), b0];
        c.add_environment(rec(-231), Scope::of(DataRange::LOCAL, ns("a"), &[]));
        c.add_environment(rec(-232), Scope::of(DataRange::NAMESPACE, ns("a"), &[]));
        c.add_environment(rec(-233), Scope::of(DataRange::CUSTOM, ns("a"), &custom));
        c.add_environment(rec(-234), Scope::of(DataRange::SESSION, ns("b"), &[]));
        assert_eq!(codes(&c.handoff(&p(0))), vec![-231, -232, -234]);
        assert_eq!(codes(&c.handoff(&p(1))), vec![-231, -232, -233, -234]);
        assert_eq!(codes(&c.handoff(&b0)), vec![-231, -233, -234]);
        let c1 = Proc::new("c", 1).unwrap();
        assert_eq!(
            codes(&c.handoff(&c1)),
            vec![-231, -234],
            "a later namespace"
        );
        // A namespace that goes away takes the events meant for it alone.
        c.forget(&ns("a"));
        assert_eq!(codes(&c.handoff(&p(1))), vec![-231, -234]);
        assert_eq!(codes(&c.handoff(&b0)), vec![-231, -233, -234]);
        c.forget(&ns("b"));
        assert_eq!(codes(&c.handoff(&b0)), vec![-231, -234]);
        assert_eq!(c.occupancy(), (2, 0));
    }

    #[test]
    fn an_evicted_environment_event_counts_lost_for_each_later_client_it_was_for() {
        let mut c = Cache::new(1);
        let custom = [
            Proc::new("a", 1).unwrap(),
            Proc::new("b", Rank::WILDCARD.0).unwrap(),
            Proc::new("b", 2).unwrap(),
            Proc::new("a", 1).unwrap(),
        ];
        c.add_environment(rec(-231), Scope::of(DataRange::LOCAL, ns("a"), &[]));
        c.add_environment(rec(-232), Scope::of(DataRange::NAMESPACE, ns("a"), &[]));
        c.add_environment(rec(-233), Scope::of(DataRange::CUSTOM, ns("a"), &custom));
        c.add_environment(rec(-234), Scope::Node);
        // Evicted: -231 (node), -232 (a:*), -233 (a:1, b:*, b:2 once).
        let h = c.handoff(&p(0));
        assert_eq!((codes(&h), h.lost), (vec![-234], 2));
        assert_eq!(c.handoff(&p(1)).lost, 3);
        assert_eq!(c.handoff(&Proc::new("b", 2).unwrap()).lost, 2);
        assert_eq!(c.handoff(&Proc::new("c", 0).unwrap()).lost, 1);
        assert_eq!(c.handoff(&p(1)).lost, 3, "every later client is told");
    }
}
