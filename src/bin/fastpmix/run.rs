//! `fastpmix run -n N [options] -- prog args…`: an embedded server with a
//! built-in host for this node, one namespace, N processes.
//!
//! Process ends become events for the job's namespace (range NAMESPACE,
//! source `<job>:WILDCARD` — "the job" as seen by its launcher — and the
//! process as `PMIX_EVENT_AFFECTED_PROC`):
//! - `PMIX_EVENT_PROC_TERMINATED` with `pmix.exit.code` for a normal end;
//! - `PMIX_ERR_PROC_ABORTED` for a PMIx client that dies by a signal or
//!   exits without finalizing (a program that never connected is judged by
//!   its exit status alone). The job's status is then that process's exit
//!   code, or 1 if it exited with 0. Unless `--keep-going`, the event carries
//!   `PMIX_EVENT_TERMINATE_JOB` and `PMIX_EVENT_ACTION_TIMEOUT`, and the job
//!   is terminated (SIGTERM, then SIGKILL) once that timeout passes;
//! - `PMIX_EVENT_JOB_END` with the job's exit status (`pmix.exit.code`)
//!   when all have ended, after the server let go of every process's
//!   connection: nothing an ended process had queued is routed after it.
//!
//! `PROC_TERMINATED` and `JOB_END` carry `PMIX_EVENT_NON_DEFAULT` (only
//! handlers registered for their codes get them); `PROC_ABORTED` reaches
//! default handlers too.
//!
//! With `--trace-events`, each of these is described on a line of its own
//! (`launcher: <code> (<n>) carries <key>=<value> …`) just before the
//! server's line for it, which shows where an event goes, not what it
//! carries.

use super::host::LauncherHost;
use super::watch::Watcher;
use fastpmix::event::Notification;
use fastpmix::server::{Done, Server};
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Key, Nspace, Proc, Rank, Status, Value};
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};

use fastpmix::internals::sync::lock;
use std::time::{Duration, Instant};

/// `PMIX_EXIT_CODE`.
pub const EXIT_CODE: Key = fastpmix::types::attrs::PMIX_EXIT_CODE;
/// Job information: the file the host appends `PMIX_LOG_JOB_RECORD`s to.
pub const JOB_RECORD: Key = Key::from_static("fastpmix.job.record");

/// Options of `fastpmix run`.
#[derive(Debug)]
pub struct RunOpts {
    /// Processes.
    pub n: u32,
    /// Keep the job running when a process aborts.
    pub keep_going: bool,
    /// Seconds between an abnormal death's event and the job's termination.
    pub abort_timeout: u32,
    /// Print every routed event.
    pub trace: bool,
    /// Where the server's progress thread runs.
    /// `--bind-progress` (the server's progress thread); `None`: the
    /// server's default (its environment variable, else `auto`).
    pub placement: Option<fastpmix::place::Placement>,
    /// `--bind-to core`: rank `r` bound to the `r`-th core of the
    /// launcher's own binding (as `mpirun --bind-to core`).
    pub bind_to_core: bool,
    /// The program and its arguments.
    pub prog: Vec<String>,
}

/// `--bind-to core`'s plan: rank `r` gets the `r`-th core of the
/// launcher's own binding.
struct RankBinding {
    /// Rank `r`'s CPUs.
    cpus: Vec<Vec<u32>>,
    /// A rank on every core of the binding.
    every_core: bool,
}

/// With `--bind-to core`, each rank's CPUs. More ranks than cores is an
/// error, as `mpirun` refuses to bind more processes than cores.
fn rank_binding(o: &RunOpts) -> Result<Option<RankBinding>, String> {
    if !o.bind_to_core {
        return Ok(None);
    }
    let mut cores = fastpmix::place::binding_cores().map_err(|e| format!("--bind-to core: {e}"))?;
    let n = o.n as usize;
    if n > cores.len() {
        return Err(format!(
            "--bind-to core: {} processes, but the launcher's binding has {} cores",
            o.n,
            cores.len()
        ));
    }
    let every_core = n == cores.len();
    cores.truncate(n);
    Ok(Some(RankBinding {
        cpus: cores,
        every_core,
    }))
}

/// Whether a rank runs on every core while the server's placement is left
/// to its default (no `--bind-progress`, no `FASTPMIX_SERVER_BIND_PROGRESS`):
/// the server's `auto` rule then has no core without a compute thread.
fn server_beside_every_rank(ranks: Option<&RankBinding>) -> bool {
    ranks.is_some_and(|r| r.every_core)
        && std::env::var_os(fastpmix::server::BIND_PROGRESS_ENV).is_none()
}

/// A CPU set of `cpus`, built before the fork.
fn cpu_set(cpus: &[u32]) -> Result<CpuSet, String> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c as usize)
            .map_err(|e| format!("--bind-to core: CPU {c}: {e}"))?;
    }
    Ok(set)
}

fn exit_status_code(s: &ExitStatus) -> i32 {
    match (s.code(), s.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    }
}

fn describe(s: &ExitStatus) -> String {
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "unknown status".into(),
    }
}

/// What the launcher's main loop waits for.
enum Msg {
    /// A process ended.
    Exit(u32, ExitStatus),
    /// SIGINT or SIGTERM reached the launcher.
    Signal(i32),
    /// A client called `PMIx_Abort`: terminate these ranks (all if empty)
    /// and end the job with this status; then answer the caller.
    Abort(Vec<u32>, i32, Done),
}

/// Blocks SIGINT and SIGTERM in every thread of the launcher (call before
/// any thread starts) and turns them into messages from a sigwait thread.
/// Children start with an empty signal mask (`run` resets it before exec).
fn catch_signals(tx: mpsc::Sender<Msg>) -> Result<(), String> {
    // SAFETY: sigset_t is plain data initialised by sigemptyset before use;
    // pthread_sigmask only reads `set` (old set not requested).
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    std::thread::Builder::new()
        .name("fastpmix-signals".into())
        .spawn(move || loop {
            let mut sig = 0;
            // SAFETY: `set` is a valid signal set; `sig` is a live out-param.
            if unsafe { libc::sigwait(&set, &mut sig) } == 0 && tx.send(Msg::Signal(sig)).is_err() {
                return;
            }
        })
        .map(drop)
        .map_err(|e| format!("cannot start the signal thread: {e}"))
}

/// Descriptors the launcher holds per process: two output pipes and a
/// pidfd here (shared by the watcher), a connection and a pidfd in the
/// server.
const FDS_PER_RANK: u64 = 5;
/// Descriptors besides those: the server's socket, eventfd, io_uring,
/// rings, the standard streams, and room for the host's files.
const FDS_BASE: u64 = 64;

/// Raises the soft `RLIMIT_NOFILE` to what `n` processes need (at most
/// the hard limit): a 1 024-rank job needs more than the usual soft 1 024.
fn descriptors_for(n: u32) -> Result<(), String> {
    let need = FDS_BASE + FDS_PER_RANK * u64::from(n);
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the live local `r`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return Ok(()); // unknown: let the job try
    }
    if r.rlim_cur == libc::RLIM_INFINITY || r.rlim_cur >= need {
        return Ok(());
    }
    if r.rlim_max != libc::RLIM_INFINITY && r.rlim_max < need {
        return Err(format!(
            "-n {n} needs about {need} file descriptors ({FDS_PER_RANK} per process), but the hard limit (RLIMIT_NOFILE) is {}: raise it (ulimit -Hn, limits.conf) or start fewer processes",
            r.rlim_max
        ));
    }
    r.rlim_cur = need;
    // SAFETY: setrlimit reads one rlimit from the live local `r`.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } != 0 {
        return Err(format!(
            "-n {n} needs about {need} file descriptors and the soft limit could not be raised: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The launcher's private directory, `$TMPDIR/fastpmix-<pid>-XXXXXX`
/// (the prefix lets `fastpmix inspect --pid` find the socket), holding the
/// control socket `ctl` and the job records `job.records`. The records
/// outlive the job: on drop an empty records file is removed, and the
/// directory with it when nothing else is left.
struct JobDir {
    path: std::path::PathBuf,
    records: std::path::PathBuf,
}

impl JobDir {
    fn create() -> Result<JobDir, String> {
        let base = fastpmix::server::dir::temp_base();
        let prefix = format!("fastpmix-{}-", std::process::id());
        let path = fastpmix::server::dir::private_dir(&base, &prefix).map_err(|e| e.to_string())?;
        let records = path.join("job.records");
        let d = JobDir { path, records };
        fastpmix::job::log::create_job_record(&d.records)
            .map_err(|e| format!("cannot create {}: {e}", d.records.display()))?;
        Ok(d)
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        if std::fs::symlink_metadata(&self.records).is_ok_and(|m| m.is_file() && m.len() == 0) {
            let _ = std::fs::remove_file(&self.records);
        }
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// The namespace's directory (`PMIX_NSDIR`) and its ranks' (`PMIX_PROCDIR`):
/// scratch space of the job, removed whole when the launcher is done. It
/// lies in the launcher's private (0700) job directory, so no other user
/// can have put a link there; `remove_dir_all` does not follow links.
struct NsDir(std::path::PathBuf);

impl Drop for NsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the job; returns its exit status.
pub fn run(o: RunOpts) -> Result<i32, String> {
    // Refused before anything starts.
    let ranks = rank_binding(&o)?;
    descriptors_for(o.n)?;
    let (tx, rx) = mpsc::channel::<Msg>();
    catch_signals(tx.clone())?;
    // One thread forwards every rank's output and reaps every rank.
    let watcher = {
        let tx = Mutex::new(tx.clone());
        Watcher::start(Box::new(move |rank, status| {
            let _ = lock(&tx).send(Msg::Exit(rank, status));
        }))?
    };
    // The control socket and the job records live in a directory of ours
    // (mkdtemp, 0700): no other user can have made a file at either name.
    // Dropped after the server (declared before it).
    let job_dir = JobDir::create()?;
    let record = job_dir.records.clone();
    let host = LauncherHost::new(o.trace, record.clone());
    let mut b = Server::builder()
        .host(host.clone())
        .dir(job_dir.path.clone());
    if let Some(p) = &o.placement {
        b = b.placement(p.clone());
    } else if server_beside_every_rank(ranks.as_ref()) {
        // `auto` would pin it to the last core, where the last rank runs.
        if o.trace {
            eprintln!(
                "[fastpmix] a rank on every core: the server's progress thread is not pinned"
            );
        }
        b = b.placement(fastpmix::place::Placement::None);
    }
    if o.trace {
        b = b.trace(|l| eprintln!("[fastpmix] {l}"));
    }
    let server = Arc::new(
        b.start()
            .map_err(|s| format!("cannot start the server: {s}"))?,
    );
    let _ = host.server.set(Arc::downgrade(&server));
    eprintln!(
        "[fastpmix] job records (PMIX_LOG_JOB_RECORD) go to {}",
        record.display()
    );
    let ns =
        Nspace::new(&format!("fastpmix-job-{}", std::process::id())).map_err(|s| s.to_string())?;
    // What PMIx programs read with PMIx_Get (server::jobinfo).
    let host_name = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "localhost".into());
    let tmp = std::env::temp_dir().display().to_string();
    let mut info = fastpmix::server::jobinfo::single_node(&ns, o.n, &host_name, &tmp)
        .map_err(|s| format!("job information for {} processes: {s}", o.n))?;
    info.push(Info::new(JOB_RECORD, record.display().to_string()));
    if let Some(r) = &ranks {
        fastpmix::server::jobinfo::add_cpusets(&mut info, &r.cpus);
    }
    // PMIX_NSDIR and each rank's PMIX_PROCDIR, inside the job's private
    // directory; removed with everything the job left there when run ends
    // (declared after `job_dir`, so dropped before it).
    let ns_dir = NsDir(job_dir.path.join("ns"));
    fastpmix::server::jobinfo::add_dirs(&mut info, &ns_dir.0)
        .map_err(|e| format!("cannot create {}: {e}", ns_dir.0.display()))?;
    server
        .register_nspace(&ns, info)
        .map_err(|s| format!("register the namespace of {} processes: {s}", o.n))?;
    // Before any process starts: the first may call PMIx_Abort at once.
    {
        let (tx, all) = (Mutex::new(tx.clone()), ns);
        let _ = host.on_abort.set(Box::new(move |status, targets, done| {
            let ranks = targets
                .iter()
                .filter(|p| p.nspace == all && p.rank != Rank::WILDCARD)
                .map(|p| p.rank.0)
                .collect();
            let _ = lock(&tx).send(Msg::Abort(ranks, status.0, done));
        }));
    }
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // Every rank is registered before the first starts: a wildcard fence
    // (and anything else that counts the namespace's clients) covers the
    // ranks registered when it is entered, and a fast rank 0 fencing before
    // rank 2 existed made the ranks' participant sets differ: each waited
    // in another barrier, for good.
    for rank in 0..o.n {
        let p = Proc {
            nspace: ns,
            rank: Rank(rank),
        };
        server
            .register_client(&p, uid, gid)
            .map_err(|s| format!("register {p}: {s}"))?;
    }
    let mut pids = Vec::new();
    for rank in 0..o.n {
        let p = Proc {
            nspace: ns,
            rank: Rank(rank),
        };
        let env = server
            .setup_fork(&p)
            .map_err(|s| format!("setup_fork {p}: {s}"))?;
        let mut cmd = Command::new(&o.prog[0]);
        let bind = match &ranks {
            Some(r) => {
                let cpus = &r.cpus[rank as usize];
                if o.trace {
                    eprintln!(
                        "[fastpmix] rank {rank} bound to CPUs {}",
                        fastpmix::place::ranges(cpus)
                    );
                }
                Some(cpu_set(cpus)?)
            }
            None => None,
        };
        let launcher = nix::unistd::getpid().as_raw();
        // SAFETY: the closure runs in the forked child before exec and only
        // calls async-signal-safe functions (sigemptyset, pthread_sigmask,
        // prctl, getppid, _exit, sched_setaffinity) on a local signal set,
        // a pid and a CPU set made before the fork.
        unsafe {
            use std::os::unix::process::CommandExt;
            // The launcher blocks SIGINT/SIGTERM for its sigwait thread; a
            // blocked mask survives exec, and the job's processes must be
            // terminable (job control, the launcher's own TERM path).
            cmd.pre_exec(move || {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
                // A launcher killed outright (SIGKILL, OOM) cannot end its
                // job: the kernel does, with SIGKILL to each rank when the
                // thread that started it (the launcher's main thread, alive
                // for the whole job) dies. A launcher already gone before
                // this line leaves us reparented: end here.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != launcher {
                    libc::_exit(137);
                }
                if let Some(cpus) = &bind {
                    sched_setaffinity(Pid::from_raw(0), cpus)?;
                }
                Ok(())
            });
        }
        let mut child: Child = cmd
            .args(&o.prog[1..])
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", o.prog[0]))?;
        // A pidfd names this very process even after it is reaped, so a
        // late signal can never hit a recycled pid.
        let watched = fastpmix::internals::sync::pidfd_open(child.id() as i32)
            .map_err(|e| format!("cannot watch rank {rank} (pidfd_open): {e}"))
            .map(Arc::new)
            .and_then(|fd| {
                pids.push(Some(fd.clone()));
                watcher.watch(rank, &mut child, fd)
            });
        if let Err(e) = watched {
            let _ = child.kill();
            // No rank is left unwatched.
            signal_all(&pids, &vec![false; pids.len()], libc::SIGKILL);
            return Err(e);
        }
    }

    let job = Proc {
        nspace: ns,
        rank: Rank::WILDCARD,
    };
    let mut left = o.n;
    let mut job_status: Option<i32> = None;
    let mut first_nonzero: Option<i32> = None;
    let mut terminate_at: Option<Instant> = None;
    let mut kill_at: Option<Instant> = None;
    let mut exited = vec![false; o.n as usize];
    while left > 0 {
        let now = Instant::now();
        if terminate_at.is_some_and(|t| now >= t) {
            terminate_at = None;
            eprintln!("[fastpmix] terminating the job ({left} process(es) left)");
            signal_all(&pids, &exited, libc::SIGTERM);
            kill_at = Some(now + Duration::from_secs(2));
        }
        if kill_at.is_some_and(|t| now >= t) {
            kill_at = None;
            signal_all(&pids, &exited, libc::SIGKILL);
        }
        let wait = [terminate_at, kill_at]
            .into_iter()
            .flatten()
            .map(|t| t.saturating_duration_since(now))
            .min()
            .unwrap_or(Duration::from_secs(3600));
        let (rank, status) = match rx.recv_timeout(wait) {
            Ok(Msg::Exit(r, s)) => (r, s),
            Ok(Msg::Signal(sig)) => {
                eprintln!(
                    "[fastpmix] got signal {sig}: terminating the job ({left} process(es) left)"
                );
                signal_all(&pids, &exited, libc::SIGTERM);
                terminate_at = None;
                kill_at.get_or_insert(Instant::now() + Duration::from_secs(2));
                continue;
            }
            Ok(Msg::Abort(ranks, status, done)) => {
                job_status.get_or_insert(if status == 0 { 1 } else { status });
                let chosen: Vec<bool> = (0..o.n)
                    .map(|r| exited[r as usize] || !(ranks.is_empty() || ranks.contains(&r)))
                    .collect();
                signal_all(&pids, &chosen, libc::SIGTERM);
                if ranks.is_empty() {
                    // The whole job: SIGKILL for whoever ignores SIGTERM.
                    kill_at.get_or_insert(Instant::now() + Duration::from_secs(2));
                }
                // The signals are pending before the answer is written.
                done.status(Status::SUCCESS);
                continue;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        left -= 1;
        exited[rank as usize] = true;
        let p = Proc {
            nspace: ns,
            rank: Rank(rank),
        };
        let st = server
            .namespaces()
            .into_iter()
            .find(|x| x.nspace == ns)
            .and_then(|x| x.clients.into_iter().find(|c| c.rank.0 == rank));
        let (ever, finalized) = st.map_or((false, false), |c| (c.ever_connected, c.finalized));
        let code = exit_status_code(&status);
        let abnormal = status.signal().is_some() || (ever && !finalized);
        let affected = Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, Value::Proc(Box::new(p)));
        let exit = Info::new(EXIT_CODE, Value::Int(code));
        if abnormal {
            eprintln!(
                "[fastpmix] rank {rank} ended abnormally ({}{})",
                describe(&status),
                if ever && !finalized {
                    ", before finalize"
                } else {
                    ""
                }
            );
            // The event tells the real exit code; the job failed even when
            // it was 0 (as a `PMIx_Abort` with status 0 ends it with 1).
            job_status.get_or_insert(if code == 0 { 1 } else { code });
            let mut n = Notification::new(Status::ERR_PROC_ABORTED, job, DataRange::NAMESPACE)
                .info(affected)
                .info(exit);
            if !o.keep_going {
                n = n
                    .info(Info::new(attrs::PMIX_EVENT_TERMINATE_JOB, true))
                    .info(Info::new(
                        attrs::PMIX_EVENT_ACTION_TIMEOUT,
                        Value::Int(o.abort_timeout as i32),
                    ));
                if terminate_at.is_none() && kill_at.is_none() && left > 0 {
                    eprintln!(
                        "[fastpmix] the job will be terminated in {} s (--abort-timeout; --keep-going to keep it running)",
                        o.abort_timeout
                    );
                    terminate_at =
                        Some(Instant::now() + Duration::from_secs(o.abort_timeout.into()));
                }
            }
            raise(&server, n, o.trace);
        } else {
            if code != 0 {
                first_nonzero.get_or_insert(code);
            }
            let n = Notification::new(Status::EVENT_PROC_TERMINATED, job, DataRange::NAMESPACE)
                .info(affected)
                .info(exit)
                .info(routine());
            raise(&server, n, o.trace);
        }
    }
    // The processes have ended, but their last lines may still be in the
    // pipes: forward them all before exiting (they were lost under load),
    // however long that takes while bytes keep coming. A descendant that
    // keeps a pipe open and silent gets 2 s.
    let quiet = Duration::from_secs(2);
    watcher.drain(quiet);
    let deadline = Instant::now() + quiet;
    // The server learns of a death on its own thread, and routes then what
    // the dead client had queued: JOB_END must come after that. A
    // descendant that keeps a connection open gets the same 2 s.
    while Instant::now() < deadline && any_connected(&server, &ns) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = job_status.or(first_nonzero).unwrap_or(0);
    raise(
        &server,
        Notification::new(Status::EVENT_JOB_END, job, DataRange::NAMESPACE)
            .info(Info::new(EXIT_CODE, Value::Int(status)))
            .info(routine()),
        o.trace,
    );
    server.stop();
    Ok(status)
}

/// `PMIX_EVENT_NON_DEFAULT`, on the routine ends (a normal exit, the job's
/// end): a default handler is where libraries catch errors (an MPI library
/// aborts the job from its own), and OpenPMIx keeps its internal events
/// from default handlers too. An abnormal death still reaches them.
fn routine() -> Info {
    Info::new(attrs::PMIX_EVENT_NON_DEFAULT, Value::Bool(true))
}

/// Routes one of the launcher's own events; under `--trace-events`, first
/// says what it carries.
fn raise(server: &Server, n: Notification, trace: bool) {
    if trace {
        let info: Vec<String> = n
            .info
            .iter()
            .map(|i| {
                let v = match &i.value {
                    Value::Int(x) => x.to_string(),
                    Value::Bool(x) => x.to_string(),
                    Value::Proc(p) => p.to_string(),
                    other => format!("{other:?}"),
                };
                format!("{}={v}", i.key.as_str())
            })
            .collect();
        eprintln!(
            "[fastpmix] launcher: {} ({}) carries {}",
            n.code,
            n.code.0,
            info.join(" ")
        );
    }
    let _ = server.notify(n);
}

fn any_connected(server: &Server, ns: &Nspace) -> bool {
    server
        .namespaces()
        .iter()
        .filter(|x| x.nspace == *ns)
        .any(|x| x.clients.iter().any(|c| c.connected))
}

fn signal_all(pids: &[Option<Arc<std::os::fd::OwnedFd>>], exited: &[bool], sig: i32) {
    for (fd, done) in pids.iter().zip(exited) {
        if let (Some(fd), false) = (fd, done) {
            // A process already gone gives ESRCH, which is fine.
            let _ = fastpmix::internals::sync::pidfd_send_signal(fd, sig);
        }
    }
}
