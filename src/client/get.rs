//! The job-information part of `PMIx_Get` (`data.rs` has the whole
//! call): what the server registered, served from this process's copy
//! (received in its `Welcome`), no round trip.
//!
//! Resolution, for a process of this namespace:
//! - `PMIX_NSPACE` is the namespace; `PMIX_RANK` of this process is its
//!   rank (both known without any registered data);
//! - a specific rank: that rank's `PMIX_PROC_INFO_ARRAY` (`PMIX_PROC_DATA`)
//!   first, then what the node and proc maps say of it, then the job-level
//!   entries whose meaning is the same for that rank (never this node's
//!   hostname, id, local size... for a rank on another node):
//!   [`crate::server::jobkeys::JobMap::lookup`];
//! - the wildcard, `PMIX_RANK_UNDEF` or another special rank: job-level
//!   entries only.
//!
//! Another namespace's job information is the server's to answer
//! (`data.rs` asks it); here it is `PMIX_ERR_NOT_FOUND`, as is an unknown
//! key.

use super::Client;
use crate::types::{attrs, Key, Nspace, Proc, Rank, Status, Value};

impl Client {
    /// The job information part of `PMIx_Get` (see the module's
    /// resolution rules): what the server registered for this namespace.
    pub(super) fn job_get(&self, proc: &Proc, key: &Key) -> Result<Value, Status> {
        let me = self.me();
        if proc.nspace != me.nspace {
            return Err(Status::ERR_NOT_FOUND);
        }
        if *key == attrs::PMIX_NSPACE {
            return Ok(Value::String(me.nspace.as_str().to_owned()));
        }
        if *key == attrs::PMIX_RANK && *proc == me {
            return Ok(Value::Rank(me.rank));
        }
        let info = self.job_info();
        if proc.rank.is_real() {
            return self
                .inner
                .job_map
                .lookup(info, proc.rank, key)
                .ok_or(Status::ERR_NOT_FOUND);
        }
        // Per-process and per-node arrays are not job-level values.
        info.iter()
            .find(|i| {
                i.key == *key
                    && *key != attrs::PMIX_PROC_INFO_ARRAY
                    && *key != attrs::PMIX_NODE_INFO_ARRAY
            })
            .map(|i| i.value.clone())
            .ok_or(Status::ERR_NOT_FOUND)
    }
}

impl Client {
    /// `PMIx_Resolve_peers`: the processes of this client's namespace
    /// (`nspace` `None`: every namespace it knows, which is its own) that
    /// run on `node` (`None`: this node), in rank order, from the job's
    /// node and process maps. `PMIX_ERR_NOT_FOUND` for another namespace or
    /// a node that hosts none of them.
    pub fn resolve_peers(
        &self,
        node: Option<&str>,
        nspace: Option<&Nspace>,
    ) -> Result<Vec<Proc>, Status> {
        let me = self.me();
        if nspace.is_some_and(|n| *n != me.nspace) {
            return Err(Status::ERR_NOT_FOUND);
        }
        let host = |rank: Rank| -> Option<String> {
            match self.job_get(
                &Proc {
                    nspace: me.nspace,
                    rank,
                },
                &attrs::PMIX_HOSTNAME,
            ) {
                Ok(Value::String(h)) => Some(h),
                _ => None,
            }
        };
        let node = match node {
            Some(n) => n.to_owned(),
            None => host(me.rank).ok_or(Status::ERR_NOT_FOUND)?,
        };
        let peers: Vec<Proc> = (0..self.job_size()?)
            .map(|r| Proc {
                nspace: me.nspace,
                rank: Rank(r),
            })
            .filter(|p| host(p.rank).is_some_and(|h| h == node))
            .collect();
        if peers.is_empty() {
            return Err(Status::ERR_NOT_FOUND);
        }
        Ok(peers)
    }

    /// `PMIx_Resolve_nodes`: the nodes that host processes of this client's
    /// namespace (`None`: every namespace it knows), comma-separated: the
    /// job's `PMIX_NODE_LIST`, else the nodes of its ranks in rank order.
    pub fn resolve_nodes(&self, nspace: Option<&Nspace>) -> Result<String, Status> {
        let me = self.me();
        if nspace.is_some_and(|n| *n != me.nspace) {
            return Err(Status::ERR_NOT_FOUND);
        }
        let job = Proc {
            nspace: me.nspace,
            rank: Rank::WILDCARD,
        };
        if let Ok(Value::String(list)) = self.job_get(&job, &attrs::PMIX_NODE_LIST) {
            return Ok(list);
        }
        let mut nodes: Vec<String> = Vec::new();
        for r in 0..self.job_size()? {
            if let Ok(Value::String(h)) = self.job_get(
                &Proc {
                    nspace: me.nspace,
                    rank: Rank(r),
                },
                &attrs::PMIX_HOSTNAME,
            ) {
                if !nodes.contains(&h) {
                    nodes.push(h);
                }
            }
        }
        if nodes.is_empty() {
            return Err(Status::ERR_NOT_FOUND);
        }
        Ok(nodes.join(","))
    }

    /// The job's size (`PMIX_JOB_SIZE`).
    fn job_size(&self) -> Result<u32, Status> {
        let job = Proc {
            nspace: self.me().nspace,
            rank: Rank::WILDCARD,
        };
        self.job_get(&job, &attrs::PMIX_JOB_SIZE)?
            .as_integer()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or(Status::ERR_NOT_FOUND)
    }
}
