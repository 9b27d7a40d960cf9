//! Issue 4 §6: the launcher and its tools, run as the user runs them (the
//! `fastpmix` binary Cargo built for this test).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run fastpmix");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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
    let (code, _, err) = run(&[
        "run",
        "-n",
        "2",
        "--trace-events",
        "--",
        "sh",
        "-c",
        "exit 3",
    ]);
    assert_eq!(code, 3, "job status = the first non-zero exit code\n{err}");
    // Plain programs never connect: judged by their exit status alone.
    assert!(!err.contains("abnormally"), "{err}");
    let terminated = err
        .lines()
        .filter(|l| l.contains("event PMIX_EVENT_PROC_TERMINATED"))
        .count();
    assert_eq!(terminated, 2, "one PROC_TERMINATED per process\n{err}");
    assert!(err.contains("event PMIX_EVENT_JOB_END"), "{err}");
    let (code, _, _) = run(&["run", "-n", "2", "--", "true"]);
    assert_eq!(code, 0);
}

#[test]
fn a_process_killed_by_a_signal_aborts_the_job_after_the_action_timeout() {
    // Rank 0 kills itself; rank 1 would sleep for a minute: the launcher's
    // default policy terminates it after --abort-timeout.
    let t = Instant::now();
    let (code, _, err) = run(&[
        "run",
        "-n",
        "2",
        "--abort-timeout",
        "1",
        "--trace-events",
        "--",
        "sh",
        "-c",
        "if [ \"$PMIX_RANK\" = 0 ]; then kill -9 $$; else sleep 60; fi",
    ]);
    assert_eq!(code, 128 + 9, "{err}");
    assert!(err.contains("event PMIX_ERR_PROC_ABORTED"), "{err}");
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
    assert_ne!(code, 0);
    assert!(err.contains("usage"), "{err}");
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
    let deadline = Instant::now() + Duration::from_secs(20);
    let report = loop {
        let (code, out, err) = run(&["inspect", "--pid", &pid]);
        if code == 0 {
            break out;
        }
        assert!(
            Instant::now() < deadline,
            "inspect never reached the launcher: {err}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
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
