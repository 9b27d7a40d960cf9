//! `PMIx_Query_info`: what a node server can answer from its own state.
//!
//! A query is a list of keys and a list of qualifiers; every key of every
//! query is answered on its own. The answer is one info per answered key,
//! whose key is the query key and whose value is the answer, in the order
//! asked; the call's status is `PMIX_SUCCESS` when every key was answered,
//! `PMIX_ERR_PARTIAL_SUCCESS` when some were, `PMIX_ERR_NOT_FOUND` when
//! none were. A key we cannot answer (unknown, or about a namespace or
//! process we do not know) is simply not answered: never a failed call.
//!
//! | key | qualifiers | answer |
//! |---|---|---|
//! | `PMIX_QUERY_NAMESPACES` | — | `char*`: the registered namespaces, comma-separated, sorted |
//! | `PMIX_QUERY_NAMESPACE_INFO` | — | an info array, one `PMIX_QUERY_NAMESPACE_INFO` element per namespace holding `PMIX_NSPACE`, `PMIX_JOB_SIZE` (when known), `PMIX_JOBID` (when registered), `PMIX_LOCAL_SIZE` (registered local clients) |
//! | `PMIX_JOB_SIZE` | `PMIX_NSPACE` (default: the caller's) | `uint32_t` |
//! | `PMIX_QUERY_PROC_TABLE` | `PMIX_NSPACE` (default: the caller's) | `pmix_proc_info_t` array: every rank of the job |
//! | `PMIX_QUERY_LOCAL_PROC_TABLE` | `PMIX_NSPACE` (default: the caller's) | `pmix_proc_info_t` array: the ranks registered on this node |
//! | `PMIX_QUERY_NUM_PSETS` | — | `size_t` 0 (no process sets) |
//! | `PMIX_QUERY_PSET_NAMES` | — | `char*` "" |
//! | `PMIX_QUERY_MEMORY_USAGE` | `PMIX_PROCID`, or `PMIX_NSPACE` + `PMIX_RANK` (default: the caller) | an info array of `PMIX_PROC_RESOURCE_USAGE` (one per local target, from /proc) |
//! | `PMIX_QUERY_ATTRIBUTE_SUPPORT` | `PMIX_CLIENT_ATTRIBUTES` / `PMIX_SERVER_ATTRIBUTES`: function names, comma-separated, or "all" (default: all client functions) | an info array: per function, its name → a string array of the attribute keys it supports |
//!
//! A caller sees only the namespaces that have a registered client of its
//! own uid (all of them when it runs as root or as the server's user).
//!
//! `PMIX_QUERY_REFRESH_CACHE` is accepted and changes nothing (every
//! answer is read from the server's state at the time). `PMIX_QUERY_ALLOC_STATUS`
//! is not answered: no host upcall reports an allocation's status.

use super::{Ns, Shared};
use crate::types::find_info;
use crate::types::{attrs, DataArray, Info, Key, Nspace, Proc, ProcInfo, Rank, Status, Value};
use crate::wire::info_from_archived;
use rkyv::string::ArchivedString;
use rkyv::vec::ArchivedVec;
use shm_layout::record::ArchivedInfoRecord;

/// One query of `PMIx_Query_info` (`pmix_query_t`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// The keys asked (at least one).
    pub keys: Vec<String>,
    /// Qualifiers (`PMIX_NSPACE`, `PMIX_PROCID`, ...).
    pub qualifiers: Vec<Info>,
}

impl Query {
    /// A query of `keys` without qualifiers.
    pub fn new<S: Into<String>>(keys: impl IntoIterator<Item = S>) -> Query {
        Query {
            keys: keys.into_iter().map(Into::into).collect(),
            qualifiers: Vec::new(),
        }
    }

    /// Adds a qualifier.
    pub fn qualifier(mut self, i: Info) -> Query {
        self.qualifiers.push(i);
        self
    }
}

/// `PMIX_PROC_STATE_CONNECTED`.
const STATE_CONNECTED: u8 = 6;
/// `PMIX_PROC_STATE_TERMINATED`.
const STATE_TERMINATED: u8 = 20;
/// `PMIX_PROC_STATE_TERM_WO_SYNC`: left without `PMIx_Finalize`.
const STATE_TERM_WO_SYNC: u8 = 55;

/// The keys this module answers (`PMIX_QUERY_ATTRIBUTE_SUPPORT` of
/// `PMIx_Query_info`).
pub const QUERY_KEYS: &[Key] = &[
    attrs::PMIX_QUERY_NAMESPACES,
    attrs::PMIX_QUERY_NAMESPACE_INFO,
    attrs::PMIX_JOB_SIZE,
    attrs::PMIX_QUERY_PROC_TABLE,
    attrs::PMIX_QUERY_LOCAL_PROC_TABLE,
    attrs::PMIX_QUERY_NUM_PSETS,
    attrs::PMIX_QUERY_PSET_NAMES,
    attrs::PMIX_QUERY_MEMORY_USAGE,
    attrs::PMIX_QUERY_ATTRIBUTE_SUPPORT,
    attrs::PMIX_QUERY_REFRESH_CACHE,
    attrs::PMIX_NSPACE,
    attrs::PMIX_RANK,
    attrs::PMIX_PROCID,
    attrs::PMIX_CLIENT_ATTRIBUTES,
    attrs::PMIX_SERVER_ATTRIBUTES,
];

/// The keys `PMIx_Get` answers from job information (registered or
/// derived: [`super::jobkeys`]).
pub const GET_KEYS: &[Key] = &[
    attrs::PMIX_NSPACE,
    attrs::PMIX_RANK,
    attrs::PMIX_JOBID,
    attrs::PMIX_JOB_SIZE,
    attrs::PMIX_UNIV_SIZE,
    attrs::PMIX_MAX_PROCS,
    attrs::PMIX_APP_SIZE,
    attrs::PMIX_NUM_NODES,
    attrs::PMIX_NODE_LIST,
    attrs::PMIX_LOCAL_SIZE,
    attrs::PMIX_LOCAL_PEERS,
    attrs::PMIX_LOCALLDR,
    attrs::PMIX_LOCAL_RANK,
    attrs::PMIX_NODE_RANK,
    attrs::PMIX_APPNUM,
    attrs::PMIX_APPLDR,
    attrs::PMIX_APP_RANK,
    attrs::PMIX_GLOBAL_RANK,
    attrs::PMIX_HOSTNAME,
    attrs::PMIX_NODEID,
    attrs::PMIX_NODE_MAP,
    attrs::PMIX_PROC_MAP,
    attrs::PMIX_TMPDIR,
    attrs::PMIX_NSDIR,
    attrs::PMIX_PROCDIR,
    attrs::PMIX_CPUSET,
    attrs::PMIX_LOCAL_CPUSETS,
];

/// Decodes a `Query` request's lists (as many qualifier lists as key
/// lists, or `PMIX_ERR_BAD_PARAM`).
pub(super) fn decode(
    keys: &ArchivedVec<ArchivedVec<ArchivedString>>,
    qualifiers: &ArchivedVec<ArchivedVec<ArchivedInfoRecord>>,
) -> Result<Vec<Query>, Status> {
    if keys.len() != qualifiers.len() {
        return Err(Status::ERR_BAD_PARAM);
    }
    keys.iter()
        .zip(qualifiers.iter())
        .map(|(k, q)| {
            Ok(Query {
                keys: k.iter().map(|s| s.as_str().to_owned()).collect(),
                qualifiers: q.iter().map(info_from_archived).collect::<Result<_, _>>()?,
            })
        })
        .collect()
}

/// Answers `queries` from `caller`, whose socket peer runs as `uid` (see
/// the module's table). A node server may hold the jobs of several users:
/// a caller sees the namespaces with a client of its own uid, unless it
/// runs as root or as the server's user, who see them all.
pub(super) fn answer(
    shared: &Shared,
    caller: &Proc,
    uid: u32,
    queries: &[Query],
) -> (Status, Vec<Info>) {
    let all = shared.nspaces();
    let sees_all = uid == 0 || uid == shared.euid;
    let nspaces: Nspaces = all
        .iter()
        .filter(|(_, ns)| sees_all || ns.clients.values().any(|c| c.uid == uid))
        .map(|(n, ns)| (*n, ns))
        .collect();
    let mut asked = 0usize;
    let mut out = Vec::new();
    for q in queries {
        for k in &q.keys {
            asked += 1;
            let Ok(key) = Key::new(k) else {
                continue;
            };
            let v = one(&nspaces, caller, &key, &q.qualifiers);
            if let Some(v) = v {
                out.push(Info::new(key, v));
            }
        }
    }
    let status = match out.len() {
        0 => Status::ERR_NOT_FOUND,
        n if n < asked => Status::ERR_PARTIAL_SUCCESS,
        _ => Status::SUCCESS,
    };
    (status, out)
}

fn qualifier<'a>(q: &'a [Info], key: &Key) -> Option<&'a Value> {
    find_info(q, key).map(|i| &i.value)
}

/// The namespace a query names (`PMIX_NSPACE`, or `PMIX_PROCID`'s), else
/// the caller's.
fn target_ns(caller: &Proc, q: &[Info]) -> Option<Nspace> {
    if let Some(v) = qualifier(q, &attrs::PMIX_NSPACE) {
        return v.as_str().and_then(|s| Nspace::new(s).ok());
    }
    if let Some(Value::Proc(p)) = qualifier(q, &attrs::PMIX_PROCID) {
        return Some(p.nspace);
    }
    Some(caller.nspace)
}

/// The namespaces a caller may see.
type Nspaces<'a> = crate::types::fasthash::FastMap<Nspace, &'a Ns>;

fn one(nspaces: &Nspaces, caller: &Proc, key: &Key, q: &[Info]) -> Option<Value> {
    let k = key;
    if *k == attrs::PMIX_QUERY_NAMESPACES {
        let mut names: Vec<&str> = nspaces.keys().map(Nspace::as_str).collect();
        names.sort_unstable();
        return Some(Value::String(names.join(",")));
    }
    if *k == attrs::PMIX_QUERY_NAMESPACE_INFO {
        let mut names: Vec<&Nspace> = nspaces.keys().collect();
        names.sort_unstable_by_key(|n| n.as_str());
        let v = names
            .into_iter()
            .map(|n| {
                let ns = nspaces[n];
                let mut d = vec![Info::new(attrs::PMIX_NSPACE, n.as_str())];
                if let Some(size) = job_size(ns) {
                    d.push(Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(size)));
                }
                if let Some(id) = job_level(ns, &attrs::PMIX_JOBID) {
                    d.push(Info::new(attrs::PMIX_JOBID, id.clone()));
                }
                let local = u32::try_from(ns.clients.len()).unwrap_or(u32::MAX);
                d.push(Info::new(attrs::PMIX_LOCAL_SIZE, Value::Uint32(local)));
                Info::new(
                    attrs::PMIX_QUERY_NAMESPACE_INFO,
                    Value::DataArray(DataArray::Info(d)),
                )
            })
            .collect();
        return Some(Value::DataArray(DataArray::Info(v)));
    }
    if *k == attrs::PMIX_JOB_SIZE {
        let ns = nspaces.get(&target_ns(caller, q)?)?;
        return job_size(ns).map(Value::Uint32);
    }
    if *k == attrs::PMIX_QUERY_PROC_TABLE || *k == attrs::PMIX_QUERY_LOCAL_PROC_TABLE {
        let name = target_ns(caller, q)?;
        let ns = nspaces.get(&name)?;
        let local_only = *k == attrs::PMIX_QUERY_LOCAL_PROC_TABLE;
        return Some(Value::DataArray(DataArray::ProcInfo(proc_table(
            &name, ns, local_only,
        ))));
    }
    if *k == attrs::PMIX_QUERY_NUM_PSETS {
        return Some(Value::Size(0));
    }
    if *k == attrs::PMIX_QUERY_PSET_NAMES {
        return Some(Value::String(String::new()));
    }
    if *k == attrs::PMIX_QUERY_MEMORY_USAGE {
        return memory_usage(nspaces, caller, q);
    }
    if *k == attrs::PMIX_QUERY_ATTRIBUTE_SUPPORT {
        return attribute_support(q);
    }
    None
}

fn job_level<'a>(ns: &'a Ns, key: &Key) -> Option<&'a Value> {
    find_info(&ns.info, key).map(|i| &i.value)
}

/// The job's size: registered (or derived from the maps at registration),
/// else the number of registered clients when there are any.
fn job_size(ns: &Ns) -> Option<u32> {
    ns.job_size()
        .or_else(|| u32::try_from(ns.clients.len()).ok().filter(|n| *n > 0))
}

fn proc_table(name: &Nspace, ns: &Ns, local_only: bool) -> Vec<ProcInfo> {
    let map = &ns.job_map;
    let mut ranks: Vec<u32> = ns.clients.keys().map(|r| r.0).collect();
    if !local_only {
        ranks.extend(0..job_size(ns).unwrap_or(0));
        ranks.extend(map.ranks.iter().flatten().copied());
    }
    ranks.sort_unstable();
    ranks.dedup();
    ranks
        .into_iter()
        .map(|r| {
            let proc = Proc {
                nspace: *name,
                rank: Rank(r),
            };
            let hostname = map
                .lookup(&ns.info, Rank(r), &attrs::PMIX_HOSTNAME)
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let mut p = ProcInfo {
                proc,
                hostname,
                executable: String::new(),
                pid: 0,
                exit_code: 0,
                state: 0,
            };
            if let Some(c) = ns.clients.get(&Rank(r)) {
                p.pid = c.pid.unwrap_or(0);
                p.state = if c.entry.is_some() {
                    STATE_CONNECTED
                } else if c.finalized || c.ended {
                    STATE_TERMINATED
                } else if c.ever_connected {
                    STATE_TERM_WO_SYNC
                } else {
                    0
                };
                if c.entry.is_some() && p.pid > 0 {
                    p.executable = std::fs::read_link(format!("/proc/{}/exe", p.pid))
                        .map(|e| e.display().to_string())
                        .unwrap_or_default();
                }
            }
            p
        })
        .collect()
}

/// The local processes a memory-usage query names (default: the caller).
fn memory_usage(nspaces: &Nspaces, caller: &Proc, q: &[Info]) -> Option<Value> {
    let targets: Vec<Proc> = if let Some(Value::Proc(p)) = qualifier(q, &attrs::PMIX_PROCID) {
        vec![**p]
    } else if qualifier(q, &attrs::PMIX_NSPACE).is_some()
        || qualifier(q, &attrs::PMIX_RANK).is_some()
    {
        let ns = target_ns(caller, q)?;
        match qualifier(q, &attrs::PMIX_RANK).and_then(Value::as_integer) {
            Some(r) if r >= 0 && r < i128::from(Rank::VALID.0) => vec![Proc {
                nspace: ns,
                rank: Rank(r as u32),
            }],
            _ => {
                let mut rs: Vec<Rank> = nspaces.get(&ns)?.clients.keys().copied().collect();
                rs.sort_unstable_by_key(|r| r.0);
                rs.into_iter()
                    .map(|rank| Proc { nspace: ns, rank })
                    .collect()
            }
        }
    } else {
        vec![*caller]
    };
    let v: Vec<Info> = targets
        .iter()
        .filter_map(|p| {
            let pid = nspaces.get(&p.nspace)?.clients.get(&p.rank)?.pid?;
            let usage = crate::job::usage::proc_usage(pid, Some(p), &[]).ok()?;
            Some(Info::new(
                attrs::PMIX_PROC_RESOURCE_USAGE,
                Value::DataArray(DataArray::Info(usage)),
            ))
        })
        .collect();
    (!v.is_empty()).then_some(Value::DataArray(DataArray::Info(v)))
}

/// The client functions whose attributes we report, with the keys each
/// supports.
fn client_function(name: &str) -> Option<Vec<String>> {
    let keys: &[Key] = match name {
        "PMIx_Get" => GET_KEYS,
        "PMIx_Query_info" | "PMIx_Query_info_nb" => QUERY_KEYS,
        _ => return None,
    };
    Some(keys.iter().map(|k| k.as_str().to_owned()).collect())
}

const CLIENT_FUNCTIONS: &[&str] = &["PMIx_Get", "PMIx_Query_info", "PMIx_Query_info_nb"];

fn attribute_support(q: &[Info]) -> Option<Value> {
    let client = qualifier(q, &attrs::PMIX_CLIENT_ATTRIBUTES).and_then(Value::as_str);
    let server = qualifier(q, &attrs::PMIX_SERVER_ATTRIBUTES).and_then(Value::as_str);
    let names: Vec<&str> = match (client, server) {
        (None, None) => CLIENT_FUNCTIONS.to_vec(),
        (c, _) => match c {
            Some("all") => CLIENT_FUNCTIONS.to_vec(),
            Some(list) => list.split(',').map(str::trim).collect(),
            None => Vec::new(),
        },
    };
    let v: Vec<Info> = names
        .into_iter()
        .filter_map(|n| {
            let keys = client_function(n)?;
            Some(Info::new(
                Key::new(n).ok()?,
                Value::DataArray(DataArray::String(keys)),
            ))
        })
        .collect();
    (!v.is_empty()).then_some(Value::DataArray(DataArray::Info(v)))
}
