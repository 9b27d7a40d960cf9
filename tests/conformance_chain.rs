//! Conformance: running a chain (handler arguments, completions, results
//! consolidation, termination verdict), non-blocking semantics, deregistration
//! and threading. Standard "Event Notification" (PMIx_Register_event_handler,
//! PMIx_Deregister_event_handler, PMIx_Notify_event, pmix_notification_fn_t,
//! pmix_event_notification_cbfunc_fn_t) and RFC0018 "Aggregation of event
//! handler results". Each test is named after the rule it checks.

mod common;

use common::{engine, hold_progress, me, settle, wait_until, Recorder};
use fastpmix::event::{
    ChainOutcome, Engine, Invocation, Notification, Registration, Termination, UNNAMED_HANDLER_KEY,
};
use fastpmix::types::attrs::*;
use fastpmix::{DataRange, Info, Key, Proc, Status, Value};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const C: Status = Status(200);
const T: Duration = Duration::from_secs(10);

fn note(k: &str, v: impl Into<Value>) -> Info {
    Info::new(Key::new(k).unwrap(), v)
}

/// Notifies C (PROC_LOCAL) and returns how the chain ended.
fn run(e: &Engine, info: Vec<Info>) -> ChainOutcome {
    let (tx, rx) = mpsc::channel();
    let mut n = Notification::new(C, me(), DataRange::PROC_LOCAL);
    n.info = info;
    assert!(e.notify_observed(n, move |o| tx.send(o).unwrap()).unwrap());
    rx.recv_timeout(T).expect("chain ended")
}

/// A handler that completes with `status` and returns `ret`.
fn replying(status: Status, ret: Vec<Info>) -> impl Fn(Invocation) + Send + Sync {
    move |inv: Invocation| inv.complete(status, ret.clone())
}

#[test]
fn handler_receives_its_reference_code_source_info_and_prior_results() {
    let e = engine();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let src = Proc::new("other-job", 7).unwrap();
    let h1 = e
        .register(Registration::new(
            &[C],
            replying(Status::SUCCESS, vec![note("a", 1u32)]),
        ))
        .unwrap();
    let h2 = e
        .register(
            Registration::new(&[C], move |inv: Invocation| {
                s.lock().unwrap().push((
                    inv.id(),
                    inv.status(),
                    *inv.source(),
                    inv.info().to_vec(),
                    inv.results().to_vec(),
                ));
                inv.complete(Status::SUCCESS, vec![]);
            })
            .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
        )
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let n = Notification::new(C, src, DataRange::PROC_LOCAL).info(note("payload", "x"));
    e.notify_observed(n, move |o| tx.send(o).unwrap()).unwrap();
    rx.recv_timeout(T).unwrap();
    let seen = seen.lock().unwrap();
    let (id, code, source, info, results) = &seen[0];
    assert_eq!((*id, *code, *source), (h2, C, src));
    assert_eq!(info, &vec![note("payload", "x")]);
    // h1's status entry, then what h1 returned.
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].value, Value::Status(Status::SUCCESS));
    assert_eq!(results[1], note("a", 1u32));
    let _ = h1;
}

#[test]
fn first_handler_receives_no_prior_results() {
    let e = engine();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    e.register(Registration::new(&[C], move |inv: Invocation| {
        tx.lock().unwrap().send(inv.results().len()).unwrap();
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    run(&e, vec![]);
    assert_eq!(rx.recv_timeout(T).unwrap(), 0);
}

#[test]
fn chain_continues_only_when_the_completion_is_called() {
    let e = engine();
    let r = Recorder::default();
    let parked: Arc<Mutex<Option<Invocation>>> = Arc::default();
    let p = parked.clone();
    e.register(
        Registration::new(&[C], r.handler("second", Status::SUCCESS))
            .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        *p.lock().unwrap() = Some(inv);
    }))
    .unwrap();
    let (tx, rx) = mpsc::channel();
    e.notify_observed(
        Notification::new(C, me(), DataRange::PROC_LOCAL),
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    wait_until(|| parked.lock().unwrap().is_some());
    settle(&e);
    assert_eq!(r.len(), 0, "second handler ran before the first completed");
    assert!(rx.try_recv().is_err());
    let inv = parked.lock().unwrap().take().unwrap();
    inv.complete(Status::EVENT_PARTIAL_ACTION_TAKEN, vec![]);
    let o = rx.recv_timeout(T).unwrap();
    assert_eq!(r.tags(), ["second"]);
    assert_eq!(o.handlers_run, 2);
}

#[test]
fn completion_may_be_called_later_from_any_thread() {
    let e = engine();
    let r = Recorder::default();
    e.register(
        Registration::new(&[C], r.handler("after", Status::SUCCESS))
            .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
    e.register(Registration::new(&[C], |inv: Invocation| {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            inv.complete(Status::EVENT_ACTION_DEFERRED, vec![]);
        });
    }))
    .unwrap();
    let o = run(&e, vec![]);
    assert_eq!(o.handlers_run, 2);
    assert_eq!(r.tags(), ["after"]);
    assert_eq!(
        o.results[0].value,
        Value::Status(Status::EVENT_ACTION_DEFERRED)
    );
}

#[test]
fn handlers_run_on_the_progress_thread() {
    let e = engine();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let e2 = e.clone();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        tx.lock()
            .unwrap()
            .send((
                e2.on_progress_thread(),
                std::thread::current().name().map(str::to_owned),
            ))
            .unwrap();
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    run(&e, vec![]);
    let (on, name) = rx.recv_timeout(T).unwrap();
    assert!(on);
    assert_eq!(name.as_deref(), Some("fastpmix-progress"));
    assert!(!e.on_progress_thread());
}

#[test]
fn action_complete_ends_the_chain_and_the_last_handler_is_not_called() {
    let e = engine();
    let r = Recorder::default();
    e.register(
        Registration::new(&[], r.handler("last", Status::SUCCESS))
            .info(Info::new(PMIX_EVENT_HDLR_LAST, true)),
    )
    .unwrap();
    e.register(Registration::new(
        &[],
        r.handler("default", Status::SUCCESS),
    ))
    .unwrap();
    e.register(Registration::new(
        &[C],
        r.handler("stopper", Status::EVENT_ACTION_COMPLETE),
    ))
    .unwrap();
    let o = run(&e, vec![]);
    assert_eq!(r.tags(), ["stopper"]);
    assert_eq!(o.final_status, Some(Status::EVENT_ACTION_COMPLETE));
    assert_eq!(o.handlers_run, 1);
}

#[test]
fn no_action_partial_and_deferred_statuses_continue_the_chain() {
    let e = engine();
    let r = Recorder::default();
    for (i, s) in [
        Status::EVENT_NO_ACTION_TAKEN,
        Status::EVENT_PARTIAL_ACTION_TAKEN,
        Status::EVENT_ACTION_DEFERRED,
        Status::ERROR,
    ]
    .into_iter()
    .enumerate()
    {
        e.register(
            Registration::new(&[C], r.handler(&format!("h{i}"), s))
                .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
        )
        .unwrap();
    }
    let o = run(&e, vec![]);
    assert_eq!(r.tags(), ["h0", "h1", "h2", "h3"]);
    assert_eq!(o.final_status, Some(Status::ERROR));
}

#[test]
fn results_hold_one_entry_per_handler_keyed_by_name_with_the_status_it_returned() {
    // Not the event code (OpenPMIx 4.2 stores the event code: a bug we fix).
    let e = engine();
    e.register(
        Registration::new(&[C], replying(Status::EVENT_PARTIAL_ACTION_TAKEN, vec![]))
            .info(Info::new(PMIX_EVENT_HDLR_NAME, "alpha")),
    )
    .unwrap();
    e.register(
        Registration::new(&[C], replying(Status::EVENT_NO_ACTION_TAKEN, vec![]))
            .info(Info::new(PMIX_EVENT_HDLR_NAME, "beta"))
            .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
    let o = run(&e, vec![]);
    let got: Vec<_> = o
        .results
        .iter()
        .map(|i| (i.key.as_str().to_owned(), i.value.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "alpha".to_owned(),
                Value::Status(Status::EVENT_PARTIAL_ACTION_TAKEN)
            ),
            (
                "beta".to_owned(),
                Value::Status(Status::EVENT_NO_ACTION_TAKEN)
            ),
        ]
    );
}

#[test]
fn unnamed_handler_results_use_the_documented_key() {
    let e = engine();
    e.register(Registration::new(&[C], replying(Status::SUCCESS, vec![])))
        .unwrap();
    let o = run(&e, vec![]);
    assert_eq!(o.results[0].key.as_str(), UNNAMED_HANDLER_KEY);
    assert_eq!(UNNAMED_HANDLER_KEY, "UNKNOWN");
}

#[test]
fn returned_infos_are_appended_after_the_handlers_status_entry() {
    let e = engine();
    e.register(
        Registration::new(
            &[C],
            replying(Status::SUCCESS, vec![note("r1", 1u32), note("r2", "two")]),
        )
        .info(Info::new(PMIX_EVENT_HDLR_NAME, "h")),
    )
    .unwrap();
    let o = run(&e, vec![]);
    let keys: Vec<_> = o.results.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["h", "r1", "r2"]);
}

#[test]
fn a_handler_may_change_the_value_of_an_earlier_result() {
    let e = engine();
    e.register(Registration::new(
        &[C],
        replying(Status::SUCCESS, vec![note("counter", 1u32)]),
    ))
    .unwrap();
    e.register(
        Registration::new(&[C], |mut inv: Invocation| {
            for r in inv.results_mut().iter_mut().filter(|r| r.key == *"counter") {
                r.value = Value::Uint32(2);
            }
            inv.complete(Status::SUCCESS, vec![]);
        })
        .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
    let o = run(&e, vec![]);
    let counter: Vec<_> = o.results.iter().filter(|r| r.key == *"counter").collect();
    assert_eq!(counter.len(), 1);
    assert_eq!(counter[0].value, Value::Uint32(2));
}

#[test]
fn a_handler_may_mark_earlier_results_for_removal() {
    let e = engine();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    e.register(Registration::new(
        &[C],
        replying(
            Status::SUCCESS,
            vec![note("stale", true), note("keep", true)],
        ),
    ))
    .unwrap();
    e.register(
        Registration::new(&[C], |mut inv: Invocation| {
            inv.results_mut()
                .iter_mut()
                .filter(|r| r.key == *"stale")
                .for_each(Info::mark_removed);
            inv.complete(Status::SUCCESS, vec![]);
        })
        .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
    // The third handler sees the consolidated array, not the removed entry.
    e.register(
        Registration::new(&[C], move |inv: Invocation| {
            tx.lock()
                .unwrap()
                .send(
                    inv.results()
                        .iter()
                        .map(|i| i.key.as_str().to_owned())
                        .collect::<Vec<_>>(),
                )
                .unwrap();
            inv.complete(Status::SUCCESS, vec![]);
        })
        .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
    let o = run(&e, vec![]);
    assert_eq!(
        rx.recv_timeout(T).unwrap(),
        [UNNAMED_HANDLER_KEY, "keep", UNNAMED_HANDLER_KEY]
    );
    assert!(o.results.iter().all(|i| i.key != *"stale"));
}

fn opinion(e: &Engine, want: bool, reqd: bool) {
    let k = if want {
        PMIX_EVENT_WANT_TERMINATION
    } else {
        PMIX_EVENT_NO_TERMINATION
    };
    let i = if reqd {
        Info::required(k, true)
    } else {
        Info::new(k, true)
    };
    e.register(
        Registration::new(&[C], replying(Status::SUCCESS, vec![i]))
            .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
}

#[test]
fn termination_opinion_of_a_later_handler_overrides_an_earlier_one() {
    let e = engine();
    opinion(&e, true, false);
    opinion(&e, false, false);
    assert_eq!(run(&e, vec![]).termination, Termination::NotRequired);
    let e = engine();
    opinion(&e, false, false);
    opinion(&e, true, false);
    assert_eq!(run(&e, vec![]).termination, Termination::Wanted);
}

#[test]
fn termination_opinion_marked_required_cannot_be_overridden() {
    let e = engine();
    opinion(&e, true, true);
    opinion(&e, false, false);
    assert_eq!(run(&e, vec![]).termination, Termination::Wanted);
}

#[test]
fn termination_verdict_is_reported_to_the_generator() {
    let e = engine();
    assert_eq!(run(&e, vec![]).termination, Termination::Unspecified);
    opinion(&e, false, false);
    let o = run(&e, vec![]);
    assert_eq!(o.termination, Termination::NotRequired);
    assert!(o.results.iter().any(|i| i.key == PMIX_EVENT_NO_TERMINATION));
}

#[test]
fn return_object_comes_back_to_the_handler_on_every_call() {
    let e = engine();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    e.register(
        Registration::new(&[C], move |inv: Invocation| {
            tx.lock()
                .unwrap()
                .send((inv.return_object().cloned(), inv.handler_info()))
                .unwrap();
            inv.complete(Status::SUCCESS, vec![]);
        })
        .info(Info::new(PMIX_EVENT_RETURN_OBJECT, Value::Pointer(0xbeef)))
        .info(Info::new(PMIX_EVENT_HDLR_NAME, "obj")),
    )
    .unwrap();
    for _ in 0..3 {
        run(&e, vec![]);
        let (obj, hinfo) = rx.recv_timeout(T).unwrap();
        assert_eq!(obj, Some(Value::Pointer(0xbeef)));
        assert!(hinfo.contains(&Info::new(PMIX_EVENT_RETURN_OBJECT, Value::Pointer(0xbeef))));
        assert!(hinfo.contains(&Info::new(PMIX_EVENT_HDLR_NAME, "obj")));
    }
}

#[test]
fn no_event_reaches_a_handler_after_its_deregistration_completed_even_in_a_running_chain() {
    let e = engine();
    let r = Recorder::default();
    let parked: Arc<Mutex<Option<Invocation>>> = Arc::default();
    let p = parked.clone();
    let victim = e
        .register(
            Registration::new(&[C], r.handler("victim", Status::SUCCESS))
                .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
        )
        .unwrap();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        *p.lock().unwrap() = Some(inv)
    }))
    .unwrap();
    let (tx, rx) = mpsc::channel();
    e.notify_observed(
        Notification::new(C, me(), DataRange::PROC_LOCAL),
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    wait_until(|| parked.lock().unwrap().is_some());
    // The chain already contains `victim`; deregistration must still win.
    e.deregister(victim).unwrap();
    parked
        .lock()
        .unwrap()
        .take()
        .unwrap()
        .complete(Status::SUCCESS, vec![]);
    let o = rx.recv_timeout(T).unwrap();
    assert_eq!(r.len(), 0);
    assert_eq!(o.handlers_run, 1);
}

#[test]
fn nb_deregistration_completes_with_its_callback_and_no_event_follows() {
    let e = engine();
    let r = Recorder::default();
    let h = e
        .register(Registration::new(&[C], r.handler("h", Status::SUCCESS)))
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let gate = hold_progress(&e);
    assert_eq!(
        e.deregister_nb(h, move |s| tx.send(s).unwrap()),
        Status::SUCCESS
    );
    // Not before the call returned: the progress thread is held.
    assert!(rx.try_recv().is_err());
    drop(gate);
    assert_eq!(rx.recv_timeout(T).unwrap(), Status::SUCCESS);
    run(&e, vec![]);
    assert_eq!(r.len(), 0);
}

#[test]
fn blocking_registration_returns_the_reference() {
    let e = engine();
    let r = Recorder::default();
    let h = r.register(&e, "h", &[C], vec![]).unwrap();
    let o = run(&e, vec![]);
    assert_eq!(o.handlers_run, 1);
    assert!(h.0 >= 1);
    // The reference is the one the handler sees.
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let h2 = e
        .register(Registration::new(&[Status(201)], move |inv: Invocation| {
            tx.lock().unwrap().send(inv.id()).unwrap();
            inv.complete(Status::SUCCESS, vec![]);
        }))
        .unwrap();
    e.notify(Notification::new(Status(201), me(), DataRange::PROC_LOCAL))
        .unwrap();
    assert_eq!(rx.recv_timeout(T).unwrap(), h2);
}

#[test]
fn nb_registration_callback_never_runs_before_the_call_returns() {
    let e = engine();
    let called = Arc::new(Mutex::new(None));
    let c = called.clone();
    let gate = hold_progress(&e);
    let s = e.register_nb(
        Registration::new(&[C], replying(Status::SUCCESS, vec![])),
        move |st, r| {
            *c.lock().unwrap() = Some((st, r));
        },
    );
    assert_eq!(s, Status::SUCCESS);
    assert!(called.lock().unwrap().is_none());
    drop(gate);
    wait_until(|| called.lock().unwrap().is_some());
    let (st, r) = called.lock().unwrap().unwrap();
    assert_eq!(st, Status::SUCCESS);
    assert!(r.0 >= 1);
}

#[test]
fn no_event_reaches_a_handler_before_its_registration_callback_ran() {
    let e = engine();
    let log = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let (l1, l2) = (log.clone(), log.clone());
    let gate = hold_progress(&e);
    // Queued before the registration: raised before it completed.
    e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
        .unwrap();
    let s = e.register_nb(
        Registration::new(&[C], move |inv: Invocation| {
            l1.lock().unwrap().push("event");
            inv.complete(Status::SUCCESS, vec![]);
        }),
        move |_, _| l2.lock().unwrap().push("registered"),
    );
    assert_eq!(s, Status::SUCCESS);
    // Queued after: may be delivered, but only after the callback.
    e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
        .unwrap();
    drop(gate);
    wait_until(|| log.lock().unwrap().len() >= 2);
    settle(&e);
    assert_eq!(*log.lock().unwrap(), ["registered", "event"]);
}

#[test]
fn nb_registration_error_is_returned_and_the_callback_never_runs() {
    let e = engine();
    let called = Arc::new(Mutex::new(false));
    let c = called.clone();
    let s = e.register_nb(
        Registration::new(&[C], replying(Status::SUCCESS, vec![]))
            .info(Info::new(PMIX_EVENT_HDLR_BEFORE, "nobody")),
        move |_, _| *c.lock().unwrap() = true,
    );
    assert_eq!(s, Status::ERR_EVENT_REGISTRATION);
    settle(&e);
    assert!(!*called.lock().unwrap());
}

#[test]
fn nb_notify_returns_success_and_calls_back_after_returning() {
    let e = engine();
    let (tx, rx) = mpsc::channel();
    let gate = hold_progress(&e);
    let s = e.notify_nb(
        Notification::new(C, me(), DataRange::PROC_LOCAL),
        move |st| tx.send(st).unwrap(),
    );
    assert_eq!(s, Status::SUCCESS);
    assert!(rx.try_recv().is_err());
    drop(gate);
    assert_eq!(rx.recv_timeout(T).unwrap(), Status::SUCCESS);
}

#[test]
fn nb_deregistration_from_a_handler_completes_at_once_with_operation_succeeded() {
    let e = engine();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let e2 = e.clone();
    let victim = e
        .register(Registration::new(
            &[Status(202)],
            replying(Status::SUCCESS, vec![]),
        ))
        .unwrap();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        let s = e2.deregister_nb(victim, |_| panic!("callback must not run"));
        tx.lock().unwrap().send(s).unwrap();
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    run(&e, vec![]);
    assert_eq!(rx.recv_timeout(T).unwrap(), Status::OPERATION_SUCCEEDED);
    settle(&e);
    assert_eq!(e.handler_count(), 1);
}

#[test]
fn blocking_calls_from_inside_a_handler_do_not_deadlock() {
    let e = engine();
    let r = Recorder::default();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let e2 = e.clone();
    let r2 = r.clone();
    let other = e
        .register(Registration::new(
            &[Status(203)],
            replying(Status::SUCCESS, vec![]),
        ))
        .unwrap();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        let me_ref = inv.id();
        let reg = r2.register(&e2, "late", &[Status(204)], vec![]);
        let dereg_other = e2.deregister(other);
        let notify = e2.notify(Notification::new(Status(204), me(), DataRange::PROC_LOCAL));
        let dereg_self = e2.deregister(me_ref);
        tx.lock()
            .unwrap()
            .send((reg.is_ok(), dereg_other, notify, dereg_self))
            .unwrap();
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL))
        .unwrap();
    let (reg, d1, n, d2) = rx.recv_timeout(T).expect("handler finished: no deadlock");
    assert!(reg);
    assert_eq!((d1, n, d2), (Ok(()), Ok(()), Ok(())));
    // The event it raised reached the handler it registered.
    r.wait_for(1);
    assert_eq!(r.tags(), ["late"]);
}

#[test]
fn several_chains_may_be_in_flight_at_once() {
    let e = engine();
    let parked: Arc<Mutex<Vec<Invocation>>> = Arc::default();
    let p = parked.clone();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        p.lock().unwrap().push(inv)
    }))
    .unwrap();
    let (tx, rx) = mpsc::channel();
    for _ in 0..3 {
        let tx = tx.clone();
        e.notify_observed(
            Notification::new(C, me(), DataRange::PROC_LOCAL),
            move |o| tx.send(o.handlers_run).unwrap(),
        )
        .unwrap();
    }
    // All three started although none completed.
    wait_until(|| parked.lock().unwrap().len() == 3);
    let o = run_other(&e);
    assert_eq!(o, 0);
    for inv in parked.lock().unwrap().drain(..) {
        inv.complete(Status::SUCCESS, vec![]);
    }
    for _ in 0..3 {
        assert_eq!(rx.recv_timeout(T).unwrap(), 1);
    }
}

fn run_other(e: &Engine) -> usize {
    let (tx, rx) = mpsc::channel();
    e.notify_observed(
        Notification::new(Status(299), me(), DataRange::PROC_LOCAL),
        move |o| tx.send(o.handlers_run).unwrap(),
    )
    .unwrap();
    rx.recv_timeout(T).unwrap()
}

#[test]
fn events_from_one_source_are_started_in_the_order_received() {
    let e = engine();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        if let Some(Value::Uint32(n)) = inv.info().first().map(|i| i.value.clone()) {
            s.lock().unwrap().push(n);
        }
        // Defer some completions so chains overlap.
        if inv
            .info()
            .first()
            .map(|i| i.value == Value::Uint32(0))
            .unwrap_or(false)
        {
            std::thread::spawn(move || inv.complete(Status::SUCCESS, vec![]));
        } else {
            inv.complete(Status::SUCCESS, vec![]);
        }
    }))
    .unwrap();
    // Under miri every step is interpreted: 200 events keep chains
    // overlapping (every one with seq 0 is completed from another thread)
    // in seconds instead of a quarter of an hour.
    let total: u32 = if cfg!(miri) { 200 } else { 2000 };
    for n in 0..total {
        e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL).info(note("seq", n)))
            .unwrap();
    }
    wait_until(|| seen.lock().unwrap().len() == total as usize);
    let v = seen.lock().unwrap();
    assert!(v.windows(2).all(|w| w[0] < w[1]), "out of order");
}

#[test]
fn a_handler_that_drops_its_completion_does_not_wedge_the_chain() {
    let e = engine();
    let r = Recorder::default();
    e.register(
        Registration::new(&[C], r.handler("next", Status::SUCCESS))
            .info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
    )
    .unwrap();
    e.register(Registration::new(&[C], |inv: Invocation| drop(inv)))
        .unwrap();
    let o = run(&e, vec![]);
    assert_eq!(r.tags(), ["next"]);
    assert_eq!(o.results[0].value, Value::Status(Status::ERROR));
}

#[test]
fn shutdown_releases_handlers_even_when_they_capture_the_engine() {
    let e = engine();
    let token = Arc::new(());
    let weak = Arc::downgrade(&token);
    let e2 = e.clone();
    e.register(Registration::new(&[C], move |inv: Invocation| {
        let _keep = (&token, &e2); // a cycle: the engine holds a handler holding the engine
        inv.complete(Status::SUCCESS, vec![]);
    }))
    .unwrap();
    run(&e, vec![]);
    e.shutdown();
    assert!(weak.upgrade().is_none(), "handler leaked after shutdown");
    assert_eq!(
        e.notify(Notification::new(C, me(), DataRange::PROC_LOCAL)),
        Err(Status::ERR_INIT)
    );
}

/// `PMIX_EVENT_ONESHOT` (OpenPMIx's "pmix.evone"): the handler is called for
/// the first event it takes and is then gone: not called again, its
/// reference unknown, its name free. The other handlers of the chain go on.
#[test]
fn a_oneshot_handler_runs_once_and_is_then_deregistered() {
    let e = engine();
    let calls = Arc::new(Mutex::new(0u32));
    let c = calls.clone();
    let once = e
        .register(
            Registration::new(&[C], move |inv: Invocation| {
                *c.lock().unwrap() += 1;
                inv.complete(Status::SUCCESS, vec![])
            })
            .info(Info::new(PMIX_EVENT_HDLR_NAME, "once"))
            .info(Info::new(PMIX_EVENT_ONESHOT, true)),
        )
        .unwrap();
    e.register(Registration::new(&[C], replying(Status::SUCCESS, vec![])))
        .unwrap();
    let first = run(&e, vec![]);
    assert_eq!(first.results.len(), 2, "both ran: {:?}", first.results);
    let second = run(&e, vec![]);
    assert_eq!(
        second.results.len(),
        1,
        "the other alone: {:?}",
        second.results
    );
    assert_eq!(*calls.lock().unwrap(), 1);
    assert_eq!(e.deregister(once), Err(Status::ERR_BAD_PARAM));
    e.register(
        Registration::new(&[C], replying(Status::SUCCESS, vec![]))
            .info(Info::new(PMIX_EVENT_HDLR_NAME, "once")),
    )
    .expect("the name is free again");
}
