//! Issue 5: the launcher's built-in default host (`fastpmix run`), driven by
//! real client processes: this test binary re-executed under the launcher
//! with a command script (`tests/procs`, `FASTPMIX_TEST_SCRIPT`).

mod procs;

use procs::{ROLE_ENV, SCRIPT_ENV};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
    }
}

/// Runs `fastpmix run -n <n>` over this binary's client with `script`.
fn job(n: u32, script: &str) -> (i32, String, String) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(BIN)
        .args(["run", "-n", &n.to_string(), "--"])
        .arg(exe)
        .args(["child_client", "--exact", "--nocapture", "--test-threads=1"])
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

fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in\n{out}"))
}

#[test]
fn default_host_grants_cores_and_refuses_what_it_cannot_meet() {
    // SAFETY: sched_getaffinity into a zeroed set of ours.
    let ncpu = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set),
            0
        );
        libc::CPU_COUNT(&set) as u64
    };
    let script = format!(
        "ALLOC 1 pmix.alloc.ncpus=u64:1 pmix.alloc.reqid=s:first; \
         ALLOC 1 pmix.alloc.ncpus=u64:{ncpu}; \
         ALLOC 3 pmix.alloc.reqid=s:first; \
         ALLOC 1 pmix.alloc.nnodes=u64:2 pmix.alloc.ncpus=u64:1; \
         FINALIZE"
    );
    let (code, out, err) = job(1, &script);
    assert_eq!(code, 0, "{out}\n{err}");
    let mut results = out.lines().filter(|l| l.starts_with("[0] ALLOC_RESULT"));
    let first = results.next().unwrap();
    assert!(first.starts_with("[0] ALLOC_RESULT 0 "), "{first}");
    assert!(first.contains("pmix.alloc.id=alloc-1"), "{first}");
    assert!(first.contains("pmix.alloc.ncpus=Uint64(1)"), "{first}");
    // All of them while one is held: refused, with the reason.
    let all = results.next().unwrap();
    assert!(all.starts_with("[0] ALLOC_RESULT -29 "), "{all}");
    assert!(all.contains("fastpmix.reason="), "{all}");
    // Released by its request id.
    assert!(results.next().unwrap().starts_with("[0] ALLOC_RESULT 0 "));
    // Other nodes: this host has one.
    assert!(!results.next().unwrap().starts_with("[0] ALLOC_RESULT 0 "));
}

#[test]
fn default_host_warns_the_holder_before_taking_an_expired_allocation_back() {
    let (code, out, err) = job(
        1,
        "WATCH -3002; ALLOC 1 pmix.alloc.ncpus=u64:1 pmix.alloc.time=u32:2; \
         AWAIT -3002 2; FINALIZE",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        line(&out, "[0] ALLOC_RESULT").starts_with("[0] ALLOC_RESULT 0 "),
        "{out}"
    );
    assert_eq!(
        line(&out, "[0] AWAITED"),
        "[0] AWAITED -3002 2",
        "{out}\n{err}"
    );
    assert!(err.contains("allocation alloc-1 of"), "{err}");
    assert!(err.contains("expired"), "{err}");
}

#[test]
fn default_host_writes_job_records_and_refuses_email() {
    let (code, out, err) = job(
        1,
        "LOG pmix.log.jrec=s:step~1~done; \
         LOG pmix.log.email=infos:pmix.log.emaddr=s:a@b|pmix.log.msg=s:x; FINALIZE",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let mut logs = out.lines().filter(|l| l.starts_with("[0] LOG_RESULT"));
    assert!(
        logs.next().unwrap().starts_with("[0] LOG_RESULT 0"),
        "{out}"
    );
    assert!(
        logs.next().unwrap().starts_with("[0] LOG_RESULT -47"),
        "{out}"
    );
    let path = err
        .lines()
        .find_map(|l| l.strip_prefix("[fastpmix] job records (PMIX_LOG_JOB_RECORD) go to "))
        .expect("the launcher announces the job-record file");
    let text = std::fs::read_to_string(path).expect("job record file");
    let _ = std::fs::remove_file(path);
    assert!(text.contains("\t0\tstep 1 done"), "{text:?}");
}

#[test]
fn default_host_terminates_a_stalled_process_unless_it_asked_for_app_control() {
    // No beats after the monitor starts: the alert, then SIGTERM.
    let (code, out, err) = job(
        1,
        "MONITOR pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1; AWAIT -1 1",
    );
    assert_eq!(code, 128 + libc::SIGTERM, "{out}\n{err}");
    assert!(err.contains("stalled"), "{err}");
}

#[test]
fn pmix_abort_prints_the_message_and_ends_the_job_with_its_status() {
    let (code, out, err) = job(2, "PING; PMIX_ABORT 7 giving~up -; AWAIT -1 1");
    assert_eq!(code, 7, "{out}\n{err}");
    assert!(
        err.contains("called PMIx_Abort (status 7): giving up"),
        "{err}"
    );
    // The caller is among the targets: its call does not return.
    assert!(!out.contains("ABORT_RESULT"), "{out}");
}
