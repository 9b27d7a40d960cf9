//! `PMIx_Log` on the server (`fastpmix::job::log`): parsing rules, the
//! stdout/stderr formats, `PMIX_LOG_ONCE`, per-channel directives, the local
//! syslog datagram, statuses, host forwarding and the job record. Each test
//! is named after the rule it checks.

use fastpmix::job::log::{
    append_job_record, carry_out, format_std, syslog_local, Channel, Directives, Discarding,
    Outcome, Request, Sinks, DEFAULT_PRI,
};
use fastpmix::types::attrs::*;
use fastpmix::types::{DataArray, Info, Key, Proc, Status, Value};
use proptest::prelude::*;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const NOW: i64 = 1_795_341_600; // 2026-11-22T10:00:00Z
const TS: i64 = 1_795_345_230; // 2026-11-22T11:00:30Z

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Buf {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
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

struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A fresh directory under the system temp dir, removed on drop (`tag` is
/// unique per test).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let name = format!("fastpmix-log-{}-{tag}", std::process::id());
        let p = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn src() -> Proc {
    Proc::new("job-1", 3).unwrap()
}

fn sinks(syslog: &Path) -> (Sinks, Buf, Buf) {
    let (out, err) = (Buf::default(), Buf::default());
    let s = Sinks {
        stdout: Box::new(out.clone()),
        stderr: Box::new(err.clone()),
        syslog: syslog.to_path_buf(),
        ident: "tester".into(),
    };
    (s, out, err)
}

fn no_syslog() -> PathBuf {
    PathBuf::from("/nonexistent/fastpmix/dev-log")
}

fn run(data: &[Info], dirs: &[Info], syslog: &Path, global: bool) -> (Outcome, Buf, Buf) {
    let req = Request::parse(data, dirs).expect("parse");
    let (mut s, out, err) = sinks(syslog);
    (carry_out(&req, &src(), &mut s, global, NOW), out, err)
}

fn flag(k: Key) -> Info {
    Info::new(k, true)
}

fn d() -> Directives {
    Directives::default()
}

fn hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    h.trim().split('.').next().unwrap().to_owned()
}

fn bind(dir: &TempDir) -> (UnixDatagram, PathBuf) {
    let p = dir.0.join("log.sock");
    let sock = UnixDatagram::bind(&p).unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    (sock, p)
}

fn recv(sock: &UnixDatagram) -> String {
    let mut b = vec![0u8; 70_000];
    let n = sock.recv(&mut b).unwrap();
    String::from_utf8(b[..n].to_vec()).unwrap()
}

/// Splits `<PRI>Mmm dd hh:mm:ss rest` into (PRI, stamp, rest), checking the
/// stamp's shape (for messages stamped with the current time).
fn split_syslog(dgram: &str) -> (u32, String, String) {
    let close = dgram.find('>').unwrap();
    assert!(dgram.starts_with('<'), "{dgram:?}");
    let pri = dgram[1..close].parse().unwrap();
    let stamp = &dgram[close + 1..close + 16];
    let months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec";
    assert!(months.split(' ').any(|m| stamp.starts_with(m)), "{stamp:?}");
    assert_eq!(
        (&stamp[3..4], &stamp[9..10], &stamp[12..13]),
        (" ", ":", ":")
    );
    assert_eq!(&dgram[close + 16..close + 17], " ");
    (pri, stamp.to_owned(), dgram[close + 17..].to_owned())
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

#[test]
fn log_required_unknown_key_is_not_supported() {
    let data = [Info::new(PMIX_LOG_STDOUT, "hi")];
    let odd = Key::new("vendor.unknown").unwrap();
    let r = Request::parse(&data, &[Info::required(odd.clone(), 1)]);
    assert_eq!(r, Err(Status::ERR_NOT_SUPPORTED));
    let data2 = [Info::new(PMIX_LOG_STDOUT, "hi"), Info::required(odd, "x")];
    assert_eq!(Request::parse(&data2, &[]), Err(Status::ERR_NOT_SUPPORTED));
}

#[test]
fn log_unknown_key_not_required_is_ignored() {
    let odd = Key::new("vendor.unknown").unwrap();
    let data = [
        Info::new(odd.clone(), "x"),
        Info::new(PMIX_LOG_STDERR, "hi"),
    ];
    let r = Request::parse(&data, &[Info::new(odd, 5)]).unwrap();
    assert_eq!(r.items, vec![(Channel::Stderr, data[1].clone())]);
    assert_eq!(r.directives, d());
}

#[test]
fn log_wrong_type_is_bad_param() {
    let ok = [Info::new(PMIX_LOG_STDOUT, "hi")];
    let bad_data = [Info::new(PMIX_LOG_STDOUT, 7)];
    assert_eq!(Request::parse(&bad_data, &[]), Err(Status::ERR_BAD_PARAM));
    let bad_email = [Info::new(PMIX_LOG_EMAIL, "not an info array")];
    assert_eq!(Request::parse(&bad_email, &[]), Err(Status::ERR_BAD_PARAM));
    for dir in [
        Info::new(PMIX_LOG_SYSLOG_PRI, "high"),
        Info::new(PMIX_LOG_TAG_OUTPUT, "yes"),
        Info::new(PMIX_LOG_ONCE, 1),
        Info::new(PMIX_LOG_TIMESTAMP, "noon"),
    ] {
        assert_eq!(
            Request::parse(&ok, std::slice::from_ref(&dir)),
            Err(Status::ERR_BAD_PARAM),
            "{dir:?}"
        );
    }
}

#[test]
fn log_syslog_pri_out_of_range_is_bad_param() {
    let ok = [Info::new(PMIX_LOG_STDOUT, "hi")];
    for p in [-1, 192, i32::MAX] {
        let r = Request::parse(&ok, &[Info::new(PMIX_LOG_SYSLOG_PRI, p)]);
        assert_eq!(r, Err(Status::ERR_BAD_PARAM), "{p}");
    }
    let r = Request::parse(&ok, &[Info::new(PMIX_LOG_SYSLOG_PRI, 191)]).unwrap();
    assert_eq!(r.directives.pri, Some(191));
}

#[test]
fn log_without_data_is_bad_param() {
    let once = [flag(PMIX_LOG_ONCE)];
    assert_eq!(Request::parse(&[], &once), Err(Status::ERR_BAD_PARAM));
    // Data that names no channel leaves nothing to log.
    let only_dirs = [Info::new(PMIX_LOG_TIMESTAMP, Value::Time(TS))];
    assert_eq!(Request::parse(&only_dirs, &[]), Err(Status::ERR_BAD_PARAM));
}

#[test]
fn log_parse_keeps_caller_order_and_reads_every_directive() {
    let email = Value::from(vec![Info::new(PMIX_LOG_EMAIL_ADDR, "a@b")]);
    let data = [
        Info::new(PMIX_LOG_SYSLOG, "s"),
        Info::new(PMIX_LOG_EMAIL, email),
        Info::new(PMIX_LOG_STDOUT, "o"),
        Info::new(
            PMIX_LOG_GLOBAL_DATASTORE,
            Value::DataArray(DataArray::Uint32(vec![1])),
        ),
        Info::new(PMIX_LOG_JOB_RECORD, "j"),
        Info::new(PMIX_LOG_LOCAL_SYSLOG, "l"),
        Info::new(PMIX_LOG_GLOBAL_SYSLOG, "g"),
        Info::new(PMIX_LOG_STDERR, "e"),
    ];
    let dirs = [
        Info::new(PMIX_LOG_SYSLOG_PRI, 2),
        Info::new(PMIX_LOG_SYSLOG_PRI, libc::LOG_WARNING), // last one wins
        flag(PMIX_LOG_ONCE),
        Info::new(PMIX_LOG_TIMESTAMP, Value::Time(TS)),
        flag(PMIX_LOG_GENERATE_TIMESTAMP),
        flag(PMIX_LOG_TAG_OUTPUT),
        flag(PMIX_LOG_TIMESTAMP_OUTPUT),
        Info::new(PMIX_LOG_XML_OUTPUT, false),
        Info::new(PMIX_LOG_SOURCE, Proc::new("spoof", 0).unwrap()), // ignored
    ];
    let r = Request::parse(&data, &dirs).unwrap();
    let chans: Vec<Channel> = r.items.iter().map(|(c, _)| *c).collect();
    use Channel::*;
    let want = [
        Syslog,
        Email,
        Stdout,
        GlobalDatastore,
        JobRecord,
        LocalSyslog,
        GlobalSyslog,
        Stderr,
    ];
    assert_eq!(chans, want);
    for (c, i) in &r.items {
        assert_eq!(c.key(), i.key);
        assert_eq!(Channel::of(i.key.as_str()), Some(*c));
        assert_eq!(c.is_local(), matches!(c, Stdout | Stderr | LocalSyslog));
    }
    let want = Directives {
        pri: Some(libc::LOG_WARNING),
        once: true,
        timestamp: Some(TS),
        generate: true,
        tag: true,
        ts_out: true,
        xml: false,
    };
    assert_eq!(r.directives, want);
    assert_eq!(Channel::of("pmix.log.msg"), None);
}

// ---------------------------------------------------------------------------
// stdout/stderr formats
// ---------------------------------------------------------------------------

#[test]
fn log_format_plain() {
    let p = src();
    assert_eq!(
        format_std(Channel::Stdout, "hello", &d(), &p, NOW),
        "hello\n"
    );
    // One trailing newline is not doubled; a second one is a blank line.
    assert_eq!(
        format_std(Channel::Stdout, "hello\n", &d(), &p, NOW),
        "hello\n"
    );
    assert_eq!(
        format_std(Channel::Stdout, "hello\n\n", &d(), &p, NOW),
        "hello\n\n"
    );
    assert_eq!(format_std(Channel::Stdout, "a\nb", &d(), &p, NOW), "a\nb\n");
    assert_eq!(format_std(Channel::Stdout, "", &d(), &p, NOW), "\n");
    // NUL bytes are data.
    assert_eq!(format_std(Channel::Stderr, "a\0b", &d(), &p, NOW), "a\0b\n");
}

#[test]
fn log_format_tag() {
    let t = Directives { tag: true, ..d() };
    assert_eq!(
        format_std(Channel::Stdout, "hi\n", &t, &src(), NOW),
        "[job-1,3]<stdout>: hi\n"
    );
    assert_eq!(
        format_std(Channel::Stderr, "hi", &t, &src(), NOW),
        "[job-1,3]<stderr>: hi\n"
    );
}

#[test]
fn log_format_timestamp() {
    let p = src();
    let out = Directives {
        ts_out: true,
        ..d()
    };
    assert_eq!(
        format_std(Channel::Stdout, "hi", &out, &p, NOW),
        "2026-11-22T10:00:00Z hi\n"
    );
    let given = Directives {
        ts_out: true,
        timestamp: Some(TS),
        ..d()
    };
    assert_eq!(
        format_std(Channel::Stdout, "hi", &given, &p, NOW),
        "2026-11-22T11:00:30Z hi\n"
    );
    // A time the caller gives, or asks to be generated, stamps the line too.
    let only = Directives {
        timestamp: Some(TS),
        ..d()
    };
    assert_eq!(
        format_std(Channel::Stdout, "hi", &only, &p, NOW),
        "2026-11-22T11:00:30Z hi\n"
    );
    let gen = Directives {
        generate: true,
        ..d()
    };
    assert_eq!(
        format_std(Channel::Stdout, "hi", &gen, &p, NOW),
        "2026-11-22T10:00:00Z hi\n"
    );
}

#[test]
fn log_format_timestamp_and_tag() {
    let td = Directives {
        ts_out: true,
        tag: true,
        ..d()
    };
    let line = format_std(Channel::Stderr, "x\n", &td, &src(), NOW);
    assert_eq!(line, "2026-11-22T10:00:00Z [job-1,3]<stderr>: x\n");
}

#[test]
fn log_format_xml_escapes() {
    let x = Directives { xml: true, ..d() };
    let p = Proc::new("a&\"b'", 0).unwrap();
    let line = format_std(Channel::Stdout, "<a href='x'>&\"</a>\n", &x, &p, NOW);
    let want = "<stdout rank=\"0\" nspace=\"a&amp;&quot;b&apos;\">\
                &lt;a href=&apos;x&apos;&gt;&amp;&quot;&lt;/a&gt;</stdout>\n";
    assert_eq!(line, want);
}

#[test]
fn log_format_xml_with_time_ignores_tag() {
    let x = Directives {
        xml: true,
        tag: true,
        timestamp: Some(TS),
        ..d()
    };
    let line = format_std(Channel::Stderr, "m", &x, &src(), NOW);
    assert_eq!(
        line,
        "<stderr rank=\"3\" nspace=\"job-1\" time=\"2026-11-22T11:00:30Z\">m</stderr>\n"
    );
}

#[test]
fn log_format_huge_message() {
    let big = "z".repeat(4 << 20);
    let line = format_std(
        Channel::Stdout,
        &big,
        &Directives { tag: true, ..d() },
        &src(),
        NOW,
    );
    assert_eq!(line.len(), big.len() + "[job-1,3]<stdout>: \n".len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn log_format_never_panics_and_ends_with_one_newline(
        msg in any::<String>(), tag: bool, ts_out: bool, xml: bool, ts in any::<Option<i64>>(),
    ) {
        let dd = Directives { tag, ts_out, xml, timestamp: ts, ..d() };
        let line = format_std(Channel::Stdout, &msg, &dd, &src(), NOW);
        prop_assert!(line.ends_with('\n'));
        if !xml {
            let body = msg.strip_suffix('\n').unwrap_or(&msg);
            let tail = format!("{body}\n");
            prop_assert!(line.ends_with(&tail));
        }
    }
}

// ---------------------------------------------------------------------------
// carry_out: local writes, ONCE, statuses
// ---------------------------------------------------------------------------

#[test]
fn log_writes_stdout_and_stderr_in_order() {
    let data = [
        Info::new(PMIX_LOG_STDOUT, "one"),
        Info::new(PMIX_LOG_STDERR, "err\n"),
        Info::new(PMIX_LOG_STDOUT, "two"),
    ];
    let (o, out, err) = run(&data, &[], &no_syslog(), false);
    assert_eq!((o.status, o.written), (Status::SUCCESS, 3));
    assert!(o.to_host.is_empty() && o.host_directives.is_empty());
    assert_eq!(out.text(), "one\ntwo\n");
    assert_eq!(err.text(), "err\n");
    assert_eq!(o.finish(Status::ERROR), Status::SUCCESS); // nothing went to the host
}

/// A server whose stdout loses every line (`/dev/null`, as under a
/// daemon such as Slurm's slurmstepd) hands stdout items to the host, as
/// it does the host's own channels: the host's `log` takes them, or its
/// refusal is the call's status; never `PMIX_SUCCESS` for a lost line.
#[test]
fn log_stdout_of_a_server_that_discards_it_goes_to_the_host() {
    let req = Request::parse(&[Info::new(PMIX_LOG_STDOUT, "lost?")], &[]).expect("parse");
    let (mut s, out, _) = sinks(&no_syslog());
    s.stdout = Box::new(Discarding);
    let o = carry_out(&req, &src(), &mut s, false, NOW);
    assert_eq!(o.written, 0);
    assert_eq!(o.to_host, vec![Info::new(PMIX_LOG_STDOUT, "lost?")]);
    assert!(out.text().is_empty());
    // No `log` upcall: the host's refusal is the answer.
    assert_eq!(
        o.finish(Status::ERR_NOT_SUPPORTED),
        Status::ERR_NOT_SUPPORTED
    );
    assert_eq!(o.finish(Status::SUCCESS), Status::SUCCESS);
    // With ONCE, the lost channel's item is the one handed over.
    let req = Request::parse(
        &[
            Info::new(PMIX_LOG_STDOUT, "first"),
            Info::new(PMIX_LOG_STDERR, "second"),
        ],
        &[flag(PMIX_LOG_ONCE)],
    )
    .expect("parse");
    let o = carry_out(&req, &src(), &mut s, false, NOW);
    assert_eq!((o.written, o.to_host.len()), (0, 1));
    assert_eq!(
        o.finish(Status::ERR_NOT_SUPPORTED),
        Status::ERR_NOT_SUPPORTED
    );
}

#[test]
fn log_once_stops_at_first_local_success() {
    let data = [
        Info::new(PMIX_LOG_STDERR, "first"),
        Info::new(PMIX_LOG_STDOUT, "second"),
        Info::new(PMIX_LOG_EMAIL, Value::from(Vec::<Info>::new())),
    ];
    let (o, out, err) = run(&data, &[flag(PMIX_LOG_ONCE)], &no_syslog(), false);
    assert_eq!((o.status, o.written), (Status::SUCCESS, 1));
    assert_eq!((err.text().as_str(), out.text().as_str()), ("first\n", ""));
    assert!(o.to_host.is_empty());
}

#[test]
fn log_once_falls_back_after_a_local_failure() {
    let data = [
        Info::new(PMIX_LOG_LOCAL_SYSLOG, "s"),
        Info::new(PMIX_LOG_STDOUT, "o"),
    ];
    let (o, out, _) = run(&data, &[flag(PMIX_LOG_ONCE)], &no_syslog(), false);
    // The message was logged once, which is all ONCE asks.
    assert_eq!((o.status, o.written), (Status::SUCCESS, 1));
    assert_eq!(out.text(), "o\n");
}

#[test]
fn log_once_host_item_first_goes_alone_to_the_host() {
    let data = [
        Info::new(PMIX_LOG_LOCAL_SYSLOG, "fails"),
        Info::new(PMIX_LOG_JOB_RECORD, "rec"),
        Info::new(PMIX_LOG_GLOBAL_SYSLOG, "not sent"),
        Info::new(PMIX_LOG_STDOUT, "not written"),
    ];
    let (o, out, _) = run(&data, &[flag(PMIX_LOG_ONCE)], &no_syslog(), false);
    assert_eq!(o.to_host, vec![data[1].clone()]);
    assert_eq!((o.status, o.written), (Status::ERR_UNREACH, 0));
    assert_eq!(out.text(), "");
    assert_eq!(o.host_directives, vec![Info::new(PMIX_LOG_SOURCE, src())]);
    // The host's answer decides.
    assert_eq!(o.finish(Status::SUCCESS), Status::SUCCESS);
    assert_eq!(
        o.finish(Status::ERR_NOT_SUPPORTED),
        Status::ERR_NOT_SUPPORTED
    );
}

#[test]
fn log_absent_syslog_is_unreach() {
    let data = [Info::new(PMIX_LOG_LOCAL_SYSLOG, "s")];
    let (o, _, _) = run(&data, &[], &no_syslog(), false);
    assert_eq!((o.status, o.written), (Status::ERR_UNREACH, 0));
    // PMIX_LOG_SYSLOG without a host syslog is local, and fails the same way.
    let data = [Info::new(PMIX_LOG_SYSLOG, "s")];
    let (o, _, _) = run(&data, &[], &no_syslog(), false);
    assert_eq!((o.status, o.to_host.len()), (Status::ERR_UNREACH, 0));
}

#[test]
fn log_absent_syslog_with_stdout_is_partial_success() {
    let data = [
        Info::new(PMIX_LOG_LOCAL_SYSLOG, "s"),
        Info::new(PMIX_LOG_STDOUT, "o"),
    ];
    let (o, out, _) = run(&data, &[], &no_syslog(), false);
    assert_eq!((o.status, o.written), (Status::ERR_PARTIAL_SUCCESS, 1));
    assert_eq!(out.text(), "o\n");
}

#[test]
fn log_all_local_failures_report_the_first() {
    let req = Request::parse(
        &[
            Info::new(PMIX_LOG_STDOUT, "o"),
            Info::new(PMIX_LOG_LOCAL_SYSLOG, "s"),
        ],
        &[],
    )
    .unwrap();
    let (mut s, _, _) = sinks(&no_syslog());
    s.stdout = Box::new(Broken);
    let o = carry_out(&req, &src(), &mut s, false, NOW);
    assert_eq!((o.status, o.written), (Status::ERROR, 0));
}

#[test]
fn log_finish_combines_local_and_host_results() {
    let data = [
        Info::new(PMIX_LOG_STDOUT, "o"),
        Info::new(PMIX_LOG_JOB_RECORD, "j"),
    ];
    let (ok, _, _) = run(&data, &[], &no_syslog(), false);
    assert_eq!(ok.finish(Status::SUCCESS), Status::SUCCESS);
    assert_eq!(
        ok.finish(Status::ERR_NOT_SUPPORTED),
        Status::ERR_PARTIAL_SUCCESS
    );
    let data = [
        Info::new(PMIX_LOG_LOCAL_SYSLOG, "s"),
        Info::new(PMIX_LOG_JOB_RECORD, "j"),
    ];
    let (failed, _, _) = run(&data, &[], &no_syslog(), false);
    assert_eq!(failed.finish(Status::SUCCESS), Status::ERR_PARTIAL_SUCCESS);
    assert_eq!(
        failed.finish(Status::ERR_NOT_SUPPORTED),
        Status::ERR_UNREACH
    );
    let (host_only, _, _) = run(&data[1..], &[], &no_syslog(), false);
    assert_eq!(host_only.status, Status::SUCCESS);
    assert_eq!(
        host_only.finish(Status::ERR_NOT_SUPPORTED),
        Status::ERR_NOT_SUPPORTED
    );
}

// ---------------------------------------------------------------------------
// Local syslog
// ---------------------------------------------------------------------------

#[test]
fn log_local_syslog_datagram_is_rfc3164() {
    let dir = TempDir::new("sys");
    let (sock, path) = bind(&dir);
    let data = [Info::new(PMIX_LOG_LOCAL_SYSLOG, "disk \0full\n")];
    let (o, _, _) = run(
        &data,
        &[Info::new(PMIX_LOG_TIMESTAMP, Value::Time(TS))],
        &path,
        false,
    );
    assert_eq!((o.status, o.written), (Status::SUCCESS, 1));
    // Default LOG_ERR (3), facility LOG_USER (1): 1*8 + 3; the caller's time.
    assert_eq!(DEFAULT_PRI, libc::LOG_ERR);
    let want = format!(
        "<11>Nov 22 11:00:30 {} tester[{}]: disk \0full",
        hostname(),
        std::process::id()
    );
    assert_eq!(recv(&sock), want);
}

#[test]
fn log_syslog_pri_keeps_a_given_facility() {
    let dir = TempDir::new("fac");
    let (sock, path) = bind(&dir);
    syslog_local(&path, libc::LOG_LOCAL0 | libc::LOG_INFO, "id", "m").unwrap();
    let (pri, _, rest) = split_syslog(&recv(&sock));
    assert_eq!(pri, 16 * 8 + 6);
    assert_eq!(
        rest,
        format!("{} id[{}]: m", hostname(), std::process::id())
    );
    syslog_local(&path, libc::LOG_DEBUG, "id", "m").unwrap();
    assert_eq!(split_syslog(&recv(&sock)).0, 8 + 7);
    let bad = syslog_local(&path, 192, "id", "m").unwrap_err();
    assert_eq!(bad.kind(), io::ErrorKind::InvalidInput);
    let absent = syslog_local(&no_syslog(), 3, "id", "m").unwrap_err();
    assert_eq!(absent.kind(), io::ErrorKind::NotFound);
}

#[test]
fn log_syslog_cuts_huge_messages() {
    let dir = TempDir::new("huge");
    let (sock, path) = bind(&dir);
    let big = "é".repeat(100_000);
    syslog_local(&path, 3, "id", &big).unwrap();
    let got = recv(&sock); // valid UTF-8: cut at a character boundary
    assert!(got.len() <= fastpmix::job::log::SYSLOG_MAX && got.len() > 8_000);
    assert!(got.ends_with('é'));
}

#[test]
fn log_each_channel_uses_only_its_directives() {
    let dir = TempDir::new("mix");
    let (sock, path) = bind(&dir);
    let data = [
        Info::new(PMIX_LOG_SYSLOG, "to syslog"),
        Info::new(PMIX_LOG_STDOUT, "to stdout"),
        Info::new(PMIX_LOG_STDERR, "to stderr"),
    ];
    let dirs = [
        Info::new(PMIX_LOG_SYSLOG_PRI, libc::LOG_WARNING),
        flag(PMIX_LOG_TAG_OUTPUT),
        flag(PMIX_LOG_XML_OUTPUT),
    ];
    let req = Request::parse(&data, &dirs).unwrap();
    let (mut s, out, err) = sinks(&path);
    let o = carry_out(&req, &src(), &mut s, false, NOW);
    assert_eq!((o.status, o.written), (Status::SUCCESS, 3));
    let (pri, _, rest) = split_syslog(&recv(&sock));
    assert_eq!(pri, 8 + 4); // PRI applies; tag and XML do not
    assert_eq!(
        rest,
        format!("{} tester[{}]: to syslog", hostname(), std::process::id())
    );
    assert_eq!(
        out.text(),
        "<stdout rank=\"3\" nspace=\"job-1\">to stdout</stdout>\n"
    );
    assert_eq!(
        err.text(),
        "<stderr rank=\"3\" nspace=\"job-1\">to stderr</stderr>\n"
    );
    // Without XML the tag shows, and the priority never does.
    let req = Request::parse(&data[1..], &dirs[..2]).unwrap();
    let (mut s, out, _) = sinks(&path);
    carry_out(&req, &src(), &mut s, false, NOW);
    assert_eq!(out.text(), "[job-1,3]<stdout>: to stdout\n");
}

// ---------------------------------------------------------------------------
// Host forwarding
// ---------------------------------------------------------------------------

#[test]
fn log_host_items_are_forwarded_with_their_directives() {
    let email = Value::from(vec![
        Info::new(PMIX_LOG_EMAIL_ADDR, "ops@example.org"),
        Info::new(PMIX_LOG_MSG, "body"),
    ]);
    let data = [
        Info::new(PMIX_LOG_EMAIL, email),
        Info::new(PMIX_LOG_STDOUT, "local"),
        Info::new(PMIX_LOG_SYSLOG, "global"),
        Info::new(PMIX_LOG_JOB_RECORD, "rec"),
    ];
    let dirs = [
        Info::new(PMIX_LOG_SYSLOG_PRI, libc::LOG_CRIT),
        flag(PMIX_LOG_GENERATE_TIMESTAMP),
        flag(PMIX_LOG_TAG_OUTPUT),
    ];
    let (o, out, _) = run(&data, &dirs, &no_syslog(), true);
    assert_eq!((o.status, o.written), (Status::SUCCESS, 1));
    assert_eq!(
        out.text(),
        "2026-11-22T10:00:00Z [job-1,3]<stdout>: local\n"
    );
    assert_eq!(
        o.to_host,
        vec![data[0].clone(), data[2].clone(), data[3].clone()]
    );
    let want = vec![
        Info::new(PMIX_LOG_SOURCE, src()),
        Info::new(PMIX_LOG_TIMESTAMP, Value::Time(NOW)),
        Info::new(PMIX_LOG_SYSLOG_PRI, libc::LOG_CRIT),
    ];
    assert_eq!(o.host_directives, want);
}

#[test]
fn log_host_gets_no_syslog_pri_without_a_syslog_item() {
    let data = [Info::new(PMIX_LOG_JOB_RECORD, "rec")];
    let dirs = [
        Info::new(PMIX_LOG_SYSLOG_PRI, 1),
        Info::new(PMIX_LOG_TIMESTAMP, Value::Time(TS)),
        flag(PMIX_LOG_XML_OUTPUT),
    ];
    let (o, _, _) = run(&data, &dirs, &no_syslog(), false);
    let want = vec![
        Info::new(PMIX_LOG_SOURCE, src()),
        Info::new(PMIX_LOG_TIMESTAMP, Value::Time(TS)),
    ];
    assert_eq!(o.host_directives, want);
}

// ---------------------------------------------------------------------------
// Job record
// ---------------------------------------------------------------------------

#[test]
fn log_job_record_appends_lines_in_order() {
    let dir = TempDir::new("rec");
    let path = dir.0.join("job.record");
    append_job_record(&path, &src(), NOW, "started\n").unwrap();
    let odd = Proc::new("ns\twith tab", 0).unwrap();
    append_job_record(&path, &odd, TS, "two\nlines \\ and\0nul").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let want = "2026-11-22T10:00:00Z\tjob-1\t3\tstarted\n\
                2026-11-22T11:00:30Z\tns\\twith tab\t0\ttwo\\nlines \\\\ and\\x00nul\n";
    assert_eq!(text, want);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn log_job_record_refuses_a_symlink() {
    let dir = TempDir::new("link");
    let target = dir.0.join("target");
    std::fs::write(&target, "").unwrap();
    let link = dir.0.join("record");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(append_job_record(&link, &src(), NOW, "x").is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
}

/// A FIFO at the record's name nobody reads is refused at once (a blocking
/// open for writing would wait for a reader for good), and so is one with
/// a reader, which gets no byte.
#[test]
fn log_job_record_refuses_a_fifo_without_blocking_and_writes_nothing_into_it() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = TempDir::new("fifo");
    let fifo = dir.0.join("record");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap();
    let e = append_job_record(&fifo, &src(), NOW, "x").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENXIO), "no reader: {e}");
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let e = append_job_record(&fifo, &src(), NOW, "secret").unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let mut got = Vec::new();
    let _ = reader.read_to_end(&mut got);
    assert!(got.is_empty(), "the reader got {got:?}");
}

/// A second link to the record file (which could make it another file's
/// name) is refused, and so is a file of another uid (as root: the file is
/// given to the second test uid).
#[test]
fn log_job_record_refuses_a_hard_link_and_another_users_file() {
    let dir = TempDir::new("owner");
    let path = dir.0.join("record");
    std::fs::write(&path, "").unwrap();
    let twin = dir.0.join("twin");
    std::fs::hard_link(&path, &twin).unwrap();
    let e = append_job_record(&path, &src(), NOW, "x").unwrap_err();
    assert!(e.to_string().contains("2 links"), "{e}");
    std::fs::remove_file(&twin).unwrap();
    append_job_record(&path, &src(), NOW, "mine").unwrap();
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("not root: the other-owner case is skipped");
        return;
    }
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    let e = append_job_record(&path, &src(), NOW, "secret").unwrap_err();
    assert!(e.to_string().contains("owned by uid 65534"), "{e}");
    assert!(!std::fs::read_to_string(&path).unwrap().contains("secret"));
}

/// The launcher's record file is created only where nothing is: not over
/// a file, a FIFO or a dangling symbolic link.
#[test]
fn a_job_record_file_is_created_only_where_nothing_exists() {
    use fastpmix::job::log::create_job_record;
    let dir = TempDir::new("create");
    let fresh = dir.0.join("fresh");
    create_job_record(&fresh).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let m = std::fs::metadata(&fresh).unwrap();
    assert_eq!((m.len(), m.permissions().mode() & 0o777), (0, 0o600));
    assert!(create_job_record(&fresh).is_err(), "an existing file");
    let fifo = dir.0.join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap();
    assert!(create_job_record(&fifo).is_err(), "a FIFO");
    let link = dir.0.join("link");
    std::os::unix::fs::symlink(dir.0.join("nowhere"), &link).unwrap();
    assert!(create_job_record(&link).is_err(), "a dangling link");
    assert!(!dir.0.join("nowhere").exists(), "nothing made through it");
}
