//! The placement rules over a plain model of the machine, so that they are
//! tested on made-up topologies (two packages, hyperthreads, no core
//! level) as well as on the machine the tests run on.

use super::{PlaceError, Placement};

/// What the rules need to know about the node (OS CPU indices throughout).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    /// Cores in hwloc's logical order, each with its PUs in logical order
    /// (a machine without a core level: one PU per "core").
    pub cores: Vec<Vec<u32>>,
    /// Locality domains: the NUMA nodes split by package (see
    /// `place::domains`), else the whole machine.
    pub domains: Vec<Vec<u32>>,
    /// The PUs this process may use (the topology's allowed set).
    pub allowed: Vec<u32>,
}

impl Machine {
    /// The form a server hands its clients (`FASTPMIX_MACHINE`): `c:` the
    /// cores, `d:` the domains, each a CPU list (see `place::ranges`),
    /// `;`-separated, and `a:` the allowed PUs, the three joined by `|`:
    /// `c:0-1;2-3|d:0-3|a:0-3`.
    pub fn to_text(&self) -> String {
        let lists = |v: &[Vec<u32>]| {
            v.iter()
                .map(|c| super::ranges(c))
                .collect::<Vec<_>>()
                .join(";")
        };
        format!(
            "c:{}|d:{}|a:{}",
            lists(&self.cores),
            lists(&self.domains),
            super::ranges(&self.allowed)
        )
    }

    /// Reads [`Machine::to_text`]'s form; `None` when it is not one (every
    /// list must parse, and there must be cores and allowed PUs).
    pub fn from_text(s: &str) -> Option<Machine> {
        let mut parts = s.split('|');
        let (c, d, a) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let lists = |v: &str| -> Option<Vec<Vec<u32>>> {
            if v.is_empty() {
                return Some(Vec::new());
            }
            v.split(';').map(super::parse_cpu_list).collect()
        };
        let m = Machine {
            cores: lists(c.strip_prefix("c:")?)?,
            domains: lists(d.strip_prefix("d:")?)?,
            allowed: super::parse_cpu_list(a.strip_prefix("a:")?)?,
        };
        (!m.cores.is_empty()).then_some(m)
    }
}

/// Whose progress thread is placed: the rules differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A node server's: the host decides, else the last PU of the node.
    Server,
    /// A client's: beside the process, never on its compute cores.
    Client,
}

/// A decided placement, applied later by the thread itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The PUs to bind the thread to; `None` leaves its binding alone.
    pub target: Option<Vec<u32>>,
    /// The thread has a core no compute thread of its process uses, so
    /// spinning before it sleeps pays (the spin policy follows this).
    pub owns_core: bool,
    /// One line saying what was decided and why (`fastpmix inspect`,
    /// `Client::placement`).
    pub reason: String,
}

/// Applies `placement` for `role`. `binding`: the process's CPU binding as
/// seen by the thread that started the client or server; `omp`: the CPUs of
/// `OMP_PLACES` (clients), or why it could not be read.
pub fn decide(
    m: &Machine,
    role: Role,
    placement: &Placement,
    binding: &[u32],
    omp: &Result<Vec<u32>, String>,
) -> Result<Plan, PlaceError> {
    decide_beside_peers(m, role, placement, binding, omp, &[])
}

/// [`decide`] on a node whose other ranks are bound too: `peers` are the
/// CPUs the local peers of a client's job are bound to, as its host
/// registered them (`PMIX_LOCAL_CPUSETS`, `PMIX_CPUSET`). Their cores run
/// compute threads like the process's own: a rank bound to each core of a
/// NUMA node leaves no core there for the progress thread.
pub fn decide_beside_peers(
    m: &Machine,
    role: Role,
    placement: &Placement,
    binding: &[u32],
    omp: &Result<Vec<u32>, String>,
    peers: &[u32],
) -> Result<Plan, PlaceError> {
    let within: Vec<u32> = binding
        .iter()
        .copied()
        .filter(|c| m.allowed.contains(c))
        .collect();
    // The cores a compute thread of this process, or of a peer, may run on
    // (clients).
    let compute: Option<Vec<usize>> = match (role, omp) {
        (Role::Server, _) => Some(Vec::new()),
        (Role::Client, Err(_)) => None,
        (Role::Client, Ok(places)) => Some(
            (0..m.cores.len())
                .filter(|&i| {
                    m.cores[i]
                        .iter()
                        .any(|pu| within.contains(pu) || places.contains(pu) || peers.contains(pu))
                })
                .collect(),
        ),
    };
    let unknown = |what: &str| match omp {
        Err(why) => {
            format!("{what}: OMP_PLACES unreadable ({why}): compute threads may be anywhere")
        }
        Ok(_) if role == Role::Client && !peers.is_empty() => {
            format!("{what} (beside the local peers' bindings)")
        }
        Ok(_) => what.to_owned(),
    };
    match placement {
        Placement::None => Ok(Plan {
            target: None,
            owns_core: false,
            reason: "none: left to the scheduler, does not spin".into(),
        }),
        Placement::Cpus(cpus) => {
            if let Some(&bad) = cpus.iter().find(|c| !m.allowed.contains(c)) {
                return Err(PlaceError::NoSuchCpu {
                    cpu: bad,
                    allowed: m.allowed.clone(),
                });
            }
            let owns_core = compute.as_ref().is_some_and(|busy| {
                busy.iter()
                    .all(|&i| !m.cores[i].iter().any(|pu| cpus.contains(pu)))
            });
            let spins = if owns_core {
                "spins"
            } else {
                "shares a compute core, does not spin"
            };
            Ok(Plan {
                target: Some(cpus.clone()),
                owns_core,
                reason: unknown(&format!("{placement} (requested), {spins}")),
            })
        }
        Placement::Auto => Ok(match (role, compute) {
            (Role::Server, _) => server_auto(m, &within),
            (Role::Client, None) => Plan {
                target: None,
                owns_core: false,
                reason: unknown("auto: not pinned"),
            },
            (Role::Client, Some(busy)) => {
                let p = client_auto(m, &within, &busy);
                Plan {
                    reason: unknown(&p.reason),
                    ..p
                }
            }
        }),
    }
}

/// The last PU of the node within the binding; nothing with one core.
fn server_auto(m: &Machine, within: &[u32]) -> Plan {
    let cores: Vec<Vec<u32>> = m
        .cores
        .iter()
        .map(|c| c.iter().copied().filter(|pu| within.contains(pu)).collect())
        .filter(|c: &Vec<u32>| !c.is_empty())
        .collect();
    match cores.as_slice() {
        [_, .., last] => {
            let pu = *last.last().expect("non-empty");
            Plan {
                target: Some(vec![pu]),
                owns_core: true,
                reason: format!("auto: CPU {pu}, the last PU of the node, spins"),
            }
        }
        _ => Plan {
            target: None,
            owns_core: false,
            reason: "auto: one core in the binding, not pinned, does not spin".into(),
        },
    }
}

/// The last PU of the last core that is in a domain of the process's
/// binding but runs none of its compute threads; nothing when none is.
fn client_auto(m: &Machine, within: &[u32], busy: &[usize]) -> Plan {
    let near: Vec<u32> = m
        .domains
        .iter()
        .filter(|d| d.iter().any(|pu| within.contains(pu)))
        .flatten()
        .copied()
        .filter(|pu| m.allowed.contains(pu))
        .collect();
    let pick = (0..m.cores.len())
        .rev()
        .filter(|i| !busy.contains(i))
        .find_map(|i| m.cores[i].iter().rev().find(|pu| near.contains(pu)));
    match pick {
        Some(&pu) => Plan {
            target: Some(vec![pu]),
            owns_core: true,
            reason: format!(
                "auto: CPU {pu}, a core beside the process's binding and OpenMP places, spins"
            ),
        },
        None => Plan {
            target: None,
            owns_core: false,
            reason: "auto: not pinned (every nearby core runs compute threads), does not spin"
                .into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The node description a server hands its clients reads back as the
    /// same machine; anything else is refused, not half-read.
    #[test]
    fn a_machine_survives_its_text_form_and_malformed_text_is_refused() {
        let m = Machine {
            cores: vec![vec![0, 4], vec![1, 5], vec![2], vec![3]],
            domains: vec![vec![0, 1, 4, 5], vec![2, 3]],
            allowed: vec![0, 1, 2, 3, 4, 5],
        };
        assert_eq!(m.to_text(), "c:0,4;1,5;2;3|d:0-1,4-5;2-3|a:0-5");
        assert_eq!(Machine::from_text(&m.to_text()), Some(m));
        for bad in [
            "",
            "c:|d:0|a:0",
            "c:0|d:0",
            "c:0|d:0|a:0|x",
            "c:0-|d:0|a:0",
            "c:0|d:0|a:",
            "d:0|c:0|a:0",
            "c:1-0|d:0|a:0",
        ] {
            assert_eq!(Machine::from_text(bad), None, "{bad:?}");
        }
    }

    /// `packages` × `cores` × `pus` PUs numbered as Linux does with
    /// hyperthreads: PU k of core c of package p = p*C + c + k*P*C.
    fn machine(packages: u32, cores: u32, pus: u32) -> Machine {
        let total = packages * cores;
        let core_list: Vec<Vec<u32>> = (0..total)
            .map(|c| (0..pus).map(|k| c + k * total).collect())
            .collect();
        let domains = (0..packages)
            .map(|p| {
                let mut d: Vec<u32> = core_list[(p * cores) as usize..((p + 1) * cores) as usize]
                    .iter()
                    .flatten()
                    .copied()
                    .collect();
                d.sort_unstable();
                d
            })
            .collect();
        Machine {
            cores: core_list,
            domains,
            allowed: (0..total * pus).collect(),
        }
    }

    fn plan(m: &Machine, role: Role, p: Placement, binding: &[u32], omp: &[u32]) -> Plan {
        decide(m, role, &p, binding, &Ok(omp.to_vec())).expect("decide")
    }

    #[test]
    fn server_auto_takes_the_last_pu_of_the_node() {
        let m = machine(2, 4, 2); // PUs 0-15; core 7 = {7, 15}
        let all: Vec<u32> = (0..16).collect();
        let p = plan(&m, Role::Server, Placement::Auto, &all, &[]);
        assert_eq!(p.target, Some(vec![15]));
        assert!(p.owns_core);
        // Within a daemon's binding (never widened).
        let p = plan(&m, Role::Server, Placement::Auto, &[0, 1, 2, 8, 9, 10], &[]);
        assert_eq!(p.target, Some(vec![10]));
        // One core: not pinned, no spinning.
        let p = plan(&m, Role::Server, Placement::Auto, &[3, 11], &[]);
        assert_eq!((p.target, p.owns_core), (None, false));
    }

    #[test]
    fn client_auto_goes_beside_the_binding_in_the_same_domain() {
        let m = machine(2, 4, 2);
        // Rank bound to core 0 (both hyperthreads): core 3 of package 0.
        let p = plan(&m, Role::Client, Placement::Auto, &[0, 8], &[]);
        assert_eq!(p.target, Some(vec![11]));
        assert!(p.owns_core);
        // Bound to core 5 (package 1): the last core of package 1.
        let p = plan(&m, Role::Client, Placement::Auto, &[5], &[]);
        assert_eq!(p.target, Some(vec![15]));
    }

    #[test]
    fn client_auto_never_lands_on_a_core_of_the_binding_or_of_the_openmp_places() {
        // Cores {0,4} {1,5} {2,6} {3,7}.
        let m = machine(1, 4, 2);
        // Binding: one hyperthread of core 3; the core's sibling is still a
        // compute core.
        let p = plan(&m, Role::Client, Placement::Auto, &[3], &[]);
        assert_eq!(p.target, Some(vec![6]));
        // OpenMP places over cores 1-2 as well as the binding on core 3.
        let p = plan(&m, Role::Client, Placement::Auto, &[3], &[1, 2]);
        assert_eq!(p.target, Some(vec![4]));
        // Every core taken: left unpinned, and it does not spin.
        let p = plan(&m, Role::Client, Placement::Auto, &[3], &[0, 1, 2]);
        assert_eq!((p.target, p.owns_core), (None, false));
        // An unbound process (binding = every PU): unpinned.
        let all: Vec<u32> = (0..8).collect();
        let p = plan(&m, Role::Client, Placement::Auto, &all, &[]);
        assert_eq!((p.target, p.owns_core), (None, false));
    }

    #[test]
    fn client_auto_stays_in_the_numa_domain_of_the_binding() {
        // Domains {0,1} {2,3}.
        let m = machine(2, 2, 1);
        // Both cores of package 0 busy: package 1 is free but remote.
        let p = plan(&m, Role::Client, Placement::Auto, &[0, 1], &[]);
        assert_eq!(p.target, None);
        assert!(p.reason.contains("not pinned"), "{}", p.reason);
    }

    #[test]
    fn an_unreadable_openmp_places_means_no_pinning_and_no_spinning() {
        let m = machine(1, 4, 1);
        let omp = Err("expected '{' at 0".to_string());
        let p = decide(&m, Role::Client, &Placement::Auto, &[0], &omp).unwrap();
        assert_eq!((p.target, p.owns_core), (None, false));
        assert!(p.reason.contains("OMP_PLACES unreadable"), "{}", p.reason);
        let p = decide(&m, Role::Client, &Placement::Cpus(vec![3]), &[0], &omp).unwrap();
        assert_eq!((p.target, p.owns_core), (Some(vec![3]), false));
    }

    #[test]
    fn requested_cpus_are_checked_and_spin_only_off_the_compute_cores() {
        let m = machine(1, 4, 1);
        let p = plan(&m, Role::Client, Placement::Cpus(vec![3]), &[0], &[]);
        assert_eq!((p.target, p.owns_core), (Some(vec![3]), true));
        let p = plan(&m, Role::Client, Placement::Cpus(vec![2, 3]), &[0], &[2]);
        assert_eq!((p.target, p.owns_core), (Some(vec![2, 3]), false));
        let e = decide(
            &m,
            Role::Client,
            &Placement::Cpus(vec![1, 9]),
            &[0],
            &Ok(vec![]),
        );
        assert_eq!(
            e,
            Err(PlaceError::NoSuchCpu {
                cpu: 9,
                allowed: vec![0, 1, 2, 3]
            })
        );
    }

    #[test]
    fn none_leaves_the_thread_alone_and_never_spins() {
        let m = machine(1, 4, 1);
        for role in [Role::Server, Role::Client] {
            let p = plan(&m, role, Placement::None, &[0], &[]);
            assert_eq!((p.target, p.owns_core), (None, false));
        }
    }

    #[test]
    fn a_machine_without_a_core_level_treats_each_pu_as_a_core() {
        let m = Machine {
            cores: vec![vec![0], vec![1], vec![2]],
            domains: vec![vec![0, 1, 2]],
            allowed: vec![0, 1, 2],
        };
        let p = plan(&m, Role::Client, Placement::Auto, &[0], &[]);
        assert_eq!(p.target, Some(vec![2]));
    }
}
