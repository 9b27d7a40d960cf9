//! `PMIx_Job_control` between real processes. The test process
//! embeds the server; clients are this binary re-executed (`tests/procs`).
//! Effects are observed from outside: process state in /proc, exit
//! signals, files on disk, events the requester receives.

mod common;
mod procs;

use common::host::{Answers, RecordingHost, Reply};
use fastpmix::server::{Server, TERM_GRACE_MS};
use fastpmix::types::attrs;
use fastpmix::{Info, Status, Value};
use procs::{ClientProc, HANG, ROLE_ENV};
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD: &str = "child_client";

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
    }
}

/// Records job-control upcalls; answers them with a fixed status.
fn recorder() -> Arc<RecordingHost> {
    RecordingHost::with(Answers {
        abort: Status::SUCCESS,
        job_control: Reply::With(
            Status::ERR_NOT_SUPPORTED,
            vec![Info::new(fastpmix::job::REASON, "test host refuses")],
        ),
        ..Answers::default()
    })
}

use procs::ids;

struct Node {
    _server: Server,
    host: Arc<RecordingHost>,
    clients: Vec<ClientProc>,
}

/// A server with namespace `ns` ranks 0..n, all connected.
fn node(ns: &str, n: u32, grace_ms: u32) -> Node {
    let host = recorder();
    let server = Server::builder()
        .host(host.clone())
        .attribute(Info::new(TERM_GRACE_MS, Value::Uint32(grace_ms)))
        .start()
        .unwrap();
    let clients = procs::spawn_clients(&server, CHILD, &[(ns, n)]);
    Node {
        _server: server,
        host,
        clients,
    }
}

use procs::{state, wait_state};

fn result(c: &mut ClientProc, cmd: &str, prefix: &str) -> (i32, String) {
    c.send(cmd);
    let l = c.expect(prefix);
    let mut w = l.splitn(3, ' ').skip(1);
    let s = w.next().unwrap().parse().unwrap();
    (s, w.next().unwrap_or("").replace('~', " "))
}

fn jobctl(c: &mut ClientProc, args: &str) -> (i32, String) {
    result(c, &format!("JOBCTL {args}"), "JOBCTL_RESULT")
}

#[test]
fn job_ctrl_pause_then_resume_is_seen_in_proc_state() {
    let mut n = node("jc-pause", 2, 5000);
    let target = n.clients[1].pid();
    let (s, why) = jobctl(&mut n.clients[0], "jc-pause:1 pmix.jctrl.pause=b:1");
    assert_eq!(s, 0, "{why}");
    assert_eq!(wait_state(target, |c| c == 'T'), 'T');
    let (s, _) = jobctl(&mut n.clients[0], "jc-pause:1 pmix.jctrl.resume=b:1");
    assert_eq!(s, 0);
    let st = wait_state(target, |c| c != 'T');
    assert!(matches!(st, 'S' | 'R'), "state {st} after RESUME");
    // It still answers: it was resumed, not killed.
    n.clients[1].send("PING");
    n.clients[1].expect("PONG");
}

#[test]
fn job_ctrl_signal_delivers_any_signal() {
    let mut n = node("jc-sig", 2, 5000);
    n.clients[1].send(&format!("SIGWATCH {}", libc::SIGUSR1));
    n.clients[1].expect("SIGWATCHING");
    let (s, _) = jobctl(
        &mut n.clients[0],
        &format!("jc-sig:1 pmix.jctrl.sig=i:{}", libc::SIGUSR1),
    );
    assert_eq!(s, 0);
    n.clients[1].expect(&format!("SIGNALED {}", libc::SIGUSR1));
}

#[test]
fn job_ctrl_terminate_escalates_to_sigkill_after_the_grace() {
    let mut n = node("jc-term", 2, 300);
    n.clients[1].send("IGNORE_TERM");
    n.clients[1].expect("IGNORING");
    let (s, _) = jobctl(&mut n.clients[0], "jc-term:1 pmix.jctrl.term=b:1");
    assert_eq!(s, 0);
    let st = n.clients[1].wait_exit();
    assert_eq!(st.signal(), Some(libc::SIGKILL), "{st:?}");
}

#[test]
fn job_ctrl_terminate_ends_a_process_that_honours_sigterm() {
    let mut n = node("jc-term2", 2, 60_000);
    let (s, _) = jobctl(&mut n.clients[0], "jc-term2:1 pmix.jctrl.term=b:1");
    assert_eq!(s, 0);
    assert_eq!(n.clients[1].wait_exit().signal(), Some(libc::SIGTERM));
}

#[test]
fn job_ctrl_kill_with_null_targets_hits_the_whole_namespace_requester_last() {
    let mut n = node("jc-kill", 3, 5000);
    // The requester dies too, possibly before it prints its result.
    n.clients[0].send("JOBCTL - pmix.jctrl.kill=b:1");
    for c in n.clients.iter_mut() {
        assert_eq!(c.wait_exit().signal(), Some(libc::SIGKILL));
    }
}

#[test]
fn job_ctrl_cleanup_runs_after_sigkill() {
    let mut n = node("jc-clean", 2, 5000);
    let dir = std::env::temp_dir().join(format!("fastpmix-jc-clean-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/f"), b"x").unwrap();
    let file = std::env::temp_dir().join(format!("fastpmix-jc-file-{}", std::process::id()));
    std::fs::write(&file, b"y").unwrap();
    let (s, why) = jobctl(
        &mut n.clients[1],
        &format!(
            "- pmix.reg.cleanupdir=s:{} pmix.clnup.recurse=b:1 pmix.reg.cleanup=s:{}",
            dir.display(),
            file.display()
        ),
    );
    assert_eq!(s, 0, "{why}");
    n.clients[1].kill();
    let deadline = Instant::now() + HANG;
    while (dir.exists() || file.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !dir.exists(),
        "cleanup dir survived SIGKILL of its registrant"
    );
    assert!(!file.exists(), "cleanup file survived");
}

#[test]
fn job_ctrl_conflicting_cleanup_directives_are_refused() {
    let mut n = node("jc-conflict", 1, 5000);
    let (s, _) = jobctl(
        &mut n.clients[0],
        "- pmix.reg.cleanup=s:/tmp/fastpmix-x pmix.reg.cleanupdir=s:/tmp/fastpmix-x",
    );
    assert_eq!(s, Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES.0);
}

#[test]
fn job_ctrl_checkpoint_uses_the_declared_event_and_completion_reaches_the_requester() {
    let mut n = node("jc-ckpt", 2, 5000);
    // RFC0015's declaration: preemptible, checkpoint by event.
    let (s, why) = jobctl(
        &mut n.clients[1],
        "- pmix.jctrl.preempt=b:1 pmix.jctrl.ckmethod=infos:pmix.jctrl.ckptev=st:-106",
    );
    assert_eq!(s, 0, "{why}");
    // The target answers in range RM: only the server sees it, so the
    // requester hears it through the server's relay.
    n.clients[1].send("CKPT_RESPONDER -106 1");
    n.clients[1].expect("RESPONDING");
    let (s, res) = jobctl(&mut n.clients[0], "jc-ckpt:1 pmix.jctrl.ckpt=s:snap1");
    assert_eq!(s, 0, "{res}");
    assert!(res.contains("pmix.jctrl.ckpt=snap1"), "{res}");
    n.clients[1].expect("CHECKPOINTING snap1");
    n.clients[0].expect("EVENT code=-107");
}

#[test]
fn job_ctrl_checkpoint_by_signal_when_declared_first() {
    let mut n = node("jc-ckpt-sig", 2, 5000);
    n.clients[1].send(&format!("SIGWATCH {}", libc::SIGUSR2));
    n.clients[1].expect("SIGWATCHING");
    let (s, _) = jobctl(
        &mut n.clients[1],
        &format!(
            "- pmix.jctrl.ckmethod=infos:pmix.jctrl.ckptsig=i:{}|pmix.jctrl.ckptev=b:1",
            libc::SIGUSR2
        ),
    );
    assert_eq!(s, 0);
    n.clients[0].send("JOBCTL_NB c jc-ckpt-sig:1 pmix.jctrl.ckpt=s:s1 pmix.jctrl.ckpttime=i:1");
    n.clients[0].expect("JOBCTL_NB_STARTED c 0");
    n.clients[1].expect(&format!("SIGNALED {}", libc::SIGUSR2));
    // Nobody reports completion: the timeout ends the wait.
    let l = n.clients[0].expect("JOBCTL_CB c");
    assert!(
        l.starts_with(&format!("JOBCTL_CB c {}", Status::ERR_TIMEOUT.0)),
        "{l}"
    );
}

#[test]
fn job_ctrl_checkpoint_without_a_declared_method_is_refused() {
    let mut n = node("jc-ckpt-none", 2, 5000);
    let (s, why) = jobctl(&mut n.clients[0], "jc-ckpt-none:1 pmix.jctrl.ckpt=s:x");
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0);
    assert!(why.contains("declared no checkpoint method"), "{why}");
}

#[test]
fn job_ctrl_cancel_by_id_ends_a_pending_checkpoint() {
    let mut n = node("jc-cancel", 2, 5000);
    let (s, _) = jobctl(
        &mut n.clients[1],
        "- pmix.jctrl.ckmethod=infos:pmix.jctrl.ckptev=b:1",
    );
    assert_eq!(s, 0);
    n.clients[0].send("JOBCTL_NB k jc-cancel:1 pmix.jctrl.ckpt=s:c pmix.jctrl.id=s:job-7");
    n.clients[0].expect("JOBCTL_NB_STARTED k 0");
    // An unknown ID cancels nothing.
    let (s, _) = jobctl(&mut n.clients[0], "- pmix.jctrl.cancel=s:other");
    assert_eq!(s, Status::ERR_NOT_FOUND.0);
    let (s, why) = jobctl(&mut n.clients[0], "- pmix.jctrl.cancel=s:job-7");
    assert_eq!(s, 0, "{why}");
    let l = n.clients[0].expect("JOBCTL_CB k");
    assert!(
        l.starts_with(&format!("JOBCTL_CB k {}", Status::ERR_JOB_CANCELED.0)),
        "{l}"
    );
}

#[test]
fn job_ctrl_restart_goes_to_the_host_with_the_requesters_credentials() {
    let mut n = node("jc-host", 1, 5000);
    let (s, why) = jobctl(&mut n.clients[0], "- pmix.jctrl.restart=s:snap1");
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0);
    assert!(why.contains("test host refuses"), "{why}");
    let calls = n.host.calls.lock().unwrap();
    let (who, _, dirs) = &calls[0];
    assert_eq!(*who, n.clients[0].proc);
    let (uid, gid) = ids();
    let get = |k: &fastpmix::Key| dirs.iter().find(|i| i.key == *k).map(|i| i.value.clone());
    assert_eq!(get(&attrs::PMIX_USERID), Some(Value::Uint32(uid)));
    assert_eq!(get(&attrs::PMIX_GRPID), Some(Value::Uint32(gid)));
}

#[test]
fn job_ctrl_bad_input_gets_a_status_and_the_server_keeps_serving() {
    let mut n = node("jc-bad", 2, 5000);
    let c = &mut n.clients[0];
    let cases = [
        (
            "- !vendor.unknown=b:1 pmix.jctrl.pause=b:1",
            Status::ERR_NOT_SUPPORTED,
        ),
        ("- pmix.jctrl.pause=s:yes", Status::ERR_BAD_PARAM),
        (
            "- pmix.jctrl.pause=b:1 pmix.jctrl.kill=b:1",
            Status::ERR_BAD_PARAM,
        ),
        ("- pmix.jctrl.sig=i:0", Status::ERR_BAD_PARAM),
        ("jc-bad:7 pmix.jctrl.pause=b:1", Status::ERR_NOT_FOUND),
        ("- vendor.unknown=b:1", Status::ERR_BAD_PARAM),
        ("- pmix.jctrl.ckmethod=infos:", Status::ERR_BAD_PARAM),
    ];
    for (args, want) in cases {
        let (s, why) = jobctl(c, args);
        assert_eq!(s, want.0, "{args}: {why}");
    }
    c.send("PING");
    c.expect("PONG");
    // And a valid request still works.
    n.clients[1].send(&format!("SIGWATCH {}", libc::SIGUSR1));
    n.clients[1].expect("SIGWATCHING");
    let (s, _) = jobctl(
        &mut n.clients[0],
        &format!("jc-bad:1 pmix.jctrl.sig=i:{}", libc::SIGUSR1),
    );
    assert_eq!(s, 0);
}

#[test]
fn job_ctrl_requester_may_act_only_on_its_own_uid() {
    if ids().0 != 0 {
        println!("skipped: needs root to run a second uid");
        return;
    }
    let host = recorder();
    let server = Server::builder().host(host).start().unwrap();
    if !procs::peer_can_run_this_binary() {
        println!(
            "skipped: the second uid cannot execute this test binary (checkout not world-traversable)"
        );
        return;
    }
    let (mut r, mut u) = procs::two_uid_clients(&server, CHILD, "jc-uid-root", "jc-uid-nobody");
    // The second uid may not stop root's process.
    let (s, why) = jobctl(&mut u, "jc-uid-root:0 pmix.jctrl.pause=b:1");
    assert_eq!(s, Status::ERR_NO_PERMISSIONS.0);
    assert!(why.contains("may not act on"), "{why}");
    assert!(matches!(state(r.pid()), Some('S' | 'R')));
    // Root may act on anyone.
    let (s, _) = jobctl(&mut r, "jc-uid-nobody:0 pmix.jctrl.pause=b:1");
    assert_eq!(s, 0);
    assert_eq!(wait_state(u.pid(), |c| c == 'T'), 'T');
    let (s, _) = jobctl(&mut r, "jc-uid-nobody:0 pmix.jctrl.resume=b:1");
    assert_eq!(s, 0);
}

#[test]
fn preempt_alert_reaches_only_processes_that_declared_themselves_preemptible() {
    let mut n = node("jc-preempt", 2, 5000);
    let (s, _) = jobctl(&mut n.clients[1], "- pmix.jctrl.preempt=b:1");
    assert_eq!(s, 0);
    for c in n.clients.iter_mut() {
        c.send(&format!("WATCH {}", Status::JCTRL_PREEMPT_ALERT.0));
        c.expect("WATCHING");
    }
    let reached = n
        ._server
        .preempt_alert(
            &[],
            vec![Info::new(attrs::PMIX_EVENT_TEXT_MESSAGE, "in 30 s")],
        )
        .unwrap();
    assert_eq!(reached, 1);
    n.clients[1].expect(&format!("CAUGHT code={}", Status::JCTRL_PREEMPT_ALERT.0));
    // Ordered, not timed: rank 1 saw the alert, then both see a sentinel
    // from rank 1; rank 0 would have seen the alert before its sentinel.
    n.clients[1].send("NOTIFY -5000 3");
    n.clients[1].expect("NOTIFIED 0");
    n.clients[0].expect("EVENT code=-5000");
    let early: Vec<&String> = n.clients[0]
        .seen
        .iter()
        .filter(|l| l.contains(&format!("code={}", Status::JCTRL_PREEMPT_ALERT.0)))
        .collect();
    assert!(early.is_empty(), "rank 0 was not preemptible: {early:?}");
}

/// `Server::preempt_alert` with explicit targets: the alert reaches the targets that
/// declared themselves preemptible, and no one else: not a target that did
/// not declare itself, not a preemptible process that is no target. A
/// wildcard rank names the whole namespace.
#[test]
fn preempt_alert_with_targets_reaches_only_the_preemptible_targets() {
    let alert = Status::JCTRL_PREEMPT_ALERT.0;
    let host = recorder();
    let server = Server::builder().host(host).start().unwrap();
    // 0 jc-pt-a:0, 1 jc-pt-a:1, 2 jc-pt-a:2, 3 jc-pt-b:0, 4 jc-pt-b:1.
    let mut c = procs::spawn_clients(&server, CHILD, &[("jc-pt-a", 3), ("jc-pt-b", 2)]);
    for i in [1, 2, 3] {
        let (s, why) = jobctl(&mut c[i], "- pmix.jctrl.preempt=b:1");
        assert_eq!(s, 0, "{}: {why}", c[i].proc);
    }
    let p = procs::parse_proc;
    // a:0 (not preemptible), a:1 (preemptible), all of b (b:0 preemptible,
    // b:1 not). a:2 is preemptible but no target.
    let targets = [p("jc-pt-a:0"), p("jc-pt-a:1"), p("jc-pt-b:*")];
    let reached = server
        .preempt_alert(
            &targets,
            vec![Info::new(attrs::PMIX_EVENT_TEXT_MESSAGE, "in 30 s")],
        )
        .unwrap();
    assert_eq!(reached, 2, "jc-pt-a:1 and jc-pt-b:0");
    // None of the targets declared itself: nobody.
    let reached = server
        .preempt_alert(&[p("jc-pt-a:0"), p("jc-pt-b:1")], Vec::new())
        .unwrap();
    assert_eq!(reached, 0, "no preemptible target");
    // Ordered, not timed: both alerts were published before this sentinel
    // (same thread), and every ring is FIFO.
    server
        .notify(fastpmix::event::Notification::new(
            Status(-5000),
            server.me(),
            fastpmix::DataRange::LOCAL,
        ))
        .unwrap();
    let me = server.me();
    for (i, want) in [(0, 0), (1, 1), (2, 0), (3, 1), (4, 0)] {
        c[i].expect("EVENT code=-5000 ");
        let alerts: Vec<String> = c[i]
            .take_events()
            .into_iter()
            .filter(|l| l.starts_with(&format!("EVENT code={alert} ")))
            .collect();
        assert_eq!(alerts.len(), want, "{}: {alerts:?}", c[i].proc);
        for l in &alerts {
            assert!(
                l.starts_with(&format!("EVENT code={alert} source={me} ")),
                "from the server: {l}"
            );
        }
    }
}

#[test]
fn pmix_abort_reaches_the_host_with_the_authenticated_caller_and_its_targets() {
    let mut n = node("jc-abort", 2, 5000);
    n.clients[0].send("PMIX_ABORT 3 bad~input jc-abort:1");
    assert_eq!(n.clients[0].expect("ABORT_RESULT"), "ABORT_RESULT 0");
    let aborts = n.host.aborts.lock().unwrap();
    let (who, s, msg, targets) = &aborts[0];
    assert_eq!(*who, n.clients[0].proc);
    assert_eq!((*s, msg.as_str()), (Status(3), "bad input"));
    assert_eq!(targets, &vec![n.clients[1].proc]);
}

#[test]
fn pmix_abort_without_host_support_returns_not_supported() {
    let server = Server::builder().start().unwrap();
    let mut c = procs::spawn_clients(&server, CHILD, &[("jc-abort-none", 1)]);
    c[0].send("PMIX_ABORT 3 x -");
    assert_eq!(
        c[0].expect("ABORT_RESULT"),
        format!("ABORT_RESULT {}", Status::ERR_NOT_SUPPORTED.0)
    );
}
