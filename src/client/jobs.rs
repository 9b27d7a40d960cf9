//! The client's job-management calls (`PMIx_Allocation_request`,
//! `PMIx_Job_control`, `PMIx_Process_monitor`, `PMIx_Heartbeat`,
//! `PMIx_Log`), each blocking and non-blocking.
//!
//! Each is a numbered request (`src/client/control.rs` has the path of its
//! answer): the control thread hands a blocking caller its answer directly
//! and queues non-blocking callbacks to the library's callback thread
//! (`src/client/callbacks.rs`): a callback never runs on the caller's thread,
//! and only after the request was sent and the call has let go of
//! everything it was given (the call's last step is to return `SUCCESS`).
//! A request that could not be sent returns an error and its callback never
//! runs. A lost server completes every pending request with
//! `PMIX_ERR_UNREACH`.
//!
//! `PMIx_Heartbeat` is an increment of this process's counter in the
//! shared client table: no syscall, no message.

use super::Client;
use crate::types::find_info;
use crate::types::{attrs, AllocDirective, Info, Proc, Status, Value};
use crate::wire::control::Request;
use crate::wire::{info_to_record, proc_to_record};

/// What a job-management call returns: a status and its results (on a
/// refusal, the reason under [`crate::job::REASON`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// `pmix_status_t`.
    pub status: Status,
    /// Results.
    pub results: Vec<Info>,
}

impl Outcome {
    pub(super) fn err(s: Status) -> Outcome {
        Outcome {
            status: s,
            results: Vec::new(),
        }
    }

    /// The reason a refusal carries, if any.
    pub fn reason(&self) -> Option<&str> {
        find_info(&self.results, &crate::job::REASON).and_then(|i| i.value.as_str())
    }
}

/// A non-blocking call's completion.
pub type Callback = Box<dyn FnOnce(Outcome) + Send + 'static>;

impl Client {
    /// `PMIx_Allocation_request`.
    pub fn allocate(&self, directive: AllocDirective, info: &[Info]) -> Outcome {
        self.blocking(alloc_req(directive, info))
    }

    /// `PMIx_Allocation_request_nb`: `SUCCESS` means `cb` will run.
    pub fn allocate_nb(
        &self,
        directive: AllocDirective,
        info: &[Info],
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        self.non_blocking(alloc_req(directive, info), cb)
    }

    /// `PMIx_Job_control`: `targets` empty = this process's namespace.
    pub fn job_control(&self, targets: &[Proc], directives: &[Info]) -> Outcome {
        self.blocking(ctl_req(targets, directives))
    }

    /// `PMIx_Job_control_nb`.
    pub fn job_control_nb(
        &self,
        targets: &[Proc],
        directives: &[Info],
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        self.non_blocking(ctl_req(targets, directives), cb)
    }

    /// `PMIx_Process_monitor`. A `PMIX_SEND_HEARTBEAT` monitor is a beat
    /// ([`Client::heartbeat`]) and returns at once.
    pub fn monitor(&self, monitor: &Info, error: Status, directives: &[Info]) -> Outcome {
        if monitor.key == attrs::PMIX_SEND_HEARTBEAT {
            return Outcome::err(match self.heartbeat() {
                Ok(()) => Status::SUCCESS,
                Err(s) => s,
            });
        }
        self.blocking(mon_req(monitor, error, directives))
    }

    /// `PMIx_Process_monitor_nb`. A heartbeat completes at once and returns
    /// `PMIX_OPERATION_SUCCEEDED` (the callback does not run).
    pub fn monitor_nb(
        &self,
        monitor: &Info,
        error: Status,
        directives: &[Info],
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        if monitor.key == attrs::PMIX_SEND_HEARTBEAT {
            return match self.heartbeat() {
                Ok(()) => Status::OPERATION_SUCCEEDED,
                Err(s) => s,
            };
        }
        self.non_blocking(mon_req(monitor, error, directives), cb)
    }

    /// `PMIx_Heartbeat`: one relaxed increment in shared memory.
    pub fn heartbeat(&self) -> Result<(), Status> {
        self.live()?;
        self.inner
            .seg
            .region()
            .heartbeat(self.inner.entry)
            .fetch_add_relaxed(1);
        Ok(())
    }

    /// `PMIx_Abort`: asks the host to print `msg` and abort `targets`
    /// (empty: this namespace) with `status`. Returns once the host has
    /// acted; when this process is among the targets it normally does not
    /// return at all. The host's refusal (e.g. `PMIX_ERR_NOT_SUPPORTED`) is
    /// the result.
    pub fn abort(&self, status: Status, msg: &str, targets: &[Proc]) -> Status {
        let (msg, targets): (String, Vec<_>) = (
            abort_message(msg),
            targets.iter().map(proc_to_record).collect(),
        );
        self.blocking(move |id| Request::Abort {
            id,
            status: status.0,
            msg,
            targets,
        })
        .status
    }

    /// `PMIx_Log`. A `PMIX_LOG_GENERATE_TIMESTAMP` directive is turned into
    /// `PMIX_LOG_TIMESTAMP` here, at the caller (as OpenPMIx does).
    pub fn log(&self, data: &[Info], directives: &[Info]) -> Outcome {
        self.blocking(log_req(data, directives))
    }

    /// `PMIx_Log_nb`.
    pub fn log_nb(
        &self,
        data: &[Info],
        directives: &[Info],
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        self.non_blocking(log_req(data, directives), cb)
    }
}

fn records(v: &[Info]) -> Vec<shm_layout::record::InfoRecord> {
    v.iter().map(info_to_record).collect()
}

fn alloc_req(d: AllocDirective, info: &[Info]) -> impl FnOnce(u64) -> Request {
    let info = records(info);
    move |id| Request::Allocate {
        id,
        directive: d.0,
        info,
    }
}

fn ctl_req(targets: &[Proc], dirs: &[Info]) -> impl FnOnce(u64) -> Request {
    let (targets, directives) = (targets.iter().map(proc_to_record).collect(), records(dirs));
    move |id| Request::JobControl {
        id,
        targets,
        directives,
    }
}

fn mon_req(m: &Info, error: Status, dirs: &[Info]) -> impl FnOnce(u64) -> Request {
    let (monitor, directives) = (info_to_record(m), records(dirs));
    move |id| Request::Monitor {
        id,
        monitor,
        error: error.0,
        directives,
    }
}

fn log_req(data: &[Info], dirs: &[Info]) -> impl FnOnce(u64) -> Request {
    let generate = dirs
        .iter()
        .any(|i| i.key == attrs::PMIX_LOG_GENERATE_TIMESTAMP && i.value.as_flag() == Some(true));
    let given = find_info(dirs, &attrs::PMIX_LOG_TIMESTAMP).is_some();
    let mut d: Vec<Info> = dirs.to_vec();
    if generate && !given {
        let now = (crate::wire::now_realtime_ns() / 1_000_000_000) as i64;
        d.push(Info::new(attrs::PMIX_LOG_TIMESTAMP, Value::Time(now)));
    }
    let (data, directives) = (records(data), records(&d));
    move |id| Request::Log {
        id,
        data,
        directives,
    }
}

/// Longest abort message carried whole. A process that aborts must not be
/// refused for the length of its diagnostic: a longer message is cut (at a
/// character boundary) and says so, leaving room in the frame for the
/// targets.
const MAX_ABORT_MESSAGE: usize = 64 << 10;

fn abort_message(msg: &str) -> String {
    if msg.len() <= MAX_ABORT_MESSAGE {
        return msg.to_owned();
    }
    let mut end = MAX_ABORT_MESSAGE;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [{} bytes cut]", &msg[..end], msg.len() - end)
}
