//! `PMIx_Fence` and `PMIx_Fence_nb`: a barrier, carried out by the server
//! (`server/fence.rs` has the semantics: local participants there, other
//! nodes' through the host; with `PMIX_COLLECT_DATA` the other nodes' data
//! lands in the namespace's store, where `client/data.rs` reads it).
//!
//! A fence over this whole namespace, when all of it runs on this node,
//! goes through the namespace's barrier in shared memory instead
//! (`client/barrier.rs`). Any other:
//! a numbered request on the control socket, answered by a `Result` once
//! every participant entered (or the fence failed), like the
//! job-management calls: the non-blocking callback runs on the library's
//! callback thread, after the request was sent, never on the caller's
//! thread; a lost server completes it with `PMIX_ERR_UNREACH`. Attributes
//! the server would refuse (a wrongly typed or required unknown one) are
//! refused here at once, without a round trip.

use super::Client;
use crate::types::{Info, Proc, Rank, Status};
use crate::wire::control::Request;
use crate::wire::{info_to_record, proc_to_record};

impl Client {
    /// `PMIx_Fence`: returns once every participant has entered the same
    /// fence. `procs` empty = every process of this namespace (as a
    /// wildcard rank does).
    pub fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Status> {
        self.live()?;
        let opts = crate::server::fence_options(info)?;
        if let Some(r) = self.fence_barrier(procs, opts.timeout) {
            return r;
        }
        let req = self.fence_req(procs, info)?;
        self.blocking(req).status.into_result()
    }

    /// `PMIx_Fence_nb`: `SUCCESS` means `cb` will run with the fence's
    /// outcome; any other status is the outcome, and `cb` never runs.
    pub fn fence_nb(
        &self,
        procs: &[Proc],
        info: &[Info],
        cb: impl FnOnce(Status) + Send + 'static,
    ) -> Status {
        if let Err(s) = self.live() {
            return s;
        }
        let opts = match crate::server::fence_options(info) {
            Ok(o) => o,
            Err(s) => return s,
        };
        let done = match self.fence_nb_barrier(procs, info, opts.timeout, Box::new(cb)) {
            Ok(s) => return s,
            Err(done) => done,
        };
        match self.fence_nb_server(procs, info, done) {
            Ok(()) => Status::SUCCESS,
            Err((s, _)) => s,
        }
    }

    /// `fence_nb` through the server; on an error `done` is handed back
    /// (it will not run).
    #[allow(clippy::type_complexity)]
    pub(super) fn fence_nb_server(
        &self,
        procs: &[Proc],
        info: &[Info],
        done: Box<dyn FnOnce(Status) + Send>,
    ) -> Result<(), (Status, Box<dyn FnOnce(Status) + Send>)> {
        let req = match self.fence_req(procs, info) {
            Ok(r) => r,
            Err(s) => return Err((s, done)),
        };
        // The waiter owns `done` once the request was sent; a request that
        // could not be sent hands it back through this slot.
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(done)));
        let mine = slot.clone();
        let s = self.non_blocking(req, move |o| {
            if let Some(d) = crate::sync::lock(&mine).take() {
                d(o.status)
            }
        });
        if s.is_success() {
            return Ok(());
        }
        let back = crate::sync::lock(&slot).take();
        match back {
            Some(d) => Err((s, d)),
            None => Ok(()),
        }
    }

    fn fence_req(
        &self,
        procs: &[Proc],
        info: &[Info],
    ) -> Result<impl FnOnce(u64) -> Request, Status> {
        self.live()?;
        crate::server::fence_options(info)?;
        let procs = if procs.is_empty() {
            vec![proc_to_record(&Proc {
                nspace: self.me().nspace,
                rank: Rank::WILDCARD,
            })]
        } else {
            procs.iter().map(proc_to_record).collect()
        };
        let info = info.iter().map(info_to_record).collect();
        Ok(move |id| Request::Fence { id, procs, info })
    }
}
