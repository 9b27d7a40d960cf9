//! Latency, throughput and cost table of the shared-memory event ring:
//! p50/p90/p99 per row, latency rows with their ratio to the raw futex wake
//! between two processes measured in the same run (the floor).
//!
//! ```sh
//! cargo bench --bench ring_table                               # 10 000 samples per row, ~1-2 min
//! FASTPMIX_BENCH_SAMPLES=2000 cargo bench --bench ring_table   # fewer
//! ```
//!
//! Rows:
//! - (a) raw futex wake one-way between two PROCESSES on a MAP_SHARED word
//!   (memfd): the child sleeps in `futex_wait`, the parent stores and
//!   `FUTEX_WAKE`s, the child stamps `CLOCK_MONOTONIC` on waking — the floor;
//!   (a2) the same exchange's round trip / 2 (both sides asleep); (a3) the
//!   same word busy-polled by the child (no syscall): what moving one cache
//!   line between two processes costs here, the floor of the spinning rows.
//! - (b) sleeping-reader one-way: publish (pre-encoded bytes, timestamp
//!   patched in) → a reader process asleep in the ring's futex holds the
//!   validated record (its clock − the record's `timestamp_ns`); (b2) the
//!   same with rkyv encoding included in the publish.
//! - (c) spinning-reader one-way (the reader busy-polls `try_next`); (c2)
//!   with encoding; (c3) with a small record (64 B, cheap validation).
//! - (d) fan-out to 1/2/8/32 sleeping reader processes: until the LAST one
//!   holds the record.
//! - (e) throughput to one busy-polling reader process, records/s (the writer
//!   never gets a ring ahead, so none is lost), small and typical records.
//! - (f) `rkyv::access` (validated) versus `rkyv::access_unchecked` on a
//!   typical record, and the in-process publish / pickup costs, ns per call
//!   (each sample is the mean of a batch of 256).
//! - (g) syscalls per publish with no sleeper: a child publishing typical
//!   records is run under `strace -f -c` twice (1 000 and 1 000 + N
//!   publishes); the difference of the syscall counts divided by N. Skipped,
//!   saying "strace not found", when strace is not installed.
//! - (a') the floor again at the end, so drift during the run shows.
//!
//! Targets (ratios inside one run): (b) p50 ≤ 1.3 × (a) p50; (c) p50 ≤ 0.5 µs;
//! (e) small ≥ 5 M records/s; (g) 0 syscalls per publish.
//!
//! The first line describes the machine (cores, load average, clock source, a
//! CPU reference loop, the cost of reading the clock, and how many cores
//! other processes kept busy during 300 ms while this one slept). Rows that keep every
//! core busy or oversubscribe it (8 and 32 readers on 2 cores) say so. Nothing
//! asserts on a time. Without `--bench` (`cargo test --benches`) it does a
//! quick smoke pass of every row with 100 samples.
//!
//! The processes and rigs come from the shared bench harness,
//! `benches/common/` (`children.rs`, `floor.rs`, `rigs.rs`).

mod common;

use common::table::{collect, dur, pct, Row};
use common::*;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

/// Samples per row unless `FASTPMIX_BENCH_SAMPLES` says otherwise.
const DEFAULT_SAMPLES: usize = 10_000;
/// Samples per row of the quick pass (not invoked with `--bench`).
const QUICK_SAMPLES: usize = 100;
/// Calls per sample of the cost rows.
const BATCH: u64 = 256;

/// What one strace run counted.
struct StraceCount {
    total: u64,
    per_call: BTreeMap<String, u64>,
    child_said: String,
}

fn strace_available() -> bool {
    Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the `publish` child (n publishes) under `strace -f -c`.
fn strace_publish(n: u64) -> Result<StraceCount, String> {
    let out = std::env::temp_dir().join(format!(
        "fastpmix-ring-strace-{}-{n}.txt",
        std::process::id()
    ));
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let res = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&exe)
        .envs(publish_child_env(n))
        .output()
        .map_err(|e| format!("cannot run strace: {e}"))?;
    let text = std::fs::read_to_string(&out);
    let _ = std::fs::remove_file(&out);
    if !res.status.success() {
        return Err(format!(
            "strace run failed ({}): {}",
            res.status,
            String::from_utf8_lossy(&res.stderr).trim()
        ));
    }
    let text = text.map_err(|e| format!("cannot read strace output: {e}"))?;
    // Rows: "% time  seconds  usecs/call  calls  [errors]  syscall".
    let mut per_call = BTreeMap::new();
    let mut total = None;
    for line in text.lines() {
        let tok: Vec<&str> = line.split_whitespace().collect();
        if tok.len() < 5 || tok[0].parse::<f64>().is_err() {
            continue;
        }
        let (Ok(calls), Some(name)) = (tok[3].parse::<u64>(), tok.last()) else {
            continue;
        };
        if *name == "total" {
            total = Some(calls);
        } else {
            per_call.insert((*name).to_owned(), calls);
        }
    }
    Ok(StraceCount {
        total: total.ok_or("no total line in strace -c output")?,
        per_call,
        child_said: String::from_utf8_lossy(&res.stdout).trim().to_owned(),
    })
}

/// The `publish` child run directly (no tracer): what it reports about its
/// own publish loop (ring futex wakes, voluntary context switches).
fn direct_publish(n: u64) -> String {
    let Ok(exe) = std::env::current_exe() else {
        return "current_exe unavailable".into();
    };
    match Command::new(exe).envs(publish_child_env(n)).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        Ok(o) => format!("child failed: {}", o.status),
        Err(e) => format!("cannot run child: {e}"),
    }
}

fn syscall_row(n: u64) -> (Vec<String>, Option<f64>) {
    let direct = format!(
        "(g2) without strace, {n} publishes, no sleeper: {} (context switches counted around the loop from /proc/self/status)",
        direct_publish(n)
    );
    if !strace_available() {
        return (
            vec!["(g)  syscalls per publish: strace not found, row skipped".into()],
            None,
        );
    }
    let base = 1_000;
    match (strace_publish(base), strace_publish(base + n)) {
        (Ok(a), Ok(b)) => {
            let per = (b.total as f64 - a.total as f64) / n as f64;
            let fa = a.per_call.get("futex").copied().unwrap_or(0);
            let fb = b.per_call.get("futex").copied().unwrap_or(0);
            let mut diff: Vec<String> = b
                .per_call
                .iter()
                .filter(|(k, v)| a.per_call.get(*k).copied().unwrap_or(0) != **v)
                .map(|(k, v)| format!("{k} {}->{v}", a.per_call.get(k).copied().unwrap_or(0)))
                .collect();
            if diff.is_empty() {
                diff.push("none".into());
            }
            let lines = vec![
                format!(
                    "(g)  syscalls per publish, no sleeper: {per:.6} ({} vs {} syscalls for {} vs {} publishes; futex {fa} vs {fb})",
                    a.total,
                    b.total,
                    base,
                    base + n
                ),
                format!("     syscalls whose count changed: {}", diff.join(", ")),
                format!(
                    "     how: `strace -f -c` of a child (this binary re-executed) that creates a segment and \
                     encodes+publishes typical records with no reader asleep, run for {base} and {} publishes; \
                     the children said [{}] / [{}] (under ptrace the switch count includes the tracer's stops)",
                    base + n,
                    a.child_said,
                    b.child_said
                ),
                direct,
            ];
            (lines, Some(per))
        }
        (Err(e), _) | (_, Err(e)) => (
            vec![format!("(g)  syscalls per publish: {e}"), direct],
            None,
        ),
    }
}

/// Adds a note when a rig's readers lost records, saw corrupt ones, or were
/// not all asleep before a sample.
fn note_rig(notes: &mut Vec<String>, what: &str, r: &RingRig) {
    let (lost, errors) = r.lost_and_errors();
    if lost != 0 || errors != 0 || r.unsettled != 0 {
        notes.push(format!(
            "note: {what}: readers lost {lost} records, saw {errors} corrupt ones; \
             {} samples started before every reader was asleep",
            r.unsettled
        ));
    }
}

fn main() {
    // A re-executed child runs its role and exits here.
    run_child_if_requested();
    let started = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Cargo passes `--bench` under `cargo bench`; `cargo test --benches`
    // passes nothing (or `--test`): then only a quick smoke pass.
    let full = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let samples = std::env::var("FASTPMIX_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(if full { DEFAULT_SAMPLES } else { QUICK_SAMPLES });
    let (tp_runs, tp_small, tp_typical, strace_n) = if full {
        (10, 1_000_000u64, 250_000u64, 200_000u64)
    } else {
        (2, 20_000, 5_000, 2_000)
    };

    println!("{}", machine::process_machine_line(cores(), mono_ns));
    if full {
        println!("samples per row: {samples} (env FASTPMIX_BENCH_SAMPLES)");
    } else {
        println!(
            "quick pass (not run with --bench): {samples} samples per row, numbers not meaningful"
        );
    }
    let typical_bytes = encode(&typical(0));
    let small_bytes = encode(&small(0));
    println!(
        "records: typical {} B archived (8 infos, 1 affected proc), small {} B (no infos); \
         ring 512 slots of 1 KiB; clock: CLOCK_MONOTONIC",
        typical_bytes.len(),
        small_bytes.len()
    );

    let mut rows: Vec<Row> = Vec::new();
    let mut notes: Vec<String> = Vec::new();

    {
        let mut f = FloorRig::new();
        let mut rtt = Vec::with_capacity(samples + samples / 10);
        let one = collect(samples, || {
            let (one_way, rtt_half) = f.once();
            rtt.push(rtt_half as f64);
            one_way as f64
        });
        // Drop the warm-up rounds `collect` ran first.
        rtt.drain(..rtt.len() - one.len());
        rows.push(Row::new(
            "(a)  futex wake one-way, 2 procs [floor]",
            one,
            true,
        ));
        rows.push(Row::new("(a2) futex ping-pong 2 procs, RTT/2", rtt, true));
    }
    {
        let mut f = FloorRig::spinning();
        rows.push(Row::new(
            "(a3) shared word one-way, spinning 2 procs",
            collect(samples, || f.once().0 as f64),
            true,
        ));
        notes.push(format!(
            "note: (a3): both processes busy-polling = 2 busy processes on {} cores",
            cores()
        ));
    }
    {
        let mut r = RingRig::new(1, Mode::Sleeping);
        rows.push(Row::new(
            "(b)  sleeping reader one-way",
            collect(samples, || r.one_way(false) as f64),
            true,
        ));
        rows.push(Row::new(
            "(b2) sleeping reader one-way, +encode",
            collect(samples, || r.one_way(true) as f64),
            true,
        ));
        note_rig(&mut notes, "(b)", &r);
    }
    {
        let mut r = RingRig::new(1, Mode::Spinning);
        rows.push(Row::new(
            "(c)  spinning reader one-way",
            collect(samples, || r.one_way(false) as f64),
            true,
        ));
        rows.push(Row::new(
            "(c2) spinning reader one-way, +encode",
            collect(samples, || r.one_way(true) as f64),
            true,
        ));
        rows.push(Row::new(
            "(c3) spinning reader one-way, small rec",
            collect(samples, || r.one_way_small() as f64),
            true,
        ));
        note_rig(&mut notes, "(c)", &r);
        notes.push(format!(
            "note: (c): writer spin-waiting for the answer + reader busy-polling = 2 busy processes on {} cores",
            cores()
        ));
    }
    for n in [1usize, 2, 8, 32] {
        let mut r = RingRig::new(n, Mode::Sleeping);
        let label = format!("(d)  fan-out {n:>2} sleeping, last reader");
        rows.push(Row::new(
            &label,
            collect(samples, || r.one_way(false) as f64),
            true,
        ));
        note_rig(&mut notes, label.trim(), &r);
        if n > cores() {
            notes.push(format!(
                "note: (d) fan-out {n}: one publish makes {n} reader processes runnable on {} cores: OVERSUBSCRIBED (by design of the row)",
                cores()
            ));
        }
    }

    // Throughput.
    let mut tp_lines = Vec::new();
    let mut small_p50 = None;
    {
        let mut r = RingRig::new(1, Mode::Spinning);
        for (name, rec, k) in [
            ("small", small(0), tp_small),
            ("typical", typical(0), tp_typical),
        ] {
            let body = encode(&rec);
            let mut last = Encoded::new(&rec, ACK);
            r.throughput(k / 10, &body, &mut last); // warm-up
            let mut rates: Vec<f64> = (0..tp_runs)
                .map(|_| k as f64 / (r.throughput(k, &body, &mut last) as f64 / 1e9))
                .collect();
            rates.sort_by(|a, b| a.total_cmp(b));
            if name == "small" {
                small_p50 = Some(pct(&rates, 0.5));
            }
            tp_lines.push(format!(
                "(e)  throughput to 1 reader, {name:<7} ({:>3} B)  runs {tp_runs:>2} x {k:>9} records: \
                 p50 {:>6.2} M/s  min {:>6.2} M/s  max {:>6.2} M/s",
                body.len(),
                pct(&rates, 0.5) / 1e6,
                rates.first().copied().unwrap_or(0.0) / 1e6,
                rates.last().copied().unwrap_or(0.0) / 1e6,
            ));
        }
        let (lost, errors) = r.lost_and_errors();
        tp_lines.push(format!(
            "     reader lost {lost} records, saw {errors} corrupt; the writer waited for the reader {} times \
             (0: the reader kept up, the rate is the pair's lockstep rate); \
             writer + busy-polling reader = 2 busy processes on {} cores",
            r.flow_waits,
            cores()
        ));
    }

    // In-process costs (each sample: mean of a batch of BATCH calls).
    {
        let mut local = Local::new();
        let mut rec = typical(0);
        rows.push(Row::new(
            "(p)  publish typical, encode+publish",
            collect(samples, || {
                let t = Instant::now();
                for _ in 0..BATCH {
                    rec.source_seq += 1;
                    local.writer.publish(black_box(&rec)).expect("publish");
                }
                t.elapsed().as_nanos() as f64 / BATCH as f64
            }),
            false,
        ));
        for (label, bytes) in [
            ("(p2) publish_bytes typical", &typical_bytes),
            ("(p3) publish_bytes small", &small_bytes),
        ] {
            rows.push(Row::new(
                label,
                collect(samples, || {
                    let t = Instant::now();
                    for _ in 0..BATCH {
                        local
                            .writer
                            .publish_bytes(black_box(bytes))
                            .expect("publish");
                    }
                    t.elapsed().as_nanos() as f64 / BATCH as f64
                }),
                false,
            ));
        }
        if local.writer.wakes() != 0 {
            notes.push(format!(
                "note: (p): the writer issued {} futex wakes",
                local.writer.wakes()
            ));
        }
    }
    for (label, bytes) in [
        ("(q)  pickup typical (try_next+drop)", &typical_bytes),
        ("(q2) pickup small (try_next+drop)", &small_bytes),
    ] {
        let mut local = Local::new();
        rows.push(Row::new(
            label,
            collect(samples, || {
                local.pickup(bytes, BATCH).as_nanos() as f64 / BATCH as f64
            }),
            false,
        ));
    }
    rows.push(Row::new(
        "(f)  rkyv::access typical (validated)",
        collect(samples, || access_validated(&typical_bytes, BATCH)),
        false,
    ));
    rows.push(Row::new(
        "(f2) rkyv::access_unchecked typical",
        collect(samples, || access_unchecked(&typical_bytes, BATCH)),
        false,
    ));

    let (sys_lines, sys_per) = syscall_row(strace_n);

    {
        let mut f = FloorRig::new();
        rows.push(Row::new(
            "(a') futex wake one-way, re-measured",
            collect(samples, || f.once().0 as f64),
            true,
        ));
    }

    let floor = rows[0].pct(0.5).max(1.0);
    println!();
    println!(
        "{:<42} {:>6} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "row", "count", "p50", "p90", "p99", "p50/floor", "p99/floor"
    );
    for r in &rows {
        let (a, b) = if r.latency {
            (
                format!("{:.2}x", r.pct(0.5) / floor),
                format!("{:.2}x", r.pct(0.99) / floor),
            )
        } else {
            ("-".into(), "-".into())
        };
        println!(
            "{:<42} {:>6} {:>10} {:>10} {:>10} {:>9} {:>9}",
            r.label,
            r.ns.len(),
            dur(r.pct(0.5)),
            dur(r.pct(0.9)),
            dur(r.pct(0.99)),
            a,
            b
        );
    }
    println!();
    for l in &tp_lines {
        println!("{l}");
    }
    for l in &sys_lines {
        println!("{l}");
    }
    println!();
    for n in &notes {
        println!("{n}");
    }

    // Targets.
    let p50 = |prefix: &str| {
        rows.iter()
            .find(|r| r.label.starts_with(prefix))
            .map(|r| r.pct(0.5))
            .unwrap_or(f64::NAN)
    };
    let verdict = |ok: bool| if ok { "holds" } else { "MISSED" };
    println!();
    println!(
        "floor = (a) p50 of this run = {}; (a') at the end = {}",
        dur(floor),
        dur(p50("(a')"))
    );
    let b = p50("(b) ");
    println!(
        "target sleeping-reader p50 <= 1.3 x floor: (b) {} = {:.2}x floor: {}  [(b2) with encode {:.2}x]",
        dur(b),
        b / floor,
        verdict(b / floor <= 1.3),
        p50("(b2)") / floor
    );
    let c = p50("(c) ");
    println!(
        "target spinning-reader p50 <= 0.5 µs: (c) {}: {}  [(c3) small record {}: {}; (c2) with encode {}; \
         (a3) shared-word spin floor {}; (f) validating a typical record alone {}]",
        dur(c),
        verdict(c <= 500.0),
        dur(p50("(c3)")),
        verdict(p50("(c3)") <= 500.0),
        dur(p50("(c2)")),
        dur(p50("(a3)")),
        dur(p50("(f) "))
    );
    match small_p50 {
        Some(rate) => println!(
            "target throughput >= 5 M small records/s to one reader: {:.2} M/s: {}",
            rate / 1e6,
            verdict(rate >= 5e6)
        ),
        None => println!("target throughput: not measured"),
    }
    match sys_per {
        Some(per) => println!(
            "target 0 syscalls per publish with no sleeper: (g) {per:.6}: {}",
            verdict(per == 0.0)
        ),
        None => println!("target 0 syscalls per publish with no sleeper: not measured, see (g)"),
    }
    println!(
        "(rows (a3), (c*) and (e) need both cores: with a busy neighbour they are time-sliced \
         and mean nothing; check the background CPU figures)"
    );
    if !full {
        println!("(quick pass: the verdicts above mean nothing)");
    }
    println!(
        "loadavg at end: \"{}\", background CPU: {}; table took {:.0} s",
        machine::loadavg(),
        machine::background_cpu(cores()),
        started.elapsed().as_secs_f64()
    );
}
