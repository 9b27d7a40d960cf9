//! hwloc-aware placement of progress threads.
//!
//! A progress thread calls [`pin_current_thread`] first thing, with the
//! [`Placement`] its owner was configured with (`none`, `auto` or `cpu:N`,
//! see [`Placement`]'s `FromStr`). The machine's topology is loaded once per
//! process through hwloc (hwlocality) and cached: loading it costs
//! milliseconds.
//!
//! # The `Auto` rule
//!
//! 1. `S` = the calling thread's current CPU binding ∩ the topology's allowed
//!    CPU set. A thread inherits its creator's binding, so a process confined
//!    by `taskset`, `numactl`, a cgroup or a launcher's per-rank binding keeps
//!    its progress thread inside its allotment: `Auto` never widens a binding.
//! 2. The cores with a PU in `S`, in hwloc's logical order (packages, then
//!    NUMA nodes, then cores). If there are fewer than two, nothing is
//!    pinned: with one core the thread shares it anyway.
//! 3. Otherwise the thread is bound to one PU: the first PU in `S` of the
//!    **last** such core (one PU, not the whole core, so the scheduler does
//!    not migrate it between hyperthreads). When `S` spans several packages
//!    this is the last core of the last package in `S`.
//!
//! Why the last core: launchers bind rank `r` to core `r` counting from the
//! first, and an unbound process most often starts on the low CPUs, so the
//! last core is the one clients are least likely to occupy. A progress thread
//! that spins only pays when it has a core of its own.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::OnceLock;

use hwlocality::cpu::binding::{CpuBindingError, CpuBindingFlags};
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::errors::HybridError;
use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

/// Where a progress thread runs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Placement {
    /// Leave it to the OS scheduler (the binding is left as it is).
    #[default]
    None,
    /// Pin to this OS CPU index (hwloc PU `os_index`, as `taskset` and
    /// `/proc/cpuinfo` number them). A CPU outside the topology's allowed set
    /// is an error.
    Cpu(u32),
    /// hwloc chooses: the first PU of the last core within the thread's
    /// current binding; no pinning when that binding holds a single core.
    /// See the module documentation for the full rule.
    Auto,
}

impl fmt::Display for Placement {
    /// The form [`FromStr`] reads back: `none`, `auto` or `cpu:N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::None => f.write_str("none"),
            Placement::Auto => f.write_str("auto"),
            Placement::Cpu(n) => write!(f, "cpu:{n}"),
        }
    }
}

/// A string that is not `none`, `auto` or `cpu:N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsePlacementError {
    /// The rejected input.
    pub input: String,
}

impl fmt::Display for ParsePlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid placement {:?}: expected none, auto or cpu:N (N an OS CPU index)",
            self.input
        )
    }
}

impl std::error::Error for ParsePlacementError {}

impl FromStr for Placement {
    type Err = ParsePlacementError;

    /// Reads `none`, `auto` or `cpu:N` (`N` decimal digits only, fitting a
    /// `u32`). Exact, lower-case spelling; nothing else is accepted.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParsePlacementError {
            input: s.to_owned(),
        };
        match s {
            "none" => Ok(Placement::None),
            "auto" => Ok(Placement::Auto),
            _ => {
                let digits = s.strip_prefix("cpu:").ok_or_else(bad)?;
                // u32::from_str also takes a leading '+': digits only here.
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                digits.parse().map(Placement::Cpu).map_err(|_| bad())
            }
        }
    }
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

/// Applies `p` to the calling thread. Returns the CPU set it is now bound to
/// (as a list of OS indices, ascending), or an error naming the failing hwloc
/// call. Never panics.
///
/// [`Placement::None`] changes nothing and returns the current binding;
/// on a failure the binding is left as it was.
pub fn pin_current_thread(p: &Placement) -> Result<Vec<u32>, PlaceError> {
    let topology = topology()?;
    let target = match p {
        Placement::None => None,
        Placement::Cpu(n) => Some(cpu_target(topology, *n)?),
        Placement::Auto => auto_target(topology)?,
    };
    if let Some(set) = target {
        guarded("hwloc_set_cpubind", || {
            topology
                .bind_cpu(&set, CpuBindingFlags::THREAD)
                .map_err(describe)
        })?;
    }
    let bound = current_binding(topology)?;
    Ok(indices(topology, &bound))
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
fn topology() -> Result<&'static Topology, PlaceError> {
    static TOPOLOGY: OnceLock<Result<Topology, PlaceError>> = OnceLock::new();
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

/// The single-PU set for `Cpu(n)`, if `n` is allowed. Never hands hwlocality
/// an index it would panic on (above `i32::MAX`): `n` is only used once it
/// was found among the allowed set's own indices.
fn cpu_target(topology: &Topology, n: u32) -> Result<CpuSet, PlaceError> {
    let allowed = topology.allowed_cpuset().clone_target();
    let found = allowed
        .iter_set()
        .take_while(|&i| usize::from(i) <= n as usize)
        .find(|&i| usize::from(i) == n as usize);
    match found {
        Some(index) => {
            let mut set = CpuSet::new();
            set.set(index);
            Ok(set)
        }
        None => Err(PlaceError::NoSuchCpu {
            cpu: n,
            allowed: indices(topology, &allowed),
        }),
    }
}

/// The `Auto` rule (module documentation): one PU of the last core within
/// the current binding, or `None` (no pinning) when it holds one core.
fn auto_target(topology: &Topology) -> Result<Option<CpuSet>, PlaceError> {
    let mut within = current_binding(topology)?;
    within &= topology.allowed_cpuset().clone_target();
    guarded("hwloc_get_obj_by_type", || {
        let mut cores = topology
            .objects_with_type(ObjectType::Core)
            .filter_map(|core| core.cpuset().map(|c| c.clone_target()))
            .collect::<Vec<_>>();
        if cores.is_empty() {
            // No core level (some virtual machines): each PU is its own core.
            cores = topology
                .objects_with_type(ObjectType::PU)
                .filter_map(|pu| pu.cpuset().map(|c| c.clone_target()))
                .collect();
        }
        let usable = cores
            .into_iter()
            .map(|mut core| {
                core &= &within;
                core
            })
            .filter(|core| !core.is_empty())
            .collect::<Vec<_>>();
        Ok(match usable.as_slice() {
            [_, .., last] => last.first_set().map(|pu| {
                let mut set = CpuSet::new();
                set.set(pu);
                set
            }),
            // One core (or none): the thread shares it anyway.
            _ => None,
        })
    })
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

/// Ascending indices as ranges: `0-3,6,8-9`; empty for none.
fn ranges(indices: &[u32]) -> String {
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
            Placement::Cpu(0),
            Placement::Cpu(7),
            Placement::Cpu(u32::MAX),
        ] {
            assert_eq!(p.to_string().parse::<Placement>(), Ok(p));
        }
    }

    #[test]
    fn the_three_spellings_parse() {
        assert_eq!("none".parse(), Ok(Placement::None));
        assert_eq!("auto".parse(), Ok(Placement::Auto));
        assert_eq!("cpu:3".parse(), Ok(Placement::Cpu(3)));
        assert_eq!("cpu:007".parse(), Ok(Placement::Cpu(7)));
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
        ] {
            let err = bad.parse::<Placement>().unwrap_err();
            assert_eq!(err.input, bad);
            assert!(err.to_string().contains("none, auto or cpu:N"), "{err}");
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
