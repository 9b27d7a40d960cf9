//! Fixtures shared by the event-engine benches (`event_chain`, the
//! criterion bench, and `latency_table`, the table program): the same
//! handler mix, engines and waits, so both measure the same thing.
#![allow(dead_code)] // each bench uses a subset

use fastpmix::event::{
    ChainOutcome, Engine, Event, Handler, Invocation, Notification, Origin, Registration,
};
use fastpmix::internals::sync::WakeWord;
use fastpmix::types::attrs::{
    PMIX_EVENT_HDLR_AFTER, PMIX_EVENT_HDLR_APPEND, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY,
    PMIX_EVENT_HDLR_LAST, PMIX_EVENT_HDLR_NAME, PMIX_EVENT_HDLR_PREPEND,
};
use fastpmix::{DataRange, Info, Proc, Status};
use std::hint::{black_box, spin_loop};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Cores this process may run on.
pub fn cores() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}

/// The code every benched event carries.
pub const CODE: Status = Status::OPENMP_PARALLEL_ENTERED;

/// Second codes of the multi-code handlers.
pub const OTHER: [Status; 3] = [
    Status::OPENMP_PARALLEL_EXITED,
    Status::MODEL_DECLARED,
    Status::MODEL_RESOURCES,
];

/// How long a bench-side wait spins before it starts yielding.
pub const SPIN_BUDGET: Duration = Duration::from_micros(50);

/// Pause after each sample while the progress thread is still in its 20 µs
/// spin window: the next notify finds it spinning, not mid-syscall.
pub const GAP_SPINNING: Duration = Duration::from_micros(5);

/// Pause after each sample long enough for a sleeper to be back in its futex
/// wait (and past the default 20 µs spin window).
pub const GAP_SLEEPING: Duration = Duration::from_micros(50);

pub fn me() -> Proc {
    Proc::new("bench-job", 0).expect("valid proc")
}

pub fn notification() -> Notification {
    Notification::new(CODE, me(), DataRange::PROC_LOCAL)
}

pub fn event() -> Event {
    Event::new(notification(), Origin::ThisProcess).expect("valid event")
}

/// Waits until `w` no longer holds `prev`, as a notifier that stays awake
/// would: spins on `get()`, but after [`SPIN_BUDGET`] yields between looks,
/// so that if another process has taken a core (shared machine) this thread
/// does not hold the only remaining core the progress thread needs.
pub fn wait_change(w: &WakeWord, prev: u32) -> u32 {
    let t = Instant::now();
    let mut i = 0u32;
    loop {
        let v = w.get();
        if v != prev {
            return v;
        }
        i = i.wrapping_add(1);
        if i % 64 == 0 && t.elapsed() >= SPIN_BUDGET {
            thread::yield_now();
        } else {
            spin_loop();
        }
    }
}

pub fn busy_wait(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        spin_loop();
    }
}

/// Prints whether `busy` spinning/running threads fit on this machine.
pub fn core_note(bench: &str, busy: usize) {
    let cores = cores();
    if busy > cores {
        println!("note: {bench}: {busy} busy threads on {cores} cores: OVERSUBSCRIBED");
    } else if busy == cores {
        println!("note: {bench}: {busy} busy threads on {cores} cores: no spare core");
    }
}

/// Registers `n` handlers that all reach an event of [`CODE`], in a realistic
/// mix: 70 % single-code, 20 % multi-code, 10 % default; every third named;
/// ordering directives (APPEND, PREPEND, AFTER a named peer, one
/// FIRST_IN_CATEGORY, one global LAST) sprinkled over them.
pub fn register_mix(engine: &Engine, n: usize, handler: &Arc<dyn Handler>) {
    let mut last_named: [Option<String>; 3] = [None, None, None];
    for i in 0..n {
        let (cat, codes) = match i % 10 {
            7 | 8 => (1, vec![CODE, OTHER[i % 3]]),
            9 => (2, vec![]),
            _ => (0, vec![CODE]),
        };
        let mut reg = Registration::shared(&codes, handler.clone());
        let name = (i % 3 == 0).then(|| format!("bench-hdlr-{i}"));
        if let Some(nm) = &name {
            reg = reg.info(Info::new(PMIX_EVENT_HDLR_NAME, nm.as_str()));
        }
        let global_last = n >= 10 && i + 1 == n;
        if n >= 10 && i == 0 {
            reg = reg.info(Info::new(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, true));
        } else if global_last {
            reg = reg.info(Info::new(PMIX_EVENT_HDLR_LAST, true));
        } else {
            match (i % 4, &last_named[cat]) {
                (1, _) => reg = reg.info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
                (3, Some(t)) => reg = reg.info(Info::new(PMIX_EVENT_HDLR_AFTER, t.as_str())),
                (3, None) => reg = reg.info(Info::new(PMIX_EVENT_HDLR_PREPEND, true)),
                _ => {} // default placement (prepend)
            }
        }
        engine.register(reg).expect("registration of the bench mix");
        if !global_last {
            if let Some(nm) = name {
                last_named[cat] = Some(nm);
            }
        }
    }
    assert_eq!(
        engine.chain_preview(&event()).len(),
        n,
        "every handler of the mix matches"
    );
}

pub fn completing_handler() -> Arc<dyn Handler> {
    Arc::new(|inv: Invocation| inv.complete(Status::SUCCESS, vec![]))
}

/// An engine with the default spin and the bench mix of `n` handlers.
pub fn mix_engine(n: usize) -> Engine {
    let engine = Engine::builder(me()).build().expect("engine");
    register_mix(&engine, n, &completing_handler());
    engine
}

/// One notify_observed → outcome seen by the bench thread.
pub fn dispatch_once(engine: &Engine, done: &Arc<WakeWord>) -> Duration {
    let prev = done.get();
    let d = done.clone();
    let n = notification();
    let t0 = Instant::now();
    engine
        .notify_observed(n, move |o: ChainOutcome| {
            black_box(o.handlers_run);
            d.set_and_wake(prev.wrapping_add(1));
        })
        .expect("notify_observed");
    wait_change(done, prev);
    t0.elapsed()
}
