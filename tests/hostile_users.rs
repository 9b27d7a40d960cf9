//! Hostile and careless users on the node (docs/reliability.md, "Hostile
//! and careless users"): another uid that takes the names a job will use
//! in the shared temp directory first, floods the control socket, or fills
//! the shared-memory filesystem. Each test plays the attack on real
//! processes, files and sockets; the attacker is the second test uid
//! (`tests/peer`), so the tests that need it run as root and otherwise say
//! why they skip.

#[path = "procs/mod.rs"]
mod procs;

use procs::{peer_can_run_this_binary, peer_ids, ROLE_ENV, SCRIPT_ENV};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const CHILD: &str = "child_client";

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
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
