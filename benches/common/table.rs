//! Rows of the table programs: samples sorted once, percentiles, durations
//! printed at a readable scale, and the sample loop with its warm-up.
#![allow(dead_code)] // each bench uses a subset

use std::hint::black_box;

/// One table row.
pub struct Row {
    pub label: String,
    /// Sorted, nanoseconds.
    pub ns: Vec<f64>,
    /// Compared with the floor (latency rows only).
    pub latency: bool,
}

impl Row {
    pub fn new(label: &str, mut ns: Vec<f64>, latency: bool) -> Row {
        ns.sort_by(|a, b| a.total_cmp(b));
        Row {
            label: label.to_owned(),
            ns,
            latency,
        }
    }

    pub fn pct(&self, p: f64) -> f64 {
        pct(&self.ns, p)
    }
}

/// The `p` quantile of sorted samples (0 when empty).
pub fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Nanoseconds as "1.23 µs", "456 ns" or "7.8 ns".
pub fn dur(ns: f64) -> String {
    if ns >= 1000.0 {
        format!("{:.2} µs", ns / 1000.0)
    } else if ns >= 10.0 {
        format!("{ns:.0} ns")
    } else {
        format!("{ns:.1} ns")
    }
}

/// `samples / 10` warm-up rounds, then `samples` measured ones.
pub fn collect<T>(samples: usize, mut f: impl FnMut() -> T) -> Vec<T> {
    for _ in 0..samples / 10 {
        black_box(f());
    }
    (0..samples).map(|_| f()).collect()
}
