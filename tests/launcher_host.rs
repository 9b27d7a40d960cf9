//! The launcher's built-in default host (`fastpmix run`), driven by
//! real client processes: this test binary re-executed under the launcher
//! with a command script (`tests/procs`, `FASTPMIX_TEST_SCRIPT`).

mod procs;

use fastpmix::{DataRange, Status};
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
    launch(&[], n, script)
}

/// `fastpmix run [opts] -n <n>` over this binary's client with `script`:
/// its status, stdout and stderr.
fn launch(opts: &[&str], n: u32, script: &str) -> (i32, String, String) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(BIN)
        .arg("run")
        .args(opts)
        .args(["-n", &n.to_string(), "--"])
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
    // Its private directory stays while it holds records.
    let _ = std::fs::remove_dir(std::path::Path::new(path).parent().unwrap());
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

// ---------------------------------------------------------------------------
// Allocation rules end to end (JOB-8, JOB-10, JOB-12, JOB-13): client
// processes call `Client::allocate` under `fastpmix run`, whose built-in host
// carries the requests out with its core allocator. A script is the same for
// every rank: `ON <rank>` picks the rank that runs a command, and fences
// (`FENCE @*`) order one rank's requests after another's.
// ---------------------------------------------------------------------------

/// [`launch`], then removes the job-record file the launcher announced.
fn job_with(opts: &[&str], n: u32, script: &str) -> (i32, String, String) {
    let (code, out, err) = launch(opts, n, script);
    // The job-record file the launcher announces (none is written here).
    if let Some(p) = err
        .lines()
        .find_map(|l| l.strip_prefix("[fastpmix] job records (PMIX_LOG_JOB_RECORD) go to "))
    {
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_dir(std::path::Path::new(p).parent().unwrap());
    }
    (code, out, err)
}

/// The CPUs this process (and so the launcher it starts) may run on:
/// the default host's pool, ascending.
fn pool() -> Vec<u32> {
    // SAFETY: sched_getaffinity into a zeroed set of ours; CPU_ISSET reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .map(|c| c as u32)
            .collect()
    }
}

/// `PMIX_ALLOC_CPU_LIST` as the allocator writes it.
fn cpus(c: &[u32]) -> String {
    fastpmix::job::alloc::format_cpu_list(c)
}

/// One answer printed by a client: its status and results (`key=value`,
/// values as `procs::fmt_infos` prints them).
#[derive(Debug)]
struct Answer {
    status: i32,
    results: Vec<(String, String)>,
}

impl Answer {
    /// The value of `key`; unsigned numbers (`Uint32(5)`) as their digits.
    fn get(&self, key: &str) -> Option<String> {
        let v = &self.results.iter().find(|(k, _)| k == key)?.1;
        Some(match v.split_once('(') {
            Some((t, n)) if t.starts_with("Uint") && v.ends_with(')') => {
                n.trim_end_matches(')').to_owned()
            }
            _ => v.clone(),
        })
    }

    /// [`Answer::get`] that must be there.
    fn val(&self, key: &str) -> String {
        self.get(key)
            .unwrap_or_else(|| panic!("no {key} in {self:?}"))
    }

    /// The refusal's reason (spaces restored).
    fn reason(&self) -> String {
        self.val("fastpmix.reason").replace('~', " ")
    }
}

/// Rank `rank`'s `what` lines (`ALLOC_RESULT`: `<status> <results>`;
/// `ALLOC_UNTIL_RESULT`: `<tries> <status> <results>`, tries dropped), in
/// order.
fn answers(out: &str, rank: u32, what: &str) -> Vec<Answer> {
    let prefix = format!("[{rank}] {what} ");
    out.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|l| {
            let mut f = l.splitn(3, ' ');
            if what == "ALLOC_UNTIL_RESULT" {
                f.next();
            }
            let status = f.next().unwrap().parse().unwrap();
            let rest = f.next().unwrap_or("-");
            let rest = rest.split(' ').next().unwrap_or("-");
            // Values may hold `;` (a reason does): a piece without `=`
            // goes on with the value before it.
            let mut results: Vec<(String, String)> = Vec::new();
            for piece in rest.split(';').filter(|_| rest != "-") {
                match (piece.split_once('='), results.last_mut()) {
                    (None, Some((_, v))) => {
                        v.push(';');
                        v.push_str(piece);
                    }
                    (kv, _) => {
                        let (k, v) = kv.unwrap_or((piece, ""));
                        results.push((k.to_owned(), v.to_owned()));
                    }
                }
            }
            Answer { status, results }
        })
        .collect()
}

/// The pool, or `None` (the test says why it is skipped) when it has fewer
/// than two CPUs.
fn two_cpus_or_skip(test: &str) -> Option<Vec<u32>> {
    let p = pool();
    if p.len() < 2 {
        eprintln!("{test}: skipped, it needs 2 CPUs and this process may run on {p:?}");
        return None;
    }
    Some(p)
}

/// JOB-8 through a server: `EXTEND` by `PMIX_ALLOC_ID` adds CPUs; by
/// `PMIX_ALLOC_REQ_ID` it adds time, or CPUs and time at once; an allocation
/// without a time limit cannot be extended in time (`PMIX_ERR_BAD_PARAM`);
/// an unknown id or request id is `PMIX_ERR_NOT_FOUND`, and so is another
/// holder's request id (searched among the caller's own only), which changes
/// nothing.
#[test]
fn default_host_extends_an_allocation_by_id_and_by_request_id() {
    let Some(p) = two_cpus_or_skip("JOB-8") else {
        return;
    };
    let script = "ON 0 ALLOC 1 pmix.alloc.ncpus=u64:1; \
         ON 0 ALLOC 2 pmix.alloc.id=s:alloc-1 pmix.alloc.time=u32:60; \
         ON 0 ALLOC 2 pmix.alloc.id=s:alloc-1 pmix.alloc.ncpus=u64:1; \
         ON 0 ALLOC 3 pmix.alloc.id=s:alloc-1; \
         ON 0 ALLOC 1 pmix.alloc.ncpus=u64:1 pmix.alloc.time=u32:600 pmix.alloc.reqid=s:long; \
         ON 0 ALLOC 2 pmix.alloc.reqid=s:long pmix.alloc.time=u32:60; \
         ON 0 ALLOC 2 pmix.alloc.reqid=s:long pmix.alloc.ncpus=u64:1 pmix.alloc.time=u32:30; \
         ON 0 ALLOC 2 pmix.alloc.id=s:alloc-9 pmix.alloc.time=u32:5; \
         ON 0 ALLOC 2 pmix.alloc.reqid=s:nosuch pmix.alloc.time=u32:5; \
         FENCE @*; \
         ON 1 ALLOC 2 pmix.alloc.reqid=s:long pmix.alloc.time=u32:5; \
         FENCE @*; \
         ON 0 ALLOC 2 pmix.alloc.id=s:alloc-2 pmix.alloc.time=u32:1; \
         FINALIZE";
    let (code, out, err) = job(2, script);
    assert_eq!(code, 0, "{out}\n{err}");
    let r0 = answers(&out, 0, "ALLOC_RESULT");
    assert_eq!(r0.len(), 10, "{out}\n{err}");
    let (first, both) = (cpus(&p[..1]), cpus(&p[..2]));

    // A NEW allocation without a time limit.
    assert_eq!(r0[0].status, 0, "{:?}", r0[0]);
    assert_eq!(r0[0].val("pmix.alloc.id"), "alloc-1");
    assert_eq!(r0[0].val("pmix.alloc.cpulist"), first);
    assert_eq!(r0[0].get("pmix.alloc.time"), None, "{:?}", r0[0]);
    // ... cannot be extended in time.
    assert_eq!(r0[1].status, Status::ERR_BAD_PARAM.0, "{:?}", r0[1]);
    assert!(r0[1].reason().contains("no time limit"), "{:?}", r0[1]);
    // By PMIX_ALLOC_ID: one CPU more (the refusal changed nothing).
    assert_eq!(r0[2].status, 0, "{:?}", r0[2]);
    assert_eq!(r0[2].val("pmix.alloc.id"), "alloc-1");
    assert_eq!(r0[2].val("pmix.alloc.ncpus"), "2");
    assert_eq!(r0[2].val("pmix.alloc.cpulist"), both);
    assert_eq!(r0[2].get("pmix.alloc.time"), None, "{:?}", r0[2]);
    assert_eq!(r0[3].status, 0, "{:?}", r0[3]);
    assert_eq!(r0[3].val("pmix.alloc.ncpus"), "0", "ended: {:?}", r0[3]);

    // A NEW allocation of 600 s with a request id.
    assert_eq!(r0[4].status, 0, "{:?}", r0[4]);
    assert_eq!(r0[4].val("pmix.alloc.id"), "alloc-2");
    assert_eq!(r0[4].val("pmix.alloc.time"), "600");
    assert_eq!(r0[4].val("pmix.alloc.cpulist"), first);
    // By PMIX_ALLOC_REQ_ID: 60 s more, the same CPU.
    assert_eq!(r0[5].status, 0, "{:?}", r0[5]);
    assert_eq!(r0[5].val("pmix.alloc.id"), "alloc-2");
    assert_eq!(r0[5].val("pmix.alloc.time"), "660");
    assert_eq!(r0[5].val("pmix.alloc.cpulist"), first);
    assert_eq!(r0[5].val("pmix.alloc.reqid"), "long");
    // CPUs and time at once.
    assert_eq!(r0[6].status, 0, "{:?}", r0[6]);
    assert_eq!(r0[6].val("pmix.alloc.id"), "alloc-2");
    assert_eq!(r0[6].val("pmix.alloc.time"), "690");
    assert_eq!(r0[6].val("pmix.alloc.ncpus"), "2");
    assert_eq!(r0[6].val("pmix.alloc.cpulist"), both);
    // Unknown ids.
    assert_eq!(r0[7].status, Status::ERR_NOT_FOUND.0, "{:?}", r0[7]);
    assert!(r0[7].reason().contains("alloc-9"), "{:?}", r0[7]);
    assert_eq!(r0[8].status, Status::ERR_NOT_FOUND.0, "{:?}", r0[8]);
    assert!(r0[8].reason().contains("nosuch"), "{:?}", r0[8]);

    // Rank 1 names rank 0's request id: not among its own.
    let r1 = answers(&out, 1, "ALLOC_RESULT");
    assert_eq!(r1.len(), 1, "{out}\n{err}");
    assert_eq!(r1[0].status, Status::ERR_NOT_FOUND.0, "{:?}", r1[0]);
    assert!(
        r1[0].reason().contains("no allocation with request id"),
        "{:?}",
        r1[0]
    );
    // ... and changed nothing: 690 s + 1.
    assert_eq!(r0[9].status, 0, "{:?}", r0[9]);
    assert_eq!(r0[9].val("pmix.alloc.time"), "691");
    assert_eq!(r0[9].val("pmix.alloc.cpulist"), both);
}

/// JOB-10 through a server: `RELEASE` with `PMIX_ALLOC_TIME` lends CPUs,
/// which another client is then granted; `REAQUIRE` is all or nothing
/// (`PMIX_ERR_OUT_OF_RESOURCE` while they are held), takes back the same
/// CPUs once they are free, or other free CPUs when the lent ones are held;
/// with nothing lent it is `PMIX_ERR_BAD_PARAM`. When a loan ends the host
/// reacquires by itself: the lent CPU is held again (a release of it, refused
/// until then, succeeds) and the launcher says so.
#[test]
fn default_host_lends_cpus_to_others_and_reacquires_them() {
    let Some(p) = two_cpus_or_skip("JOB-10") else {
        return;
    };
    let n = p.len();
    let (all, low, rest, last) = (cpus(&p), cpus(&p[..1]), cpus(&p[1..]), cpus(&p[n - 1..]));
    let script = format!(
        "ON 0 ALLOC 1 pmix.alloc.ncpus=u64:{n}; \
         ON 0 ALLOC 3 pmix.alloc.id=s:alloc-1 pmix.alloc.ncpus=u64:{m} pmix.alloc.time=u32:600; \
         FENCE @*; \
         ON 1 ALLOC 1 pmix.alloc.ncpus=u64:{m}; \
         FENCE @*; \
         ON 0 ALLOC 4 pmix.alloc.id=s:alloc-1; \
         FENCE @*; \
         ON 1 ALLOC 3 pmix.alloc.id=s:alloc-2; \
         FENCE @*; \
         ON 0 ALLOC 4 pmix.alloc.id=s:alloc-1; \
         ON 0 ALLOC 4 pmix.alloc.id=s:alloc-1; \
         ON 0 ALLOC 3 pmix.alloc.id=s:alloc-1 pmix.alloc.cpulist=s:{last}; \
         ON 0 ALLOC 3 pmix.alloc.id=s:alloc-1 pmix.alloc.cpulist=s:{low} pmix.alloc.time=u32:600; \
         FENCE @*; \
         ON 1 ALLOC 1 pmix.alloc.cpulist=s:{low}; \
         FENCE @*; \
         ON 0 ALLOC 4 pmix.alloc.id=s:alloc-1; \
         ON 0 ALLOC 3 pmix.alloc.id=s:alloc-1 pmix.alloc.cpulist=s:{last} pmix.alloc.time=u32:1; \
         ON 0 ALLOC_UNTIL 0 3 pmix.alloc.id=s:alloc-1 pmix.alloc.cpulist=s:{last}; \
         FENCE @*; \
         FINALIZE",
        m = n - 1
    );
    let (code, out, err) = job_with(&["--trace-events"], 2, &script);
    assert_eq!(code, 0, "{out}\n{err}");
    let r0 = answers(&out, 0, "ALLOC_RESULT");
    let r1 = answers(&out, 1, "ALLOC_RESULT");
    assert_eq!((r0.len(), r1.len()), (9, 3), "{out}\n{err}");

    // Rank 0 holds every CPU and lends all but the lowest for 600 s.
    assert_eq!(r0[0].status, 0, "{:?}", r0[0]);
    assert_eq!(r0[0].val("pmix.alloc.cpulist"), all);
    assert_eq!(r0[1].status, 0, "{:?}", r0[1]);
    assert_eq!(r0[1].val("pmix.alloc.id"), "alloc-1");
    assert_eq!(r0[1].val("pmix.alloc.cpulist"), low, "{:?}", r0[1]);
    // The lent CPUs are free: rank 1 gets them.
    assert_eq!(r1[0].status, 0, "{:?}", r1[0]);
    assert_eq!(r1[0].val("pmix.alloc.id"), "alloc-2");
    assert_eq!(r1[0].val("pmix.alloc.cpulist"), rest);
    // All or nothing: none of them is free.
    assert_eq!(r0[2].status, Status::ERR_OUT_OF_RESOURCE.0, "{:?}", r0[2]);
    let why = format!("{} lent CPUs to take back, 0 free", n - 1);
    assert!(r0[2].reason().contains(&why), "{:?}", r0[2]);
    // Rank 1 lets them go: rank 0 takes the same ones back.
    assert_eq!(r1[1].status, 0, "{:?}", r1[1]);
    assert_eq!(r1[1].val("pmix.alloc.ncpus"), "0", "{:?}", r1[1]);
    assert_eq!(r0[3].status, 0, "{:?}", r0[3]);
    assert_eq!(r0[3].val("pmix.alloc.cpulist"), all, "{:?}", r0[3]);
    assert_eq!(r0[4].status, Status::ERR_BAD_PARAM.0, "{:?}", r0[4]);
    assert!(r0[4].reason().contains("no lent CPUs"), "{:?}", r0[4]);

    // The highest CPU given back for good, the lowest lent and granted to
    // rank 1: the reacquire takes the free one instead.
    assert_eq!(r0[5].status, 0, "{:?}", r0[5]);
    assert_eq!(r0[5].val("pmix.alloc.cpulist"), cpus(&p[..n - 1]));
    assert_eq!(r0[6].status, 0, "{:?}", r0[6]);
    assert_eq!(r0[6].val("pmix.alloc.cpulist"), cpus(&p[1..n - 1]));
    assert_eq!(r1[2].status, 0, "{:?}", r1[2]);
    assert_eq!(r1[2].val("pmix.alloc.id"), "alloc-3");
    assert_eq!(r1[2].val("pmix.alloc.cpulist"), low);
    assert_eq!(r0[7].status, 0, "{:?}", r0[7]);
    assert_eq!(r0[7].val("pmix.alloc.cpulist"), rest, "{:?}", r0[7]);

    // A 1 s loan of the highest CPU ends and the host takes it back: its
    // release is refused ("not held") until then, and then granted.
    assert_eq!(r0[8].status, 0, "{:?}", r0[8]);
    assert_eq!(r0[8].val("pmix.alloc.cpulist"), cpus(&p[1..n - 1]));
    let until = answers(&out, 0, "ALLOC_UNTIL_RESULT");
    assert_eq!(until.len(), 1, "{out}\n{err}");
    assert_eq!(until[0].status, 0, "{:?}\n{err}", until[0]);
    assert_eq!(
        until[0].val("pmix.alloc.cpulist"),
        cpus(&p[1..n - 1]),
        "{:?}",
        until[0]
    );
    let back = format!("ended: CPUs [{}] back", p[n - 1]);
    assert!(
        err.lines()
            .any(|l| l.starts_with("[fastpmix] loan of alloc-1 (") && l.ends_with(&back)),
        "{err}"
    );
}

/// JOB-10's failure at a loan's end, as the holder hears it: rank 0 lends
/// its one CPU for 1 s, rank 1 takes every CPU, and when the loan ends the
/// host cannot take it back. Rank 0 gets `PMIX_ERR_OUT_OF_RESOURCE` (-29)
/// from the server, to itself alone, with `PMIX_ALLOC_ID` and the reason;
/// rank 1, which watches the code too, does not. Until 2026-11-27 the
/// launcher said so on its stderr only.
#[test]
fn default_host_tells_the_holder_when_a_loan_ends_and_its_cpus_cannot_come_back() {
    let p = pool();
    let script = format!(
        "WATCH_RANGE -29; \
         FENCE @*; \
         ON 0 ALLOC 1 pmix.alloc.ncpus=u64:1; \
         ON 0 ALLOC 3 pmix.alloc.id=s:alloc-1 pmix.alloc.ncpus=u64:1 pmix.alloc.time=u32:1; \
         FENCE @*; \
         ON 1 ALLOC 1 pmix.alloc.ncpus=u64:{n}; \
         FENCE @*; \
         ON 0 AWAIT -29 1; \
         FENCE @*; \
         PING; \
         FINALIZE",
        n = p.len()
    );
    let (code, out, err) = job(2, &script);
    assert_eq!(code, 0, "{out}\n{err}");
    let r0 = answers(&out, 0, "ALLOC_RESULT");
    let r1 = answers(&out, 1, "ALLOC_RESULT");
    assert_eq!((r0.len(), r1.len()), (2, 1), "{out}\n{err}");
    assert!(r0.iter().chain(&r1).all(|r| r.status == 0), "{out}\n{err}");
    assert_eq!(r1[0].val("pmix.alloc.cpulist"), cpus(&p), "{:?}", r1[0]);
    assert_eq!(
        line(&out, "[0] AWAITED"),
        "[0] AWAITED -29 1",
        "{out}\n{err}"
    );
    let ev = line(&out, "[0] CAUGHT_RANGE ").replace('~', " ");
    assert!(
        ev.starts_with("[0] CAUGHT_RANGE code=-29 source=fastpmix-server-"),
        "{ev}"
    );
    assert!(
        ev.contains(&format!(" range={} ", DataRange::CUSTOM.0)),
        "{ev}"
    );
    assert!(ev.contains("pmix.alloc.id=alloc-1"), "{ev}");
    assert!(
        ev.contains("loan ended but: 1 lent CPUs to take back, 0 free"),
        "{ev}"
    );
    assert!(
        !out.lines()
            .any(|l| l.starts_with("[1] ") && l.contains("code=-29")),
        "the holder alone: {out}"
    );
}

/// JOB-12 as the client receives it: two `ALLOC_EXPIRING` (-3002) events
/// for a 2 s allocation, from the server, range CUSTOM to the holder alone
/// (`PMIX_EVENT_CUSTOM_RANGE` = the holder), with `PMIX_ALLOC_ID` and
/// `fastpmix.alloc.remaining` 1, then 0; by then the allocation is gone
/// (`EXTEND`: `PMIX_ERR_NOT_FOUND`) and its CPU free. Rank 1, which
/// watches the code too, gets neither event.
#[test]
fn default_host_expiry_events_carry_the_allocation_and_the_seconds_left() {
    let p = pool();
    let script = format!(
        "WATCH_RANGE -3002; \
         FENCE @*; \
         ON 0 ALLOC 1 pmix.alloc.ncpus=u64:1 pmix.alloc.time=u32:2; \
         ON 0 AWAIT -3002 2; \
         ON 0 ALLOC 2 pmix.alloc.id=s:alloc-1 pmix.alloc.time=u32:5; \
         ON 0 ALLOC 1 pmix.alloc.ncpus=u64:{n}; \
         FENCE @*; \
         PING; \
         FINALIZE",
        n = p.len()
    );
    let (code, out, err) = job(2, &script);
    assert_eq!(code, 0, "{out}\n{err}");
    let r0 = answers(&out, 0, "ALLOC_RESULT");
    assert_eq!(r0.len(), 3, "{out}\n{err}");
    assert_eq!(r0[0].status, 0, "{:?}", r0[0]);
    assert_eq!(r0[0].val("pmix.alloc.id"), "alloc-1");
    assert_eq!(
        line(&out, "[0] AWAITED"),
        "[0] AWAITED -3002 2",
        "{out}\n{err}"
    );

    // The holder's name, as the job's processes are named.
    let ns = line(&out, "[0] CAUGHT_RANGE ")
        .split([' ', ';'])
        .find_map(|f| f.strip_prefix("pmix.evproc="))
        .and_then(|p| p.rsplit_once(':'))
        .map(|(ns, _)| ns.to_owned())
        .unwrap_or_else(|| panic!("an affected proc:\n{out}"));
    assert!(ns.starts_with("fastpmix-job-"), "{ns}");
    let holder = format!("{ns}:0");
    let events: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("[0] CAUGHT_RANGE "))
        .collect();
    assert_eq!(events.len(), 2, "{out}");
    for (ev, left) in events.iter().zip(["1", "0"]) {
        let f: Vec<&str> = ev.split(' ').collect();
        assert_eq!(f[0], "code=-3002", "{ev}");
        assert!(
            f[1].starts_with("source=fastpmix-server-"),
            "from the server: {ev}"
        );
        assert_eq!(f[2], format!("range={}", DataRange::CUSTOM.0), "{ev}");
        let infos: Vec<(&str, &str)> = f[3]
            .split(';')
            .map(|kv| kv.split_once('=').unwrap())
            .collect();
        let get = |k: &str| {
            infos
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| *v)
                .unwrap_or_else(|| panic!("no {k} in {ev}"))
        };
        assert_eq!(get("pmix.alloc.id"), "alloc-1", "{ev}");
        assert_eq!(
            get("fastpmix.alloc.remaining"),
            format!("Uint32({left})"),
            "{ev}"
        );
        assert_eq!(get("pmix.evproc"), holder, "{ev}");
        // `DataArray(Proc([Proc{nspace:"…",rank:Rank(0)}]))`
        let range = get("pmix.evrange");
        assert!(
            range.matches("Proc{").count() == 1
                && range.contains(&format!("{{nspace:\"{ns}\",rank:Rank(0)}}")),
            "the holder alone: {ev}"
        );
    }

    // Expired: the allocation is gone and its CPU free again.
    assert_eq!(r0[1].status, Status::ERR_NOT_FOUND.0, "{:?}", r0[1]);
    assert_eq!(r0[2].status, 0, "{:?}", r0[2]);
    assert_eq!(r0[2].val("pmix.alloc.cpulist"), cpus(&p));
    // Rank 1 watched the code and got nothing.
    assert!(
        !out.lines()
            .any(|l| l.starts_with("[1] ") && l.contains("code=-3002")),
        "{out}"
    );
}

/// JOB-13, the end of a holder: rank 0 holds every CPU in two allocations
/// (one with a time limit); rank 1 is refused one CPU. Rank 0 then ends
/// (`end`: `FINALIZE` or `KILL_SELF`); once rank 1 got the launcher's
/// event about it (`code`), it is granted every CPU, the same list (retried
/// until the server noticed the end: that is not ordered with the
/// launcher's event). The launcher's trace names the end and the CPUs freed.
fn a_holder_that_ends_releases_everything(
    opts: &[&str],
    end: &str,
    code: i32,
) -> Option<(i32, String)> {
    let p = two_cpus_or_skip("JOB-13")?;
    let n = p.len();
    let script = format!(
        "WATCH {code}; \
         ON 0 ALLOC 1 pmix.alloc.ncpus=u64:1; \
         ON 0 ALLOC 1 pmix.alloc.ncpus=u64:{m} pmix.alloc.time=u32:600; \
         FENCE @*; \
         ON 1 ALLOC 1 pmix.alloc.ncpus=u64:1; \
         FENCE @*; \
         ON 0 {end}; \
         ON 1 AWAIT {code} 1; \
         ON 1 ALLOC_UNTIL 0 1 pmix.alloc.ncpus=u64:{n}; \
         ON 1 FINALIZE",
        m = n - 1
    );
    let mut all_opts = vec!["--trace-events"];
    all_opts.extend_from_slice(opts);
    let (status, out, err) = job_with(&all_opts, 2, &script);
    let r0 = answers(&out, 0, "ALLOC_RESULT");
    assert_eq!(r0.len(), 2, "{out}\n{err}");
    assert_eq!(r0[0].status, 0, "{:?}", r0[0]);
    assert_eq!(r0[0].val("pmix.alloc.cpulist"), cpus(&p[..1]));
    assert_eq!(r0[1].status, 0, "{:?}", r0[1]);
    assert_eq!(r0[1].val("pmix.alloc.cpulist"), cpus(&p[1..]));
    // While rank 0 holds them: refused.
    let r1 = answers(&out, 1, "ALLOC_RESULT");
    assert_eq!(r1.len(), 1, "{out}\n{err}");
    assert_eq!(r1[0].status, Status::ERR_OUT_OF_RESOURCE.0, "{:?}", r1[0]);
    let why = r1[0].reason();
    assert!(
        why.contains("held by alloc-1") && why.contains("held by alloc-2"),
        "{why}"
    );
    // After rank 0's end: every CPU.
    assert_eq!(
        line(&out, "[1] AWAITED"),
        format!("[1] AWAITED {code} 1"),
        "{out}\n{err}"
    );
    let got = answers(&out, 1, "ALLOC_UNTIL_RESULT");
    assert_eq!(got.len(), 1, "{out}\n{err}");
    assert_eq!(got[0].status, 0, "{:?}\n{err}", got[0]);
    assert_eq!(got[0].val("pmix.alloc.id"), "alloc-3");
    assert_eq!(got[0].val("pmix.alloc.cpulist"), cpus(&p));
    // The launcher's host was told, and released both allocations.
    let freed = format!(":0 ended holding CPUs {p:?}: released");
    assert!(
        err.lines()
            .any(|l| l.starts_with("[fastpmix] host: fastpmix-job-") && l.ends_with(&freed)),
        "{err}"
    );
    Some((status, err))
}

#[test]
fn default_host_releases_everything_a_finalized_holder_held() {
    let code = Status::EVENT_PROC_TERMINATED.0;
    let Some((status, err)) = a_holder_that_ends_releases_everything(&[], "FINALIZE", code) else {
        return;
    };
    assert_eq!(status, 0, "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("[fastpmix] host: fastpmix-job-") && l.ends_with(":0 finalized")),
        "{err}"
    );
}

#[test]
fn default_host_releases_everything_a_killed_holder_held() {
    let code = Status::ERR_PROC_ABORTED.0;
    let Some((status, err)) =
        a_holder_that_ends_releases_everything(&["--keep-going"], "KILL_SELF", code)
    else {
        return;
    };
    assert_eq!(status, 128 + libc::SIGKILL, "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("[fastpmix] host: fastpmix-job-") && l.ends_with(":0 lost")),
        "{err}"
    );
}
