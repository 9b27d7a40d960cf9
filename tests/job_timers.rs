//! JOB-51: the server's timing work (heartbeat periods, file checks, usage
//! rates, checkpoint timeouts, SIGKILL graces) is a deadline of its progress
//! thread's one reactor wait, so starting it adds no thread and no timer fd
//! to the process that embeds the server.
//!
//! The test counts its own process's threads (/proc/self/task) and
//! descriptors (/proc/self/fd), so it lives alone in this binary: another
//! test running beside it would add threads and descriptors of its own.
//! The clients are this binary re-executed (`tests/procs`); their threads
//! and descriptors are in their own processes.

mod procs;

use fastpmix::server::{Server, TERM_GRACE_MS};
use fastpmix::{Info, Status, Value};
use procs::{ClientProc, ROLE_ENV};
use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;

const CHILD: &str = "child_client";
const HB_ALERT: i32 = Status::MONITOR_HEARTBEAT_ALERT.0;
const FILE_ALERT: i32 = Status::MONITOR_FILE_ALERT.0;
const USAGE: i32 = Status::MONITOR_RESUSAGE_UPDATE.0;
const CKPT: i32 = Status::JCTRL_CHECKPOINT.0;
const TIMERFD: &str = "anon_inode:[timerfd]";
/// Descriptors the test process may gain while the timing work is armed:
/// the pending SIGKILL grace keeps a duplicate of its target's pidfd, and
/// the progress thread may be reading one /proc file for a usage sample at
/// the moment of the count. A descriptor per monitor would be 28 more.
const FD_SLACK: usize = 2;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

/// This process's threads (tid → name) and descriptors (fd → link).
struct Census {
    threads: BTreeMap<u32, String>,
    fds: BTreeMap<i32, String>,
}

fn census() -> Census {
    let entries = |dir: &str| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    };
    // A thread or descriptor gone between the listing and the read is left
    // out: it is not there any more.
    let threads = entries("/proc/self/task")
        .into_iter()
        .filter_map(|t| {
            let name = std::fs::read_to_string(format!("/proc/self/task/{t}/comm")).ok()?;
            Some((t.parse().unwrap(), name.trim_end().to_owned()))
        })
        .collect();
    // The listing's own descriptor is not one of the process's.
    let listing = format!("/proc/{}/fd", std::process::id());
    let fds = entries("/proc/self/fd")
        .into_iter()
        .filter_map(|f| {
            let link = std::fs::read_link(format!("/proc/self/fd/{f}")).ok()?;
            Some((f.parse().unwrap(), link.display().to_string()))
        })
        .filter(|(_, link)| *link != listing)
        .collect();
    Census { threads, fds }
}

impl Census {
    /// Threads of `self` that `before` did not have, with their names.
    /// libtest's thread for `child_client` (named after it) is left out:
    /// it may start late when tests are shuffled.
    fn new_threads(&self, before: &Census) -> Vec<(u32, String)> {
        let old: BTreeSet<_> = before.threads.keys().collect();
        let new = self
            .threads
            .iter()
            .filter(|(t, n)| !old.contains(t) && n.as_str() != CHILD);
        new.map(|(t, n)| (*t, n.clone())).collect()
    }
    /// Descriptors of `self` that `before` did not have (or had as
    /// something else), with what they are.
    fn new_fds(&self, before: &Census) -> Vec<(i32, String)> {
        let new = self
            .fds
            .iter()
            .filter(|(f, l)| before.fds.get(f) != Some(l));
        new.map(|(f, l)| (*f, l.clone())).collect()
    }
    fn timerfds(&self) -> Vec<i32> {
        let t = self.fds.iter().filter(|(_, l)| l.as_str() == TIMERFD);
        t.map(|(f, _)| *f).collect()
    }
}

/// The census sees a thread and a timer fd when this process has them: a
/// check on it that found nothing would otherwise pass for a wrong reason.
fn census_sees_a_thread_and_a_timer_fd() {
    let before = census();
    // It returns a new descriptor or -1; nothing else owns the descriptor.
    // SAFETY: timerfd_create takes two integers and touches no memory.
    let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
    assert!(
        raw >= 0,
        "timerfd_create: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: `raw` is a fresh descriptor owned by nothing else.
    let timer = unsafe { OwnedFd::from_raw_fd(raw) };
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let (stop, parked) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        // SAFETY: gettid takes no argument and cannot fail.
        tid_tx.send(unsafe { libc::gettid() } as u32).unwrap();
        parked.recv()
    });
    let tid = tid_rx.recv().unwrap();
    let during = census();
    let _ = stop.send(());
    thread.join().unwrap().unwrap();
    drop(timer);
    let new: Vec<u32> = during
        .new_threads(&before)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert!(
        new.contains(&tid),
        "the census missed thread {tid}: {new:?}"
    );
    assert!(
        during.timerfds().contains(&raw),
        "the census missed timer fd {raw}"
    );
}

/// The value of `name=` in a printed line (up to a space or `;`).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let pat = format!("{name}=");
    let at = line
        .match_indices(&pat)
        .find(|(i, _)| *i == 0 || matches!(line.as_bytes()[i - 1], b' ' | b';'))
        .map(|(i, _)| i + pat.len())?;
    let rest = &line[at..];
    Some(&rest[..rest.find([' ', ';']).unwrap_or(rest.len())])
}

/// Sends `cmd` and checks that its answer, the line starting with
/// `prefix`, carries `PMIX_SUCCESS`.
fn succeeds(c: &mut ClientProc, cmd: &str, prefix: &str) {
    c.send(cmd);
    let l = c.expect(prefix);
    let status = l[prefix.len()..].split(' ').next();
    assert_eq!(status, Some("0"), "{}: {cmd} -> {l}", c.proc);
}

fn watch(c: &mut ClientProc, code: i32) {
    c.send(&format!("WATCH_INFO {code}"));
    let l = c.expect("WATCHING ");
    let r: i64 = l["WATCHING ".len()..].parse().unwrap();
    assert!(r >= 0, "{}: WATCH_INFO {code} -> {l}", c.proc);
}

/// Files for the file monitors, removed on drop.
struct Files(Vec<PathBuf>);

impl Drop for Files {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[test]
fn job_51_monitors_graces_and_checkpoint_timeouts_start_no_thread_and_no_timer_fd() {
    census_sees_a_thread_and_a_timer_fd();
    // A grace that never ends while the test looks: the pending SIGKILL is
    // one of the deadlines.
    let server = Server::builder()
        .attribute(Info::new(TERM_GRACE_MS, Value::Uint32(3_600_000)))
        .start()
        .unwrap();
    let mut clients = procs::spawn_clients(&server, CHILD, &[("tm", 2)]);
    let files = Files(
        (0..4)
            .map(|i| {
                let p = std::env::temp_dir()
                    .join(format!("fastpmix-timers-{}-{i}", std::process::id()));
                std::fs::write(&p, b"x").unwrap();
                p
            })
            .collect(),
    );
    // Everything that is not timing work comes before the first count:
    // handlers, the checkpoint method, SIGTERM ignored.
    for code in [HB_ALERT, FILE_ALERT, USAGE] {
        watch(&mut clients[0], code);
    }
    watch(&mut clients[1], CKPT);
    succeeds(
        &mut clients[1],
        &format!("JOBCTL - pmix.jctrl.ckmethod=infos:pmix.jctrl.ckptev=st:{CKPT}"),
        "JOBCTL_RESULT ",
    );
    clients[1].send("IGNORE_TERM");
    clients[1].expect("IGNORING");
    for c in clients.iter_mut() {
        c.sync();
    }
    let before = census();
    assert!(before.timerfds().is_empty(), "{:?}", before.fds);

    let mut ids = BTreeSet::new();
    let c = &mut clients[0];
    for i in 0..20 {
        let args = format!(
            "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1 \
             pmix.monitor.id=s:hb{i}"
        );
        succeeds(c, &format!("MONITOR {args}"), "MONITOR_RESULT ");
        ids.insert(format!("hb{i}"));
    }
    for (i, f) in files.0.iter().enumerate() {
        let args = format!(
            "pmix.monitor.fchg=null 0 pmix.monitor.fmon=s:{} pmix.monitor.ftime=u32:1 \
             pmix.monitor.id=s:f{i}",
            f.display()
        );
        succeeds(c, &format!("MONITOR {args}"), "MONITOR_RESULT ");
        ids.insert(format!("f{i}"));
    }
    for i in 0..4 {
        let args = format!(
            "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:1 pmix.monitor.id=s:u{i}"
        );
        succeeds(c, &format!("MONITOR {args}"), "MONITOR_RESULT ");
        ids.insert(format!("u{i}"));
    }
    // A checkpoint nobody completes waits for its timeout.
    c.send("JOBCTL_NB k tm:1 pmix.jctrl.ckpt=s:k1 pmix.jctrl.ckpttime=i:3600");
    assert_eq!(c.expect("JOBCTL_NB_STARTED k "), "JOBCTL_NB_STARTED k 0");
    clients[1].expect(&format!("CAUGHT_INFO code={CKPT} "));
    // SIGTERM ignored: the SIGKILL waits for the end of the grace.
    succeeds(
        &mut clients[0],
        "JOBCTL tm:1 pmix.jctrl.term=b:1",
        "JOBCTL_RESULT ",
    );
    // Every monitor's deadline has come at least once: each heartbeat and
    // file monitor alerted, each usage monitor sent an update.
    let c = &mut clients[0];
    while !ids.is_empty() {
        let l = c.expect("CAUGHT_INFO ");
        if let Some(id) = field(&l, "pmix.monitor.id") {
            ids.remove(id);
        }
    }

    let after = census();
    assert!(
        after.timerfds().is_empty(),
        "timer fds: {:?}",
        after.new_fds(&before)
    );
    assert_eq!(
        after.new_threads(&before),
        [],
        "threads started by the timing work"
    );
    let new_fds = after.new_fds(&before);
    assert!(
        new_fds.len() <= FD_SLACK,
        "{} new descriptors: {new_fds:?}",
        new_fds.len()
    );
}
