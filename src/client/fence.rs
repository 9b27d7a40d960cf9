//! `PMIx_Fence` and `PMIx_Fence_nb`: a barrier, carried out by the server
//! (`server/fence.rs` has the semantics: local participants there, other
//! nodes' through the host; with `PMIX_COLLECT_DATA` the other nodes' data
//! lands in the namespace's store, where `client/data.rs` reads it).
//!
//! A numbered request on the control socket, answered by a `Result` once
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
        match self.fence_req(procs, info) {
            Ok(req) => self.non_blocking(req, move |o| cb(o.status)),
            Err(s) => s,
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
