//! The registered handlers, their order, and the immutable snapshot the
//! progress thread assembles chains from.
//!
//! Order (Standard "Event Notification", RFC0018): FIRST → single-code →
//! multi-code → default → LAST. Each category is one explicit sequence;
//! directives act at insertion and never reorder existing entries, so a
//! "B after A" relation holds for as long as both are registered.

use super::filter::{Filter, Placement};
use super::{Event, Handler, HandlerRef};
use crate::sync::{LifeCell, LifeState};
use crate::types::fasthash::FastMap as HashMap;
use crate::types::{Status, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A handler's category, from the number of codes it registered for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// One code: serviced first.
    Single = 0,
    /// Several codes.
    Multi = 1,
    /// No code: every event unless `PMIX_EVENT_NON_DEFAULT`.
    Default = 2,
}

/// One registration.
pub(crate) struct Entry {
    pub id: HandlerRef,
    pub name: Option<Arc<str>>,
    /// The key of this handler's entry in an event's results.
    pub results_key: crate::types::Key,
    /// Sorted, deduplicated; empty for a default handler.
    pub codes: Box<[i32]>,
    pub category: Category,
    pub filter: Filter,
    /// The filter admits every event (no source range, no affected procs,
    /// both levels): the common case, checked without touching `filter`.
    pub unfiltered: bool,
    pub return_object: Option<Value>,
    /// `PMIX_EVENT_ONESHOT`: removed from the registry when first called.
    pub oneshot: bool,
    /// Takes the chain's results as they are, mirror included
    /// ([`super::chain::Mirror`]): a C handler.
    pub mirrored: bool,
    pub handler: Arc<dyn Handler>,
    pub life: LifeCell,
}

impl Entry {
    /// Does this entry's code set take `ev`?
    pub fn takes_code(&self, ev: &Event) -> bool {
        match self.category {
            Category::Single => self.codes[0] == ev.code.0,
            Category::Multi => self.codes.binary_search(&ev.code.0).is_ok(),
            Category::Default => !ev.attrs.non_default,
        }
    }

    /// Does `ev` pass this (active) handler's filters? The code is checked
    /// by the caller (the snapshot's layout already did for single and
    /// default handlers).
    pub fn admits(&self, ev: &Event, me: &crate::types::Proc) -> bool {
        self.life.get() == LifeState::Active && self.filters_pass(ev, me)
    }

    fn filters_pass(&self, ev: &Event, me: &crate::types::Proc) -> bool {
        self.unfiltered
            || self.filter.admits(
                me,
                &ev.source,
                ev.origin,
                ev.class,
                ev.attrs.affected.as_deref(),
            )
    }

    /// Could `ev`, queued now, reach this handler? As the code and filter
    /// checks of a chain, counting a pending registration (it will be active
    /// before a later-queued event is dispatched) but not a dead one.
    pub fn could_take(&self, ev: &Event, me: &crate::types::Proc) -> bool {
        self.life.get() != LifeState::Dead && self.takes_code(ev) && self.filters_pass(ev, me)
    }
}

/// A place in a category's order: positions are spaced [`GAP`] apart, so
/// that an insertion between two neighbours takes the midpoint (no entry
/// moves); when none is left there, the category is renumbered.
type Pos = u64;
const GAP: Pos = 1 << 32;
const MID: Pos = 1 << 63;

/// One category's handlers in chain order. Insertion, removal and the
/// lookup of a BEFORE/AFTER target cost O(log n): a registration's cost
/// does not grow with the handlers already registered.
#[derive(Default)]
struct CatList {
    order: BTreeMap<Pos, Arc<Entry>>,
    first_pinned: bool,
    last_pinned: bool,
}

impl CatList {
    fn front(&self) -> Option<Pos> {
        self.order.keys().next().copied()
    }

    fn back(&self) -> Option<Pos> {
        self.order.keys().next_back().copied()
    }

    fn after(&self, p: Pos) -> Option<Pos> {
        self.order.range(p + 1..).next().map(|(k, _)| *k)
    }

    fn before(&self, p: Pos) -> Option<Pos> {
        self.order.range(..p).next_back().map(|(k, _)| *k)
    }

    /// A free position strictly between `lo` and `hi` (`None`: the end of
    /// the list on that side), if the gap has one.
    fn between(lo: Option<Pos>, hi: Option<Pos>) -> Option<Pos> {
        match (lo, hi) {
            (None, None) => Some(MID),
            (Some(a), None) => a.checked_add(GAP),
            (None, Some(b)) => b.checked_sub(GAP),
            (Some(a), Some(b)) => (b - a >= 2).then(|| a + (b - a) / 2),
        }
    }

    /// Spreads the positions [`GAP`] apart around [`MID`], keeping the
    /// order; returns every entry's new position.
    fn renumber(&mut self) -> Vec<(HandlerRef, Pos)> {
        let n = self.order.len() as u64;
        let start = MID - (n / 2) * GAP;
        let old = std::mem::take(&mut self.order);
        let mut moved = Vec::with_capacity(old.len());
        for (i, e) in old.into_values().enumerate() {
            let p = start + i as u64 * GAP;
            moved.push((e.id, p));
            self.order.insert(p, e);
        }
        moved
    }
}

/// Where an edge insertion goes in a category: next to its pinned entry.
#[derive(Clone, Copy)]
enum Edge {
    Front,
    Back,
}

#[derive(Clone, Copy)]
enum Slot {
    First,
    Last,
    Cat(Category, Pos),
}

/// The mutable registry, behind the engine's registration lock.
#[derive(Default)]
pub(crate) struct Registry {
    first: Option<Arc<Entry>>,
    last: Option<Arc<Entry>>,
    cats: [CatList; 3],
    names: HashMap<Arc<str>, HandlerRef>,
    slots: HashMap<HandlerRef, Slot>,
}

impl Registry {
    /// Inserts `e` as `placement` asks, or refuses with
    /// `PMIX_ERR_EVENT_REGISTRATION` (taken slot, duplicate name, unknown or
    /// cross-category BEFORE/AFTER target, BEFORE the global FIRST or AFTER the
    /// global LAST handler, a target that pins the position).
    pub fn insert(&mut self, e: Arc<Entry>, placement: &Placement) -> Result<(), Status> {
        const REFUSED: Status = Status::ERR_EVENT_REGISTRATION;
        if let Some(n) = &e.name {
            if self.names.contains_key(n) {
                return Err(REFUSED);
            }
        }
        let cat = e.category;
        match placement {
            Placement::First | Placement::Last => {
                let (s, slot) = if *placement == Placement::First {
                    (&mut self.first, Slot::First)
                } else {
                    (&mut self.last, Slot::Last)
                };
                if s.is_some() {
                    return Err(REFUSED);
                }
                *s = Some(e.clone());
                self.placed(&e, slot);
                return Ok(());
            }
            _ => {}
        }
        let list = &self.cats[cat as usize];
        // The neighbours the new entry goes between (`None`: that end).
        let (lo, hi) = match placement {
            Placement::FirstInCategory if list.first_pinned => return Err(REFUSED),
            Placement::LastInCategory if list.last_pinned => return Err(REFUSED),
            Placement::FirstInCategory => (None, list.front()),
            Placement::LastInCategory => (list.back(), None),
            Placement::Prepend => self.edge(cat, Edge::Front),
            Placement::Append => self.edge(cat, Edge::Back),
            Placement::Before(n) | Placement::After(n) => {
                let before = matches!(placement, Placement::Before(_));
                let named = |g: &Option<Arc<Entry>>| {
                    g.as_ref()
                        .is_some_and(|g| g.name.as_deref() == Some(n.as_str()))
                };
                let found = self
                    .names
                    .get(n.as_str())
                    .and_then(|id| self.slots.get(id))
                    .and_then(|s| match s {
                        Slot::Cat(c, p) if *c == cat => Some(*p),
                        _ => None,
                    });
                match found {
                    // Nothing goes ahead of a FIRST_IN_CATEGORY handler or
                    // behind a LAST_IN_CATEGORY one (RFC0018).
                    Some(p) if before && list.first_pinned && Some(p) == list.front() => {
                        return Err(REFUSED)
                    }
                    Some(p) if !before && list.last_pinned && Some(p) == list.back() => {
                        return Err(REFUSED)
                    }
                    Some(p) if before => (list.before(p), Some(p)),
                    Some(p) => (Some(p), list.after(p)),
                    // AFTER the global FIRST handler, or BEFORE the global
                    // LAST one, is the hybrid runtimes' idiom (OpenMP's
                    // handler FIRST, MPI's AFTER it): the handler goes to
                    // that edge of its own category, still behind a
                    // FIRST_IN_CATEGORY (ahead of a LAST_IN_CATEGORY)
                    // handler. The other two sides name a place outside
                    // the chain (RFC0018).
                    None if !before && named(&self.first) => self.edge(cat, Edge::Front),
                    None if before && named(&self.last) => self.edge(cat, Edge::Back),
                    None => return Err(REFUSED),
                }
            }
            Placement::First | Placement::Last => unreachable!("handled above"),
        };
        let pos = match CatList::between(lo, hi) {
            Some(p) => p,
            None => {
                // No room left there: spread the category out and look
                // again between the same two neighbours.
                let list = &self.cats[cat as usize];
                let id_at = |p: Option<Pos>| p.and_then(|p| list.order.get(&p)).map(|e| e.id);
                let ids = (id_at(lo), id_at(hi));
                for (id, p) in self.cats[cat as usize].renumber() {
                    self.slots.insert(id, Slot::Cat(cat, p));
                }
                let at = |id: Option<HandlerRef>| {
                    id.and_then(|id| match self.slots.get(&id) {
                        Some(Slot::Cat(_, p)) => Some(*p),
                        _ => None,
                    })
                };
                CatList::between(at(ids.0), at(ids.1)).expect("renumbered: GAP apart")
            }
        };
        let list = &mut self.cats[cat as usize];
        match placement {
            Placement::FirstInCategory => list.first_pinned = true,
            Placement::LastInCategory => list.last_pinned = true,
            _ => {}
        }
        list.order.insert(pos, e.clone());
        self.placed(&e, Slot::Cat(cat, pos));
        Ok(())
    }

    /// The neighbours of a category's edge insertion: its end, or next to
    /// the entry pinned there.
    fn edge(&self, cat: Category, edge: Edge) -> (Option<Pos>, Option<Pos>) {
        let list = &self.cats[cat as usize];
        match edge {
            Edge::Front => match list.front() {
                Some(f) if list.first_pinned => (Some(f), list.after(f)),
                f => (None, f),
            },
            Edge::Back => match list.back() {
                Some(b) if list.last_pinned => (list.before(b), Some(b)),
                b => (b, None),
            },
        }
    }

    /// Records where `e` went, by name and by reference.
    fn placed(&mut self, e: &Entry, slot: Slot) {
        if let Some(n) = &e.name {
            self.names.insert(n.clone(), e.id);
        }
        self.slots.insert(e.id, slot);
    }

    /// Whether `id` is a live registration.
    pub fn contains(&self, id: HandlerRef) -> bool {
        self.slots.contains_key(&id)
    }

    /// Removes a registration, reopening any slot or pin it held.
    pub fn remove(&mut self, id: HandlerRef) -> Option<Arc<Entry>> {
        let e = match self.slots.remove(&id)? {
            Slot::First => self.first.take()?,
            Slot::Last => self.last.take()?,
            Slot::Cat(c, p) => {
                let list = &mut self.cats[c as usize];
                if list.first_pinned && list.front() == Some(p) {
                    list.first_pinned = false;
                } else if list.last_pinned && list.back() == Some(p) {
                    list.last_pinned = false;
                }
                list.order.remove(&p)?
            }
        };
        if let Some(n) = &e.name {
            self.names.remove(n);
        }
        Some(e)
    }

    /// An immutable copy for chain assembly.
    pub fn snapshot(&self) -> Snapshot {
        let mut snap = Snapshot::default();
        let mut add = |e: &Arc<Entry>| {
            snap.entries.push(e.clone());
            (snap.entries.len() - 1) as u32
        };
        let first = self.first.as_ref().map(&mut add);
        let single: Vec<(i32, u32)> = self.cats[Category::Single as usize]
            .order
            .values()
            .map(|e| (e.codes[0], add(e)))
            .collect();
        let multi: Vec<u32> = self.cats[Category::Multi as usize]
            .order
            .values()
            .map(&mut add)
            .collect();
        let default: Vec<u32> = self.cats[Category::Default as usize]
            .order
            .values()
            .map(&mut add)
            .collect();
        let last = self.last.as_ref().map(&mut add);
        for (code, i) in single {
            snap.single.entry(code).or_default().push(i);
        }
        (snap.first, snap.multi, snap.default, snap.last) = (first, multi, default, last);
        snap
    }

    /// Number of registrations.
    pub fn len(&self) -> usize {
        self.slots.len()
    }
}

/// What chain assembly reads: no lock, no mutation. Chains refer to entries
/// by index into `entries`, so assembling one costs no reference counting.
#[derive(Default)]
pub(crate) struct Snapshot {
    entries: Vec<Arc<Entry>>,
    first: Option<u32>,
    single: HashMap<i32, Vec<u32>>,
    multi: Vec<u32>,
    default: Vec<u32>,
    last: Option<u32>,
}

impl Snapshot {
    /// The entry at `i` (an index `assemble` produced).
    pub fn entry(&self, i: u32) -> &Entry {
        &self.entries[i as usize]
    }

    /// Whether handler `r` is among these registrations.
    pub fn contains(&self, r: super::HandlerRef) -> bool {
        self.entries.iter().any(|x| x.id == r)
    }

    /// Whether any handler could take `ev` if it were queued now (see
    /// [`Entry::could_take`]). A notify with no such handler need not wake
    /// the progress thread.
    pub fn anyone_for(&self, ev: &Event, me: &crate::types::Proc) -> bool {
        self.entries.iter().any(|x| x.could_take(ev, me))
    }

    /// The handlers `ev` reaches, in chain order, as indices.
    pub fn assemble(&self, ev: &Event, me: &crate::types::Proc, out: &mut Vec<u32>) {
        let e = &self.entries;
        out.reserve(self.entries.len());
        // FIRST/LAST may be of any category: full check. Single handlers are
        // indexed by their code and default ones take every code unless
        // NON_DEFAULT (checked once), so only multi-code ones test codes.
        let full = |i: &u32, out: &mut Vec<u32>| {
            let x = &e[*i as usize];
            if x.takes_code(ev) && x.admits(ev, me) {
                out.push(*i);
            }
        };
        let filtered = |v: &[u32], out: &mut Vec<u32>| {
            out.extend(v.iter().copied().filter(|i| e[*i as usize].admits(ev, me)));
        };
        if let Some(i) = &self.first {
            full(i, out);
        }
        if let Some(v) = self.single.get(&ev.code.0) {
            filtered(v, out);
        }
        for i in &self.multi {
            full(i, out);
        }
        if !ev.attrs.non_default {
            filtered(&self.default, out);
        }
        if let Some(i) = &self.last {
            full(i, out);
        }
    }
}
