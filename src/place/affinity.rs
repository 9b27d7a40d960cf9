//! Placement without hwloc: the calling thread's CPUs and its binding
//! through `sched_getaffinity` / `sched_setaffinity`, and the cgroup's
//! cpuset. A client placed from the server's description of the machine
//! uses only these (loading hwloc's topology costs milliseconds per
//! process).

use super::{apply, parse_cpu_list, PlaceError, Plan};

/// The CPUs of this process's cgroup (v2 `cpuset.cpus.effective`), when
/// the file can be read: what hwloc calls the allowed PUs.
pub fn cgroup_cpus() -> Option<Vec<u32>> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cg.lines().find_map(|l| l.strip_prefix("0::"))?;
    let f = format!("/sys/fs/cgroup{}/cpuset.cpus.effective", path.trim_end());
    parse_cpu_list(std::fs::read_to_string(f).ok()?.trim())
}

/// The CPUs the calling thread may run on, from `sched_getaffinity` (no
/// hwloc), ascending.
pub fn thread_cpus() -> Result<Vec<u32>, PlaceError> {
    use nix::sched::{sched_getaffinity, CpuSet as Affinity};
    let set = sched_getaffinity(nix::unistd::Pid::from_raw(0)).map_err(|e| PlaceError::Call {
        call: "sched_getaffinity",
        reason: e.to_string(),
    })?;
    Ok((0..Affinity::count())
        .filter(|&i| set.is_set(i).unwrap_or(false))
        .filter_map(|i| u32::try_from(i).ok())
        .collect())
}

/// [`apply`] with `sched_setaffinity` instead of hwloc: binds the calling
/// thread to the plan's target (nothing when it has none) and returns the
/// CPUs it is now bound to. A target beyond the kernel's fixed CPU set
/// size (1024) falls back to [`apply`].
pub fn apply_affinity(plan: &Plan) -> Result<Vec<u32>, PlaceError> {
    use nix::sched::{sched_setaffinity, CpuSet as Affinity};
    if let Some(cpus) = &plan.target {
        let mut set = Affinity::new();
        for &c in cpus {
            if set.set(c as usize).is_err() {
                return apply(plan);
            }
        }
        sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| PlaceError::Call {
            call: "sched_setaffinity",
            reason: e.to_string(),
        })?;
    }
    thread_cpus()
}
