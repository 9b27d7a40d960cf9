//! The launcher's built-in host for its one node: there is no other node to
//! forward to, so it carries out on this node what a resource manager
//! would.
//!
//! - Allocation: cores of this process's hwloc binding
//!   ([`fastpmix::job::alloc::Allocator`]). A grant with `PMIX_ALLOC_TIME`
//!   is enforced: the holder gets `ALLOC_EXPIRING` (-3002) with the seconds
//!   left (`alloc::WARNING_LEAD` before the end), then the cores are taken back
//!   (a second `ALLOC_EXPIRING` with 0 left). When a loan
//!   (`RELEASE` with `PMIX_ALLOC_TIME`) ends and its CPUs cannot all be
//!   taken back, the holder gets `PMIX_ERR_OUT_OF_RESOURCE` with the
//!   allocation's id and the reason. One timer thread.
//! - Logging: job records are appended to the job-record file announced at
//!   start; email, global syslog and the global datastore are refused with
//!   `PMIX_ERR_NOT_SUPPORTED` and a message on stderr.
//! - Job control: restart and provisioning, and targets of other nodes, are
//!   refused with the reason in the results.
//! - A heartbeat stall (without `PMIX_MONITOR_APP_CONTROL`) terminates the
//!   stalled process.
//! - `PMIx_Abort` prints the caller's message and terminates the targets
//!   (none: the whole job), and the job ends with the caller's status.

use fastpmix::event::Notification;
use fastpmix::job::alloc::{Allocator, Expiry};
use fastpmix::job::{log as joblog, ALLOC_EXPIRING, ALLOC_REMAINING, REASON};
use fastpmix::server::{Done, Host, HostEvent, Server};
use fastpmix::types::find_info;
use fastpmix::types::{attrs, AllocDirective, DataArray};
use fastpmix::{DataRange, Info, Proc, Status, Value};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Instant;

/// The built-in host.
pub struct LauncherHost {
    trace: bool,
    /// Set once the server runs (the host is built first).
    pub server: OnceLock<Weak<Server>>,
    alloc: Option<Mutex<Allocator>>,
    /// Wakes the timer thread when deadlines change.
    changed: Condvar,
    /// Where job records go.
    pub job_record: PathBuf,
    /// How `PMIx_Abort` reaches the launcher's job loop: (status, targets,
    /// the caller's answer).
    pub on_abort: OnceLock<AbortFn>,
}

/// The launcher's reaction to `PMIx_Abort`. It completes the `Done` once
/// the targets were signalled: a caller among them must not see its call
/// return first.
pub type AbortFn = Box<dyn Fn(Status, &[Proc], Done) + Send + Sync>;

impl LauncherHost {
    /// A host for this node; starts the allocation timer thread.
    pub fn new(trace: bool, job_record: PathBuf) -> Arc<LauncherHost> {
        let alloc = match Allocator::from_topology() {
            Ok(a) => Some(Mutex::new(a)),
            Err(s) => {
                eprintln!("[fastpmix] no core allocator ({s}): allocation requests are refused");
                None
            }
        };
        let h = Arc::new(LauncherHost {
            trace,
            server: OnceLock::new(),
            alloc,
            changed: Condvar::new(),
            job_record,
            on_abort: OnceLock::new(),
        });
        let weak = Arc::downgrade(&h);
        let _ = std::thread::Builder::new()
            .name("fastpmix-alloc-timer".into())
            .spawn(move || timer(weak));
        h
    }

    /// Tells an allocation's holder alone, from the server: `code` with the
    /// allocation's id and `more`.
    fn tell(&self, holder: Proc, id: &str, code: Status, more: Info) {
        let Some(server) = self.server.get().and_then(Weak::upgrade) else {
            return;
        };
        let n = Notification::new(code, server.me(), DataRange::CUSTOM)
            .info(Info::new(
                attrs::PMIX_EVENT_CUSTOM_RANGE,
                Value::DataArray(DataArray::Proc(vec![holder])),
            ))
            .info(Info::new(
                attrs::PMIX_EVENT_AFFECTED_PROC,
                Value::Proc(Box::new(holder)),
            ))
            .info(Info::new(attrs::PMIX_ALLOC_ID, id))
            .info(more);
        if let Err(e) = server.notify(n) {
            eprintln!("[fastpmix] host: cannot tell {holder} about {id}: {e}");
        }
    }

    fn expiring(&self, holder: Proc, id: &str, left: u32) {
        let left = Info::new(ALLOC_REMAINING, Value::Uint32(left));
        self.tell(holder, id, ALLOC_EXPIRING, left);
    }
}

/// Sleeps until the allocator's next deadline (or a change), then ticks.
fn timer(h: Weak<LauncherHost>) {
    loop {
        let Some(host) = h.upgrade() else { return };
        let Some(alloc) = &host.alloc else { return };
        let mut a = alloc.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let due = a.tick(now);
        let next = a.next_deadline();
        drop(a);
        for e in due {
            match e {
                Expiry::Warning {
                    holder,
                    id,
                    remaining_secs,
                    ..
                } => host.expiring(holder, &id, remaining_secs),
                Expiry::Expired { holder, id, cpus } => {
                    eprintln!(
                        "[fastpmix] allocation {id} of {holder} expired: CPUs {cpus:?} taken back"
                    );
                    host.expiring(holder, &id, 0);
                }
                Expiry::Reacquired { holder, id, cpus } => {
                    if host.trace {
                        eprintln!("[fastpmix] loan of {id} ({holder}) ended: CPUs {cpus:?} back");
                    }
                }
                Expiry::ReacquireFailed { holder, id, reason } => {
                    eprintln!("[fastpmix] loan of {id} ({holder}) ended but: {reason}");
                    let why = Info::new(REASON, format!("loan ended but: {reason}"));
                    host.tell(holder, &id, Status::ERR_OUT_OF_RESOURCE, why);
                }
            }
        }
        // Sleep on the condvar without keeping the host alive forever: wake
        // at least once a second to notice the launcher ending.
        let wait = next
            .map(|d| d.saturating_duration_since(Instant::now()))
            .unwrap_or(std::time::Duration::from_secs(1))
            .min(std::time::Duration::from_secs(1));
        let g = alloc.lock().unwrap_or_else(|e| e.into_inner());
        let _ = host.changed.wait_timeout(g, wait);
    }
}

impl Host for LauncherHost {
    fn notify_event(&self, ev: &HostEvent, done: Done) {
        if self.trace {
            eprintln!(
                "[fastpmix] host: event {} from {} (range {:?}): no other node to forward to",
                ev.code, ev.source, ev.range
            );
        }
        done.status(Status::SUCCESS)
    }
    /// Every process of the job is on this node: an event of any range
    /// reached everyone it could reach, and the launcher is the RM.
    fn relays_events(&self) -> bool {
        true
    }
    fn register_events(&self, codes: &[Status], done: Done) {
        if self.trace {
            eprintln!("[fastpmix] host: clients registered for environment events {codes:?}");
        }
        done.status(Status::SUCCESS)
    }
    fn deregister_events(&self, _codes: &[Status], done: Done) {
        done.status(Status::SUCCESS)
    }
    fn client_connected(&self, p: &Proc, done: Done) {
        if self.trace {
            eprintln!("[fastpmix] host: {p} connected");
        }
        done.status(Status::SUCCESS)
    }
    /// `run` raises `PMIX_ERR_PROC_ABORTED` itself once the process is
    /// reaped, with its exit status and what becomes of the job.
    fn reports_client_deaths(&self) -> bool {
        true
    }
    fn client_finalized(&self, p: &Proc, lost: bool, done: Done) {
        if self.trace {
            let how = if lost { "lost" } else { "finalized" };
            eprintln!("[fastpmix] host: {p} {how}");
        }
        if let Some(a) = &self.alloc {
            let freed = a
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .release_holder(p);
            if !freed.is_empty() && self.trace {
                eprintln!("[fastpmix] host: {p} ended holding CPUs {freed:?}: released");
            }
            self.changed.notify_all();
        }
        done.status(Status::SUCCESS)
    }
    fn allocate(&self, who: &Proc, d: AllocDirective, info: &[Info], done: Done<Vec<Info>>) {
        let Some(a) = &self.alloc else {
            return done.complete(
                Status::ERR_NOT_SUPPORTED,
                vec![Info::new(REASON, "this launcher found no CPU topology")],
            );
        };
        let r = a
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .request(who, d, info, Instant::now());
        self.changed.notify_all();
        match r {
            Ok(results) => done.complete(Status::SUCCESS, results),
            Err(refusal) => done.complete(refusal.status, refusal.results),
        }
    }
    fn job_control(&self, _who: &Proc, targets: &[Proc], dirs: &[Info], done: Done<Vec<Info>>) {
        let what = if find_info(dirs, &attrs::PMIX_JOB_CTRL_RESTART).is_some() {
            "restart is not supported by fastpmix run".to_string()
        } else if dirs.iter().any(|i| {
            i.key == attrs::PMIX_JOB_CTRL_PROVISION || i.key == attrs::PMIX_JOB_CTRL_PROVISION_IMAGE
        }) {
            "provisioning is not supported by fastpmix run".to_string()
        } else {
            let t: Vec<String> = targets.iter().map(|p| p.to_string()).collect();
            return done.complete(
                Status::ERR_NOT_FOUND,
                vec![Info::new(
                    REASON,
                    format!(
                        "{} are not on this node (fastpmix run has one node)",
                        t.join(", ")
                    ),
                )],
            );
        };
        done.complete(Status::ERR_NOT_SUPPORTED, vec![Info::new(REASON, what)])
    }
    fn log(&self, who: &Proc, data: &[Info], dirs: &[Info], done: Done) {
        let ts = find_info(dirs, &attrs::PMIX_LOG_TIMESTAMP)
            .and_then(|i| i.value.as_integer())
            .map(|t| t as i64)
            .unwrap_or_else(|| {
                (fastpmix::internals::wire::now_realtime_ns() / 1_000_000_000) as i64
            });
        let mut status = Status::SUCCESS;
        for item in data {
            let r = match joblog::Channel::of(item.key.as_str()) {
                Some(joblog::Channel::JobRecord) => {
                    let msg = item.value.as_str().unwrap_or("");
                    joblog::append_job_record(&self.job_record, who, ts, msg).map_err(|e| {
                        eprintln!("[fastpmix] job record: {}: {e}", self.job_record.display());
                        Status::ERROR
                    })
                }
                _ => {
                    eprintln!(
                        "[fastpmix] PMIx_Log from {who}: {} is not supported by fastpmix run",
                        item.key.as_str()
                    );
                    Err(Status::ERR_NOT_SUPPORTED)
                }
            };
            if let Err(s) = r {
                status = s;
            }
        }
        done.status(status)
    }
    fn abort(&self, p: &Proc, status: Status, msg: &str, targets: &[Proc], done: Done) {
        eprintln!(
            "[fastpmix] {p} called PMIx_Abort (status {}): {msg}",
            status.0
        );
        match self.on_abort.get() {
            Some(f) => f(status, targets, done),
            None => done.status(Status::ERR_NOT_SUPPORTED),
        }
    }
    fn monitor_alert(&self, p: &Proc, alert: &HostEvent) -> bool {
        eprintln!(
            "[fastpmix] {p} stalled (event {}): terminating it",
            alert.code
        );
        true
    }
}
