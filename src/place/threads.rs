//! Where a process's progress threads run, read from /proc (for `fastpmix
//! inspect`): works for any process whose /proc entries are readable
//! (`status` and `stat` are world-readable), whoever runs the tool.

/// The progress threads' names (the kernel keeps 15 bytes of a name).
pub const PROGRESS_THREADS: [&str; 3] = ["fastpmix-srv", "fastpmix-srv-ev", "fastpmix-events"];

/// One thread of a process, as /proc shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPlace {
    /// Thread id.
    pub tid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// The CPUs it may run on (`Cpus_allowed_list`, e.g. `0-3,8`).
    pub allowed: String,
    /// The CPU it last ran on (`stat` field 39).
    pub last_cpu: Option<u32>,
}

/// The progress threads of process `pid` (see [`PROGRESS_THREADS`]),
/// ordered by thread id; empty when the process is gone or unreadable.
pub fn progress_threads(pid: u32) -> Vec<ThreadPlace> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out: Vec<ThreadPlace> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|tid| {
            let base = format!("/proc/{pid}/task/{tid}");
            let name = std::fs::read_to_string(format!("{base}/comm")).ok()?;
            let name = name.trim_end_matches('\n');
            if !PROGRESS_THREADS.contains(&name) {
                return None;
            }
            let status = std::fs::read_to_string(format!("{base}/status")).ok()?;
            let stat = std::fs::read_to_string(format!("{base}/stat")).ok()?;
            Some(ThreadPlace {
                tid,
                name: name.to_owned(),
                allowed: allowed_list(&status)?,
                last_cpu: last_cpu(&stat),
            })
        })
        .collect();
    out.sort_by_key(|t| t.tid);
    out
}

/// The CPUs process `pid`'s main thread may run on (its binding, as a
/// launcher set it), as the kernel prints the list; `None` when the
/// process is gone.
pub fn process_cpus(pid: u32) -> Option<String> {
    allowed_list(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// `Cpus_allowed_list` of a /proc status file.
fn allowed_list(status: &str) -> Option<String> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_owned())
}

/// Field 39 (`processor`) of a /proc stat line. The name (field 2) may
/// hold spaces and parentheses: count from its last `)`.
fn last_cpu(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // Fields after the name start at 3; processor is field 39.
    rest.split_whitespace().nth(39 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_cpu_is_field_39_counted_after_the_name() {
        let mut stat = String::from("123 (a (b) c) S");
        for f in 4..=52 {
            stat.push_str(&format!(" {}", if f == 39 { 7 } else { f }));
        }
        assert_eq!(last_cpu(&stat), Some(7));
        assert_eq!(last_cpu("123 (x) S 1 2"), None);
        assert_eq!(last_cpu("garbage"), None);
    }

    #[test]
    fn the_allowed_list_comes_from_status() {
        let status = "Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n";
        assert_eq!(allowed_list(status), Some("0-1".into()));
        assert_eq!(allowed_list("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_progress_threads_are_found_by_name() {
        // The new thread names itself as it starts: wait until it runs.
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::Builder::new()
            .name("fastpmix-events".into())
            .spawn(move || {
                tx.send(()).unwrap();
                let _ = stop_rx.recv();
            })
            .unwrap();
        rx.recv().unwrap();
        let found = progress_threads(std::process::id());
        assert!(
            found
                .iter()
                .any(|p| p.name == "fastpmix-events" && !p.allowed.is_empty()),
            "{found:?}"
        );
        drop(stop_tx);
        t.join().unwrap();
        assert!(progress_threads(u32::MAX).is_empty());
    }
}
