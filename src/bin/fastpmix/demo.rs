//! `fastpmix engine-demo`: the in-process event engine the way a hybrid MPI+OpenMP process uses it: an MPI
//! layer and an OpenMP runtime register ordered handlers, threads raise
//! PROC_LOCAL events, and the chain's order, results and termination verdict
//! are printed.

use fastpmix::event::{ChainOutcome, Engine, Invocation, Notification, Registration};
use fastpmix::types::attrs::*;
use fastpmix::{DataRange, Info, Proc, Status, Value};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn named(name: &str) -> Info {
    Info::new(PMIX_EVENT_HDLR_NAME, name)
}

/// Runs the in-process demo with `events` latency samples.
pub fn demo(events: usize) -> Result<(), Status> {
    let me = Proc::new("demo-job", 0)?;
    let engine = Engine::builder(me).build()?;
    let phase = Status::OPENMP_PARALLEL_ENTERED;
    let app_err = Status(Status::EXTERNAL_ERR_BASE.0 - 1);

    let say = |tag: &'static str, verdict: Option<(&'static str, bool)>| {
        move |mut inv: Invocation| {
            println!(
                "  handler {:<14} ref {:<2} sees {} prior result(s)",
                tag,
                inv.id(),
                inv.results().len()
            );
            let mut out = vec![Info::new(PMIX_MODEL_PHASE_NAME, tag)];
            if let Some((key, reqd)) = verdict {
                let k = if key == "no" {
                    PMIX_EVENT_NO_TERMINATION
                } else {
                    PMIX_EVENT_WANT_TERMINATION
                };
                out.push(if reqd {
                    Info::required(k, true)
                } else {
                    Info::new(k, true)
                });
            }
            // An OpenMP runtime drops the MPI layer's phase note: consolidation.
            if tag == "omp-runtime" {
                for r in inv
                    .results_mut()
                    .iter_mut()
                    .filter(|r| r.key == PMIX_MODEL_PHASE_NAME)
                {
                    r.mark_removed();
                }
            }
            inv.complete(Status::EVENT_PARTIAL_ACTION_TAKEN, out);
        }
    };
    let regs = [
        Registration::new(&[], say("abort-default", Some(("want", false))))
            .info(named("abort-default")),
        Registration::new(&[phase], say("mpi-layer", None)).info(named("mpi-layer")),
        Registration::new(&[phase], say("omp-runtime", Some(("no", true))))
            .info(named("omp-runtime"))
            .info(Info::new(PMIX_EVENT_HDLR_BEFORE, "mpi-layer")),
        Registration::new(&[phase, app_err], say("tool-first", None))
            .info(named("tool-first"))
            .info(Info::new(PMIX_EVENT_HDLR_FIRST, true)),
        Registration::new(&[], say("logger-last", None))
            .info(named("logger-last"))
            .info(Info::new(PMIX_EVENT_HDLR_LAST, true))
            .info(Info::new(
                PMIX_RANGE,
                Value::DataRange(DataRange::PROC_LOCAL),
            )),
    ];
    let refs = regs
        .into_iter()
        .map(|r| engine.register(r))
        .collect::<Result<Vec<_>, _>>()?;

    println!(
        "fastpmix event-chain demo: process {me}, {} handlers",
        engine.handler_count()
    );
    println!("event {phase} (PROC_LOCAL) from a worker thread:");
    let (tx, rx) = mpsc::channel::<ChainOutcome>();
    let e2 = engine.clone();
    std::thread::spawn(move || {
        let n = Notification::new(phase, me, DataRange::PROC_LOCAL)
            .info(Info::new(PMIX_MODEL_PHASE_TYPE, "parallel-region"));
        e2.notify_observed(n, move |o| {
            let _ = tx.send(o);
        })
    })
    .join()
    .map_err(|_| Status::ERROR)??;
    let o = rx
        .recv_timeout(Duration::from_secs(5))
        .map_err(|_| Status::ERR_TIMEOUT)?;
    println!(
        "chain ended after {} handlers, final status {:?}",
        o.handlers_run, o.final_status
    );
    println!("consolidated results:");
    for r in &o.results {
        println!(
            "  {:<20} = {:?}{}",
            r.key.as_str(),
            r.value,
            if r.is_required() { " (REQD)" } else { "" }
        );
    }
    println!("termination verdict: {:?}", o.termination);

    // Round trips through the progress thread: notify → handler entry, with
    // only the measuring handler registered.
    for r in refs {
        engine.deregister(r)?;
    }
    let mut lat = Vec::with_capacity(events);
    let (ptx, prx) = mpsc::sync_channel::<Instant>(1);
    let code = Status(4242);
    let h = engine.register(Registration::new(&[code], move |inv: Invocation| {
        let _ = ptx.send(Instant::now());
        inv.complete(Status::SUCCESS, vec![]);
    }))?;
    for _ in 0..events {
        let t0 = Instant::now();
        engine.notify(Notification::new(code, me, DataRange::PROC_LOCAL))?;
        let t1 = prx.recv().map_err(|_| Status::ERROR)?;
        lat.push(t1.duration_since(t0));
    }
    engine.deregister(h)?;
    lat.sort();
    let q = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize];
    println!(
        "PROC_LOCAL notify -> handler entry over {events} events: p50 {:?}  p90 {:?}  p99 {:?}  (see `cargo bench` for the measured table)",
        q(0.5),
        q(0.9),
        q(0.99)
    );
    engine.shutdown();
    Ok(())
}
