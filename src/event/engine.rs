//! The engine's core and its progress thread.
//!
//! Threading rule (docs/architecture.md, "One progress thread"): every handler
//! invocation, every registration/deregistration callback and every notify
//! callback runs on the progress thread. Hence a deregistration is complete
//! once a barrier queued behind it has run there, and a blocking call made by
//! a handler (which is on that thread) is carried out inline, never waiting
//! for the thread it is running on.
//!
//! One opt-in exception ([`Core::inline_local`]): a blocking PROC_LOCAL
//! notify may run its chain in the notifying thread, which then stands in
//! for the progress thread. Whoever dispatches holds [`Core::dispatching`]
//! (the progress thread for each batch of work, the notifier with a
//! `try_lock` and only when nothing is queued), so chains still run one at
//! a time and in queue order, and everything that asks
//! [`Core::on_progress_thread`] gets the answer it would get there.

use super::chain::{Chain, OutcomeFn};
use super::registry::{Registry, Snapshot};
use super::{Event, Feed, Keeper};
use crate::sync::{Budget, Generation, IdCounter, Latch, Parker, Running};
use crate::types::{DataRange, Proc};
use crossbeam_queue::SegQueue;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub(crate) type OpFn = Box<dyn FnOnce(crate::types::Status) + Send>;

pub(crate) enum Work {
    /// Assemble and start a chain; `op` is the notifier's "dispatched" callback.
    Event {
        ev: Arc<Event>,
        op: Option<OpFn>,
        outcome: Option<OutcomeFn>,
        /// Only this handler (a replay to a new registration).
        only: Option<super::HandlerRef>,
    },
    /// An event this process notified: as [`Work::Event`] for all its
    /// handlers, holding a unit of [`Core::local`] until it is taken off.
    Local {
        ev: Arc<Event>,
        op: Option<OpFn>,
        outcome: Option<OutcomeFn>,
    },
    /// A handler completed off the progress thread: continue its chain.
    Resume(Box<Chain>),
    /// A callback that must run on the progress thread, after everything
    /// queued before it (registration and non-blocking deregistration
    /// callbacks).
    Call(Box<dyn FnOnce() + Send>),
    /// Stop after everything queued before.
    Shutdown,
}

pub(crate) struct Core {
    pub me: Proc,
    pub spin: Duration,
    pub ids: IdCounter,
    chain_seq: IdCounter,
    queue: SegQueue<Work>,
    parker: Parker,
    registry: Mutex<Registry>,
    /// The last snapshot built and the generation it was built at.
    snapshot: Mutex<(u64, Arc<Snapshot>)>,
    generation: Generation,
    pub stopping: Latch,
    pub exited: Latch,
    /// Keeps events for later registrations (see [`Keeper`]).
    pub keeper: Option<Arc<dyn Keeper>>,
    /// Told of each `PMIX_EVENT_ONESHOT` handler removed after its call.
    pub retired: std::sync::OnceLock<RetireFn>,
    /// Events this process notified and the progress thread has not taken
    /// off yet ([`Work::Local`]): a thread notifying in a loop waits here
    /// instead of growing the queue without bound (and starving the
    /// registrations queued behind it).
    pub local: Budget,
    /// The handler the progress thread is calling: a blocking
    /// deregistration waits only while its handler is being called.
    pub running: Running,
    /// The right to dispatch: held by the progress thread while it works
    /// off its queue and its feed, or by a notifier running its own
    /// PROC_LOCAL chain ([`Core::dispatch_inline`]).
    dispatching: Mutex<()>,
    /// Whether a blocking PROC_LOCAL notify may run its chain in the
    /// notifying thread (`EngineBuilder::proc_local_inline`).
    pub inline_local: bool,
}

/// Most of this process's own events queued for its progress thread.
pub const MAX_QUEUED_LOCAL: u32 = 65_536;

/// See [`Core::retired`].
pub(crate) type RetireFn = Box<dyn Fn(super::HandlerRef) + Send + Sync>;

thread_local! {
    /// Address of the Core whose progress thread this is (0: none).
    static PROGRESS_OF: Cell<usize> = const { Cell::new(0) };
    /// The chain whose handler is running on this thread right now, and the
    /// chain handed back if that handler completed inline.
    static INLINE: RefCell<(Option<u64>, Option<Box<Chain>>)> = const { RefCell::new((None, None)) };
}

fn guarded(f: impl FnOnce()) {
    // A panicking user callback must not take the progress thread down.
    let _ = catch_unwind(AssertUnwindSafe(f));
}

impl Core {
    pub fn new(
        me: Proc,
        spin: Duration,
        keeper: Option<Arc<dyn Keeper>>,
        inline_local: bool,
    ) -> Core {
        Core {
            me,
            spin,
            ids: IdCounter::starting_at(1),
            chain_seq: IdCounter::starting_at(1),
            queue: SegQueue::new(),
            parker: Parker::new(),
            registry: Mutex::new(Registry::default()),
            snapshot: Mutex::new((0, Arc::new(Snapshot::default()))),
            generation: Generation::default(),
            stopping: Latch::default(),
            exited: Latch::default(),
            keeper,
            retired: std::sync::OnceLock::new(),
            local: Budget::new(MAX_QUEUED_LOCAL),
            running: Running::default(),
            dispatching: Mutex::new(()),
            inline_local,
        }
    }

    /// The dispatch right for the progress thread: only needed when a
    /// notifier may dispatch too ([`Core::inline_local`]); otherwise no
    /// other thread ever takes it, and a lock per batch of work would cost
    /// every event of a receiver woken for each (measured: ~10 % of
    /// throughput with 8 receivers on 2 cores).
    fn dispatch_right(&self) -> Option<MutexGuard<'_, ()>> {
        // Handlers run under `guarded`: no panic unwinds through a holder.
        self.inline_local
            .then(|| self.dispatching.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Runs this process's PROC_LOCAL event `ev` in the calling thread, as
    /// the progress thread would, if nothing needs it to wait: the progress
    /// thread is not dispatching and nothing is queued (an earlier event of
    /// this thread, a resumed chain, a registration's activation, all go
    /// first). `Err(ev)` otherwise: queue it.
    pub fn dispatch_inline(self: &Arc<Self>, ev: Arc<Event>) -> Result<(), Arc<Event>> {
        let _right = match self.dispatching.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Err(ev),
        };
        if !self.queue.is_empty() || self.stopping.is_set() {
            return Err(ev);
        }
        // This thread is the progress thread until the chain ends or
        // waits for a handler that completes later (then the real one
        // resumes it).
        let before = PROGRESS_OF.with(|p| p.replace(Arc::as_ptr(self) as usize));
        let mut cache = self.snapshot_at();
        self.dispatch_and_offer(&mut cache, ev, None, None);
        PROGRESS_OF.with(|p| p.set(before));
        Ok(())
    }

    pub fn on_progress_thread(&self) -> bool {
        PROGRESS_OF.with(|p| p.get() == self as *const Core as usize)
    }

    pub fn push(&self, w: Work) {
        self.queue.push(w);
        self.parker.unpark();
    }

    /// The registry, for a change; call [`Core::publish`] before unlocking.
    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding the lock cannot leave the registry half
        // updated (insert/remove validate before mutating), so poison is moot.
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes the registry's current state what new chains are assembled
    /// from. Called with the registry locked, right after changing it: only
    /// bumps the generation; the snapshot is built by whoever next needs it
    /// ([`Core::snapshot_at`]), so a registration costs an insert, not a
    /// rebuild of every handler's index.
    pub fn publish(&self, _locked: &Registry) {
        // Release: pairs with the Acquire in `snapshot_at`/`dispatch`.
        self.generation.bump();
    }

    /// The snapshot for the registry's current state, and its generation;
    /// built here when the registry changed since the last one.
    pub fn snapshot_at(&self) -> (u64, Arc<Snapshot>) {
        // Lock order: snapshot, then registry (`publish` runs under the
        // registry lock and takes no other).
        let mut cell = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        if cell.0 != self.generation.current() {
            let reg = self.registry();
            // Every bump happens under the registry lock: this generation
            // is exactly the state `reg` holds.
            let g = self.generation.current();
            *cell = (g, Arc::new(reg.snapshot()));
        }
        (cell.0, cell.1.clone())
    }

    /// The snapshot new chains are assembled from.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot_at().1
    }

    /// A completed handler hands its chain back.
    pub fn resume(&self, chain: Box<Chain>) {
        let leftover = if self.on_progress_thread() {
            INLINE.with(|s| {
                let mut s = s.borrow_mut();
                if s.0 == Some(chain.seq) {
                    s.1 = Some(chain);
                    None
                } else {
                    Some(chain)
                }
            })
        } else {
            Some(chain)
        };
        if let Some(c) = leftover {
            self.push(Work::Resume(c));
        }
    }

    /// The progress thread's body; `spins: false` sleeps at once when idle
    /// (the thread has no core of its own).
    pub fn run(self: Arc<Core>, mut feed: Option<Box<dyn Feed>>, spins: bool) {
        PROGRESS_OF.with(|p| p.set(Arc::as_ptr(&self) as usize));
        let window = if spins { self.spin } else { Duration::ZERO };
        let mut cache: (u64, Arc<Snapshot>) = (u64::MAX, Arc::new(Snapshot::default()));
        let mut arrived = Vec::new();
        loop {
            let right = self.dispatch_right();
            while let Some(w) = self.queue.pop() {
                let w = match w {
                    Work::Local { ev, op, outcome } => {
                        self.local.give();
                        Work::Event {
                            ev,
                            op,
                            outcome,
                            only: None,
                        }
                    }
                    w => w,
                };
                match w {
                    // This process's own PROC_LOCAL event is shown to the
                    // keeper like the events the feed brings.
                    Work::Event {
                        ev,
                        op,
                        outcome,
                        only: None,
                    } if ev.range == DataRange::PROC_LOCAL => {
                        self.dispatch_and_offer(&mut cache, ev, op, outcome);
                    }
                    Work::Event {
                        ev,
                        op,
                        outcome,
                        only,
                    } => {
                        self.dispatch(&mut cache, ev, op, outcome, only);
                    }
                    Work::Resume(c) => self.drive(c),
                    Work::Call(f) => guarded(f),
                    Work::Shutdown => return self.exit(),
                    Work::Local { .. } => unreachable!("turned into Work::Event above"),
                }
            }
            drop(right);
            let Some(f) = feed.as_mut() else {
                self.parker.park(window, None, || !self.queue.is_empty());
                continue;
            };
            // Events from the transport run their chains right here, on
            // the thread the transport woke: no second hand-off.
            if f.pump(&mut arrived) > 0 {
                let _right = self.dispatch_right();
                for ev in arrived.drain(..) {
                    if ev.targets(&self.me) {
                        self.dispatch_and_offer(&mut cache, Arc::new(ev), None, None);
                    }
                }
                continue;
            }
            let spin = f.spin(window);
            let f = &**f;
            self.parker.park_with(
                spin,
                || !self.queue.is_empty() || f.ready(),
                || f.prepare_sleep(),
                || f.end_sleep(),
            );
        }
    }

    fn exit(&self) {
        self.exited.set();
        // Drop the handlers: one that captured an Engine clone would
        // otherwise keep this core alive in a cycle after shutdown.
        let old = {
            let mut reg = self.registry();
            let old = std::mem::take(&mut *reg);
            self.publish(&reg);
            old
        };
        // The snapshot holds the handlers too: drop it now.
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) =
            (self.generation.current(), Arc::new(Snapshot::default()));
        drop(old);
        // Barriers and callbacks queued behind the shutdown still run, so no
        // caller waits forever; events and suspended chains are dropped.
        while let Some(w) = self.queue.pop() {
            match w {
                Work::Call(f) => guarded(f),
                // Its notifier may be waiting for the unit.
                Work::Local { .. } => self.local.give(),
                _ => {}
            }
        }
    }

    /// Dispatches `ev`, then shows it to the keeper, which may keep it and
    /// name handlers registered meanwhile that must still get it.
    fn dispatch_and_offer(
        self: &Arc<Self>,
        cache: &mut (u64, Arc<Snapshot>),
        ev: Arc<Event>,
        op: Option<OpFn>,
        outcome: Option<OutcomeFn>,
    ) {
        let matched = self.dispatch(cache, ev.clone(), op, outcome, None);
        let Some(k) = &self.keeper else { return };
        let snap = &cache.1;
        let late = k.keep(&ev, matched, &|r| snap.contains(r), true);
        for r in late {
            self.dispatch(cache, ev.clone(), None, None, Some(r));
        }
    }

    fn dispatch(
        self: &Arc<Self>,
        cache: &mut (u64, Arc<Snapshot>),
        ev: Arc<Event>,
        op: Option<OpFn>,
        outcome: Option<OutcomeFn>,
        only: Option<super::HandlerRef>,
    ) -> bool {
        if self.generation.current() != cache.0 {
            *cache = self.snapshot_at();
        }
        let mut handlers = Vec::new();
        cache.1.assemble(&ev, &self.me, &mut handlers);
        if let Some(r) = only {
            handlers.retain(|&i| cache.1.entry(i).id == r);
        }
        if let Some(op) = op {
            guarded(|| op(crate::types::Status::SUCCESS));
        }
        let chain = Box::new(Chain {
            seq: self.chain_seq.next(),
            event: ev,
            snapshot: cache.1.clone(),
            handlers,
            next: 0,
            results: Vec::new(),
            mirror: None,
            last_status: None,
            ran: 0,
            stopped: false,
            on_outcome: outcome,
        });
        let matched = !chain.handlers.is_empty();
        self.drive(chain);
        matched
    }

    /// A `PMIX_EVENT_ONESHOT` handler is about to be called: removed now, on
    /// the progress thread, so that no other chain (they check liveness at
    /// each call, here) calls it again.
    fn retire(&self, id: super::HandlerRef) {
        let removed = {
            let mut reg = self.registry();
            let e = reg.remove(id);
            if e.is_some() {
                self.publish(&reg);
            }
            e
        };
        if let Some(e) = removed {
            e.life.kill();
            if let Some(f) = self.retired.get() {
                guarded(|| f(id));
            }
        }
    }

    /// Runs a chain's handlers until one defers its completion or it ends.
    fn drive(self: &Arc<Self>, mut chain: Box<Chain>) {
        loop {
            let Some(idx) = chain.next_live(&self.running) else {
                if let Some(f) = chain.on_outcome.take() {
                    let outcome = chain.outcome();
                    guarded(|| f(outcome));
                }
                return;
            };
            if chain.snapshot.entry(idx).oneshot {
                self.retire(chain.snapshot.entry(idx).id);
            }
            let seq = chain.seq;
            INLINE.with(|s| s.borrow_mut().0 = Some(seq));
            // A mirrored handler (a C one) takes the results in whatever
            // form they are; any other gets them as Rust values.
            let results = if chain.snapshot.entry(idx).mirrored {
                std::mem::take(&mut chain.results)
            } else {
                chain.take_results()
            };
            let handler = chain.snapshot.entry(idx).handler.clone();
            let inv = super::Invocation {
                chain: Some(chain),
                idx,
                core: self.clone(),
                results,
                edited: false,
            };
            // If the handler panics, unwinding drops `inv`, which completes
            // it with PMIX_ERROR into the inline slot: the chain goes on.
            guarded(|| handler.handle(inv));
            self.running.clear();
            let back = INLINE.with(|s| {
                let mut s = s.borrow_mut();
                s.0 = None;
                s.1.take()
            });
            match back {
                Some(c) => chain = c,
                None => return, // completes later, from wherever the handler put it
            }
        }
    }
}
