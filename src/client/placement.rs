//! Where the client's progress thread runs (`place`'s client rule): decided
//! on the thread that calls init, which holds the process's binding, and
//! applied by the progress thread to itself before it reads an event.

use crate::place::{self, Machine, PlaceError, Placement, Plan, Role};
use crate::types::attrs::{PMIX_CPUSET, PMIX_LOCAL_CPUSETS, PMIX_PROC_INFO_ARRAY};
use crate::types::{DataArray, Info, Status, Value};
use std::sync::mpsc;
use std::time::Duration;

/// Environment variable overriding the client's placement: `none`, `auto`
/// or `cpu:LIST` (`PMIX_BIND_PROGRESS_THREAD` in `PMIx_Init`'s info wins
/// over it).
pub const BIND_PROGRESS_ENV: &str = "FASTPMIX_BIND_PROGRESS";

/// How long init waits for the progress thread to bind itself (one
/// `sched_setaffinity`; the bound guards against a wedged thread only).
const BIND_TIMEOUT: Duration = Duration::from_secs(10);

/// The placement the environment asks for (`Auto` when unset).
pub(super) fn from_env() -> Result<Placement, Status> {
    Ok(place::from_env(BIND_PROGRESS_ENV, "client")?.unwrap_or(Placement::Auto))
}

/// A decided plan, and what deciding it again beside the peers needs.
pub(super) struct Decision {
    pub plan: Plan,
    /// The node as the server described it, and this process's binding;
    /// `None`: decided through hwloc.
    shared: Option<(Machine, Vec<u32>)>,
}

/// What [`Plan::reason`] ends with when the node's description came from
/// the server (`FASTPMIX_MACHINE`).
pub const FROM_SERVER: &str = " [the node as the server described it]";

/// Decides on the calling thread: from the server's description of the
/// node (`FASTPMIX_MACHINE`, set by `setup_fork`) and this thread's
/// affinity when the binding fits it, with no hwloc call; else through
/// hwloc. Without either the thread runs unpinned and does not spin,
/// unless the binding is `required`.
pub(super) fn decide(p: &Placement, required: bool) -> Result<Decision, Status> {
    if let Some((m, binding)) = shared_machine() {
        let plan = match place::plan_on(&m, p, Role::Client, &binding, &[]) {
            Ok(plan) => plan,
            Err(e) => {
                place::refuse_or(required, &e, "client")?;
                Plan {
                    target: None,
                    owns_core: false,
                    reason: format!("{p}: not pinned ({e}), does not spin"),
                }
            }
        };
        return Ok(Decision {
            plan: marked(plan),
            shared: Some((m, binding)),
        });
    }
    Ok(Decision {
        plan: place::plan_or_unpinned(p, Role::Client, required, "client")?,
        shared: None,
    })
}

fn marked(mut plan: Plan) -> Plan {
    plan.reason.push_str(FROM_SERVER);
    plan
}

/// The server's description of the node and this thread's binding, when
/// the description parses and the binding lies within it (a value
/// inherited from a server elsewhere would not describe this node).
fn shared_machine() -> Option<(Machine, Vec<u32>)> {
    let text = std::env::var(crate::server::MACHINE_ENV).ok()?;
    let m = Machine::from_text(&text)?;
    let binding = place::thread_cpus().ok()?;
    let known = |c: &u32| m.cores.iter().any(|core| core.contains(c));
    (!binding.is_empty() && binding.iter().all(known)).then_some((m, binding))
}

/// The CPUs the process's local peers are bound to, as the host registered
/// them in the job information: `PMIX_LOCAL_CPUSETS` (the peers' cpusets,
/// colon-delimited) and each rank's `PMIX_CPUSET` in its
/// `PMIX_PROC_INFO_ARRAY`. A cpuset is a CPU list (`0-3,8`); a piece that is
/// not one (a `hwloc` prefix, a hex bitmap) adds nothing. Ascending, no
/// duplicates; empty when the host registered neither.
pub(super) fn peer_cpus(job_info: &[Info]) -> Vec<u32> {
    let mut cpus = Vec::new();
    let mut take = |v: &Value| {
        if let Some(s) = v.as_str() {
            for piece in s.split(':') {
                cpus.extend(place::parse_cpu_list(piece.trim()).unwrap_or_default());
            }
        }
    };
    for i in job_info {
        if i.key == PMIX_LOCAL_CPUSETS {
            take(&i.value);
        } else if let (true, Value::DataArray(DataArray::Info(proc))) =
            (i.key == PMIX_PROC_INFO_ARRAY, &i.value)
        {
            proc.iter()
                .filter(|e| e.key == PMIX_CPUSET)
                .for_each(|e| take(&e.value));
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// `plan` decided again beside the local peers' CPUs (on the thread that
/// decided it). Unchanged when there are none or when it fails: it did not
/// the first time, and the peers are a refinement.
pub(super) fn beside_peers(d: Decision, p: &Placement, peers: &[u32]) -> Plan {
    if peers.is_empty() {
        return d.plan;
    }
    let again = match &d.shared {
        Some((m, binding)) => place::plan_on(m, p, Role::Client, binding, peers).map(marked),
        None => place::plan_beside_peers(p, Role::Client, peers),
    };
    again.unwrap_or(d.plan)
}

/// The progress thread's start hook: binds it as `plan` says, sends the
/// outcome on `tx`, and answers whether it may spin.
pub(super) fn start_hook(
    plan: Plan,
    tx: mpsc::SyncSender<Result<Vec<u32>, PlaceError>>,
) -> impl FnOnce() -> bool + Send + 'static {
    move || {
        // sched_setaffinity: no hwloc in the client.
        let got = place::apply_affinity(&plan);
        let spins = plan.owns_core && got.is_ok();
        let _ = tx.send(got);
        spins
    }
}

/// Waits for the hook's outcome: the line [`super::Client::placement`]
/// shows, or an error when a `required` binding failed.
pub(super) fn settle(
    plan: &Plan,
    rx: &mpsc::Receiver<Result<Vec<u32>, PlaceError>>,
    required: bool,
) -> Result<String, Status> {
    match rx.recv_timeout(BIND_TIMEOUT) {
        Ok(Ok(cpus)) => Ok(format!("{}; bound to CPUs {cpus:?}", plan.reason)),
        Ok(Err(e)) => place::refuse_or(required, &e, "client").map(|()| {
            format!(
                "{}; binding failed ({e}): unpinned, does not spin",
                plan.reason
            )
        }),
        Err(_) => Err(Status::ERR_INIT),
    }
}

impl super::Params {
    /// Applies `PMIx_Init`'s binding directives: `PMIX_BIND_PROGRESS_THREAD`
    /// (a CPU list such as `2` or `0-3,8`; `none` and `auto` are accepted
    /// too) and `PMIX_BIND_REQUIRED`. A malformed list is
    /// `PMIX_ERR_BAD_PARAM`.
    pub fn with_info(mut self, info: &[crate::types::Info]) -> Result<Self, Status> {
        use crate::types::attrs::{PMIX_BIND_PROGRESS_THREAD, PMIX_BIND_REQUIRED};
        for i in info {
            if i.key == PMIX_BIND_PROGRESS_THREAD {
                let v = i.value.as_str().ok_or(Status::ERR_BAD_PARAM)?;
                self.placement = Placement::from_attribute(v).ok_or(Status::ERR_BAD_PARAM)?;
            } else if i.key == PMIX_BIND_REQUIRED {
                self.bind_required = i.value.as_flag().ok_or(Status::ERR_BAD_PARAM)?;
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Params;
    use crate::place::Placement;
    use crate::types::attrs::{PMIX_BIND_PROGRESS_THREAD, PMIX_BIND_REQUIRED};
    use crate::types::{Info, Proc, Status};

    fn params() -> Params {
        Params::new("/nowhere", Proc::new("ns", 0).unwrap())
    }

    #[test]
    fn pmix_init_binding_directives_set_the_placement() {
        let p = params()
            .with_info(&[
                Info::new(PMIX_BIND_PROGRESS_THREAD, "0-2,5"),
                Info::new(PMIX_BIND_REQUIRED, true),
            ])
            .unwrap();
        assert_eq!(p.placement, Placement::Cpus(vec![0, 1, 2, 5]));
        assert!(p.bind_required);
        let p = params()
            .with_info(&[Info::new(PMIX_BIND_PROGRESS_THREAD, "none")])
            .unwrap();
        assert_eq!((p.placement, p.bind_required), (Placement::None, false));
        assert_eq!(params().placement, Placement::Auto);
    }

    /// The peers' bindings come from `PMIX_LOCAL_CPUSETS` and each rank's
    /// `PMIX_CPUSET`; what is not a CPU list adds nothing.
    #[test]
    fn peer_cpus_are_read_from_the_local_cpusets_and_each_ranks_cpuset() {
        use crate::types::attrs::{
            PMIX_CPUSET, PMIX_LOCAL_CPUSETS, PMIX_PROC_INFO_ARRAY, PMIX_RANK,
        };
        use crate::types::{Rank, Value};
        let rank = |r: u32, cpuset: &str| {
            Info::new(
                PMIX_PROC_INFO_ARRAY,
                Value::from(vec![
                    Info::new(PMIX_RANK, Value::Rank(Rank(r))),
                    Info::new(PMIX_CPUSET, cpuset),
                ]),
            )
        };
        let info = vec![
            Info::new(PMIX_LOCAL_CPUSETS, "0-3:5,4:hwloc:9-8:0xff::8"),
            rank(0, "hwloc:12"),
            rank(1, "13"),
            rank(2, "not a list"),
        ];
        assert_eq!(super::peer_cpus(&info), vec![0, 1, 2, 3, 4, 5, 8, 12, 13]);
        assert_eq!(super::peer_cpus(&[]), Vec::<u32>::new());
        assert_eq!(
            super::peer_cpus(&[Info::new(PMIX_LOCAL_CPUSETS, 7u32)]),
            Vec::<u32>::new(),
            "a wrongly typed value adds nothing"
        );
    }

    #[test]
    fn malformed_binding_directives_are_bad_param() {
        for bad in [
            Info::new(PMIX_BIND_PROGRESS_THREAD, "2-1"),
            Info::new(PMIX_BIND_PROGRESS_THREAD, 3u32),
            Info::new(PMIX_BIND_REQUIRED, "yes"),
        ] {
            assert_eq!(
                params().with_info(&[bad]).err(),
                Some(Status::ERR_BAD_PARAM)
            );
        }
    }
}
