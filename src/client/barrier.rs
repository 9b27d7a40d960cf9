//! Fences over every process of this namespace when all of them run on
//! this node: through the namespace's barrier in shared memory
//! (`crate::barrier`), with no round trip. The last process to enter
//! wakes the others with one `FUTEX_WAKE`; each then waits, usually not
//! at all, until the server has stored what every participant committed
//! before entering (what the server's fence guarantees by handling a
//! connection's requests in order).
//!
//! Which fences: those whose participants are this namespace whole (no
//! process list, a wildcard rank, or every rank listed), decided from the
//! arguments alone, so every participant of one fence takes the same path;
//! and only while the barrier is open (the server closes it when a
//! participant leaves: later fences then take the server's path, whose
//! rules decide). A process enters one instance at a time, in the order
//! of its calls (a ticket each): a `fence_nb` followed by a fence enters
//! the next instance only after its first one ended, as the server's
//! fence queues a second entry. A blocking fence runs in the caller's
//! thread; a `fence_nb` on the library's fence thread (started at the
//! first one), which hands its outcome to the callback thread.

use super::callbacks;
use super::{Client, Inner};
use crate::barrier::{self, outcome, Area, Entry};
use crate::ring::SpinPolicy;
use crate::sync::lock;
use crate::types::{Proc, Rank, Status};
use std::sync::{mpsc, Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// A fence's completion (the non-blocking caller's callback).
type Done = Box<dyn FnOnce(Status) + Send>;

/// A `fence_nb` waiting for its turn on the fence thread.
struct Job {
    ticket: u64,
    timeout: Option<Duration>,
    procs: Vec<Proc>,
    info: Vec<crate::types::Info>,
    done: Done,
}

/// This process's side of the namespace's barrier.
pub(super) struct FenceBarrier {
    /// `None`: the namespace has none. `Err`: it has one this process
    /// cannot map (its whole-namespace fences fail rather than take
    /// another path than their peers).
    area: Option<Result<Arc<Area>, String>>,
    /// Tickets: (next to give, now serving).
    order: Mutex<(u64, u64)>,
    turn: Condvar,
    /// The fence thread's queue, once started.
    thread: Mutex<Option<mpsc::Sender<Job>>>,
    /// Whether a wait may poll before it sleeps (see [`FenceBarrier::spin`]).
    /// It also holds the machine's online CPUs, read once: glibc's
    /// `sysconf` reads a file in /sys for them each time (three system
    /// calls in every fence of every participant).
    spin: Mutex<SpinPolicy>,
}

/// How long a participant polls before it sleeps: about what a sleep and a
/// wake-up of a halted CPU cost (the ring's readers poll as long).
const SPIN: Duration = Duration::from_micros(20);

impl FenceBarrier {
    /// Opens the barrier of the namespace whose ring is `segment`.
    pub(super) fn open(segment: &str) -> FenceBarrier {
        let area = match Area::open(segment) {
            Ok(a) => a.map(|a| Ok(Arc::new(a))),
            Err(why) => Some(Err(why)),
        };
        FenceBarrier {
            area,
            order: Mutex::new((0, 0)),
            turn: Condvar::new(),
            thread: Mutex::new(None),
            spin: Mutex::new(SpinPolicy::new(SPIN)),
        }
    }

    /// The polling budget of this fence's waits: [`SPIN`] while every
    /// participant can have a CPU of its own and the machine is not
    /// oversubscribed (`SpinPolicy`), else zero. Polling lets a
    /// participant see the last entry (or the server's store of the
    /// commits) without being woken; with more participants than CPUs
    /// some of them sleep anyway, and a poller only delays them.
    fn spin(&self, participants: u32) -> Duration {
        let mut policy = lock(&self.spin);
        if participants > policy.cores() {
            return Duration::ZERO;
        }
        policy.budget()
    }

    /// The mapped barrier (the control thread wakes its sleepers when the
    /// server is lost).
    pub(super) fn area(&self) -> Option<Arc<Area>> {
        self.area.as_ref().and_then(|a| a.as_ref().ok()).cloned()
    }

    fn ticket(&self) -> u64 {
        let mut o = lock(&self.order);
        o.0 += 1;
        o.0 - 1
    }

    fn wait_turn(&self, ticket: u64) {
        let mut o = lock(&self.order);
        while o.1 != ticket {
            o = self.turn.wait(o).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn next_turn(&self) {
        lock(&self.order).1 += 1;
        self.turn.notify_all();
    }
}

/// Whether `procs` names this namespace whole (`size` ranks).
fn whole_namespace(me: &Proc, size: u32, procs: &[Proc]) -> bool {
    if procs.is_empty() {
        return true;
    }
    if procs.iter().any(|p| p.nspace != me.nspace) {
        return false;
    }
    if procs.iter().any(|p| p.rank == Rank::WILDCARD) {
        return true;
    }
    let mut ranks: Vec<u32> = procs.iter().map(|p| p.rank.0).collect();
    ranks.sort_unstable();
    ranks.dedup();
    ranks.len() == size as usize && ranks.iter().copied().eq(0..size)
}

/// One fence through the barrier: `None` when the barrier is closed
/// (take the server's path).
fn run(inner: &Inner, a: &Area, timeout: Option<Duration>) -> Option<Status> {
    let sent = lock(&inner.kv).commits();
    let deadline = timeout.map(|t| Instant::now() + t);
    let give_up = || inner.lost.is_set() || inner.stop.is_set();
    let spin = inner.barrier.spin(crate::barrier::BarrierMemory::slots(a));
    let code = match barrier::enter(a, inner.me.rank.0, sent) {
        Entry::Closed => return None,
        Entry::Last(g) => {
            // The others sleep until everything they may read is stored:
            // one wake-up each, not one for the barrier and one for the
            // commits.
            let code = if barrier::wait_applied(a, deadline, &give_up, spin) {
                outcome::SUCCESS
            } else if give_up() {
                outcome::LOST
            } else {
                outcome::TIMEOUT
            };
            let code = barrier::complete(a, g, code);
            if give_up() {
                None
            } else {
                Some(code)
            }
        }
        Entry::Waiting(g) => barrier::wait(a, g, deadline, &give_up, spin),
    };
    Some(match code {
        Some(outcome::SUCCESS) => {
            if barrier::wait_applied(a, deadline, &give_up, spin) {
                Status::SUCCESS
            } else if give_up() {
                Status::ERR_UNREACH
            } else {
                Status::ERR_TIMEOUT
            }
        }
        Some(outcome::TIMEOUT) => Status::ERR_TIMEOUT,
        Some(_) => Status::ERR_LOST_CONNECTION,
        None => Status::ERR_UNREACH,
    })
}

/// Why the barrier cannot serve a fence it should: said once per call.
fn unmappable(why: &str) -> Status {
    eprintln!(
        "fastpmix: PMIx_Fence over the whole namespace refused: its barrier in shared memory cannot be mapped ({why}); the other processes fence through it"
    );
    Status::ERROR
}

impl Client {
    /// The barrier and the participant check: `Some(area)` when this
    /// fence goes through it.
    fn barrier_for(&self, procs: &[Proc]) -> Option<Result<Arc<Area>, Status>> {
        let b = self.inner.barrier.area.as_ref()?;
        let size = match b {
            Ok(a) => crate::barrier::BarrierMemory::slots(&**a),
            Err(why) => return Some(Err(unmappable(why))),
        };
        // A rank beyond the barrier's (registered past the job's size)
        // takes the server's fence, as the others do once the server
        // closed the barrier on its registration.
        if self.inner.me.rank.0 >= size || !whole_namespace(&self.inner.me, size, procs) {
            return None;
        }
        b.as_ref().ok().cloned().map(Ok)
    }

    /// A blocking fence through the barrier, if it takes it (`None`: take
    /// the server's path).
    pub(super) fn fence_barrier(
        &self,
        procs: &[Proc],
        timeout: Option<Duration>,
    ) -> Option<Result<(), Status>> {
        let a = match self.barrier_for(procs)? {
            Ok(a) => a,
            Err(s) => return Some(Err(s)),
        };
        let fb = &self.inner.barrier;
        let t = fb.ticket();
        fb.wait_turn(t);
        let got = run(&self.inner, &a, timeout);
        fb.next_turn();
        got.map(|s| s.into_result())
    }

    /// `fence_nb` through the barrier, if it takes it (`None`: take the
    /// server's path). `Some(SUCCESS)`: `done` will run on the callback
    /// thread.
    pub(super) fn fence_nb_barrier(
        &self,
        procs: &[Proc],
        info: &[crate::types::Info],
        timeout: Option<Duration>,
        done: Done,
    ) -> Result<Status, Done> {
        let a = match self.barrier_for(procs) {
            None => return Err(done),
            Some(Ok(a)) => a,
            Some(Err(s)) => return Ok(s),
        };
        let fb = &self.inner.barrier;
        let mut th = lock(&fb.thread);
        if th.is_none() {
            match spawn_thread(Arc::downgrade(&self.inner), a) {
                Ok(tx) => *th = Some(tx),
                Err(_) => return Ok(Status::ERR_OUT_OF_RESOURCE),
            }
        }
        // Ticket and queue under one lock: the thread serves them in order.
        let job = Job {
            ticket: fb.ticket(),
            timeout,
            procs: procs.to_vec(),
            info: info.to_vec(),
            done,
        };
        match th.as_ref().map(|tx| tx.send(job)) {
            Some(Ok(())) => Ok(Status::SUCCESS),
            _ => Ok(Status::ERR_OUT_OF_RESOURCE),
        }
    }
}

/// Starts the fence thread: it runs each queued `fence_nb` in its turn.
fn spawn_thread(inner: Weak<Inner>, a: Arc<Area>) -> std::io::Result<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("fastpmix-fence".into())
        .spawn(move || {
            for job in rx {
                let Some(inner) = inner.upgrade() else { return };
                inner.barrier.wait_turn(job.ticket);
                let got = run(&inner, &a, job.timeout);
                inner.barrier.next_turn();
                let done = job.done;
                let s = match got {
                    Some(s) => s,
                    // Closed meanwhile: the server's fence, as the others.
                    None => {
                        let c = Client { inner };
                        match c.fence_nb_server(&job.procs, &job.info, done) {
                            Ok(()) => continue,
                            Err((s, done)) => {
                                let _ = callbacks::post(Box::new(move || done(s)));
                                continue;
                            }
                        }
                    }
                };
                drop(inner);
                if let Err(job) = callbacks::post(Box::new(move || done(s))) {
                    job();
                }
            }
        })?;
    Ok(tx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With more participants than CPUs some of them sleep in every fence:
    /// a poller would only keep a CPU from the one it waits for.
    #[test]
    fn a_fence_of_more_participants_than_cpus_never_polls() {
        let fb = FenceBarrier::open("fastpmix-unit-no-such-barrier");
        assert!(fb.area.is_none());
        let cpus = crate::ring::online_cpus();
        assert_eq!(lock(&fb.spin).cores(), cpus);
        assert_eq!(fb.spin(cpus + 1), Duration::ZERO);
        assert_eq!(fb.spin(u32::MAX), Duration::ZERO);
        assert!(fb.spin(1) <= SPIN);
    }
}
