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
