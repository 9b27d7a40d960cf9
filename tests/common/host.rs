//! The recording host of the server tests: one `Host` that keeps every
//! upcall for assertions. Upcalls whose answer the server acts on (abort,
//! allocate, job control, monitor, log, global syslog, monitor alerts)
//! answer as [`Answers`] says; each default is what the trait's default
//! method answers, so a test configures only what it exercises. The
//! notifications whose completion the server ignores (client connected or
//! finalized, events passed up, environment codes registered or
//! deregistered) complete with `SUCCESS`.

use fastpmix::job::alloc::Allocator;
use fastpmix::server::{Done, Host, HostEvent};
use fastpmix::types::{attrs, AllocDirective};
use fastpmix::{DataRange, Info, Proc, Status};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// One `job_control` upcall: requester, targets, directives.
pub type Call = (Proc, Vec<Proc>, Vec<Info>);
/// One `abort` upcall: caller, status, message, targets.
pub type Abort = (Proc, Status, String, Vec<Proc>);
/// One `log` upcall: requester, data, directives.
pub type LogCall = (Proc, Vec<Info>, Vec<Info>);
/// One `allocate` upcall: requester, directive, info.
pub type AllocCall = (Proc, u8, Vec<Info>);
/// One `monitor` upcall: requester, monitor, directives.
pub type MonitorCall = (Proc, Info, Vec<Info>);
/// Whose `client_connected` to hold, "entered" signal, release signal.
pub type Stall = (Proc, mpsc::Sender<()>, mpsc::Receiver<()>);

/// Longest wait for an upcall (a hang guard, as `tests/procs`' `HANG`).
const HANG: Duration = Duration::from_secs(60);

/// How an upcall with results answers.
pub enum Reply {
    /// This status, the default payload (empty).
    Status(Status),
    /// This status with these results.
    With(Status, Vec<Info>),
}

impl Reply {
    fn send(&self, done: Done<Vec<Info>>) {
        match self {
            Reply::Status(s) => done.status(*s),
            Reply::With(s, infos) => done.complete(*s, infos.clone()),
        }
    }
}

/// How `allocate` answers.
pub enum Alloc {
    /// `PMIX_ERR_NOT_SUPPORTED` at once (the trait's default).
    Unsupported,
    /// From another thread, 50 ms later: `[PMIX_ALLOC_ID "a1"]`.
    Later,
    /// Directive NEW as [`Alloc::Later`]; any other refused at once with
    /// `PMIX_ERR_OUT_OF_RESOURCE` and a reason.
    LaterIfNew,
    /// Drops the completion.
    Drop,
    /// The core allocator decides.
    Core(Mutex<Allocator>),
}

/// What the answer-bearing upcalls answer. `Default`: as the trait's
/// default methods (`PMIX_ERR_NOT_SUPPORTED`, no global syslog, alerts do
/// not terminate).
pub struct Answers {
    /// `abort`.
    pub abort: Status,
    /// `job_control`.
    pub job_control: Reply,
    /// `monitor`.
    pub monitor: Reply,
    /// `log`.
    pub log: Status,
    /// `allocate`.
    pub alloc: Alloc,
    /// `has_global_syslog`.
    pub global_syslog: bool,
    /// `monitor_alert`: the server terminates the process.
    pub terminate: bool,
    /// Events passed up with this code are only counted (in
    /// [`RecordingHost::counted`]), not kept: a flood would fill memory.
    pub count_only: Option<i32>,
    /// [`RecordingHost::wait_finalized`] answers for the latest report of
    /// the process instead of the first (a process name that connects
    /// again may be finalized again).
    pub latest_finalized: bool,
}

impl Default for Answers {
    fn default() -> Answers {
        Answers {
            abort: Status::ERR_NOT_SUPPORTED,
            job_control: Reply::Status(Status::ERR_NOT_SUPPORTED),
            monitor: Reply::Status(Status::ERR_NOT_SUPPORTED),
            log: Status::ERR_NOT_SUPPORTED,
            alloc: Alloc::Unsupported,
            global_syslog: false,
            terminate: false,
            count_only: None,
            latest_finalized: false,
        }
    }
}

/// An event passed up (`notify_event`, `monitor_alert`), as recorded: the
/// server lends the event for the call only.
#[derive(Clone, Debug, PartialEq)]
pub struct Upcall {
    pub code: Status,
    pub source: Proc,
    pub range: DataRange,
    pub info: Vec<Info>,
}

impl From<&HostEvent<'_>> for Upcall {
    fn from(e: &HostEvent<'_>) -> Upcall {
        Upcall {
            code: e.code,
            source: e.source,
            range: e.range,
            info: e.info.to_vec(),
        }
    }
}

/// Records every upcall; answers as its [`Answers`] say. Can hold the
/// server's progress thread inside `client_connected` of one process
/// ([`RecordingHost::stall`]), to keep records queued.
#[derive(Default)]
pub struct RecordingHost {
    answers: Answers,
    /// Events passed up (`notify_event`), but those of `count_only`.
    pub events: Mutex<Vec<Upcall>>,
    /// How many events of `count_only` were passed up.
    pub counted: Mutex<u64>,
    /// `register_events` codes, one entry per call.
    pub registered: Mutex<Vec<Vec<i32>>>,
    /// `deregister_events` codes, one entry per call.
    pub deregistered: Mutex<Vec<Vec<i32>>>,
    /// `client_finalized`: the process and whether it was lost.
    pub finalized: Mutex<Vec<(Proc, bool)>>,
    changed: Condvar,
    /// Set to hold `client_connected` of that process until released.
    pub stall: Mutex<Option<Stall>>,
    /// `abort` calls.
    pub aborts: Mutex<Vec<Abort>>,
    /// `job_control` calls.
    pub calls: Mutex<Vec<Call>>,
    /// `monitor` calls.
    pub monitors: Mutex<Vec<MonitorCall>>,
    /// `monitor_alert` calls.
    pub alerts: Mutex<Vec<(Proc, Upcall)>>,
    /// `log` calls.
    pub logs: Mutex<Vec<LogCall>>,
    /// `allocate` calls.
    pub allocs: Mutex<Vec<AllocCall>>,
}

impl RecordingHost {
    /// A host answering as the trait's defaults do.
    pub fn new() -> Arc<RecordingHost> {
        Arc::new(RecordingHost::default())
    }

    /// A host answering as `answers` says.
    pub fn with(answers: Answers) -> Arc<RecordingHost> {
        Arc::new(RecordingHost {
            answers,
            ..RecordingHost::default()
        })
    }

    /// The events passed up with `code`.
    pub fn upcalls(&self, code: i32) -> Vec<Upcall> {
        let g = self.events.lock().unwrap();
        g.iter().filter(|e| e.code.0 == code).cloned().collect()
    }

    /// The codes of the events passed up, in order.
    pub fn codes(&self) -> Vec<i32> {
        let g = self.events.lock().unwrap();
        g.iter().map(|e| e.code.0).collect()
    }

    /// Waits until the host heard `client_finalized` for `who`; its `lost`
    /// (of the first report, or the latest with `latest_finalized`).
    pub fn wait_finalized(&self, who: &Proc) -> bool {
        let deadline = Instant::now() + HANG;
        let mut g = self.finalized.lock().unwrap();
        loop {
            let found = if self.answers.latest_finalized {
                g.iter().rev().find(|(q, _)| q == who)
            } else {
                g.iter().find(|(q, _)| q == who)
            };
            if let Some((_, lost)) = found {
                return *lost;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "host never heard client_finalized({who})");
            g = self.changed.wait_timeout(g, left).unwrap().0;
        }
    }

    /// Every `client_finalized` report for `who`: its `lost`, in order.
    pub fn finalized_of(&self, who: &Proc) -> Vec<bool> {
        self.finalized
            .lock()
            .unwrap()
            .iter()
            .filter(|(q, _)| q == who)
            .map(|(_, l)| *l)
            .collect()
    }
}

impl Host for RecordingHost {
    fn notify_event(&self, ev: &HostEvent, done: Done) {
        if self.answers.count_only == Some(ev.code.0) {
            *self.counted.lock().unwrap() += 1;
        } else {
            self.events.lock().unwrap().push(Upcall::from(ev));
        }
        done.status(Status::SUCCESS)
    }

    fn relays_events(&self) -> bool {
        true
    }

    fn client_connected(&self, proc: &Proc, done: Done) {
        let stall = self.stall.lock().unwrap().take();
        match stall {
            Some((who, stalled, release)) if who == *proc => {
                let _ = stalled.send(());
                let _ = release.recv_timeout(HANG);
            }
            other => *self.stall.lock().unwrap() = other,
        }
        done.status(Status::SUCCESS)
    }

    fn client_finalized(&self, p: &Proc, lost: bool, done: Done) {
        self.finalized.lock().unwrap().push((*p, lost));
        self.changed.notify_all();
        done.status(Status::SUCCESS)
    }

    fn register_events(&self, codes: &[Status], done: Done) {
        self.registered
            .lock()
            .unwrap()
            .push(codes.iter().map(|c| c.0).collect());
        done.status(Status::SUCCESS)
    }

    fn deregister_events(&self, codes: &[Status], done: Done) {
        self.deregistered
            .lock()
            .unwrap()
            .push(codes.iter().map(|c| c.0).collect());
        done.status(Status::SUCCESS)
    }

    fn abort(&self, who: &Proc, s: Status, msg: &str, targets: &[Proc], done: Done) {
        self.aborts
            .lock()
            .unwrap()
            .push((*who, s, msg.to_owned(), targets.to_vec()));
        done.status(self.answers.abort)
    }

    fn job_control(&self, who: &Proc, targets: &[Proc], dirs: &[Info], done: Done<Vec<Info>>) {
        self.calls
            .lock()
            .unwrap()
            .push((*who, targets.to_vec(), dirs.to_vec()));
        self.answers.job_control.send(done)
    }

    fn monitor(
        &self,
        who: &Proc,
        monitor: &Info,
        _error: Status,
        dirs: &[Info],
        done: Done<Vec<Info>>,
    ) {
        self.monitors
            .lock()
            .unwrap()
            .push((*who, monitor.clone(), dirs.to_vec()));
        self.answers.monitor.send(done)
    }

    fn monitor_alert(&self, proc: &Proc, alert: &HostEvent) -> bool {
        self.alerts
            .lock()
            .unwrap()
            .push((*proc, Upcall::from(alert)));
        self.answers.terminate
    }

    fn log(&self, who: &Proc, data: &[Info], dirs: &[Info], done: Done) {
        self.logs
            .lock()
            .unwrap()
            .push((*who, data.to_vec(), dirs.to_vec()));
        done.status(self.answers.log)
    }

    fn has_global_syslog(&self) -> bool {
        self.answers.global_syslog
    }

    fn allocate(&self, who: &Proc, d: AllocDirective, info: &[Info], done: Done<Vec<Info>>) {
        self.allocs.lock().unwrap().push((*who, d.0, info.to_vec()));
        let later = |done: Done<Vec<Info>>| {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                done.complete(Status::SUCCESS, vec![Info::new(attrs::PMIX_ALLOC_ID, "a1")]);
            });
        };
        match &self.answers.alloc {
            Alloc::Unsupported => done.status(Status::ERR_NOT_SUPPORTED),
            Alloc::Later => later(done),
            Alloc::LaterIfNew if d == AllocDirective::NEW => later(done),
            Alloc::LaterIfNew => done.complete(
                Status::ERR_OUT_OF_RESOURCE,
                vec![Info::new(fastpmix::job::REASON, "test host has nothing")],
            ),
            Alloc::Drop => drop(done),
            Alloc::Core(a) => match a.lock().unwrap().request(who, d, info, Instant::now()) {
                Ok(r) => done.complete(Status::SUCCESS, r),
                Err(e) => done.complete(e.status, e.results),
            },
        }
    }
}
