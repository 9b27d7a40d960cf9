//! `Client::register`'s inline fast path with many registrations and no
//! event between them: past 256 handlers awaiting a dispatch the client
//! queues a pruning of that list on the progress thread instead of
//! sending every later registration through it, and every handler still
//! gets its events exactly once, including one cached before it.
//!
//! One binary, one test: a process holds one client.

mod common;
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::{DataRange, Status};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

const HANDLERS: usize = 2_000;
const BASE: i32 = -20_000; // job-level codes nobody else uses
const CACHED: i32 = -19_999;
const SENTINEL: i32 = -19_998;

#[test]
fn thousands_of_inline_registrations_each_get_their_events_exactly_once() {
    let (server, client, me) = common::deep_ring_client("many");
    let (done_tx, done_rx) = mpsc::channel();
    let done_tx = Mutex::new(done_tx);
    client
        .register(Registration::new(
            &[Status(SENTINEL)],
            move |inv: Invocation| {
                let _ = done_tx.lock().unwrap().send(());
                inv.complete(Status::SUCCESS, vec![]);
            },
        ))
        .unwrap();
    // An event no handler takes yet: the client keeps it for later.
    server
        .notify_as_server(Notification::new(Status(CACHED), me, DataRange::LOCAL))
        .unwrap();
    server
        .notify_as_server(Notification::new(Status(SENTINEL), me, DataRange::LOCAL))
        .unwrap();
    done_rx.recv_timeout(Duration::from_secs(30)).unwrap();

    let counts = Arc::new(Mutex::new(vec![0u32; HANDLERS]));
    for i in 0..HANDLERS {
        let c = counts.clone();
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
    // The cached event reaches a handler registered after all of them.
    let (cached_tx, cached_rx) = mpsc::channel();
    let cached_tx = Mutex::new(cached_tx);
    client
        .register(Registration::new(
            &[Status(CACHED)],
            move |inv: Invocation| {
                let _ = cached_tx.lock().unwrap().send(());
                inv.complete(Status::SUCCESS, vec![]);
            },
        ))
        .unwrap();
    cached_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    for i in 0..HANDLERS {
        server
            .notify_as_server(Notification::new(
                Status(BASE - i as i32),
                me,
                DataRange::LOCAL,
            ))
            .unwrap();
    }
    server
        .notify_as_server(Notification::new(Status(SENTINEL), me, DataRange::LOCAL))
        .unwrap();
    done_rx.recv_timeout(Duration::from_secs(60)).unwrap();
    let counts = counts.lock().unwrap();
    let wrong: Vec<(usize, u32)> = (0..HANDLERS)
        .filter(|&i| counts[i] != 1)
        .map(|i| (i, counts[i]))
        .take(20)
        .collect();
    assert!(
        wrong.is_empty(),
        "handlers not called exactly once: {wrong:?}"
    );
    assert!(
        cached_rx.try_recv().is_err(),
        "the cached event reached its handler twice"
    );
    client.finalize().unwrap();
}
