//! Edge cases of job management that `docs/conformance.md` marked
//! "partial", each test named after its rule (JOB-n). Real processes: the
//! test process embeds the server (or runs it as a child, `child_server`,
//! when the server must die, or runs `fastpmix run`), and the clients are
//! this binary re-executed (`tests/procs`).
//!
//! Negative checks are ordered where they can be (a sentinel event after
//! the fact, or a later request's callback on the same callback thread).
//! Where nothing can be ordered against (a thread or a signal that must
//! never start), a grace period is waited and said so at the spot: on a
//! slow machine it may miss a bug, never fail a correct server. No duration
//! is asserted; [`HANG`] only turns a hang into a failure.

mod common;
mod procs;

use common::host::{Alloc, Answers, RecordingHost, Reply};
use fastpmix::event::Notification;
use fastpmix::server::{Server, TERM_GRACE_MS};
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Proc, Status, Value};
use procs::{ClientProc, ServerProc, HANG, ROLE_ENV, SCRIPT_ENV};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

const CHILD: &str = "child_client";
const SERVER_CHILD: &str = "child_server";
const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");
const SENTINEL: i32 = -5000;
const HB_ALERT: i32 = Status::MONITOR_HEARTBEAT_ALERT.0;
const FILE_ALERT: i32 = Status::MONITOR_FILE_ALERT.0;
const CKPT: i32 = Status::JCTRL_CHECKPOINT.0;
const CKPT_DONE: i32 = Status::JCTRL_CHECKPOINT_COMPLETE.0;

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

// ------------------------------------------------------------------ helpers

/// Records upcalls. `allocate`: directive 1 (NEW) is granted from another
/// thread 50 ms later with `PMIX_ALLOC_ID` "a1"; any other directive is
/// refused at once with `PMIX_ERR_OUT_OF_RESOURCE` and a reason.
/// `job_control` refuses everything. `monitor_alert` never terminates.
fn recorder() -> Arc<RecordingHost> {
    RecordingHost::with(Answers {
        alloc: Alloc::LaterIfNew,
        job_control: Reply::With(
            Status::ERR_NOT_SUPPORTED,
            vec![Info::new(fastpmix::job::REASON, "test host refuses")],
        ),
        ..Answers::default()
    })
}

struct Node {
    server: Server,
    host: Arc<RecordingHost>,
    clients: Vec<ClientProc>,
}

/// A server (SIGKILL grace `grace_ms`) with the namespaces `spec` names,
/// every rank a connected client process, in that order.
fn node(spec: &[(&str, u32)], grace_ms: u32) -> Node {
    let host = recorder();
    let server = Server::builder()
        .host(host.clone())
        .attribute(Info::new(TERM_GRACE_MS, Value::Uint32(grace_ms)))
        .start()
        .unwrap();
    let clients = procs::spawn_clients(&server, CHILD, spec);
    Node {
        server,
        host,
        clients,
    }
}

impl Node {
    /// A server-sourced sentinel to client `i` only; returns once it saw
    /// it, with the lines it printed before (the sentinel's own removed).
    fn sentinel(&mut self, i: usize) -> Vec<String> {
        let c = &mut self.clients[i];
        let n = Notification::new(Status(SENTINEL), self.server.me(), DataRange::CUSTOM)
            .info(Info::new(attrs::PMIX_EVENT_CUSTOM_RANGE, vec![c.proc]));
        self.server.notify_as_server(n).unwrap();
        c.expect(&format!("EVENT code={SENTINEL} "));
        std::mem::take(&mut c.seen)
    }

    /// Waits until the host heard that client `i`'s connection ended;
    /// returns whether it was lost (not finalized).
    fn wait_ended(&self, i: usize) -> bool {
        let who = self.clients[i].proc;
        let deadline = Instant::now() + HANG;
        loop {
            if let Some((_, lost)) = self
                .host
                .finalized
                .lock()
                .unwrap()
                .iter()
                .find(|(p, _)| *p == who)
            {
                return *lost;
            }
            assert!(Instant::now() < deadline, "{who}: the host never heard");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn p(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).unwrap()
}

/// Sends `cmd`, waits for the line starting with `prefix` and returns its
/// status and the rest (`~` back to spaces).
fn result(c: &mut ClientProc, cmd: &str, prefix: &str) -> (i32, String) {
    c.send(cmd);
    let l = c.expect(prefix);
    let mut w = l.splitn(3, ' ').skip(1);
    let s = w.next().unwrap().parse().unwrap();
    (s, w.next().unwrap_or("").replace('~', " "))
}

fn jobctl(c: &mut ClientProc, args: &str) -> (i32, String) {
    result(c, &format!("JOBCTL {args}"), "JOBCTL_RESULT ")
}

fn monitor(c: &mut ClientProc, args: &str) -> (i32, String) {
    result(c, &format!("MONITOR {args}"), "MONITOR_RESULT ")
}

/// A `WATCH_INFO` handler for `code` (each event prints as `CAUGHT_INFO`).
fn watch(c: &mut ClientProc, code: i32) {
    c.send(&format!("WATCH_INFO {code}"));
    let l = c.expect("WATCHING ");
    let r: i64 = l["WATCHING ".len()..].parse().unwrap();
    assert!(r >= 0, "{}: WATCH_INFO {code} -> {l}", c.proc);
}

/// Removes and returns the first line of `c.seen` starting with `prefix`.
fn take_seen(c: &mut ClientProc, prefix: &str) -> Option<String> {
    let i = c.seen.iter().position(|l| l.starts_with(prefix))?;
    Some(c.seen.remove(i))
}

/// The lines of `lines` that are events (printed by the default handler or
/// a `WATCH_INFO` handler) with `code`.
fn with_code(lines: &[String], code: i32) -> Vec<String> {
    let pre = format!("code={code} ");
    lines
        .iter()
        .filter(|l| (l.starts_with("EVENT ") || l.starts_with("CAUGHT_INFO ")) && l.contains(&pre))
        .cloned()
        .collect()
}

/// The value of `name=` in a printed line (up to the next space or `;`).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let pat = format!("{name}=");
    let at = line
        .match_indices(&pat)
        .find(|(i, _)| *i == 0 || matches!(line.as_bytes()[i - 1], b' ' | b';' | b'['))
        .map(|(i, _)| i + pat.len())?;
    let rest = &line[at..];
    let end = rest.find([' ', ';']).unwrap_or(rest.len());
    Some(&rest[..end])
}

use procs::{state, wait_state};

/// Polls until none of `paths` exists (or [`HANG`]).
fn wait_gone(paths: &[&Path]) {
    let deadline = Instant::now() + HANG;
    while paths.iter().any(|p| p.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn temp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fastpmix-edges-{tag}-{}", std::process::id()))
}

/// Declares that client `c` is checkpointed by the event (`code`).
fn declare_event_method(c: &mut ClientProc, code: i32) {
    let (s, why) = jobctl(
        c,
        &format!("- pmix.jctrl.ckmethod=infos:pmix.jctrl.ckptev=st:{code}"),
    );
    assert_eq!(s, 0, "{}: {why}", c.proc);
}

// ------------------------------------------------ JOB-1: non-blocking forms

#[test]
fn job_1_allocate_nb_callback_runs_on_another_thread_after_the_call_returned() {
    let mut n = node(&[("je-alloc-nb", 1)], 5000);
    let c = &mut n.clients[0];
    c.sync();
    // The host grants it from its own thread, 50 ms later.
    c.send("ALLOC_NB a 1 pmix.alloc.ncpus=u64:1");
    let cb = c.expect("ALLOC_CB a ");
    // Every line before ALLOC_CB is in `seen`: the call's line came first.
    assert_eq!(
        take_seen(c, "ALLOC_NB_STARTED a ").as_deref(),
        Some("ALLOC_NB_STARTED a 0"),
        "the callback ran before the call returned: {cb:?}"
    );
    assert_eq!(cb, "ALLOC_CB a 0 pmix.alloc.id=a1 thread=other");
    // The host's refusal reaches the callback too, with its reason.
    c.send("ALLOC_NB r 3 pmix.alloc.id=s:a1");
    let cb = c.expect("ALLOC_CB r ");
    assert_eq!(
        take_seen(c, "ALLOC_NB_STARTED r ").as_deref(),
        Some("ALLOC_NB_STARTED r 0"),
        "{cb:?}"
    );
    assert_eq!(
        cb,
        format!(
            "ALLOC_CB r {} fastpmix.reason=test~host~has~nothing thread=other",
            Status::ERR_OUT_OF_RESOURCE.0
        )
    );
    // And so does the server's own refusal (before the host).
    c.send("ALLOC_NB t 1 pmix.alloc.ncpus=s:two");
    let cb = c.expect("ALLOC_CB t ");
    assert_eq!(
        take_seen(c, "ALLOC_NB_STARTED t ").as_deref(),
        Some("ALLOC_NB_STARTED t 0"),
        "{cb:?}"
    );
    assert!(
        cb.starts_with(&format!("ALLOC_CB t {} ", Status::ERR_BAD_PARAM.0)),
        "{cb}"
    );
    assert!(cb.contains("pmix.alloc.ncpus~has~the~wrong~type"), "{cb}");
    assert!(cb.ends_with(" thread=other"), "{cb}");
}

#[test]
fn job_1_monitor_nb_callback_runs_on_another_thread_after_the_call_returned() {
    let mut n = node(&[("je-mon-nb", 1)], 5000);
    let c = &mut n.clients[0];
    c.sync();
    c.send("MONITOR_NB u pmix.monitor.ndresuse=null 0");
    let cb = c.expect("MONITOR_CB u ");
    assert_eq!(
        take_seen(c, "MONITOR_NB_STARTED u ").as_deref(),
        Some("MONITOR_NB_STARTED u 0"),
        "the callback ran before the call returned: {cb:?}"
    );
    let report = format!(
        "MONITOR_CB u 0 {}=[",
        attrs::PMIX_NODE_RESOURCE_USAGE.as_str()
    );
    assert!(cb.starts_with(&report), "{cb}");
    assert!(cb.ends_with("] thread=other"), "{cb}");
    // A refusal reaches the callback too.
    c.send("MONITOR_NB b pmix.monitor.mbeat=null 0 pmix.monitor.btime=s:1");
    let cb = c.expect("MONITOR_CB b ");
    assert_eq!(
        take_seen(c, "MONITOR_NB_STARTED b ").as_deref(),
        Some("MONITOR_NB_STARTED b 0"),
        "{cb:?}"
    );
    assert_eq!(
        cb,
        format!(
            "MONITOR_CB b {} fastpmix.reason=pmix.monitor.btime~has~the~wrong~type thread=other",
            Status::ERR_BAD_PARAM.0
        )
    );
}

#[test]
fn job_1_monitor_nb_heartbeat_returns_operation_succeeded_and_runs_no_callback() {
    let mut n = node(&[("je-beat-nb", 1)], 5000);
    let c = &mut n.clients[0];
    watch(c, HB_ALERT);
    let (s, why) = monitor(
        c,
        "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1",
    );
    assert_eq!(s, 0, "{why}");
    // Silent: the first alert.
    c.expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
    c.send("MONITOR_NB h pmix.monitor.beat=null 0");
    assert_eq!(
        c.expect("MONITOR_NB_STARTED h "),
        format!("MONITOR_NB_STARTED h {}", Status::OPERATION_SUCCEEDED.0)
    );
    // The beat counted: an alert is raised once per stall, and only a beat
    // re-arms it, so a second alert proves it.
    c.expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
    // No callback. Ordered: callbacks run on one thread in the order they
    // were queued, so a callback for the beat (queued before this call was
    // even made, or run inline) would have printed before this one's.
    c.send("MONITOR_NB after pmix.monitor.ndresuse=null 0");
    c.expect("MONITOR_CB after 0 ");
    let beat_cb: Vec<&String> = c
        .seen
        .iter()
        .filter(|l| l.starts_with("MONITOR_CB h "))
        .collect();
    assert!(beat_cb.is_empty(), "a callback for a beat: {beat_cb:?}");
}

// --------------------------------------------- JOB-2: a server that is lost

#[test]
fn job_2_a_lost_server_completes_a_pending_request_with_unreach() {
    let procs = [p("je-lost", 0), p("je-lost", 1)];
    let mut server = ServerProc::spawn(SERVER_CHILD, &procs);
    let mut c: Vec<ClientProc> = procs
        .iter()
        .map(|q| ClientProc::spawn(CHILD, *q, &server.env_of(q)))
        .collect();
    declare_event_method(&mut c[1], CKPT);
    // Rank 1 never reports: the checkpoint waits (an hour).
    c[0].send("JOBCTL_NB w je-lost:1 pmix.jctrl.ckpt=s:never pmix.jctrl.ckpttime=i:3600");
    assert_eq!(c[0].expect("JOBCTL_NB_STARTED w "), "JOBCTL_NB_STARTED w 0");
    // The server acted on it: the request is pending.
    c[1].expect(&format!("EVENT code={CKPT} "));
    server.kill();
    let unreach = Status::ERR_UNREACH.0;
    assert_eq!(
        c[0].expect("JOBCTL_CB w "),
        format!("JOBCTL_CB w {unreach} -")
    );
    // Every new request fails at once, blocking or not (no callback runs).
    let (s, _) = jobctl(&mut c[0], "je-lost:1 pmix.jctrl.pause=b:1");
    assert_eq!(s, unreach);
    let (s, _) = monitor(&mut c[0], "pmix.monitor.ndresuse=null 0");
    assert_eq!(s, unreach);
    let (s, _) = result(&mut c[0], "ALLOC 1 pmix.alloc.ncpus=u64:1", "ALLOC_RESULT ");
    assert_eq!(s, unreach);
    c[0].send("JOBCTL_NB x je-lost:1 pmix.jctrl.pause=b:1");
    assert_eq!(
        c[0].expect("JOBCTL_NB_STARTED x "),
        format!("JOBCTL_NB_STARTED x {unreach}")
    );
    c[0].send("MONITOR_NB y pmix.monitor.ndresuse=null 0");
    assert_eq!(
        c[0].expect("MONITOR_NB_STARTED y "),
        format!("MONITOR_NB_STARTED y {unreach}")
    );
    // The loss reached the handlers too.
    c[0].expect(&format!("EVENT code={} ", Status::ERR_LOST_CONNECTION.0));
    // The callback thread ended with the loss: a callback of a refused
    // call could only have run inline, printing before its STARTED line,
    // which was already read.
    let late: Vec<&String> = c[0]
        .seen
        .iter()
        .filter(|l| l.starts_with("JOBCTL_CB x ") || l.starts_with("MONITOR_CB y "))
        .collect();
    assert!(late.is_empty(), "callbacks of refused calls: {late:?}");
}

// ---------------------------------------- JOB-19: the requester is last

#[test]
fn job_19_a_requester_that_pauses_its_own_namespace_still_gets_its_answer() {
    let mut n = node(&[("je-pause", 2), ("je-wake", 1)], 5000);
    let (pid0, pid1) = (n.clients[0].pid(), n.clients[1].pid());
    // No targets: the whole namespace, the requester included.
    n.clients[0].send("JOBCTL - pmix.jctrl.pause=b:1");
    assert_eq!(wait_state(pid1, |s| s == 'T'), 'T');
    assert_eq!(wait_state(pid0, |s| s == 'T'), 'T');
    // The server writes the answer, then stops the requester: the answer
    // sits in its socket, but whether the process got to print it before
    // SIGSTOP landed is a race of the client's own threads, not an order
    // the server can give. So the line is checked after the resume: it
    // must be there, and count the requester among the two signalled.
    let (s, why) = jobctl(&mut n.clients[2], "je-pause:* pmix.jctrl.resume=b:1");
    assert_eq!(s, 0, "{why}");
    assert!(why.contains("sent to 2 process(es)"), "{why}");
    for pid in [pid0, pid1] {
        let st = wait_state(pid, |s| s != 'T');
        assert!(matches!(st, 'S' | 'R'), "state {st} after RESUME");
    }
    let l = n.clients[0].expect("JOBCTL_RESULT ");
    assert_eq!(
        l,
        format!(
            "JOBCTL_RESULT 0 fastpmix.reason=signal~{}~sent~to~2~process(es)",
            libc::SIGSTOP
        )
    );
    for c in n.clients.iter_mut().take(2) {
        c.send("PING");
        c.expect("PONG");
    }
}

#[test]
fn job_19_a_kill_request_runs_the_targets_registered_cleanup() {
    let mut n = node(&[("je-killclean", 2)], 5000);
    let file = temp_path("killclean");
    std::fs::write(&file, b"x").unwrap();
    let (s, why) = jobctl(
        &mut n.clients[1],
        &format!("- pmix.reg.cleanup=s:{}", file.display()),
    );
    assert_eq!(s, 0, "{why}");
    let (s, why) = jobctl(&mut n.clients[0], "je-killclean:1 pmix.jctrl.kill=b:1");
    assert_eq!(s, 0, "{why}");
    let st = n.clients[1].wait_exit();
    assert_eq!(st.signal(), Some(libc::SIGKILL), "{st:?}");
    wait_gone(&[&file]);
    let survived = file.exists();
    let _ = std::fs::remove_file(&file);
    assert!(!survived, "cleanup file survived a KILL request");
}

// ------------------------------ JOB-23: cleanup waits for the process's exit

#[test]
fn job_23_cleanup_of_a_process_that_finalized_runs_only_after_it_exits() {
    let mut n = node(&[("je-stay", 1)], 5000);
    let dir = temp_path("stay-dir");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/f"), b"x").unwrap();
    let file = temp_path("stay-file");
    std::fs::write(&file, b"y").unwrap();
    let c = &mut n.clients[0];
    let (s, why) = jobctl(
        c,
        &format!(
            "- pmix.reg.cleanupdir=s:{} pmix.clnup.recurse=b:1 pmix.reg.cleanup=s:{}",
            dir.display(),
            file.display()
        ),
    );
    assert_eq!(s, 0, "{why}");
    c.send("FINALIZE_STAY");
    assert_eq!(c.expect("FINALIZED_STAYING "), "FINALIZED_STAYING 0");
    // The server ended the connection (it decides about the cleanup before
    // it tells the host), as a finalize, not a loss.
    assert!(!n.wait_ended(0), "a finalize was reported as a loss");
    // Grace: a cleanup started at the finalize runs on a thread of its own,
    // which nothing can be ordered against; 1.5 s is plenty for two files.
    std::thread::sleep(Duration::from_millis(1500));
    let c = &mut n.clients[0];
    c.send("PING");
    c.expect("PONG");
    let early = (dir.exists(), file.exists());
    c.kill();
    wait_gone(&[&dir, &file]);
    let late = (dir.exists(), file.exists());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&file);
    assert_eq!(
        early,
        (true, true),
        "removed while the process that finalized still ran"
    );
    assert_eq!(late, (false, false), "not removed after the process exited");
}

// ------------------------------------------------------ JOB-33: cancelling

/// Rank 1 declares the event method and never reports; ranks 0 and 2 start
/// checkpoints of it (0: two, `a` with ID "x" and `b` without; 2: `c`).
/// Returns once the server has delivered all three (all are pending).
fn three_pending_checkpoints(ns: &str) -> Node {
    let mut n = node(&[(ns, 3)], 5000);
    declare_event_method(&mut n.clients[1], CKPT);
    let long = "pmix.jctrl.ckpttime=i:3600";
    for (i, tag, extra) in [(0, "a", "pmix.jctrl.id=s:x"), (0, "b", ""), (2, "c", "")] {
        n.clients[i].send(&format!(
            "JOBCTL_NB {tag} {ns}:1 pmix.jctrl.ckpt=s:c{tag} {long} {extra}"
        ));
        assert_eq!(
            n.clients[i].expect(&format!("JOBCTL_NB_STARTED {tag} ")),
            format!("JOBCTL_NB_STARTED {tag} 0")
        );
    }
    for _ in 0..3 {
        n.clients[1].expect(&format!("EVENT code={CKPT} "));
    }
    n
}

/// Cancel-all by rank 0 with the directive `cancel`: both of its pending
/// checkpoints end with `PMIX_ERR_JOB_CANCELED`, rank 2's does not.
fn cancel_all_is_the_requesters_only(ns: &str, cancel: &str) {
    let mut n = three_pending_checkpoints(ns);
    let canceled = Status::ERR_JOB_CANCELED.0;
    let (s, why) = jobctl(&mut n.clients[0], &format!("- {cancel}"));
    assert_eq!(s, 0, "{cancel}: {why}");
    assert!(why.contains("2 request(s) cancelled"), "{why}");
    for tag in ["a", "b"] {
        let l = n.clients[0].expect(&format!("JOBCTL_CB {tag} "));
        assert!(
            l.starts_with(&format!("JOBCTL_CB {tag} {canceled} ")),
            "{l}"
        );
    }
    // Rank 2's request was still pending: its own cancel-all finds it.
    let (s, why) = jobctl(&mut n.clients[2], "- pmix.jctrl.cancel=s:");
    assert_eq!(s, 0, "{why}");
    assert!(why.contains("1 request(s) cancelled"), "{why}");
    let l = n.clients[2].expect("JOBCTL_CB c ");
    assert!(l.starts_with(&format!("JOBCTL_CB c {canceled} ")), "{l}");
    // Nothing left to cancel.
    let (s, _) = jobctl(&mut n.clients[0], &format!("- {cancel}"));
    assert_eq!(s, Status::ERR_NOT_FOUND.0);
}

#[test]
fn job_33_cancel_with_an_empty_id_ends_every_pending_checkpoint_of_the_requester() {
    cancel_all_is_the_requesters_only("je-cxl-empty", "pmix.jctrl.cancel=s:");
}

#[test]
fn job_33_cancel_with_a_null_id_ends_every_pending_checkpoint_of_the_requester() {
    cancel_all_is_the_requesters_only("je-cxl-null", "pmix.jctrl.cancel=null");
}

#[test]
fn job_33_cancelling_a_terminate_by_id_drops_its_pending_sigkill() {
    // A one-second grace between SIGTERM and SIGKILL.
    let mut n = node(&[("je-term", 2)], 1000);
    let pid = n.clients[1].pid();
    // Rank 1 catches SIGTERM (and so survives it).
    n.clients[1].send(&format!("SIGWATCH {}", libc::SIGTERM));
    n.clients[1].expect("SIGWATCHING");
    let (s, why) = jobctl(
        &mut n.clients[0],
        "je-term:1 pmix.jctrl.term=b:1 pmix.jctrl.id=s:t1",
    );
    assert_eq!(s, 0, "{why}");
    n.clients[1].expect(&format!("SIGNALED {}", libc::SIGTERM));
    let (s, why) = jobctl(&mut n.clients[0], "- pmix.jctrl.cancel=s:t1");
    assert_eq!(s, 0, "the grace was still running: {why}");
    assert!(why.contains("1 request(s) cancelled"), "{why}");
    // Grace: a SIGKILL that must never come cannot be ordered against; it
    // was due 1 s after the SIGTERM, so 3 s is well past it.
    std::thread::sleep(Duration::from_secs(3));
    let st = state(pid);
    assert!(
        matches!(st, Some('S' | 'R')),
        "rank 1 did not survive the cancelled grace: state {st:?}"
    );
    n.clients[1].send("PING");
    n.clients[1].expect("PONG");
    // Control: the same TERMINATE without the cancel does end it by SIGKILL.
    let (s, why) = jobctl(&mut n.clients[0], "je-term:1 pmix.jctrl.term=b:1");
    assert_eq!(s, 0, "{why}");
    let st = n.clients[1].wait_exit();
    assert_eq!(st.signal(), Some(libc::SIGKILL), "{st:?}");
}

// ------------------------------------------ JOB-30: completion of checkpoints

#[test]
fn job_30_a_checkpoint_over_two_targets_completes_only_when_both_reported() {
    let mut n = node(&[("je-ck2", 3)], 5000);
    for i in [1, 2] {
        declare_event_method(&mut n.clients[i], CKPT);
    }
    // Rank 1 reports at once, in range RM: the requester hears of it only
    // through the server's relay. Rank 2 reports when the test says.
    n.clients[1].send(&format!("CKPT_RESPONDER {CKPT} {}", DataRange::RM.0));
    n.clients[1].expect("RESPONDING");
    n.clients[0]
        .send("JOBCTL_NB a je-ck2:1,je-ck2:2 pmix.jctrl.ckpt=s:two pmix.jctrl.ckpttime=i:3600");
    assert_eq!(
        n.clients[0].expect("JOBCTL_NB_STARTED a "),
        "JOBCTL_NB_STARTED a 0"
    );
    n.clients[1].expect("CHECKPOINTING two");
    n.clients[2].expect(&format!("EVENT code={CKPT} "));
    // The relay of rank 1's completion: the server has processed it.
    let relay = n.clients[0].expect(&format!("EVENT code={CKPT_DONE} "));
    assert_eq!(
        field(&relay, "source"),
        Some(n.server.me().to_string().as_str())
    );
    assert_eq!(field(&relay, "affected"), Some("je-ck2:1"), "{relay}");
    // Not complete. Ordered: a request sent now is answered after anything
    // the server wrote before, and its callback runs after any earlier one.
    n.clients[0].send("JOBCTL_NB z - pmix.jctrl.preempt=b:0");
    n.clients[0].expect("JOBCTL_CB z 0 ");
    let early: Vec<&String> = n.clients[0]
        .seen
        .iter()
        .filter(|l| l.starts_with("JOBCTL_CB a "))
        .collect();
    assert!(
        early.is_empty(),
        "complete with one of two reports: {early:?}"
    );
    // Rank 2 reports in range NAMESPACE, which reaches the requester.
    n.clients[2].send(&format!("CKPT_DONE two {}", DataRange::NAMESPACE.0));
    assert_eq!(n.clients[2].expect("CKPT_DONE_SENT "), "CKPT_DONE_SENT 0");
    assert_eq!(
        n.clients[0].expect("JOBCTL_CB a "),
        "JOBCTL_CB a 0 pmix.jctrl.ckpt=two"
    );
    // The requester heard rank 2's own report once: no relay as well.
    let before = n.sentinel(0);
    let done = with_code(&before, CKPT_DONE);
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(field(&done[0], "source"), Some("je-ck2:2"), "{done:?}");
}

#[test]
fn job_30_a_target_that_ends_before_reporting_fails_the_checkpoint() {
    let mut n = node(&[("je-ck2b", 3)], 5000);
    for i in [1, 2] {
        declare_event_method(&mut n.clients[i], CKPT);
    }
    n.clients[1].send(&format!("CKPT_RESPONDER {CKPT} {}", DataRange::RM.0));
    n.clients[1].expect("RESPONDING");
    n.clients[0]
        .send("JOBCTL_NB b je-ck2b:1,je-ck2b:2 pmix.jctrl.ckpt=s:lost pmix.jctrl.ckpttime=i:3600");
    assert_eq!(
        n.clients[0].expect("JOBCTL_NB_STARTED b "),
        "JOBCTL_NB_STARTED b 0"
    );
    n.clients[1].expect("CHECKPOINTING lost");
    n.clients[2].expect(&format!("EVENT code={CKPT} "));
    n.clients[2].kill();
    let l = n.clients[0].expect("JOBCTL_CB b ");
    assert!(
        l.starts_with(&format!(
            "JOBCTL_CB b {} pmix.jctrl.ckpt=lost;fastpmix.reason=",
            Status::ERR_PROC_CHECKPOINT.0
        )),
        "{l}"
    );
    assert!(l.contains("ended~before~completing"), "{l}");
}

#[test]
fn job_30_a_report_completes_only_the_checkpoint_it_names() {
    let mut n = node(&[("je-ckid", 3)], 5000);
    declare_event_method(&mut n.clients[1], CKPT);
    // Two requesters, two checkpoints of the same target.
    n.clients[0].send("JOBCTL_NB one je-ckid:1 pmix.jctrl.ckpt=s:one pmix.jctrl.ckpttime=i:3600");
    n.clients[0].expect("JOBCTL_NB_STARTED one 0");
    n.clients[1].expect(&format!("EVENT code={CKPT} "));
    n.clients[2].send("JOBCTL_NB two je-ckid:1 pmix.jctrl.ckpt=s:two pmix.jctrl.ckpttime=i:3600");
    n.clients[2].expect("JOBCTL_NB_STARTED two 0");
    n.clients[1].expect(&format!("EVENT code={CKPT} "));
    // The target reports "one" only.
    n.clients[1].send(&format!("CKPT_DONE one {}", DataRange::RM.0));
    n.clients[1].expect("CKPT_DONE_SENT 0");
    assert_eq!(
        n.clients[0].expect("JOBCTL_CB one "),
        "JOBCTL_CB one 0 pmix.jctrl.ckpt=one"
    );
    // "two" is still pending. Ordered: rank 2's cancel-all is handled
    // after the report (rank 0's callback shows the server processed it),
    // and a completed "two" would have been answered before it.
    let (s, why) = jobctl(&mut n.clients[2], "- pmix.jctrl.cancel=s:");
    assert_eq!(
        s, 0,
        "\"two\" was completed by the report of \"one\": {why}"
    );
    let l = n.clients[2].expect("JOBCTL_CB two ");
    assert!(
        l.starts_with(&format!("JOBCTL_CB two {} ", Status::ERR_JOB_CANCELED.0)),
        "{l}"
    );
}

// ----------------------------------------------- JOB-28: checkpoint methods

#[test]
fn job_28_a_method_the_requester_names_overrides_the_declared_event() {
    let mut n = node(&[("je-meth", 2)], 5000);
    n.clients[1].send(&format!("SIGWATCH {}", libc::SIGUSR1));
    n.clients[1].expect("SIGWATCHING");
    declare_event_method(&mut n.clients[1], CKPT);
    n.clients[0].send(&format!(
        "JOBCTL_NB k je-meth:1 pmix.jctrl.ckpt=s:bysig pmix.jctrl.ckptsig=i:{} \
         pmix.jctrl.ckpttime=i:3600",
        libc::SIGUSR1
    ));
    assert_eq!(
        n.clients[0].expect("JOBCTL_NB_STARTED k "),
        "JOBCTL_NB_STARTED k 0"
    );
    n.clients[1].expect(&format!("SIGNALED {}", libc::SIGUSR1));
    // Not the declared event as well. Ordered: it would have been put in
    // rank 1's ring when the request was acted on, before this sentinel.
    let before = n.sentinel(1);
    assert!(with_code(&before, CKPT).is_empty(), "{before:?}");
    n.clients[1].send(&format!("CKPT_DONE bysig {}", DataRange::RM.0));
    n.clients[1].expect("CKPT_DONE_SENT 0");
    assert_eq!(
        n.clients[0].expect("JOBCTL_CB k "),
        "JOBCTL_CB k 0 pmix.jctrl.ckpt=bysig"
    );
}

#[test]
fn job_28_a_declared_event_code_other_than_the_default_is_delivered() {
    let mut n = node(&[("je-code", 2)], 5000);
    watch(&mut n.clients[1], -3200);
    declare_event_method(&mut n.clients[1], -3200);
    n.clients[0].send("JOBCTL_NB k je-code:1 pmix.jctrl.ckpt=s:own pmix.jctrl.ckpttime=i:3600");
    assert_eq!(
        n.clients[0].expect("JOBCTL_NB_STARTED k "),
        "JOBCTL_NB_STARTED k 0"
    );
    let l = n.clients[1].expect("CAUGHT_INFO code=-3200 ");
    assert_eq!(
        field(&l, attrs::PMIX_JOB_CTRL_CHECKPOINT.as_str()),
        Some("own"),
        "{l}"
    );
    assert_eq!(field(&l, "affected"), Some("je-code:1"), "{l}");
    let before = n.sentinel(1);
    assert!(
        with_code(&before, CKPT).is_empty(),
        "the default too: {before:?}"
    );
    n.clients[1].send(&format!("CKPT_DONE own {}", DataRange::RM.0));
    n.clients[1].expect("CKPT_DONE_SENT 0");
    assert_eq!(
        n.clients[0].expect("JOBCTL_CB k "),
        "JOBCTL_CB k 0 pmix.jctrl.ckpt=own"
    );
}

#[test]
fn job_28_every_target_must_have_a_method_before_anything_is_delivered() {
    let mut n = node(&[("je-allm", 3)], 5000);
    declare_event_method(&mut n.clients[1], CKPT);
    // Rank 2 declared nothing.
    let (s, why) = jobctl(
        &mut n.clients[0],
        "je-allm:1,je-allm:2 pmix.jctrl.ckpt=s:none pmix.jctrl.ckpttime=i:3600",
    );
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0, "{why}");
    assert!(
        why.contains("je-allm:2 declared no checkpoint method"),
        "{why}"
    );
    // Rank 1, which could have been asked, was not.
    let before = n.sentinel(1);
    assert!(with_code(&before, CKPT).is_empty(), "{before:?}");
}

// -------------------------------------------- JOB-43: monitors of the dead

#[test]
fn job_43_the_heartbeat_monitor_of_a_killed_owner_never_alerts() {
    let mut n = node(&[("je-hbkill", 2)], 5000);
    watch(&mut n.clients[1], HB_ALERT);
    // Rank 0 beats every 100 ms until it dies: no alert while it lives.
    n.clients[0].send("BEAT_EVERY 100 1000000");
    let (s, why) = monitor(
        &mut n.clients[0],
        "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 pmix.monitor.bdrop=u32:1 \
         pmix.monitor.appctrl=b:1",
    );
    assert_eq!(s, 0, "{why}");
    n.clients[0].kill();
    assert!(n.wait_ended(0), "a SIGKILLed client was not reported lost");
    let mut lines = n.sentinel(1);
    // Grace: an alert for a monitor that should be gone cannot be ordered
    // against; it would come two silent one-second periods after the last
    // beat, so 4 s is well past it.
    lines.extend(n.clients[1].events_within(Duration::from_secs(4)));
    lines.extend(n.sentinel(1));
    let alerts = with_code(&lines, HB_ALERT);
    assert!(alerts.is_empty(), "alert for a dead owner: {alerts:?}");
    // The server keeps serving, monitors included.
    let c = &mut n.clients[1];
    let (s, why) = monitor(
        c,
        "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1",
    );
    assert_eq!(s, 0, "{why}");
    let l = c.expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
    assert_eq!(field(&l, "affected"), Some("je-hbkill:1"), "{l}");
}

// ------------------------------------------ JOB-41: file property selection

fn size_only_args(path: &Path, drops: u32) -> String {
    format!(
        "pmix.monitor.fchg=null 0 pmix.monitor.fmon=s:{} pmix.monitor.ftime=u32:1 \
         pmix.monitor.fdrop=u32:{drops} pmix.monitor.fsize=b:1",
        path.display()
    )
}

/// Sets `path`'s modification time to now every 200 ms until `c` caught a
/// file alert or `limit` passed. Returns the alert, if any.
fn touch_until_alert(c: &mut ClientProc, path: &Path, limit: Duration) -> Option<String> {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    let end = Instant::now() + limit;
    while Instant::now() < end {
        f.set_modified(SystemTime::now()).unwrap();
        let _ = c.events_within(Duration::from_millis(200));
        let pre = format!("CAUGHT_INFO code={FILE_ALERT} ");
        if let Some(l) = take_seen(c, &pre) {
            return Some(l);
        }
    }
    None
}

#[test]
fn job_41_watching_only_the_size_counts_a_touched_mtime_as_unchanged() {
    let path = temp_path("fsize-touch");
    std::fs::write(&path, b"same size").unwrap();
    let before = std::fs::metadata(&path).unwrap();
    let mut n = node(&[("je-fsize-t", 1)], 5000);
    let c = &mut n.clients[0];
    watch(c, FILE_ALERT);
    let (s, why) = monitor(c, &size_only_args(&path, 1));
    assert_eq!(s, 0, "{why}");
    // The alert comes while the modification time keeps changing.
    let alert = touch_until_alert(c, &path, HANG);
    let after = std::fs::metadata(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(after.len(), before.len());
    assert_ne!(after.modified().unwrap(), before.modified().unwrap());
    let l = alert.expect("no alert while only the mtime changed");
    assert_eq!(
        field(&l, attrs::PMIX_MONITOR_TARGET_FILES.as_str()),
        Some(path.display().to_string().as_str()),
        "{l}"
    );
}

#[test]
fn job_41_default_properties_count_a_touched_mtime_as_a_change() {
    // The control of the test above: the same touching, with no property
    // named (size and modification time), keeps the monitor quiet.
    let path = temp_path("fdefault-touch");
    std::fs::write(&path, b"same size").unwrap();
    let mut n = node(&[("je-fdef-t", 1)], 5000);
    watch(&mut n.clients[0], FILE_ALERT);
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!(
            "pmix.monitor.fchg=null 0 pmix.monitor.fmon=s:{} pmix.monitor.ftime=u32:1 \
             pmix.monitor.fdrop=u32:2",
            path.display()
        ),
    );
    assert_eq!(s, 0, "{why}");
    // Three seconds of touching: at least two checks, each saw a change.
    let during = touch_until_alert(&mut n.clients[0], &path, Duration::from_secs(3));
    let mut lines = n.sentinel(0);
    lines.extend(during);
    let _ = std::fs::remove_file(&path);
    let alerts = with_code(&lines, FILE_ALERT);
    assert!(
        alerts.is_empty(),
        "alert while the mtime changed: {alerts:?}"
    );
}

#[test]
fn job_41_watching_only_the_size_counts_appended_bytes_as_a_change() {
    let path = temp_path("fsize-append");
    std::fs::write(&path, b"x").unwrap();
    let mut n = node(&[("je-fsize-a", 1)], 5000);
    watch(&mut n.clients[0], FILE_ALERT);
    let (s, why) = monitor(&mut n.clients[0], &size_only_args(&path, 2));
    assert_eq!(s, 0, "{why}");
    // Appends for ~3 s, 5 per check period; an alert needs two checks in a
    // row that see the same size.
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"more\n").unwrap();
        drop(f);
        std::thread::sleep(Duration::from_millis(200));
    }
    let during = n.sentinel(0);
    let alerts = with_code(&during, FILE_ALERT);
    assert!(alerts.is_empty(), "alert while the size grew: {alerts:?}");
    // Once it stops growing, the alert comes.
    let l = n.clients[0].expect(&format!("CAUGHT_INFO code={FILE_ALERT} "));
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        field(&l, attrs::PMIX_MONITOR_TARGET_FILES.as_str()),
        Some(path.display().to_string().as_str()),
        "{l}"
    );
}

// ----------------------------------- JOB-34: the launcher's host refuses

/// Runs `fastpmix run -n 1` over this binary's client with `script`.
fn launch(script: &str) -> (i32, String, String) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(BIN)
        .args(["run", "-n", "1", "--"])
        .arg(exe)
        .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "client")
        .env(SCRIPT_ENV, script)
        .output()
        .expect("run fastpmix");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn results(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("[0] JOBCTL_RESULT "))
        .collect()
}

#[test]
fn job_34_the_launcher_refuses_restart_and_provisioning_with_a_reason() {
    let (code, out, err) = launch(
        "JOBCTL - pmix.jctrl.restart=s:x; JOBCTL - pmix.jctrl.pvn=s:img; \
         JOBCTL - pmix.jctrl.pvnimg=s:img; FINALIZE",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let ns = Status::ERR_NOT_SUPPORTED.0;
    assert_eq!(
        results(&out),
        vec![
            format!("[0] JOBCTL_RESULT {ns} fastpmix.reason=restart~is~not~supported~by~fastpmix~run"),
            format!(
                "[0] JOBCTL_RESULT {ns} fastpmix.reason=provisioning~is~not~supported~by~fastpmix~run"
            ),
            format!(
                "[0] JOBCTL_RESULT {ns} fastpmix.reason=provisioning~is~not~supported~by~fastpmix~run"
            ),
        ],
        "{out}\n{err}"
    );
}

#[test]
fn job_34_the_launcher_refuses_a_target_of_another_node_as_not_found() {
    let (code, out, err) = launch("JOBCTL other-ns:0 pmix.jctrl.pause=b:1; FINALIZE");
    // The requester was not paused: it went on to finalize.
    assert_eq!(code, 0, "{out}\n{err}");
    let r = results(&out);
    assert_eq!(r.len(), 1, "{out}");
    assert!(
        r[0].starts_with(&format!("[0] JOBCTL_RESULT {} ", Status::ERR_NOT_FOUND.0)),
        "{out}"
    );
}

#[test]
fn job_34_the_launcher_says_why_a_target_of_another_node_is_refused() {
    let (code, out, err) = launch("JOBCTL other-ns:0 pmix.jctrl.pause=b:1; FINALIZE");
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        results(&out),
        vec![format!(
            "[0] JOBCTL_RESULT {} fastpmix.reason=other-ns:0~are~not~on~this~node~\
             (fastpmix~run~has~one~node)",
            Status::ERR_NOT_FOUND.0
        )],
        "{out}\n{err}"
    );
}

#[test]
fn job_15_targets_of_another_node_go_to_the_host() {
    let mut n = node(&[("je-remote", 1)], 5000);
    let (s, why) = jobctl(&mut n.clients[0], "je-elsewhere:0 pmix.jctrl.pause=b:1");
    // The test host refuses everything: its answer is the result.
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0, "{why}");
    assert!(why.contains("test host refuses"), "{why}");
    let calls = n.host.calls.lock().unwrap();
    assert_eq!(calls.len(), 1);
    let (who, targets, _) = &calls[0];
    assert_eq!(*who, n.clients[0].proc);
    assert_eq!(targets, &vec![p("je-elsewhere", 0)]);
}

#[test]
fn job_15_a_request_for_local_and_other_nodes_processes_acts_on_both_and_answers_once() {
    let mut n = node(&[("je-mixed", 2)], 5000);
    let pid1 = n.clients[1].pid();
    let (s, why) = jobctl(
        &mut n.clients[0],
        "je-mixed:1,je-elsewhere:0 pmix.jctrl.pause=b:1",
    );
    // Paused here, refused by the test host: partly done, and both say so.
    assert_eq!(s, Status::ERR_PARTIAL_SUCCESS.0, "{why}");
    assert!(why.contains("sent to 1 process"), "{why}");
    assert!(why.contains("test host refuses"), "{why}");
    assert_eq!(procs::wait_state(pid1, |c| c == 'T'), 'T');
    {
        let calls = n.host.calls.lock().unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].0, n.clients[0].proc);
        assert_eq!(
            calls[0].1,
            vec![p("je-elsewhere", 0)],
            "only the remote part"
        );
    }
    let (s, why) = jobctl(&mut n.clients[0], "je-mixed:1 pmix.jctrl.resume=b:1");
    assert_eq!(s, 0, "{why}");
    assert_ne!(procs::wait_state(pid1, |c| c != 'T'), 'T');
}

#[test]
fn job_15_a_requester_among_local_and_remote_targets_hears_the_joint_answer_and_its_signal() {
    let mut n = node(&[("je-mixself", 1)], 5000);
    let c = &mut n.clients[0];
    c.send(&format!("SIGWATCH {}", libc::SIGUSR1));
    c.expect("SIGWATCHING");
    // The requester is signalled after its answer; until 2026-11-27 it
    // answered by itself there and the remote part was never handed on.
    let (s, why) = jobctl(
        c,
        &format!(
            "je-mixself:0,je-elsewhere:3 pmix.jctrl.sig=i:{}",
            libc::SIGUSR1
        ),
    );
    assert_eq!(s, Status::ERR_PARTIAL_SUCCESS.0, "{why}");
    assert!(why.contains("test host refuses"), "{why}");
    c.expect(&format!("SIGNALED {}", libc::SIGUSR1));
    let calls = n.host.calls.lock().unwrap();
    assert_eq!(calls.len(), 1, "the host heard the remote part");
    assert_eq!(calls[0].1, vec![p("je-elsewhere", 3)]);
}
