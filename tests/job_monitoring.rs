//! `PMIx_Process_monitor` between real processes: heartbeat, file and
//! resource-usage monitors on the server's progress thread. The test
//! process embeds the server; clients are this binary re-executed
//! (`tests/procs`).
//!
//! Negative checks ("no alert reached X") are ordered where they can be:
//! once the server's alert has reached one process, the server sends a
//! sentinel event; every client ring is FIFO, so a client that saw the
//! sentinel would have seen the alert before it. Checks that something
//! stops ("no more updates") wait a grace period of more than two update
//! periods after such a sentinel: on a slow machine they may miss a bug,
//! never fail a correct server. No duration is asserted.

mod common;
mod procs;

use common::host::{Answers, RecordingHost, Reply};
use fastpmix::event::Notification;
use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Proc, Status};
use procs::{ClientProc, HANG, ROLE_ENV};
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD: &str = "child_client";
const SENTINEL: i32 = -5000;
const HB_ALERT: i32 = Status::MONITOR_HEARTBEAT_ALERT.0;
const FILE_ALERT: i32 = Status::MONITOR_FILE_ALERT.0;
const USAGE: i32 = Status::MONITOR_RESUSAGE_UPDATE.0;
/// Longer than two update periods of one second.
const GRACE: Duration = Duration::from_millis(2500);

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).is_ok() {
        procs::client_main();
    }
}

/// Records monitor alerts and finalizations; `terminate` is its answer to
/// `monitor_alert`. Monitors handed to it are refused with a reason.
fn recorder(terminate: bool) -> Arc<RecordingHost> {
    RecordingHost::with(Answers {
        terminate,
        monitor: Reply::With(
            Status::ERR_NOT_SUPPORTED,
            vec![Info::new(
                fastpmix::job::REASON,
                "not supported by the test host",
            )],
        ),
        ..Answers::default()
    })
}

use procs::ids;

struct Node {
    server: Server,
    host: Arc<RecordingHost>,
    clients: Vec<ClientProc>,
}

/// A server with the namespaces `spec` names (`(ns, ranks)`), every rank a
/// connected client process, in that order.
fn node(spec: &[(&str, u32)], terminate: bool) -> Node {
    let host = recorder(terminate);
    let server = Server::builder().host(host.clone()).start().unwrap();
    let clients = procs::spawn_clients(&server, CHILD, spec);
    Node {
        server,
        host,
        clients,
    }
}

impl Node {
    /// A server-sourced sentinel to `c` only (custom range); returns once
    /// `c` saw it, with the lines it printed before it (the sentinel's
    /// own line removed).
    fn sentinel(&mut self, i: usize) -> Vec<String> {
        let c = &mut self.clients[i];
        let n = Notification::new(Status(SENTINEL), self.server.me(), DataRange::CUSTOM)
            .info(Info::new(attrs::PMIX_EVENT_CUSTOM_RANGE, vec![c.proc]));
        self.server.notify_as_server(n).unwrap();
        c.expect(&format!("EVENT code={SENTINEL} "));
        std::mem::take(&mut c.seen)
    }
}

/// `MONITOR <args>` → (status, results as printed).
fn monitor(c: &mut ClientProc, args: &str) -> (i32, String) {
    c.send(&format!("MONITOR {args}"));
    let l = c.expect("MONITOR_RESULT ");
    let mut w = l.splitn(3, ' ').skip(1);
    let s = w.next().unwrap().parse().unwrap();
    (s, w.next().unwrap_or("").to_owned())
}

fn watch(c: &mut ClientProc, code: i32) {
    c.send(&format!("WATCH_INFO {code}"));
    let l = c.expect("WATCHING ");
    let r: i64 = l["WATCHING ".len()..].parse().unwrap();
    assert!(r >= 0, "{}: WATCH_INFO {code} -> {l}", c.proc);
}

/// The value of `name=` in a `CAUGHT_INFO`/result line (up to the next
/// space or `;`; a bracketed array whole).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let pat = format!("{name}=");
    let at = line
        .match_indices(&pat)
        .find(|(i, _)| *i == 0 || matches!(line.as_bytes()[i - 1], b' ' | b';' | b'['))
        .map(|(i, _)| i + pat.len())?;
    let rest = &line[at..];
    if rest.starts_with('[') {
        let mut depth = 0;
        for (i, ch) in rest.char_indices() {
            match ch {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(&rest[1..i]);
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    let end = rest.find([' ', ';']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Top-level elements of a printed info list (`k=v;k=[..];...`).
fn elements(list: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, ch) in list.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ';' if depth == 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < list.len() {
        out.push(&list[start..]);
    }
    out
}

/// The number inside a printed value such as `Pid(12)` or `Float(1.5)`.
fn number(v: &str) -> f64 {
    let inner = v
        .split_once('(')
        .and_then(|(_, r)| r.strip_suffix(')'))
        .unwrap_or(v);
    inner
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {v}"))
}

/// The silent periods (or unchanged checks) an alert's text reports: the
/// number before `period(s)` / `check(s)`.
fn count_in_text(text: &str, unit: &str) -> u32 {
    let words: Vec<&str> = text.split('~').collect();
    let i = words
        .iter()
        .position(|w| w.starts_with(unit))
        .unwrap_or_else(|| panic!("no {unit} in {text:?}"));
    words[i - 1]
        .parse()
        .unwrap_or_else(|_| panic!("no count before {unit} in {text:?}"))
}

fn caught(lines: &[String], code: i32) -> Vec<String> {
    let pre = format!("CAUGHT_INFO code={code} ");
    lines
        .iter()
        .filter(|l| l.starts_with(&pre))
        .cloned()
        .collect()
}

fn events(lines: &[String], code: i32) -> Vec<String> {
    let pre = format!("code={code} ");
    lines
        .iter()
        .filter(|l| l.contains(&pre) && !l.contains(&format!("code={SENTINEL} ")))
        .cloned()
        .collect()
}

fn temp_path(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("fastpmix-mon-{tag}-{}", std::process::id()))
}

const BEAT_MON: &str = "pmix.monitor.mbeat=null";

// ---------------------------------------------------------------- heartbeat

#[test]
fn heartbeat_alert_after_exactly_drops_plus_one_silent_periods() {
    let mut n = node(&[("hb-a", 2), ("hb-b", 1)], false);
    for c in n.clients.iter_mut() {
        watch(c, HB_ALERT);
    }
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!(
            "{BEAT_MON} 0 pmix.monitor.btime=u32:1 pmix.monitor.bdrop=u32:1 pmix.monitor.appctrl=b:1"
        ),
    );
    assert_eq!(s, 0, "{why}");
    let server = n.server.me().to_string();
    let me = n.clients[0].proc.to_string();
    for i in 0..2 {
        let l = n.clients[i].expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
        assert_eq!(field(&l, "source"), Some(server.as_str()), "{l}");
        assert_eq!(field(&l, "affected"), Some(me.as_str()), "{l}");
        let text = field(&l, attrs::PMIX_EVENT_TEXT_MESSAGE.as_str()).expect("a text message");
        assert_eq!(count_in_text(text, "period"), 2, "DROPS + 1 = 2: {l}");
    }
    // Another namespace is out of the default NAMESPACE range.
    let before = n.sentinel(2);
    assert!(events(&before, HB_ALERT).is_empty(), "{before:?}");
    // The host is not asked to act: the application controls.
    assert!(n.host.alerts.lock().unwrap().is_empty());
}

#[test]
fn heartbeat_alert_is_raised_once_per_stall_and_rearmed_by_a_beat() {
    let mut n = node(&[("hb-once", 1)], false);
    watch(&mut n.clients[0], HB_ALERT);
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!("{BEAT_MON} 0 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1"),
    );
    assert_eq!(s, 0, "{why}");
    let c = &mut n.clients[0];
    let first = c.expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
    assert_eq!(
        count_in_text(
            field(&first, attrs::PMIX_EVENT_TEXT_MESSAGE.as_str()).unwrap(),
            "period"
        ),
        1,
        "DROPS 0: one silent period: {first}"
    );
    // Still silent for more periods: no second alert.
    let _ = c.events_within(GRACE);
    assert!(caught(&c.seen, HB_ALERT).is_empty(), "{:?}", c.seen);
    // A beat by PMIx_Process_monitor(PMIX_SEND_HEARTBEAT) re-arms it.
    let (s, _) = monitor(c, "pmix.monitor.beat=null 0");
    assert_eq!(s, 0);
    c.expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
}

#[test]
fn heartbeat_none_while_beating() {
    let mut n = node(&[("hb-beat", 1)], false);
    let c = &mut n.clients[0];
    watch(c, HB_ALERT);
    // 40 beats, 100 ms apart: never a silent period of one second.
    c.send("BEAT_EVERY 100 40");
    let (s, why) = monitor(
        c,
        &format!(
            "{BEAT_MON} 0 pmix.monitor.btime=u32:1 pmix.monitor.bdrop=u32:1 pmix.monitor.appctrl=b:1"
        ),
    );
    assert_eq!(s, 0, "{why}");
    c.expect("BEATS_DONE");
    let early = caught(&c.seen, HB_ALERT);
    assert!(early.is_empty(), "alert while beating: {early:?}");
    // Once the beats stop, the alert comes.
    let l = c.expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
    let text = field(&l, attrs::PMIX_EVENT_TEXT_MESSAGE.as_str()).unwrap();
    assert_eq!(count_in_text(text, "period"), 2, "{l}");
}

#[test]
fn heartbeat_without_time_is_bad_param() {
    let mut n = node(&[("hb-notime", 1)], false);
    let c = &mut n.clients[0];
    for (args, why_part) in [
        (format!("{BEAT_MON} 0"), "needs~PMIX_MONITOR_HEARTBEAT_TIME"),
        (
            format!("{BEAT_MON} 0 pmix.monitor.bdrop=u32:1"),
            "needs~PMIX_MONITOR_HEARTBEAT_TIME",
        ),
        (
            format!("{BEAT_MON} 0 pmix.monitor.btime=u32:0"),
            "positive~number~of~seconds",
        ),
    ] {
        let (s, why) = monitor(c, &args);
        assert_eq!(s, Status::ERR_BAD_PARAM.0, "{args}: {why}");
        assert!(why.contains(why_part), "{args}: {why}");
    }
    // Nothing was set up: the process stays silent and hears nothing.
    watch(c, HB_ALERT);
    let _ = c.events_within(GRACE);
    assert!(caught(&c.seen, HB_ALERT).is_empty(), "{:?}", c.seen);
}

#[test]
fn heartbeat_alert_uses_the_callers_error_code_when_given() {
    let mut n = node(&[("hb-code", 1)], false);
    watch(&mut n.clients[0], -3100);
    watch(&mut n.clients[0], HB_ALERT);
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!("{BEAT_MON} -3100 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1"),
    );
    assert_eq!(s, 0, "{why}");
    let l = n.clients[0].expect("CAUGHT_INFO code=-3100 ");
    assert_eq!(
        field(&l, "affected"),
        Some(n.clients[0].proc.to_string().as_str())
    );
    // Its own code only, not the default one as well.
    let before = n.sentinel(0);
    assert!(caught(&before, HB_ALERT).is_empty(), "{before:?}");
}

#[test]
fn heartbeat_stall_without_app_control_lets_the_host_terminate() {
    let mut n = node(&[("hb-term", 2)], true);
    let (s, why) = monitor(
        &mut n.clients[1],
        &format!("{BEAT_MON} 0 pmix.monitor.btime=u32:1"),
    );
    assert_eq!(s, 0, "{why}");
    // Not a bare wait: a server that never asks the host must not hang.
    let deadline = Instant::now() + HANG;
    while n.host.alerts.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the host was never asked");
        std::thread::sleep(Duration::from_millis(10));
    }
    let st = n.clients[1].wait_exit();
    assert_eq!(st.signal(), Some(libc::SIGTERM), "{st:?}");
    let alerts = n.host.alerts.lock().unwrap().clone();
    assert_eq!(alerts.len(), 1, "host asked once");
    let (p, ev) = &alerts[0];
    assert_eq!(*p, n.clients[1].proc);
    assert_eq!(ev.code.0, HB_ALERT);
    assert_eq!(ev.source, n.server.me());
    // The other process lives on.
    n.clients[0].send("PING");
    n.clients[0].expect("PONG");
}

#[test]
fn heartbeat_stall_with_app_control_is_left_to_the_application() {
    let mut n = node(&[("hb-app", 1)], true);
    watch(&mut n.clients[0], HB_ALERT);
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!("{BEAT_MON} 0 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1"),
    );
    assert_eq!(s, 0, "{why}");
    n.clients[0].expect(&format!("CAUGHT_INFO code={HB_ALERT} "));
    // A request the progress thread answers after the tick that raised the
    // alert (and asked the host, if it was going to): cancel them all.
    let (s, why) = monitor(&mut n.clients[0], "pmix.monitor.cancel=s: 0");
    assert_eq!(s, 0, "{why}");
    assert!(
        n.host.alerts.lock().unwrap().is_empty(),
        "the host was asked to act on an APP_CONTROL monitor"
    );
    n.clients[0].send("PING");
    n.clients[0].expect("PONG");
}

// --------------------------------------------------------------------- file

fn file_args(path: &std::path::Path, drops: u32) -> String {
    format!(
        "pmix.monitor.fchg=null 0 pmix.monitor.fmon=s:{} pmix.monitor.ftime=u32:1 pmix.monitor.fdrop=u32:{drops}",
        path.display()
    )
}

#[test]
fn file_alert_after_drops_unchanged_checks_names_the_file() {
    let path = temp_path("still");
    std::fs::write(&path, b"x").unwrap();
    let mut n = node(&[("fm-still", 2)], false);
    for c in n.clients.iter_mut() {
        watch(c, FILE_ALERT);
    }
    let (s, why) = monitor(&mut n.clients[0], &file_args(&path, 2));
    assert_eq!(s, 0, "{why}");
    let server = n.server.me().to_string();
    let me = n.clients[0].proc.to_string();
    let name = path.display().to_string();
    for c in n.clients.iter_mut() {
        let l = c.expect(&format!("CAUGHT_INFO code={FILE_ALERT} "));
        assert_eq!(field(&l, "source"), Some(server.as_str()), "{l}");
        assert_eq!(field(&l, "affected"), Some(me.as_str()), "{l}");
        assert_eq!(
            field(&l, attrs::PMIX_MONITOR_TARGET_FILES.as_str()),
            Some(name.as_str()),
            "{l}"
        );
        let text = field(&l, attrs::PMIX_EVENT_TEXT_MESSAGE.as_str()).unwrap();
        assert_eq!(count_in_text(text, "check"), 2, "{l}");
    }
    let _ = std::fs::remove_file(&path);
}

/// JOB-41 with two files in one monitor: each is checked on its own. The
/// one left alone alerts, naming itself alone, while the other keeps
/// changing; the other alerts once it stops.
#[test]
fn a_file_monitor_of_two_files_alerts_for_each_on_its_own() {
    let (still, busy) = (temp_path("pair-still"), temp_path("pair-busy"));
    std::fs::write(&still, b"x").unwrap();
    std::fs::write(&busy, b"x").unwrap();
    let mut n = node(&[("fm-pair", 1)], false);
    watch(&mut n.clients[0], FILE_ALERT);
    let args = format!(
        "pmix.monitor.fchg=null 0 pmix.monitor.fmon=s:{},{} pmix.monitor.ftime=u32:1 pmix.monitor.fdrop=u32:2",
        still.display(),
        busy.display()
    );
    let (s, why) = monitor(&mut n.clients[0], &args);
    assert_eq!(s, 0, "{why}");
    // One file changes 5 times per check period until the other, which
    // needs two unchanged checks, has alerted.
    // Dropping `stop` ends the appender.
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let appender = {
        let busy = busy.clone();
        std::thread::spawn(move || {
            while stopped.try_recv() == Err(std::sync::mpsc::TryRecvError::Empty) {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&busy)
                    .unwrap();
                f.write_all(b"more\n").unwrap();
                drop(f);
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let files = |l: &str| field(l, attrs::PMIX_MONITOR_TARGET_FILES.as_str()).map(str::to_owned);
    let first = n.clients[0].expect(&format!("CAUGHT_INFO code={FILE_ALERT} "));
    drop(stop);
    appender.join().unwrap();
    assert_eq!(files(&first), Some(still.display().to_string()), "{first}");
    let second = n.clients[0].expect(&format!("CAUGHT_INFO code={FILE_ALERT} "));
    assert_eq!(files(&second), Some(busy.display().to_string()), "{second}");
    let _ = std::fs::remove_file(&still);
    let _ = std::fs::remove_file(&busy);
}

#[test]
fn file_no_alert_while_changing() {
    let path = temp_path("busy");
    std::fs::write(&path, b"x").unwrap();
    let mut n = node(&[("fm-busy", 1)], false);
    watch(&mut n.clients[0], FILE_ALERT);
    let (s, why) = monitor(&mut n.clients[0], &file_args(&path, 2));
    assert_eq!(s, 0, "{why}");
    // Appends for ~3 s, 5 per check period; an alert needs two checks
    // in a row that see no change.
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
    assert!(
        caught(&during, FILE_ALERT).is_empty(),
        "alert while the file changed: {during:?}"
    );
    // Once it stops changing, the alert comes.
    let l = n.clients[0].expect(&format!("CAUGHT_INFO code={FILE_ALERT} "));
    assert_eq!(
        field(&l, attrs::PMIX_MONITOR_TARGET_FILES.as_str()),
        Some(path.display().to_string().as_str())
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn file_monitor_on_missing_file_is_not_found() {
    let path = temp_path("missing");
    let _ = std::fs::remove_file(&path);
    let mut n = node(&[("fm-missing", 1)], false);
    let (s, why) = monitor(&mut n.clients[0], &file_args(&path, 1));
    assert_eq!(s, Status::ERR_NOT_FOUND.0, "{why}");
}

// ----------------------------------------------------------- resource usage

/// The entries of /proc/PID/task.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .count()
}

#[test]
fn proc_resource_usage_matches_proc() {
    let mut n = node(&[("ru-proc", 2)], false);
    let target = n.clients[1].proc;
    let pid = n.clients[1].pid();
    let before = threads(pid);
    let (s, res) = monitor(
        &mut n.clients[0],
        &format!("pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:{target}"),
    );
    let after = threads(pid);
    assert_eq!(s, 0, "{res}");
    let top = elements(&res);
    assert_eq!(top.len(), 1, "one report: {res}");
    let report = field(top[0], attrs::PMIX_PROC_RESOURCE_USAGE.as_str()).expect(top[0]);
    let items = elements(report);
    assert_eq!(
        items[0],
        format!("{}={target}", attrs::PMIX_PROCID.as_str()),
        "the proc first: {report}"
    );
    let got_pid = field(report, attrs::PMIX_PROC_PID.as_str()).expect(report);
    assert_eq!(number(got_pid) as u32, pid, "{report}");
    let nthr = number(field(report, attrs::PMIX_PROC_NUM_THREADS.as_str()).expect(report)) as usize;
    assert!(
        (before.min(after)..=before.max(after)).contains(&nthr),
        "{nthr} threads reported, /proc/{pid}/task had {before} then {after}"
    );
    assert!(field(report, attrs::PMIX_PROC_SAMPLE_TIME.as_str()).is_some());
}

/// MemTotal and SwapTotal of /proc/meminfo, in MBytes of 2^20 bytes.
fn meminfo_totals() -> (f64, f64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb = |name: &str| -> f64 {
        let l = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}:")))
            .unwrap();
        l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1024.0
    };
    (kb("MemTotal"), kb("SwapTotal"))
}

#[test]
fn node_resource_usage_matches_meminfo() {
    let mut n = node(&[("ru-node", 1)], false);
    let (s, res) = monitor(&mut n.clients[0], "pmix.monitor.ndresuse=null 0");
    assert_eq!(s, 0, "{res}");
    let top = elements(&res);
    assert_eq!(top.len(), 1, "one report: {res}");
    let report = field(top[0], attrs::PMIX_NODE_RESOURCE_USAGE.as_str()).expect(top[0]);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(
        elements(report)[0],
        format!("{}={}", attrs::PMIX_HOSTNAME.as_str(), host.trim()),
        "the node first: {report}"
    );
    let (mem, swap) = meminfo_totals();
    let got = |k: &fastpmix::Key| number(field(report, k.as_str()).expect(report));
    // f32 in the report: a relative tolerance.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.max(1.0);
    assert!(
        close(got(&attrs::PMIX_NODE_MEM_TOTAL), mem),
        "{mem}: {report}"
    );
    assert!(
        close(got(&attrs::PMIX_NODE_MEM_SWAP_TOTAL), swap),
        "{swap}: {report}"
    );
    assert!(field(report, attrs::PMIX_NODE_SAMPLE_TIME.as_str()).is_some());
}

#[test]
fn resource_usage_updates_arrive_every_rate_and_stop_on_cancel_by_id() {
    let mut n = node(&[("ru-rate", 1)], false);
    watch(&mut n.clients[0], USAGE);
    let (s, res) = monitor(
        &mut n.clients[0],
        "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:1 pmix.monitor.id=s:u1",
    );
    assert_eq!(s, 0, "{res}");
    assert!(
        field(&res, attrs::PMIX_NODE_RESOURCE_USAGE.as_str()).is_some(),
        "{res}"
    );
    let c = &mut n.clients[0];
    c.send(&format!("AWAIT {USAGE} 2"));
    let l = c.expect(&format!("AWAITED {USAGE} "));
    assert!(number(l.rsplit(' ').next().unwrap()) >= 2.0, "{l}");
    let updates = caught(&c.seen, USAGE);
    assert!(updates.len() >= 2, "{:?}", c.seen);
    let server = n.server.me().to_string();
    for u in &updates {
        assert_eq!(field(u, "source"), Some(server.as_str()), "{u}");
        assert_eq!(field(u, attrs::PMIX_MONITOR_ID.as_str()), Some("u1"), "{u}");
        assert!(
            field(u, attrs::PMIX_NODE_RESOURCE_USAGE.as_str()).is_some(),
            "{u}"
        );
    }
    let (s, why) = monitor(c, "pmix.monitor.cancel=s:u1 0");
    assert_eq!(s, 0, "{why}");
    // Whatever was sent before the cancel took effect is flushed by the
    // sentinel; nothing may follow it.
    let _ = n.sentinel(0);
    let c = &mut n.clients[0];
    let late = c.events_within(GRACE);
    assert!(
        events(&late, USAGE).is_empty(),
        "update after cancel: {late:?}"
    );
    assert!(caught(&c.seen, USAGE).is_empty(), "{:?}", c.seen);
}

#[test]
fn cancel_unknown_id_is_not_found() {
    let mut n = node(&[("ru-cancel", 2)], false);
    let (s, why) = monitor(&mut n.clients[0], "pmix.monitor.cancel=s:nope 0");
    assert_eq!(s, Status::ERR_NOT_FOUND.0, "{why}");
    // Another process's ID is unknown to this one, and its monitor stays.
    watch(&mut n.clients[0], USAGE);
    let (s, why) = monitor(
        &mut n.clients[0],
        "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:1 pmix.monitor.id=s:mine",
    );
    assert_eq!(s, 0, "{why}");
    let (s, why) = monitor(&mut n.clients[1], "pmix.monitor.cancel=s:mine 0");
    assert_eq!(s, Status::ERR_NOT_FOUND.0, "{why}");
    let _ = n.sentinel(0);
    n.clients[0].expect(&format!("CAUGHT_INFO code={USAGE} "));
}

#[test]
fn usage_of_another_uid_is_refused() {
    if ids().0 != 0 {
        println!("skipped: needs root to run a second uid");
        return;
    }
    let server = Server::builder().start().unwrap();
    if !procs::peer_can_run_this_binary() {
        println!(
            "skipped: the second uid cannot execute this test binary (checkout not world-traversable)"
        );
        return;
    }
    let (mut r, mut u) = procs::two_uid_clients(&server, CHILD, "ru-uid-root", "ru-uid-nobody");
    let (root, nobody) = (r.proc, u.proc);
    let ask = |c: &mut ClientProc, p: &Proc| {
        monitor(
            c,
            &format!("pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:{p}"),
        )
    };
    let (s, why) = ask(&mut u, &root);
    assert_eq!(s, Status::ERR_NO_PERMISSIONS.0, "{why}");
    // By pid too (the owner of /proc/PID decides).
    let by_pid = |c: &mut ClientProc, pid: u32| {
        monitor(
            c,
            &format!("pmix.monitor.presuse=null 0 pmix.monitor.tgtpid=infos:pid=u32:{pid}"),
        )
    };
    let (s, why) = by_pid(&mut u, r.pid());
    assert_eq!(s, Status::ERR_NO_PERMISSIONS.0, "{why}");
    let (s, res) = by_pid(&mut r, u.pid());
    assert_eq!(s, 0, "{res}");
    let report = field(&res, attrs::PMIX_PROC_RESOURCE_USAGE.as_str()).expect(&res);
    assert_eq!(
        elements(report)[0],
        format!("{}=Pid({})", attrs::PMIX_PROC_PID.as_str(), u.pid()),
        "{res}"
    );
    // Its own usage, yes; and root may see anyone's.
    let (s, why) = ask(&mut u, &nobody);
    assert_eq!(s, 0, "{why}");
    let (s, res) = ask(&mut r, &nobody);
    assert_eq!(s, 0, "{res}");
    assert!(
        res.contains(&format!("{}={nobody}", attrs::PMIX_PROCID.as_str())),
        "{res}"
    );
    // With no target, the second uid sees its own process only.
    let (s, res) = monitor(&mut u, "pmix.monitor.presuse=null 0");
    assert_eq!(s, 0, "{res}");
    assert_eq!(elements(&res).len(), 1, "{res}");
    assert!(
        res.contains(&format!("{}={nobody}", attrs::PMIX_PROCID.as_str())),
        "{res}"
    );
}

#[test]
fn resource_usage_updates_go_to_the_requester_unless_a_range_says_otherwise() {
    let mut n = node(&[("ru-range", 2), ("ru-other", 1)], false);
    for c in n.clients.iter_mut() {
        watch(c, USAGE);
    }
    // Default: range CUSTOM, the requester only.
    let (s, why) = monitor(
        &mut n.clients[0],
        "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:1 pmix.monitor.id=s:own",
    );
    assert_eq!(s, 0, "{why}");
    n.clients[0].expect(&format!("CAUGHT_INFO code={USAGE} "));
    let peer = n.sentinel(1);
    assert!(events(&peer, USAGE).is_empty(), "{peer:?}");
    let (s, why) = monitor(&mut n.clients[0], "pmix.monitor.cancel=s:own 0");
    assert_eq!(s, 0, "{why}");
    // PMIX_RANGE NAMESPACE: the requester's namespace, not another one.
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!(
            "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:1 pmix.range=range:{}",
            DataRange::NAMESPACE.0
        ),
    );
    assert_eq!(s, 0, "{why}");
    let l = n.clients[1].expect(&format!("CAUGHT_INFO code={USAGE} "));
    assert_eq!(
        field(&l, "source"),
        Some(n.server.me().to_string().as_str())
    );
    let other = n.sentinel(2);
    assert!(events(&other, USAGE).is_empty(), "{other:?}");
}

// ----------------------------------------------------------------- lifetime

#[test]
fn monitors_end_when_their_process_finalizes() {
    let mut n = node(&[("mon-end", 2)], false);
    watch(&mut n.clients[1], USAGE);
    // Range LOCAL: rank 1 sees rank 0's updates.
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!(
            "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:1 pmix.range=range:{}",
            DataRange::LOCAL.0
        ),
    );
    assert_eq!(s, 0, "{why}");
    n.clients[1].expect(&format!("CAUGHT_INFO code={USAGE} "));
    n.clients[0].finalize();
    // The server ended the monitors before it told the host.
    let who = n.clients[0].proc;
    let deadline = Instant::now() + HANG;
    while n.host.finalized_of(&who).is_empty() {
        assert!(Instant::now() < deadline, "never finalized");
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = n.sentinel(1);
    let c = &mut n.clients[1];
    let late = c.events_within(GRACE);
    assert!(
        events(&late, USAGE).is_empty(),
        "update for a finalized owner: {late:?}"
    );
    assert!(caught(&c.seen, USAGE).is_empty(), "{:?}", c.seen);
    // The server still serves the others.
    let (s, res) = monitor(c, "pmix.monitor.ndresuse=null 0");
    assert_eq!(s, 0, "{res}");
}

// ---------------------------------------------------------------- bad input

#[test]
fn monitor_bad_input_gets_a_status_and_the_server_keeps_serving() {
    let mut n = node(&[("mon-bad", 2)], false);
    let c = &mut n.clients[0];
    let bad = Status::ERR_BAD_PARAM;
    let cases = [
        (
            "vendor.unknown=b:1 0",
            Status::ERR_NOT_SUPPORTED,
            "not~supported",
        ),
        (
            "pmix.monitor.mbeat=null 0 pmix.monitor.btime=s:1",
            bad,
            "pmix.monitor.btime~has~the~wrong~type",
        ),
        (
            "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 pmix.monitor.bdrop=s:x",
            bad,
            "pmix.monitor.bdrop~has~the~wrong~type",
        ),
        (
            "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 !vendor.must=b:1",
            Status::ERR_NOT_SUPPORTED,
            "vendor.must",
        ),
        (
            "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 pmix.range=range:99",
            bad,
            "PMIX_RANGE",
        ),
        (
            "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:1 pmix.range=range:7",
            bad,
            "PMIX_RANGE",
        ),
        (
            "pmix.monitor.fchg=null 0 pmix.monitor.fmon=s:/",
            bad,
            "needs~PMIX_MONITOR_FILE_CHECK_TIME",
        ),
        (
            "pmix.monitor.fchg=null 0 pmix.monitor.ftime=u32:1",
            bad,
            "needs~PMIX_MONITOR_TARGET_FILES",
        ),
        (
            "pmix.monitor.fchg=s:x 0 pmix.monitor.fmon=s:/ pmix.monitor.ftime=u32:1",
            bad,
            "pmix.monitor.fchg~has~the~wrong~type",
        ),
        (
            "pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=s:mon-bad:1",
            bad,
            "pmix.monitor.tgtproc~has~the~wrong~type",
        ),
        (
            "pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:nowhere:0",
            Status::ERR_NOT_FOUND,
            "nowhere:0",
        ),
        (
            "pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:mon-bad:9",
            Status::ERR_NOT_FOUND,
            "mon-bad:9",
        ),
        (
            "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:0",
            bad,
            "pmix.monitor.resrate",
        ),
        (
            "pmix.monitor.cancel=u32:1 0",
            bad,
            "pmix.monitor.cancel~has~the~wrong~type",
        ),
    ];
    for (args, want, why_part) in cases {
        let (s, why) = monitor(c, args);
        assert_eq!(s, want.0, "{args}: {why}");
        assert!(why.contains(why_part), "{args}: {why}");
    }
    c.send("PING");
    c.expect("PONG");
    // Valid requests still work, from both processes.
    let (s, res) = monitor(c, "pmix.monitor.ndresuse=null 0");
    assert_eq!(s, 0, "{res}");
    let (s, res) = monitor(
        &mut n.clients[1],
        "pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:mon-bad:0",
    );
    assert_eq!(s, 0, "{res}");
}

#[test]
fn monitor_with_an_id_in_use_is_refused() {
    let mut n = node(&[("mon-dup", 1)], false);
    let c = &mut n.clients[0];
    for first in [
        "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:60 pmix.monitor.appctrl=b:1 pmix.monitor.id=s:d",
        "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:60 pmix.monitor.id=s:d",
    ] {
        let (s, why) = monitor(c, first);
        assert_eq!(s, 0, "{first}: {why}");
        for again in [
            "pmix.monitor.mbeat=null 0 pmix.monitor.btime=u32:60 pmix.monitor.appctrl=b:1 pmix.monitor.id=s:d",
            "pmix.monitor.ndresuse=null 0 pmix.monitor.resrate=u32:60 pmix.monitor.id=s:d",
        ] {
            let (s, why) = monitor(c, again);
            assert_eq!(s, Status::ERR_EXISTS.0, "after {first}: {again}: {why}");
        }
        // One monitor to cancel, then the ID is free again.
        let (s, why) = monitor(c, "pmix.monitor.cancel=s:d 0");
        assert_eq!(s, 0, "{why}");
        assert!(why.contains("1~monitor"), "{why}");
    }
}

#[test]
fn network_and_disk_usage_through_the_server_name_each_device_first() {
    let mut n = node(&[("ru-dev", 1)], false);
    // The loopback interface exists everywhere: its rx counter only grows.
    let before: u64 = std::fs::read_to_string("/proc/net/dev")
        .unwrap()
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("lo:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .expect("lo in /proc/net/dev");
    let (s, res) = monitor(
        &mut n.clients[0],
        "pmix.monitor.netresuse=null 0 pmix.monitor.tgtnets=strs:lo",
    );
    assert_eq!(s, 0, "{res}");
    let top = elements(&res);
    assert_eq!(top.len(), 1, "one interface asked: {res}");
    let report = field(top[0], attrs::PMIX_NETWORK_RESOURCE_USAGE.as_str()).expect(top[0]);
    assert_eq!(
        elements(report)[0],
        format!("{}=lo", attrs::PMIX_NETWORK_ID.as_str()),
        "{report}"
    );
    let rx = number(field(report, attrs::PMIX_NET_RECVD_BYTES.as_str()).expect(report));
    assert!(rx >= before as f64, "{rx} < {before}: {report}");
    // An interface that does not exist: a status, and the server serves on.
    let (s, _) = monitor(
        &mut n.clients[0],
        "pmix.monitor.netresuse=null 0 pmix.monitor.tgtnets=strs:no-such-if0",
    );
    assert_eq!(s, Status::ERR_NOT_FOUND.0);
    // Disks: one report per line of /proc/diskstats (possibly none here).
    let disks = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    let (s, res) = monitor(&mut n.clients[0], "pmix.monitor.dkresuse=null 0");
    assert_eq!(s, 0, "{res}");
    let reports = if res == "-" { 0 } else { elements(&res).len() };
    assert_eq!(
        reports,
        disks.lines().filter(|l| !l.trim().is_empty()).count(),
        "{res}"
    );
}

#[test]
fn a_monitor_kind_the_server_does_not_serve_goes_to_the_host_with_credentials() {
    let mut n = node(&[("mon-host", 1)], false);
    let (s, why) = monitor(
        &mut n.clients[0],
        "vendor.gpu.temp=b:1 0 vendor.limit=u32:90",
    );
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0, "{why}");
    assert!(why.contains("test~host"), "the host's answer: {why}");
    let m = n.host.monitors.lock().unwrap();
    let (who, mon, dirs) = &m[0];
    assert_eq!(*who, n.clients[0].proc);
    assert_eq!(mon.key.as_str(), "vendor.gpu.temp");
    let (uid, gid) = ids();
    let get = |k: &fastpmix::Key| dirs.iter().find(|i| i.key == *k).map(|i| i.value.clone());
    assert_eq!(get(&attrs::PMIX_USERID), Some(fastpmix::Value::Uint32(uid)));
    assert_eq!(get(&attrs::PMIX_GRPID), Some(fastpmix::Value::Uint32(gid)));
    assert!(dirs.iter().any(|i| i.key.as_str() == "vendor.limit"));
}

#[test]
fn monitors_of_other_nodes_go_to_the_host_unless_local_only() {
    let mut n = node(&[("mon-nodes", 1)], false);
    let me = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let me = me.trim();
    // This node by name: served here.
    let (s, res) = monitor(
        &mut n.clients[0],
        &format!("pmix.monitor.ndresuse=null 0 pmix.monitor.tgtnode=strs:{me}"),
    );
    assert_eq!(s, 0, "{res}");
    assert!(
        res.contains(attrs::PMIX_NODE_RESOURCE_USAGE.as_str()),
        "{res}"
    );
    assert!(n.host.monitors.lock().unwrap().is_empty());
    // Another node: the host's.
    let (s, why) = monitor(
        &mut n.clients[0],
        "pmix.monitor.ndresuse=null 0 pmix.monitor.tgtnode=strs:elsewhere-17",
    );
    assert_eq!(s, Status::ERR_NOT_SUPPORTED.0, "{why}");
    assert!(why.contains("test~host"), "{why}");
    assert_eq!(n.host.monitors.lock().unwrap().len(), 1);
    // The same restricted to this node: served here, the host not asked.
    let (s, res) = monitor(
        &mut n.clients[0],
        "pmix.monitor.ndresuse=null 0 pmix.monitor.tgtnode=strs:elsewhere-17 pmix.monitor.local=b:1",
    );
    assert_eq!(s, 0, "{res}");
    assert!(
        res.contains(attrs::PMIX_NODE_RESOURCE_USAGE.as_str()),
        "{res}"
    );
    assert_eq!(n.host.monitors.lock().unwrap().len(), 1);
}

// ------------------------------------------- alert ranges other than NAMESPACE

/// `pmix.range=range:<r>`.
fn range_arg(r: DataRange) -> String {
    format!("{}=range:{}", attrs::PMIX_RANGE.as_str(), r.0)
}

/// Each client in `who` gets the alert `code` about `about` from the
/// server; returns the alert lines.
fn all_get_alert(n: &mut Node, who: &[usize], code: i32, about: &Proc) -> Vec<String> {
    let server = n.server.me().to_string();
    let about = about.to_string();
    let mut lines = Vec::new();
    for &i in who {
        let l = n.clients[i].expect(&format!("CAUGHT_INFO code={code} "));
        assert_eq!(field(&l, "source"), Some(server.as_str()), "{i}: {l}");
        assert_eq!(field(&l, "affected"), Some(about.as_str()), "{i}: {l}");
        lines.push(l);
    }
    lines
}

/// No client in `who` had an event `code` before a sentinel sent to it
/// now (any event it would have had was published before the sentinel).
fn none_got(n: &mut Node, who: &[usize], code: i32) {
    for &i in who {
        let before = n.sentinel(i);
        assert!(events(&before, code).is_empty(), "client {i}: {before:?}");
    }
}

#[test]
fn heartbeat_alert_range_custom_is_the_stalled_process_only_and_local_is_every_namespace() {
    let mut n = node(&[("hb-rng", 2), ("hb-rng-b", 1)], false);
    for c in n.clients.iter_mut() {
        watch(c, HB_ALERT);
    }
    let beat = format!("{BEAT_MON} 0 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1");
    // CUSTOM: the stalled process alone, not the rest of its namespace (the
    // default NAMESPACE range would reach rank 1).
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!("{beat} {}", range_arg(DataRange::CUSTOM)),
    );
    assert_eq!(s, 0, "{why}");
    let r0 = n.clients[0].proc;
    let _ = all_get_alert(&mut n, &[0], HB_ALERT, &r0);
    none_got(&mut n, &[1, 2], HB_ALERT);
    // LOCAL: every process of the node, the other namespace too (which the
    // default range would not reach).
    let (s, why) = monitor(
        &mut n.clients[1],
        &format!("{beat} {}", range_arg(DataRange::LOCAL)),
    );
    assert_eq!(s, 0, "{why}");
    let r1 = n.clients[1].proc;
    let _ = all_get_alert(&mut n, &[0, 1, 2], HB_ALERT, &r1);
}

/// JOB-39's CUSTOM range with `PMIX_EVENT_CUSTOM_RANGE` among the
/// monitor's directives: the alert goes to those processes (here a process
/// of another namespace, and not the stalled one nor its peer); a value
/// that is not procs is refused.
#[test]
fn heartbeat_alert_range_custom_goes_to_the_custom_range_the_directives_name() {
    let mut n = node(&[("hb-to", 2), ("hb-to-b", 1)], false);
    for c in n.clients.iter_mut() {
        watch(c, HB_ALERT);
    }
    let beat = format!(
        "{BEAT_MON} 0 pmix.monitor.btime=u32:1 pmix.monitor.appctrl=b:1 {}",
        range_arg(DataRange::CUSTOM)
    );
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!("{beat} pmix.evrange=s:hb-to-b:0"),
    );
    assert_eq!(s, Status::ERR_BAD_PARAM.0, "a string, not procs: {why}");
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!("{beat} pmix.evrange=procs:hb-to-b:0"),
    );
    assert_eq!(s, 0, "{why}");
    let r0 = n.clients[0].proc;
    let _ = all_get_alert(&mut n, &[2], HB_ALERT, &r0);
    none_got(&mut n, &[0, 1], HB_ALERT);
}

#[test]
fn file_alert_range_custom_is_the_requester_only_and_local_is_every_namespace() {
    let (p0, p1) = (temp_path("rng-custom"), temp_path("rng-local"));
    std::fs::write(&p0, b"x").unwrap();
    std::fs::write(&p1, b"x").unwrap();
    let mut n = node(&[("fm-rng", 2), ("fm-rng-b", 1)], false);
    for c in n.clients.iter_mut() {
        watch(c, FILE_ALERT);
    }
    let (s, why) = monitor(
        &mut n.clients[0],
        &format!("{} {}", file_args(&p0, 1), range_arg(DataRange::CUSTOM)),
    );
    assert_eq!(s, 0, "{why}");
    let r0 = n.clients[0].proc;
    let l = all_get_alert(&mut n, &[0], FILE_ALERT, &r0);
    let files_key = attrs::PMIX_MONITOR_TARGET_FILES;
    let files = files_key.as_str();
    assert_eq!(field(&l[0], files), Some(p0.display().to_string().as_str()));
    none_got(&mut n, &[1, 2], FILE_ALERT);
    let (s, why) = monitor(
        &mut n.clients[1],
        &format!("{} {}", file_args(&p1, 1), range_arg(DataRange::LOCAL)),
    );
    assert_eq!(s, 0, "{why}");
    let r1 = n.clients[1].proc;
    for l in all_get_alert(&mut n, &[0, 1, 2], FILE_ALERT, &r1) {
        assert_eq!(field(&l, files), Some(p1.display().to_string().as_str()));
    }
    let _ = std::fs::remove_file(&p0);
    let _ = std::fs::remove_file(&p1);
}

// ------------------------------------------------- node and disk report fields

fn wall_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as f64
}

/// The keys of a printed report, in order.
fn keys_of(report: &str) -> Vec<&str> {
    elements(report)
        .iter()
        .map(|e| e.split_once('=').map_or(*e, |(k, _)| k))
        .collect()
}

/// The reports under `key` in printed results, one per top-level element.
fn reports<'a>(res: &'a str, key: &fastpmix::Key) -> Vec<&'a str> {
    if res == "-" {
        return Vec::new();
    }
    elements(res)
        .into_iter()
        .map(|e| field(e, key.as_str()).unwrap_or_else(|| panic!("not a {key} report: {e}")))
        .collect()
}

/// Every /proc/meminfo line as MBytes of 2^20 bytes.
fn meminfo_mb() -> std::collections::HashMap<String, f64> {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let kb: f64 = v.split_whitespace().next()?.parse().ok()?;
            Some((k.to_owned(), kb / 1024.0))
        })
        .collect()
}

fn loadavg() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap()
        .split_whitespace()
        .take(3)
        .map(|s| s.parse().unwrap())
        .collect()
}

#[test]
fn node_resource_usage_reports_every_meminfo_field_within_bounds_of_proc() {
    let mut n = node(&[("ru-mem", 1)], false);
    let (t0, m0, l0) = (wall_secs(), meminfo_mb(), loadavg());
    let (s, res) = monitor(&mut n.clients[0], "pmix.monitor.ndresuse=null 0");
    let (t1, m1, l1) = (wall_secs(), meminfo_mb(), loadavg());
    assert_eq!(s, 0, "{res}");
    let r = reports(&res, &attrs::PMIX_NODE_RESOURCE_USAGE);
    assert_eq!(r.len(), 1, "{res}");
    let report = r[0];
    let mem = [
        ("MemTotal", attrs::PMIX_NODE_MEM_TOTAL),
        ("MemFree", attrs::PMIX_NODE_MEM_FREE),
        ("Buffers", attrs::PMIX_NODE_MEM_BUFFERS),
        ("Cached", attrs::PMIX_NODE_MEM_CACHED),
        ("SwapCached", attrs::PMIX_NODE_MEM_SWAP_CACHED),
        ("SwapTotal", attrs::PMIX_NODE_MEM_SWAP_TOTAL),
        ("SwapFree", attrs::PMIX_NODE_MEM_SWAP_FREE),
        ("Mapped", attrs::PMIX_NODE_MEM_MAPPED),
    ];
    let load = [
        attrs::PMIX_NODE_LOAD_AVG,
        attrs::PMIX_NODE_LOAD_AVG5,
        attrs::PMIX_NODE_LOAD_AVG15,
    ];
    // Exactly the host, three load averages, eight meminfo fields and the
    // sample time, in that order at the ends.
    let mut want: Vec<&str> = load
        .iter()
        .chain(mem.iter().map(|(_, k)| k))
        .map(|k| k.as_str())
        .collect();
    want.sort();
    let got = keys_of(report);
    assert_eq!(
        got.first(),
        Some(&attrs::PMIX_HOSTNAME.as_str()),
        "{report}"
    );
    assert_eq!(
        got.last(),
        Some(&attrs::PMIX_NODE_SAMPLE_TIME.as_str()),
        "{report}"
    );
    let mut middle = got[1..got.len() - 1].to_vec();
    middle.sort();
    assert_eq!(middle, want, "{report}");
    let value = |k: &fastpmix::Key| number(field(report, k.as_str()).expect(report));
    let t = value(&attrs::PMIX_NODE_SAMPLE_TIME);
    assert!((t0..=t1).contains(&t), "sample time {t} not in {t0}..={t1}");
    // Totals do not change: equal (f32 in the report). The other fields
    // move with the machine's activity: each lies between what /proc said
    // before and after the request, give or take 5% of the memory (a
    // swapped field is off by far more: MemFree vs Cached here differ by
    // gigabytes), and within the totals.
    let total = m0["MemTotal"];
    let swap = m0["SwapTotal"];
    assert_eq!(total, m1["MemTotal"]);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.max(1.0);
    let tol = total / 20.0;
    for (name, k) in &mem {
        let v = value(k);
        let (a, b) = (m0[*name], m1[*name]);
        match *name {
            "MemTotal" | "SwapTotal" => assert!(close(v, a), "{name} {a}: {v}: {report}"),
            _ => assert!(
                v >= a.min(b) - tol && v <= a.max(b) + tol,
                "{name}: {v} vs /proc {a}..{b} (± {tol}): {report}"
            ),
        }
        assert!(v >= 0.0, "{name}: {v}");
        let cap = if name.starts_with("Swap") && *name != "SwapCached" {
            swap
        } else {
            total
        };
        assert!(v <= cap * (1.0 + 1e-5), "{name}: {v} > {cap}: {report}");
    }
    if swap == 0.0 {
        // No swap at all: nothing free in it and nothing cached from it.
        assert_eq!(value(&attrs::PMIX_NODE_MEM_SWAP_FREE), 0.0, "{report}");
        assert_eq!(value(&attrs::PMIX_NODE_MEM_SWAP_CACHED), 0.0, "{report}");
    }
    // Free, buffer and page-cache pages are disjoint.
    let sum = value(&attrs::PMIX_NODE_MEM_FREE)
        + value(&attrs::PMIX_NODE_MEM_BUFFERS)
        + value(&attrs::PMIX_NODE_MEM_CACHED);
    assert!(
        sum <= total + tol,
        "free + buffers + cached = {sum} > {total}"
    );
    // The load averages change every 5 s: the sample is the value before or
    // after the request (printed with two decimals).
    for (i, k) in load.iter().enumerate() {
        let v = value(k);
        let (lo, hi) = (l0[i].min(l1[i]), l0[i].max(l1[i]));
        assert!(
            v >= lo - 0.005 && v <= hi + 0.005,
            "{k}: {v} not in {lo}..={hi}: {report}"
        );
    }
}

/// The classic /proc/diskstats fields, in the kernel's order (iostats.rst).
const DISK_FIELDS: [fastpmix::Key; 11] = [
    attrs::PMIX_DISK_READ_COMPLETED,
    attrs::PMIX_DISK_READ_MERGED,
    attrs::PMIX_DISK_READ_SECTORS,
    attrs::PMIX_DISK_READ_MILLISEC,
    attrs::PMIX_DISK_WRITE_COMPLETED,
    attrs::PMIX_DISK_WRITE_MERGED,
    attrs::PMIX_DISK_WRITE_SECTORS,
    attrs::PMIX_DISK_WRITE_MILLISEC,
    attrs::PMIX_DISK_IO_IN_PROGRESS,
    attrs::PMIX_DISK_IO_MILLISEC,
    attrs::PMIX_DISK_IO_WEIGHTED,
];

/// /proc/diskstats: each disk's name and every number after it.
fn diskstats() -> Vec<(String, Vec<u64>)> {
    std::fs::read_to_string("/proc/diskstats")
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let v = f[3..].iter().map(|x| x.parse().unwrap()).collect();
            (f[2].to_owned(), v)
        })
        .collect()
}

/// Checks one printed disk report against /proc/diskstats read before
/// (`a`) and after (`b`) the request: the disk's name first, the sample
/// time last, and each of the eleven fields (or only those `only` names)
/// in between. A disk whose whole line did not change is compared
/// exactly; otherwise each counter lies between its two readings (the
/// in-progress count, which goes up and down, is only required present).
fn check_disk_report(
    report: &str,
    name: &str,
    a: &[(String, Vec<u64>)],
    b: &[(String, Vec<u64>)],
    only: Option<&[fastpmix::Key]>,
) {
    let line = |d: &[(String, Vec<u64>)]| {
        d.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{name} not in /proc/diskstats"))
    };
    let (a, b) = (line(a), line(b));
    let keys = keys_of(report);
    assert_eq!(
        elements(report)[0],
        format!("{}={name}", attrs::PMIX_DISK_ID.as_str()),
        "{report}"
    );
    assert_eq!(
        keys.last(),
        Some(&attrs::PMIX_DISK_SAMPLE_TIME.as_str()),
        "{report}"
    );
    let all = DISK_FIELDS;
    let fields: Vec<(usize, &fastpmix::Key)> = all
        .iter()
        .enumerate()
        .filter(|(_, k)| only.is_none_or(|o| o.contains(k)))
        .collect();
    let mut want: Vec<&str> = fields.iter().map(|(_, k)| k.as_str()).collect();
    let mut middle = keys[1..keys.len() - 1].to_vec();
    want.sort();
    middle.sort();
    assert_eq!(middle, want, "{report}");
    let quiet = a == b;
    for (i, k) in fields {
        let v = number(field(report, k.as_str()).expect(report)) as u64;
        if quiet {
            assert_eq!(v, a[i], "{name} {k} (line unchanged): {report}");
        } else if *k != attrs::PMIX_DISK_IO_IN_PROGRESS {
            assert!(
                (a[i]..=b[i]).contains(&v),
                "{name} {k}: {v} not in {}..={}: {report}",
                a[i],
                b[i]
            );
        }
    }
}

#[test]
fn disk_usage_through_the_server_reports_each_disks_fields_and_selects_by_name() {
    let mut n = node(&[("ru-disk", 1)], false);
    let c = &mut n.clients[0];
    // Every disk, in the order of /proc/diskstats.
    let a = diskstats();
    let (s, res) = monitor(c, "pmix.monitor.dkresuse=null 0");
    let b = diskstats();
    assert_eq!(s, 0, "{res}");
    let all = reports(&res, &attrs::PMIX_DISK_RESOURCE_USAGE);
    let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(all.len(), names.len(), "{res}");
    for (r, name) in all.iter().zip(&names) {
        check_disk_report(r, name, &a, &b, None);
    }
    // An unknown disk, alone or with a known one: NOT_FOUND.
    let (s, why) = monitor(
        c,
        "pmix.monitor.dkresuse=null 0 pmix.monitor.tgtdks=strs:nosuchdisk9",
    );
    assert_eq!(s, Status::ERR_NOT_FOUND.0, "{why}");
    if names.is_empty() {
        println!("no disk in /proc/diskstats: selection not checked");
        return;
    }
    let known = names[0];
    let (s, why) = monitor(
        c,
        &format!("pmix.monitor.dkresuse=null 0 pmix.monitor.tgtdks=strs:{known};nosuchdisk9"),
    );
    assert_eq!(s, Status::ERR_NOT_FOUND.0, "{why}");
    // PMIX_MONITOR_TARGET_DISKS naming one disk: that disk's report only.
    // The busiest disk (the most reads completed), so the fields are not
    // all zero; the last one listed on a tie.
    let busiest = a
        .iter()
        .enumerate()
        .max_by_key(|(i, (_, v))| (v[0], *i))
        .map(|(_, (n, _))| n.clone())
        .unwrap();
    let a = diskstats();
    let (s, res) = monitor(
        c,
        &format!("pmix.monitor.dkresuse=null 0 pmix.monitor.tgtdks=strs:{busiest}"),
    );
    let b = diskstats();
    assert_eq!(s, 0, "{res}");
    let one = reports(&res, &attrs::PMIX_DISK_RESOURCE_USAGE);
    assert_eq!(one.len(), 1, "{res}");
    check_disk_report(one[0], &busiest, &a, &b, None);
    // Two, in the order asked (the reverse of /proc's when they differ).
    let last = names[names.len() - 1];
    let (s, res) = monitor(
        c,
        &format!("pmix.monitor.dkresuse=null 0 pmix.monitor.tgtdks=strs:{last};{known}"),
    );
    assert_eq!(s, 0, "{res}");
    let two = reports(&res, &attrs::PMIX_DISK_RESOURCE_USAGE);
    let ids: Vec<&str> = two.iter().map(|r| elements(r)[0]).collect();
    let id = |d: &str| format!("{}={d}", attrs::PMIX_DISK_ID.as_str());
    assert_eq!(ids, [id(last), id(known)], "{res}");
}

// -------------------------------------- process-usage updates, selection, wildcard

/// The pid in a printed process report.
fn pid_in(report: &str) -> u32 {
    number(field(report, attrs::PMIX_PROC_PID.as_str()).expect(report)) as u32
}

/// The `PMIX_PROCID` a printed process report starts with.
fn procid_of(report: &str) -> &str {
    elements(report)[0]
        .strip_prefix(&format!("{}=", attrs::PMIX_PROCID.as_str()))
        .unwrap_or_else(|| panic!("not a proc first: {report}"))
}

/// The fields the process-usage update tests ask for: a full process
/// report does not fit in a ring slot (see
/// `process_usage_updates_with_every_field_arrive`).
fn proc_update_fields() -> String {
    format!(
        "infos:{}=null|{}=null|{}=null",
        attrs::PMIX_PROC_PID.as_str(),
        attrs::PMIX_PROC_OS_STATE.as_str(),
        attrs::PMIX_PROC_NUM_THREADS.as_str()
    )
}

#[test]
fn process_usage_updates_carry_the_callers_code_and_reach_the_requester_only() {
    const MINE: i32 = -3200;
    let mut n = node(&[("ru-pupd", 2)], false);
    for c in n.clients.iter_mut() {
        watch(c, MINE);
        watch(c, USAGE);
    }
    let target = n.clients[1].proc;
    let pid = n.clients[1].pid();
    let (s, res) = monitor(
        &mut n.clients[0],
        &format!(
            "pmix.monitor.presuse={} {MINE} pmix.monitor.tgtproc=procs:{target} pmix.monitor.resrate=u32:1 pmix.monitor.id=s:p1",
            proc_update_fields()
        ),
    );
    assert_eq!(s, 0, "{res}");
    let now = reports(&res, &attrs::PMIX_PROC_RESOURCE_USAGE);
    assert_eq!(now.len(), 1, "{res}");
    assert_eq!(procid_of(now[0]), target.to_string());
    let c = &mut n.clients[0];
    c.send(&format!("AWAIT {MINE} 2"));
    let l = c.expect(&format!("AWAITED {MINE} "));
    assert!(number(l.rsplit(' ').next().unwrap()) >= 2.0, "{l}");
    let updates = caught(&c.seen, MINE);
    assert!(updates.len() >= 2, "{:?}", c.seen);
    let server = n.server.me().to_string();
    for u in &updates {
        assert_eq!(field(u, "source"), Some(server.as_str()), "{u}");
        assert_eq!(field(u, attrs::PMIX_MONITOR_ID.as_str()), Some("p1"), "{u}");
        // A process report of the target, not node usage.
        assert!(
            field(u, attrs::PMIX_NODE_RESOURCE_USAGE.as_str()).is_none(),
            "{u}"
        );
        let r = field(u, attrs::PMIX_PROC_RESOURCE_USAGE.as_str()).expect(u);
        assert_eq!(procid_of(r), target.to_string(), "{u}");
        assert_eq!(pid_in(r), pid, "{u}");
        let state = field(r, attrs::PMIX_PROC_OS_STATE.as_str()).expect(r);
        assert!(["R", "S"].contains(&state), "{state}: {u}");
        let nthr = number(field(r, attrs::PMIX_PROC_NUM_THREADS.as_str()).expect(r));
        assert!(nthr >= 1.0, "{u}");
    }
    let (s, why) = monitor(c, "pmix.monitor.cancel=s:p1 0");
    assert_eq!(s, 0, "{why}");
    // The caller's code only, never the default one as well; and range
    // CUSTOM to the requester: the monitored process does not hear them.
    let before = n.sentinel(0);
    assert!(events(&before, USAGE).is_empty(), "{before:?}");
    let target_saw = n.sentinel(1);
    assert!(events(&target_saw, MINE).is_empty(), "{target_saw:?}");
    assert!(events(&target_saw, USAGE).is_empty(), "{target_saw:?}");
}

/// JOB-46 with a NULL monitor value (every field): a full process report
/// (about 1100 bytes encoded, with this binary's path as its command line)
/// is larger than a ring slot (1008 bytes at the default geometry), so the
/// update cannot be published. Nothing is lost silently: each period the
/// requester gets `EVENTS_LOST` instead, from the server, with a count of 1,
/// the monitor's ID and the reason. (Until 2026-11-26 the server only said
/// so on its stderr.)
#[test]
fn a_usage_update_too_large_for_a_ring_slot_reaches_the_requester_as_events_lost() {
    const ALL: i32 = -3210;
    let lost = fastpmix::types::EVENTS_LOST.0;
    let mut n = node(&[("ru-pfull", 1)], false);
    let me = n.clients[0].proc;
    let server = n.server.me().to_string();
    let c = &mut n.clients[0];
    watch(c, ALL);
    watch(c, lost);
    let (s, res) = monitor(
        c,
        &format!(
            "pmix.monitor.presuse=null {ALL} pmix.monitor.tgtproc=procs:{me} pmix.monitor.resrate=u32:1 pmix.monitor.id=s:full"
        ),
    );
    assert_eq!(s, 0, "{res}");
    c.send(&format!("AWAIT {lost} 2"));
    c.expect(&format!("AWAITED {lost} "));
    let notices = caught(&c.seen, lost);
    assert!(notices.len() >= 2, "{:?}", c.seen);
    for u in &notices {
        assert_eq!(field(u, "source"), Some(server.as_str()), "{u}");
        assert_eq!(
            field(u, attrs::PMIX_MONITOR_ID.as_str()),
            Some("full"),
            "{u}"
        );
        assert_eq!(field(u, "fastpmix.evlost.count"), Some("Uint64(1)"), "{u}");
        assert!(
            u.contains(&format!("(PMIX_STATUS({ALL}))~could~not~be~published")),
            "{u}"
        );
    }
    assert!(
        caught(&c.seen, ALL).is_empty(),
        "no update fits: {:?}",
        c.seen
    );
}

/// The Rss line of /proc/PID/status, MBytes.
fn vmrss_mb(pid: u32) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let l = text.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1024.0
}

/// The keys between a report's identifier and its sample time, sorted.
fn middle_keys(report: &str) -> Vec<&str> {
    let k = keys_of(report);
    let mut m = k[1..k.len() - 1].to_vec();
    m.sort();
    m
}

#[test]
fn usage_fields_are_selected_by_the_monitors_info_array_through_the_server() {
    const SEL: i32 = -3300;
    let mut n = node(&[("ru-sel", 2)], false);
    let target = n.clients[1].proc;
    let pid = n.clients[1].pid();
    let (nthr_key, rss_key) = (attrs::PMIX_PROC_NUM_THREADS, attrs::PMIX_PROC_RSS);
    let (nthr, rss) = (nthr_key.as_str(), rss_key.as_str());
    // NULL: every field.
    let (s, res) = monitor(
        &mut n.clients[0],
        &format!("pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:{target}"),
    );
    assert_eq!(s, 0, "{res}");
    let full = reports(&res, &attrs::PMIX_PROC_RESOURCE_USAGE);
    assert_eq!(full.len(), 1, "{res}");
    for k in [
        attrs::PMIX_PROC_PID,
        attrs::PMIX_HOSTNAME,
        attrs::PMIX_CMD_LINE,
        attrs::PMIX_PROC_OS_STATE,
        attrs::PMIX_PROC_TIME,
        attrs::PMIX_PROC_PERCENT_CPU,
        attrs::PMIX_PROC_PRIORITY,
        attrs::PMIX_PROC_NUM_THREADS,
        attrs::PMIX_PROC_VSIZE,
        attrs::PMIX_PROC_RSS,
        attrs::PMIX_PROC_CPU,
    ] {
        assert!(middle_keys(full[0]).contains(&k.as_str()), "{k}: {res}");
    }
    // Two fields asked for: those two only, between the proc and the time.
    let t0 = threads(pid);
    let m0 = vmrss_mb(pid);
    let (s, res) = monitor(
        &mut n.clients[0],
        &format!(
            "pmix.monitor.presuse=infos:{nthr}=null|{rss}=null 0 pmix.monitor.tgtproc=procs:{target}"
        ),
    );
    let (t1, m1) = (threads(pid), vmrss_mb(pid));
    assert_eq!(s, 0, "{res}");
    let sel = reports(&res, &attrs::PMIX_PROC_RESOURCE_USAGE);
    assert_eq!(sel.len(), 1, "{res}");
    let r = sel[0];
    assert_eq!(procid_of(r), target.to_string(), "{r}");
    assert_eq!(
        keys_of(r).last(),
        Some(&attrs::PMIX_PROC_SAMPLE_TIME.as_str()),
        "{r}"
    );
    let mut want = vec![nthr, rss];
    want.sort();
    assert_eq!(middle_keys(r), want, "{r}");
    let got_thr = number(field(r, nthr).unwrap()) as usize;
    assert!(
        (t0.min(t1)..=t0.max(t1)).contains(&got_thr),
        "{got_thr} threads, /proc {t0}, {t1}: {r}"
    );
    let got_rss = number(field(r, rss).unwrap());
    let (lo, hi) = (m0.min(m1), m0.max(m1));
    assert!(
        got_rss >= lo / 2.0 - 2.0 && got_rss <= hi * 2.0 + 2.0,
        "rss {got_rss} MB, VmRSS {lo}..{hi}: {r}"
    );
    // Node usage: MemTotal only.
    let (s, res) = monitor(
        &mut n.clients[0],
        &format!(
            "pmix.monitor.ndresuse=infos:{}=null 0",
            attrs::PMIX_NODE_MEM_TOTAL.as_str()
        ),
    );
    assert_eq!(s, 0, "{res}");
    let node_r = reports(&res, &attrs::PMIX_NODE_RESOURCE_USAGE);
    assert_eq!(node_r.len(), 1, "{res}");
    assert_eq!(
        keys_of(node_r[0]).first(),
        Some(&attrs::PMIX_HOSTNAME.as_str())
    );
    assert_eq!(
        middle_keys(node_r[0]),
        [attrs::PMIX_NODE_MEM_TOTAL.as_str()]
    );
    let total = meminfo_mb()["MemTotal"];
    let mt = number(field(node_r[0], attrs::PMIX_NODE_MEM_TOTAL.as_str()).unwrap());
    assert!((mt - total).abs() <= 1e-5 * total, "{mt} vs {total}");
    // A disk: reads and writes completed only.
    let disks = diskstats();
    if let Some((d, _)) = disks.first() {
        let only = [
            attrs::PMIX_DISK_READ_COMPLETED,
            attrs::PMIX_DISK_WRITE_COMPLETED,
        ];
        let a = diskstats();
        let (s, res) = monitor(
            &mut n.clients[0],
            &format!(
                "pmix.monitor.dkresuse=infos:{}=null|{}=null 0 pmix.monitor.tgtdks=strs:{d}",
                only[0].as_str(),
                only[1].as_str()
            ),
        );
        let b = diskstats();
        assert_eq!(s, 0, "{res}");
        let r = reports(&res, &attrs::PMIX_DISK_RESOURCE_USAGE);
        assert_eq!(r.len(), 1, "{res}");
        check_disk_report(r[0], d, &a, &b, Some(&only));
    }
    // Updates carry the selected fields only too.
    watch(&mut n.clients[0], SEL);
    let (s, res) = monitor(
        &mut n.clients[0],
        &format!(
            "pmix.monitor.presuse=infos:{nthr}=null {SEL} pmix.monitor.tgtproc=procs:{target} pmix.monitor.resrate=u32:1 pmix.monitor.id=s:sel"
        ),
    );
    assert_eq!(s, 0, "{res}");
    let u = n.clients[0].expect(&format!("CAUGHT_INFO code={SEL} "));
    let r = field(&u, attrs::PMIX_PROC_RESOURCE_USAGE.as_str()).expect(&u);
    assert_eq!(procid_of(r), target.to_string(), "{u}");
    assert_eq!(middle_keys(r), [nthr], "{u}");
    let (s, why) = monitor(&mut n.clients[0], "pmix.monitor.cancel=s:sel 0");
    assert_eq!(s, 0, "{why}");
}

#[test]
fn wildcard_rank_target_reports_every_registered_rank_of_that_namespace() {
    let mut n = node(&[("ru-wild", 3), ("ru-wild-b", 1)], false);
    let pid_of: std::collections::HashMap<String, u32> = n
        .clients
        .iter()
        .map(|c| (c.proc.to_string(), c.pid()))
        .collect();
    let ask = |c: &mut ClientProc, targets: &str| {
        let (s, res) = monitor(
            c,
            &format!("pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:{targets}"),
        );
        assert_eq!(s, 0, "{targets}: {res}");
        let mut seen: Vec<(String, u32)> = reports(&res, &attrs::PMIX_PROC_RESOURCE_USAGE)
            .into_iter()
            .map(|r| (procid_of(r).to_owned(), pid_in(r)))
            .collect();
        seen.sort();
        seen
    };
    let expect = |procs: &[&str]| {
        let mut v: Vec<(String, u32)> = procs.iter().map(|p| (p.to_string(), pid_of[*p])).collect();
        v.sort();
        v
    };
    let ranks = ["ru-wild:0", "ru-wild:1", "ru-wild:2"];
    // From another namespace: the three ranks, each once with its own pid;
    // not the asker's namespace.
    assert_eq!(ask(&mut n.clients[3], "ru-wild:*"), expect(&ranks));
    // From within, the same.
    assert_eq!(ask(&mut n.clients[1], "ru-wild:*"), expect(&ranks));
    // With another target: both.
    assert_eq!(
        ask(&mut n.clients[0], "ru-wild:*;ru-wild-b:0"),
        expect(&["ru-wild:0", "ru-wild:1", "ru-wild:2", "ru-wild-b:0"])
    );
    // The other namespace's wildcard: its one rank.
    assert_eq!(
        ask(&mut n.clients[0], "ru-wild-b:*"),
        expect(&["ru-wild-b:0"])
    );
}

/// JOB-47, a registered rank whose process has not connected: named alone
/// it is `PMIX_ERR_NOT_FOUND` with the reason (it used to vanish from the
/// sample without a word); under a wildcard the ranks that run are
/// reported and it is left out.
#[test]
fn usage_of_a_registered_rank_with_no_process_is_not_found_and_a_wildcard_leaves_it_out() {
    let mut n = node(&[("ru-late", 1)], false);
    let (uid, gid) = ids();
    let late = Proc::new("ru-late", 1).unwrap();
    n.server.register_client(&late, uid, gid).unwrap();
    let ask = |c: &mut ClientProc, targets: &str| {
        monitor(
            c,
            &format!("pmix.monitor.presuse=null 0 pmix.monitor.tgtproc=procs:{targets}"),
        )
    };
    let (s, res) = ask(&mut n.clients[0], "ru-late:1");
    assert_eq!(s, Status::ERR_NOT_FOUND.0, "{res}");
    assert!(
        res.contains("ru-late:1") && res.contains("no~process"),
        "{res}"
    );
    let (s, res) = ask(&mut n.clients[0], "ru-late:0;ru-late:1");
    assert_eq!(
        s,
        Status::ERR_NOT_FOUND.0,
        "one missing target fails it: {res}"
    );
    let (s, res) = ask(&mut n.clients[0], "ru-late:*");
    assert_eq!(s, 0, "{res}");
    let seen: Vec<&str> = reports(&res, &attrs::PMIX_PROC_RESOURCE_USAGE)
        .into_iter()
        .map(procid_of)
        .collect();
    assert_eq!(seen, ["ru-late:0"], "{res}");
}

/// `PMIX_SERVER_ENABLE_MONITORING` false (OpenPMIx declares it and never
/// reads it): the server serves no monitor itself, and each request goes to
/// the host, with the requester's credentials, kind by kind.
#[test]
fn with_monitoring_disabled_every_monitor_request_goes_to_the_host() {
    let host = recorder(false);
    let server = Server::builder()
        .host(host.clone())
        .attribute(Info::new(
            attrs::PMIX_SERVER_ENABLE_MONITORING,
            fastpmix::Value::Bool(false),
        ))
        .start()
        .unwrap();
    let mut clients = procs::spawn_clients(&server, CHILD, &[("mon-off", 1)]);
    let c = &mut clients[0];
    let path = temp_path("mon-off");
    std::fs::write(&path, b"x").unwrap();
    let asks = [
        format!("{BEAT_MON} 0 pmix.monitor.btime=u32:1"),
        file_args(&path, 1),
        "pmix.monitor.presuse=null 0".to_string(),
    ];
    for a in &asks {
        let (s, why) = monitor(c, a);
        assert_eq!(s, Status::ERR_NOT_SUPPORTED.0, "{a}: {why}");
        assert!(why.contains("test~host"), "the host's answer: {why}");
    }
    let kinds: Vec<String> = host
        .monitors
        .lock()
        .unwrap()
        .iter()
        .map(|(who, m, _)| {
            assert_eq!(*who, c.proc);
            m.key.as_str().to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            attrs::PMIX_MONITOR_HEARTBEAT.as_str(),
            attrs::PMIX_MONITOR_FILE_CHANGES.as_str(),
            attrs::PMIX_MONITOR_PROC_RESOURCE_USAGE.as_str()
        ]
    );
    // A value that is not a flag is refused at start.
    let bad = Server::builder()
        .attribute(Info::new(attrs::PMIX_SERVER_ENABLE_MONITORING, "yes"))
        .start();
    assert_eq!(bad.err(), Some(Status::ERR_BAD_PARAM));
    let _ = std::fs::remove_file(&path);
}
