//! The library's one callback thread (`fastpmix-cb`): every callback that
//! must not run on the caller's thread runs here — the completions of the
//! client's numbered requests (job management, fence, query: posted by the
//! control thread when their `Result` arrives, or when the server is lost)
//! and the C ABI's deferred callbacks (`capi::defer`: `PMIx_Get_nb`,
//! `PMIx_Notify_event`, `PMIx_Deregister_event_handler`, the server's
//! operation callbacks).
//!
//! The order it guarantees:
//! - **FIFO**: jobs run one at a time, in the order they were posted,
//!   whatever their kind; a C program cannot see one class of callback
//!   overtake another that was posted first.
//! - **After return**: a deferred job ([`defer`]) runs only once its
//!   [`Gate`] was dropped, which the exported function that posted it does
//!   when it returns. Until then the jobs posted after it wait too (that is
//!   what FIFO costs; the gate is held only for the rest of one call).
//!
//! A panicking job ends itself, never the thread. The thread is started
//! on first use (again in a process forked after it started: a child
//! inherits no threads) and lives as long as the process. If it cannot be
//! started, [`post`] hands the job back and [`defer`] runs its job on the
//! caller's thread when the gate is dropped: still after the call's own
//! work, never a panic at the C boundary. `Client::init` starts it up
//! front, so a client that connected never takes that path.

use crate::sync::{lock, ForkWatch};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::ThreadId;

/// A callback, with everything it needs.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// The running thread: its queue, its id, and the process that started it.
struct Running {
    tx: mpsc::Sender<Job>,
    thread: ThreadId,
    /// Started in this process, not in a parent it was forked from.
    forks: ForkWatch,
}

static THREAD: Mutex<Option<Running>> = Mutex::new(None);

/// The queue of the running thread, started now if there is none in this
/// process.
fn queue() -> std::io::Result<(mpsc::Sender<Job>, ThreadId)> {
    let mut g = lock(&THREAD);
    if let Some(r) = g.as_ref().filter(|r| !r.forks.forked()) {
        return Ok((r.tx.clone(), r.thread));
    }
    let (tx, rx) = mpsc::channel::<Job>();
    let handle = std::thread::Builder::new()
        .name("fastpmix-cb".into())
        .spawn(move || {
            for job in rx {
                // A panicking callback must not take the others with it.
                let _ = catch_unwind(AssertUnwindSafe(job));
            }
        })?;
    let thread = handle.thread().id();
    *g = Some(Running {
        tx: tx.clone(),
        thread,
        forks: ForkWatch::now(),
    });
    Ok((tx, thread))
}

/// Starts the thread if it is not running (`Client::init` does, so that
/// a connected client's completions always have a thread).
pub(crate) fn start() -> std::io::Result<()> {
    queue().map(|_| ())
}

/// Queues `job` behind every job posted before it. `Err(job)`: no thread
/// could be started; the job was not run.
pub(crate) fn post(job: Job) -> Result<(), Job> {
    match queue() {
        Ok((tx, _)) => tx.send(job).map_err(|e| e.0),
        Err(_) => Err(job),
    }
}

/// Is this the callback thread?
pub(crate) fn on_callback_thread() -> bool {
    let me = std::thread::current().id();
    lock(&THREAD)
        .as_ref()
        .is_some_and(|r| r.thread == me && !r.forks.forked())
}

/// Returns once every job posted before this call has run. At once on the
/// callback thread itself (it cannot wait for its own queue) and when no
/// thread runs.
pub(crate) fn flush() {
    if on_callback_thread() {
        return;
    }
    let (tx, rx) = mpsc::channel::<()>();
    if post(Box::new(move || {
        let _ = tx.send(());
    }))
    .is_ok()
    {
        let _ = rx.recv();
    }
}

/// The state a deferred job waits on: open once the [`Gate`] is dropped.
type Door = Arc<(Mutex<bool>, Condvar)>;

/// Opens when dropped: the exported function that got it from [`defer`]
/// keeps it until it returns, so its callback cannot overtake the return.
#[must_use = "the deferred job runs when the gate is dropped"]
pub(crate) struct Gate {
    door: Door,
    /// The job, when no callback thread could take it: run on drop.
    inline: Option<Job>,
}

impl Drop for Gate {
    fn drop(&mut self) {
        *lock(&self.door.0) = true;
        self.door.1.notify_all();
        if let Some(job) = self.inline.take() {
            let _ = catch_unwind(AssertUnwindSafe(job));
        }
    }
}

fn wait(door: &Door) {
    let mut open = lock(&door.0);
    while !*open {
        open = door.1.wait(open).unwrap_or_else(|e| e.into_inner());
    }
}

/// Runs `job` on the callback thread once the returned gate is dropped
/// (keep it until the exported function returns), in FIFO order with
/// every other callback.
pub(crate) fn defer(job: impl FnOnce() + Send + 'static) -> Gate {
    let door: Door = Arc::new((Mutex::new(false), Condvar::new()));
    let d = door.clone();
    let gated: Job = Box::new(move || {
        wait(&d);
        job()
    });
    let inline = post(gated).err();
    Gate { door, inline }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_in_posting_order_and_a_deferred_one_waits_for_its_gate() {
        let (tx, rx) = mpsc::channel();
        let t = tx.clone();
        let gate = defer(move || t.send("deferred").unwrap());
        let t = tx.clone();
        post(Box::new(move || t.send("posted after").unwrap())).ok();
        // Neither has run: the first waits for its gate, the second for it.
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(50))
            .is_err());
        drop(gate);
        assert_eq!(rx.recv().unwrap(), "deferred");
        assert_eq!(rx.recv().unwrap(), "posted after");
    }

    #[test]
    fn a_panicking_job_does_not_end_the_thread() {
        post(Box::new(|| panic!("a callback panicked"))).ok();
        let (tx, rx) = mpsc::channel();
        post(Box::new(move || tx.send(on_callback_thread()).unwrap())).ok();
        assert!(rx.recv().unwrap(), "ran on the callback thread");
        flush();
    }
}
