//! `fastpmix demo-client`: one process of the README's demo job, run under
//! `fastpmix run -n N`. Each process registers ordered handlers, the ranks
//! find each other by exchanging events, rank 0 announces a stage, the last
//! rank crashes, and the survivors handle the launcher's
//! `PMIX_ERR_PROC_ABORTED` and leave cleanly.

use fastpmix::client::Client;
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::types::attrs::*;
use fastpmix::{DataRange, Info, Key, Status, Value};
use std::collections::BTreeSet;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Application event codes (below `PMIX_EXTERNAL_ERR_BASE`).
const HELLO: Status = Status(-3100);
const STAGE_DONE: Status = Status(-3101);
const WHO: Key = Key::from_static("demo.rank");

fn say(rank: u32, msg: impl AsRef<str>) {
    println!("rank {rank}: {}", msg.as_ref());
}

/// Runs one demo process; returns the exit code.
pub fn main() -> Result<i32, Status> {
    let c = Client::init()?;
    let me = c.me();
    let rank = me.rank.0;
    let size = c
        .job_info()
        .iter()
        .find(|i| i.key.as_str() == "pmix.job.size")
        .and_then(|i| i.value.as_integer())
        .unwrap_or(1) as u32;
    let (tx, rx) = mpsc::channel::<&'static str>();

    // Two ordered handlers for the same code: the "MPI layer" first, the
    // application last, which sees the layer's result.
    c.register(
        Registration::new(&[STAGE_DONE], move |inv: Invocation| {
            say(
                rank,
                format!(
                    "  [1st: mpi-layer] stage event from rank {}",
                    inv.source().rank.0
                ),
            );
            inv.complete(
                Status::EVENT_PARTIAL_ACTION_TAKEN,
                vec![Info::new(Key::from_static("demo.layer"), "checkpointed")],
            );
        })
        .info(Info::new(PMIX_EVENT_HDLR_NAME, "mpi-layer"))
        .info(Info::new(PMIX_EVENT_HDLR_FIRST, true)),
    )?;
    {
        let tx = tx.clone();
        c.register(
            Registration::new(&[STAGE_DONE], move |inv: Invocation| {
                let prior: Vec<String> = inv
                    .results()
                    .iter()
                    .map(|r| format!("{}={:?}", r.key.as_str(), r.value))
                    .collect();
                say(
                    rank,
                    format!("  [last: app] stage event; earlier handlers said {prior:?}"),
                );
                inv.complete(Status::EVENT_ACTION_COMPLETE, vec![]);
                let _ = tx.send("stage");
            })
            .info(Info::new(PMIX_EVENT_HDLR_NAME, "app"))
            .info(Info::new(PMIX_EVENT_HDLR_LAST, true)),
        )?;
    }
    // The fault: the launcher reports a peer's abnormal death.
    {
        let tx = tx.clone();
        c.register(Registration::new(&[Status::ERR_PROC_ABORTED], move |inv: Invocation| {
            let who = inv
                .info()
                .iter()
                .find(|i| i.key == PMIX_EVENT_AFFECTED_PROC)
                .and_then(|i| i.value.as_procs())
                .and_then(|v| v.first().copied());
            let timeout = inv
                .info()
                .iter()
                .find(|i| i.key == PMIX_EVENT_ACTION_TIMEOUT)
                .and_then(|i| i.value.as_integer());
            let victim = who.map_or_else(|| "?".into(), |p| p.rank.0.to_string());
            match timeout {
                Some(t) => say(rank, format!("rank {victim} aborted; the launcher ends the job in {t} s: finalizing cleanly now")),
                None => say(rank, format!("rank {victim} aborted; the job keeps running")),
            }
            inv.complete(Status::EVENT_ACTION_COMPLETE, vec![]);
            let _ = tx.send("aborted");
        }))?;
    }

    // Peer discovery last: peers answer only once every handler here is
    // registered, so rank 0's stage event (sent after all answered) finds
    // them in place. Peers found so far (HELLO events from other ranks):
    let peers = Arc::new(Mutex::new(BTreeSet::new()));
    {
        let (peers, c2, tx) = (peers.clone(), c.clone(), tx.clone());
        c.register(
            Registration::new(&[HELLO], move |inv: Invocation| {
                let from = inv.source().rank.0;
                // Our own hello reaches our handlers too (local chain).
                let fresh = from != rank && peers.lock().unwrap().insert(from);
                let all = peers.lock().unwrap().len() as u32 + 1 == size;
                inv.complete(Status::SUCCESS, vec![]);
                if fresh {
                    // Answer a newcomer once, so a peer that connected
                    // after our earlier hellos still hears from us.
                    let _ = c2.notify(hello(rank));
                }
                if fresh && all {
                    let _ = tx.send("peers");
                }
            })
            .info(Info::new(PMIX_EVENT_HDLR_NAME, "peer-discovery")),
        )?;
    }

    say(
        rank,
        format!("connected as {me}, {size} process(es) in the job, 4 handlers registered"),
    );
    // Find the peers: hello now and every 100 ms until everyone answered.
    let mut seen = Signals {
        rx,
        got: BTreeSet::new(),
    };
    let start = Instant::now();
    let _ = c.notify(hello(rank));
    if size > 1 {
        while !seen.wait("peers", Duration::from_millis(100)) {
            if start.elapsed() > Duration::from_secs(20) {
                say(rank, "peers did not answer within 20 s");
                return Ok(1);
            }
            let _ = c.notify(hello(rank));
        }
    }
    say(rank, format!("found all {} peer(s)", size - 1));
    if rank == 0 {
        say(rank, "announcing stage 1 to the namespace");
        c.notify(
            Notification::new(STAGE_DONE, me, DataRange::NAMESPACE)
                .info(Info::new(WHO, Value::Uint32(rank))),
        )?;
    }
    if !seen.wait("stage", Duration::from_secs(20)) {
        return Err(Status::ERR_TIMEOUT);
    }
    if size > 1 && rank == size - 1 {
        say(rank, "simulating a crash (abort) before finalize");
        std::process::abort();
    }
    if size > 1 && !seen.wait("aborted", Duration::from_secs(20)) {
        return Err(Status::ERR_TIMEOUT);
    }
    c.finalize()?;
    say(rank, "finalized");
    Ok(0)
}

fn hello(rank: u32) -> Notification {
    Notification::new(HELLO, fastpmix::Proc::SMS, DataRange::NAMESPACE)
        .info(Info::new(WHO, Value::Uint32(rank)))
}

/// What the handlers have signalled so far (a signal is never lost to a
/// wait for another one).
struct Signals {
    rx: mpsc::Receiver<&'static str>,
    got: BTreeSet<&'static str>,
}

impl Signals {
    fn wait(&mut self, what: &str, t: Duration) -> bool {
        let deadline = Instant::now() + t;
        while !self.got.contains(what) {
            match self
                .rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(w) => {
                    self.got.insert(w);
                }
                Err(_) => return false,
            }
        }
        true
    }
}
