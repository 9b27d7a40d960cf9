//! `PMIx_Query_info` and `PMIx_Query_info_nb`: a numbered request to the
//! node server, answered from its state (`server::query` has the keys and
//! the answers), like the job-management calls: the non-blocking callback
//! runs on the library's callback thread, never before the call returned.
//!
//! No query, or a query without keys (or with an empty key), is
//! `PMIX_ERR_BAD_PARAM` at once, without a round trip.

use super::jobs::Outcome;
use super::Client;
use crate::server::query::Query;
use crate::types::Status;
use crate::wire::control::Request;
use crate::wire::info_to_record;

impl Client {
    /// `PMIx_Query_info`: the status is `PMIX_SUCCESS` (every key
    /// answered), `PMIX_ERR_PARTIAL_SUCCESS` (some) or `PMIX_ERR_NOT_FOUND`
    /// (none); the results hold one info per answered key.
    pub fn query(&self, queries: &[Query]) -> Outcome {
        match query_req(queries) {
            Ok(req) => self.blocking(req),
            Err(s) => Outcome::err(s),
        }
    }

    /// `PMIx_Query_info_nb`: `SUCCESS` means `cb` will run with the
    /// answer; any other status is the outcome, and `cb` never runs.
    pub fn query_nb(&self, queries: &[Query], cb: impl FnOnce(Outcome) + Send + 'static) -> Status {
        match query_req(queries) {
            Ok(req) => self.non_blocking(req, cb),
            Err(s) => s,
        }
    }
}

fn query_req(queries: &[Query]) -> Result<impl FnOnce(u64) -> Request, Status> {
    if queries.is_empty()
        || queries
            .iter()
            .any(|q| q.keys.is_empty() || q.keys.iter().any(String::is_empty))
    {
        return Err(Status::ERR_BAD_PARAM);
    }
    let keys = queries.iter().map(|q| q.keys.clone()).collect();
    let qualifiers = queries
        .iter()
        .map(|q| q.qualifiers.iter().map(info_to_record).collect())
        .collect();
    Ok(move |id| Request::Query {
        id,
        keys,
        qualifiers,
    })
}
