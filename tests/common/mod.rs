//! Helpers shared by the integration tests; `host`: the recording host of
//! the server tests.
#![allow(dead_code)]

pub mod host;

use fastpmix::event::{Engine, HandlerRef, Invocation, Registration};
use fastpmix::{Info, Proc, Status};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The process the tests pretend to be.
pub fn me() -> Proc {
    Proc::new("test-job", 0).unwrap()
}

/// A fresh engine for `me()`.
pub fn engine() -> Engine {
    Engine::builder(me()).build().unwrap()
}

/// Records which handler saw which event, in call order.
#[derive(Clone, Default)]
pub struct Recorder(pub Arc<Mutex<Vec<(String, Status)>>>);

impl Recorder {
    /// A handler that records `(tag, code)` and completes with `status`.
    pub fn handler(
        &self,
        tag: &str,
        status: Status,
    ) -> impl Fn(Invocation) + Send + Sync + 'static {
        let log = self.0.clone();
        let tag = tag.to_owned();
        move |inv: Invocation| {
            log.lock().unwrap().push((tag.clone(), inv.status()));
            inv.complete(status, vec![]);
        }
    }

    /// Registers a recording handler for `codes` with `info`.
    pub fn register(
        &self,
        e: &Engine,
        tag: &str,
        codes: &[Status],
        info: Vec<Info>,
    ) -> Result<HandlerRef, Status> {
        e.register(Registration::new(codes, self.handler(tag, Status::SUCCESS)).infos(info))
    }

    /// The tags recorded so far.
    pub fn tags(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(t, _)| t.clone())
            .collect()
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// Waits until at least `n` records exist (panics after 10 s).
    pub fn wait_for(&self, n: usize) -> Vec<String> {
        wait_until(|| self.len() >= n);
        self.tags()
    }
}

/// Polls `cond` until true; panics after 10 s (a hang guard; 10 min under
/// miri, which runs about a hundred times slower).
pub fn wait_until(cond: impl Fn() -> bool) {
    let limit = Duration::from_secs(if cfg!(miri) { 600 } else { 10 });
    let t0 = Instant::now();
    while !cond() {
        assert!(
            t0.elapsed() < limit,
            "condition not reached within {limit:?}"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Lets the progress thread drain what is queued: a notify of an unused code
/// (`i32::MAX`) followed by waiting until its chain has ended. Default
/// handlers see that event too; tests that count their calls ignore it.
pub fn settle(e: &Engine) {
    let (tx, rx) = std::sync::mpsc::channel();
    let n =
        fastpmix::event::Notification::new(Status(i32::MAX), me(), fastpmix::DataRange::PROC_LOCAL);
    let queued = e
        .notify_observed(n, move |_| {
            let _ = tx.send(());
        })
        .unwrap();
    assert!(queued);
    rx.recv_timeout(Duration::from_secs(10))
        .expect("progress thread settled");
}

/// Keeps the progress thread busy inside a handler until the returned sender
/// is used (or dropped): whatever is queued meanwhile cannot run, which makes
/// "never before the call returns" checkable without timing.
pub fn hold_progress(e: &Engine) -> std::sync::mpsc::Sender<()> {
    let code = Status(-9_999_999);
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let (entered_tx, entered_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = Mutex::new(Some(release_rx));
    let entered_tx = Mutex::new(entered_tx);
    let h = e
        .register(Registration::new(&[code], move |inv: Invocation| {
            let _ = entered_tx.lock().unwrap().send(());
            if let Some(rx) = release_rx.lock().unwrap().take() {
                let _ = rx.recv();
            }
            inv.complete(Status::SUCCESS, vec![]);
        }))
        .unwrap();
    // The non-blocking form: its chain always runs on the progress thread
    // (a blocking PROC_LOCAL notify would run the gate in this thread).
    let s = e.notify_nb(
        fastpmix::event::Notification::new(code, me(), fastpmix::DataRange::PROC_LOCAL),
        |_| {},
    );
    assert_eq!(s, Status::SUCCESS);
    entered_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("progress thread entered the gate");
    // The gate handler stays registered but is single-use; deregister it from
    // inside the progress thread later is unnecessary: it never fires again.
    let _ = h;
    release_tx
}

/// A server whose ring is deeper than the events a test sends back to
/// back (a reader that never lags: a lagging one loses events
/// legitimately, reported), namespace `ns` with this process registered
/// as its rank 0, and this process's client connected to it.
pub fn deep_ring_client(ns: &str) -> (fastpmix::server::Server, fastpmix::client::Client, Proc) {
    let server = fastpmix::server::Server::builder()
        .geometry(shm_layout::Geometry {
            slot_count: 16_384,
            ..shm_layout::Geometry::default()
        })
        .start()
        .unwrap();
    let me = Proc::new(ns, 0).unwrap();
    server
        .register_nspace(&fastpmix::Nspace::new(ns).unwrap(), vec![])
        .unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    server.register_client(&me, uid, gid).unwrap();
    let params = fastpmix::client::Params::new(server.address(), me);
    let client = fastpmix::client::Client::init_with(&params).unwrap();
    (server, client, me)
}

/// Waits until `server` has routed every record its clients submitted (in
/// every namespace): a peer's client → client event arrives from the
/// sender's lane, before the server's thread passes it to the host, so a
/// check of what the host got waits for this first.
pub fn wait_routed(server: &fastpmix::server::Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    for ns in server.namespaces() {
        let seg =
            fastpmix::internals::ring::Segment::open_read_only(&ns.segment, Duration::from_secs(5))
                .expect("open the namespace segment");
        while seg
            .region()
            .state()
            .clients
            .iter()
            .any(|c| c.routed < c.submitted)
        {
            assert!(
                Instant::now() < deadline,
                "{}: submissions never routed",
                ns.nspace
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
