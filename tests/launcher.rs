//! The launcher and its tools, run as the user runs them (the
//! `fastpmix` binary Cargo built for this test). Ranks that must see the
//! launcher's events are this test binary re-executed as a scripted PMIx
//! client (`tests/procs`).

mod procs;

use fastpmix::internals::sync::{pidfd_exited, pidfd_open, pidfd_send_signal};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use procs::{HANG, ROLE_ENV, SCRIPT_ENV};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
    }
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run fastpmix");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A launcher running in the background, its output read as it comes.
struct Job {
    child: Child,
    out: mpsc::Receiver<String>,
    /// Output lines read but not yet matched by `expect`.
    seen: Vec<String>,
    err: Option<JoinHandle<Vec<String>>>,
}

impl Job {
    fn start(args: &[&str]) -> Job {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start fastpmix");
        let (tx, out) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        let stderr = child.stderr.take().unwrap();
        let err = std::thread::spawn(move || {
            BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
                .collect()
        });
        Job {
            child,
            out,
            seen: Vec::new(),
            err: Some(err),
        }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// The job's namespace.
    fn ns(&self) -> String {
        format!("fastpmix-job-{}", self.child.id())
    }

    /// Waits for an output line starting with `prefix` (panics after
    /// [`HANG`], a hang guard).
    fn expect(&mut self, prefix: &str) -> String {
        let deadline = Instant::now() + HANG;
        loop {
            if let Some(i) = self.seen.iter().position(|l| l.starts_with(prefix)) {
                return self.seen.remove(i);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.out.recv_timeout(left) {
                Ok(l) => self.seen.push(l),
                Err(_) => panic!("no line starting with {prefix:?}; saw {:?}", self.seen),
            }
        }
    }

    /// Waits for the launcher's end: its status, stdout and stderr.
    fn wait(mut self) -> (i32, String, String) {
        let code = self.child.wait().expect("wait for fastpmix").code();
        let mut out = std::mem::take(&mut self.seen);
        out.extend(self.out.iter());
        let err = self.err.take().unwrap().join().unwrap();
        (code.unwrap_or(-1), out.join("\n"), err.join("\n"))
    }

    /// Ends the job as a user's SIGTERM does, then [`Job::wait`].
    fn stop(self) -> (i32, String, String) {
        // SAFETY: kill(2) on our own child, which has not been reaped yet.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.wait()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // A failed test must not leave a job behind: the launcher ends its
        // processes on SIGTERM.
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill(2) on our own child, which has not been reaped.
            unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
            let _ = self.child.wait();
        }
    }
}

/// A file the test creates to let ranks go on (see [`after`]).
struct Gate(PathBuf);

impl Gate {
    fn new(name: &str) -> Gate {
        let p = std::env::temp_dir().join(format!(
            "fastpmix-launcher-test-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&p);
        Gate(p)
    }

    fn open(&self) {
        std::fs::write(&self.0, b"").unwrap();
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Shell text: `cmd` once `gate` is open. A rank whose end a watching rank
/// must see waits until the watcher's handler is in place: an event that
/// came earlier would have gone to the watcher's default handler alone.
/// The minute's bound only keeps a broken test from hanging (the watcher
/// then misses an event, which fails the test).
fn after(gate: &Gate, cmd: &str) -> String {
    format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; {cmd}",
        gate.0.display()
    )
}

/// Shell text: this test binary as a PMIx client running `script`.
fn client(script: &str) -> String {
    format!(
        "{SCRIPT_ENV}='{script}' {ROLE_ENV}=client exec '{}' child_client --exact --nocapture --test-threads=1",
        std::env::current_exe().unwrap().display()
    )
}

/// Shell text: rank r runs `ranks[r]`.
fn per_rank(ranks: &[String]) -> String {
    let arms: String = ranks
        .iter()
        .enumerate()
        .map(|(r, cmd)| format!("{r}) {cmd} ;; "))
        .collect();
    format!("case \"$PMIX_RANK\" in {arms}esac")
}

/// Runs one shell command per rank under `fastpmix run` (`opts` before
/// `--`). Rank 0 watches: the others, written with [`after`], start once it
/// says `WATCHING`. Returns the job's namespace and the launcher's status,
/// stdout and stderr.
fn watched_job(gate: &Gate, opts: &[&str], ranks: &[String]) -> (String, i32, String, String) {
    let (n, script) = (ranks.len().to_string(), per_rank(ranks));
    let mut args = vec!["run", "-n", &n];
    args.extend_from_slice(opts);
    args.extend_from_slice(&["--", "sh", "-c", &script]);
    let mut job = Job::start(&args);
    let ns = job.ns();
    job.expect("[0] WATCHING");
    gate.open();
    let (code, out, err) = job.wait();
    (ns, code, out, err)
}

/// Rank `rank`'s `CAUGHT_INFO` lines for `code` (a `WATCH_INFO` handler's).
fn caught(out: &str, rank: u32, code: i32) -> Vec<&str> {
    let prefix = format!("[{rank}] CAUGHT_INFO code={code} ");
    out.lines().filter(|l| l.starts_with(&prefix)).collect()
}

/// Whether `line` has the word `tok` (words are split at spaces and at the
/// `;` between printed infos).
fn has(line: &str, tok: &str) -> bool {
    line.split([' ', ';']).any(|w| w == tok)
}

/// The server's `--trace-events` lines, one per routed event, in order.
fn routed(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("[fastpmix] event "))
        .collect()
}

/// The launcher's own description of the events it raises with `name`
/// (what each carries), in order.
fn raised<'a>(err: &'a str, name: &str) -> Vec<&'a str> {
    let prefix = format!("[fastpmix] launcher: {name} (");
    err.lines().filter(|l| l.starts_with(&prefix)).collect()
}

/// How the launcher's `--trace-events` describes one of its own events.
fn carries(name: &str, code: i32, info: &str) -> String {
    format!("[fastpmix] launcher: {name} ({code}) carries {info}")
}

/// The number after `word` in `line` (`head 4,` gives 4).
fn num_after(line: &str, word: &str) -> u64 {
    let mut w = line.split_whitespace();
    w.find(|x| *x == word)
        .and_then(|_| w.next())
        .and_then(|n| n.trim_end_matches(',').parse().ok())
        .unwrap_or_else(|| panic!("no number after {word:?} in {line:?}"))
}

#[test]
fn demo_job_exchanges_events_and_survivors_handle_the_abort() {
    let (code, out, err) = run(&[
        "run",
        "-n",
        "3",
        "--abort-timeout",
        "2",
        "--",
        BIN,
        "demo-client",
    ]);
    assert_eq!(
        code, 134,
        "job status = the aborted rank's (128 + SIGABRT)\n{out}\n{err}"
    );
    for r in 0..3 {
        assert!(
            out.contains(&format!("[{r}] rank {r}: found all 2 peer(s)")),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "[{r}] rank {r}:   [1st: mpi-layer] stage event from rank 0"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "[{r}] rank {r}:   [last: app] stage event; earlier handlers said [\"mpi-layer="
            )),
            "{out}"
        );
    }
    for r in 0..2 {
        assert!(
            out.contains(&format!(
                "[{r}] rank {r}: rank 2 aborted; the launcher ends the job in 2 s"
            )),
            "{out}"
        );
        assert!(out.contains(&format!("[{r}] rank {r}: finalized")), "{out}");
    }
    assert!(
        err.contains("rank 2 ended abnormally (signal 6, before finalize)"),
        "{err}"
    );
}

#[test]
fn normal_exits_are_reported_as_proc_terminated_and_job_end_with_the_exit_status() {
    // Rank 0 watches; rank 1 is a plain program ending with 3, rank 2 a
    // client that finalizes. Both wait until rank 0's handler is in place.
    let gate = Gate::new("normal-exits");
    let ranks = [
        client("WATCH_INFO -201; AWAIT -201 2; FINALIZE"),
        after(&gate, "exit 3"),
        after(&gate, &client("FINALIZE")),
    ];
    let (ns, code, out, err) = watched_job(&gate, &["--trace-events"], &ranks);
    assert_eq!(code, 3, "job status = the first non-zero exit code\n{err}");
    assert!(!err.contains("abnormally"), "{err}");
    // What a process of the job receives: the real exit status, the job as
    // source, the process that ended as affected process.
    let got = caught(&out, 0, -201);
    assert_eq!(got.len(), 2, "{out}");
    // NON_DEFAULT: rank 0's default handler (every scripted client has one)
    // saw neither.
    assert!(
        !out.lines().any(|l| l.starts_with("[0] EVENT code=-201 ")),
        "a default handler got a routine end: {out}"
    );
    for (rank, exit) in [(1, 3), (2, 0)] {
        let line = got
            .iter()
            .find(|l| has(l, &format!("affected={ns}:{rank}")))
            .unwrap_or_else(|| panic!("no PROC_TERMINATED for rank {rank}: {got:?}"));
        assert!(has(line, &format!("source={ns}:WILDCARD")), "{line}");
        assert!(has(line, &format!("pmix.exit.code=Int({exit})")), "{line}");
    }
    // One per process, rank 0's too (no one is left to receive it), each
    // routed to the job's namespace alone with range NAMESPACE.
    let mut carried = raised(&err, "PMIX_EVENT_PROC_TERMINATED");
    carried.sort();
    let want: Vec<String> = [(0, 0), (1, 3), (2, 0)]
        .iter()
        .map(|(r, c)| {
            let info = format!("pmix.evproc={ns}:{r} pmix.exit.code={c} pmix.evnondef=true");
            carries("PMIX_EVENT_PROC_TERMINATED", -201, &info)
        })
        .collect();
    assert_eq!(carried, want, "{err}");
    let route = format!("from {ns}:WILDCARD [Host] range DataRange(3) -> rings [{ns}]");
    let routed = routed(&err);
    let terminated: Vec<&&str> = routed
        .iter()
        .filter(|l| l.contains("event PMIX_EVENT_PROC_TERMINATED (-201) "))
        .collect();
    assert_eq!(terminated.len(), 3, "{err}");
    assert!(terminated.iter().all(|l| l.ends_with(&route)), "{err}");
    // JOB_END: last of all the routed events, with the job's status.
    let last = routed.last().unwrap();
    assert!(
        last.starts_with("[fastpmix] event PMIX_EVENT_JOB_END (-145) ") && last.ends_with(&route),
        "{err}"
    );
    assert_eq!(
        routed
            .iter()
            .filter(|l| l.contains("PMIX_EVENT_JOB_END"))
            .count(),
        1,
        "{err}"
    );
    assert_eq!(
        raised(&err, "PMIX_EVENT_JOB_END"),
        [carries(
            "PMIX_EVENT_JOB_END",
            -145,
            "pmix.exit.code=3 pmix.evnondef=true"
        )],
        "{err}"
    );
    let (code, _, err) = run(&["run", "-n", "2", "--trace-events", "--", "true"]);
    assert_eq!(code, 0);
    assert_eq!(
        raised(&err, "PMIX_EVENT_JOB_END"),
        [carries(
            "PMIX_EVENT_JOB_END",
            -145,
            "pmix.exit.code=0 pmix.evnondef=true"
        )],
        "{err}"
    );
}

#[test]
fn job_end_comes_after_everything_an_ended_client_had_queued() {
    // Each rank queues a burst of events and exits at once (no finalize):
    // the server routes what is still queued when it learns of the death,
    // on its own thread. Before the launcher waited for that, JOB_END
    // overtook the burst's tail in 2 of 25 runs on a loaded machine.
    let (_, out, err) = run(&[
        "run",
        "-n",
        "2",
        "--keep-going",
        "--trace-events",
        "--",
        "sh",
        "-c",
        &client("NOTIFY_N 300 -7200 3"),
    ]);
    assert_eq!(out.matches("] NOTIFIED 0").count(), 2, "{out}");
    let routed = routed(&err);
    let burst = routed
        .iter()
        .filter(|l| l.starts_with("[fastpmix] event PMIX_STATUS(-7200) "))
        .count();
    assert_eq!(burst, 600, "every queued event is routed");
    let last = routed.last().unwrap();
    assert!(
        last.starts_with("[fastpmix] event PMIX_EVENT_JOB_END (-145) "),
        "{last}"
    );
}

#[test]
fn a_client_that_exits_without_finalizing_is_aborted_and_the_event_asks_to_terminate_the_job() {
    // Rank 1 connects and exits with status 0 without finalizing. The
    // timeout is long: rank 0 finalizes well before the job would be ended.
    let gate = Gate::new("no-finalize");
    let ranks = [
        client("WATCH_INFO -7; AWAIT -7 1; FINALIZE"),
        after(&gate, &client("PING")),
    ];
    let opts = ["--abort-timeout", "60", "--trace-events"];
    let (ns, code, out, err) = watched_job(&gate, &opts, &ranks);
    assert!(
        out.contains("[1] PONG"),
        "rank 1 was a connected client\n{out}"
    );
    assert_eq!(code, 1, "an aborted job fails, though rank 1 exited with 0");
    assert!(
        err.contains("rank 1 ended abnormally (exit code 0, before finalize)"),
        "{err}"
    );
    let got = caught(&out, 0, -7);
    assert_eq!(got.len(), 1, "{out}");
    for tok in [
        format!("source={ns}:WILDCARD"),
        format!("affected={ns}:1"),
        "pmix.exit.code=Int(0)".into(),
        "pmix.evterm.job=Bool(true)".into(),
        "pmix.evtimeout=Int(60)".into(),
    ] {
        assert!(has(got[0], &tok), "{tok} missing: {}", got[0]);
    }
    let info =
        format!("pmix.evproc={ns}:1 pmix.exit.code=0 pmix.evterm.job=true pmix.evtimeout=60");
    assert_eq!(
        raised(&err, "PMIX_ERR_PROC_ABORTED"),
        [carries("PMIX_ERR_PROC_ABORTED", -7, &info)],
        "{err}"
    );
    let route = format!("from {ns}:WILDCARD [Host] range DataRange(3) -> rings [{ns}]");
    let aborted: Vec<&str> = routed(&err)
        .into_iter()
        .filter(|l| l.contains("event PMIX_ERR_PROC_ABORTED (-7) "))
        .collect();
    assert!(aborted.len() == 1 && aborted[0].ends_with(&route), "{err}");
    // Rank 1 is not also reported as a normal end.
    let info = format!("pmix.evproc={ns}:0 pmix.exit.code=0 pmix.evnondef=true");
    assert_eq!(
        raised(&err, "PMIX_EVENT_PROC_TERMINATED"),
        [carries("PMIX_EVENT_PROC_TERMINATED", -201, &info)],
        "{err}"
    );
}

#[test]
fn a_process_killed_by_a_signal_aborts_the_job_after_the_action_timeout() {
    // Rank 0 kills itself; rank 1 would sleep for a minute: the launcher's
    // default policy terminates it after --abort-timeout.
    let t = Instant::now();
    let job = Job::start(&[
        "run",
        "-n",
        "2",
        "--abort-timeout",
        "1",
        "--trace-events",
        "--",
        "sh",
        "-c",
        "if [ \"$PMIX_RANK\" = 0 ]; then kill -9 $$; else exec sleep 60; fi",
    ]);
    let ns = job.ns();
    let (code, _, err) = job.wait();
    assert_eq!(code, 128 + 9, "{err}");
    assert!(err.contains("event PMIX_ERR_PROC_ABORTED"), "{err}");
    // Rank 0's event (rank 1's, once it is terminated, comes after).
    let info =
        format!("pmix.evproc={ns}:0 pmix.exit.code=137 pmix.evterm.job=true pmix.evtimeout=1");
    assert_eq!(
        raised(&err, "PMIX_ERR_PROC_ABORTED").first().copied(),
        Some(carries("PMIX_ERR_PROC_ABORTED", -7, &info).as_str()),
        "{err}"
    );
    assert!(err.contains("terminating the job"), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(50),
        "rank 1 was terminated, not waited for"
    );
}

#[test]
fn keep_going_leaves_the_rest_of_the_job_running() {
    let (code, _, err) = run(&[
        "run",
        "-n",
        "2",
        "--keep-going",
        "--",
        "sh",
        "-c",
        "if [ \"$PMIX_RANK\" = 0 ]; then kill -9 $$; else sleep 1; exit 0; fi",
    ]);
    assert_eq!(code, 128 + 9, "{err}");
    assert!(!err.contains("terminating the job"), "{err}");
}

/// The pids of the launcher's children once `n` of them run `comm` (their
/// exec is done), from `/proc/*/stat`: "pid (comm) state ppid …".
fn children_running(launcher: u32, comm: &str, n: usize) -> Vec<i32> {
    let (parent, deadline) = (launcher.to_string(), Instant::now() + HANG);
    loop {
        let mut found = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            // Gone since the directory was read: not ours to count.
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // The name may hold spaces or parentheses: split at the last ')'.
            let Some((head, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let name = head.split_once('(').map(|(_, n)| n);
            if name == Some(comm) && rest.split_whitespace().nth(1) == Some(parent.as_str()) {
                found.push(pid);
            }
        }
        if found.len() >= n {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{n} children running {comm} never showed up: {found:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pidfds of processes a test expects to end: a failed test SIGKILLs those
/// still running, so none outlives it.
struct Reaped(Vec<std::os::fd::OwnedFd>);

impl Drop for Reaped {
    fn drop(&mut self) {
        for fd in &self.0 {
            if !pidfd_exited(fd) {
                let _ = pidfd_send_signal(fd, libc::SIGKILL);
            }
        }
    }
}

#[test]
fn sigint_to_the_launcher_ends_every_process_of_the_job() {
    // PRRTE#454: a Ctrl-C at the launcher left the job's processes running.
    let mut job = Job::start(&["run", "-n", "2", "--", "sleep", "60"]);
    let pids = children_running(job.child.id(), "sleep", 2);
    assert_eq!(pids.len(), 2, "{pids:?}");
    // A pidfd names its process even once it is reaped, so a recycled pid
    // cannot pass for one still running (or for one gone).
    let procs = Reaped(
        pids.iter()
            .map(|&p| pidfd_open(p).expect("pidfd_open"))
            .collect(),
    );
    kill(Pid::from_raw(job.child.id() as i32), Signal::SIGINT).unwrap();
    // A hang guard, not a timing check: a launcher that ignores SIGINT
    // would otherwise keep the test waiting for its sleeps.
    let deadline = Instant::now() + HANG;
    while job.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the launcher still runs {HANG:?} after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, _, err) = job.wait();
    // The job's status: its processes died of the SIGTERM the launcher
    // sent them (128 + signal, as for any abnormal end).
    assert_eq!(code, 128 + libc::SIGTERM, "{err}");
    assert!(
        err.contains(&format!("got signal {}: terminating the job", libc::SIGINT)),
        "{err}"
    );
    for (p, fd) in pids.iter().zip(&procs.0) {
        assert!(
            pidfd_exited(fd),
            "process {p} of the job outlived its launcher"
        );
    }
}

#[test]
fn ranks_of_a_launcher_killed_outright_do_not_run_on_as_orphans() {
    // SIGKILL leaves the launcher no chance to end its job: the ranks get
    // the kernel's parent-death signal (SIGKILL) instead of running on.
    let job = Job::start(&["run", "-n", "2", "--", "sleep", "60"]);
    let pids = children_running(job.child.id(), "sleep", 2);
    let procs = Reaped(
        pids.iter()
            .map(|&p| pidfd_open(p).expect("pidfd_open"))
            .collect(),
    );
    kill(Pid::from_raw(job.child.id() as i32), Signal::SIGKILL).unwrap();
    let (code, _, _) = job.wait();
    assert_eq!(code, -1, "the launcher died of its SIGKILL");
    // A hang guard, not a timing check.
    let deadline = Instant::now() + HANG;
    while !procs.0.iter().all(pidfd_exited) {
        assert!(
            Instant::now() < deadline,
            "the job's processes {pids:?} still run {HANG:?} after their launcher was killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn children_get_the_namespace_rank_and_server_address() {
    let (code, out, _) = run(&[
        "run",
        "-n",
        "2",
        "--",
        "sh",
        "-c",
        "echo ns=$PMIX_NAMESPACE rank=$PMIX_RANK addr=$FASTPMIX_SERVER_ADDR",
    ]);
    assert_eq!(code, 0);
    for r in 0..2 {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("[{r}] ")))
            .expect(&out);
        assert!(line.contains(&format!("rank={r}")), "{line}");
        assert!(line.contains("ns=fastpmix-job-"), "{line}");
        assert!(line.contains("/ctl"), "{line}");
    }
}

/// `fastpmix inspect --pid PID` once the launcher `PID` answers (it starts
/// its server first).
fn inspect_when_up(pid: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (code, out, err) = run(&["inspect", "--pid", pid]);
        if code == 0 {
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "inspect never reached the launcher: {err}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `--bind-to core`: rank r runs bound to the r-th core of the launcher's
/// binding (what `place::binding_cores` says for this process, whose
/// binding the launcher inherits), and its job information says where
/// every rank is, so its progress thread keeps off the peers' cores.
#[test]
fn bind_to_core_binds_rank_r_to_the_rth_core_and_tells_the_ranks() {
    let cores = fastpmix::place::binding_cores().expect("hwloc");
    let n = cores.len().min(2);
    let lists: Vec<String> = cores[..n]
        .iter()
        .map(|c| fastpmix::place::ranges(c))
        .collect();
    let script = format!(
        "grep Cpus_allowed_list /proc/self/status; {}",
        client("GET @* pmix.lcpus; GET @me pmix.cpuset; PLACEMENT; FINALIZE")
    );
    let (code, out, err) = run(&[
        "run",
        "-n",
        &n.to_string(),
        "--bind-to",
        "core",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code, 0, "{err}");
    for (r, list) in lists.iter().enumerate() {
        let mine: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(&format!("[{r}] ")))
            .collect();
        let has = |want: &str| mine.iter().any(|l| l.contains(want));
        assert!(
            has(&format!("Cpus_allowed_list:\t{list}")),
            "rank {r}: {mine:?}"
        );
        assert!(
            has(&format!("GET_RESULT 0 s:{}", lists.join(":"))),
            "rank {r}: {mine:?}"
        );
        assert!(has(&format!("GET_RESULT 0 s:{list}")), "rank {r}: {mine:?}");
        if n == 2 && cores.len() == 2 {
            // Every core runs a rank: no core is left for a progress thread.
            assert!(
                has("not pinned") && has("beside the local peers' bindings"),
                "rank {r}: {mine:?}"
            );
        }
    }
}

/// With a rank on every core, the server's `auto` rule would pin its
/// progress thread to the last rank's core: the launcher leaves it to the
/// scheduler (`fastpmix inspect` says so), unless told otherwise.
#[test]
fn with_a_rank_on_every_core_the_server_thread_is_not_pinned_onto_one() {
    let cores = fastpmix::place::binding_cores().expect("hwloc").len();
    let n = cores.to_string();
    for (extra, want) in [
        (None, "none: left to the scheduler"),
        (Some("auto"), "auto: CPU"),
    ] {
        let mut args = vec!["run", "-n", &n, "--bind-to", "core"];
        if let Some(p) = extra {
            args.extend(["--bind-progress", p]);
        }
        args.extend(["--", "sleep", "30"]);
        let mut job = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = job.id().to_string();
        let report = inspect_when_up(&pid);
        // SIGTERM: the launcher ends its job's processes too.
        let _ = Command::new("kill").arg(&pid).status();
        let _ = job.wait();
        let line = report
            .lines()
            .find(|l| l.starts_with("progress thread: "))
            .unwrap_or_else(|| panic!("{report}"));
        assert!(line.contains(want), "--bind-progress {extra:?}: {line}");
    }
}

#[test]
fn bind_to_core_refuses_more_processes_than_cores_before_starting_any() {
    let cores = fastpmix::place::binding_cores().expect("hwloc").len();
    let n = (cores + 1).to_string();
    let (code, out, err) = run(&[
        "run",
        "-n",
        &n,
        "--bind-to",
        "core",
        "--",
        "echo",
        "started",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!(
            "--bind-to core: {n} processes, but the launcher's binding has {cores} cores"
        )),
        "{err}"
    );
    assert!(
        !out.contains("started") && !err.contains("job records"),
        "{out}{err}"
    );
    let (code, _, err) = run(&["run", "--bind-to", "socket", "--", "true"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("invalid value 'socket' for '--bind-to")
            && err.contains("[possible values: none, core]"),
        "{err}"
    );
}

#[test]
fn the_program_starts_at_the_first_word_that_is_not_an_option_or_after_a_double_dash() {
    // As mpirun: `run -n 2 prog -x` runs `prog -x`; after `--`, even a word
    // that looks like an option is the program's.
    let (code, out, err) = run(&["run", "-n", "2", "echo", "-n", "x", "--", "y"]);
    assert_eq!(code, 0, "{err}");
    for r in 0..2 {
        assert!(out.contains(&format!("[{r}] x -- y")), "{out}");
    }
    let (code, out, err) = run(&["run", "--", "echo", "--keep-going"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[0] --keep-going"), "{out}");
    let (code, _, err) = run(&["run", "-n", "2"]);
    assert_eq!(code, 2, "a usage error");
    assert!(err.contains("Usage: fastpmix run"), "{err}");
}

#[test]
fn help_and_version_go_to_stdout_with_status_0_and_bad_usage_is_status_2() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["notify", "--help"],
        &["inspect", "-h"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("Usage: fastpmix"), "{args:?}: {out}");
    }
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("fastpmix {}", env!("CARGO_PKG_VERSION"))
    );
    // `notify --help` used to try to reach a server first.
    for args in [
        &["frobnicate"][..],
        &["run", "--np", "0", "true"],
        &["notify", "--range", "nowhere", "1"],
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
}

#[test]
fn inspect_and_notify_reach_a_running_launcher() {
    // One demo-less client that stays connected: a sleeping shell is not a
    // client, so run the demo client alone (size 1 finalizes at once)... use
    // a plain sleeper and look at the registered namespace instead.
    let mut job = Command::new(BIN)
        .args(["run", "-n", "1", "--trace-events", "--", "sleep", "30"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = job.id().to_string();
    let report = inspect_when_up(&pid);
    assert!(
        report.contains(&format!("namespace fastpmix-job-{pid}")),
        "{report}"
    );
    assert!(report.contains("rank 0"), "{report}");
    let (code, out, err) = run(&[
        "notify",
        "--pid",
        &pid,
        "--range",
        "local",
        "--info",
        "pmix.evterm.job=true",
        "--info",
        "my.key=uint32:7",
        "EVENT_NODE_DOWN",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = run(&["notify", "--pid", &pid, "NO_SUCH_CODE"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown event code"), "{err}");
    let stderr = job.stderr.take().unwrap();
    let _ = Command::new("kill").arg(&pid).status();
    let _ = job.wait();
    let traced: Vec<String> = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .collect();
    assert!(
        traced
            .iter()
            .any(|l| l.contains("event PMIX_EVENT_NODE_DOWN") && l.contains("[Tool]")),
        "{traced:?}"
    );
}

#[test]
fn notify_sends_a_code_given_by_number_to_its_targets_with_the_given_source() {
    let mut job = Job::start(&[
        "run",
        "-n",
        "2",
        "--trace-events",
        "--",
        "sh",
        "-c",
        &client("WATCH_INFO -7101; WATCH_INFO -7102; AWAIT -7102 1; FINALIZE"),
    ]);
    let (pid, ns) = (job.pid(), job.ns());
    for r in 0..2 {
        job.expect(&format!("[{r}] WATCHING"));
        job.expect(&format!("[{r}] WATCHING"));
    }
    let (code, out, err) = run(&[
        "notify",
        "--pid",
        &pid,
        "--source",
        "operator:42",
        "--target",
        &format!("{ns}:0"),
        "--info",
        "test.seq=uint64:1",
        "-7101",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // Both ranks read one ring in order: once rank 1 handled this one, it
    // had passed the first, which was not for it.
    let (code, out, err) = run(&[
        "notify",
        "--pid",
        &pid,
        "--source",
        "operator:42",
        "--target",
        &format!("{ns}:0"),
        "--target",
        &format!("{ns}:1"),
        "-7102",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = job.wait();
    assert_eq!(code, 0, "{out}\n{err}");
    let first = caught(&out, 0, -7101);
    assert_eq!(first.len(), 1, "{out}");
    assert!(has(first[0], "source=operator:42"), "{}", first[0]);
    assert!(has(first[0], "seq=Uint64(1)"), "{}", first[0]);
    for r in 0..2 {
        let second = caught(&out, r, -7102);
        assert_eq!(second.len(), 1, "rank {r}\n{out}");
        assert!(has(second[0], "source=operator:42"), "{}", second[0]);
    }
    assert!(
        !out.lines()
            .any(|l| l.starts_with("[1] ") && l.contains("-7101")),
        "rank 1 is not a target\n{out}"
    );
    assert!(
        routed(&err).iter().any(|l| l.ends_with(&format!(
            "event PMIX_STATUS(-7101) (-7101) from operator:42 [Tool] range DataRange(6) -> rings [{ns}]"
        ))),
        "{err}"
    );
}

#[test]
fn inspect_shows_the_ring_the_cache_and_a_connected_clients_cursor_and_lag() {
    // Rank 0 is a client whose handler for -7104 never returns: what comes
    // after that event stays unread, and the lag shows it. Its main thread
    // waits (twice HANG) for an event that never comes. Rank 1 never
    // connects, so job events for it are retained.
    let ranks = [
        client("WATCH_HANG -7104; AWAIT -7106 1; AWAIT -7106 1"),
        "exec sleep 300".to_string(),
    ];
    let mut job = Job::start(&["run", "-n", "2", "--", "sh", "-c", &per_rank(&ranks)]);
    let (pid, ns) = (job.pid(), job.ns());
    job.expect("[0] WATCHING");
    let inspect = || {
        let (code, out, err) = run(&["inspect", "--pid", &pid]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let line = |report: &str, prefix: &str| -> String {
        report
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix:?} in\n{report}"))
            .to_owned()
    };

    let report = inspect();
    let ring = line(&report, &format!("namespace {ns}: ring "));
    let segment = ring.split_whitespace().nth(3).unwrap();
    assert!(
        std::path::Path::new("/dev/shm")
            .join(segment.trim_start_matches('/'))
            .exists(),
        "{ring}"
    );
    let slots = ring
        .split_whitespace()
        .nth(4)
        .unwrap()
        .trim_start_matches('(');
    assert!(slots.parse::<u64>().unwrap() > 0, "{ring}");
    assert!(ring.ends_with(", 2 registered clients"), "{ring}");
    let head = num_after(&ring, "head");
    // Nothing committed yet: the data store is its first, empty chunk.
    assert_eq!(
        line(&report, "  data store: "),
        "  data store: 0 item(s) committed or received, 16384 B of shared memory"
    );
    assert_eq!(
        line(&report, "cache: "),
        "cache: 0 environment event(s), 0 job event(s) retained for clients not yet connected (capacity 512 each)"
    );
    let rank0 = line(&report, "  rank 0 ");
    assert_eq!(
        rank0.split_whitespace().nth(4),
        Some("connected"),
        "{rank0}"
    );
    // The pid shown is the launcher's child (sh exec'd the client).
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", num_after(&rank0, "pid"))).unwrap();
    let ppid = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap();
    assert_eq!(ppid, pid, "{rank0}");
    assert_eq!(num_after(&rank0, "cursor"), head, "{rank0}");
    assert_eq!(num_after(&rank0, "lag"), 0, "{rank0}");
    assert_eq!(num_after(&rank0, "lost"), 0, "{rank0}");
    assert_eq!(
        line(&report, "  rank 1 ").trim_end(),
        "  rank 1     not connected"
    );

    let notify = |target: &str, code: &str| {
        let (c, out, err) = run(&["notify", "--pid", &pid, "--target", target, code]);
        assert_eq!(c, 0, "{out}{err}");
    };
    notify(&format!("{ns}:0"), "-7104");
    job.expect("[0] HANGING code=-7104");
    for _ in 0..3 {
        notify(&format!("{ns}:*"), "-7105");
    }

    let report = inspect();
    let ring = line(&report, &format!("namespace {ns}: ring "));
    assert_eq!(num_after(&ring, "head"), head + 4, "{ring}");
    let rank0 = line(&report, "  rank 0 ");
    // The stuck event was read; the three after it were not.
    assert_eq!(num_after(&rank0, "cursor"), head + 1, "{rank0}");
    assert_eq!(num_after(&rank0, "lag"), 3, "{rank0}");
    // Only the events for the whole namespace are owed to rank 1.
    assert_eq!(
        line(&report, "cache: "),
        "cache: 0 environment event(s), 3 job event(s) retained for clients not yet connected (capacity 512 each)"
    );
    job.stop();
}

#[test]
fn a_launcher_short_of_processes_says_so_and_leaves_no_rank_behind() {
    // Under a small RLIMIT_NPROC (as a non-root user: root is exempt) the
    // launcher cannot start every rank (or thread) it needs. Before, a
    // thread spawn panicked (exit 101) and ranks ran on; now the failing
    // step is named, the ranks already started are killed, and the exit
    // status is an ordinary failure. (It needs a handful of threads and one
    // process per rank: 10 is short for 16 ranks.)
    use std::os::unix::process::CommandExt;
    if procs::ids().0 != 0 || !procs::peer_can_run_this_binary() {
        eprintln!("skipped: needs root and a checkout the second uid can enter");
        return;
    }
    let (uid, gid) = procs::peer_ids();
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "-n", "16", "--", "sleep", "5"])
        .env("TMPDIR", "/tmp")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .uid(uid)
        .gid(gid);
    // SAFETY: setrlimit is async-signal-safe; the struct is built before
    // the fork and only read.
    unsafe {
        let lim = libc::rlimit {
            rlim_cur: 10,
            rlim_max: 10,
        };
        cmd.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_NPROC, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("run the launcher");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "a panic:\n{err}");
    assert!(!err.contains("panicked"), "a panic:\n{err}");
    assert_eq!(out.status.code(), Some(1), "an ordinary failure:\n{err}");
    assert!(
        err.contains("cannot start"),
        "the failing step is named:\n{err}"
    );
    // No rank of this job is left: the peer uid runs nothing else.
    let deadline = Instant::now() + HANG;
    loop {
        let left: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                use std::os::unix::fs::MetadataExt;
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.parse::<u32>().is_ok())
                    && e.metadata().is_ok_and(|m| m.uid() == uid)
                    && std::fs::read_to_string(e.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "sleep")
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "ranks left running: {left:?}\n{err}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
