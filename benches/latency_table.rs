//! Latency table of the in-process event-chain engine: p50/p90/p99 per row,
//! each with its ratio to the raw futex wake floor measured in the same run.
//!
//! ```sh
//! cargo bench --bench latency_table                               # 20 000 samples per row
//! FASTPMIX_BENCH_SAMPLES=5000 cargo bench --bench latency_table   # fewer
//! ```
//!
//! Rows: (a) raw futex wake one-way between two threads (`WakeWord`), the
//! floor; the same as a classic both-sides-sleep ping-pong (round trip / 2);
//! (b) PROC_LOCAL notify → handler entry with the default 20 µs spin, the
//! progress thread still spinning; the same with the spin window expired;
//! (c) the same with `spin(Duration::ZERO)` (pure futex path); (d) full chain
//! dispatch (`notify_observed` → outcome) with 1/10/100 handlers; (e)
//! `chain_preview` assembly with 100 handlers. The floor is measured again at
//! the end so drift during the run is visible.
//!
//! Targets: (b) p50 ≤ 2 µs (OpenPMIx 4.2.2: ~10 µs); (e) ≤ 1 µs.
//!
//! The first line describes the machine (cores, load average, clock source,
//! a CPU reference loop, the cost of reading the clock), so a noisy run shows.
//! Nothing asserts on a time. Run without `--bench` (`cargo test --benches`),
//! it does a quick smoke pass of every row with 200 samples.

use fastpmix::event::{Engine, Invocation, Registration};
use fastpmix::internals::sync::WakeWord;
use fastpmix::Status;
use std::hint::black_box;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
mod common;
use common::engine_fixtures::*;
use common::machine;

/// Samples per row unless `FASTPMIX_BENCH_SAMPLES` says otherwise.
const DEFAULT_SAMPLES: usize = 20_000;
/// Samples per row of the quick pass (not invoked with `--bench`).
const QUICK_SAMPLES: usize = 200;

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

    fn next(&self) -> u32 {
        let n = self.ping.get().wrapping_add(1);
        if n == STOP || n == 0 {
            1
        } else {
            n
        }
    }

    /// One wake of the sleeping helper: ring → helper running. The caller
    /// spins for the answer (it stays awake, as a notifier does), then
    /// pauses so the helper is asleep again before the next ring.
    fn one_way(&self) -> Duration {
        let next = self.next();
        let before = self.pong.get();
        let t0 = Instant::now();
        self.ping.set_and_wake(next);
        wait_change(&self.pong, before);
        let at = self.stamp.lock().expect("stamp").expect("helper stamp");
        busy_wait(GAP_SLEEPING);
        at.saturating_duration_since(t0)
    }

    /// A classic ping-pong where both sides sleep in the futex: round trip / 2.
    fn half_round_trip(&self) -> Duration {
        let next = self.next();
        let t0 = Instant::now();
        self.ping.set_and_wake(next);
        let mut v = self.pong.get();
        while v != next {
            v = self.pong.wait_while(v, None);
        }
        t0.elapsed() / 2
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

/// A handler that records when it was entered and rings a word.
struct EntryProbe {
    /// (entries so far, time of the last entry).
    slot: Arc<Mutex<(u32, Option<Instant>)>>,
    entered: Arc<WakeWord>,
}

impl EntryProbe {
    /// An engine with `spin` and this probe as its only handler.
    fn engine(spin: Duration) -> (Engine, EntryProbe) {
        let engine = Engine::builder(me()).spin(spin).build().expect("engine");
        let p = EntryProbe {
            slot: Arc::new(Mutex::new((0, None))),
            entered: Arc::new(WakeWord::new(0)),
        };
        let slot = p.slot.clone();
        let entered = p.entered.clone();
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
        (engine, p)
    }

    /// One notify → handler entry, then `gap`.
    fn once(&self, engine: &Engine, gap: Duration) -> Duration {
        let prev = self.entered.get();
        let n = notification();
        let t0 = Instant::now();
        engine.notify(n).expect("notify");
        wait_change(&self.entered, prev);
        let at = self.slot.lock().expect("probe slot").1.expect("entry time");
        busy_wait(gap);
        at.saturating_duration_since(t0)
    }
}

/// Runs `f` for `samples / 10` warm-up rounds, then `samples` measured ones.
fn collect(samples: usize, mut f: impl FnMut() -> Duration) -> Vec<u64> {
    for _ in 0..samples / 10 {
        black_box(f());
    }
    let mut v: Vec<u64> = (0..samples)
        .map(|_| u64::try_from(f().as_nanos()).unwrap_or(u64::MAX))
        .collect();
    v.sort_unstable();
    v
}

struct Row {
    label: String,
    /// Sorted, nanoseconds.
    ns: Vec<u64>,
    /// Threads kept busy (spinning or running) while the row is measured.
    busy: usize,
}

impl Row {
    fn pct(&self, p: f64) -> u64 {
        if self.ns.is_empty() {
            return 0;
        }
        let i = ((self.ns.len() - 1) as f64 * p).round() as usize;
        self.ns[i]
    }
}

fn us(ns: u64) -> String {
    format!("{:.2} µs", ns as f64 / 1000.0)
}

/// Cores, load, clock source, a CPU reference loop, the clock's cost and
/// the cpuidle setting.
fn machine_line() -> String {
    format!(
        "machine: nproc={} loadavg=\"{}\" clocksource={} ref_loop={:.2} ms (2^24 xorshift) \
         Instant::now={} ns; cpuidle {}",
        cores(),
        machine::loadavg(),
        machine::clocksource(),
        machine::reference_loop().as_secs_f64() * 1e3,
        machine::clock_cost_ns(Instant::now),
        machine::cpuidle()
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Cargo passes `--bench` under `cargo bench`; `cargo test --benches`
    // passes nothing (or `--test`): then only a quick smoke pass.
    let full = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let samples = std::env::var("FASTPMIX_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(if full { DEFAULT_SAMPLES } else { QUICK_SAMPLES });

    println!("{}", machine_line());
    if full {
        println!("samples per row: {samples} (env FASTPMIX_BENCH_SAMPLES)");
    } else {
        println!(
            "quick pass (not run with --bench): {samples} samples per row, numbers not meaningful"
        );
    }

    let mut rows: Vec<Row> = Vec::new();
    let mut row = |label: &str, busy: usize, ns: Vec<u64>| {
        rows.push(Row {
            label: label.to_owned(),
            ns,
            busy,
        })
    };

    {
        let pair = FutexPair::new();
        row(
            "(a)  futex wake one-way [floor]",
            1,
            collect(samples, || pair.one_way()),
        );
        row(
            "(a2) futex ping-pong, RTT/2",
            1,
            collect(samples, || pair.half_round_trip()),
        );
    }
    {
        let (engine, probe) = EntryProbe::engine(Duration::from_micros(20));
        row(
            "(b)  notify->entry, spin 20us, spinning",
            2,
            collect(samples, || probe.once(&engine, GAP_SPINNING)),
        );
        row(
            "(b2) notify->entry, spin 20us, expired",
            1,
            collect(samples, || probe.once(&engine, GAP_SLEEPING)),
        );
    }
    {
        let (engine, probe) = EntryProbe::engine(Duration::ZERO);
        row(
            "(c)  notify->entry, spin 0 (futex)",
            1,
            collect(samples, || probe.once(&engine, GAP_SLEEPING)),
        );
    }
    for n in [1, 10, 100] {
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
        row(
            &format!("(d)  chain dispatch, {n} handlers"),
            2,
            collect(samples, || dispatch_once(&engine, &done)),
        );
    }
    {
        let engine = mix_engine(100);
        let ev = event();
        row(
            "(e)  chain_preview, 100 handlers",
            1,
            collect(samples, || {
                let t = Instant::now();
                black_box(engine.chain_preview(black_box(&ev)));
                t.elapsed()
            }),
        );
    }
    {
        let pair = FutexPair::new();
        row(
            "(a') futex wake one-way, re-measured",
            1,
            collect(samples, || pair.one_way()),
        );
    }

    let floor = rows[0].pct(0.5).max(1) as f64;
    let n_cores = cores();
    println!();
    println!(
        "{:<42} {:>7} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "row", "count", "p50", "p90", "p99", "p50/floor", "p99/floor"
    );
    for r in &rows {
        println!(
            "{:<42} {:>7} {:>10} {:>10} {:>10} {:>8.2}x {:>8.2}x",
            r.label,
            r.ns.len(),
            us(r.pct(0.5)),
            us(r.pct(0.9)),
            us(r.pct(0.99)),
            r.pct(0.5) as f64 / floor,
            r.pct(0.99) as f64 / floor,
        );
    }
    println!();
    for r in &rows {
        if r.busy > n_cores {
            println!(
                "note: {}: {} busy threads on {n_cores} cores: OVERSUBSCRIBED",
                r.label.trim(),
                r.busy
            );
        } else if r.busy == n_cores {
            println!(
                "note: {}: {} busy threads on {n_cores} cores (bench thread + spinning progress thread): no spare core",
                r.label.trim(),
                r.busy
            );
        }
    }
    println!("floor = (a) p50 of this run; targets: (b) p50 <= 2 µs, (e) p50 <= 1 µs");
    println!("loadavg at end: \"{}\"", machine::loadavg());
}
