//! `PMIx_Spawn`, `PMIx_Connect`, `PMIx_Disconnect`, blocking and
//! non-blocking: numbered requests to the node server, which hands them to
//! its host (`server::dpm`: a spawn at once, a connect or disconnect once
//! every participant on this node called). Answers take the path of the
//! job-management calls (`src/client/jobs.rs`).
//!
//! No application, an application without a command, or no participants
//! are `PMIX_ERR_BAD_PARAM` at once, with no round trip and no callback.

use super::jobs::Outcome;
use super::Client;
use crate::types::{attrs, find_info, App, Info, Nspace, Proc, Status};
use crate::wire::control::{AppRecord, Request};
use crate::wire::{info_to_record, proc_to_record};

/// What a spawn returns: the host's status and the new job's namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct Spawned {
    /// `PMIX_SUCCESS`, or why the job was not started.
    pub status: Status,
    /// The new job's namespace (when the host named one).
    pub nspace: Option<Nspace>,
}

impl Spawned {
    fn of(o: Outcome) -> Spawned {
        let nspace = find_info(&o.results, &attrs::PMIX_NSPACE)
            .and_then(|i| i.value.as_str())
            .and_then(|s| Nspace::new(s).ok());
        Spawned {
            status: o.status,
            nspace,
        }
    }
}

impl Client {
    /// `PMIx_Spawn`: starts `apps` as one new job.
    pub fn spawn(&self, job_info: &[Info], apps: &[App]) -> Spawned {
        match spawn_req(job_info, apps) {
            Ok(req) => Spawned::of(self.blocking(req)),
            Err(s) => Spawned {
                status: s,
                nspace: None,
            },
        }
    }

    /// `PMIx_Spawn_nb`: `SUCCESS` means `cb` will run.
    pub fn spawn_nb(
        &self,
        job_info: &[Info],
        apps: &[App],
        cb: impl FnOnce(Spawned) + Send + 'static,
    ) -> Status {
        match spawn_req(job_info, apps) {
            Ok(req) => self.non_blocking(req, move |o| cb(Spawned::of(o))),
            Err(s) => s,
        }
    }

    /// `PMIx_Connect`: returns once every participant called it and the
    /// host completed the collective.
    pub fn connect(&self, procs: &[Proc], info: &[Info]) -> Outcome {
        match connect_req(procs, info, false) {
            Ok(req) => self.blocking(req),
            Err(s) => Outcome::err(s),
        }
    }

    /// `PMIx_Connect_nb`: `SUCCESS` means `cb` will run.
    pub fn connect_nb(
        &self,
        procs: &[Proc],
        info: &[Info],
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        match connect_req(procs, info, false) {
            Ok(req) => self.non_blocking(req, cb),
            Err(s) => s,
        }
    }

    /// `PMIx_Disconnect`: as [`Client::connect`].
    pub fn disconnect(&self, procs: &[Proc], info: &[Info]) -> Outcome {
        match connect_req(procs, info, true) {
            Ok(req) => self.blocking(req),
            Err(s) => Outcome::err(s),
        }
    }

    /// `PMIx_Disconnect_nb`: `SUCCESS` means `cb` will run.
    pub fn disconnect_nb(
        &self,
        procs: &[Proc],
        info: &[Info],
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        match connect_req(procs, info, true) {
            Ok(req) => self.non_blocking(req, cb),
            Err(s) => s,
        }
    }
}

fn spawn_req(job_info: &[Info], apps: &[App]) -> Result<impl FnOnce(u64) -> Request, Status> {
    if apps.is_empty() || apps.iter().any(|a| a.cmd.is_empty() || a.maxprocs < 0) {
        return Err(Status::ERR_BAD_PARAM);
    }
    let job_info = job_info.iter().map(info_to_record).collect();
    let apps = apps
        .iter()
        .map(|a| AppRecord {
            cmd: a.cmd.clone(),
            argv: a.argv.clone(),
            env: a.env.clone(),
            cwd: a.cwd.clone(),
            maxprocs: a.maxprocs,
            info: a.info.iter().map(info_to_record).collect(),
        })
        .collect();
    Ok(move |id| Request::Spawn { id, job_info, apps })
}

fn connect_req(
    procs: &[Proc],
    info: &[Info],
    disconnect: bool,
) -> Result<impl FnOnce(u64) -> Request, Status> {
    if procs.is_empty() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let procs = procs.iter().map(proc_to_record).collect();
    let info = info.iter().map(info_to_record).collect();
    Ok(move |id| Request::Connect {
        id,
        disconnect,
        procs,
        info,
    })
}
