//! Resource-usage monitors: which processes, the node, disks or network
//! interfaces a `PMIX_MONITOR_*_RESOURCE_USAGE` request names (resolved
//! against registered clients and authorised for the requester), and one
//! sample of them read from /proc in the Standard's layout.

use super::directives::{strings, wanted};
use super::Shared;
use crate::job::usage;
use crate::types::find_info;
use crate::types::{attrs, DataArray, Info, Key, Proc, Rank, Status, Value};

/// What a resource-usage monitor samples.
#[derive(Clone)]
pub(super) enum UsageReq {
    Procs(Vec<(Option<Proc>, i32)>, Vec<Key>),
    Node(Vec<Key>),
    Disks(Vec<String>, Vec<Key>),
    Nets(Vec<String>, Vec<Key>),
}

/// The resource-usage request `monitor` describes, with its targets
/// resolved and authorised (`None`: not a resource-usage monitor).
pub(super) fn usage_request(
    shared: &Shared,
    uid: u32,
    monitor: &Info,
    dirs: &[Info],
) -> Result<Option<UsageReq>, (Status, String)> {
    let k = &monitor.key;
    let want = wanted(&monitor.value);
    let list = |key: &Key| {
        find_info(dirs, key)
            .and_then(|i| strings(&i.value))
            .unwrap_or_default()
    };
    if *k == attrs::PMIX_MONITOR_NODE_RESOURCE_USAGE {
        return Ok(Some(UsageReq::Node(want)));
    }
    if *k == attrs::PMIX_MONITOR_DISK_RESOURCE_USAGE {
        return Ok(Some(UsageReq::Disks(
            list(&attrs::PMIX_MONITOR_TARGET_DISKS),
            want,
        )));
    }
    if *k == attrs::PMIX_MONITOR_NETWORK_RESOURCE_USAGE {
        return Ok(Some(UsageReq::Nets(
            list(&attrs::PMIX_MONITOR_TARGET_NETS),
            want,
        )));
    }
    if *k != attrs::PMIX_MONITOR_PROC_RESOURCE_USAGE {
        return Ok(None);
    }
    let mut procs: Vec<(Option<Proc>, i32)> = Vec::new();
    let ns = shared.nspaces();
    let allowed = |u: u32| uid == 0 || u == uid;
    let procs_given =
        find_info(dirs, &attrs::PMIX_MONITOR_TARGET_PROCS).map(|i| i.value.as_procs());
    let pids_given = find_info(dirs, &attrs::PMIX_MONITOR_TARGET_PIDS);
    if let Some(ps) = procs_given.clone() {
        let ps = ps.ok_or((
            Status::ERR_BAD_PARAM,
            "PMIX_MONITOR_TARGET_PROCS holds procs".to_string(),
        ))?;
        for p in ps {
            let x = ns
                .get(&p.nspace)
                .ok_or((Status::ERR_NOT_FOUND, format!("{p} is not on this node")))?;
            let ranks: Vec<Rank> = if p.rank == Rank::WILDCARD {
                x.clients.keys().copied().collect()
            } else {
                vec![p.rank]
            };
            for r in ranks {
                let c = x.clients.get(&r).ok_or((
                    Status::ERR_NOT_FOUND,
                    format!("{p} is not a process of this node"),
                ))?;
                if !allowed(c.uid) {
                    return Err((
                        Status::ERR_NO_PERMISSIONS,
                        format!("uid {uid} may not watch uid {}", c.uid),
                    ));
                }
                match c.pid {
                    Some(pid) => procs.push((
                        Some(Proc {
                            nspace: p.nspace,
                            rank: r,
                        }),
                        pid,
                    )),
                    // A wildcard covers the ranks that run; a rank named
                    // alone would otherwise vanish from every sample.
                    None if p.rank != Rank::WILDCARD => {
                        return Err((
                            Status::ERR_NOT_FOUND,
                            format!("{p} is registered but has no process connected"),
                        ))
                    }
                    None => {}
                }
            }
        }
    }
    if let Some(i) = pids_given {
        let pids: Vec<i32> = match &i.value {
            Value::DataArray(DataArray::Uint32(v)) => v.iter().map(|p| *p as i32).collect(),
            Value::DataArray(DataArray::Info(v)) => v
                .iter()
                .filter_map(|i| i.value.as_integer())
                .map(|p| p as i32)
                .collect(),
            v => v.as_integer().map(|p| vec![p as i32]).unwrap_or_default(),
        };
        for pid in pids {
            let owner = std::fs::metadata(format!("/proc/{pid}"))
                .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
                .map_err(|_| (Status::ERR_NOT_FOUND, format!("no process {pid}")))?;
            if !allowed(owner) {
                return Err((
                    Status::ERR_NO_PERMISSIONS,
                    format!("uid {uid} may not watch pid {pid}"),
                ));
            }
            procs.push((None, pid));
        }
    }
    if procs_given.is_none() && pids_given.is_none() {
        // Every process of the session on this node that may be seen.
        for (n, x) in ns.iter() {
            for (r, c) in &x.clients {
                if let (Some(pid), true) = (c.pid, allowed(c.uid)) {
                    procs.push((
                        Some(Proc {
                            nspace: *n,
                            rank: *r,
                        }),
                        pid,
                    ));
                }
            }
        }
        procs.sort_by_key(|(p, _)| p.map(|p| (p.nspace.as_str().to_owned(), p.rank.0)));
    }
    Ok(Some(UsageReq::Procs(procs, want)))
}

/// One sample, in the Standard's layout: one info per process, node, disk
/// or interface, each an info array whose first element identifies it.
pub(super) fn sample(req: &UsageReq) -> Result<Vec<Info>, (Status, String)> {
    let wrap = |k: Key, v: Vec<Info>| Info::new(k, Value::DataArray(DataArray::Info(v)));
    let fail = |what: String| move |s: Status| (s, what.clone());
    Ok(match req {
        UsageReq::Procs(procs, want) => {
            let mut out = Vec::new();
            for (p, pid) in procs {
                match usage::proc_usage(*pid, p.as_ref(), want) {
                    Ok(v) => out.push(wrap(attrs::PMIX_PROC_RESOURCE_USAGE, v)),
                    // Gone between resolution and sampling: nothing to report.
                    Err(Status::ERR_NOT_FOUND) => {}
                    Err(s) => return Err((s, format!("cannot read /proc/{pid}"))),
                }
            }
            out
        }
        UsageReq::Node(want) => vec![wrap(
            attrs::PMIX_NODE_RESOURCE_USAGE,
            usage::node_usage(want).map_err(fail("cannot read node usage".into()))?,
        )],
        UsageReq::Disks(d, want) => usage::disk_usage(d, want)
            .map_err(fail(format!("no such disk in {d:?}")))?
            .into_iter()
            .map(|v| wrap(attrs::PMIX_DISK_RESOURCE_USAGE, v))
            .collect(),
        UsageReq::Nets(n, want) => usage::net_usage(n, want)
            .map_err(fail(format!("no such interface in {n:?}")))?
            .into_iter()
            .map(|v| wrap(attrs::PMIX_NETWORK_RESOURCE_USAGE, v))
            .collect(),
    })
}
