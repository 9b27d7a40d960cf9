//! The job information a launcher of one node registers for a namespace:
//! what an ordinary PMIx program reads with `PMIx_Get` (`fastpmix run`
//! registers exactly this, plus its job-record file).
//!
//! Job-level entries, then one `PMIX_PROC_INFO_ARRAY` (`PMIX_PROC_DATA`)
//! per rank, the Standard's way of registering per-process data with
//! `PMIx_server_register_nspace` (OpenPMIx reads it the same way): a data
//! array of infos whose first entry is `PMIX_RANK`.

use super::regex::{generate_ppn, generate_regex};
use crate::types::{attrs, DataArray, Info, Nspace, Rank, Status, Value};

/// Job information for `nprocs` processes of `ns`, all on this node
/// (`hostname`, node id 0), one application (number 0), local rank = node
/// rank = rank. `tmpdir` is `PMIX_TMPDIR`. `PMIX_ERR_BAD_PARAM` beyond
/// 65 536 processes: local ranks are `uint16_t`.
pub fn single_node(
    ns: &Nspace,
    nprocs: u32,
    hostname: &str,
    tmpdir: &str,
) -> Result<Vec<Info>, Status> {
    if nprocs > u32::from(u16::MAX) + 1 {
        return Err(Status::ERR_BAD_PARAM);
    }
    let ranks: Vec<String> = (0..nprocs).map(|r| r.to_string()).collect();
    let peers = ranks.join(",");
    let n = Value::Uint32(nprocs);
    let mut info = vec![
        Info::new(attrs::PMIX_NSPACE, ns.as_str()),
        Info::new(attrs::PMIX_JOBID, ns.as_str()),
        Info::new(attrs::PMIX_JOB_SIZE, n.clone()),
        Info::new(attrs::PMIX_UNIV_SIZE, n.clone()),
        Info::new(attrs::PMIX_LOCAL_SIZE, n.clone()),
        Info::new(attrs::PMIX_MAX_PROCS, n.clone()),
        Info::new(attrs::PMIX_APP_SIZE, n),
        Info::new(attrs::PMIX_NUM_NODES, Value::Uint32(1)),
        Info::new(attrs::PMIX_NODEID, Value::Uint32(0)),
        Info::new(attrs::PMIX_HOSTNAME, hostname),
        Info::new(attrs::PMIX_LOCAL_PEERS, peers.clone()),
        Info::new(attrs::PMIX_NODE_MAP, generate_regex(hostname)),
        Info::new(attrs::PMIX_PROC_MAP, generate_ppn(&peers)),
        Info::new(attrs::PMIX_TMPDIR, tmpdir),
    ];
    for r in 0..nprocs {
        let local = Value::Uint16(r as u16); // bounded above
        let pdata = vec![
            Info::new(attrs::PMIX_RANK, Value::Rank(Rank(r))),
            Info::new(attrs::PMIX_LOCAL_RANK, local.clone()),
            Info::new(attrs::PMIX_NODE_RANK, local),
            Info::new(attrs::PMIX_APPNUM, Value::Uint32(0)),
            Info::new(attrs::PMIX_HOSTNAME, hostname),
            Info::new(attrs::PMIX_NODEID, Value::Uint32(0)),
        ];
        info.push(Info::new(
            attrs::PMIX_PROC_INFO_ARRAY,
            Value::DataArray(DataArray::Info(pdata)),
        ));
    }
    Ok(info)
}

/// Adds the ranks' CPU bindings to job information made by [`single_node`]:
/// `PMIX_LOCAL_CPUSETS`, the CPU lists of every rank in rank order joined
/// by `:`, and each rank's `PMIX_CPUSET` in its `PMIX_PROC_INFO_ARRAY`,
/// with its `PMIX_LOCALITY_STRING` when hwloc can describe the CPUs
/// ([`crate::place::locality_string`]).
/// `cpusets[r]` is rank `r`'s. A client's placement reads them: a peer's
/// core is no place for its progress thread.
pub fn add_cpusets(info: &mut Vec<Info>, cpusets: &[Vec<u32>]) {
    let lists: Vec<String> = cpusets.iter().map(|c| crate::place::ranges(c)).collect();
    for i in info.iter_mut() {
        if i.key != attrs::PMIX_PROC_INFO_ARRAY {
            continue;
        }
        if let Value::DataArray(DataArray::Info(pdata)) = &mut i.value {
            let rank = pdata.iter().find_map(|e| match e.value {
                Value::Rank(Rank(r)) if e.key == attrs::PMIX_RANK => Some(r as usize),
                _ => None,
            });
            if let Some(list) = rank.and_then(|r| lists.get(r)) {
                pdata.push(Info::new(attrs::PMIX_CPUSET, list.as_str()));
            }
            // Where hwloc can tell, the rank's locality too.
            if let Some(l) = rank
                .and_then(|r| cpusets.get(r))
                .and_then(|c| crate::place::locality_string(c).ok())
                .filter(|l| !l.is_empty())
            {
                pdata.push(Info::new(attrs::PMIX_LOCALITY_STRING, l));
            }
        }
    }
    info.push(Info::new(attrs::PMIX_LOCAL_CPUSETS, lists.join(":")));
}

/// Adds the namespace's directory and each rank's to job information made
/// by [`single_node`]: creates `nsdir` and `nsdir/<rank>` (mode 0700, for
/// the job's own user), registers `PMIX_NSDIR` and each rank's
/// `PMIX_PROCDIR` in its `PMIX_PROC_INFO_ARRAY`. The caller removes them
/// when the job ends. An existing `nsdir` is refused (`AlreadyExists`): it
/// must be the caller's fresh directory.
pub fn add_dirs(info: &mut Vec<Info>, nsdir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let mut b = std::fs::DirBuilder::new();
    b.mode(0o700);
    b.create(nsdir)?;
    for i in info.iter_mut() {
        if i.key != attrs::PMIX_PROC_INFO_ARRAY {
            continue;
        }
        if let Value::DataArray(DataArray::Info(pdata)) = &mut i.value {
            let rank = pdata.iter().find_map(|e| match e.value {
                Value::Rank(Rank(r)) if e.key == attrs::PMIX_RANK => Some(r),
                _ => None,
            });
            if let Some(r) = rank {
                let d = nsdir.join(r.to_string());
                b.create(&d)?;
                pdata.push(Info::new(attrs::PMIX_PROCDIR, d.display().to_string()));
            }
        }
    }
    info.push(Info::new(attrs::PMIX_NSDIR, nsdir.display().to_string()));
    Ok(())
}
