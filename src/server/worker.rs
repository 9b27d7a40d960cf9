//! The server's worker thread: log channels written in order, off the
//! progress thread (they block on files and syslog).

use super::lock;
use std::sync::{mpsc, Mutex};

/// Work for the [`Worker`] thread.
type Job = Box<dyn FnOnce() + Send>;

pub(crate) struct Worker(Mutex<Option<mpsc::Sender<Job>>>);

impl Worker {
    pub fn new() -> Worker {
        Worker(Mutex::new(None))
    }

    pub fn run(&self, job: Job) {
        let mut g = lock(&self.0);
        if g.is_none() {
            let (tx, rx) = mpsc::channel::<Job>();
            let spawned = std::thread::Builder::new()
                .name("fastpmix-srv-work".into())
                .spawn(move || {
                    while let Ok(j) = rx.recv() {
                        j()
                    }
                });
            if spawned.is_err() {
                drop(g);
                return job(); // no thread to be had: run it here
            }
            *g = Some(tx);
        }
        if let Some(tx) = g.as_ref() {
            if let Err(mpsc::SendError(job)) = tx.send(job) {
                *g = None;
                drop(g);
                job();
            }
        }
    }
}
