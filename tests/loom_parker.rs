//! Loom model of the progress thread's doorbell (`sync::Parker`): whatever
//! the interleaving, a producer's publication is never missed by a consumer
//! going to sleep (no lost wake-up). Runs only under `--cfg loom`:
//! `RUSTFLAGS="--cfg loom" cargo test --release --test loom_parker`.
#![cfg(loom)]

use fastpmix::internals::sync::Parker;
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

/// `Parker::park_with`: the progress thread sleeps on its own doorbell and
/// external words (here one word twice, standing for the client ring's wake
/// word and doorbell, with the ring's sleep-flag handshake) at once. One producer feeds the local queue, one the "ring"; neither
/// wake-up may be lost.
#[test]
fn park_with_never_loses_a_wakeup_from_either_word() {
    use fastpmix::internals::sync::{fence_seqcst, Cell32};
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let p = Arc::new(Parker::new());
        let local = Arc::new(AtomicUsize::new(0));
        let ring = Arc::new(AtomicUsize::new(0));
        let bell = Arc::new(Cell32::new(0));
        let sleepy = Arc::new(Cell32::new(0));
        let t1 = {
            let (p, local) = (p.clone(), local.clone());
            loom::thread::spawn(move || {
                local.fetch_add(1, Ordering::Relaxed);
                p.unpark();
            })
        };
        let t2 = {
            let (ring, bell, sleepy) = (ring.clone(), bell.clone(), sleepy.clone());
            loom::thread::spawn(move || {
                ring.fetch_add(1, Ordering::Relaxed);
                // The ring writer's side: publish, fence, ring if asleep.
                fence_seqcst();
                if sleepy.load_relaxed() == 1 && sleepy.swap_seqcst(0) == 1 {
                    bell.fetch_add_seqcst(1);
                    bell.wake_all();
                }
            })
        };
        // What the consumer has taken so far (its "pump").
        let (mut seen_local, mut seen_ring) = (0, 0);
        loop {
            seen_local = seen_local.max(local.load(Ordering::Relaxed));
            seen_ring = seen_ring.max(ring.load(Ordering::Relaxed));
            if seen_local >= 1 && seen_ring >= 1 {
                break;
            }
            let (sl, sr) = (seen_local, seen_ring);
            p.park_with(
                Duration::ZERO,
                || local.load(Ordering::Relaxed) > sl || ring.load(Ordering::Relaxed) > sr,
                || {
                    // The ring reader's side: announce, fence, re-check.
                    let v = bell.load_acquire();
                    sleepy.store_seqcst(1);
                    fence_seqcst();
                    if ring.load(Ordering::Relaxed) > sr {
                        None
                    } else {
                        Some([(&*bell, v), (&*bell, v)])
                    }
                },
                || {},
            );
        }
        t1.join().unwrap();
        t2.join().unwrap();
    });
}
