//! Clocks, busy waits and waits on control-block words, each with a
//! deadline so a stuck child fails the bench instead of hanging it.

use super::{DEADLINE, SPIN_BUDGET};
use fastpmix::internals::sync::Cell32;
use std::hint::spin_loop;
use std::thread;
use std::time::{Duration, Instant};

/// `CLOCK_MONOTONIC` in nanoseconds: the same clock in every process
/// (`Instant` values cannot be compared across processes).
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `ts`, which is valid
    // for writes; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Spins (no syscall) for `d`.
pub fn busy_wait(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        spin_loop();
    }
}

/// Online cores.
pub fn cores() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}

/// Prints whether `busy` runnable processes keep every core busy or
/// oversubscribe the machine.
pub fn core_note(what: &str, busy: usize) {
    let c = cores();
    if busy > c {
        println!("note: {what}: {busy} runnable processes on {c} cores: OVERSUBSCRIBED");
    } else if busy == c {
        println!("note: {what}: {busy} busy processes on {c} cores: no spare core");
    }
}

/// An environment variable a parent set for a child, parsed.
pub fn env_parse<T: std::str::FromStr>(name: &str) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("child: {name} missing or malformed"))
}

/// `v` has reached `target` (counters that may wrap).
pub fn reached(v: u32, target: u32) -> bool {
    (v.wrapping_sub(target) as i32) >= 0
}

/// Sleeps on `cell` (futex) until it reaches `target`.
pub fn sleep_until(cell: &Cell32, target: u32, what: &str) {
    let t = Instant::now();
    loop {
        let v = cell.load_acquire();
        if reached(v, target) {
            return;
        }
        assert!(t.elapsed() < DEADLINE, "timed out waiting for {what}");
        cell.wait_while(v, Some(Duration::from_millis(100)));
    }
}

/// Spins on `cell` until it reaches `target`, yielding after a budget.
pub fn spin_until(cell: &Cell32, target: u32, what: &str) {
    let t = Instant::now();
    let mut i = 0u32;
    while !reached(cell.load_acquire(), target) {
        i = i.wrapping_add(1);
        if i % 64 == 0 && t.elapsed() >= SPIN_BUDGET {
            assert!(t.elapsed() < DEADLINE, "timed out waiting for {what}");
            thread::yield_now();
        } else {
            spin_loop();
        }
    }
}
