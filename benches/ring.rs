//! Criterion benchmarks of the shared-memory event ring.
//!
//! ```sh
//! cargo bench --bench ring                    # everything, about 1 minute
//! cargo bench --bench ring -- fanout          # one group
//! FASTPMIX_BENCH_SAMPLES=20 cargo bench --bench ring   # criterion sample_size (min 10)
//! ```
//!
//! Groups:
//! - `publish_no_sleeper/{encode_publish_typical, publish_bytes_typical,
//!   publish_bytes_small}`: one publish with no reader asleep (the writer never
//!   makes a syscall then). "typical" is a record with 8 infos (about 500 B
//!   archived), "small" one with none.
//! - `reader_pickup/{typical, small}`: `try_next` + drop of a record already
//!   published, same process (includes `rkyv::access` validation).
//! - `access/{validated, unchecked}`: `rkyv::access` versus
//!   `rkyv::access_unchecked` on a typical record.
//! - `futex_floor/{wake_one_way, rtt_half}`: the raw futex wake between two
//!   PROCESSES on a MAP_SHARED word (memfd), the floor the cross-process rows
//!   are read against: ring the sleeping child, the child stamps its wake-up
//!   (one-way) and rings back (round trip / 2, both sides asleep);
//!   `spin_one_way`: the same word busy-polled by the child (no syscall):
//!   the cross-process cache-line floor the spinning rows are read against.
//! - `one_way/{sleeping, sleeping_encode, spinning, spinning_encode}`: from
//!   the publish until a reader PROCESS holds the validated record; the writer
//!   puts `CLOCK_MONOTONIC` nanoseconds (system-wide, unlike `Instant`) in the
//!   record's `timestamp_ns` and the reader subtracts it from its own clock
//!   read. Plain rows publish pre-encoded bytes (the timestamp patched in);
//!   `_encode` rows include rkyv encoding. The sleeping reader never spins
//!   (`SpinPolicy::never`) and is asleep in the futex before each publish; the
//!   spinning reader busy-polls `try_next`.
//! - `fanout_last_reader/{1,2,8,32}`: N sleeping reader processes; the time
//!   until the LAST one holds the record (each writes its latency into a
//!   shared results area; the bench takes the maximum).
//! - `throughput_one_reader/{small, typical}`: records per second delivered to
//!   one busy-polling reader process; the writer never lets itself get more
//!   than a ring ahead (it reads the reader's cursor), so nothing is lost.
//!
//! Criterion reports means of samples, not percentiles; the p50/p90/p99 table
//! with ratios to the floor is `cargo bench --bench ring_table`. Nothing
//! asserts on a time.
//!
//! Processes: children are this bench binary re-executed with
//! `FASTPMIX_RING_BENCH_CHILD` naming their role; they map the ring segment by
//! name and a small control block (memfd, inherited) holding futex words,
//! counters and the results area. Every wait has a deadline; children are
//! killed (by pid) if they do not stop. Each cross-process group prints a note
//! when it keeps every core busy or oversubscribes the machine (8 and 32
//! readers on 2 cores are woken at once by one publish).
//!
//! The records, processes and rigs are the shared bench harness in
//! `benches/common/` (also used by `ring_table`, `server_table` and
//! `job_table`).

mod common;

use common::*;
use criterion::{BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Criterion `sample_size` from `FASTPMIX_BENCH_SAMPLES` (at least 10).
fn sample_size(default: usize) -> usize {
    std::env::var("FASTPMIX_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .map_or(default, |n| n.max(10))
}

fn in_process(c: &mut Criterion) {
    let ss = sample_size(30);
    {
        let mut g = c.benchmark_group("publish_no_sleeper");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(1500));
        let mut local = Local::new();
        let mut rec = typical(0);
        g.bench_function("encode_publish_typical", |b| {
            b.iter(|| {
                rec.source_seq += 1;
                local.writer.publish(black_box(&rec)).expect("publish")
            })
        });
        let t = encode(&typical(0));
        g.bench_function("publish_bytes_typical", |b| {
            b.iter(|| local.writer.publish_bytes(black_box(&t)).expect("publish"))
        });
        let s = encode(&small(0));
        g.bench_function("publish_bytes_small", |b| {
            b.iter(|| local.writer.publish_bytes(black_box(&s)).expect("publish"))
        });
        println!(
            "publish_no_sleeper: typical record {} B, small {} B; futex wakes issued: {}",
            t.len(),
            s.len(),
            local.writer.wakes()
        );
        g.finish();
    }
    {
        let mut g = c.benchmark_group("reader_pickup");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(1500));
        for (name, rec) in [("typical", typical(0)), ("small", small(0))] {
            let bytes = encode(&rec);
            let mut local = Local::new();
            g.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let k = left.min(256);
                        total += local.pickup(&bytes, k);
                        left -= k;
                    }
                    total
                })
            });
        }
        g.finish();
    }
    {
        let mut g = c.benchmark_group("access");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(1000));
        let bytes = encode(&typical(0));
        g.bench_function("validated", |b| {
            b.iter_custom(|iters| {
                Duration::from_nanos((access_validated(&bytes, iters) * iters as f64) as u64)
            })
        });
        g.bench_function("unchecked", |b| {
            b.iter_custom(|iters| {
                Duration::from_nanos((access_unchecked(&bytes, iters) * iters as f64) as u64)
            })
        });
        g.finish();
    }
}

fn cross_process(c: &mut Criterion) {
    let ss = sample_size(10);
    {
        let mut g = c.benchmark_group("futex_floor");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(1000));
        let mut floor: Option<FloorRig> = None;
        g.bench_function("wake_one_way", |b| {
            let f = floor.get_or_insert_with(FloorRig::new);
            b.iter_custom(|iters| Duration::from_nanos((0..iters).map(|_| f.once().0).sum()))
        });
        g.bench_function("rtt_half", |b| {
            let f = floor.get_or_insert_with(FloorRig::new);
            b.iter_custom(|iters| Duration::from_nanos((0..iters).map(|_| f.once().1).sum()))
        });
        drop(floor);
        let mut spin: Option<FloorRig> = None;
        g.bench_function("spin_one_way", |b| {
            let f = spin.get_or_insert_with(|| {
                core_note("futex_floor/spin_one_way", 2);
                FloorRig::spinning()
            });
            b.iter_custom(|iters| Duration::from_nanos((0..iters).map(|_| f.once().0).sum()))
        });
        g.finish();
    }
    {
        let mut g = c.benchmark_group("one_way");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(1000));
        for mode in [Mode::Sleeping, Mode::Spinning] {
            let mut rig: Option<RingRig> = None;
            let base = match mode {
                Mode::Sleeping => "sleeping",
                Mode::Spinning => "spinning",
            };
            for encode in [false, true] {
                let name = if encode {
                    format!("{base}_encode")
                } else {
                    base.to_owned()
                };
                g.bench_function(name.as_str(), |b| {
                    let r = rig.get_or_insert_with(|| {
                        if mode == Mode::Spinning {
                            core_note("one_way/spinning", 2);
                        }
                        RingRig::new(1, mode)
                    });
                    b.iter_custom(|iters| {
                        Duration::from_nanos((0..iters).map(|_| r.one_way(encode)).sum())
                    })
                });
            }
            if let Some(r) = &rig {
                report_rig(&format!("one_way/{base}"), r);
            }
        }
        g.finish();
    }
    {
        let mut g = c.benchmark_group("fanout_last_reader");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(1000));
        for n in [1usize, 2, 8, 32] {
            let mut rig: Option<RingRig> = None;
            g.bench_function(BenchmarkId::from_parameter(n), |b| {
                let r = rig.get_or_insert_with(|| {
                    // The writer sleeps while the readers run: n runnable.
                    core_note(
                        &format!("fanout_last_reader/{n} (readers woken at once)"),
                        n,
                    );
                    RingRig::new(n, Mode::Sleeping)
                });
                b.iter_custom(|iters| {
                    Duration::from_nanos((0..iters).map(|_| r.one_way(false)).sum())
                })
            });
            if let Some(r) = &rig {
                report_rig(&format!("fanout_last_reader/{n}"), r);
            }
        }
        g.finish();
    }
    {
        let mut g = c.benchmark_group("throughput_one_reader");
        g.sample_size(ss)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(2000))
            .throughput(Throughput::Elements(1));
        let mut rig: Option<RingRig> = None;
        for (name, rec) in [("small", small(0)), ("typical", typical(0))] {
            let body = encode(&rec);
            let mut last = Encoded::new(&rec, ACK);
            g.bench_function(name, |b| {
                let r = rig.get_or_insert_with(|| {
                    core_note("throughput_one_reader", 2);
                    RingRig::new(1, Mode::Spinning)
                });
                b.iter_custom(|iters| {
                    Duration::from_nanos(r.throughput(iters.max(1), &body, &mut last))
                })
            });
        }
        if let Some(r) = &rig {
            report_rig("throughput_one_reader", r);
        }
        g.finish();
    }
}

/// Prints what the readers of a rig reported besides times.
fn report_rig(what: &str, r: &RingRig) {
    let (lost, errors) = r.lost_and_errors();
    if lost != 0 || errors != 0 || r.unsettled != 0 {
        println!(
            "note: {what}: readers lost {lost} records, saw {errors} corrupt ones; \
             {} samples started before every reader was asleep",
            r.unsettled
        );
    }
}

criterion::criterion_group!(benches, in_process, cross_process);

fn main() {
    // A re-executed child runs its role and exits here.
    run_child_if_requested();
    let t = Instant::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    println!("ring benches took {:.0} s", t.elapsed().as_secs_f64());
}
