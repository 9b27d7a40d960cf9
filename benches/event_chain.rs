//! Criterion benchmarks of the in-process event-chain engine.
//!
//! Groups:
//! - `chain_assembly/{1,10,100}`: `Engine::chain_preview` for a realistic mix
//!   of N registered handlers (mostly single-code for the benched code, some
//!   multi-code and default handlers, some named, some with ordering
//!   directives). Target: ≤ 1 µs with 100 handlers.
//! - `chain_dispatch/{1,10,100}`: from `notify_observed` until the bench thread
//!   sees the chain's outcome (every handler completes inline).
//! - `proc_local_notify_to_handler_entry/{spin_20us,spin_0,inline}`: from
//!   `Engine::notify` (PROC_LOCAL) until the handler is entered on the progress
//!   thread (`inline`: in the notifying thread, `proc_local_inline`). Target:
//!   p50 ≤ 2 µs with the default spin (OpenPMIx 4.2.2: ~10 µs); ≤ 1 µs
//!   wherever the threads are with `inline`.
//! - `register_deregister/active_code`: a blocking `Engine::register` and
//!   `Engine::deregister` of a handler for a code another handler keeps
//!   active, as runtimes do per phase. Both complete in the calling thread
//!   (the deregistration waits only while the progress thread is calling
//!   that handler), so the pair costs no wake-up of the progress thread.
//! - `register_deregister/registered/{10,1000,10000}`: the same pair with N
//!   other handlers registered (half for the same code). Target: flat in N,
//!   ≤ 2 µs at 10,000.
//! - `futex_floor/wake_one_way`: the raw futex wake between two threads
//!   (`WakeWord`), measured in the same run so the others can be read as
//!   ratios to it.
//!
//! Criterion reports per-iteration means of samples, not percentiles: the
//! p50/p90/p99 table is `cargo bench --bench latency_table`. Nothing here
//! asserts on a time; the machines are shared and noisy, so compare ratios to
//! the futex floor of the same run, never absolute numbers across runs.
//!
//! Cores: the dispatch and handler-entry benches keep two threads busy (the
//! bench thread spinning on a `WakeWord`, the progress thread spinning in its
//! park window); on a 2-core machine that is every core, and each bench prints
//! a note saying so (or that it oversubscribes, on fewer cores).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fastpmix::event::{Engine, Invocation, Registration};
use fastpmix::internals::sync::WakeWord;
use fastpmix::Status;
use std::hint::black_box;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
mod common;
use common::engine_fixtures::*;

/// Handler counts of the assembly and dispatch groups.
const SIZES: [usize; 3] = [1, 10, 100];

// Target: assembly with 100 handlers ≤ 1 µs (one snapshot lock + Arc clone,
// a hash lookup, one filter check and one Arc clone per handler).
fn chain_assembly(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain_assembly");
    for n in SIZES {
        let engine = mix_engine(n);
        let ev = event();
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| black_box(engine.chain_preview(black_box(&ev))))
        });
    }
    g.finish();
}

fn chain_dispatch(c: &mut Criterion) {
    core_note("chain_dispatch", 2);
    let mut g = c.benchmark_group("chain_dispatch");
    for n in SIZES {
        let engine = mix_engine(n);
        // Sanity (not timed): the whole mix runs.
        let (tx, rx) = mpsc::channel();
        engine
            .notify_observed(notification(), move |o| {
                let _ = tx.send(o.handlers_run);
            })
            .expect("notify_observed");
        assert_eq!(rx.recv().expect("outcome"), n);
        let done = Arc::new(WakeWord::new(0));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += dispatch_once(&engine, &done);
                    busy_wait(GAP_SPINNING);
                }
                total
            })
        });
    }
    g.finish();
}

/// A handler that records when it was entered and rings a word.
struct EntryProbe {
    /// (entries so far, time of the last entry).
    slot: Arc<Mutex<(u32, Option<Instant>)>>,
    entered: Arc<WakeWord>,
}

impl EntryProbe {
    fn new() -> EntryProbe {
        EntryProbe {
            slot: Arc::new(Mutex::new((0, None))),
            entered: Arc::new(WakeWord::new(0)),
        }
    }

    fn register(&self, engine: &Engine) {
        let slot = self.slot.clone();
        let entered = self.entered.clone();
        engine
            .register(Registration::new(&[CODE], move |inv: Invocation| {
                let t = Instant::now();
                let seq = {
                    let mut s = slot.lock().expect("probe slot");
                    s.0 = s.0.wrapping_add(1);
                    s.1 = Some(t);
                    s.0
                };
                entered.set_and_wake(seq);
                inv.complete(Status::SUCCESS, vec![]);
            }))
            .expect("probe registration");
    }

    /// One notify → handler entry.
    fn once(&self, engine: &Engine) -> Duration {
        let prev = self.entered.get();
        let n = notification();
        let t0 = Instant::now();
        engine.notify(n).expect("notify");
        wait_change(&self.entered, prev);
        let at = self.slot.lock().expect("probe slot").1.expect("entry time");
        at.saturating_duration_since(t0)
    }
}

// Target: p50 ≤ 2 µs with the default 20 µs spin (OpenPMIx 4.2.2: ~10 µs).
// `spin_0` is the pure futex path: compare it with futex_floor/wake_one_way.
fn notify_to_handler_entry(c: &mut Criterion) {
    core_note("proc_local_notify_to_handler_entry/spin_20us", 2);
    let mut g = c.benchmark_group("proc_local_notify_to_handler_entry");
    for (label, spin, gap, inline) in [
        ("spin_20us", Duration::from_micros(20), GAP_SPINNING, false),
        ("spin_0", Duration::ZERO, GAP_SLEEPING, false),
        ("inline", Duration::ZERO, GAP_SLEEPING, true),
    ] {
        let engine = Engine::builder(me())
            .spin(spin)
            .proc_local_inline(inline)
            .build()
            .expect("engine");
        let probe = EntryProbe::new();
        probe.register(&engine);
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += probe.once(&engine);
                    busy_wait(gap);
                }
                total
            })
        });
    }
    g.finish();
}

/// Two threads and two words: the bench thread rings `ping`; the helper,
/// asleep in `wait_while`, stamps its wake-up and answers on `pong`.
struct FutexPair {
    ping: Arc<WakeWord>,
    pong: Arc<WakeWord>,
    stamp: Arc<Mutex<Option<Instant>>>,
    helper: Option<thread::JoinHandle<()>>,
}

const STOP: u32 = u32::MAX;

impl FutexPair {
    fn new() -> FutexPair {
        let ping = Arc::new(WakeWord::new(0));
        let pong = Arc::new(WakeWord::new(0));
        let stamp = Arc::new(Mutex::new(None));
        let (pi, po, st) = (ping.clone(), pong.clone(), stamp.clone());
        let helper = thread::spawn(move || {
            let mut seen = 0;
            loop {
                let v = pi.wait_while(seen, None);
                if v == STOP {
                    return;
                }
                let t = Instant::now();
                *st.lock().expect("stamp") = Some(t);
                seen = v;
                po.set_and_wake(v);
            }
        });
        FutexPair {
            ping,
            pong,
            stamp,
            helper: Some(helper),
        }
    }

    /// One wake of the sleeping helper: ring → helper running. The caller
    /// spins for the answer (it stays awake, as a notifier does), then
    /// pauses so the helper is asleep again before the next ring.
    fn once(&self) -> Duration {
        let mut next = self.ping.get().wrapping_add(1);
        if next == STOP || next == 0 {
            next = 1;
        }
        let before = self.pong.get();
        let t0 = Instant::now();
        self.ping.set_and_wake(next);
        wait_change(&self.pong, before);
        let at = self.stamp.lock().expect("stamp").expect("helper stamp");
        busy_wait(GAP_SLEEPING);
        at.saturating_duration_since(t0)
    }
}

impl Drop for FutexPair {
    fn drop(&mut self) {
        self.ping.set_and_wake(STOP);
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

/// Handlers registered beside the one the register/deregister loop adds.
const REGISTERED: [usize; 3] = [10, 1_000, 10_000];

fn register_deregister(c: &mut Criterion) {
    let mut g = c.benchmark_group("register_deregister");
    g.bench_function("active_code", |b| {
        let engine = Engine::builder(me()).build().expect("engine");
        // Another handler keeps the code active.
        let _keep = engine.register(completing(&[CODE])).unwrap();
        b.iter(|| {
            let r = engine.register(completing(&[CODE])).unwrap();
            engine.deregister(black_box(r)).unwrap();
        })
    });
    // The same with N handlers registered: half for the benched code (the
    // new one goes behind them all), half one code each. The cost should
    // not grow with N.
    for n in REGISTERED {
        let engine = Engine::builder(me()).build().expect("engine");
        let _held: Vec<_> = (0..n)
            .map(|i| {
                let code = if i % 2 == 0 {
                    CODE
                } else {
                    Status(-10_000 - i as i32)
                };
                engine.register(completing(&[code])).unwrap()
            })
            .collect();
        g.bench_with_input(BenchmarkId::new("registered", n), &n, |b, _| {
            b.iter(|| {
                let r = engine.register(completing(&[CODE])).unwrap();
                engine.deregister(black_box(r)).unwrap();
            })
        });
    }
    g.finish();
}

/// A registration whose handler completes at once.
fn completing(codes: &[Status]) -> Registration {
    Registration::new(codes, |inv: Invocation| {
        inv.complete(Status::SUCCESS, vec![])
    })
}

fn futex_floor(c: &mut Criterion) {
    // Noisy shared machines: say what the run had to share.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    println!("machine: nproc={cores} loadavg=\"{}\"", load.trim());
    let pair = FutexPair::new();
    let mut g = c.benchmark_group("futex_floor");
    g.bench_function("wake_one_way", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| pair.once()).sum())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    // Short runs: `cargo bench --bench event_chain` takes about a minute on
    // 2 cores (the dispatch, handler-entry and floor benches also pause
    // between samples, which criterion does not count towards
    // measurement_time, so their wall time is a few times 3 s).
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = futex_floor, chain_assembly, chain_dispatch, notify_to_handler_entry, register_deregister
}
criterion_main!(benches);
