//! `PMIx_Query_info` / `PMIx_Query_info_nb` from Rust (`Client::query`,
//! `server::query`): real client processes of a server embedded in the
//! test, registered the way a host of two nodes registers its job.

mod procs;

use fastpmix::server::{jobinfo, regex, Server};
use fastpmix::types::{attrs, DataArray};
use fastpmix::{Info, Nspace, Proc, Status, Value};
use procs::{ClientProc, ROLE_ENV};

const CHILD: &str = "child_client";
const NOT_FOUND: i32 = Status::ERR_NOT_FOUND.0;
const PARTIAL: i32 = Status::ERR_PARTIAL_SUCCESS.0;
const BAD: i32 = Status::ERR_BAD_PARAM.0;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

/// Namespace `q-two` (4 ranks, 0 and 1 here on "n1", 2 and 3 on "n2", maps
/// as strings) and `q-one` (2 ranks of `fastpmix run`'s job information);
/// rank 0 of `q-two` runs.
fn node() -> (Server, ClientProc) {
    let server = Server::builder().start().unwrap();
    let two = Nspace::new("q-two").unwrap();
    let mut info = vec![
        Info::new(attrs::PMIX_JOBID, "job.2"),
        Info::new(attrs::PMIX_HOSTNAME, "n1"),
        Info::new(attrs::PMIX_LOCAL_PEERS, "0,1"),
        Info::new(attrs::PMIX_NODE_MAP, regex::generate_regex("n1,n2")),
        Info::new(attrs::PMIX_PROC_MAP, regex::generate_ppn("0,1;2,3")),
    ];
    info.push(Info::new(attrs::PMIX_NODEID, Value::Uint32(0)));
    server.register_nspace(&two, info).unwrap();
    let one = Nspace::new("q-one").unwrap();
    let info = jobinfo::single_node(&one, 2, "n1", "/tmp").unwrap();
    server.register_nspace(&one, info).unwrap();
    let (uid, gid) = procs::ids();
    for r in 0..2 {
        server
            .register_client(&Proc::new("q-two", r).unwrap(), uid, gid)
            .unwrap();
    }
    let p = Proc::new("q-two", 0).unwrap();
    let c = ClientProc::spawn(CHILD, p, &server.setup_fork(&p).unwrap());
    (server, c)
}

/// `QUERY keys ns` → (status, [(key, value)]).
fn query(c: &mut ClientProc, keys: &str, ns: &str) -> (i32, Vec<(String, String)>) {
    c.send(&format!("QUERY {keys} {ns}"));
    let l = c.expect("QUERY_RESULT ");
    let mut w = l.split(' ').skip(1);
    let status = w.next().unwrap().parse().unwrap();
    let n: usize = w.next().unwrap().parse().unwrap();
    let values = (0..n)
        .map(|_| {
            let l = c.expect("QUERY_VALUE ");
            let mut w = l.splitn(3, ' ').skip(1);
            (w.next().unwrap().to_owned(), w.next().unwrap().to_owned())
        })
        .collect();
    (status, values)
}

fn one_answer(c: &mut ClientProc, key: &str, ns: &str) -> String {
    let (s, v) = query(c, key, ns);
    assert_eq!(s, 0, "{key}: {v:?}");
    assert_eq!(v.len(), 1, "{key}: {v:?}");
    assert_eq!(v[0].0, key);
    v[0].1.clone()
}

#[test]
fn query_answers_namespaces_job_size_and_process_sets() {
    let (_s, mut c) = node();
    assert_eq!(one_answer(&mut c, "pmix.qry.ns", "-"), "s:q-one,q-two");
    // The job size the maps imply (the host registered none).
    assert_eq!(one_answer(&mut c, "pmix.job.size", "-"), "u32:4");
    assert_eq!(one_answer(&mut c, "pmix.job.size", "q-one"), "u32:2");
    assert_eq!(one_answer(&mut c, "pmix.qry.psetnum", "-"), "Size(0)");
    assert_eq!(one_answer(&mut c, "pmix.qry.psets", "-"), "s:");
    let nsinfo = one_answer(&mut c, "pmix.qry.nsinfo", "-");
    assert!(
        nsinfo.contains("q-one") && nsinfo.contains("q-two"),
        "{nsinfo}"
    );
    assert!(nsinfo.contains("job.2"), "{nsinfo}");
    // Several keys of one query, in the order asked.
    let (s, v) = query(&mut c, "pmix.qry.psetnum,pmix.qry.ns", "-");
    assert_eq!(s, 0);
    let keys: Vec<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["pmix.qry.psetnum", "pmix.qry.ns"]);
}

#[test]
fn query_proc_tables_list_every_rank_with_its_node_and_local_ones_with_their_state() {
    let (_s, mut c) = node();
    // Rank 0 is connected (state 6, a pid); rank 1 is registered but never
    // came (state 0); 2 and 3 are on n2 (no pid).
    assert_eq!(
        one_answer(&mut c, "pmix.qry.ptable", "-"),
        "0@n1:6:pid,1@n1:0:nopid,2@n2:0:nopid,3@n2:0:nopid"
    );
    assert_eq!(
        one_answer(&mut c, "pmix.qry.lptable", "q-two"),
        "0@n1:6:pid,1@n1:0:nopid"
    );
    // Another namespace, by qualifier.
    assert_eq!(
        one_answer(&mut c, "pmix.qry.ptable", "q-one"),
        "0@n1:0:nopid,1@n1:0:nopid"
    );
}

#[test]
fn query_of_memory_usage_and_attribute_support_and_refresh_cache() {
    let (_s, mut c) = node();
    let usage = one_answer(&mut c, "pmix.qry.mem", "-");
    assert!(usage.contains("pmix.proc.res"), "{usage}");
    let support = one_answer(&mut c, "pmix.qry.attrs", "-");
    for k in [
        "PMIx_Get",
        "pmix.nlist",
        "PMIx_Query_info",
        "pmix.qry.ptable",
    ] {
        assert!(support.contains(k), "{k}: {support}");
    }
    // A qualifier-only key is accepted, but answers nothing by itself.
    let (s, v) = query(&mut c, "pmix.qry.ns,pmix.qry.rfsh", "-");
    assert_eq!((s, v.len()), (PARTIAL, 1));
}

#[test]
fn query_status_is_partial_when_some_keys_answer_and_not_found_when_none() {
    let (_s, mut c) = node();
    let (s, v) = query(&mut c, "pmix.qry.ns,vendor.no.such.key", "-");
    assert_eq!(s, PARTIAL);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].0, "pmix.qry.ns");
    let (s, v) = query(&mut c, "vendor.no.such.key,pmix.query.alloc", "-");
    assert_eq!((s, v.len()), (NOT_FOUND, 0));
    // A namespace nobody registered: that query is not found.
    let (s, v) = query(&mut c, "pmix.qry.ptable,pmix.job.size", "q-nobody");
    assert_eq!((s, v.len()), (NOT_FOUND, 0));
    // No keys at all: refused without a round trip.
    let (s, v) = query(&mut c, "NONE", "-");
    assert_eq!((s, v.len()), (BAD, 0));
}

#[test]
fn query_nb_calls_back_with_the_answer() {
    // From Rust the callback may run before query_nb returns; the C API's
    // after-return order is checked by c_client's query test.
    let (_s, mut c) = node();
    c.send("QUERY_NB pmix.qry.ns,vendor.no.such.key -");
    assert_eq!(c.expect("QUERY_NB_CALLED "), "QUERY_NB_CALLED 0");
    assert_eq!(
        c.expect("QUERY_NB_RESULT "),
        format!("QUERY_NB_RESULT {PARTIAL} 1")
    );
    c.send("QUERY_NB NONE -");
    assert_eq!(
        c.expect("QUERY_NB_CALLED "),
        format!("QUERY_NB_CALLED {BAD}")
    );
}

#[test]
fn proc_info_arrays_cross_the_wire_intact() {
    use fastpmix::internals::wire::{info_from_archived, info_to_record};
    use fastpmix::types::ProcInfo;
    let t = vec![ProcInfo {
        proc: Proc::new("x", 3).unwrap(),
        hostname: "n2".into(),
        executable: "/bin/true".into(),
        pid: 42,
        exit_code: 1,
        state: 20,
    }];
    let i = Info::new(
        attrs::PMIX_QUERY_PROC_TABLE,
        Value::DataArray(DataArray::ProcInfo(t)),
    );
    let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&info_to_record(&i)).unwrap();
    let a = rkyv::access::<shm_layout::record::ArchivedInfoRecord, rkyv::rancor::Error>(&bytes)
        .unwrap();
    assert_eq!(info_from_archived(a).unwrap(), i);
}

#[test]
fn query_shows_a_caller_only_the_namespaces_of_its_own_uid() {
    // A node server may hold several users' jobs: the second uid sees its
    // own namespace, not root's (names, proc tables, job sizes); root sees
    // both.
    if procs::ids().0 != 0 {
        println!("skipped: needs root to run a second uid");
        return;
    }
    if !procs::peer_can_run_this_binary() {
        println!("skipped: the second uid cannot execute this test binary");
        return;
    }
    let server = Server::builder().start().unwrap();
    let (mut r, mut u) = procs::two_uid_clients(&server, CHILD, "q-uid-root", "q-uid-user");
    assert_eq!(one_answer(&mut u, "pmix.qry.ns", "-"), "s:q-uid-user");
    let (s, v) = query(&mut u, "pmix.qry.ptable,pmix.job.size", "q-uid-root");
    assert_eq!((s, v.len()), (NOT_FOUND, 0));
    assert_eq!(
        one_answer(&mut r, "pmix.qry.ns", "-"),
        "s:q-uid-root,q-uid-user"
    );
    assert_eq!(
        one_answer(&mut r, "pmix.qry.lptable", "q-uid-user"),
        "0@:6:pid"
    );
}
