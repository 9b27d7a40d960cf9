//! Clients registered before their namespace. Open MPI's daemons
//! (`orted`, and `mpirun` for its own node) call
//! `PMIx_server_register_client` for each local rank while they assemble
//! the namespace's job information, and `PMIx_server_register_nspace`
//! after. OpenPMIx accepts that order; so does the C ABI here: such a
//! client is remembered and registered when its namespace arrives. The
//! Rust API keeps its strict order ([`super::Server::register_client`]
//! refuses an unknown namespace with `PMIX_ERR_NOT_FOUND`);
//! [`super::Server::register_client_any_order`] is the C ABI's entry.

use crate::sync::lock;
use crate::types::{Nspace, Proc, Rank, Status};
use std::collections::HashMap;
use std::sync::Mutex;

/// One early client: its rank and credentials.
type Early = (Rank, u32, u32);

#[derive(Default)]
pub(crate) struct EarlyClients(pub(super) Mutex<HashMap<Nspace, Vec<Early>>>);

impl super::Server {
    /// `register_client`, or, while `proc`'s namespace is not registered,
    /// a promise to register it when it is (the credentials of a later
    /// call for the same rank replace an earlier one's).
    pub fn register_client_any_order(&self, proc: &Proc, uid: u32, gid: u32) -> Result<(), Status> {
        // Held across the attempt: `admit_early_clients` takes the list
        // only after the namespace is in the table, so a client is either
        // registered here or found there, never lost between.
        let mut early = lock(&self.shared.early.0);
        match self.register_client(proc, uid, gid) {
            Err(Status::ERR_NOT_FOUND) => {
                let list = early.entry(proc.nspace).or_default();
                list.retain(|(r, _, _)| *r != proc.rank);
                list.push((proc.rank, uid, gid));
                Ok(())
            }
            r => r,
        }
    }

    /// Forgets an early client; whether there was one.
    pub fn forget_early_client(&self, proc: &Proc) -> bool {
        let mut early = lock(&self.shared.early.0);
        let Some(list) = early.get_mut(&proc.nspace) else {
            return false;
        };
        let before = list.len();
        list.retain(|(r, _, _)| *r != proc.rank);
        let found = list.len() != before;
        if list.is_empty() {
            early.remove(&proc.nspace);
        }
        found
    }

    /// Registers the clients that came before namespace `ns` (called once
    /// `ns` is registered). A refusal is said on stderr: the host heard
    /// success for them already.
    pub(super) fn admit_early_clients(&self, ns: &Nspace) {
        let Some(list) = lock(&self.shared.early.0).remove(ns) else {
            return;
        };
        for (rank, uid, gid) in list {
            let p = Proc { nspace: *ns, rank };
            if let Err(e) = self.register_client(&p, uid, gid) {
                self.shared.say(&format!(
                    "client {p}, registered before its namespace, refused when the namespace came: {e:?}"
                ));
            }
        }
    }
}
