//! Loom models of the event engine's registration vs dispatch protocol
//!. The engine's own types run on threads it spawns with std,
//! which loom cannot schedule, so these models rebuild the protocol from
//! the same primitives (`sync::Generation`, `sync::LifeCell`,
//! `sync::Parker`, loom's `Mutex` in place of std's) in the same order as
//! `event/engine.rs` (`Core::publish`, `Core::snapshot_at`,
//! `Core::dispatch`) and `event/mod.rs`
//! (`Engine::remove`, `Engine::deregister`'s wait on `sync::Running`).
//! A change to that order must change these models too.
//!
//! Runs only under `--cfg loom`:
//! `RUSTFLAGS="--cfg loom" cargo test --release --test loom_engine`.
#![cfg(loom)]

use fastpmix::internals::sync::{Generation, LifeCell, LifeState, Parker, Running};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use std::collections::VecDeque;
use std::time::Duration;

/// The registry's published view: the handlers new chains are built from.
#[derive(Clone, Default)]
struct Snapshot {
    handlers: Vec<Arc<LifeCell>>,
}

/// `Core`'s publication state: the registry behind its lock, the last
/// snapshot built (and the generation it was built at) behind another, and
/// the generation a dispatcher compares with its cached copy.
#[derive(Default)]
struct Published {
    registry: Mutex<Snapshot>,
    built: Mutex<(u64, Arc<Snapshot>)>,
    generation: Generation,
}

impl Published {
    /// A registry change and `Core::publish`: under the registry lock,
    /// change, then bump (Release). No snapshot is built here.
    fn publish(&self, s: Snapshot) {
        let mut reg = self.registry.lock().unwrap();
        *reg = s;
        self.generation.bump();
    }

    /// `Core::snapshot_at`: lock the built snapshot; if the generation
    /// (Acquire) moved, lock the registry, read the generation again under
    /// it and rebuild.
    fn snapshot_at(&self) -> (u64, Arc<Snapshot>) {
        let mut built = self.built.lock().unwrap();
        if built.0 != self.generation.current() {
            let reg = self.registry.lock().unwrap();
            let g = self.generation.current();
            *built = (g, Arc::new(reg.clone()));
        }
        (built.0, built.1.clone())
    }

    /// `Core::dispatch`'s cache refresh: reload only when the generation
    /// (Acquire) moved.
    fn refresh(&self, cache: &mut (u64, Arc<Snapshot>)) {
        if self.generation.current() != cache.0 {
            *cache = self.snapshot_at();
        }
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// REG-2: an event notified after `register` returned reaches the handler,
/// whatever the dispatcher had cached. The notify "queue" is a flag set
/// after the registration returned; a dispatcher that takes the event
/// must find the handler in its refreshed snapshot.
#[test]
fn a_dispatch_of_an_event_notified_after_register_returned_sees_the_handler() {
    model(|| {
        let p = Arc::new(Published::default());
        let queued = Arc::new(AtomicBool::new(false));
        let (p2, q2) = (p.clone(), queued.clone());
        let registrar = loom::thread::spawn(move || {
            // register: insert + publish under the registry lock, Active.
            p2.publish(Snapshot {
                handlers: vec![Arc::new(LifeCell::new(LifeState::Active))],
            });
            // ...returns; then the caller notifies (SegQueue push: Release).
            q2.store(true, Ordering::Release);
        });
        // The progress thread, as `Core::run` starts: nothing cached yet
        // (u64::MAX), so the first dispatch loads the snapshot.
        let mut cache = (u64::MAX, Arc::new(Snapshot::default()));
        p.refresh(&mut cache); // an earlier event's dispatch, racing with register
        if queued.load(Ordering::Acquire) {
            p.refresh(&mut cache);
            assert_eq!(cache.1.handlers.len(), 1, "the new handler is in the chain");
            assert_eq!(cache.1.handlers[0].get(), LifeState::Active);
        }
        registrar.join().unwrap();
    });
}

enum Work {
    /// Run a chain over the snapshot current when it is taken.
    Dispatch,
    /// End the progress thread.
    Stop,
}

struct Core {
    published: Published,
    /// The handler being called (`Core::running`).
    running: Running,
    queue: Mutex<VecDeque<Work>>,
    parker: Parker,
    /// What the handler touches: loom reports any access to it that is not
    /// ordered with another, so a call racing with `deregister`'s return
    /// fails the model.
    handler_state: UnsafeCell<u32>,
    /// Calls of the handler for events notified after deregister returned.
    late_calls: AtomicUsize,
    after_dereg: AtomicBool,
    /// `Core::dispatching`: the right to run chains.
    dispatching: Mutex<()>,
}

impl Core {
    /// A core with one active handler published.
    fn with_one_handler() -> (Arc<Core>, Arc<LifeCell>) {
        let h = Arc::new(LifeCell::new(LifeState::Active));
        let core = Arc::new(Core {
            published: Published::default(),
            queue: Mutex::new(VecDeque::new()),
            parker: Parker::new(),
            running: Running::default(),
            handler_state: UnsafeCell::new(0),
            late_calls: AtomicUsize::new(0),
            after_dereg: AtomicBool::new(false),
            dispatching: Mutex::new(()),
        });
        core.published.publish(Snapshot {
            handlers: vec![h.clone()],
        });
        (core, h)
    }

    fn push(&self, w: Work) {
        self.queue.lock().unwrap().push_back(w);
        self.parker.unpark();
    }

    fn pop(&self) -> Option<Work> {
        self.queue.lock().unwrap().pop_front()
    }

    /// The progress thread: runs `n` work items in order (or until
    /// [`Work::Stop`]), holding the dispatch right while it works them off.
    fn progress(&self, n: usize) {
        let mut cache = (u64::MAX, Arc::new(Snapshot::default()));
        let mut done = 0;
        while done < n {
            let right = self.dispatching.lock().unwrap();
            let Some(w) = self.pop() else {
                drop(right);
                self.parker.park(Duration::ZERO, None, || {
                    !self.queue.lock().unwrap().is_empty()
                });
                continue;
            };
            done += 1;
            match w {
                Work::Dispatch => {
                    self.published.refresh(&mut cache);
                    self.run_chain(&cache.1);
                }
                Work::Stop => return,
            }
        }
    }

    /// `Core::dispatch_inline`: with the right (try_lock) and nothing
    /// queued, the notifier runs the chain itself; else it queues.
    fn notify_inline(&self) {
        if let Ok(_right) = self.dispatching.try_lock() {
            if self.queue.lock().unwrap().is_empty() {
                let snap = self.published.snapshot_at();
                self.run_chain(&snap.1);
                return;
            }
        }
        self.push(Work::Dispatch);
    }

    /// `Core::drive` over a snapshot's handlers.
    fn run_chain(&self, snap: &Snapshot) {
        let late = self.after_dereg.load(Ordering::Acquire);
        for (i, h) in snap.handlers.iter().enumerate() {
            // `Chain::next_live`: announced, then the liveness check, then
            // the call; cleared after it.
            self.running.announce(i as u64 + 1);
            if h.get() == LifeState::Active {
                // SAFETY: loom checks this access is ordered with every
                // other access to the cell (two dispatchers included).
                self.handler_state.with_mut(|s| unsafe { *s += 1 });
                if late {
                    self.late_calls.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.running.clear();
        }
    }
}

/// "When a blocking deregistration returns, the handler never runs again,
/// not even for a chain already in flight" (`Engine::deregister`): kill
/// the registration and publish, then wait only while the progress thread
/// is calling that handler (`sync::Running`: announce, check, call, clear
/// there; kill, fence, read here), with no trip through its queue. An
/// event notified concurrently may still run the handler, but only before
/// `deregister` returns (loom checks that the handler's accesses are
/// ordered before the deregistering thread's), and an event notified after
/// it returned never does.
#[test]
fn no_handler_call_after_a_blocking_deregister_returns() {
    model(|| {
        let (core, h) = Core::with_one_handler();
        let c1 = core.clone();
        let progress = loom::thread::spawn(move || c1.progress(2));
        let c2 = core.clone();
        let notifier = loom::thread::spawn(move || c2.push(Work::Dispatch));
        // deregister: remove + publish, kill, then wait while it is called.
        core.published.publish(Snapshot::default());
        h.kill();
        core.running.wait_while_calling(1);
        // deregister returned: the handler's calls so far happened before
        // this point (a racing access fails the model here)...
        // SAFETY: loom checks the ordering of this access.
        let calls = core.handler_state.with(|s| unsafe { *s });
        assert!(calls <= 1);
        // ...and an event notified from now on never reaches it.
        core.after_dereg.store(true, Ordering::Release);
        core.push(Work::Dispatch);
        notifier.join().unwrap();
        progress.join().unwrap();
        assert_eq!(core.late_calls.load(Ordering::Relaxed), 0);
    });
}

/// The same guarantee when a PROC_LOCAL notify runs its chain in the
/// notifying thread (`EngineBuilder::proc_local_inline`): the notifier and
/// the progress thread take turns with the dispatch right, so their
/// handler calls never overlap (loom checks the handler's state; an event
/// queued before may be in the progress thread's hands), and a
/// blocking deregistration returning still means no later call from
/// either of them.
#[test]
fn no_handler_call_after_a_blocking_deregister_returns_with_an_inline_notifier() {
    model(|| {
        let (core, h) = Core::with_one_handler();
        // An event queued before: the progress thread may be running its
        // chain when the notifier looks.
        core.push(Work::Dispatch);
        let c1 = core.clone();
        let progress = loom::thread::spawn(move || c1.progress(usize::MAX));
        let c2 = core.clone();
        let notifier = loom::thread::spawn(move || c2.notify_inline());
        core.published.publish(Snapshot::default());
        h.kill();
        core.running.wait_while_calling(1);
        // SAFETY: loom checks the ordering of this access.
        let calls = core.handler_state.with(|s| unsafe { *s });
        assert!(calls <= 2);
        core.after_dereg.store(true, Ordering::Release);
        core.notify_inline();
        notifier.join().unwrap();
        core.push(Work::Stop);
        progress.join().unwrap();
        assert_eq!(core.late_calls.load(Ordering::Relaxed), 0);
    });
}
