//! The report `fastpmix inspect` prints.

use super::lock;
use super::ClientSlot;
use super::Shared;
use crate::types::Nspace;
use crate::types::Rank;

/// The report `fastpmix inspect` prints.
pub(crate) fn inspect_text(shared: &Shared) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "server {} (socket {})",
        shared.me,
        shared.sock_path.display()
    );
    let _ = writeln!(
        t,
        "progress thread: {}; {}",
        shared.plan.reason,
        lock(&shared.bound).as_deref().unwrap_or("not started")
    );
    thread_lines(&mut t, std::process::id(), "  ");
    {
        let c = lock(&shared.cache);
        let (env, job) = c.occupancy();
        let _ = writeln!(
            t,
            "cache: {env} environment event(s), {job} job event(s) retained for clients not yet connected (capacity {} each)",
            c.capacity()
        );
    }
    let m = shared.nspaces();
    let mut names: Vec<&Nspace> = m.keys().collect();
    names.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    for n in names {
        let ns = &m[n];
        let st = ns.seg.region().state();
        let _ = writeln!(
            t,
            "namespace {n}: ring {} ({} slots of {} B, {} client entries), head {}, {} registered clients",
            ns.seg.name(),
            ns.seg.region().geometry().slot_count,
            ns.seg.region().geometry().slot_size,
            ns.seg.region().geometry().client_capacity,
            st.head,
            ns.clients.len()
        );
        let (bytes, items) = ns.data.footprint();
        let _ = writeln!(
            t,
            "  data store: {items} item(s) committed or received, {bytes} B of shared memory"
        );
        let _ = match &ns.barrier {
            Some(b) => writeln!(t, "  fence barrier: {}", super::barrier::describe(b)),
            None => writeln!(
                t,
                "  fence barrier: none (some ranks run elsewhere, or no PMIX_JOB_SIZE): fences go through the server"
            ),
        };
        let mut ranks: Vec<(&Rank, &ClientSlot)> = ns.clients.iter().collect();
        ranks.sort_by_key(|(r, _)| r.0);
        for (r, c) in ranks {
            let state = match (c.entry, c.finalized) {
                (Some(_), true) => "finalized",
                (Some(_), false) => "connected",
                (None, true) => "gone (finalized)",
                (None, false) => "not connected",
            };
            match c.entry {
                Some(e) => {
                    let cl = st.clients.iter().find(|x| x.index == e);
                    let cursor = ns.seg.region().cursor_of(e);
                    let _ = writeln!(
                        t,
                        "  rank {:<5} pid {:<8} {state:<16} entry {e:<3} cursor {cursor:<8} lag {:<6} lost {:<6} {}",
                        r.0,
                        c.pid.unwrap_or(0),
                        st.head.saturating_sub(cursor),
                        cl.map_or(0, |x| x.lost),
                        if cl.is_some_and(|x| x.waiting) { "asleep" } else { "awake" },
                    );
                    if let Some(pid) = c.pid.and_then(|p| u32::try_from(p).ok()) {
                        if let Some(cpus) = crate::place::process_cpus(pid) {
                            let _ = writeln!(t, "        process: CPUs {cpus}");
                        }
                        thread_lines(&mut t, pid, "        ");
                    }
                }
                None => {
                    let _ = writeln!(t, "  rank {:<5} {state}", r.0);
                }
            }
        }
    }
    t
}

/// One line per progress thread of `pid`: where it may and did last run.
fn thread_lines(t: &mut String, pid: u32, indent: &str) {
    use std::fmt::Write as _;
    for th in crate::place::progress_threads(pid) {
        let last = th.last_cpu.map_or("?".to_owned(), |c| c.to_string());
        let _ = writeln!(
            t,
            "{indent}thread {} (tid {}): CPUs {}, last ran on CPU {last}",
            th.name, th.tid, th.allowed
        );
    }
}
