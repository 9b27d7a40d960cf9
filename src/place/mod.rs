//! hwloc-aware placement of progress threads.
//!
//! The thread that starts a server or a client decides where its progress
//! thread goes ([`plan`], while it still holds the process's own binding);
//! the progress thread applies that [`Plan`] to itself first thing
//! ([`apply`]). The machine's topology is loaded once per process through
//! hwloc (hwlocality) and cached: loading it costs milliseconds.
//!
//! # The rules (see `docs/architecture.md`, "Placement")
//!
//! [`Placement`] is `none`, `cpu:LIST` or `auto`. `auto` depends on the
//! [`Role`]:
//!
//! - **Server**: the last PU of the node within the caller's binding (a
//!   daemon confined by `taskset`, `numactl` or a cgroup stays inside it),
//!   or no pinning when that binding holds a single core. Launchers bind
//!   rank `r` to core `r` from the first, and unbound processes mostly
//!   start low: the last core is the one clients are least likely to use.
//! - **Client**: a PU in the same NUMA node, within the same package, as
//!   the process's binding, on a core that neither the binding, nor
//!   `OMP_PLACES`, nor a local peer's binding (when the host registered
//!   them) covers: the last such core, its last PU. When there is none (an
//!   unbound process covers every core) the thread is left unpinned: it is
//!   never pinned on top of a compute thread.
//!
//! A progress thread spins before it sleeps only when its plan says it
//! owns its core ([`Plan::owns_core`]); unpinned threads never spin.

mod affinity;
mod omp;
mod rule;
mod threads;

pub use affinity::{apply_affinity, cgroup_cpus, thread_cpus};
pub use omp::places_cpus;
pub use rule::{decide, decide_beside_peers, Machine, Plan, Role};
pub use threads::{process_cpus, progress_threads, ThreadPlace, PROGRESS_THREADS};

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::OnceLock;

use hwlocality::cpu::binding::{CpuBindingError, CpuBindingFlags};
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::errors::HybridError;
use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

use crate::types::Status;

/// Where a progress thread runs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Placement {
    /// Leave it to the OS scheduler (the binding is left as it is).
    #[default]
    None,
    /// Pin to these OS CPU indices (hwloc PU `os_index`, as `taskset` and
    /// `/proc/cpuinfo` number them), ascending, at least one. A CPU outside
    /// the topology's allowed set is an error.
    Cpus(Vec<u32>),
    /// hwloc chooses, by role: see the module documentation.
    Auto,
}

impl fmt::Display for Placement {
    /// The form [`FromStr`] reads back: `none`, `auto` or `cpu:LIST`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::None => f.write_str("none"),
            Placement::Auto => f.write_str("auto"),
            Placement::Cpus(cpus) => write!(f, "cpu:{}", ranges(cpus)),
        }
    }
}

/// A string that is not `none`, `auto` or `cpu:LIST`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsePlacementError {
    /// The rejected input.
    pub input: String,
}

impl fmt::Display for ParsePlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid placement {:?}: expected none, auto or cpu:LIST (OS CPU indices, e.g. cpu:3 or cpu:0-3,8)",
            self.input
        )
    }
}

impl std::error::Error for ParsePlacementError {}

impl FromStr for Placement {
    type Err = ParsePlacementError;

    /// Reads `none`, `auto` or `cpu:LIST` (see [`parse_cpu_list`]). Exact,
    /// lower-case spelling; nothing else is accepted.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParsePlacementError {
            input: s.to_owned(),
        };
        match s {
            "none" => Ok(Placement::None),
            "auto" => Ok(Placement::Auto),
            _ => {
                let list = s.strip_prefix("cpu:").ok_or_else(bad)?;
                parse_cpu_list(list).map(Placement::Cpus).ok_or_else(bad)
            }
        }
    }
}

impl Placement {
    /// The value of a `PMIX_BIND_PROGRESS_THREAD` attribute: the Standard's
    /// CPU list (`2`, `0-3,8`), or this crate's spelling (`none`, `auto`,
    /// `cpu:LIST`). `None` when it is neither.
    pub fn from_attribute(v: &str) -> Option<Placement> {
        match parse_cpu_list(v) {
            Some(cpus) => Some(Placement::Cpus(cpus)),
            None => v.parse().ok(),
        }
    }
}

/// Most CPUs a list may name (a bound on what a hostile value can cost).
const MAX_LIST: u64 = 1 << 16;

/// A CPU list as `PMIX_BIND_PROGRESS_THREAD` and `taskset -c` write it:
/// comma-separated OS indices and `a-b` ranges (`0-3,8`), decimal digits
/// only. Ascending and without repeats; `None` when malformed or empty.
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let num = |t: &str| -> Option<u32> {
        // u32::from_str also takes a leading '+': digits only here.
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let mut out = std::collections::BTreeSet::new();
    for part in s.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if a > b || out.len() as u64 + u64::from(b - a) >= MAX_LIST {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out.into_iter().collect())
}

/// Why [`pin_current_thread`] failed. Each variant names what failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlaceError {
    /// An hwloc call failed (or hwlocality panicked inside it).
    Call {
        /// The hwloc entry point, e.g. `hwloc_set_cpubind`.
        call: &'static str,
        /// What it reported.
        reason: String,
    },
    /// [`Placement::Cpu`] names a CPU that is not in the topology's allowed
    /// CPU set (it does not exist, or this process may not use it).
    NoSuchCpu {
        /// The CPU asked for.
        cpu: u32,
        /// The OS indices that are allowed.
        allowed: Vec<u32>,
    },
}

impl fmt::Display for PlaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlaceError::Call { call, reason } => write!(f, "{call} failed: {reason}"),
            PlaceError::NoSuchCpu { cpu, allowed } => write!(
                f,
                "cannot pin to CPU {cpu}: not in the allowed CPU set {{{}}}",
                ranges(allowed)
            ),
        }
    }
}

impl std::error::Error for PlaceError {}

/// Decides where the progress thread of a `role` goes under `p`, from the
/// calling thread's binding (call it on the thread that starts the client
/// or server, before the progress thread exists) and, for a client,
/// `OMP_PLACES`. Never panics.
pub fn plan(p: &Placement, role: Role) -> Result<Plan, PlaceError> {
    plan_beside_peers(p, role, &[])
}

/// [`plan`] for a client whose local peers are bound to `peers` (see
/// [`decide_beside_peers`]).
pub fn plan_beside_peers(p: &Placement, role: Role, peers: &[u32]) -> Result<Plan, PlaceError> {
    let topology = topology()?;
    let m = machine(topology)?;
    let binding = indices(topology, &current_binding(topology)?);
    decide_beside_peers(&m, role, p, &binding, &omp_places(role), peers)
}

/// The CPUs `OMP_PLACES` gives a client's compute threads (a server has
/// none); `Err` when it cannot be read.
fn omp_places(role: Role) -> Result<Vec<u32>, String> {
    match (role, std::env::var("OMP_PLACES")) {
        (Role::Client, Ok(v)) => places_cpus(&v),
        (Role::Client, Err(std::env::VarError::NotUnicode(_))) => Err("not UTF-8".into()),
        _ => Ok(Vec::new()),
    }
}

/// Binds the calling thread as `plan` says (nothing when its target is
/// `None`). Returns the CPUs the thread is now bound to, ascending, or an
/// error naming the failing hwloc call (the binding is then unchanged).
pub fn apply(plan: &Plan) -> Result<Vec<u32>, PlaceError> {
    let topology = topology()?;
    if let Some(cpus) = &plan.target {
        let mut set = CpuSet::new();
        for &c in cpus {
            // `plan` checked each against the allowed set: no index above
            // i32::MAX reaches hwlocality (it would panic).
            set.set(c as usize);
        }
        guarded("hwloc_set_cpubind", || {
            topology
                .bind_cpu(&set, CpuBindingFlags::THREAD)
                .map_err(describe)
        })?;
    }
    let bound = current_binding(topology)?;
    Ok(indices(topology, &bound))
}

/// Plans `p` for a server and applies it to the calling thread at once.
/// Returns the CPUs the thread is now bound to; [`Placement::None`] changes
/// nothing and returns the current binding.
pub fn pin_current_thread(p: &Placement) -> Result<Vec<u32>, PlaceError> {
    apply(&plan(p, Role::Server)?)
}

/// The placement environment variable `name` asks for (`None` when
/// unset). A malformed value is `PMIX_ERR_BAD_PARAM`, named on stderr as
/// the `who` ("client", "server") of this process.
pub(crate) fn from_env(name: &str, who: &str) -> Result<Option<Placement>, Status> {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            eprintln!("fastpmix {who}: {name} is not UTF-8");
            Err(Status::ERR_BAD_PARAM)
        }
        Ok(v) => v.parse().map(Some).map_err(|e| {
            eprintln!("fastpmix {who}: {name}: {e}");
            Status::ERR_BAD_PARAM
        }),
    }
}

/// [`plan`], or when it fails an unpinned plan that does not spin (the
/// failure named on stderr), unless the binding is `required`: then
/// `PMIX_ERR_NOT_AVAILABLE`.
pub(crate) fn plan_or_unpinned(
    p: &Placement,
    role: Role,
    required: bool,
    who: &str,
) -> Result<Plan, Status> {
    match plan(p, role) {
        Ok(plan) => Ok(plan),
        Err(e) => refuse_or(required, &e, who).map(|()| Plan {
            target: None,
            owns_core: false,
            reason: format!("{p}: not pinned ({e}), does not spin"),
        }),
    }
}

/// `PMIX_ERR_NOT_AVAILABLE` when the binding was `required`; else a
/// warning on stderr and `Ok`.
pub(crate) fn refuse_or(required: bool, e: &PlaceError, who: &str) -> Result<(), Status> {
    if required {
        eprintln!("fastpmix {who}: progress thread binding required but failed: {e}");
        Err(Status::ERR_NOT_AVAILABLE)
    } else {
        eprintln!("fastpmix {who}: progress thread not pinned: {e}");
        Ok(())
    }
}

/// One CPU set per core of the calling thread's binding, in hwloc's
/// logical order, each the core's PUs within the binding: where a launcher
/// binding ranks to cores puts rank `r` (`fastpmix run --bind-to core`).
pub fn binding_cores() -> Result<Vec<Vec<u32>>, PlaceError> {
    let m = machine_model()?;
    let within = current_cpus()?;
    Ok(m.cores
        .iter()
        .map(|c| c.iter().copied().filter(|pu| within.contains(pu)).collect())
        .filter(|c: &Vec<u32>| !c.is_empty())
        .collect())
}

/// This machine as the rules see it (tests compare a live placement with
/// what [`decide`] says for it).
pub fn machine_model() -> Result<Machine, PlaceError> {
    machine(topology()?)
}

/// [`machine_model`] in [`Machine::to_text`]'s form, computed once per
/// process: what a server hands its clients so that they place their
/// progress threads without loading the topology themselves (`None` when
/// hwloc cannot load it here).
pub fn machine_text() -> Option<&'static str> {
    MACHINE_TEXT
        .get_or_init(|| machine_model().ok().map(|m| m.to_text()))
        .as_deref()
}

/// [`machine_text`] if it was computed already, else `None` without
/// computing it: for a forked child, where hwloc must not run.
pub fn machine_text_if_made() -> Option<&'static str> {
    MACHINE_TEXT.get().and_then(|t| t.as_deref())
}

static MACHINE_TEXT: OnceLock<Option<String>> = OnceLock::new();

/// [`plan_beside_peers`] on a machine described by someone else (the
/// server's [`machine_text`]), for a process whose binding is `binding`:
/// no hwloc call. The allowed PUs are the machine's, narrowed to this
/// process's cgroup cpuset when it can be read ([`cgroup_cpus`]).
pub fn plan_on(
    m: &Machine,
    p: &Placement,
    role: Role,
    binding: &[u32],
    peers: &[u32],
) -> Result<Plan, PlaceError> {
    let mut m = m.clone();
    if let Some(own) = cgroup_cpus() {
        m.allowed.retain(|c| own.contains(c));
    }
    decide_beside_peers(&m, role, p, binding, &omp_places(role), peers)
}

/// The CPUs the calling thread may run on, ascending.
pub fn current_cpus() -> Result<Vec<u32>, PlaceError> {
    let topology = topology()?;
    Ok(indices(topology, &current_binding(topology)?))
}

/// The rules' view of `topology`: cores (or PUs), NUMA nodes (or
/// packages, or the whole machine), the allowed PUs.
fn machine(topology: &Topology) -> Result<Machine, PlaceError> {
    guarded("hwloc_get_obj_by_type", || {
        let sets = |ty| -> Vec<Vec<u32>> {
            topology
                .objects_with_type(ty)
                .filter_map(|o| o.cpuset().map(|c| indices(topology, &c.clone_target())))
                .filter(|v| !v.is_empty())
                .collect()
        };
        let mut cores = sets(ObjectType::Core);
        if cores.is_empty() {
            // No core level (some virtual machines): each PU is its own core.
            cores = sets(ObjectType::PU);
        }
        let allowed = indices(topology, &topology.allowed_cpuset().clone_target());
        let domains = domains(
            sets(ObjectType::NUMANode),
            sets(ObjectType::Package),
            &allowed,
        );
        Ok(Machine {
            cores,
            domains,
            allowed,
        })
    })
}

/// Locality domains: every non-empty intersection of a NUMA node with a
/// package. A NUMA node normally lies inside a package (several with
/// sub-NUMA clustering), and then the domains are the NUMA nodes. hwloc
/// always reports at least one NUMA node, and one that spans packages
/// (memory interleaved across sockets) would make its whole span one
/// domain: the packages keep a progress thread on its rank's socket.
/// No level at all: the allowed PUs are one domain.
fn domains(numa: Vec<Vec<u32>>, packages: Vec<Vec<u32>>, allowed: &[u32]) -> Vec<Vec<u32>> {
    let (numa, packages) = match (numa.is_empty(), packages.is_empty()) {
        (true, true) => return vec![allowed.to_vec()],
        (false, true) => return numa,
        (true, false) => return packages,
        (false, false) => (numa, packages),
    };
    let mut out: Vec<Vec<u32>> = Vec::new();
    for n in &numa {
        for p in &packages {
            let d: Vec<u32> = n.iter().copied().filter(|pu| p.contains(pu)).collect();
            if !d.is_empty() && !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// The locality string of a process bound to `cpus` (OS indices): for
/// each level present on this machine, package `SK`, NUMA node `NM`, L3,
/// L2 and L1 cache, core `CR` and PU `HT`, the level's tag followed by the
/// logical indices of its objects that hold any of `cpus`, as ranges;
/// levels joined by `:` (e.g. `SK0:NM0:L30:L20-1:L10-1:CR0-1:HT0-1`).
/// What a host registers as `PMIX_LOCALITY_STRING` (`fastpmix run
/// --bind-to core` does): comparing two of them tells which levels two
/// processes share.
pub fn locality_string(cpus: &[u32]) -> Result<String, PlaceError> {
    let topology = topology()?;
    guarded("hwloc_get_obj_by_type", || {
        let levels = [
            (ObjectType::Package, "SK"),
            (ObjectType::NUMANode, "NM"),
            (ObjectType::L3Cache, "L3"),
            (ObjectType::L2Cache, "L2"),
            (ObjectType::L1Cache, "L1"),
            (ObjectType::Core, "CR"),
            (ObjectType::PU, "HT"),
        ];
        let mut parts = Vec::new();
        for (ty, tag) in levels {
            let mut held: Vec<u32> = topology
                .objects_with_type(ty)
                .filter(|o| {
                    o.cpuset().is_some_and(|c| {
                        indices(topology, &c.clone_target())
                            .iter()
                            .any(|pu| cpus.contains(pu))
                    })
                })
                .filter_map(|o| u32::try_from(o.logical_index()).ok())
                .collect();
            if held.is_empty() {
                continue;
            }
            held.sort_unstable();
            parts.push(format!("{tag}{}", ranges(&held)));
        }
        Ok(parts.join(":"))
    })
}

/// A one-line description of the topology (packages, NUMA nodes, cores, PUs
/// and the allowed PUs) for bench and tool output, e.g.
/// `hwloc: 1 package, 1 NUMA node, 2 cores, 2 PUs (allowed PUs 0-1)`.
pub fn topology_summary() -> String {
    let topology = match topology() {
        Ok(t) => t,
        Err(e) => return format!("hwloc: topology unavailable ({e})"),
    };
    let summary = guarded("hwloc_get_nbobjs_by_type", || {
        let count = |ty| topology.objects_with_type(ty).len();
        let allowed = indices(topology, &topology.allowed_cpuset().clone_target());
        Ok(format!(
            "hwloc: {}, {}, {}, {} (allowed PUs {})",
            plural(count(ObjectType::Package), "package", "packages"),
            plural(count(ObjectType::NUMANode), "NUMA node", "NUMA nodes"),
            plural(count(ObjectType::Core), "core", "cores"),
            plural(count(ObjectType::PU), "PU", "PUs"),
            ranges(&allowed)
        ))
    });
    summary.unwrap_or_else(|e| format!("hwloc: topology unreadable ({e})"))
}

/// The process's topology, loaded on first use. A failed load is cached too:
/// it would fail the same way again.
static TOPOLOGY: OnceLock<Result<Topology, PlaceError>> = OnceLock::new();

/// Whether this process loaded the topology (a client that placed its
/// progress thread from its server's description never does).
pub fn topology_loaded() -> bool {
    TOPOLOGY.get().is_some()
}

fn topology() -> Result<&'static Topology, PlaceError> {
    TOPOLOGY
        .get_or_init(|| {
            guarded("hwloc_topology_load", || {
                Topology::new().map_err(|e| {
                    // RawHwlocError names the entry point that failed.
                    format!("{e}")
                })
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The calling thread's binding (`hwloc_get_cpubind` with `THREAD`).
fn current_binding(topology: &Topology) -> Result<CpuSet, PlaceError> {
    guarded("hwloc_get_cpubind", || {
        topology
            .cpu_binding(CpuBindingFlags::THREAD)
            .map_err(describe)
    })
}

/// The OS indices of `set`, within the topology's complete CPU set (so an
/// infinite bitmap cannot make this loop forever).
fn indices(topology: &Topology, set: &CpuSet) -> Vec<u32> {
    let mut finite = set.clone();
    finite &= topology.complete_cpuset().clone_target();
    finite
        .iter_set()
        .filter_map(|i| u32::try_from(usize::from(i)).ok())
        .collect()
}

/// Runs one hwlocality call; its error, or a panic inside it, becomes a
/// [`PlaceError::Call`] naming `call`.
fn guarded<T>(call: &'static str, f: impl FnOnce() -> Result<T, String>) -> Result<T, PlaceError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(reason)) => Err(PlaceError::Call { call, reason }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(PlaceError::Call {
                call,
                reason: format!("hwlocality panicked: {message}"),
            })
        }
    }
}

/// A binding error as text: the Rust-side reason, or the errno hwloc set.
fn describe(e: HybridError<CpuBindingError>) -> String {
    match e {
        HybridError::Rust(e) => e.to_string(),
        HybridError::Hwloc(raw) => match raw.errno {
            Some(errno) => format!("errno {} ({errno})", errno.0),
            None => "failed without setting errno".to_owned(),
        },
    }
}

/// `1 core`, `2 cores`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Ascending indices as ranges: `0-3,6,8-9`; empty for none. What
/// [`parse_cpu_list`] reads back (and the kernel's `Cpus_allowed_list`).
pub fn ranges(indices: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        let mut end = start;
        while i + 1 < indices.len() && end.checked_add(1) == Some(indices[i + 1]) {
            i += 1;
            end = indices[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placement_round_trips_through_its_display_form() {
        for p in [
            Placement::None,
            Placement::Auto,
            Placement::Cpus(vec![0]),
            Placement::Cpus(vec![7]),
            Placement::Cpus(vec![0, 1, 2, 3, 8]),
            Placement::Cpus(vec![u32::MAX]),
        ] {
            assert_eq!(p.to_string().parse::<Placement>(), Ok(p));
        }
    }

    #[test]
    fn the_three_spellings_parse() {
        assert_eq!("none".parse(), Ok(Placement::None));
        assert_eq!("auto".parse(), Ok(Placement::Auto));
        assert_eq!("cpu:3".parse(), Ok(Placement::Cpus(vec![3])));
        assert_eq!("cpu:007".parse(), Ok(Placement::Cpus(vec![7])));
        assert_eq!("cpu:8,0-2,1".parse(), Ok(Placement::Cpus(vec![0, 1, 2, 8])));
        assert_eq!(parse_cpu_list("4-4"), Some(vec![4]));
    }

    #[test]
    fn anything_else_is_rejected_with_the_input_named() {
        for bad in [
            "",
            "None",
            "AUTO",
            " auto",
            "auto ",
            "cpu",
            "cpu:",
            "cpu:x",
            "cpu:-1",
            "cpu:+1",
            "cpu: 1",
            "cpu:1.0",
            "cpu:4294967296",
            "core:1",
            "1",
            "cpu:3-1",
            "cpu:1,",
            "cpu:,1",
            "cpu:1--2",
            "cpu:0-4294967295",
        ] {
            let err = bad.parse::<Placement>().unwrap_err();
            assert_eq!(err.input, bad);
            assert!(err.to_string().contains("none, auto or cpu:LIST"), "{err}");
        }
    }

    #[test]
    fn the_default_is_no_pinning() {
        assert_eq!(Placement::default(), Placement::None);
    }

    #[test]
    fn cpu_lists_print_as_ranges() {
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[0]), "0");
        assert_eq!(ranges(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(ranges(&[u32::MAX - 1, u32::MAX]), "4294967294-4294967295");
    }

    #[test]
    fn errors_name_what_failed() {
        let e = PlaceError::Call {
            call: "hwloc_set_cpubind",
            reason: "errno 22 (Invalid argument)".into(),
        };
        assert_eq!(
            e.to_string(),
            "hwloc_set_cpubind failed: errno 22 (Invalid argument)"
        );
        let e = PlaceError::NoSuchCpu {
            cpu: 9999,
            allowed: vec![0, 1],
        };
        assert_eq!(
            e.to_string(),
            "cannot pin to CPU 9999: not in the allowed CPU set {0-1}"
        );
    }
}

#[cfg(test)]
mod topologies;
