//! `place::pin_current_thread` against the kernel's view of the thread's
//! affinity (`sched_getaffinity`).
//!
//! WARNING: keep this binary to ONE #[test]. CPU binding changes the whole
//! thread's affinity, and the checks below depend on what the thread was
//! bound to before; more tests in this binary would run on other threads of
//! the same process and could not share that state safely (hwlocality keeps
//! its binding tests in a one-test binary for the same reason).

use fastpmix::place::{pin_current_thread, topology_summary, PlaceError, Placement};
use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

/// The calling thread's affinity as the kernel reports it.
fn affinity() -> Vec<u32> {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is a valid, empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; `set` is a valid, writable
    // cpu_set_t of exactly the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    assert_eq!(
        rc,
        0,
        "sched_getaffinity: {}",
        std::io::Error::last_os_error()
    );
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` < CPU_SETSIZE, the bit size of `set`.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .map(|cpu| cpu as u32)
        .collect()
}

/// Puts the calling thread's affinity back to `cpus`.
fn restore(cpus: &[u32]) {
    // SAFETY: all zeroes is a valid, empty cpu_set_t.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpus` came from `affinity()`, so each is < CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of
    // exactly the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity: {}",
        std::io::Error::last_os_error()
    );
    assert_eq!(affinity(), cpus, "affinity not restored");
}

/// What the server's `Auto` rule must pick within `within`: the last PU of
/// the last core that has a PU in it, or nothing when only one core does.
fn expected_auto(within: &[u32]) -> Option<u32> {
    let topology = Topology::new().expect("hwloc topology");
    let pus_of = |ty| {
        topology
            .objects_with_type(ty)
            .filter_map(|o| o.cpuset())
            .map(|set| {
                set.iter_set()
                    .map(|i| usize::from(i) as u32)
                    .filter(|i| within.contains(i))
                    .collect::<Vec<_>>()
            })
            .filter(|pus| !pus.is_empty())
            .collect::<Vec<_>>()
    };
    let mut cores = pus_of(ObjectType::Core);
    if cores.is_empty() {
        cores = pus_of(ObjectType::PU);
    }
    match cores.as_slice() {
        [_, .., last] => last.last().copied(),
        _ => None,
    }
}

#[test]
fn pinning_binds_the_thread_exactly_as_the_placement_says() {
    let original = affinity();
    assert!(!original.is_empty());
    let summary = topology_summary();
    println!("{summary}; thread affinity {original:?}");
    assert!(
        summary.starts_with("hwloc: ") && summary.contains("PU"),
        "{summary}"
    );

    // None leaves the affinity unchanged and reports it.
    assert_eq!(pin_current_thread(&Placement::None), Ok(original.clone()));
    assert_eq!(affinity(), original, "None changed the affinity");

    // A CPU that does not exist is an error naming it, and changes nothing.
    for cpu in [9999, i32::MAX as u32 + 1, u32::MAX] {
        match pin_current_thread(&Placement::Cpus(vec![cpu])) {
            Err(e @ PlaceError::NoSuchCpu { .. }) => {
                assert!(e.to_string().contains(&cpu.to_string()), "{e}");
            }
            other => panic!("Cpu({cpu}) gave {other:?}, expected NoSuchCpu"),
        }
        assert_eq!(
            affinity(),
            original,
            "a failed Cpu({cpu}) changed the affinity"
        );
    }

    // Cpu(n) binds the thread to exactly CPU n, for every available CPU.
    for &cpu in &original {
        assert_eq!(
            pin_current_thread(&Placement::Cpus(vec![cpu])),
            Ok(vec![cpu])
        );
        assert_eq!(affinity(), vec![cpu], "Cpu({cpu})");
    }

    // Auto never widens a binding: from a single CPU it stays there.
    let last = *original.last().expect("non-empty");
    assert_eq!(
        pin_current_thread(&Placement::Cpus(vec![last])),
        Ok(vec![last])
    );
    assert_eq!(pin_current_thread(&Placement::Auto), Ok(vec![last]));
    assert_eq!(affinity(), vec![last], "Auto widened a one-CPU binding");

    // Auto from the original binding: one CPU that exists (the last PU of
    // the last core), or no pinning when the binding holds a single core.
    restore(&original);
    let got = pin_current_thread(&Placement::Auto).expect("Auto");
    assert_eq!(affinity(), got, "Auto's report differs from the kernel's");
    match expected_auto(&original) {
        Some(cpu) => {
            assert_eq!(got, vec![cpu], "Auto picked another CPU");
            assert!(original.contains(&cpu));
        }
        None => assert_eq!(got, original, "Auto pinned on a single core"),
    }
    restore(&original);

    // The command-line spelling round trips and garbage is rejected.
    for p in [Placement::None, Placement::Auto, Placement::Cpus(vec![1])] {
        assert_eq!(p.to_string().parse::<Placement>(), Ok(p));
    }
    for bad in ["", "cpu:", "cpu:-1", "cpu:one", "pin"] {
        assert!(bad.parse::<Placement>().is_err(), "{bad:?} parsed");
    }
}
