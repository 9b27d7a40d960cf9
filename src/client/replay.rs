//! The replay list: events a newly registered handler is offered
//! ([`ReplayCache`]), filled by the engine's [`Keeper`] ([`ReplayKeeper`])
//! and by the server's `Welcome` hand-off.

use super::feed::{into_event, lost_event};
use crate::event::{Event, EventClass, HandlerRef, Keeper};
use crate::sync::lock;
use crate::types::{attrs, Proc, Status, Value, EVENTS_LOST, EVENTS_LOST_COUNT};
use crate::wire::WireEvent;
use std::sync::{Arc, Mutex};

/// The client's [`Keeper`]: keeps for later registrations, from the ring
/// and this process's own PROC_LOCAL notifications alike, environment
/// events, `EVENTS_LOST` notices, and job events no handler took (not yet
/// received by this process) — unless `PMIX_EVENT_DO_NOT_CACHE`.
pub(super) struct ReplayKeeper(pub(super) Arc<Mutex<ReplayCache>>);

impl Keeper for ReplayKeeper {
    fn keep(
        &self,
        ev: &Arc<Event>,
        matched: bool,
        seen: &dyn Fn(HandlerRef) -> bool,
        progress: bool,
    ) -> Vec<HandlerRef> {
        let no_cache = ev
            .info()
            .iter()
            .any(|i| i.key == attrs::PMIX_EVENT_DO_NOT_CACHE && i.value.as_flag() == Some(true));
        let keep = !no_cache
            && (ev.class() == EventClass::Environment || ev.code() == EVENTS_LOST || !matched);
        // Inline handlers (`Client::register`'s fast path) the deciding
        // snapshot held are safe from then on, on the progress thread,
        // whose snapshots only grow newer: they are forgotten there only.
        if !keep {
            // Not kept: a handler registered meanwhile raced a live event,
            // as any registration may (skipped when the lock is busy).
            if progress {
                if let Ok(mut cache) = self.0.try_lock() {
                    if !cache.inline.is_empty() {
                        cache.inline.retain(|r| !seen(*r));
                    }
                }
            }
            return Vec::new();
        }
        let mut cache = lock(&self.0);
        cache.push(ev.clone());
        // An inline handler registered after the deciding snapshot found no
        // match for this event in the list because it was not there yet: it
        // gets the event now, alone.
        if progress {
            cache.inline.retain(|r| !seen(*r));
            cache.inline.clone()
        } else {
            cache.inline.iter().copied().filter(|r| !seen(*r)).collect()
        }
    }
}

/// Events a newly registered handler is offered, oldest first: the server's
/// cached environment events and the job events published for this client
/// before it connected (both from `Welcome`), environment events seen on
/// the ring or notified PROC_LOCAL by this process since, job events from
/// either that no handler took when they arrived, and `EVENTS_LOST`
/// notices. Bounded by what the server keeps for a client (its capacity
/// in environment events and as many job events, plus one notice: the
/// hand-off always fits); the oldest go first, and are counted: a handler
/// registered later is offered an `EVENTS_LOST` notice with that count
/// first.
pub(super) struct ReplayCache {
    events: std::collections::VecDeque<Arc<Event>>,
    cap: usize,
    /// Events dropped from the front so far (a dropped `EVENTS_LOST`
    /// notice counts as the events it reported).
    evicted: u64,
    /// The notice for `evicted`, built when first offered.
    notice: Option<Arc<Event>>,
    server: Proc,
    /// Handlers registered inline (without a replay, under this cache's
    /// lock) that a dispatch may not have seen yet; see [`ReplayKeeper`].
    pub(super) inline: Vec<HandlerRef>,
    /// A pruning of `inline` is queued on the progress thread.
    pub(super) prune_queued: bool,
}

/// Inline registrations awaiting a dispatch beyond which a pruning is
/// queued on the progress thread (bounds [`ReplayCache::inline`] when no
/// event arrives for a long time).
pub(super) const MAX_INLINE: usize = 256;

impl ReplayCache {
    /// `server_cap`: the server's cache capacity.
    pub(super) fn new(server: Proc, server_cap: u32) -> ReplayCache {
        let cap = usize::try_from(server_cap).unwrap_or(usize::MAX / 4);
        ReplayCache {
            events: Default::default(),
            cap: cap.saturating_mul(2).saturating_add(1),
            evicted: 0,
            notice: None,
            server,
            inline: Vec::new(),
            prune_queued: false,
        }
    }

    pub(super) fn push(&mut self, ev: Arc<Event>) {
        if self.events.len() >= self.cap {
            if let Some(old) = self.events.pop_front() {
                self.evicted = self.evicted.saturating_add(lost_count(&old));
                self.notice = None;
            }
        }
        self.events.push_back(ev);
    }

    /// Could a cached event reach a handler for `codes` (empty: a default
    /// handler)? By code only: filters can only narrow it.
    pub(super) fn may_reach(&self, codes: &[Status]) -> bool {
        let notice = self.evicted > 0;
        if codes.is_empty() {
            notice || !self.events.is_empty()
        } else {
            notice && codes.contains(&EVENTS_LOST)
                || self.events.iter().any(|e| codes.contains(&e.code()))
        }
    }

    pub(super) fn push_wire(&mut self, w: WireEvent) {
        if let Ok(ev) = into_event(w) {
            self.push(Arc::new(ev));
        }
    }

    /// What a new handler is offered, oldest first.
    pub(super) fn events(&mut self) -> impl Iterator<Item = &Arc<Event>> {
        if self.evicted > 0 && self.notice.is_none() {
            self.notice = into_event(lost_event(self.server, self.evicted))
                .ok()
                .map(Arc::new);
        }
        self.notice.iter().chain(self.events.iter())
    }
}

/// How many events dropping `ev` from the replay list loses.
fn lost_count(ev: &Event) -> u64 {
    if ev.code() != EVENTS_LOST {
        return 1;
    }
    ev.info()
        .iter()
        .find(|i| i.key == EVENTS_LOST_COUNT)
        .and_then(|i| match i.value {
            Value::Uint64(n) => Some(n),
            _ => None,
        })
        .unwrap_or(1)
}
