//! The rules on the topologies of HPC nodes, as hwloc describes them: the
//! hwloc → [`Machine`] step is the one the made-up machines of `rule`'s
//! tests skip, and this 2-core machine has a single NUMA node and no SMT.

use super::*;

/// A topology from an hwloc synthetic description.
fn synthetic(desc: &str) -> Machine {
    let t = Topology::builder()
        .from_synthetic(desc)
        .expect("synthetic description")
        .build()
        .expect("synthetic topology");
    machine(&t).expect("machine model")
}

fn auto(m: &Machine, role: Role, binding: &[u32], omp: &[u32]) -> Plan {
    decide(m, role, &Placement::Auto, binding, &Ok(omp.to_vec())).expect("decide")
}

/// Two packages of two NUMA nodes of four cores with two hardware
/// threads (32 PUs; hwloc numbers a synthetic topology's PUs in tree
/// order, so core c holds PUs 2c and 2c + 1).
const TWO_SOCKETS: &str = "package:2 numa:2 core:4 pu:2";

#[test]
fn hwloc_numa_nodes_under_packages_become_the_domains_and_cores_keep_their_threads() {
    let m = synthetic(TWO_SOCKETS);
    assert_eq!(m.cores.len(), 16);
    assert!(m.cores.iter().enumerate().all(|(c, pus)| {
        let c = c as u32;
        pus == &[2 * c, 2 * c + 1]
    }));
    let domains: Vec<Vec<u32>> = (0..4).map(|d| (8 * d..8 * d + 8).collect()).collect();
    assert_eq!(m.domains, domains);
    assert_eq!(m.allowed, (0..32).collect::<Vec<_>>());
}

#[test]
fn a_rank_bound_to_a_core_gets_its_progress_thread_in_its_own_numa_node() {
    let m = synthetic(TWO_SOCKETS);
    // Rank on core 0 (NUMA 0: cores 0-3): the last free core there.
    let p = auto(&m, Role::Client, &[0, 1], &[]);
    assert_eq!(p.target, Some(vec![7]), "{}", p.reason);
    assert!(p.owns_core);
    // Rank on core 9 (NUMA 2 of package 1: cores 8-11).
    let p = auto(&m, Role::Client, &[18, 19], &[]);
    assert_eq!(p.target, Some(vec![23]), "{}", p.reason);
    // OpenMP places on cores 1-3 beside the rank on core 0: NUMA 0 is
    // full, so the thread is left unpinned rather than put on another
    // node's memory or on a compute core.
    let p = auto(&m, Role::Client, &[0, 1], &[2, 3, 4, 5, 6, 7]);
    assert_eq!(p.target, None, "{}", p.reason);
    assert!(!p.owns_core);
    // A rank spanning NUMA 1 and 2 (cores 6-9): the last free core of
    // the two nodes, core 11.
    let p = auto(&m, Role::Client, &(12..20).collect::<Vec<_>>(), &[]);
    assert_eq!(p.target, Some(vec![23]), "{}", p.reason);
}

#[test]
fn the_server_takes_the_last_pu_of_the_node_or_of_its_binding() {
    let m = synthetic(TWO_SOCKETS);
    let all: Vec<u32> = (0..32).collect();
    assert_eq!(auto(&m, Role::Server, &all, &[]).target, Some(vec![31]));
    // A daemon confined to package 0 stays in it.
    let p0: Vec<u32> = (0..16).collect();
    assert_eq!(auto(&m, Role::Server, &p0, &[]).target, Some(vec![15]));
    // Confined to one core (two hardware threads): not pinned.
    let p = auto(&m, Role::Server, &[4, 5], &[]);
    assert_eq!(p.target, None, "{}", p.reason);
}

/// A two-socket node whose memory is interleaved across the sockets
/// (one NUMA node; what hwloc also reports when the OS shows none):
/// the progress thread stays on its rank's socket.
#[test]
fn a_numa_node_spanning_both_packages_is_split_by_package() {
    let m = synthetic("package:2 core:4 pu:1");
    assert_eq!(m.domains, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    let p = auto(&m, Role::Client, &[0], &[]);
    assert_eq!(p.target, Some(vec![3]), "{}", p.reason);
}

#[test]
fn domains_are_numa_nodes_within_packages_else_either_else_the_machine() {
    let v = |r: std::ops::Range<u32>| r.collect::<Vec<u32>>();
    // Sub-NUMA clustering: two nodes per package.
    assert_eq!(
        domains(vec![v(0..2), v(2..4)], vec![v(0..4)], &v(0..4)),
        vec![v(0..2), v(2..4)]
    );
    assert_eq!(
        domains(vec![], vec![v(0..2), v(2..4)], &v(0..4)),
        vec![v(0..2), v(2..4)]
    );
    assert_eq!(domains(vec![v(0..4)], vec![], &v(0..4)), vec![v(0..4)]);
    assert_eq!(domains(vec![], vec![], &v(0..4)), vec![v(0..4)]);
}
/// The same node numbered as Linux numbers hardware threads: PU k of
/// core c is c + 16k, so a core's PUs are not neighbours.
#[test]
fn linux_numbered_hardware_threads_stay_with_their_core() {
    let order: Vec<String> = (0..16)
        .flat_map(|c| [c, c + 16])
        .map(|i| i.to_string())
        .collect();
    let m = synthetic(&format!(
        "package:2 numa:2 core:4 pu:2(indexes={})",
        order.join(",")
    ));
    assert!(m.cores.iter().enumerate().all(|(c, pus)| {
        let c = c as u32;
        pus == &[c, c + 16]
    }));
    assert_eq!(m.domains[0], vec![0, 1, 2, 3, 16, 17, 18, 19]);
    // Rank on core 0's two threads: core 3 of NUMA 0, its last PU.
    let p = auto(&m, Role::Client, &[0, 16], &[]);
    assert_eq!(p.target, Some(vec![19]), "{}", p.reason);
    // Rank on core 0's first thread only: its sibling is still a compute
    // core's, never the progress thread's.
    let p = auto(&m, Role::Client, &[0], &[]);
    assert_eq!(p.target, Some(vec![19]), "{}", p.reason);
    let all: Vec<u32> = (0..32).collect();
    assert_eq!(auto(&m, Role::Server, &all, &[]).target, Some(vec![31]));
}

/// A rank bound to every core of the node (the launcher binds by core):
/// no core of a rank's NUMA node is free of compute threads once the
/// peers' bindings are known, so the progress thread is left unpinned and
/// does not spin, instead of every rank of the node putting its thread on
/// the last core of its NUMA node, a peer's compute core. With one core
/// of NUMA node 0 left free (15 ranks), every rank there uses that core.
#[test]
fn with_a_rank_on_every_core_the_peers_bindings_leave_no_core_for_the_thread() {
    let m = synthetic(TWO_SOCKETS);
    let omp = Ok(Vec::new());
    let every: Vec<u32> = (0..32).collect();
    let p = decide_beside_peers(&m, Role::Client, &Placement::Auto, &[0, 1], &omp, &every)
        .expect("decide");
    assert_eq!(p.target, None, "{}", p.reason);
    assert!(!p.owns_core);
    assert!(
        p.reason.contains("beside the local peers' bindings"),
        "{}",
        p.reason
    );
    // Without the peers' bindings the rule sees core 3 as free.
    assert_eq!(auto(&m, Role::Client, &[0, 1], &[]).target, Some(vec![7]));
    // Core 2 (PUs 4, 5) has no rank: the ranks of NUMA 0 use it.
    let fifteen: Vec<u32> = every
        .iter()
        .copied()
        .filter(|c| !(4..6).contains(c))
        .collect();
    for own in [[0, 1], [2, 3], [6, 7]] {
        let p = decide_beside_peers(&m, Role::Client, &Placement::Auto, &own, &omp, &fifteen)
            .expect("decide");
        assert_eq!(p.target, Some(vec![5]), "{}", p.reason);
        assert!(p.owns_core);
    }
    // Requested CPUs on a peer's core: bound there, but it does not spin.
    let p = decide_beside_peers(
        &m,
        Role::Client,
        &Placement::Cpus(vec![7]),
        &[0, 1],
        &omp,
        &every,
    )
    .expect("decide");
    assert_eq!(p.target, Some(vec![7]));
    assert!(!p.owns_core, "{}", p.reason);
}
