//! `PMIx_Get` of the job information a launcher registers
//! (`Client::get`, `server::jobinfo`), read from the client's own copy.
//! Real processes: `fastpmix run` over this binary's scripted client, or a
//! server embedded in the test (`tests/procs`) registering what the
//! launcher registers.

mod procs;

use fastpmix::server::{jobinfo, regex, Server, MAX_JOB_INFO};
use fastpmix::types::attrs;
use fastpmix::types::DataArray;
use fastpmix::{Info, Nspace, Proc, Status, Value};
use procs::{ClientProc, ServerProc, ROLE_ENV, SCRIPT_ENV};
use std::process::{Command, Stdio};

const CHILD: &str = "child_client";
const SERVER_CHILD: &str = "child_server";
const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");
const NOT_FOUND: i32 = Status::ERR_NOT_FOUND.0;
const BAD: i32 = Status::ERR_BAD_PARAM.0;

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

fn hostname() -> String {
    nix::unistd::gethostname()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn tmpdir() -> String {
    std::env::temp_dir().display().to_string()
}

/// A server whose namespace `ns` has the launcher's job information for
/// `n` ranks (all registered), with clients running for `ranks`.
fn node(ns: &str, n: u32, ranks: &[u32]) -> (Server, Vec<ClientProc>) {
    let server = Server::builder().start().unwrap();
    let nspace = Nspace::new(ns).unwrap();
    let info = jobinfo::single_node(&nspace, n, &hostname(), &tmpdir()).unwrap();
    server.register_nspace(&nspace, info).unwrap();
    let (uid, gid) = procs::ids();
    for r in 0..n {
        server
            .register_client(&Proc::new(ns, r).unwrap(), uid, gid)
            .unwrap();
    }
    let clients = ranks
        .iter()
        .map(|r| {
            let p = Proc::new(ns, *r).unwrap();
            ClientProc::spawn(CHILD, p, &server.setup_fork(&p).unwrap())
        })
        .collect();
    (server, clients)
}

/// `GET <proc> <key>` → (status, printed value).
fn get(c: &mut ClientProc, proc: &str, key: &str) -> (i32, String) {
    c.send(&format!("GET {proc} {key}"));
    let l = c.expect("GET_RESULT ");
    let mut w = l.splitn(3, ' ').skip(1);
    let s = w.next().unwrap().parse().unwrap();
    (s, w.next().unwrap().to_owned())
}

#[test]
fn launcher_registers_every_key_a_pmix_program_reads_for_every_rank() {
    // (proc, key) asked by every rank, in this order.
    let asks = [
        ("@me", "pmix.rank"),
        ("@me", "pmix.nspace"),
        ("@me", "pmix.lrank"),
        ("@me", "pmix.nrank"),
        ("@me", "pmix.appnum"),
        ("@me", "pmix.hname"),
        ("@me", "pmix.nodeid"),
        ("@*", "pmix.jobid"),
        ("@*", "pmix.job.size"),
        ("@*", "pmix.univ.size"),
        ("@*", "pmix.local.size"),
        ("@*", "pmix.max.size"),
        ("@*", "pmix.app.size"),
        ("@*", "pmix.num.nodes"),
        ("@*", "pmix.nodeid"),
        ("@*", "pmix.hname"),
        ("@*", "pmix.lpeers"),
        ("@*", "pmix.nmap"),
        ("@*", "pmix.pmap"),
        ("@*", "pmix.tmpdir"),
    ];
    let script: Vec<String> = asks
        .iter()
        .map(|(p, k)| format!("GET {p} {k}"))
        .chain(["FINALIZE".to_owned()])
        .collect();
    let exe = std::env::current_exe().unwrap();
    let child = Command::new(BIN)
        .args(["run", "-n", "3", "--"])
        .arg(exe)
        .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "client")
        .env(SCRIPT_ENV, script.join("; "))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fastpmix");
    // The launcher names the job after its own pid.
    let ns = format!("fastpmix-job-{}", child.id());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let host = hostname();
    for r in 0..3u32 {
        let want = [
            format!("rank:{r}"),
            format!("s:{ns}"),
            format!("u16:{r}"),
            format!("u16:{r}"),
            "u32:0".into(),
            format!("s:{host}"),
            "u32:0".into(),
            format!("s:{ns}"),
            "u32:3".into(),
            "u32:3".into(),
            "u32:3".into(),
            "u32:3".into(),
            "u32:3".into(),
            "u32:1".into(),
            "u32:0".into(),
            format!("s:{host}"),
            "s:0,1,2".into(),
            format!("s:{}", regex::generate_regex(&host)),
            format!("s:{}", regex::generate_ppn("0,1,2")),
            format!("s:{}", tmpdir()),
        ];
        let prefix = format!("[{r}] GET_RESULT ");
        let got: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .collect();
        assert_eq!(got.len(), asks.len(), "rank {r}\n{stdout}\n{stderr}");
        for ((ask, want), got) in asks.iter().zip(&want).zip(&got) {
            assert_eq!(*got, format!("0 {want}"), "rank {r} asked {ask:?}");
        }
    }
    // The maps name this node and every rank on it.
    let nmap = regex::generate_regex(&host);
    assert_eq!(regex::parse_node_map(&nmap), Ok(vec![host]));
    let pmap = regex::generate_ppn("0,1,2");
    assert_eq!(regex::parse_proc_map(&pmap), Ok(vec![vec![0, 1, 2]]));
}

#[test]
fn get_for_another_rank_reads_that_ranks_proc_data_then_the_job_level() {
    let (_s, mut c) = node("ji-other", 3, &[0]);
    let c = &mut c[0];
    assert_eq!(get(c, "@2", "pmix.lrank"), (0, "u16:2".into()));
    assert_eq!(get(c, "@1", "pmix.nrank"), (0, "u16:1".into()));
    assert_eq!(get(c, "@2", "pmix.rank"), (0, "rank:2".into()));
    assert_eq!(get(c, "ji-other:1", "pmix.appnum"), (0, "u32:0".into()));
    // Not in rank 1's data: its job's.
    assert_eq!(get(c, "@1", "pmix.job.size"), (0, "u32:3".into()));
}

#[test]
fn get_with_wildcard_reads_job_level_only() {
    let (_s, mut c) = node("ji-wild", 3, &[1]);
    let c = &mut c[0];
    assert_eq!(get(c, "@*", "pmix.job.size"), (0, "u32:3".into()));
    assert_eq!(get(c, "@undef", "pmix.job.size"), (0, "u32:3".into()));
    // A rank the job does not have: no hostname, no local size.
    assert_eq!(get(c, "@7", "pmix.hname").0, NOT_FOUND);
    assert_eq!(get(c, "@7", "pmix.local.size").0, NOT_FOUND);
    // Per-process keys have no job-level value, nor do the arrays.
    assert_eq!(get(c, "@*", "pmix.lrank").0, NOT_FOUND);
    assert_eq!(get(c, "@*", "pmix.rank").0, NOT_FOUND);
    assert_eq!(get(c, "@*", "pmix.pdata").0, NOT_FOUND);
}

#[test]
fn get_of_my_rank_and_namespace_needs_no_registered_data() {
    // spawn_clients registers the namespace without any job information.
    let server = Server::builder().start().unwrap();
    let mut c = procs::spawn_clients(&server, CHILD, &[("ji-bare", 2)]);
    let c = &mut c[1];
    assert_eq!(get(c, "@me", "pmix.rank"), (0, "rank:1".into()));
    assert_eq!(get(c, "@me", "pmix.nspace"), (0, "s:ji-bare".into()));
    assert_eq!(get(c, "@*", "pmix.nspace"), (0, "s:ji-bare".into()));
    assert_eq!(get(c, "@*", "pmix.job.size").0, NOT_FOUND);
    assert_eq!(get(c, "@0", "pmix.rank").0, NOT_FOUND);
}

#[test]
fn get_unknown_key_or_other_namespace_is_not_found() {
    let (_s, mut c) = node("ji-nf", 2, &[0]);
    let c = &mut c[0];
    assert_eq!(get(c, "@*", "vendor.no.such.key"), (NOT_FOUND, "-".into()));
    assert_eq!(get(c, "@me", "vendor.no.such.key"), (NOT_FOUND, "-".into()));
    // A namespace this node does not know, even for keys every job has
    // (data_exchange checks one the node knows).
    assert_eq!(get(c, "ji-elsewhere:0", "pmix.job.size").0, NOT_FOUND);
    assert_eq!(get(c, "ji-elsewhere:*", "pmix.nspace").0, NOT_FOUND);
}

#[test]
fn get_empty_or_oversized_key_is_bad_param() {
    let (_s, mut c) = node("ji-key", 1, &[0]);
    let c = &mut c[0];
    assert_eq!(get(c, "@me", "EMPTY"), (BAD, "-".into()));
    assert_eq!(get(c, "@me", "LONG512"), (BAD, "-".into()));
    // PMIX_MAX_KEYLEN itself is a key: merely unknown.
    assert_eq!(get(c, "@me", "LONG511").0, NOT_FOUND);
}

#[test]
fn get_needs_no_round_trip_and_fails_only_after_finalize() {
    let p = Proc::new("ji-local", 0).unwrap();
    let mut server = ServerProc::spawn(SERVER_CHILD, &[p]);
    let mut c = ClientProc::spawn(CHILD, p, &server.env_of(&p));
    server.kill();
    c.expect(&format!("EVENT code={} ", Status::ERR_LOST_CONNECTION.0));
    // The server is gone; the data is this process's own.
    assert_eq!(get(&mut c, "@me", "pmix.rank"), (0, "rank:0".into()));
    c.send("FINALIZE_STAY");
    c.expect("FINALIZED_STAYING ");
    assert_eq!(get(&mut c, "@me", "pmix.rank").0, Status::ERR_INIT.0);
}

#[test]
fn job_info_of_64_ranks_reaches_every_client() {
    let (_s, mut c) = node("ji-64", 64, &[63]);
    let c = &mut c[0];
    assert_eq!(get(c, "@me", "pmix.lrank"), (0, "u16:63".into()));
    assert_eq!(get(c, "@0", "pmix.lrank"), (0, "u16:0".into()));
    assert_eq!(get(c, "@*", "pmix.job.size"), (0, "u32:64".into()));
}

#[test]
fn job_info_a_welcome_cannot_carry_is_refused_at_registration() {
    let server = Server::builder().start().unwrap();
    let ns = Nspace::new("ji-big").unwrap();
    let host = hostname();
    let fits = |n: u32| {
        let info = jobinfo::single_node(&ns, n, &host, &tmpdir()).unwrap();
        let r = server.register_nspace(&ns, info);
        if r.is_ok() {
            server.deregister_nspace(&ns).unwrap();
        }
        r
    };
    assert_eq!(fits(20_000), Err(Status::ERR_BAD_PARAM));
    // The largest job accepted: its last client still gets its Welcome.
    let (mut lo, mut hi) = (64u32, 20_000u32);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid).is_ok() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    eprintln!("largest single-node job info within {MAX_JOB_INFO} bytes: {lo} ranks");
    drop(server);
    let (_s, mut c) = node("ji-big", lo, &[lo - 1]);
    let want = format!("u16:{}", lo - 1);
    assert_eq!(get(&mut c[0], "@me", "pmix.lrank"), (0, want));
}

/// Job information registered the way Slurm 22.05 registers it for this
/// node "n1" of two ("n2" holds ranks 2 and 3): maps as strings from our
/// own `generate_regex`/`generate_ppn`, `PMIX_RANK`/`PMIX_APPNUM` as `int`,
/// every rank's `PMIX_NODEID` this node's, local ranks only for local
/// ranks, no `PMIX_NUM_NODES`, no node list.
fn slurm_like(ns: &Nspace) -> Vec<Info> {
    let mut info = vec![
        Info::new(attrs::PMIX_NSPACE, ns.as_str()),
        Info::new(attrs::PMIX_JOBID, "slurm.17.0"),
        Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(4)),
        Info::new(attrs::PMIX_LOCAL_SIZE, Value::Int(2)),
        Info::new(attrs::PMIX_NODEID, Value::Uint32(0)),
        Info::new(attrs::PMIX_HOSTNAME, "n1"),
        Info::new(attrs::PMIX_LOCAL_PEERS, "0,1"),
        Info::new(attrs::PMIX_NODE_MAP, regex::generate_regex("n1,n2")),
        Info::new(attrs::PMIX_PROC_MAP, regex::generate_ppn("0,1;2,3")),
        Info::new(attrs::PMIX_TMPDIR, tmpdir()),
    ];
    for r in 0..4i32 {
        let mut d = vec![
            Info::new(attrs::PMIX_RANK, Value::Int(r)),
            Info::new(attrs::PMIX_APPNUM, Value::Int(0)),
            Info::new(attrs::PMIX_NODEID, Value::Uint32(0)),
        ];
        if r < 2 {
            d.push(Info::new(attrs::PMIX_LOCAL_RANK, Value::Uint16(r as u16)));
            d.push(Info::new(attrs::PMIX_NODE_RANK, Value::Uint16(r as u16)));
        }
        info.push(Info::new(
            attrs::PMIX_PROC_INFO_ARRAY,
            Value::DataArray(DataArray::Info(d)),
        ));
    }
    info
}

#[test]
fn keys_of_a_two_node_job_registered_with_string_maps_and_int_types() {
    let server = Server::builder().start().unwrap();
    let ns = Nspace::new("ji-slurm").unwrap();
    server.register_nspace(&ns, slurm_like(&ns)).unwrap();
    let (uid, gid) = procs::ids();
    for r in 0..2 {
        server
            .register_client(&Proc::new("ji-slurm", r).unwrap(), uid, gid)
            .unwrap();
    }
    let p = Proc::new("ji-slurm", 1).unwrap();
    let mut c = ClientProc::spawn(CHILD, p, &server.setup_fork(&p).unwrap());
    let c = &mut c;
    let want = [
        // Itself: the host's values, converted to the Standard's types.
        ("@me", "pmix.rank", "rank:1"),
        ("@me", "pmix.lrank", "u16:1"),
        ("@me", "pmix.nrank", "u16:1"),
        ("@me", "pmix.appnum", "u32:0"),
        ("@me", "pmix.nodeid", "u32:0"),
        ("@me", "pmix.hname", "s:n1"),
        ("@me", "pmix.grank", "rank:1"),
        ("@me", "pmix.apprank", "rank:1"),
        ("@me", "pmix.aldr", "rank:0"),
        ("@me", "pmix.local.size", "u32:2"),
        ("@me", "pmix.lldr", "rank:0"),
        // The job: derived from the maps where the host said nothing.
        ("@*", "pmix.num.nodes", "u32:2"),
        ("@*", "pmix.nlist", "s:n1,n2"),
        ("@*", "pmix.job.size", "u32:4"),
        ("@*", "pmix.univ.size", "u32:4"),
        ("@*", "pmix.max.size", "u32:4"),
        ("@*", "pmix.app.size", "u32:4"),
        ("@*", "pmix.job.napps", "u32:1"),
        ("@*", "pmix.local.size", "u32:2"),
        ("@*", "pmix.lpeers", "s:0,1"),
        ("@*", "pmix.lldr", "rank:0"),
        ("@*", "pmix.nodeid", "u32:0"),
        ("@*", "pmix.hname", "s:n1"),
        ("@*", "pmix.jobid", "s:slurm.17.0"),
        // A local peer.
        ("@0", "pmix.lrank", "u16:0"),
        ("@0", "pmix.nodeid", "u32:0"),
        ("@0", "pmix.hname", "s:n1"),
        // A peer on the other node: the maps' answers, never this node's.
        ("@2", "pmix.rank", "rank:2"),
        ("@2", "pmix.nodeid", "u32:1"),
        ("@2", "pmix.hname", "s:n2"),
        ("@3", "pmix.lrank", "u16:1"),
        ("@3", "pmix.nrank", "u16:1"),
        ("@3", "pmix.appnum", "u32:0"),
        ("@3", "pmix.local.size", "u32:2"),
        ("@3", "pmix.lpeers", "s:2,3"),
        ("@3", "pmix.lldr", "rank:2"),
        ("@3", "pmix.job.size", "u32:4"),
    ];
    for (proc, key, v) in want {
        assert_eq!(get(c, proc, key), (0, v.to_owned()), "{proc} {key}");
    }
    // Nothing registered and nothing to derive: not this node's value.
    assert_eq!(get(c, "@2", "pmix.cpuset").0, NOT_FOUND);
    assert_eq!(get(c, "@9", "pmix.hname").0, NOT_FOUND);
    assert_eq!(get(c, "@9", "pmix.nodeid").0, NOT_FOUND);
    // A rank the job does not have has no per-process values at all.
    assert_eq!(get(c, "@9", "pmix.appnum").0, NOT_FOUND);
    assert_eq!(get(c, "@9", "pmix.rank").0, NOT_FOUND);
    assert_eq!(get(c, "@9", "pmix.grank").0, NOT_FOUND);
}

#[test]
fn bound_ranks_get_their_cpuset_and_an_hwloc_locality_string_and_see_their_peers() {
    // `fastpmix run --bind-to core`: each rank's PMIX_CPUSET and a
    // PMIX_LOCALITY_STRING hwloc made from it (the core level names the
    // rank's core), readable by its peer too; and PMIX_NSDIR /
    // PMIX_PROCDIR, the rank's inside the namespace's.
    let cores = fastpmix::place::binding_cores().unwrap_or_default();
    if cores.len() < 2 {
        eprintln!("skipped: fewer than 2 cores in this binding");
        return;
    }
    let script = [
        "GET @me pmix.cpuset",
        "GET @me pmix.locstr",
        "GET @0 pmix.locstr",
        "GET @1 pmix.locstr",
        "GET @* pmix.nsdir",
        "GET @me pmix.pdir",
        "FINALIZE",
    ];
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(BIN)
        .args(["run", "-n", "2", "--bind-to", "core", "--"])
        .arg(exe)
        .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "client")
        .env(SCRIPT_ENV, script.join("; "))
        .output()
        .expect("run fastpmix");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let results = |r: u32| -> Vec<String> {
        let prefix = format!("[{r}] GET_RESULT ");
        stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(str::to_owned)
            .collect()
    };
    let (r0, r1) = (results(0), results(1));
    assert_eq!(r0.len(), 6, "{stdout}");
    assert_eq!(r1.len(), 6, "{stdout}");
    let cpus = |c: &[u32]| format!("0 s:{}", fastpmix::place::ranges(c));
    assert_eq!(r0[0], cpus(&cores[0]));
    assert_eq!(r1[0], cpus(&cores[1]));
    for r in [&r0, &r1] {
        // Both ranks see the same strings for both ranks.
        assert_eq!(r[2], r0[1], "{stdout}");
        assert_eq!(r[3], r1[1], "{stdout}");
        assert!(
            r[4].starts_with("0 s:/") && r[4].ends_with("/ns"),
            "{stdout}"
        );
    }
    assert!(
        r0[1].starts_with("0 s:") && r0[1].contains("CR"),
        "{stdout}"
    );
    assert_ne!(r0[1], r1[1], "two cores, two localities");
    assert!(r0[5].starts_with(&format!("{}/0", r0[4])), "{stdout}");
    assert!(r1[5].starts_with(&format!("{}/1", r1[4])), "{stdout}");
}
