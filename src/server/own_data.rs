//! The server process's own data: `PMIx_Store_internal` and `PMIx_Get`
//! called by the host daemon itself (not by a client). A runtime such as
//! Open MPI's `mpirun`/`orted` keeps its daemons' contact URIs and routing
//! data this way: it stores them under its own and its peers' names
//! (`PMIX_PROC_URI`, …) and reads them back by name, or asks for every
//! key of a process at once (`PMIx_Get` with a NULL key, answered as one
//! `PMIX_DATA_ARRAY` of infos, which it then sends to other daemons).
//!
//! Nothing here is visible to clients: the Standard makes
//! `PMIx_Store_internal` data local to the calling process.

use crate::sync::lock;
use crate::types::{DataArray, Info, Key, Proc, Rank, Status, Value};
use std::sync::Mutex;

/// One process's stored keys, in storage order.
type Stored = Vec<(Key, Value)>;

/// Values stored by the server process, per process, in storage order (a
/// second store of a key replaces the first in place).
#[derive(Default)]
pub(crate) struct OwnData {
    by_proc: Mutex<Vec<(Proc, Stored)>>,
}

impl OwnData {
    /// `PMIx_Store_internal(proc, key, value)`.
    pub fn store(&self, proc: &Proc, key: &str, value: Value) -> Result<(), Status> {
        if key.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let key = Key::new(key)?;
        let mut all = lock(&self.by_proc);
        let i = match all.iter().position(|(p, _)| p == proc) {
            Some(i) => i,
            None => {
                all.push((*proc, Vec::new()));
                all.len() - 1
            }
        };
        let kvs = &mut all[i].1;
        match kvs.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => kvs.push((key, value)),
        }
        Ok(())
    }

    /// `PMIx_Get(proc, key)` in the server process: the stored value, or
    /// with no key every key stored for `proc` as a data array of infos.
    /// A wildcard or undefined rank looks through every rank of the
    /// namespace (as a client's Get does). `PMIX_ERR_NOT_FOUND` when
    /// nothing was stored.
    pub fn get(&self, proc: &Proc, key: Option<&str>) -> Result<Value, Status> {
        let all = lock(&self.by_proc);
        let matches = |p: &Proc| {
            p.nspace == proc.nspace
                && (p.rank == proc.rank || proc.rank == Rank::WILDCARD || proc.rank == Rank::UNDEF)
        };
        match key {
            Some(k) => all
                .iter()
                .filter(|(p, _)| matches(p))
                .find_map(|(_, kvs)| kvs.iter().find(|(key, _)| key.as_str() == k))
                .map(|(_, v)| v.clone())
                .ok_or(Status::ERR_NOT_FOUND),
            None => {
                let infos: Vec<Info> = all
                    .iter()
                    .filter(|(p, _)| p == proc)
                    .flat_map(|(_, kvs)| kvs.iter())
                    .map(|(k, v)| Info::new(k.clone(), v.clone()))
                    .collect();
                if infos.is_empty() {
                    return Err(Status::ERR_NOT_FOUND);
                }
                Ok(Value::DataArray(DataArray::Info(infos)))
            }
        }
    }
}

impl super::Server {
    /// `PMIx_Store_internal` called by the host process itself.
    pub fn store_internal(&self, proc: &Proc, key: &str, value: Value) -> Result<(), Status> {
        self.shared.own_data.store(proc, key, value)
    }

    /// `PMIx_Get` called by the host process itself (see [`OwnData::get`]).
    pub fn get_own(&self, proc: &Proc, key: Option<&str>) -> Result<Value, Status> {
        self.shared.own_data.get(proc, key)
    }
}
