//! A blocking PROC_LOCAL notify that runs this process's handlers in the
//! notifying thread, as OpenPMIx does (`EngineBuilder::proc_local_inline`,
//! or `FASTPMIX_PROC_LOCAL_INLINE=1`): when it does, when it must not, and
//! that the engine's guarantees hold on that path. The loom model of the
//! dispatch right is in `loom_engine.rs`.

mod common;

use common::me;
use fastpmix::event::{Engine, Invocation, Notification, Registration};
use fastpmix::{DataRange, Status};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

const A: Status = Status(300);
const B: Status = Status(301);

fn inline_engine() -> Engine {
    Engine::builder(me())
        .proc_local_inline(true)
        .build()
        .unwrap()
}

fn local(code: Status) -> Notification {
    Notification::new(code, me(), DataRange::PROC_LOCAL)
}

/// A handler that sends the thread it ran on (and its name), then completes.
fn reporting(tx: mpsc::Sender<(ThreadId, Option<String>)>) -> impl Fn(Invocation) + Send + Sync {
    let tx = Mutex::new(tx);
    move |inv: Invocation| {
        let t = thread::current();
        let _ = tx
            .lock()
            .unwrap()
            .send((t.id(), t.name().map(str::to_owned)));
        inv.complete(Status::SUCCESS, vec![]);
    }
}

#[test]
fn an_inline_proc_local_notify_enters_the_handler_in_the_notifying_thread_before_it_returns() {
    let e = inline_engine();
    let (tx, rx) = mpsc::channel();
    e.register(Registration::new(&[A], reporting(tx))).unwrap();
    e.notify(local(A)).unwrap();
    // Already there: the handler ran before notify returned.
    let (id, _) = rx
        .try_recv()
        .expect("the handler ran before notify returned");
    assert_eq!(id, thread::current().id());
}

#[test]
fn turned_off_the_handlers_run_on_the_progress_thread() {
    let e = Engine::builder(me())
        .proc_local_inline(false)
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    e.register(Registration::new(&[A], reporting(tx))).unwrap();
    e.notify(local(A)).unwrap();
    let (id, name) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_ne!(id, thread::current().id());
    assert_eq!(name.as_deref(), Some("fastpmix-progress"));
}

/// An event queued before (here: one whose handler the progress thread is
/// still calling) goes first: the later notify queues behind it instead of
/// overtaking it in its own thread.
#[test]
fn an_inline_notify_waits_behind_a_chain_the_progress_thread_is_running() {
    let e = inline_engine();
    let order = Arc::new(Mutex::new(Vec::new()));
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let o = order.clone();
    let entered_tx = Mutex::new(entered_tx);
    e.register(Registration::new(&[A], move |inv: Invocation| {
        entered_tx.lock().unwrap().send(()).unwrap();
        release_rx.lock().unwrap().recv().unwrap();
        o.lock().unwrap().push(("a", thread::current().id()));
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    let o = order.clone();
    e.register(Registration::new(&[B], move |inv: Invocation| {
        o.lock().unwrap().push(("b", thread::current().id()));
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    // A from another thread: it runs inline there and blocks in its handler
    // (holding the dispatch right), or is queued for the progress thread.
    let e2 = e.clone();
    let notifier = thread::spawn(move || e2.notify(local(A)).unwrap());
    entered.recv_timeout(Duration::from_secs(10)).unwrap();
    e.notify(local(B)).unwrap();
    assert!(
        order.lock().unwrap().is_empty(),
        "B ran while A's handler was still being called"
    );
    release.send(()).unwrap();
    notifier.join().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while order.lock().unwrap().len() < 2 && std::time::Instant::now() < deadline {
        thread::sleep(Duration::from_millis(1));
    }
    let got = order.lock().unwrap().clone();
    assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), ["a", "b"]);
    assert_ne!(
        got[1].1,
        thread::current().id(),
        "B was queued, not run here"
    );
}

/// A handler that completes later, from another thread, hands the rest of
/// its chain to the progress thread; the notifier is not held up.
#[test]
fn a_chain_whose_handler_completes_later_goes_on_on_the_progress_thread() {
    let e = inline_engine();
    let (held_tx, held) = mpsc::channel::<Invocation>();
    let held_tx = Mutex::new(held_tx);
    e.register(
        Registration::new(&[A], move |inv: Invocation| {
            held_tx.lock().unwrap().send(inv).unwrap();
        })
        .info(fastpmix::Info::new(
            fastpmix::types::attrs::PMIX_EVENT_HDLR_FIRST,
            true,
        )),
    )
    .unwrap();
    let (tx, rx) = mpsc::channel();
    e.register(Registration::new(&[A], reporting(tx))).unwrap();
    e.notify(local(A)).unwrap();
    assert!(
        rx.try_recv().is_err(),
        "the second handler waits for the first"
    );
    let inv = held.recv_timeout(Duration::from_secs(10)).unwrap();
    thread::spawn(move || inv.complete(Status::SUCCESS, vec![]))
        .join()
        .unwrap();
    let (id, name) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_ne!(id, thread::current().id());
    assert_eq!(name.as_deref(), Some("fastpmix-progress"));
}

/// A handler running in the notifier's thread stands on the progress
/// thread's side: its blocking deregistration of itself completes at once
/// (it would otherwise wait for its own call to end), and it is never
/// called again.
#[test]
fn a_blocking_deregistration_inside_an_inline_handler_returns() {
    let e = inline_engine();
    let calls = Arc::new(Mutex::new(0));
    let me_ref = Arc::new(Mutex::new(None));
    let (c, r, e2) = (calls.clone(), me_ref.clone(), e.clone());
    let h = e
        .register(Registration::new(&[A], move |inv: Invocation| {
            *c.lock().unwrap() += 1;
            if let Some(h) = *r.lock().unwrap() {
                e2.deregister(h).unwrap();
            }
            inv.complete(Status::SUCCESS, vec![]);
        }))
        .unwrap();
    *me_ref.lock().unwrap() = Some(h);
    e.notify(local(A)).unwrap();
    e.notify(local(A)).unwrap();
    assert_eq!(*calls.lock().unwrap(), 1);
}

/// A notify from inside a handler (already standing in for the progress
/// thread) is queued, as on the progress thread: it runs after the current
/// chain, not nested inside it.
#[test]
fn a_notify_from_an_inline_handler_is_queued_behind_its_chain() {
    let e = inline_engine();
    let order = Arc::new(Mutex::new(Vec::new()));
    let (o, e2) = (order.clone(), e.clone());
    e.register(Registration::new(&[A], move |inv: Invocation| {
        e2.notify(local(B)).unwrap();
        o.lock().unwrap().push("a");
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    let o = order.clone();
    let (done_tx, done) = mpsc::channel();
    let done_tx = Mutex::new(done_tx);
    e.register(Registration::new(&[B], move |inv: Invocation| {
        o.lock().unwrap().push("b");
        done_tx.lock().unwrap().send(()).unwrap();
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    e.notify(local(A)).unwrap();
    done.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(*order.lock().unwrap(), ["a", "b"]);
}
