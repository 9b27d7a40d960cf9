//! The machine line the table programs print first, so a noisy run is
//! visible next to its numbers.
#![allow(dead_code)] // each bench uses a subset

use std::hint::black_box;
use std::time::{Duration, Instant};

/// /proc/loadavg, as is.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "n/a".into())
}

/// The kernel's clock source.
pub fn clocksource() -> String {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "n/a".into())
}

/// The cpuidle driver, and for `haltpoll` (virtual machines) how long an
/// idle vCPU polls before it halts: at 0 it halts at once, and waking a
/// thread on it costs ~20 µs more (docs/performance.md, "What limits each number").
pub fn cpuidle() -> String {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_owned());
    match read("/sys/devices/system/cpu/cpuidle/current_driver") {
        Ok(d) if d == "haltpoll" => {
            match read("/sys/module/haltpoll/parameters/guest_halt_poll_ns") {
                Ok(ns) => format!("haltpoll (guest_halt_poll_ns {ns})"),
                Err(_) => d,
            }
        }
        Ok(d) => d,
        Err(_) => "n/a".into(),
    }
}

/// A CPU reference loop: 2^24 dependent xorshift steps (about 10-20 ms on a
/// current core). A slow result means a slow or contended CPU this run.
pub fn reference_loop() -> Duration {
    let t = Instant::now();
    let mut x: u64 = black_box(0x9e37_79b9_7f4a_7c15);
    for _ in 0..1u32 << 24 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x);
    t.elapsed()
}

/// Nanoseconds one call of `clock` costs (averaged over 100 000 calls).
pub fn clock_cost_ns<T>(clock: impl Fn() -> T) -> u128 {
    let t = Instant::now();
    for _ in 0..100_000 {
        black_box(clock());
    }
    t.elapsed().as_nanos() / 100_000
}

/// (busy, total) jiffies of all CPUs from /proc/stat.
fn cpu_jiffies() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let v: Vec<u64> = s
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().take(8).sum();
    // idle + iowait are not busy.
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// CPU use of everything else while this process sleeps 300 ms, in cores
/// (e.g. "0.97 of 2 cores busy"): busy neighbours time-slice the spinning and
/// throughput rows, which need both cores.
pub fn background_cpu(cores: usize) -> String {
    let a = cpu_jiffies();
    std::thread::sleep(Duration::from_millis(300));
    match (a, cpu_jiffies()) {
        (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => format!(
            "{:.2} of {cores} cores busy",
            (b1 - b0) as f64 / (t1 - t0) as f64 * cores as f64,
        ),
        _ => "n/a".into(),
    }
}

/// The first line of the multi-process tables: cores, load, clock source,
/// a CPU reference loop, the cost of `clock`, the background CPU and the
/// cpuidle setting.
pub fn process_machine_line<T>(cores: usize, clock: impl Fn() -> T) -> String {
    format!(
        "machine: nproc={cores} loadavg=\"{}\" clocksource={} ref_loop={:.2} ms (2^24 xorshift) \
         clock_gettime(MONOTONIC)={} ns; background CPU while idle: {}; cpuidle {}",
        loadavg(),
        clocksource(),
        reference_loop().as_secs_f64() * 1e3,
        clock_cost_ns(clock),
        background_cpu(cores),
        cpuidle()
    )
}
