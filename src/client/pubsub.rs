//! `PMIx_Publish`, `PMIx_Lookup`, `PMIx_Unpublish`, blocking and
//! non-blocking: numbered requests to the node server, which hands them to
//! its host's data server with this process as the publisher
//! (`server::pubsub`). Answers take the path of the job-management calls
//! (`src/client/jobs.rs`): a callback runs on the library's callback
//! thread, never before the call returned.
//!
//! Arguments the request cannot carry (nothing to publish, no key, a key
//! longer than `PMIX_MAX_KEYLEN`) are `PMIX_ERR_BAD_PARAM` at once, with
//! no round trip and no callback.

use super::jobs::Outcome;
use super::Client;
use crate::server::pubsub::pdata_from_infos;
use crate::types::{Info, Key, PData, Status};
use crate::wire::control::Request;
use crate::wire::info_to_record;

/// What a lookup returns: the host's status and the items it found, each
/// with its publisher.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// `PMIX_SUCCESS`, or the host's error (`PMIX_ERR_NOT_FOUND`, ...).
    pub status: Status,
    /// The items found.
    pub data: Vec<PData>,
}

impl Found {
    fn of(o: Outcome) -> Found {
        Found {
            status: o.status,
            data: pdata_from_infos(o.results),
        }
    }

    fn err(s: Status) -> Found {
        Found {
            status: s,
            data: Vec::new(),
        }
    }
}

impl Client {
    /// `PMIx_Publish`: `info` holds the items and the directives
    /// (`PMIX_RANGE`, `PMIX_PERSISTENCE`, `PMIX_TIMEOUT`).
    pub fn publish(&self, info: &[Info]) -> Outcome {
        match publish_req(info) {
            Ok(req) => self.blocking(req),
            Err(s) => Outcome::err(s),
        }
    }

    /// `PMIx_Publish_nb`: `SUCCESS` means `cb` will run.
    pub fn publish_nb(&self, info: &[Info], cb: impl FnOnce(Outcome) + Send + 'static) -> Status {
        match publish_req(info) {
            Ok(req) => self.non_blocking(req, cb),
            Err(s) => s,
        }
    }

    /// `PMIx_Lookup` of `keys` (directives: `PMIX_RANGE`, `PMIX_WAIT`,
    /// `PMIX_TIMEOUT`).
    pub fn lookup<K: AsRef<str>>(&self, keys: &[K], info: &[Info]) -> Found {
        match keys_req(keys, info, false) {
            Ok(req) => Found::of(self.blocking(req)),
            Err(s) => Found::err(s),
        }
    }

    /// `PMIx_Lookup_nb`: `SUCCESS` means `cb` will run.
    pub fn lookup_nb<K: AsRef<str>>(
        &self,
        keys: &[K],
        info: &[Info],
        cb: impl FnOnce(Found) + Send + 'static,
    ) -> Status {
        match keys_req(keys, info, false) {
            Ok(req) => self.non_blocking(req, move |o| cb(Found::of(o))),
            Err(s) => s,
        }
    }

    /// `PMIx_Unpublish` of `keys` (none: everything this process
    /// published).
    pub fn unpublish<K: AsRef<str>>(&self, keys: &[K], info: &[Info]) -> Outcome {
        match keys_req(keys, info, true) {
            Ok(req) => self.blocking(req),
            Err(s) => Outcome::err(s),
        }
    }

    /// `PMIx_Unpublish_nb`: `SUCCESS` means `cb` will run.
    pub fn unpublish_nb<K: AsRef<str>>(
        &self,
        keys: &[K],
        info: &[Info],
        cb: impl FnOnce(Outcome) + Send + 'static,
    ) -> Status {
        match keys_req(keys, info, true) {
            Ok(req) => self.non_blocking(req, cb),
            Err(s) => s,
        }
    }
}

fn publish_req(info: &[Info]) -> Result<impl FnOnce(u64) -> Request, Status> {
    if info.is_empty() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let info = info.iter().map(info_to_record).collect();
    Ok(move |id| Request::Publish { id, info })
}

/// A lookup's (`unpublish` false: at least one key) or an unpublish's
/// request.
fn keys_req<K: AsRef<str>>(
    keys: &[K],
    info: &[Info],
    unpublish: bool,
) -> Result<impl FnOnce(u64) -> Request, Status> {
    let keys: Vec<String> = keys.iter().map(|k| k.as_ref().to_owned()).collect();
    if (keys.is_empty() && !unpublish) || keys.iter().any(|k| k.is_empty() || Key::new(k).is_err())
    {
        return Err(Status::ERR_BAD_PARAM);
    }
    let info = info.iter().map(info_to_record).collect();
    Ok(move |id| {
        if unpublish {
            Request::Unpublish { id, keys, info }
        } else {
            Request::Lookup { id, keys, info }
        }
    })
}
