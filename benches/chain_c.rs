//! One event through a chain of N C-ABI handlers: what a C handler costs
//! the chain, per handler, as the chain grows.
//!
//! Groups:
//! - `chain_c/{100,1000,10000}`: from `notify_observed` until the bench
//!   thread sees the chain's outcome. Every handler is the same
//!   `extern "C"` function, registered as `PMIx_Register_event_handler`
//!   registers one (`capi::c_registration`), which completes at once with
//!   no results of its own, so the chain's results grow by one status entry
//!   per handler (N entries at the end, all converted back for the
//!   outcome). Criterion's throughput line is handlers per second: a chain
//!   linear in its handlers shows the same rate at every N.
//!
//! Before the timed groups, each size prints one line `per handler: …`
//! (the median of a few events over N), the number to compare across N,
//! next to its one floor: RFC0018 lets a handler remove an earlier result
//! by clearing its key in place, so before each C handler the chain looks
//! at the first key byte of every earlier entry (one cache line each, 552
//! bytes apart). That look alone, timed in the same run over the same
//! layout (N²/2 looks per event, divided by N), is printed as `key look`;
//! it is the only part of a handler's cost that grows with N. Nothing here
//! asserts on a time; the machines are shared and noisy, so compare sizes
//! within one run, never absolute numbers across runs. The wake-up of the
//! bench thread at the end (about one futex wake) is spread over N
//! handlers.
//!
//! ```sh
//! cargo bench --bench chain_c
//! ```

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use fastpmix::event::Engine;
use fastpmix::internals::capi::c_registration;
use fastpmix::internals::capi::{pmix_info_t, pmix_proc_t, EventCompleteFn};
use fastpmix::internals::sync::WakeWord;
use fastpmix::Status;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};
#[path = "common/engine_fixtures.rs"]
mod fixtures;
use fixtures::*;

/// Handler counts.
const SIZES: [usize; 3] = [100, 1_000, 10_000];

/// A C handler that completes at once with `PMIX_SUCCESS` and no results.
unsafe extern "C" fn pass(
    _id: usize,
    _status: i32,
    _source: *const pmix_proc_t,
    _info: *mut pmix_info_t,
    _ninfo: usize,
    _results: *mut pmix_info_t,
    _nresults: usize,
    cbfunc: EventCompleteFn,
    cbdata: *mut c_void,
) {
    // SAFETY: the completion and its data as the library handed them, called
    // once with no results of ours.
    unsafe {
        cbfunc(
            Status::SUCCESS.0,
            std::ptr::null_mut(),
            0,
            None,
            std::ptr::null_mut(),
            cbdata,
        )
    };
}

/// An engine with `n` C handlers for [`CODE`].
fn c_engine(n: usize) -> Engine {
    let engine = Engine::builder(me()).build().expect("engine");
    for _ in 0..n {
        engine
            .register(c_registration(&[CODE], pass))
            .expect("C handler registration");
    }
    engine
}

/// One event through the whole chain; the outcome rings `done`.
fn event_once(engine: &Engine, done: &Arc<WakeWord>) -> Duration {
    let prev = done.get();
    let d = done.clone();
    let t0 = Instant::now();
    engine
        .notify_observed(notification(), move |_| {
            d.set_and_wake(prev.wrapping_add(1))
        })
        .expect("notify_observed");
    wait_change(done, prev);
    t0.elapsed()
}

/// The look for cleared keys of one event through `n` handlers, alone:
/// before handler i, the first key byte of each of the i entries before it.
fn key_look(n: usize) -> Duration {
    let layout = Layout::array::<pmix_info_t>(n.max(1)).expect("layout");
    // SAFETY: a non-zero size; all-zero bytes are a valid `pmix_info_t`.
    let p = unsafe { alloc_zeroed(layout) } as *mut pmix_info_t;
    assert!(!p.is_null(), "allocation");
    for k in 0..n {
        // SAFETY: k < n, inside the allocation.
        unsafe { (*p.add(k)).key[0] = b'h' as _ };
    }
    let mut cleared = 0usize;
    let t = Instant::now();
    for len in 0..n {
        let p = black_box(p);
        for k in 0..len {
            // SAFETY: k < n, inside the allocation, initialised above.
            if unsafe { std::ptr::read_volatile(&(*p.add(k)).key[0]) } == 0 {
                cleared += 1;
            }
        }
    }
    let d = t.elapsed();
    black_box(cleared);
    // SAFETY: allocated above with this layout, not used after.
    unsafe { dealloc(p.cast(), layout) };
    d
}

fn chain_c(c: &mut Criterion) {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    println!("machine: nproc={cores} loadavg=\"{}\"", load.trim());
    let mut g = c.benchmark_group("chain_c");
    // Events of milliseconds: the same iteration count in every sample.
    g.sampling_mode(SamplingMode::Flat);
    for n in SIZES {
        let engine = c_engine(n);
        // Sanity (not timed): every handler ran once and left its entry.
        let (tx, rx) = mpsc::channel();
        engine
            .notify_observed(notification(), move |o| {
                let _ = tx.send((o.handlers_run, o.results.len()));
            })
            .expect("notify_observed");
        assert_eq!(rx.recv().expect("outcome"), (n, n));
        let done = Arc::new(WakeWord::new(0));
        let mut t: Vec<Duration> = (0..11).map(|_| event_once(&engine, &done)).collect();
        t.sort();
        let look = key_look(n);
        println!(
            "chain_c/{n}: per handler: {:.0} ns (median of 11 events of {:.3} ms); key look: {:.0} ns",
            t[5].as_nanos() as f64 / n as f64,
            t[5].as_secs_f64() * 1e3,
            look.as_nanos() as f64 / n as f64
        );
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| (0..iters).map(|_| event_once(&engine, &done)).sum())
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    // Short runs: the largest chain is milliseconds per event.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    targets = chain_c
}
criterion_main!(benches);
