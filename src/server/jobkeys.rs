//! The keys an MPI library reads at start, derived from whatever a host
//! registered: its node and proc maps (our own regex, or the plain lists a
//! host stores as `PMIX_STRING`), `PMIX_LOCAL_PEERS`, and the per-process
//! (`PMIX_PROC_DATA`) and per-node (`PMIX_NODE_INFO_ARRAY`) arrays.
//!
//! Two halves:
//! - [`normalize`] runs once, when a namespace is registered: integer
//!   values of the wrong integer type are converted to the Standard's type
//!   when they fit (Slurm loads `PMIX_RANK`, `PMIX_APPNUM`, `PMIX_APPLDR` as
//!   `int`); the job-level keys the maps imply and the host left out are
//!   added (`PMIX_NUM_NODES`, `PMIX_NODE_LIST`, job, universe and maximum
//!   size, in a one-application job the application's size and
//!   `PMIX_JOB_NUM_APPS` 1, this node's hostname, id, local peers, size and
//!   leader); and a
//!   per-process `PMIX_NODEID` that contradicts the maps is corrected (Slurm
//!   puts this node's id in every rank's array).
//! - [`JobMap::lookup`] answers a `PMIx_Get` for one rank from the
//!   per-process array first, then from the maps (node id, hostname, local
//!   and node rank of any rank; local size, peers and leader of any node),
//!   then from the job level, but only for keys whose job-level value means
//!   the same thing for that rank: a per-process or per-node key of a rank
//!   on another node never takes this node's value.
//!
//! Node ids are positions in the node map (as every host we know builds
//! it: Slurm's and OpenPMIx's node ids are their node list's order). The
//! local and node rank of a process are its position among its node's
//! ranks in ascending order (the only job on the node, as far as this
//! namespace can tell).

use super::regex::{parse_node_map, parse_proc_map};
use crate::types::attrs::{self, AttrType};
use crate::types::find_info;
use crate::types::{DataArray, Info, Key, Rank, Value};
use std::collections::HashMap;

/// Keys whose value belongs to one process: a rank's lookup never takes
/// them from the job level, except [`NODE_KEYS_OF_THIS_NODE`] for a rank on
/// this node.
const PROC_KEYS: &[Key] = &[
    attrs::PMIX_RANK,
    attrs::PMIX_LOCAL_RANK,
    attrs::PMIX_NODE_RANK,
    attrs::PMIX_GLOBAL_RANK,
    attrs::PMIX_APP_RANK,
    attrs::PMIX_APPNUM,
    attrs::PMIX_APPLDR,
    attrs::PMIX_CPUSET,
    attrs::PMIX_LOCALITY_STRING,
    attrs::PMIX_PROCDIR,
    attrs::PMIX_PROC_PID,
    attrs::PMIX_EXIT_CODE,
    attrs::PMIX_PROCID,
    attrs::PMIX_HOSTNAME,
    attrs::PMIX_NODEID,
];

/// Keys whose job-level value describes this node.
const NODE_KEYS: &[Key] = &[
    attrs::PMIX_LOCAL_SIZE,
    attrs::PMIX_LOCAL_PEERS,
    attrs::PMIX_LOCALLDR,
    attrs::PMIX_NODE_SIZE,
    attrs::PMIX_LOCAL_CPUSETS,
];

/// Per-process keys whose job-level value is this node's (hostname, id):
/// right for a rank on this node.
const NODE_KEYS_OF_THIS_NODE: &[Key] = &[attrs::PMIX_HOSTNAME, attrs::PMIX_NODEID];

/// Where the ranks of a job are, as far as the registered data tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobMap {
    /// Node names in map order (the position is the node id).
    pub nodes: Vec<String>,
    /// The ranks on each node, ascending.
    pub ranks: Vec<Vec<u32>>,
    /// Rank → (node id, position on its node).
    place: HashMap<u32, (u32, u32)>,
    /// This node's id, when the data says which node is this one.
    pub local: Option<u32>,
    /// The local peers (`PMIX_LOCAL_PEERS`, else the local node's ranks).
    pub local_peers: Vec<u32>,
    /// More than one application (some process's `PMIX_APPNUM` is not 0,
    /// or `PMIX_JOB_NUM_APPS` > 1).
    pub multi_app: bool,
}

fn job_level<'a>(info: &'a [Info], key: &Key) -> Option<&'a Value> {
    find_info(info, key).map(|i| &i.value)
}

fn csv_ranks(s: &str) -> Option<Vec<u32>> {
    if s.trim().is_empty() {
        return Some(Vec::new());
    }
    s.split(',').map(|r| r.trim().parse().ok()).collect()
}

fn csv(r: &[u32]) -> String {
    r.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// The per-process arrays of `info`, each with its rank.
fn proc_arrays(info: &[Info]) -> impl Iterator<Item = (u32, &[Info])> {
    info.iter()
        .filter(|i| i.key == attrs::PMIX_PROC_INFO_ARRAY)
        .filter_map(|i| match &i.value {
            Value::DataArray(DataArray::Info(d)) => {
                let r = d
                    .iter()
                    .find(|x| x.key == attrs::PMIX_RANK)
                    .and_then(|x| x.value.as_integer())
                    .and_then(|r| u32::try_from(r).ok())?;
                Some((r, d.as_slice()))
            }
            _ => None,
        })
}

/// The `PMIX_NODE_INFO_ARRAY` of node `id` named `name`.
fn node_array<'a>(info: &'a [Info], id: u32, name: &str) -> Option<&'a [Info]> {
    info.iter()
        .filter(|i| i.key == attrs::PMIX_NODE_INFO_ARRAY)
        .find_map(|i| match &i.value {
            Value::DataArray(DataArray::Info(d))
                if d.iter().any(|x| {
                    (x.key == attrs::PMIX_NODEID && x.value.as_integer() == Some(id.into()))
                        || (x.key == attrs::PMIX_HOSTNAME && x.value.as_str() == Some(name))
                }) =>
            {
                Some(d.as_slice())
            }
            _ => None,
        })
}

impl JobMap {
    /// Reads the maps and local peers of registered job information.
    /// Maps that do not parse, or disagree in their node count, are
    /// ignored (the keys they would give are then not found).
    pub fn from_info(info: &[Info]) -> JobMap {
        let mut m = JobMap::default();
        let nodes = job_level(info, &attrs::PMIX_NODE_MAP)
            .and_then(Value::as_str)
            .and_then(|s| parse_node_map(s).ok());
        let ranks = job_level(info, &attrs::PMIX_PROC_MAP)
            .and_then(Value::as_str)
            .and_then(|s| parse_proc_map(s).ok());
        if let (Some(nodes), Some(mut ranks)) = (nodes, ranks) {
            if nodes.len() == ranks.len() && u32::try_from(nodes.len()).is_ok() {
                for (n, rs) in ranks.iter_mut().enumerate() {
                    rs.sort_unstable();
                    rs.dedup();
                    for (pos, r) in rs.iter().enumerate() {
                        m.place.entry(*r).or_insert((n as u32, pos as u32));
                    }
                }
                m.nodes = nodes;
                m.ranks = ranks;
            }
        }
        let peers = job_level(info, &attrs::PMIX_LOCAL_PEERS)
            .and_then(Value::as_str)
            .and_then(csv_ranks);
        // This node: by hostname, else by the host's node id, else the node
        // holding the first local peer.
        let host = job_level(info, &attrs::PMIX_HOSTNAME).and_then(Value::as_str);
        let id = job_level(info, &attrs::PMIX_NODEID)
            .and_then(Value::as_integer)
            .and_then(|i| u32::try_from(i).ok());
        m.local = host
            .and_then(|h| m.nodes.iter().position(|n| n == h))
            .map(|p| p as u32)
            .or(id.filter(|i| (*i as usize) < m.nodes.len()))
            .or_else(|| {
                peers
                    .as_ref()
                    .and_then(|p| p.first())
                    .and_then(|r| m.place.get(r))
                    .map(|p| p.0)
            });
        m.local_peers = match (peers, m.local) {
            (Some(mut p), _) => {
                p.sort_unstable();
                p
            }
            (None, Some(l)) => m.ranks[l as usize].clone(),
            (None, None) => Vec::new(),
        };
        m.multi_app = job_level(info, &attrs::PMIX_JOB_NUM_APPS)
            .and_then(Value::as_integer)
            .is_some_and(|n| n > 1)
            || proc_arrays(info).any(|(_, d)| {
                d.iter().any(|x| {
                    x.key == attrs::PMIX_APPNUM && x.value.as_integer().is_some_and(|a| a != 0)
                })
            });
        m
    }

    /// Is `rank` on this node?
    pub fn is_local(&self, rank: u32) -> Option<bool> {
        if self.local_peers.binary_search(&rank).is_ok() {
            return Some(true);
        }
        match (self.place.get(&rank), self.local) {
            (Some((n, _)), Some(l)) => Some(*n == l),
            _ if !self.local_peers.is_empty() && self.place.is_empty() => Some(false),
            _ => None,
        }
    }

    /// The node id of `rank`, from the maps.
    pub fn node_of(&self, rank: u32) -> Option<u32> {
        self.place.get(&rank).map(|p| p.0)
    }

    /// Every rank the maps place.
    pub fn size(&self) -> usize {
        self.place.len()
    }

    /// Is `rank` a process of this job (placed by the maps, a local peer,
    /// or below the registered job size)? When the data says nothing of
    /// the job's extent, any rank may be.
    fn exists(&self, info: &[Info], rank: u32) -> bool {
        let size = job_level(info, &attrs::PMIX_JOB_SIZE)
            .and_then(Value::as_integer)
            .unwrap_or(0);
        (self.place.is_empty() && self.local_peers.is_empty() && size <= 0)
            || self.known(info, rank)
    }

    /// Does the data name `rank` as a process of this job?
    fn known(&self, info: &[Info], rank: u32) -> bool {
        let size = job_level(info, &attrs::PMIX_JOB_SIZE)
            .and_then(Value::as_integer)
            .unwrap_or(0);
        self.place.contains_key(&rank)
            || self.local_peers.binary_search(&rank).is_ok()
            || i128::from(rank) < size
    }

    /// A value of `key` derived from the maps for `rank`.
    fn derived(&self, info: &[Info], rank: u32, key: &Key) -> Option<Value> {
        let on_node = |n: u32| self.ranks.get(n as usize);
        let placed = self.place.get(&rank).copied();
        let local_pos = || {
            if self.is_local(rank) == Some(true) {
                self.local_peers.binary_search(&rank).ok().map(|p| p as u32)
            } else {
                None
            }
        };
        let k = key;
        // Per-process values only for a process of this job.
        if !self.exists(info, rank) {
            return None;
        }
        if *k == attrs::PMIX_RANK {
            return self.known(info, rank).then_some(Value::Rank(Rank(rank)));
        }
        if *k == attrs::PMIX_NODEID {
            return placed.map(|p| Value::Uint32(p.0));
        }
        if *k == attrs::PMIX_HOSTNAME {
            return placed.and_then(|p| self.nodes.get(p.0 as usize).cloned().map(Value::String));
        }
        if *k == attrs::PMIX_LOCAL_RANK || *k == attrs::PMIX_NODE_RANK {
            let pos = placed.map(|p| p.1).or_else(local_pos)?;
            return u16::try_from(pos).ok().map(Value::Uint16);
        }
        if !self.multi_app && self.known(info, rank) {
            if *k == attrs::PMIX_APPNUM {
                return Some(Value::Uint32(0));
            }
            if *k == attrs::PMIX_APP_RANK || *k == attrs::PMIX_GLOBAL_RANK {
                return Some(Value::Rank(Rank(rank)));
            }
            if *k == attrs::PMIX_APPLDR {
                return Some(Value::Rank(Rank(0)));
            }
        }
        // Node-level keys of the rank's node, when it is another node.
        let (n, _) = placed?;
        if Some(n) == self.local {
            return None; // the job level has them
        }
        let name = self.nodes.get(n as usize)?;
        if let Some(v) = node_array(info, n, name).and_then(|d| find_info(d, k)) {
            return Some(v.value.clone());
        }
        let rs = on_node(n)?;
        if *k == attrs::PMIX_LOCAL_SIZE {
            return u32::try_from(rs.len()).ok().map(Value::Uint32);
        }
        if *k == attrs::PMIX_LOCAL_PEERS {
            return Some(Value::String(csv(rs)));
        }
        if *k == attrs::PMIX_LOCALLDR {
            return rs.first().map(|r| Value::Rank(Rank(*r)));
        }
        None
    }

    /// `PMIx_Get(rank, key)` over registered job information `info`
    /// (normalized): the rank's `PMIX_PROC_DATA`, then what the maps say,
    /// then the job level for keys that mean the same for every rank (or,
    /// for this node's keys, for a rank on this node).
    pub fn lookup(&self, info: &[Info], rank: Rank, key: &Key) -> Option<Value> {
        let r = rank.0;
        if let Some(v) = proc_arrays(info)
            .find(|(pr, _)| *pr == r)
            .and_then(|(_, d)| find_info(d, key))
        {
            return Some(v.value.clone());
        }
        if let Some(v) = self.derived(info, r, key) {
            return Some(v);
        }
        let local = self.is_local(r);
        let this_node = NODE_KEYS.contains(key) || NODE_KEYS_OF_THIS_NODE.contains(key);
        if (this_node || PROC_KEYS.contains(key)) && !self.exists(info, r) {
            return None;
        }
        if this_node {
            // This node's value is this rank's only when the rank is here
            // (or the data knows of no other node).
            let here = local.unwrap_or(self.nodes.len() <= 1);
            return if here {
                job_level(info, key).cloned()
            } else {
                None
            };
        }
        if PROC_KEYS.contains(key) {
            return None;
        }
        if *key == attrs::PMIX_PROC_INFO_ARRAY || *key == attrs::PMIX_NODE_INFO_ARRAY {
            return None;
        }
        job_level(info, key).cloned()
    }
}

/// `v` converted to `ty` when it is an integer of another integer type
/// that fits; `None` when it needs no conversion or cannot take one.
fn convert(v: &Value, ty: AttrType) -> Option<Value> {
    let i = v.as_integer()?;
    let out = match ty {
        AttrType::Uint16 if !matches!(v, Value::Uint16(_)) => Value::Uint16(i.try_into().ok()?),
        AttrType::Uint32 if !matches!(v, Value::Uint32(_)) => Value::Uint32(i.try_into().ok()?),
        AttrType::RankT if !matches!(v, Value::Rank(_)) => Value::Rank(Rank(i.try_into().ok()?)),
        AttrType::Uint64 if !matches!(v, Value::Uint64(_)) => Value::Uint64(i.try_into().ok()?),
        AttrType::Size if !matches!(v, Value::Size(_)) => Value::Size(i.try_into().ok()?),
        AttrType::Int if !matches!(v, Value::Int(_)) => Value::Int(i.try_into().ok()?),
        AttrType::Int32 if !matches!(v, Value::Int32(_)) => Value::Int32(i.try_into().ok()?),
        AttrType::Pid if !matches!(v, Value::Pid(_)) => Value::Pid(i.try_into().ok()?),
        _ => return None,
    };
    Some(out)
}

/// Converts, in place, the integer values of `info` (and of its
/// per-process and per-node arrays) to the types the Standard gives their
/// keys, when they fit; values that do not fit are left as they are.
fn convert_all(info: &mut [Info]) {
    for i in info.iter_mut() {
        if let Value::DataArray(DataArray::Info(inner)) = &mut i.value {
            if i.key == attrs::PMIX_PROC_INFO_ARRAY || i.key == attrs::PMIX_NODE_INFO_ARRAY {
                convert_all(inner);
            }
            continue;
        }
        if let Some(v) = i.key.attr_type().and_then(|t| convert(&i.value, t)) {
            i.value = v;
        }
    }
}

/// What a namespace's job information becomes at registration (see the
/// module's documentation): types converted, derived job-level keys
/// added where the host gave none, per-process node ids corrected.
pub fn normalize(mut info: Vec<Info>) -> Vec<Info> {
    convert_all(&mut info);
    let m = JobMap::from_info(&info);
    let has = |info: &[Info], k: &Key| find_info(info, k).is_some();
    let add = |info: &mut Vec<Info>, k: Key, v: Value| {
        if !has(info, &k) {
            info.push(Info::new(k, v));
        }
    };
    if !m.nodes.is_empty() {
        let n = m.nodes.len() as u32; // bounded in from_info
        add(&mut info, attrs::PMIX_NUM_NODES, Value::Uint32(n));
        add(
            &mut info,
            attrs::PMIX_NODE_LIST,
            Value::String(m.nodes.join(",")),
        );
        if let Ok(size) = u32::try_from(m.size()) {
            add(&mut info, attrs::PMIX_JOB_SIZE, Value::Uint32(size));
        }
    }
    // Universe and maximum size: the job's, when the host said no more.
    if let Some(size) = job_level(&info, &attrs::PMIX_JOB_SIZE).cloned() {
        add(&mut info, attrs::PMIX_UNIV_SIZE, size.clone());
        add(&mut info, attrs::PMIX_MAX_PROCS, size.clone());
        if !m.multi_app {
            add(&mut info, attrs::PMIX_APP_SIZE, size);
        }
    }
    if !m.multi_app {
        add(&mut info, attrs::PMIX_JOB_NUM_APPS, Value::Uint32(1));
    }
    if let Some(l) = m.local {
        add(&mut info, attrs::PMIX_NODEID, Value::Uint32(l));
        if let Some(name) = m.nodes.get(l as usize) {
            add(&mut info, attrs::PMIX_HOSTNAME, Value::String(name.clone()));
        }
    }
    if !m.local_peers.is_empty() {
        add(
            &mut info,
            attrs::PMIX_LOCAL_PEERS,
            Value::String(csv(&m.local_peers)),
        );
        if let Ok(n) = u32::try_from(m.local_peers.len()) {
            add(&mut info, attrs::PMIX_LOCAL_SIZE, Value::Uint32(n));
        }
        add(
            &mut info,
            attrs::PMIX_LOCALLDR,
            Value::Rank(Rank(m.local_peers[0])),
        );
    }
    // A per-process node id the maps contradict (Slurm gives every rank
    // this node's) is the maps'.
    for i in info.iter_mut() {
        if i.key != attrs::PMIX_PROC_INFO_ARRAY {
            continue;
        }
        let Value::DataArray(DataArray::Info(d)) = &mut i.value else {
            continue;
        };
        let Some(r) = d
            .iter()
            .find(|x| x.key == attrs::PMIX_RANK)
            .and_then(|x| x.value.as_integer())
            .and_then(|r| u32::try_from(r).ok())
        else {
            continue;
        };
        if let Some(n) = m.node_of(r) {
            for x in d.iter_mut() {
                if x.key == attrs::PMIX_NODEID && x.value.as_integer() != Some(n.into()) {
                    x.value = Value::Uint32(n);
                }
                if x.key == attrs::PMIX_HOSTNAME {
                    if let Some(name) = m.nodes.get(n as usize) {
                        if x.value.as_str() != Some(name) {
                            x.value = Value::String(name.clone());
                        }
                    }
                }
            }
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::regex::{generate_ppn, generate_regex};

    fn s(k: Key, v: &str) -> Info {
        Info::new(k, v)
    }

    /// Slurm's way: maps as strings from our own generators, `int` where
    /// the Standard says otherwise, every rank's node id this node's.
    fn slurm_like() -> Vec<Info> {
        let mut info = vec![
            s(attrs::PMIX_NODE_MAP, &generate_regex("n1,n2")),
            s(attrs::PMIX_PROC_MAP, &generate_ppn("0,1;2,3")),
            s(attrs::PMIX_LOCAL_PEERS, "0,1"),
            s(attrs::PMIX_HOSTNAME, "n1"),
            Info::new(attrs::PMIX_NODEID, Value::Uint32(0)),
            Info::new(attrs::PMIX_LOCAL_SIZE, Value::Int(2)),
        ];
        for r in 0..4 {
            let mut d = vec![
                Info::new(attrs::PMIX_RANK, Value::Int(r)),
                Info::new(attrs::PMIX_APPNUM, Value::Int(0)),
                Info::new(attrs::PMIX_NODEID, Value::Uint32(0)),
            ];
            if r < 2 {
                d.push(Info::new(attrs::PMIX_LOCAL_RANK, Value::Int(r)));
            }
            info.push(Info::new(
                attrs::PMIX_PROC_INFO_ARRAY,
                Value::DataArray(DataArray::Info(d)),
            ));
        }
        info
    }

    #[test]
    fn normalize_derives_node_count_list_and_fixes_types_and_node_ids() {
        let info = normalize(slurm_like());
        let m = JobMap::from_info(&info);
        let get = |r: u32, k: Key| m.lookup(&info, Rank(r), &k);
        assert_eq!(
            job_level(&info, &attrs::PMIX_NUM_NODES),
            Some(&Value::Uint32(2))
        );
        assert_eq!(
            job_level(&info, &attrs::PMIX_NODE_LIST),
            Some(&Value::String("n1,n2".into()))
        );
        assert_eq!(
            job_level(&info, &attrs::PMIX_LOCAL_SIZE),
            Some(&Value::Uint32(2))
        );
        assert_eq!(get(0, attrs::PMIX_RANK), Some(Value::Rank(Rank(0))));
        assert_eq!(get(1, attrs::PMIX_LOCAL_RANK), Some(Value::Uint16(1)));
        assert_eq!(get(3, attrs::PMIX_NODEID), Some(Value::Uint32(1)));
        assert_eq!(
            get(3, attrs::PMIX_HOSTNAME),
            Some(Value::String("n2".into()))
        );
        assert_eq!(get(3, attrs::PMIX_LOCAL_RANK), Some(Value::Uint16(1)));
        assert_eq!(get(2, attrs::PMIX_LOCAL_SIZE), Some(Value::Uint32(2)));
        assert_eq!(get(2, attrs::PMIX_LOCALLDR), Some(Value::Rank(Rank(2))));
        assert_eq!(
            get(2, attrs::PMIX_LOCAL_PEERS),
            Some(Value::String("2,3".into()))
        );
        assert_eq!(get(0, attrs::PMIX_LOCALLDR), Some(Value::Rank(Rank(0))));
        assert_eq!(
            get(0, attrs::PMIX_HOSTNAME),
            Some(Value::String("n1".into()))
        );
        assert_eq!(get(3, attrs::PMIX_CPUSET), None);
    }

    #[test]
    fn a_peer_on_another_node_never_gets_this_nodes_values() {
        // No maps: only local peers tell who is here.
        let info = normalize(vec![
            s(attrs::PMIX_LOCAL_PEERS, "0,1"),
            s(attrs::PMIX_HOSTNAME, "n1"),
            Info::new(attrs::PMIX_NODEID, Value::Uint32(0)),
        ]);
        let m = JobMap::from_info(&info);
        assert_eq!(
            m.lookup(&info, Rank(1), &attrs::PMIX_NODEID),
            Some(Value::Uint32(0))
        );
        assert_eq!(m.lookup(&info, Rank(5), &attrs::PMIX_NODEID), None);
        assert_eq!(m.lookup(&info, Rank(5), &attrs::PMIX_HOSTNAME), None);
        assert_eq!(m.lookup(&info, Rank(5), &attrs::PMIX_LOCAL_SIZE), None);
    }

    #[test]
    fn values_that_do_not_fit_keep_their_type() {
        let info = normalize(vec![Info::new(attrs::PMIX_LOCAL_SIZE, Value::Int(-1))]);
        assert_eq!(info[0].value, Value::Int(-1));
    }
}
