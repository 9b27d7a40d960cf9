//! `PMIx_Log` and `PMIx_Allocation_request` between real processes: the
//! test process embeds the server (its log sinks are buffers and a datagram
//! socket of the test's own), clients are this binary re-executed
//! (`tests/procs`). What the server wrote, and what its host was asked, is
//! checked after the client got its answer: the server writes local
//! channels and calls the host before it answers. The last section runs
//! the client under `fastpmix run` instead, to check the launcher's
//! built-in host.

mod common;
mod procs;

use common::host::{Alloc, Answers, RecordingHost};
use fastpmix::job::alloc::Allocator;
use fastpmix::job::log::Sinks;
use fastpmix::server::{Host, Server};
use fastpmix::types::attrs;
use fastpmix::types::{AllocDirective, DataArray};
use fastpmix::{Info, Key, Proc, Status, Value};
use procs::{ClientProc, HANG, ROLE_ENV};
use std::io::{self, Write};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

const CHILD: &str = "child_client";

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// A `Write` into a shared buffer (the server's stdout or stderr sink).
#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Buf {
    /// Everything written so far, removed from the buffer.
    fn take(&self) -> String {
        let v = std::mem::take(&mut *self.0.lock().unwrap());
        String::from_utf8(v).expect("utf-8 output")
    }
}

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A syslog socket path unique to one test (nothing bound unless the test
/// binds it), removed on drop.
struct SockPath(PathBuf);

impl SockPath {
    fn new(tag: &str) -> SockPath {
        let p = std::env::temp_dir().join(format!("fastpmix-lg-{}-{tag}.sock", std::process::id()));
        let _ = std::fs::remove_file(&p);
        SockPath(p)
    }

    /// A datagram socket bound at the path (the test's "syslog daemon").
    fn bind(&self) -> UnixDatagram {
        let s = UnixDatagram::bind(&self.0).unwrap();
        s.set_read_timeout(Some(HANG)).unwrap();
        s
    }
}

impl Drop for SockPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn recv(sock: &UnixDatagram) -> String {
    let mut b = vec![0u8; 64 * 1024];
    let n = sock.recv(&mut b).expect("a syslog datagram");
    String::from_utf8_lossy(&b[..n]).into_owned()
}

fn ids() -> (u32, u32) {
    // SAFETY: getuid/getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// A host recording `log` and `allocate` upcalls: `log` answers
/// `log_answer`, `allocate` as `alloc` says.
fn test_host(global_syslog: bool, log_answer: Status, alloc: Alloc) -> Arc<RecordingHost> {
    RecordingHost::with(Answers {
        global_syslog,
        log: log_answer,
        alloc,
        ..Answers::default()
    })
}

struct Node {
    _server: Server,
    out: Buf,
    err: Buf,
    clients: Vec<ClientProc>,
}

/// A server logging into fresh buffers and `syslog`, with `host` (None:
/// the default host), and namespace `ns` ranks 0..n, all connected.
fn node(ns: &str, n: u32, host: Option<Arc<dyn Host>>, syslog: &SockPath) -> Node {
    let (out, err) = (Buf::default(), Buf::default());
    let sinks = Sinks {
        stdout: Box::new(out.clone()),
        stderr: Box::new(err.clone()),
        syslog: syslog.0.clone(),
        ident: "t".into(),
    };
    let mut b = Server::builder().log_sinks(sinks);
    if let Some(h) = host {
        b = b.host(h);
    }
    let server = b.start().unwrap();
    let nspace = fastpmix::Nspace::new(ns).unwrap();
    server.register_nspace(&nspace, vec![]).unwrap();
    let (uid, gid) = ids();
    let mut clients = Vec::new();
    for r in 0..n {
        let p = Proc::new(ns, r).unwrap();
        server.register_client(&p, uid, gid).unwrap();
        let env = server.setup_fork(&p).unwrap();
        clients.push(ClientProc::spawn(CHILD, p, &env));
    }
    Node {
        _server: server,
        out,
        err,
        clients,
    }
}

/// Sends `cmd`, waits for the `prefix` line: (status, results with `~`
/// turned back into spaces).
fn result(c: &mut ClientProc, cmd: &str, prefix: &str) -> (i32, String) {
    c.send(cmd);
    let l = c.expect(prefix);
    let mut w = l.splitn(3, ' ').skip(1);
    let s = w.next().unwrap().parse().unwrap();
    (s, w.next().unwrap_or("").replace('~', " "))
}

fn log(c: &mut ClientProc, args: &str) -> (i32, String) {
    result(c, &format!("LOG {args}"), "LOG_RESULT")
}

fn alloc(c: &mut ClientProc, args: &str) -> (i32, String) {
    result(c, &format!("ALLOC {args}"), "ALLOC_RESULT")
}

fn get(infos: &[Info], k: &Key) -> Option<Value> {
    infos.iter().find(|i| i.key == *k).map(|i| i.value.clone())
}

/// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC, to the second).
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

const TS: i64 = 1_795_341_600; // 2026-11-22T10:00:00Z

// ---------------------------------------------------------------------------
// PMIx_Log
// ---------------------------------------------------------------------------

#[test]
fn log_stdout_and_stderr_formats_reach_the_servers_sinks() {
    let sock = SockPath::new("fmt");
    let syslog = sock.bind();
    let mut n = node("lg-fmt", 1, None, &sock);
    let (out, err) = (n.out.clone(), n.err.clone());
    let c = &mut n.clients[0];

    let (s, r) = log(c, "pmix.log.stdout=s:hello -- pmix.log.tag=b:1");
    assert_eq!(s, 0, "{r}");
    assert_eq!(out.take(), "[lg-fmt,0]<stdout>: hello\n");
    assert_eq!(err.take(), "");

    // No directive: the message alone (one trailing newline dropped).
    let (s, _) = log(c, "pmix.log.stderr=s:plain");
    assert_eq!(s, 0);
    assert_eq!(err.take(), "plain\n");
    assert_eq!(out.take(), "");

    // XML (escaped), on stderr.
    let (s, _) = log(c, "pmix.log.stderr=s:a<b&c -- pmix.log.xml=b:1");
    assert_eq!(s, 0);
    assert_eq!(
        err.take(),
        "<stderr rank=\"0\" nspace=\"lg-fmt\">a&lt;b&amp;c</stderr>\n"
    );

    // The caller's time stamp, with the tag, then in XML.
    let (s, _) = log(
        c,
        &format!("pmix.log.stdout=s:hello -- pmix.log.tstmp=time:{TS} pmix.log.tag=b:1"),
    );
    assert_eq!(s, 0);
    assert_eq!(
        out.take(),
        "2026-11-22T10:00:00Z [lg-fmt,0]<stdout>: hello\n"
    );
    let (s, _) = log(
        c,
        &format!("pmix.log.stdout=s:hello -- pmix.log.xml=b:1 pmix.log.tstmp=time:{TS}"),
    );
    assert_eq!(s, 0);
    assert_eq!(
        out.take(),
        "<stdout rank=\"0\" nspace=\"lg-fmt\" time=\"2026-11-22T10:00:00Z\">hello</stdout>\n"
    );

    // A generated time stamp: some RFC 3339 time, then the message.
    let (s, _) = log(c, "pmix.log.stdout=s:gen -- pmix.log.gtstmp=b:1");
    assert_eq!(s, 0);
    let line = out.take();
    let (ts, rest) = line.split_once(' ').expect("a time, then the message");
    assert!(is_rfc3339(ts), "{line:?}");
    assert_eq!(rest, "gen\n");

    // Several channels in one call, each with only its own directives: the
    // tag for stdout/stderr, the priority for syslog (which is not tagged).
    let (s, r) = log(
        c,
        "pmix.log.stdout=s:one pmix.log.stderr=s:two~words pmix.log.lsys=s:three \
         -- pmix.log.tag=b:1 pmix.log.syspri=i:13",
    );
    assert_eq!(s, 0, "{r}");
    assert_eq!(out.take(), "[lg-fmt,0]<stdout>: one\n");
    assert_eq!(err.take(), "[lg-fmt,0]<stderr>: two words\n");
    let d = recv(&syslog);
    assert!(d.starts_with("<13>"), "{d:?}");
    assert!(
        d.ends_with(&format!(" t[{}]: three", std::process::id())),
        "{d:?}"
    );
    assert!(!d.contains("<lsyslog>") && !d.contains("lg-fmt"), "{d:?}");
}

#[test]
fn log_source_is_the_authenticated_client() {
    let sock = SockPath::new("src");
    let host = test_host(false, Status::ERR_NO_PERMISSIONS, Alloc::Drop);
    let mut n = node("lg-src", 2, Some(host.clone()), &sock);
    let me = n.clients[1].proc;
    // Forged ids and source in the directives change nothing.
    let (s, _) = log(
        &mut n.clients[1],
        "pmix.log.email=infos:pmix.log.emaddr=s:a@b|pmix.log.msg=s:x \
         -- pmix.euid=u32:4242 pmix.egid=u32:4242",
    );
    // The client's status is the host's answer.
    assert_eq!(s, Status::ERR_NO_PERMISSIONS.0);

    let calls = host.logs.lock().unwrap();
    assert_eq!(calls.len(), 1);
    let (who, data, dirs) = &calls[0];
    assert_eq!(*who, me);
    assert_eq!(data.len(), 1);
    assert_eq!(data[0].key, attrs::PMIX_LOG_EMAIL);
    let Value::DataArray(DataArray::Info(mail)) = &data[0].value else {
        panic!("email item is not an info array: {:?}", data[0].value);
    };
    assert_eq!(
        get(mail, &attrs::PMIX_LOG_EMAIL_ADDR),
        Some(Value::String("a@b".into()))
    );
    assert_eq!(
        get(mail, &attrs::PMIX_LOG_MSG),
        Some(Value::String("x".into()))
    );
    assert_eq!(
        get(dirs, &attrs::PMIX_LOG_SOURCE),
        Some(Value::Proc(Box::new(me)))
    );
    let (uid, gid) = ids();
    assert_eq!(get(dirs, &attrs::PMIX_USERID), Some(Value::Uint32(uid)));
    assert_eq!(get(dirs, &attrs::PMIX_GRPID), Some(Value::Uint32(gid)));
    let count = |k: &Key| dirs.iter().filter(|i| i.key == *k).count();
    assert_eq!(count(&attrs::PMIX_USERID), 1, "{dirs:?}");
    assert_eq!(count(&attrs::PMIX_GRPID), 1, "{dirs:?}");
    assert_eq!(count(&attrs::PMIX_LOG_SOURCE), 1, "{dirs:?}");
    assert!(n.out.take().is_empty() && n.err.take().is_empty());
}

#[test]
fn log_syslog_goes_local_without_a_global_host_syslog() {
    let sock = SockPath::new("sys-local");
    let syslog = sock.bind();
    // A host that has no global syslog (and would record a log upcall).
    let host = test_host(false, Status::SUCCESS, Alloc::Drop);
    let mut n = node("lg-sys", 1, Some(host.clone()), &sock);
    let (s, r) = log(
        &mut n.clients[0],
        "pmix.log.syslog=s:to~syslog -- pmix.log.syspri=i:13",
    );
    assert_eq!(s, 0, "{r}");
    let d = recv(&syslog);
    assert!(d.starts_with("<13>"), "{d:?}");
    assert!(d.ends_with(": to syslog"), "{d:?}");
    assert!(host.logs.lock().unwrap().is_empty());
    assert!(n.out.take().is_empty() && n.err.take().is_empty());

    // Without a priority: LOG_USER | LOG_ERR.
    let (s, _) = log(&mut n.clients[0], "pmix.log.syslog=s:default");
    assert_eq!(s, 0);
    let d = recv(&syslog);
    assert!(
        d.starts_with(&format!("<{}>", libc::LOG_USER | libc::LOG_ERR)),
        "{d:?}"
    );
}

#[test]
fn log_syslog_goes_to_the_host_that_has_a_global_syslog() {
    let sock = SockPath::new("sys-global");
    let syslog = sock.bind();
    let host = test_host(true, Status::SUCCESS, Alloc::Drop);
    let mut n = node("lg-gsys", 1, Some(host.clone()), &sock);
    let me = n.clients[0].proc;
    let (s, r) = log(
        &mut n.clients[0],
        "pmix.log.syslog=s:to~syslog -- pmix.log.syspri=i:13",
    );
    assert_eq!(s, 0, "{r}");
    {
        let calls = host.logs.lock().unwrap();
        assert_eq!(calls.len(), 1);
        let (who, data, dirs) = &calls[0];
        assert_eq!(*who, me);
        assert_eq!(
            data,
            &vec![Info::new(attrs::PMIX_LOG_SYSLOG, "to syslog")],
            "the item goes to the host unchanged"
        );
        assert_eq!(get(dirs, &attrs::PMIX_LOG_SYSLOG_PRI), Some(Value::Int(13)));
        assert_eq!(
            get(dirs, &attrs::PMIX_LOG_SOURCE),
            Some(Value::Proc(Box::new(me)))
        );
    }
    // The node's syslog got nothing from it: the next datagram it gets is
    // the one of a later local-syslog item.
    let (s, _) = log(&mut n.clients[0], "pmix.log.lsys=s:marker");
    assert_eq!(s, 0);
    let d = recv(&syslog);
    assert!(d.ends_with(": marker"), "{d:?}");
    assert_eq!(host.logs.lock().unwrap().len(), 1);
}

#[test]
fn log_once_stops_at_the_first_channel_that_succeeds() {
    // Nothing is bound at the syslog path: local syslog fails.
    let sock = SockPath::new("once");
    let mut n = node("lg-once", 1, None, &sock);
    let (out, err) = (n.out.clone(), n.err.clone());
    let c = &mut n.clients[0];

    let (s, r) = log(
        c,
        "pmix.log.stdout=s:first pmix.log.stderr=s:second -- pmix.log.once=b:1",
    );
    assert_eq!(s, 0, "{r}");
    assert_eq!(out.take(), "first\n");
    assert_eq!(err.take(), "", "stderr written after stdout succeeded");

    // A failing channel first: the next one is tried, the one after is not.
    let (s, r) = log(
        c,
        "pmix.log.lsys=s:a pmix.log.stdout=s:b pmix.log.stderr=s:c -- pmix.log.once=b:1",
    );
    assert_eq!(s, 0, "{r}");
    assert_eq!(out.take(), "b\n");
    assert_eq!(err.take(), "");

    // Without ONCE every channel is written.
    let (s, _) = log(c, "pmix.log.stdout=s:first pmix.log.stderr=s:second");
    assert_eq!(s, 0);
    assert_eq!(out.take(), "first\n");
    assert_eq!(err.take(), "second\n");
}

#[test]
fn log_email_without_host_support_is_not_supported() {
    let sock = SockPath::new("email");
    let mut n = node("lg-email", 1, None, &sock);
    let c = &mut n.clients[0];
    let (s, _) = log(
        c,
        "pmix.log.email=infos:pmix.log.emaddr=s:a@b|pmix.log.msg=s:x",
    );
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0);
    // Job record and global syslog are the host's too.
    let (s, _) = log(c, "pmix.log.jrec=s:rec");
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0);
    let (s, _) = log(c, "pmix.log.gsys=s:g");
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0);
    c.send("PING");
    c.expect("PONG");
    let (s, _) = log(c, "pmix.log.stdout=s:still~here");
    assert_eq!(s, 0);
    assert_eq!(n.out.take(), "still here\n");
}

#[test]
fn log_without_data_is_bad_param() {
    let sock = SockPath::new("bad");
    let mut n = node("lg-bad", 1, None, &sock);
    let (out, err) = (n.out.clone(), n.err.clone());
    let c = &mut n.clients[0];
    let cases = [
        ("-- pmix.log.tag=b:1", Status::ERR_BAD_PARAM),
        ("vendor.x=s:no~channel", Status::ERR_BAD_PARAM),
        ("pmix.log.stdout=i:3", Status::ERR_BAD_PARAM),
        (
            "pmix.log.stdout=s:x -- pmix.log.syspri=i:500",
            Status::ERR_BAD_PARAM,
        ),
        (
            "pmix.log.stdout=s:x -- pmix.log.tag=s:yes",
            Status::ERR_BAD_PARAM,
        ),
        // A required key the server does not know, in data or directives.
        (
            "pmix.log.stdout=s:x !vendor.x=b:1",
            Status::ERR_NOT_SUPPORTED,
        ),
        (
            "pmix.log.stdout=s:x -- !vendor.x=b:1",
            Status::ERR_NOT_SUPPORTED,
        ),
    ];
    for (args, want) in cases {
        let (s, why) = log(c, args);
        assert_eq!(s, want.0, "{args}: {why}");
        assert!(why.contains("fastpmix.reason="), "{args}: {why}");
    }
    // A refused call writes nothing.
    assert_eq!(out.take(), "");
    assert_eq!(err.take(), "");
    // The server keeps serving.
    c.send("PING");
    c.expect("PONG");
    let (s, _) = log(c, "pmix.log.stdout=s:x vendor.x=b:1");
    assert_eq!(s, 0, "an unknown key not required is ignored");
    assert_eq!(out.take(), "x\n");
}

#[test]
fn log_nb_callback_runs_after_the_call_returned() {
    let sock = SockPath::new("nb");
    let mut n = node("lg-nb", 1, None, &sock);
    let c = &mut n.clients[0];
    c.sync();
    c.send("LOG_NB pmix.log.stdout=s:async -- pmix.log.tag=b:1");
    let cb = c.expect("LOG_CB");
    // Every line before LOG_CB is in `seen`: the call's line came first.
    let started = c
        .seen
        .iter()
        .position(|l| l.starts_with("LOG_NB_STARTED"))
        .map(|i| c.seen.remove(i));
    assert_eq!(
        started.as_deref(),
        Some("LOG_NB_STARTED 0"),
        "the callback ran before the call returned: {cb:?}"
    );
    assert_eq!(cb, "LOG_CB 0 - thread=other");
    assert_eq!(n.out.take(), "[lg-nb,0]<stdout>: async\n");

    // A refusal reaches the callback too.
    c.send("LOG_NB pmix.log.email=infos:pmix.log.msg=s:x");
    let cb = c.expect("LOG_CB");
    assert!(c.seen.iter().any(|l| l == "LOG_NB_STARTED 0"), "{cb:?}");
    assert!(
        cb.starts_with(&format!("LOG_CB {} ", Status::ERR_NOT_SUPPORTED.0)),
        "{cb}"
    );
    assert!(cb.ends_with(" thread=other"), "{cb}");
}

// ---------------------------------------------------------------------------
// PMIx_Allocation_request
// ---------------------------------------------------------------------------

#[test]
fn allocation_request_goes_to_the_host_with_credentials_and_results_come_back() {
    let sock = SockPath::new("alloc");
    let host = test_host(false, Status::SUCCESS, Alloc::Later);
    let mut n = node("al-host", 1, Some(host.clone()), &sock);
    let me = n.clients[0].proc;
    // Forged ids are replaced by the authenticated ones.
    let (s, r) = alloc(
        &mut n.clients[0],
        "1 pmix.alloc.ncpus=u64:2 pmix.euid=u32:4242 pmix.egid=u32:4242",
    );
    assert_eq!(s, 0, "{r}");
    assert_eq!(r, "pmix.alloc.id=a1");
    let calls = host.allocs.lock().unwrap();
    assert_eq!(calls.len(), 1);
    let (who, d, info) = &calls[0];
    assert_eq!(*who, me);
    assert_eq!(*d, AllocDirective::NEW.0);
    assert_eq!(
        get(info, &attrs::PMIX_ALLOC_NUM_CPUS),
        Some(Value::Uint64(2))
    );
    let (uid, gid) = ids();
    assert_eq!(get(info, &attrs::PMIX_USERID), Some(Value::Uint32(uid)));
    assert_eq!(get(info, &attrs::PMIX_GRPID), Some(Value::Uint32(gid)));
    let count = |k: &Key| info.iter().filter(|i| i.key == *k).count();
    assert_eq!(count(&attrs::PMIX_USERID), 1, "{info:?}");
    assert_eq!(count(&attrs::PMIX_GRPID), 1, "{info:?}");
}

#[test]
fn allocation_wrongly_typed_attribute_is_refused_before_the_host() {
    let sock = SockPath::new("alloc-type");
    let host = test_host(false, Status::SUCCESS, Alloc::Later);
    let mut n = node("al-type", 1, Some(host.clone()), &sock);
    let (s, r) = alloc(&mut n.clients[0], "1 pmix.alloc.ncpus=s:two");
    assert_eq!(s, Status::ERR_BAD_PARAM.0, "{r}");
    assert!(r.contains("pmix.alloc.ncpus"), "{r}");
    assert!(host.allocs.lock().unwrap().is_empty());
    let (s, _) = alloc(&mut n.clients[0], "1 pmix.alloc.ncpus=u64:1");
    assert_eq!(s, 0);
}

#[test]
fn allocation_host_that_drops_its_completion_is_an_error() {
    let sock = SockPath::new("alloc-drop");
    let host = test_host(false, Status::SUCCESS, Alloc::Drop);
    let mut n = node("al-drop", 1, Some(host.clone()), &sock);
    let (s, r) = alloc(&mut n.clients[0], "1 pmix.alloc.ncpus=u64:1");
    assert_eq!(s, Status::ERROR.0, "{r}");
    assert_eq!(host.allocs.lock().unwrap().len(), 1);
    // The server keeps serving.
    n.clients[0].send("PING");
    n.clients[0].expect("PONG");
}

#[test]
fn allocation_without_host_support_is_not_supported() {
    let sock = SockPath::new("alloc-none");
    let mut n = node("al-none", 1, None, &sock);
    let (s, _) = alloc(&mut n.clients[0], "1 pmix.alloc.ncpus=u64:1");
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0);
    n.clients[0].send("PING");
    n.clients[0].expect("PONG");
}

#[test]
fn allocation_against_the_core_allocator() {
    let sock = SockPath::new("alloc-core");
    let core = Alloc::Core(Mutex::new(Allocator::new(vec![0, 1], "node".into())));
    let host = test_host(false, Status::SUCCESS, core);
    let mut n = node("al-core", 2, Some(host), &sock);

    let (s, r) = alloc(&mut n.clients[0], "1 pmix.alloc.ncpus=u64:1");
    assert_eq!(s, 0, "{r}");
    assert!(r.contains("pmix.alloc.id=alloc-1"), "{r}");
    assert!(r.contains("pmix.alloc.cpulist=0"), "{r}");

    // One CPU is left: two cannot be had.
    let (s, r) = alloc(&mut n.clients[0], "1 pmix.alloc.ncpus=u64:2");
    assert_eq!(s, Status::ERR_OUT_OF_RESOURCE.0, "{r}");
    assert!(r.contains("fastpmix.reason="), "{r}");

    // The holder is the authenticated requester: another process may not
    // release it.
    let (s, r) = alloc(&mut n.clients[1], "3 pmix.alloc.id=s:alloc-1");
    assert_eq!(s, Status::ERR_NO_PERMISSIONS.0, "{r}");

    let (s, r) = alloc(&mut n.clients[0], "3 pmix.alloc.id=s:alloc-1");
    assert_eq!(s, 0, "{r}");
    // Released: both CPUs can be had now.
    let (s, r) = alloc(&mut n.clients[1], "1 pmix.alloc.ncpus=u64:2");
    assert_eq!(s, 0, "{r}");
    assert!(r.contains("pmix.alloc.id=alloc-2"), "{r}");
    assert!(r.contains("pmix.alloc.cpulist=0-1"), "{r}");
}

// ---------------------------------------------------------------------------
// The launcher's built-in host (`fastpmix run`): this binary's client run
// under the launcher with a command script (`procs::SCRIPT_ENV`)
// ---------------------------------------------------------------------------

/// Runs `fastpmix run -n 1` over this binary's client with `script`:
/// (exit code, stdout, stderr). The job-record file the launcher announces
/// is read (`None`: never written) and removed.
fn launcher_job(script: &str) -> (i32, String, String, Option<String>) {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fastpmix"))
        .args(["run", "-n", "1", "--"])
        .arg(exe)
        .args([CHILD, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, "client")
        .env(procs::SCRIPT_ENV, script)
        .output()
        .expect("run fastpmix");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let path = stderr
        .lines()
        .find_map(|l| l.strip_prefix("[fastpmix] job records (PMIX_LOG_JOB_RECORD) go to "))
        .unwrap_or_else(|| panic!("the launcher announces the job-record file:\n{stderr}"));
    let records = std::fs::read_to_string(path).ok();
    let _ = std::fs::remove_file(path);
    // Its private directory stays while it holds records.
    let _ = std::fs::remove_dir(std::path::Path::new(path).parent().unwrap());
    (out.status.code().unwrap_or(-1), stdout, stderr, records)
}

/// Rank 0's lines of the launcher's stdout that start with `what`, in
/// order, without the `[0] ` prefix.
fn rank0<'a>(stdout: &'a str, what: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("[0] "))
        .filter(|l| l.starts_with(what))
        .collect()
}

/// The launcher's host refuses global syslog, the global datastore
/// and email with `PMIX_ERR_NOT_SUPPORTED` and one message on its stderr
/// naming the caller and the channel; nothing of them reaches the job
/// record, and a job record after them is still written.
#[test]
fn launcher_host_refuses_global_syslog_the_datastore_and_email_with_not_supported() {
    let (code, out, err, records) = launcher_job(
        "LOG pmix.log.gsys=s:to~the~gateway; \
         LOG pmix.log.gstore=strs:stored-item; \
         LOG pmix.log.email=infos:pmix.log.emaddr=s:a@b|pmix.log.msg=s:mailed; \
         LOG pmix.log.jrec=s:still~served; FINALIZE",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let results: Vec<i32> = rank0(&out, "LOG_RESULT ")
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
        .collect();
    let no = Status::ERR_NOT_SUPPORTED.0;
    assert_eq!(results, vec![no, no, no, 0], "{out}\n{err}");
    for key in [
        attrs::PMIX_LOG_GLOBAL_SYSLOG,
        attrs::PMIX_LOG_GLOBAL_DATASTORE,
        attrs::PMIX_LOG_EMAIL,
    ] {
        let tail = format!(": {} is not supported by fastpmix run", key.as_str());
        let msgs: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("[fastpmix] PMIx_Log from ") && l.ends_with(&tail))
            .collect();
        assert_eq!(msgs.len(), 1, "one message for {}:\n{err}", key.as_str());
        let who = msgs[0]
            .strip_prefix("[fastpmix] PMIx_Log from ")
            .and_then(|l| l.strip_suffix(&tail))
            .unwrap();
        assert!(
            who.starts_with("fastpmix-job-") && who.ends_with(":0"),
            "the caller, rank 0 of the job: {who}"
        );
    }
    let records = records.expect("the job record was written");
    assert_eq!(records.lines().count(), 1, "{records:?}");
    assert!(records.ends_with("\t0\tstill served\n"), "{records:?}");
}

/// The launcher's host manages one node: a `PMIX_ALLOC_NODE_LIST` naming a
/// node other than this host (alone or beside it) is
/// `PMIX_ERR_OUT_OF_RESOURCE` with the reason, and grants nothing; this
/// host's own name is granted.
#[test]
fn launcher_host_refuses_a_node_list_naming_another_node() {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_owned();
    let other = format!("{host}-other");
    let (code, out, err, _) = launcher_job(&format!(
        "ALLOC 1 pmix.alloc.ncpus=u64:1 pmix.alloc.nlist=s:{other}; \
         ALLOC 1 pmix.alloc.ncpus=u64:1 pmix.alloc.nlist=s:{host},{other}; \
         ALLOC 1 pmix.alloc.ncpus=u64:1 pmix.alloc.nlist=s:{host}; FINALIZE"
    ));
    assert_eq!(code, 0, "{out}\n{err}");
    let results = rank0(&out, "ALLOC_RESULT ");
    assert_eq!(results.len(), 3, "{out}\n{err}");
    let oor = Status::ERR_OUT_OF_RESOURCE.0;
    for (l, list) in results[..2]
        .iter()
        .zip([other.clone(), format!("{host},{other}")])
    {
        assert!(l.starts_with(&format!("ALLOC_RESULT {oor} ")), "{l}");
        let reason = format!("node~list~\"{list}\":~this~host~manages~only~{host}");
        assert!(
            l.contains(&format!("fastpmix.reason={reason}")),
            "{l} lacks {reason}"
        );
    }
    let granted = results[2];
    assert!(granted.starts_with("ALLOC_RESULT 0 "), "{granted}");
    assert!(
        granted.contains("pmix.alloc.id=alloc-1"),
        "the refusals granted nothing and used no id: {granted}"
    );
    assert!(
        granted.contains(&format!("pmix.alloc.nlist={host}")),
        "{granted}"
    );
}
