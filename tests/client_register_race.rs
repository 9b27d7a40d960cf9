//! `Client::register`'s inline fast path (registration without
//! a trip through the progress thread) against events that arrive while
//! the handler is being registered. A handler registered inline skips the
//! replay: an event dispatched just before it was (no handler took it, so
//! it is cached) must still reach it, exactly once.
//!
//! One binary, one test: a process holds one client.

mod common;
use fastpmix::client::EVENTS_LOST;
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::{DataRange, Status};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::Duration;

const ROUNDS: usize = 10_000;
/// Round `i` uses code `BASE - i`: job-level codes nobody else uses.
const BASE: i32 = -4100; // down to -14099: below every Standard code
const SENTINEL: i32 = -4099;

#[test]
fn a_handler_registered_while_its_event_is_dispatched_gets_it_exactly_once() {
    let (server, client, me) = common::deep_ring_client("race");

    let counts = Arc::new(Mutex::new(vec![0u32; ROUNDS]));
    let lost = Arc::new(Mutex::new(0u32));
    let l = lost.clone();
    client
        .register(Registration::new(&[EVENTS_LOST], move |inv: Invocation| {
            *l.lock().unwrap() += 1;
            inv.complete(Status::SUCCESS, vec![]);
        }))
        .unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    client
        .register(Registration::new(
            &[Status(SENTINEL)],
            move |inv: Invocation| {
                let _ = done_tx.send(());
                inv.complete(Status::SUCCESS, vec![]);
            },
        ))
        .unwrap();

    // Each round, both threads leave the barrier together: the server
    // publishes round i's event while the client registers its handler.
    let go = Arc::new(Barrier::new(2));
    let publisher = {
        let (pgo, server) = (go.clone(), &server);
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                for i in 0..ROUNDS {
                    pgo.wait();
                    server
                        .notify_as_server(Notification::new(
                            Status(BASE - i as i32),
                            me,
                            DataRange::LOCAL,
                        ))
                        .unwrap();
                }
            });
            for i in 0..ROUNDS {
                let c = counts.clone();
                go.wait();
                client
                    .register(Registration::new(
                        &[Status(BASE - i as i32)],
                        move |inv: Invocation| {
                            c.lock().unwrap()[i] += 1;
                            inv.complete(Status::SUCCESS, vec![]);
                        },
                    ))
                    .unwrap();
            }
            h.join()
        })
    };
    publisher.unwrap();
    // The ring is FIFO and late deliveries run before the next record: once
    // the sentinel's handler ran, every round's event has been handled.
    server
        .notify_as_server(Notification::new(Status(SENTINEL), me, DataRange::LOCAL))
        .unwrap();
    done_rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(
        *lost.lock().unwrap(),
        0,
        "the client lagged: events were lost"
    );
    let counts = counts.lock().unwrap();
    let missed: Vec<usize> = (0..ROUNDS).filter(|&i| counts[i] == 0).collect();
    let twice: Vec<usize> = (0..ROUNDS).filter(|&i| counts[i] > 1).collect();
    let first = |v: &[usize]| v.iter().take(20).copied().collect::<Vec<_>>();
    assert!(
        missed.is_empty(),
        "{} rounds whose handler never got its event, first: {:?}",
        missed.len(),
        first(&missed)
    );
    assert!(
        twice.is_empty(),
        "{} rounds whose handler got it twice, first: {:?}",
        twice.len(),
        first(&twice)
    );
    client.finalize().unwrap();
}
