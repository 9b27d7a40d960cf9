//! `PMIx_Get` for the job information the server registered: served from
//! this process's copy (received in its `Welcome`), no round trip.
//!
//! Resolution, for a process of this namespace:
//! - `PMIX_NSPACE` is the namespace; `PMIX_RANK` of this process is its
//!   rank (both known without any registered data);
//! - a specific rank: that rank's `PMIX_PROC_INFO_ARRAY` (`PMIX_PROC_DATA`)
//!   first, then the job-level entries;
//! - the wildcard, `PMIX_RANK_UNDEF` or another special rank: job-level
//!   entries only.
//!
//! Another namespace is `PMIX_ERR_NOT_FOUND`: no data crosses namespaces
//! yet. So is an unknown key. An empty key, or one longer than
//! `PMIX_MAX_KEYLEN` or holding a NUL, is `PMIX_ERR_BAD_PARAM`.

use super::Client;
use crate::types::{attrs, DataArray, Info, Key, Proc, Rank, Status, Value};

impl Client {
    /// `PMIx_Get` of `key` about `proc` (see the module's resolution rules).
    /// Works while the server is unreachable (the data is local); after
    /// [`Client::finalize`] it is `PMIX_ERR_INIT`.
    pub fn get(&self, proc: &Proc, key: &str) -> Result<Value, Status> {
        if self.inner.stop.is_set() {
            return Err(Status::ERR_INIT);
        }
        if key.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let key = Key::new(key)?;
        let me = self.me();
        if proc.nspace != me.nspace {
            return Err(Status::ERR_NOT_FOUND);
        }
        if key == attrs::PMIX_NSPACE {
            return Ok(Value::String(me.nspace.as_str().to_owned()));
        }
        if key == attrs::PMIX_RANK && *proc == me {
            return Ok(Value::Rank(me.rank));
        }
        let info = self.job_info();
        if proc.rank.is_real() {
            if let Some(v) = proc_data(info, proc.rank).and_then(|d| find(d, &key)) {
                return Ok(v.clone());
            }
        }
        // Per-process arrays are not job-level values.
        info.iter()
            .find(|i| i.key == key && key != attrs::PMIX_PROC_INFO_ARRAY)
            .map(|i| i.value.clone())
            .ok_or(Status::ERR_NOT_FOUND)
    }
}

/// The `PMIX_PROC_INFO_ARRAY` whose `PMIX_RANK` is `rank`.
fn proc_data(info: &[Info], rank: Rank) -> Option<&[Info]> {
    info.iter()
        .filter(|i| i.key == attrs::PMIX_PROC_INFO_ARRAY)
        .find_map(|i| match &i.value {
            Value::DataArray(DataArray::Info(d))
                if d.iter().any(|x| {
                    x.key == attrs::PMIX_RANK && x.value.as_integer() == Some(rank.0.into())
                }) =>
            {
                Some(d.as_slice())
            }
            _ => None,
        })
}

fn find<'a>(d: &'a [Info], key: &Key) -> Option<&'a Value> {
    d.iter().find(|i| i.key == *key).map(|i| &i.value)
}
