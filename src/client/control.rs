//! The control channel, client side: requests on the socket and the
//! thread that reads their answers.
//!
//! - **Synchronous requests** ([`Client::request`]: registrations of
//!   environment codes, finalize) are serialised under the `ctl` lock; the
//!   control thread hands each reply, in order, to the caller waiting.
//! - **Numbered requests** ([`Client::start`]: job management, fence,
//!   query) carry a number; the server's `Result` for one may come after
//!   other replies (the host answers when it likes). Every answer takes
//!   one path: the `Result`'s status and infos become an [`Outcome`]
//!   (`outcome`), which goes to the request's [`Waiter`] — a blocking
//!   caller directly, a callback through the library's callback thread
//!   (`client::callbacks`: never the caller's thread, and only after the
//!   request was sent). A request that could not be sent returns an error
//!   and its callback never runs; a lost server (or `finalize`) completes
//!   every pending request with an error `Outcome`.
//! - **The control thread** (`fastpmix-ctl`) reads each frame once into
//!   its own aligned buffer and validates it once (`control::read_reply`),
//!   and notices the server's death (the socket closes, or the server's
//!   pidfd is readable first): the handlers then get
//!   `PMIX_ERR_LOST_CONNECTION` at once.

use super::callbacks;
use super::jobs::Outcome;
use super::Client;
use crate::event::{Engine, Notification};
use crate::sync::{lock, Latch};
use crate::types::{attrs, DataRange, Info, Proc, Status, Value};
use crate::wire::control::{self, ArchivedReply, FrameError, ReplyFrame, Request};
use crate::wire::info_from_archived;
use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

/// A synchronous request's reply, or the connection's loss.
pub(super) type ReplyBody = Result<ReplyFrame, Status>;

/// Who waits for a numbered request's answer.
pub(super) enum Waiter {
    /// A blocking call, on its own thread.
    Blocking(mpsc::Sender<Outcome>),
    /// A non-blocking call's completion (run on the callback thread).
    Callback(super::Callback),
}

impl Waiter {
    /// Hands `o` over. Called without the pending lock: a callback run in
    /// place (below) may start another request.
    fn finish(self, o: Outcome) {
        match self {
            Waiter::Blocking(tx) => {
                let _ = tx.send(o);
            }
            Waiter::Callback(f) => {
                if let Err(job) = callbacks::post(Box::new(move || f(o))) {
                    // No callback thread (it could not be started; a
                    // connected client started it in `init`): here, on
                    // the control thread, rather than never.
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
            }
        }
    }
}

/// Numbered requests waiting for their `Result`.
pub(super) struct Pending {
    next: u64,
    map: HashMap<u64, Waiter>,
    /// Set once the server is gone: new requests fail at once.
    closed: bool,
}

impl Pending {
    pub(super) fn new() -> Mutex<Pending> {
        Mutex::new(Pending {
            next: 1,
            map: HashMap::new(),
            closed: false,
        })
    }

    /// The server is gone (or the client finalized): no request starts any
    /// more, and the waiters returned are owed `Outcome::err(..)`.
    fn close(&mut self) -> Vec<Waiter> {
        self.closed = true;
        self.map.drain().map(|(_, w)| w).collect()
    }
}

/// Completes every pending request with `s`; later ones fail at once.
pub(super) fn close(pending: &Mutex<Pending>, s: Status) {
    let waiters = lock(pending).close();
    for w in waiters {
        w.finish(Outcome::err(s));
    }
}

/// A `Result`'s status and infos as the caller gets them. An info that
/// does not decode fails the whole answer with its status.
fn outcome(
    status: i32,
    info: &rkyv::vec::ArchivedVec<shm_layout::record::ArchivedInfoRecord>,
) -> Outcome {
    match info.iter().map(info_from_archived).collect() {
        Ok(results) => Outcome {
            status: Status(status),
            results,
        },
        Err(s) => Outcome::err(s),
    }
}

impl Client {
    /// A synchronous request: `Done`'s status, or a refusal's as the error.
    pub(super) fn request(&self, r: &Request) -> Result<Status, Status> {
        self.live()?;
        let g = lock(&self.inner.ctl);
        control::send(&g.0, r).map_err(|e| control::send_status(&e))?;
        // A closed channel: the control thread is gone with the server.
        let reply = g.1.recv().map_err(|_| Status::ERR_UNREACH)??;
        match &*reply {
            ArchivedReply::Done { status } => Ok(Status(status.to_native())),
            ArchivedReply::Refused { status, .. } => Err(Status(status.to_native())),
            ArchivedReply::Welcome { .. }
            | ArchivedReply::Text { .. }
            | ArchivedReply::Result { .. } => Err(Status::ERROR),
        }
    }

    /// A request that gets no reply (`Commit`): sent in order with the
    /// others, so the server handles it before any later request.
    pub(super) fn send(&self, r: &Request) -> Result<(), Status> {
        self.live()?;
        let g = lock(&self.inner.ctl);
        control::send(&g.0, r).map_err(|e| control::send_status(&e))
    }

    /// Sends a numbered request; its answer goes to `w`. The pending lock
    /// is not held while sending: a synchronous request may hold the socket
    /// while the control thread needs the pending map for an earlier
    /// `Result` ahead of that request's reply.
    pub(super) fn start(&self, make: impl FnOnce(u64) -> Request, w: Waiter) -> Status {
        if let Err(s) = self.live() {
            return s;
        }
        let id = {
            let mut p = lock(&self.inner.pending);
            if p.closed {
                return Status::ERR_UNREACH;
            }
            let id = p.next;
            p.next += 1;
            p.map.insert(id, w);
            id
        };
        let sent = {
            let g = lock(&self.inner.ctl);
            control::send(&g.0, &make(id))
        };
        if let Err(e) = sent {
            // Not sent: the waiter must not run (the caller gets the error).
            lock(&self.inner.pending).map.remove(&id);
            return control::send_status(&e);
        }
        Status::SUCCESS
    }

    /// A numbered request, waited for on this thread.
    pub(super) fn blocking(&self, make: impl FnOnce(u64) -> Request) -> Outcome {
        let (tx, rx) = mpsc::channel();
        let s = self.start(make, Waiter::Blocking(tx));
        if !s.is_success() {
            return Outcome::err(s);
        }
        rx.recv()
            .unwrap_or_else(|_| Outcome::err(Status::ERR_UNREACH))
    }

    /// A numbered request whose answer goes to `cb` on the callback
    /// thread. `SUCCESS` means `cb` will run; otherwise it never does.
    pub(super) fn non_blocking(
        &self,
        make: impl FnOnce(u64) -> Request,
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        self.start(make, Waiter::Callback(Box::new(cb)))
    }
}

/// The control thread's ends and what it tells of the server's loss.
pub(super) struct Control {
    /// The socket's read half.
    pub s: UnixStream,
    /// Replies to synchronous requests, in order.
    pub tx: mpsc::Sender<ReplyBody>,
    /// The numbered requests.
    pub pending: Arc<Mutex<Pending>>,
    /// Where `PMIX_ERR_LOST_CONNECTION` goes.
    pub engine: Engine,
    /// Set by `finalize`: a closed socket is then no loss.
    pub stop: Arc<Latch>,
    /// Set here when the server is lost.
    pub lost: Arc<Latch>,
    /// This process and its server (the loss event's source and affected
    /// process).
    pub me: Proc,
    pub server: Proc,
    /// The namespace's fence barrier: its sleepers are woken when the
    /// server is lost (they then return `PMIX_ERR_UNREACH`).
    pub barrier: Option<Arc<crate::barrier::Area>>,
}

impl Control {
    /// Starts the control thread.
    pub(super) fn spawn(self) -> std::io::Result<JoinHandle<()>> {
        std::thread::Builder::new()
            .name("fastpmix-ctl".into())
            .spawn(move || self.run())
    }

    /// Reads replies and notices the server's death (the socket closes).
    /// `Result`s go to their numbered request; other replies, in order, to
    /// the synchronous caller.
    fn run(mut self) {
        // The server's death is watched through a pidfd too: a killed
        // server's socket may close well after it died (the kernel releases
        // the files its io_uring holds asynchronously: tens of ms, seconds
        // on a loaded machine), while a pidfd is readable as soon as the
        // process exited. SO_PEERCRED names the process that listens (pid
        // 0: not visible in this pid namespace; then the socket alone
        // tells).
        let server_exit = control::peer_cred(&self.s)
            .ok()
            .filter(|p| p.pid > 0)
            .and_then(|p| crate::sync::pidfd_open(p.pid).ok());
        loop {
            if let Some(pidfd) = &server_exit {
                if !readable_or_exited(&self.s, pidfd) {
                    break;
                }
            }
            let answer = match control::read_reply(&mut self.s) {
                Ok(frame) => Ok(frame),
                // Read whole, but not a reply: the connection is still in
                // step, and the synchronous caller hears of it.
                Err(FrameError::Invalid(_)) => Err(Status::ERR_UNREACH),
                Err(_) => break,
            };
            if let Ok(frame) = &answer {
                if let ArchivedReply::Result { id, status, info } = &**frame {
                    let o = outcome(status.to_native(), info);
                    let w = lock(&self.pending).map.remove(&id.to_native());
                    if let Some(w) = w {
                        w.finish(o);
                    }
                    continue;
                }
            }
            if self.tx.send(answer).is_err() {
                break;
            }
        }
        close(&self.pending, Status::ERR_UNREACH);
        if self.stop.is_set() {
            return;
        }
        self.lost.set();
        if let Some(a) = &self.barrier {
            crate::barrier::wake_sleepers(&**a);
        }
        let _ = self.tx.send(Err(Status::ERR_UNREACH));
        let n = Notification::new(Status::ERR_LOST_CONNECTION, self.me, DataRange::PROC_LOCAL)
            .info(Info::new(
                attrs::PMIX_EVENT_AFFECTED_PROC,
                Value::Proc(Box::new(self.server)),
            ));
        let _ = self.engine.notify_queued(n);
    }
}

/// Waits until `s` has something to read (bytes, or its end) or the
/// process behind `pidfd` exited. `false`: it exited and `s` has nothing.
fn readable_or_exited(s: &UnixStream, pidfd: &std::os::fd::OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    let mut fds = [
        libc::pollfd {
            fd: s.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: two initialised pollfds in a live local array, of the
        // length passed; both descriptors are borrowed for the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n >= 0 {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true; // the read decides
        }
    }
    fds[0].revents != 0 || fds[1].revents == 0
}
