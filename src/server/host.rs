//! The host module: how the server calls the daemon that embeds it (the Rust
//! analogue of `pmix_server_module_t`). Every method is optional: the
//! default answers `PMIX_ERR_NOT_SUPPORTED`. Completions are asynchronous:
//! a method receives a [`Done`] and may complete it from any thread, at any
//! time; dropping it uncompleted counts as `PMIX_ERROR`, so a forgetful host
//! cannot wedge a request.
//!
//! The server calls host methods from its progress thread, from its log
//! worker thread (`log`) or from the thread that called the server API; a
//! host must not block in them for long (hand slow work to its own threads
//! and complete `Done` later).

use crate::types::{AllocDirective, App, DataRange, Info, Nspace, PData, Proc, Status};
use std::fmt;
use std::sync::Mutex;

/// A one-shot completion carrying a status and a payload.
pub struct Done<T = ()> {
    f: Option<Box<dyn FnOnce(Status, T) + Send>>,
    dflt: Option<Box<dyn FnOnce() -> T + Send>>,
}

impl<T: 'static> Done<T> {
    /// A completion that calls `f`; `dflt` builds the payload when the
    /// completion is dropped or completed with [`Done::status`].
    pub fn new(
        f: impl FnOnce(Status, T) + Send + 'static,
        dflt: impl FnOnce() -> T + Send + 'static,
    ) -> Done<T> {
        Done {
            f: Some(Box::new(f)),
            dflt: Some(Box::new(dflt)),
        }
    }

    /// Completes with a status and a payload.
    pub fn complete(mut self, s: Status, v: T) {
        if let Some(f) = self.f.take() {
            f(s, v)
        }
    }

    /// Completes with a status and the default payload.
    pub fn status(mut self, s: Status) {
        if let (Some(f), Some(d)) = (self.f.take(), self.dflt.take()) {
            f(s, d())
        }
    }
}

impl Done {
    /// A completion whose outcome nobody waits for (the server's
    /// notifications to its host: a client connected, finalized, an
    /// environment code's last registration went).
    pub fn ignored() -> Done {
        Done::new(|_, ()| {}, || ())
    }
}

impl<T> Drop for Done<T> {
    fn drop(&mut self) {
        if let (Some(f), Some(d)) = (self.f.take(), self.dflt.take()) {
            f(Status::ERROR, d())
        }
    }
}

impl<T> fmt::Debug for Done<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Done")
    }
}

/// An event the server passes up to the host (`notify_event`): a view of
/// the event as it goes through the server, valid for the call (a host
/// that keeps it copies what it needs).
#[derive(Clone, Copy, Debug)]
pub struct HostEvent<'a> {
    /// The event code.
    pub code: Status,
    /// The (authenticated) source.
    pub source: Proc,
    /// The generator's range.
    pub range: DataRange,
    /// The generator's attributes, verbatim.
    pub info: &'a [Info],
}

/// What an embedding daemon provides. All methods optional.
#[allow(unused_variables)]
pub trait Host: Send + Sync + 'static {
    /// A registered client connected and was authenticated.
    fn client_connected(&self, proc: &Proc, done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// A client finalized, or its connection was lost (then `lost` is true).
    /// A C host (`pmix_server.h`) hears only finalizations, as the
    /// Standard defines its upcall.
    fn client_finalized(&self, proc: &Proc, lost: bool, done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// Whether the host raises its own event when a client dies before
    /// `PMIx_Finalize` (as `fastpmix run` does, with the exit status and
    /// what becomes of the job). When false, the server raises
    /// `PMIX_ERR_PROC_ABORTED` to the client's namespace as soon as its
    /// connection ends, with the client as source and affected process:
    /// its peers hear of the death under any host, once.
    fn reports_client_deaths(&self) -> bool {
        false
    }
    /// A client called `PMIx_Abort` (or died abnormally before finalize).
    fn abort(&self, proc: &Proc, status: Status, msg: &str, targets: &[Proc], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// An event that must leave this node (or reach the SMS).
    fn notify_event(&self, ev: &HostEvent<'_>, done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// Whether [`notify_event`](Host::notify_event) carries events (a
    /// host that implements it says `true`). When false, a client's
    /// event of range RM, or of a custom range naming a process this node
    /// does not hold, is refused with `PMIX_ERR_NOT_SUPPORTED` by the
    /// client's `PMIx_Notify_event` (nothing is delivered), instead of a
    /// `PMIX_SUCCESS` for an event nobody could get; a C host says so by
    /// its `notify_event` pointer.
    fn relays_events(&self) -> bool {
        false
    }
    /// Local clients registered for these environment codes (called once per
    /// code while at least one registration exists).
    fn register_events(&self, codes: &[Status], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// The last local registration for these codes went away.
    fn deregister_events(&self, codes: &[Status], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Allocation_request` from a client.
    fn allocate(
        &self,
        requestor: &Proc,
        directive: AllocDirective,
        info: &[Info],
        done: Done<Vec<Info>>,
    ) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Job_control` from a client.
    fn job_control(
        &self,
        requestor: &Proc,
        targets: &[Proc],
        directives: &[Info],
        done: Done<Vec<Info>>,
    ) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Process_monitor` from a client.
    fn monitor(
        &self,
        requestor: &Proc,
        monitor: &Info,
        error: Status,
        directives: &[Info],
        done: Done<Vec<Info>>,
    ) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Log` from a client: the items for channels the server cannot
    /// serve on this node (global syslog, email, job record, datastore),
    /// with the directives that apply to them, `PMIX_LOG_SOURCE`,
    /// `PMIX_USERID` and `PMIX_GRPID`.
    fn log(&self, requestor: &Proc, data: &[Info], directives: &[Info], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// Does the host have a global syslog? (`PMIX_LOG_SYSLOG` goes to the
    /// host's `log` when it does, to the node's syslog otherwise.)
    fn has_global_syslog(&self) -> bool {
        false
    }
    /// A fence whose participants include processes on other nodes (ranks
    /// below the job's `PMIX_JOB_SIZE` that are not registered here): called
    /// once per fence, when every local participant entered. `procs`: the
    /// participants, sorted, each namespace they cover whole named by its
    /// wildcard rank (so every node's server names one fence alike,
    /// however its processes named it); `info` holds
    /// `PMIX_COLLECT_DATA` when data is collected (and the caller's
    /// `PMIX_TIMEOUT`); `data` is this node's contribution, a byte string
    /// the host carries to every other node's server unread. `done`
    /// delivers the contributions of every node, concatenated in any
    /// order (this node's may be among them); the local fence completes
    /// with its status. A host that does not support it fails such
    /// fences with `PMIX_ERR_NOT_SUPPORTED` (never a silent success).
    fn fence_nb(&self, procs: &[Proc], info: &[Info], data: &[u8], done: Done<Vec<u8>>) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// A local client asked for data of `proc`, a process on another node
    /// this server has nothing of (no fence collected it): the host asks
    /// `proc`'s node, whose server answers through
    /// [`Server::dmodex_request`](super::Server::dmodex_request), and
    /// completes `done` with those bytes. Not supported: the client's
    /// `PMIx_Get` is `PMIX_ERR_NOT_FOUND`.
    fn direct_modex(&self, proc: &Proc, info: &[Info], done: Done<Vec<u8>>) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Publish` from `proc`: `info` holds the items to publish and
    /// the directives (`PMIX_RANGE`, `PMIX_PERSISTENCE`, `PMIX_TIMEOUT`),
    /// with the requester's `PMIX_USERID`/`PMIX_GRPID`. The host keeps the
    /// items (its data server) and completes `done` once they are stored.
    fn publish(&self, proc: &Proc, info: &[Info], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Lookup` from `proc`: the values of `keys` published within
    /// the directives' `PMIX_RANGE`. With `PMIX_WAIT` in `info`, the host
    /// answers once the keys are published (or `PMIX_TIMEOUT` passes).
    /// `done` carries what was found, each with its publisher; the status
    /// is the client's (`PMIX_ERR_NOT_FOUND` when none is).
    fn lookup(&self, proc: &Proc, keys: &[String], info: &[Info], done: Done<Vec<PData>>) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Unpublish` from `proc`: `keys` empty = everything it
    /// published (within the directives' `PMIX_RANGE`).
    fn unpublish(&self, proc: &Proc, keys: &[String], info: &[Info], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Spawn` from `proc`: start `apps` as a new job with `job_info`;
    /// `done` carries the new job's namespace.
    fn spawn(&self, proc: &Proc, job_info: &[Info], apps: &[App], done: Done<Option<Nspace>>) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Connect` over `procs`, called once every local participant
    /// of the set has called it (the server collects this node's part);
    /// the host completes the collective across nodes and completes
    /// `done` for all of this node's participants at once.
    fn connect(&self, procs: &[Proc], info: &[Info], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// `PMIx_Disconnect` over `procs`: as [`connect`](Host::connect).
    fn disconnect(&self, procs: &[Proc], info: &[Info], done: Done) {
        done.status(Status::ERR_NOT_SUPPORTED)
    }
    /// A server monitor raised `alert` (a heartbeat stall) about `proc`, and
    /// the requester did not ask for `PMIX_MONITOR_APP_CONTROL`. `true`: the
    /// server terminates `proc` (SIGTERM, then SIGKILL after the grace).
    /// Called on the progress thread, after the event was published.
    fn monitor_alert(&self, proc: &Proc, alert: &HostEvent<'_>) -> bool {
        false
    }
}

/// A host that supports nothing (every method answers NOT_SUPPORTED).
#[derive(Debug, Default)]
pub struct NoHost;

impl Host for NoHost {}

/// Reference counts of environment codes registered by local clients, so the
/// host hears `register_events` once per code and `deregister_events` when
/// the last registration goes.
#[derive(Debug, Default)]
pub(crate) struct EnvRefs(Mutex<std::collections::HashMap<i32, u32>>);

impl EnvRefs {
    /// Adds one registration per code; returns the codes that went 0 → 1.
    pub fn add(&self, codes: &[Status]) -> Vec<Status> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        codes
            .iter()
            .filter(|c| c.is_system_event())
            .filter(|c| {
                let n = m.entry(c.0).or_insert(0);
                *n += 1;
                *n == 1
            })
            .copied()
            .collect()
    }

    /// Removes one registration per code; returns the codes that went 1 → 0.
    pub fn remove(&self, codes: &[Status]) -> Vec<Status> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        codes
            .iter()
            .filter(|c| c.is_system_event())
            .filter(|c| match m.get_mut(&c.0) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                Some(_) => {
                    m.remove(&c.0);
                    true
                }
                None => false,
            })
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn dropping_a_done_completes_it_with_error() {
        let got = Arc::new(Mutex::new(None));
        let g = got.clone();
        drop(Done::<()>::new(
            move |s, ()| *g.lock().unwrap() = Some(s),
            || (),
        ));
        assert_eq!(*got.lock().unwrap(), Some(Status::ERROR));
    }

    #[test]
    fn environment_codes_are_reference_counted_per_code() {
        let r = EnvRefs::default();
        let down = Status::EVENT_NODE_DOWN;
        assert_eq!(r.add(&[down, Status::EVENT_PROC_TERMINATED]), vec![down]);
        assert_eq!(r.add(&[down]), vec![]);
        assert_eq!(r.remove(&[down]), vec![]);
        assert_eq!(r.remove(&[down]), vec![down]);
        assert_eq!(r.remove(&[down]), vec![]);
    }

    /// SRV-7: a host that implements nothing answers every request with
    /// `PMIX_ERR_NOT_SUPPORTED` (and the default payload).
    #[test]
    fn every_default_method_answers_not_supported() {
        let h = NoHost;
        let p = Proc::new("a", 0).unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let done = || {
            let g = got.clone();
            Done::new(move |s, ()| g.lock().unwrap().push(s), || ())
        };
        let with_infos = || {
            let g = got.clone();
            Done::new(
                move |s, v: Vec<Info>| {
                    assert!(v.is_empty());
                    g.lock().unwrap().push(s)
                },
                Vec::new,
            )
        };
        let ev = HostEvent {
            code: Status::EVENT_NODE_DOWN,
            source: p,
            range: DataRange::SESSION,
            info: &[],
        };
        let down = [Status::EVENT_NODE_DOWN];
        let item = Info::new(crate::types::attrs::PMIX_EVENT_DO_NOT_CACHE, true);
        h.client_connected(&p, done());
        h.client_finalized(&p, false, done());
        h.abort(&p, Status::ERROR, "x", &[], done());
        h.notify_event(&ev, done());
        h.register_events(&down, done());
        h.deregister_events(&down, done());
        h.allocate(&p, AllocDirective::NEW, &[], with_infos());
        h.job_control(&p, &[p], &[], with_infos());
        h.monitor(&p, &item, Status::ERROR, &[], with_infos());
        h.log(&p, std::slice::from_ref(&item), &[], done());
        let bytes = || {
            let g = got.clone();
            Done::new(
                move |s, v: Vec<u8>| {
                    assert!(v.is_empty());
                    g.lock().unwrap().push(s)
                },
                Vec::new,
            )
        };
        h.fence_nb(&[p], &[], b"x", bytes());
        h.direct_modex(&p, &[], bytes());
        h.publish(&p, std::slice::from_ref(&item), done());
        h.unpublish(&p, &[], &[], done());
        h.connect(&[p], &[], done());
        h.disconnect(&[p], &[], done());
        let g = got.clone();
        let found = Done::new(
            move |s, v: Vec<PData>| {
                assert!(v.is_empty());
                g.lock().unwrap().push(s)
            },
            Vec::new,
        );
        h.lookup(&p, &["k".into()], &[], found);
        let g = got.clone();
        let child = Done::new(
            move |s, n: Option<Nspace>| {
                assert!(n.is_none());
                g.lock().unwrap().push(s)
            },
            || None,
        );
        h.spawn(&p, &[], &[App::new("true", 1)], child);
        assert_eq!(*got.lock().unwrap(), vec![Status::ERR_NOT_SUPPORTED; 18]);
        assert!(!h.has_global_syslog());
        assert!(!h.monitor_alert(&p, &ev));
    }

    /// SRV-7: completions are asynchronous: a `Done` completed later, from
    /// another thread, delivers its status and payload exactly once.
    #[test]
    fn a_done_completes_once_later_from_another_thread() {
        let (tx, rx) = std::sync::mpsc::channel();
        let d = Done::<Vec<u32>>::new(move |s, v| tx.send((s, v)).unwrap(), Vec::new);
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            d.complete(Status::SUCCESS, vec![7]);
        });
        assert_eq!(rx.recv().unwrap(), (Status::SUCCESS, vec![7]));
        t.join().unwrap();
        assert!(
            rx.recv().is_err(),
            "once: dropping it after completion is silent"
        );
    }
}
