//! A thread that notifies PROC_LOCAL events faster than the progress thread
//! runs their chains waits once `MAX_QUEUED_LOCAL` of them are queued,
//! instead of growing the process without bound (and starving the
//! registrations queued behind them); the progress thread itself, which
//! cannot wait for itself, is refused with `PMIX_ERR_OUT_OF_RESOURCE`.
//! No accepted event is lost.

mod common;

use common::{engine, me, wait_until};
use fastpmix::event::{Invocation, Notification, Registration, MAX_QUEUED_LOCAL};
use fastpmix::{DataRange, Status};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

const C: Status = Status(900);
const D: Status = Status(901);

fn get(m: &Mutex<usize>) -> usize {
    *m.lock().unwrap()
}

#[test]
fn a_notifier_that_outruns_the_progress_thread_waits_and_loses_nothing() {
    let e = engine();
    let handled = Arc::new(Mutex::new(0usize));
    let (release, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(Some(gate));
    {
        let handled = handled.clone();
        e.register(Registration::new(&[C], move |inv: Invocation| {
            // The first event holds the progress thread until released.
            if let Some(g) = gate.lock().unwrap().take() {
                let _ = g.recv();
            }
            *handled.lock().unwrap() += 1;
            inv.complete(Status::SUCCESS, Vec::new());
        }))
        .unwrap();
    }
    let total = MAX_QUEUED_LOCAL as usize + 100;
    let sent = Arc::new(Mutex::new(0usize));
    let notifier = {
        let (e, sent) = (e.clone(), sent.clone());
        std::thread::spawn(move || {
            for _ in 0..total {
                e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
                    .expect("an accepted notify");
                *sent.lock().unwrap() += 1;
            }
        })
    };
    // The first event is off the queue (its handler holds the thread); the
    // queue then takes MAX_QUEUED_LOCAL more, and the notifier waits.
    let full = MAX_QUEUED_LOCAL as usize + 1;
    wait_until(|| get(&sent) >= full);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(get(&sent), full, "the notifier went past the bound");
    assert_eq!(get(&handled), 0);
    release.send(()).unwrap();
    notifier.join().unwrap();
    wait_until(|| get(&handled) == total);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(get(&handled), total, "every accepted event ran once");
}

#[test]
fn a_handler_notifying_past_the_bound_is_refused_and_nothing_accepted_is_lost() {
    let e = engine();
    let handled = Arc::new(Mutex::new(0usize));
    {
        let handled = handled.clone();
        e.register(Registration::new(&[C], move |inv: Invocation| {
            *handled.lock().unwrap() += 1;
            inv.complete(Status::SUCCESS, Vec::new());
        }))
        .unwrap();
    }
    let outcome = Arc::new(Mutex::new(None));
    {
        let (e2, outcome) = (e.clone(), outcome.clone());
        e.register(Registration::new(&[D], move |inv: Invocation| {
            // On the progress thread: nobody drains while this runs.
            let mut accepted = 0usize;
            let refusal = loop {
                match e2.notify(Notification::new(C, me(), DataRange::PROC_LOCAL)) {
                    Ok(()) => accepted += 1,
                    Err(s) => break s,
                }
            };
            *outcome.lock().unwrap() = Some((accepted, refusal));
            inv.complete(Status::SUCCESS, Vec::new());
        }))
        .unwrap();
    }
    e.notify(Notification::new(D, me(), DataRange::PROC_LOCAL))
        .unwrap();
    wait_until(|| outcome.lock().unwrap().is_some());
    let (accepted, refusal) = outcome.lock().unwrap().unwrap();
    assert_eq!(
        (accepted, refusal),
        (MAX_QUEUED_LOCAL as usize, Status::ERR_OUT_OF_RESOURCE)
    );
    wait_until(|| get(&handled) == accepted);
    // The bound is free again: an ordinary notify goes through.
    e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
        .unwrap();
    wait_until(|| get(&handled) == accepted + 1);
}
