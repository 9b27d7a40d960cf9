//! Loom model of the progress thread's doorbell (`sync::Parker`): whatever
//! the interleaving, a producer's publication is never missed by a consumer
//! going to sleep (no lost wake-up). Runs only under `--cfg loom`:
//! `RUSTFLAGS="--cfg loom" cargo test --release --test loom_parker`.
#![cfg(loom)]

use fastpmix::sync::Parker;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use std::time::Duration;

fn consume(p: &Parker, q: &AtomicUsize, want: usize) {
    loop {
        if q.load(Ordering::Relaxed) >= want {
            return;
        }
        p.park(Duration::ZERO, None, || q.load(Ordering::Relaxed) >= want);
    }
}

#[test]
fn parker_never_loses_a_wakeup_with_one_producer() {
    loom::model(|| {
        let p = Arc::new(Parker::new());
        let q = Arc::new(AtomicUsize::new(0));
        let (p2, q2) = (p.clone(), q.clone());
        let t = loom::thread::spawn(move || {
            q2.fetch_add(1, Ordering::Relaxed);
            p2.unpark();
        });
        consume(&p, &q, 1);
        t.join().unwrap();
    });
}

#[test]
fn parker_never_loses_a_wakeup_with_two_producers() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let p = Arc::new(Parker::new());
        let q = Arc::new(AtomicUsize::new(0));
        let ts: Vec<_> = (0..2)
            .map(|_| {
                let (p, q) = (p.clone(), q.clone());
                loom::thread::spawn(move || {
                    q.fetch_add(1, Ordering::Relaxed);
                    p.unpark();
                })
            })
            .collect();
        consume(&p, &q, 2);
        for t in ts {
            t.join().unwrap();
        }
    });
}
