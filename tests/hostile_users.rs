//! Hostile and careless users on the node (docs/reliability.md, "Hostile
//! and careless users"): another uid that takes the names a job will use
//! in the shared temp directory first, floods the control socket, or fills
//! the shared-memory filesystem. Each test plays the attack on real
//! processes, files and sockets; the attacker is the second test uid
//! (`tests/peer`), so the tests that need it run as root and otherwise say
//! why they skip.

#[path = "procs/mod.rs"]
mod procs;

use fastpmix::Proc;
use procs::{peer_can_run_this_binary, peer_ids, ClientProc, ServerProc, ROLE_ENV, SCRIPT_ENV};
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const CHILD: &str = "child_client";

const SERVER_CHILD: &str = "child_server";

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

#[test]
fn child_server() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("server") {
        procs::server_main();
    }
}

/// Why a two-uid test cannot run here, if it cannot.
fn two_uids_unavailable(peer_runs_the_job: bool) -> Option<&'static str> {
    if procs::ids().0 != 0 {
        Some("needs root to act as a second uid (CI runs as root)")
    } else if peer_runs_the_job && !peer_can_run_this_binary() {
        Some(
            "the second uid cannot execute this test binary (checkout under a root-only directory)",
        )
    } else {
        None
    }
}

/// A directory standing in for `/tmp` (mode 1777, as the shared temp
/// directory is), removed with everything in it on drop.
struct SharedTmp(PathBuf);

impl SharedTmp {
    fn new(tag: &str) -> SharedTmp {
        let d = std::env::temp_dir().join(format!("fastpmix-hostile-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        SharedTmp(d)
    }
}

impl Drop for SharedTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `fastpmix run -n 1` over this binary's client with `script`, with
/// `TMPDIR=tmp`, as `ids` (default: this process's), stopped before it
/// execs the launcher: its pid — the launcher's pid — is known, so every
/// name derived from it can be taken before the launcher looks.
fn stopped_launcher(tmp: &Path, ids: Option<(u32, u32)>, script: &str) -> Child {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "kill -STOP $$; exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_fastpmix"))
        .args(["run", "-n", "1", "--"])
        .arg(exe)
        .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "client")
        .env(SCRIPT_ENV, script)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((u, g)) = ids {
        cmd.uid(u).gid(g);
    }
    let child = cmd.spawn().expect("start the launcher");
    let s = procs::wait_state(child.id(), |s| s == 'T');
    assert_eq!(s, 'T', "the launcher's shell stops itself");
    child
}

/// Lets a [`stopped_launcher`] go on; its (exit code, stdout, stderr). A
/// launcher that has not ended within [`procs::HANG`] is killed and the
/// test fails: the attack stalled the job.
fn finish(child: Child) -> (i32, String, String) {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    // SAFETY: kill(2) with a valid signal on our own stopped child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    match rx.recv_timeout(procs::HANG) {
        Ok(out) => {
            let out = out.unwrap();
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
        Err(_) => {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the launcher stalled (killed after {:?})", procs::HANG);
        }
    }
}

/// The job-record file the launcher announced.
fn announced_records(err: &str) -> PathBuf {
    err.lines()
        .find_map(|l| l.strip_prefix("[fastpmix] job records (PMIX_LOG_JOB_RECORD) go to "))
        .unwrap_or_else(|| panic!("the launcher announces its job-record file:\n{err}"))
        .into()
}

/// What another user may put at a name before its owner-to-be looks.
#[derive(Debug, Clone, Copy)]
enum Squat {
    /// A file anyone may read and write (0666).
    OpenFile,
    /// A FIFO nobody reads: a blocking open for writing never returns.
    Fifo,
    /// A symbolic link to a file of the squatter's.
    Symlink,
}

/// Puts `what` at `path`, owned by the second uid; returns the file the
/// squatter reads afterwards (the target for a link).
fn squat(path: &Path, what: Squat, tmp: &Path) -> PathBuf {
    let (pu, pg) = peer_ids();
    match what {
        Squat::OpenFile => {
            std::fs::write(path, b"").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
            std::os::unix::fs::chown(path, Some(pu), Some(pg)).unwrap();
            path.into()
        }
        Squat::Fifo => {
            nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap();
            std::os::unix::fs::chown(path, Some(pu), Some(pg)).unwrap();
            path.into()
        }
        Squat::Symlink => {
            let target = tmp.join("squatters-own-file");
            std::fs::write(&target, b"").unwrap();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o666)).unwrap();
            std::os::unix::fs::chown(&target, Some(pu), Some(pg)).unwrap();
            std::os::unix::fs::symlink(&target, path).unwrap();
            std::os::unix::fs::lchown(path, Some(pu), Some(pg)).unwrap();
            target
        }
    }
}

/// Another uid creates `fastpmix-job-<pid>.records` — the name the
/// launcher of pid `<pid>` used to write its job records to in the shared
/// temp directory — as a 0666 file, as a FIFO and as a link to its own
/// file. In each case the job runs to its end (a FIFO does not stall its
/// `PMIx_Log`), the squatter's object gets no byte, and the records are in
/// a file inside a directory only the launcher's user can enter.
#[test]
fn job_records_squatted_at_the_old_predictable_name_reach_neither_the_squatter_nor_stall_the_job() {
    if let Some(why) = two_uids_unavailable(false) {
        eprintln!("skipped: {why}");
        return;
    }
    for what in [Squat::OpenFile, Squat::Fifo, Squat::Symlink] {
        let tmp = SharedTmp::new("records");
        let child = stopped_launcher(&tmp.0, None, "LOG pmix.log.jrec=s:secret~payload; FINALIZE");
        let old = tmp.0.join(format!("fastpmix-job-{}.records", child.id()));
        let watched = squat(&old, what, &tmp.0);
        let (code, out, err) = finish(child);
        assert_eq!(code, 0, "{what:?}: the job succeeds\n{out}\n{err}");
        assert!(
            out.contains("[0] LOG_RESULT 0"),
            "{what:?}: the record is logged\n{out}\n{err}"
        );
        let m = std::fs::symlink_metadata(&watched).unwrap();
        if matches!(what, Squat::Fifo) {
            assert!(m.file_type().is_fifo(), "{what:?}: the FIFO is left alone");
        } else {
            assert_eq!(m.len(), 0, "{what:?}: the squatter's file got no byte");
        }
        assert_eq!(m.uid(), peer_ids().0, "{what:?}: still the squatter's");
        let records = announced_records(&err);
        assert_ne!(records, old, "{what:?}");
        let dir = std::fs::symlink_metadata(records.parent().unwrap()).unwrap();
        assert!(dir.is_dir());
        assert_eq!(
            (dir.uid(), dir.mode() & 0o777),
            (0, 0o700),
            "{what:?}: the records' directory is the launcher user's alone"
        );
        let text = std::fs::read_to_string(&records).unwrap();
        assert!(
            text.ends_with("\t0\tsecret payload\n"),
            "{what:?}: {text:?}"
        );
    }
}

/// A directory another uid made at `<tmp>/fastpmix-<pid>-1`, the name the
/// server of pid `<pid>` used to put its control socket in, with a file
/// of theirs inside.
fn squat_control_dir(tmp: &Path, pid: u32, owner: (u32, u32)) -> PathBuf {
    let d = tmp.join(format!("fastpmix-{pid}-1"));
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("ctl"), b"the squatter's").unwrap();
    std::os::unix::fs::chown(d.join("ctl"), Some(owner.0), Some(owner.1)).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&d, Some(owner.0), Some(owner.1)).unwrap();
    d
}

/// The squatted directory is as its owner left it.
fn assert_untouched(d: &Path, owner: u32) {
    let m = std::fs::symlink_metadata(d).expect("the squatted directory still exists");
    assert_eq!(m.uid(), owner, "still its owner's");
    assert_eq!(
        std::fs::read(d.join("ctl")).expect("its file is still there"),
        b"the squatter's"
    );
}

/// A root launcher whose old control-directory name was taken by another
/// user starts its job anyway, and neither uses nor removes that user's
/// directory (it used to `remove_dir_all` it).
#[test]
fn a_control_directory_squatted_by_another_user_is_neither_used_nor_removed_by_a_root_launcher() {
    if let Some(why) = two_uids_unavailable(false) {
        eprintln!("skipped: {why}");
        return;
    }
    let tmp = SharedTmp::new("ctl-root");
    let child = stopped_launcher(&tmp.0, None, "PING; FINALIZE");
    let d = squat_control_dir(&tmp.0, child.id(), peer_ids());
    let (code, out, err) = finish(child);
    assert_eq!(code, 0, "the job runs\n{out}\n{err}");
    assert!(
        out.contains("[0] PONG"),
        "the client connected\n{out}\n{err}"
    );
    assert_untouched(&d, peer_ids().0);
}

/// A launcher of an ordinary user whose old control-directory name was
/// taken by another user (root here) starts its job (it used to fail with
/// a bare `PMIX_ERR_INIT`), and leaves that directory alone.
#[test]
fn a_control_directory_squatted_by_another_user_does_not_stop_an_ordinary_users_launcher() {
    if let Some(why) = two_uids_unavailable(true) {
        eprintln!("skipped: {why}");
        return;
    }
    let tmp = SharedTmp::new("ctl-user");
    let child = stopped_launcher(&tmp.0, Some(peer_ids()), "PING; FINALIZE");
    let d = squat_control_dir(&tmp.0, child.id(), (0, 0));
    let (code, out, err) = finish(child);
    assert_eq!(code, 0, "the job runs\n{out}\n{err}");
    assert!(
        out.contains("[0] PONG"),
        "the client connected\n{out}\n{err}"
    );
    assert_untouched(&d, 0);
}

/// The server's own control directory is private (0700, its uid) while
/// every registered client shares its uid; registering a client of
/// another uid opens it to search only (0711: no listing, no creating),
/// and that client connects.
#[test]
fn the_control_directory_is_private_until_a_client_of_another_uid_is_registered() {
    use fastpmix::server::Server;
    use fastpmix::{Nspace, Proc};
    let s = Server::builder().start().unwrap();
    let dir = s.address().parent().unwrap().to_path_buf();
    let mode = |d: &Path| std::fs::symlink_metadata(d).unwrap().mode() & 0o7777;
    let (uid, gid) = procs::ids();
    assert_eq!(std::fs::symlink_metadata(&dir).unwrap().uid(), uid);
    assert_eq!(mode(&dir), 0o700);
    let mine = Nspace::new("mine").unwrap();
    s.register_nspace(&mine, vec![]).unwrap();
    s.register_client(&Proc::new("mine", 0).unwrap(), uid, gid)
        .unwrap();
    assert_eq!(mode(&dir), 0o700, "a client of the server's own uid");
    if let Some(why) = two_uids_unavailable(true) {
        eprintln!("the second-uid half is skipped: {why}");
        return;
    }
    let theirs = Proc::new("theirs", 0).unwrap();
    s.register_nspace(&theirs.nspace, vec![]).unwrap();
    s.register_client(&theirs, peer_ids().0, peer_ids().1)
        .unwrap();
    assert_eq!(mode(&dir), 0o711, "opened to search for the other uid");
    let mut c = procs::ClientProc::spawn_as(
        CHILD,
        theirs,
        &s.setup_fork(&theirs).unwrap(),
        Some(peer_ids()),
    );
    c.send("PING");
    c.expect("PONG");
    c.finalize();
}

// ---------------------------------------------------------------------------
// Connection floods
// ---------------------------------------------------------------------------

/// The socket a flooder connects to.
const FLOOD_ADDR_ENV: &str = "FASTPMIX_TEST_FLOOD_ADDR";
/// How many connections it opens.
const FLOOD_N_ENV: &str = "FASTPMIX_TEST_FLOOD_N";

/// Child: opens `FLOOD_N` connections to `FLOOD_ADDR` and never says a
/// word on them; prints `FLOODED <connected> <refused>`, then for each
/// `COUNT` on stdin `OPEN <n>`: how many the server has not closed.
#[test]
fn child_flooder() {
    let Ok(addr) = std::env::var(FLOOD_ADDR_ENV) else {
        return;
    };
    let n: usize = std::env::var(FLOOD_N_ENV).unwrap().parse().unwrap();
    println!();
    let mut socks = Vec::new();
    let mut refused = 0;
    for _ in 0..n {
        match UnixStream::connect(&addr) {
            Ok(s) => socks.push(s),
            Err(_) => refused += 1,
        }
    }
    println!("FLOODED {} {refused}", socks.len());
    let _ = std::io::stdout().flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim() == "COUNT" {
            println!("OPEN {}", socks.iter().filter(|s| still_open(s)).count());
            let _ = std::io::stdout().flush();
        }
    }
}

/// The server has not closed `s` (a read would block rather than say EOF).
fn still_open(s: &UnixStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    match (&*s).read(&mut b) {
        Ok(0) => false,
        Ok(_) => true,
        Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
    }
}

/// A flooder process (as `ids`).
struct Flooder {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Flooder {
    fn start(addr: &str, n: usize, ids: Option<(u32, u32)>) -> Flooder {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "child_flooder",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(FLOOD_ADDR_ENV, addr)
        .env(FLOOD_N_ENV, n.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
        if let Some((u, g)) = ids {
            cmd.uid(u).gid(g);
        }
        let mut child = cmd.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in std::io::BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Flooder { child, lines }
    }

    /// The rest of the first line starting with `prefix`.
    fn expect(&mut self, prefix: &str) -> String {
        loop {
            let l = self
                .lines
                .recv_timeout(procs::HANG)
                .unwrap_or_else(|_| panic!("the flooder never said {prefix}"));
            if let Some(rest) = l.strip_prefix(prefix) {
                return rest.to_owned();
            }
        }
    }

    /// Its connections the server has not closed.
    fn open(&mut self) -> usize {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "COUNT").unwrap();
        stdin.flush().unwrap();
        self.expect("OPEN ").parse().unwrap()
    }
}

impl Drop for Flooder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU time (user + system) `pid` has used, in seconds, from
/// /proc/PID/stat.
fn cpu_seconds(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = s.rsplit_once(')').unwrap().1.split_whitespace().collect();
    // Fields 14 and 15 of stat(5); f[0] is field 3.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// CPU time `pid` uses over one second of wall time.
fn cpu_over_a_second(pid: u32) -> f64 {
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(1));
    cpu_seconds(pid) - before
}

/// Most CPU time a server may use over a second in which it has nothing
/// to do but hold its connections: a spinning thread uses the whole
/// second.
const IDLE_CPU_BOUND: f64 = 0.3;

/// The address in a server child's environment for `p`.
fn address(server: &ServerProc, p: &Proc) -> String {
    server
        .env_of(p)
        .into_iter()
        .find(|(k, _)| k == fastpmix::server::SERVER_ADDR_ENV)
        .unwrap()
        .1
}

/// Another user, who has a job of its own on the same server (so it can
/// reach the socket), opens 2,000 connections and never says hello, on a
/// server whose descriptor limit leaves room for 64 more connections (a
/// 1,024 limit took 1,019 idle connections): a client registered for
/// another job still connects and is served while they are held, the
/// server closes that user's connections beyond its allowance at once and
/// the rest when the hello deadline passes, and it does not spin meanwhile
/// (CPU time over one second well below the second).
#[test]
fn idle_connections_from_another_user_do_not_stop_a_registered_clients_init_or_make_the_server_spin(
) {
    if let Some(why) = two_uids_unavailable(true) {
        eprintln!("skipped: {why}");
        return;
    }
    let victim = Proc::new("victim", 0).unwrap();
    let theirs = Proc::new("theirs", 0).unwrap();
    let server = ServerProc::spawn_with_env(
        SERVER_CHILD,
        std::slice::from_ref(&victim),
        &[
            (procs::SERVER_PEER_PROCS_ENV, theirs.to_string()),
            (procs::SERVER_NOFILE_SLACK_ENV, "64".into()),
        ],
    );
    let addr = address(&server, &victim);
    let mut flood = Flooder::start(&addr, 2000, Some(peer_ids()));
    let flooded = flood.expect("FLOODED ");
    eprintln!("flooder: connected, refused = {flooded}");
    let mut c = ClientProc::spawn(CHILD, victim, &server.env_of(&victim));
    c.send("PING");
    c.expect("PONG");
    let held = flood.open();
    eprintln!("the flooder's connections still open after the client connected: {held}");
    // Its allowance: the base plus its one registered client not connected.
    assert!(
        held <= fastpmix::server::PENDING_PER_UID + 1,
        "{held} idle connections of one user held"
    );
    let cpu = cpu_over_a_second(server.pid());
    eprintln!("server CPU time over one second of the flood: {cpu:.3} s");
    assert!(
        cpu < IDLE_CPU_BOUND,
        "the server spins: {cpu:.3} s of CPU in 1 s"
    );
    // The deadline closes the rest (a hang guard, not a time check).
    let t0 = std::time::Instant::now();
    while flood.open() > 0 {
        assert!(
            t0.elapsed() < procs::HANG,
            "idle connections are never closed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("all idle connections closed {:?} after", t0.elapsed());
    c.send("PING");
    c.expect("PONG");
    c.finalize();
}

/// A server out of descriptors (its RLIMIT_NOFILE lowered to what it has
/// open plus 4, then 12 connections that say nothing) does not spin on
/// its still-readable listener: it says once, through its trace sink, that
/// accepting is paused, uses well under a second of CPU time over a
/// second, and accepts again once descriptors are free — a registered
/// client then connects.
#[test]
fn a_server_out_of_file_descriptors_backs_off_instead_of_spinning_and_serves_again_later() {
    let victim = Proc::new("victim", 0).unwrap();
    let server = ServerProc::spawn_with_env(
        SERVER_CHILD,
        std::slice::from_ref(&victim),
        &[
            (procs::SERVER_NOFILE_SLACK_ENV, "4".into()),
            (procs::SERVER_TRACE_ENV, "1".into()),
        ],
    );
    let addr = address(&server, &victim);
    let held: Vec<UnixStream> = (0..12)
        .map(|_| UnixStream::connect(&addr).unwrap())
        .collect();
    let said = loop {
        let l = server
            .lines
            .lock()
            .unwrap()
            .recv_timeout(procs::HANG)
            .expect("the server says it ran out of descriptors");
        if l.contains("cannot accept") {
            break l;
        }
    };
    assert!(
        said.starts_with("TRACE cannot accept a connection (") && said.contains("paused"),
        "{said}"
    );
    let cpu = cpu_over_a_second(server.pid());
    eprintln!("server CPU time over one second out of descriptors: {cpu:.3} s");
    assert!(
        cpu < IDLE_CPU_BOUND,
        "the server spins: {cpu:.3} s of CPU in 1 s"
    );
    let more: Vec<String> = server.lines.lock().unwrap().try_iter().collect();
    assert!(
        !more.iter().any(|l| l.contains("cannot accept")),
        "said once: {more:?}"
    );
    drop(held);
    let mut c = ClientProc::spawn(CHILD, victim, &server.env_of(&victim));
    c.send("PING");
    c.expect("PONG");
    c.finalize();
}

// ---------------------------------------------------------------------------
// A full shared-memory filesystem
// ---------------------------------------------------------------------------

/// Set in a child that runs in its own mount namespace over a small
/// tmpfs at /dev/shm.
const FULL_SHM_ENV: &str = "FASTPMIX_TEST_FULL_SHM";

/// Child (over a small /dev/shm of its own): a server creates one
/// namespace's ring; then /dev/shm is filled to the last byte; a second
/// namespace is refused with `PMIX_ERR_OUT_OF_RESOURCE` and a message
/// naming /dev/shm, and a client of the first connects and exchanges an
/// event with the server — no SIGBUS anywhere. Prints `FULL_SHM_DONE`.
#[test]
fn child_full_shm() {
    use fastpmix::event::Notification;
    use fastpmix::server::Server;
    use fastpmix::{DataRange, Nspace, Status};
    if std::env::var_os(FULL_SHM_ENV).is_none() {
        return;
    }
    println!();
    let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let s2 = said.clone();
    let server = Server::builder()
        .trace(move |l| s2.lock().unwrap().push(l.to_owned()))
        .start()
        .unwrap();
    let (uid, gid) = procs::ids();
    let fits = Proc::new("fits", 0).unwrap();
    server.register_nspace(&fits.nspace, vec![]).unwrap();
    server.register_client(&fits, uid, gid).unwrap();
    // Fill what is left.
    let mut filler = std::fs::File::create("/dev/shm/filler").unwrap();
    let block = vec![0xa5u8; 64 * 1024];
    let mut filled = 0u64;
    loop {
        match filler.write(&block) {
            Ok(0) => break,
            Ok(n) => filled += n as u64,
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                break;
            }
        }
    }
    println!("FILLED {filled}");
    let full = Nspace::new("does-not-fit").unwrap();
    assert_eq!(
        server.register_nspace(&full, vec![]),
        Err(Status::ERR_OUT_OF_RESOURCE)
    );
    let msg = said.lock().unwrap().join("\n");
    assert!(
        msg.contains("does-not-fit") && msg.contains("/dev/shm"),
        "the reason names the namespace and /dev/shm: {msg}"
    );
    println!("REFUSED {msg}");
    // The first namespace's ring is whole: its client connects and gets
    // events through it.
    let mut c = ClientProc::spawn(CHILD, fits, &server.setup_fork(&fits).unwrap());
    c.send("WATCH -4242");
    c.expect("WATCHING ");
    server
        .notify(Notification::new(Status(-4242), fits, DataRange::NAMESPACE))
        .unwrap();
    c.send("AWAIT -4242 1");
    c.expect("AWAITED -4242 1");
    c.finalize();
    println!("FULL_SHM_DONE");
}

/// Runs `args` under `unshare -m` with a `size`-byte tmpfs mounted at
/// /dev/shm; the reason when this machine cannot.
fn with_small_shm(
    size: u64,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &str)],
) -> Result<std::process::Output, String> {
    if procs::ids().0 != 0 {
        return Err("needs root to mount a tmpfs in a private mount namespace".into());
    }
    let probe = Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        return Err(format!("unshare -m is not available here: {probe:?}"));
    }
    let script = format!(
        "mount -t tmpfs -o size={size} fastpmix-small-shm /dev/shm || exit 99; exec \"$@\""
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c", &script, "sh"])
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if out.status.code() == Some(99) {
        return Err(format!(
            "cannot mount a tmpfs: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out)
}

/// /dev/shm filled by someone else: creating a namespace's ring is
/// `PMIX_ERR_OUT_OF_RESOURCE` with a message naming /dev/shm, and a ring
/// created before it filled serves its client — the server never dies of
/// SIGBUS (its ring's pages are reserved when it is created).
#[test]
fn a_full_shared_memory_filesystem_is_an_error_when_a_ring_is_created_never_a_sigbus() {
    let ring = shm_layout::Geometry::default().validate().unwrap().total;
    let exe = std::env::current_exe().unwrap();
    let args: Vec<&std::ffi::OsStr> = vec![
        exe.as_os_str(),
        "child_full_shm".as_ref(),
        "--exact".as_ref(),
        "--nocapture".as_ref(),
        "--test-threads=1".as_ref(),
    ];
    // Room for one ring and a half.
    let out = match with_small_shm(ring + ring / 2, &args, &[(FULL_SHM_ENV, "1")]) {
        Ok(o) => o,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        None,
        "killed by a signal\n{stdout}\n{stderr}"
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("FULL_SHM_DONE"), "{stdout}\n{stderr}");
}

/// `fastpmix run` where /dev/shm has no room for the job's ring ends with
/// status 1 and a message naming /dev/shm, not with SIGBUS.
#[test]
fn the_launcher_over_a_full_shared_memory_filesystem_fails_with_a_reason_not_a_sigbus() {
    let launcher = std::ffi::OsStr::new(env!("CARGO_BIN_EXE_fastpmix"));
    let args: Vec<&std::ffi::OsStr> = vec![
        launcher,
        "run".as_ref(),
        "-n".as_ref(),
        "1".as_ref(),
        "--".as_ref(),
        "true".as_ref(),
    ];
    let out = match with_small_shm(64 * 1024, &args, &[]) {
        Ok(o) => o,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), None, "killed by a signal\n{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("/dev/shm") && stderr.contains("PMIX_ERR_OUT_OF_RESOURCE"),
        "{stderr}"
    );
}

/// What a killed launcher left (its socket, an empty record file) is
/// removed by the next server of the same user; a directory that still
/// holds job records keeps them, and directories of other users, of live
/// processes, or just made and not yet bound (a live server's in another
/// PID namespace) are not touched.
#[test]
fn control_directories_of_killed_servers_are_cleaned_but_records_and_other_users_dirs_stay() {
    let tmp = SharedTmp::new("stale");
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let make = |name: &str, records: &[u8]| {
        let d = tmp.0.join(name);
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        drop(std::os::unix::net::UnixListener::bind(d.join("ctl")).unwrap());
        std::fs::write(d.join("job.records"), records).unwrap();
        d
    };
    let empty = make(&format!("fastpmix-{dead_pid}-aaaaaa"), b"");
    let kept = make(&format!("fastpmix-{dead_pid}-bbbbbb"), b"a record\n");
    let live = make(&format!("fastpmix-{}-cccccc", std::process::id()), b"");
    let theirs = make(&format!("fastpmix-{dead_pid}-dddddd"), b"");
    // A directory just made, its socket not bound yet, is a live server's
    // whatever its pid says here (a server in another PID namespace
    // between mkdtemp and its liveness lock); the same one left for a
    // minute is a dead server's.
    let bare = |name: &str| {
        let d = tmp.0.join(name);
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        d
    };
    let just_made = bare(&format!("fastpmix-{dead_pid}-eeeeee"));
    let left = bare(&format!("fastpmix-{dead_pid}-ffffff"));
    let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::open(&left)
        .unwrap()
        .set_modified(minute_ago)
        .unwrap();
    let others_uid = procs::ids().0 == 0;
    if others_uid {
        std::os::unix::fs::chown(&theirs, Some(peer_ids().0), Some(peer_ids().1)).unwrap();
    }
    fastpmix::server::dir::remove_stale(&tmp.0);
    assert!(just_made.exists(), "a directory just made stays");
    assert!(!left.exists(), "an old one without a socket goes");
    assert!(!empty.exists(), "a dead server's directory is removed");
    assert!(!kept.join("ctl").exists(), "its socket is removed");
    assert_eq!(
        std::fs::read(kept.join("job.records")).unwrap(),
        b"a record\n",
        "job records stay"
    );
    assert!(
        live.join("ctl").exists(),
        "a live process's directory stays"
    );
    if others_uid {
        assert!(
            theirs.join("ctl").exists(),
            "another user's directory stays"
        );
    } else {
        eprintln!("not root: the other-user case is skipped");
    }
}

/// A look-alike of a launcher's control directory (`fastpmix-<pid>-…`
/// with a listening socket, made by another process) does not capture
/// `fastpmix inspect --pid <pid>`: the tool talks only to a socket whose
/// listener is that pid.
#[test]
fn a_look_alike_control_directory_does_not_capture_the_tools_requests() {
    let tmp = SharedTmp::new("lookalike");
    let mut launcher = Command::new(env!("CARGO_BIN_EXE_fastpmix"))
        .args(["run", "-n", "1", "--", "sleep", "60"])
        .env("TMPDIR", &tmp.0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = launcher.id().to_string();
    let fake = tmp.0.join(format!("fastpmix-{pid}-zzzzzz"));
    std::fs::create_dir(&fake).unwrap();
    let _listening = std::os::unix::net::UnixListener::bind(fake.join("ctl")).unwrap();
    let inspect = || {
        Command::new(env!("CARGO_BIN_EXE_fastpmix"))
            .args(["inspect", "--pid", &pid])
            .env("TMPDIR", &tmp.0)
            .output()
            .unwrap()
    };
    let t0 = std::time::Instant::now();
    let out = loop {
        let out = inspect();
        if out.status.success() {
            break out;
        }
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if t0.elapsed() > procs::HANG {
            let _ = launcher.kill();
            panic!("inspect never reached the launcher: {err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(launcher.id() as i32, libc::SIGTERM) };
    let _ = launcher.wait();
    assert!(text.starts_with("server "), "{text}");
    assert!(!text.contains("zzzzzz"), "the look-alike answered: {text}");
}
