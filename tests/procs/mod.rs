//! Real client processes for the server tests: the test binary re-executed
//! as a scripted PMIx client. The parent drives it through stdin lines and
//! reads what its handlers saw from stdout lines.
//!
//! Child protocol (one command per stdin line):
//! - `NOTIFY <code> <range> [ns:rank,...]` → `NOTIFIED <status>` (custom
//!   range targets after the range; rank `*` = wildcard)
//! - `NOTIFY_N <count> <code> <range>` → the same event `count` times with an
//!   info `test.seq` = 0..count, then `NOTIFIED <status>`
//! - `REGISTER <code>` → `REGISTERED <ref>`; `DEREGISTER <ref>` → `DEREGISTERED <status>`
//! - `REGISTER_IN <code> <range>` → `REGISTERED <ref>`: with `PMIX_RANGE` =
//!   `<range>` (a number) among its directives
//! - `REGISTER_ONESHOT <code>` → `REGISTERED <ref>`: with
//!   `PMIX_EVENT_ONESHOT`; prints `ONESHOT_RAN <code>` when called
//! - `FINALIZE` → `FINALIZED <status>` then exit; `ABORT` → SIGABRT
//! - `PING` → `PONG` (everything before it was handled)
//! - `PLACEMENT` → `PLACEMENT <Client::placement()>`
//! - `NOTIFY_BIG <bytes> <code> <range>` → one event carrying an info
//!   `test.big` = a string of `<bytes>` bytes, then `NOTIFIED <status>`
//! - `WATCH <code>` → `WATCHING <ref or negative status>`: a single-code
//!   handler that prints `CAUGHT code=<i32> source=<ns>:<rank>
//!   affected=<procs or ->` (and ` proxy=…` as for `EVENT`) for each event
//!   it gets
//!
//! Job management (infos are `key=T:V` tokens, see [`parse_info`]; results
//! print as `key=<value>;...`):
//! - `JOBCTL <targets|-> <info>...` → `JOBCTL_RESULT <status> <results>`
//! - `JOBCTL_NB <tag> <targets|-> <info>...` → `JOBCTL_NB_STARTED <tag>
//!   <status>`, later `JOBCTL_CB <tag> <status> <results>`
//! - `MONITOR <info> <error> <info>...` → `MONITOR_RESULT <status> <results>`
//! - `ALLOC <directive> <info>...` → `ALLOC_RESULT <status> <results>`
//! - `LOG <info>... -- <info>...` → `LOG_RESULT <status>`
//! - `BEAT` → `BEAT_OK <status>`; `BEAT_EVERY <ms> <count>` → beats in the
//!   background, then `BEATS_DONE`
//! - `IGNORE_TERM` → `IGNORING` (SIGTERM ignored from now on)
//! - `SIGWATCH <sig>` → `SIGWATCHING`; then `SIGNALED <sig>` on each signal
//! - `PMIX_ABORT <status> <msg> <targets|->` → `ABORT_RESULT <status>` (if
//!   the call returns)
//! - `AWAIT <code> <n>` → `AWAITED <code> <count>` once `WATCH` handlers
//!   caught `n` events of `code` (or after [`HANG`])
//! - `CKPT_RESPONDER <code> <range>` → `RESPONDING <ref>`: a handler for
//!   `code` that answers with `PMIX_JCTRL_CHECKPOINT_COMPLETE` in `range`
//! - `ALLOC_UNTIL <status> <directive> <info>...` → `ALLOC_UNTIL_RESULT
//!   <tries> <status> <results>`: `ALLOC` repeated (10 ms apart) until it
//!   answers `<status>` or [`HANG`] passed
//! - `WATCH_RANGE <code>` → `WATCHING <ref>`: a handler printing `CAUGHT_RANGE
//!   code=<i32> source=<ns>:<rank> range=<n> <infos>` (counted for `AWAIT`)
//! - `KILL_SELF`: the process SIGKILLs itself
//! - `STALL` → `STALLING`: the progress thread is held in a handler (it
//!   reads nothing meanwhile) until `RELEASE` → `RELEASED`; `STALL_OVER`
//!   when the handler returns
//!
//! `ON <rank> <command>` runs the command on that rank only (for the
//! scripts of `fastpmix run`, which every rank reads).
//!
//! Fence and job information (procs as `ns:rank`, or `@<rank>`, `@*`,
//! `@undef` in this process's namespace, `@me` = this process; `-` = none):
//! - `FENCE <procs|-> <info>...` → `FENCE_RESULT <status>`
//! - `PUT <scope> <key>=<T:V>` → `PUT_RESULT <status>` (`key=bytes:<n>`: a
//!   byte object); `COMMIT` → `COMMIT_RESULT <status>`; `STORE_INTERNAL
//!   <proc> <key>=<T:V>` → `STORE_RESULT <status>`
//! - `GETX <proc> <key> <info>...` → `GETX_RESULT <status> <value>`;
//!   `GETX_NB <tag> <proc> <key> <info>...` → `GETX_NB_STARTED <tag>
//!   <status>`, later `GETX_CB <tag> <status> <value>` (`FENCE_CHECK <tag>`
//!   tells whether it ran); keys `LONG<n>` and `EMPTY` as for `GET`
//! - `FENCE_NB <tag> <procs|-> <info>...` → `FENCE_NB_STARTED <tag>
//!   <status>`, later `FENCE_CB <tag> <status> thread=<other|caller>`
//!   (ordered as `LOG_NB`)
//! - `FENCE_CHECK <tag>` → `FENCE_STATE <tag> pending|done <status>`: once
//!   a fence over this process alone completed. Its answer comes after the
//!   server handled every earlier request of this process, and callbacks
//!   run in arrival order: a fence `<tag>` the server had completed by then
//!   shows as done.
//! - `QUERY <keys> <nspace|->` → `QUERY_RESULT <status> <n>`, then one
//!   `QUERY_VALUE <key> <value>` per answer (`PMIx_Query_info` of one
//!   query: keys comma-separated, `NONE` for none; a `PMIX_NSPACE`
//!   qualifier unless `-`; proc tables as `rank@host:state:pid|nopid`)
//! - `QUERY_NB <keys> <nspace|->` → `QUERY_NB_CALLED <status>`, and from
//!   the callback `QUERY_NB_RESULT <status> <n>`
//! - `GET <proc> <key>` → `GET_RESULT <status> <value or ->` (`<key>`
//!   `EMPTY` = the empty key, `LONG<n>` = `n` bytes; values print as
//!   `u32:3`, `u16:1`, `rank:2`, `s:text` with spaces as `~`, or `{:?}`)
//!
//! Blocking calls from a handler: `BLOCKING_IN_HANDLER <env code>` →
//! `BLOCKING_STARTED <status>`; then a handler (on the progress thread)
//! registers a handler for `<env code>` and deregisters it, notifies
//! PROC_LOCAL and NAMESPACE, fences over itself, gets `PMIX_JOB_SIZE` and
//! logs to stderr, printing `BLOCKING <call> <status or ref>` after each,
//! then `BLOCKING_DONE`.
//!
//! Fault matrix (tests/fault_matrix.rs):
//! - `WATCH_HANG <code>` → `WATCHING <ref or negative status>`: a handler
//!   for `code` that prints `HANGING code=<i32> source=<ns>:<rank>` and then
//!   blocks its thread (the progress thread) for good: the chain never ends.
//! - `WATCH_AT <code>` → `WATCHING <ref or negative status>`: a handler that
//!   prints `CAUGHT_AT code=<i32> mono_ns=<CLOCK_MONOTONIC at entry, ns>`
//!   (the clock is system-wide: the parent compares it with its own), and
//!   counts the event for `AWAIT`, as every `WATCH*` does.
//! - `NOTIFY_FROM <first> <count> <code> <range>` → like `NOTIFY_N`, with
//!   `test.seq` = `first..first+count`, then `NOTIFIED <status>`.
//! - `NOTIFY_FOR <ms> <code> <range>` → notifies as fast as it can for `ms`
//!   milliseconds (`test.seq` = 0, 1, ...), then `NOTIFIED_FOR <status>
//!   <count>` (the first failure ends the loop).
//! - `COUNT <code> <ns:rank,...>` → `COUNTING <ref or negative status>`: a
//!   handler for `code` that checks each event (its code, a source among the
//!   listed procs, a `test.seq` Uint64 greater than the last one from that
//!   source) and ends the chain (`PMIX_EVENT_ACTION_COMPLETE`: handlers
//!   registered before it, the default printer among them, do not run);
//!   `COUNTED <code>` → `COUNT_RESULT <code> valid=<n> invalid=<n>
//!   first_invalid=<what, spaces as ~, or ->`.
//! - `CHURN <ms> <code> <env code>` → for `ms` milliseconds: registers a
//!   handler for `code` (it counts its invocations and lets the chain go
//!   on), one for the environment code `<env code>` (a server round trip),
//!   then deregisters both; then `CHURNED <status> <cycles> <invocations>`
//!   (the first failure ends the loop).
//!
//! Every event any handler sees is printed as
//! `EVENT code=<i32> source=<ns>:<rank> seq=<test.seq or -> affected=<procs or ->`,
//! followed by ` proxy=<procs>` when the event carries `PMIX_EVENT_PROXY`
//! (every one of them, comma-separated: a duplicate would show).
//!
//! Server role ([`ServerProc`], [`server_main`]): the test binary re-executed
//! with [`ROLE_ENV`] = `server` runs a `Server` that registers the clients
//! listed in [`SERVER_PROCS_ENV`] (`ns:rank,...`, uid/gid = its own) and
//! prints, after a newline:
//! - `SEGMENT <name>` for each namespace ring (`/dev/shm/<name>`),
//! - `ENV <ns:rank> <KEY>=<VALUE>` for each `setup_fork` variable,
//! - `SERVER_READY <pid>`;
//!
//! then waits until its stdin closes (or it is killed).

#![allow(dead_code)]

use fastpmix::client::Client;
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::server::{Server, SERVER_ADDR_ENV};
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Key, Proc, Rank, Status, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// Names the role of a re-executed test binary.
pub const ROLE_ENV: &str = "FASTPMIX_TEST_ROLE";
/// Turns a hang into a failure (never asserted as a time).
pub const HANG: Duration = Duration::from_secs(60);
/// The info key carrying a sequence number in `NOTIFY_N` events.
pub const SEQ: Key = Key::from_static("test.seq");
/// The info key carrying the payload of `NOTIFY_BIG` events.
pub const BIG: Key = Key::from_static("test.big");
/// Commands for a client started by `fastpmix run` (`;`-separated).
pub const SCRIPT_ENV: &str = "FASTPMIX_TEST_SCRIPT";
/// Ranks (`,`-separated) that exit with status 0 before `PMIx_Init`, as a
/// careless program under `fastpmix run` may.
pub const EXIT_BEFORE_INIT_ENV: &str = "FASTPMIX_TEST_EXIT_BEFORE_INIT";
/// Set (to anything) in a child's environment: it registers no default
/// handler at start, so it has no handler until a command registers one.
pub const NO_DEFAULT_HANDLER_ENV: &str = "FASTPMIX_TEST_NO_DEFAULT_HANDLER";
/// Events caught by `WATCH` handlers, per code (for `AWAIT`).
static CAUGHT: (
    std::sync::Mutex<std::collections::BTreeMap<i32, u32>>,
    std::sync::Condvar,
) = (
    std::sync::Mutex::new(std::collections::BTreeMap::new()),
    std::sync::Condvar::new(),
);
/// The clients a server child registers (`ns:rank,...`).
pub const SERVER_PROCS_ENV: &str = "FASTPMIX_TEST_SERVER_PROCS";
/// Clients a server child registers as the second test uid ([`peer_ids`]).
pub const SERVER_PEER_PROCS_ENV: &str = "FASTPMIX_TEST_SERVER_PEER_PROCS";
/// Set: a server child prints its trace sink's lines as `TRACE <line>`.
pub const SERVER_TRACE_ENV: &str = "FASTPMIX_TEST_SERVER_TRACE";
/// Set: a server child registers each namespace as a whole job on its
/// node (`PMIX_JOB_SIZE` and `PMIX_LOCAL_PEERS` of its listed ranks), which
/// gives it a fence barrier.
pub const SERVER_WHOLE_JOB_ENV: &str = "FASTPMIX_TEST_SERVER_WHOLE_JOB";
/// `<n>`: once set up, a server child lowers its RLIMIT_NOFILE to the
/// descriptors it has open plus `n` (and prints `NOFILE <limit>`).
pub const SERVER_NOFILE_SLACK_ENV: &str = "FASTPMIX_TEST_SERVER_NOFILE_SLACK";

/// A client process.
pub struct ClientProc {
    pub proc: Proc,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Lines already read but not yet matched.
    pub seen: Vec<String>,
}

impl ClientProc {
    /// Spawns the test binary's `entry` test with the server's environment.
    pub fn spawn(entry: &str, proc: Proc, env: &[(String, String)]) -> ClientProc {
        Self::spawn_as(entry, proc, env, None)
    }

    /// [`ClientProc::spawn`] as another uid/gid (the caller must be root).
    pub fn spawn_as(
        entry: &str,
        proc: Proc,
        env: &[(String, String)],
        ids: Option<(u32, u32)>,
    ) -> ClientProc {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = Command::new(exe);
        if let Some((uid, gid)) = ids {
            use std::os::unix::process::CommandExt;
            cmd.uid(uid).gid(gid);
        }
        cmd.args([entry, "--exact", "--nocapture", "--test-threads=1"])
            .env(ROLE_ENV, "client")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn client process");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut c = ClientProc {
            proc,
            child,
            stdin,
            lines: rx,
            seen: Vec::new(),
        };
        c.expect("READY");
        c
    }

    /// Sends one command line.
    pub fn send(&mut self, line: &str) {
        let s = self.stdin.as_mut().expect("stdin open");
        writeln!(s, "{line}").unwrap();
        s.flush().unwrap();
    }

    /// Waits for a line starting with `prefix` (earlier non-matching lines
    /// are kept in `seen`). Panics after [`HANG`].
    pub fn expect(&mut self, prefix: &str) -> String {
        if let Some(i) = self.seen.iter().position(|l| l.starts_with(prefix)) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + HANG;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return l,
                Ok(l) => self.seen.push(l),
                Err(_) => panic!(
                    "{}: no line starting with {prefix:?}; saw {:?}",
                    self.proc, self.seen
                ),
            }
        }
    }

    /// `PING` round trip: every earlier command was handled, and every
    /// event delivered before it printed. Returns the events seen so far.
    pub fn sync(&mut self) -> Vec<String> {
        self.send("PING");
        self.expect("PONG");
        self.take_events()
    }

    /// Removes and returns the EVENT lines read so far.
    pub fn take_events(&mut self) -> Vec<String> {
        let (ev, rest): (Vec<String>, Vec<String>) = std::mem::take(&mut self.seen)
            .into_iter()
            .partition(|l| l.starts_with("EVENT "));
        self.seen = rest;
        ev.into_iter()
            .filter(|l| !l.starts_with("EVENT code=-9999 "))
            .collect()
    }

    /// Collects EVENT lines for `d` (events that must NOT arrive are
    /// checked this way: the wait is a grace period, not a measurement).
    pub fn events_within(&mut self, d: Duration) -> Vec<String> {
        let deadline = Instant::now() + d;
        while let Ok(l) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(l);
        }
        self.take_events()
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILLs the process and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to end by itself or by a signal (its stdin
    /// stays open: closing it would end it normally).
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        self.child.wait().expect("wait for the client")
    }

    /// Finalizes and waits for exit.
    pub fn finalize(&mut self) {
        self.send("FINALIZE");
        self.expect("FINALIZED");
        self.stdin = None;
        let _ = self.child.wait();
    }
}

impl Drop for ClientProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ns:rank` (rank `*` = wildcard).
/// One info from a `key=T:V` token. T: `b` bool (1/0), `i` int, `u32`,
/// `u64`, `st` status, `s` string (`~` for a space), `null` (NULL: no
/// value), `time`, `range`, `procs` (`ns:r;ns:r`), `strs` (`a;b`), `infos`
/// (`k=T:V|k=T:V`), `ptr` (a NULL pointer). A leading `!` marks it required.
pub fn parse_info(tok: &str) -> Info {
    let (req, tok) = match tok.strip_prefix('!') {
        Some(t) => (true, t),
        None => (false, tok),
    };
    let (k, tv) = tok.split_once('=').expect("key=T:V");
    let (t, v) = tv.split_once(':').unwrap_or((tv, ""));
    let value = match t {
        "b" => Value::Bool(v == "1"),
        "i" => Value::Int(v.parse().unwrap()),
        "u32" => Value::Uint32(v.parse().unwrap()),
        "u64" => Value::Uint64(v.parse().unwrap()),
        "st" => Value::Status(Status(v.parse().unwrap())),
        "s" => Value::String(v.replace('~', " ")),
        "null" => Value::Undef,
        "time" => Value::Time(v.parse().unwrap()),
        "range" => Value::DataRange(DataRange(v.parse().unwrap())),
        "ptr" => Value::Pointer(0),
        "procs" => Value::DataArray(fastpmix::types::DataArray::Proc(
            v.split(';').map(parse_proc).collect(),
        )),
        "strs" => Value::DataArray(fastpmix::types::DataArray::String(
            v.split(';').map(str::to_owned).collect(),
        )),
        "infos" => Value::DataArray(fastpmix::types::DataArray::Info(
            v.split('|')
                .filter(|x| !x.is_empty())
                .map(parse_info)
                .collect(),
        )),
        other => panic!("unknown info type {other}"),
    };
    let key = Key::new(k).unwrap();
    if req {
        Info::required(key, value)
    } else {
        Info::new(key, value)
    }
}

/// Results as `key=<value>;...` (nested arrays in brackets).
pub fn fmt_infos(v: &[Info]) -> String {
    fn val(v: &Value) -> String {
        match v {
            Value::DataArray(fastpmix::types::DataArray::Info(x)) => format!("[{}]", fmt_infos(x)),
            Value::String(s) => s.replace(' ', "~"),
            Value::Proc(p) => p.to_string(),
            other => format!("{other:?}").replace(' ', ""),
        }
    }
    if v.is_empty() {
        return "-".into();
    }
    v.iter()
        .map(|i| format!("{}={}", i.key.as_str(), val(&i.value)))
        .collect::<Vec<_>>()
        .join(";")
}

/// Fence tags whose callback ran, with its status (for `FENCE_CHECK`).
static FENCES: std::sync::Mutex<Vec<(String, i32)>> = std::sync::Mutex::new(Vec::new());

/// A proc token of the fence/get commands (see the module docs).
fn proc_of(c: &Client, s: &str) -> Proc {
    let me = c.me();
    match s.strip_prefix('@') {
        Some("me") => me,
        Some("*") => Proc {
            nspace: me.nspace,
            rank: Rank::WILDCARD,
        },
        Some("undef") => Proc {
            nspace: me.nspace,
            rank: Rank::UNDEF,
        },
        Some(r) => Proc {
            nspace: me.nspace,
            rank: Rank(r.parse().unwrap()),
        },
        None => parse_proc(s),
    }
}

fn procs_of(c: &Client, s: &str) -> Vec<Proc> {
    if s == "-" {
        Vec::new()
    } else {
        s.split(',').map(|p| proc_of(c, p)).collect()
    }
}

/// A `PUT` item: `key=T:V` as [`parse_info`] reads it, or
/// `key=bytes:<n>`.
fn put_item(kv: &str) -> (String, Value) {
    if let Some((k, n)) = kv.split_once("=bytes:") {
        let n: usize = n.parse().unwrap();
        return (
            long_key(k),
            Value::ByteObject((0..n).map(|i| (i % 251) as u8).collect()),
        );
    }
    let (k, _) = kv.split_once('=').expect("key=T:V");
    let i = parse_info(&kv.replacen(k, "k", 1));
    (long_key(k), i.value)
}

/// `LONG<n>`: a key of n bytes; `EMPTY`: the empty key.
fn long_key(k: &str) -> String {
    match k {
        "EMPTY" => String::new(),
        k if k.starts_with("LONG") => "x".repeat(k[4..].parse().unwrap()),
        k => k.to_owned(),
    }
}

/// A `GET` result value as the module docs say.
fn fmt_value(v: &Value) -> String {
    match v {
        Value::Uint32(n) => format!("u32:{n}"),
        Value::Uint16(n) => format!("u16:{n}"),
        Value::Rank(r) => format!("rank:{}", r.0),
        Value::String(t) => format!("s:{}", t.replace(' ', "~")),
        Value::ByteObject(b) => format!(
            "bytes:{}:{}",
            b.len(),
            b.iter().map(|x| u64::from(*x)).sum::<u64>()
        ),
        other => format!("{other:?}").replace(' ', ""),
    }
}

/// `QUERY` keys (comma-separated; `NONE`: no keys) and a `PMIX_NSPACE`
/// qualifier (`-`: none).
fn query_of(keys: &str, ns: &str) -> fastpmix::client::Query {
    let keys: Vec<&str> = if keys == "NONE" {
        Vec::new()
    } else {
        keys.split(',').collect()
    };
    let q = fastpmix::client::Query::new(keys);
    if ns == "-" {
        q
    } else {
        q.qualifier(Info::new(fastpmix::types::attrs::PMIX_NSPACE, ns))
    }
}

/// A query answer: proc tables as `rank@host:state:pid-known` items,
/// others as [`fmt_value`].
fn fmt_query_value(v: &Value) -> String {
    match v {
        Value::DataArray(fastpmix::types::DataArray::ProcInfo(t)) => t
            .iter()
            .map(|p| {
                format!(
                    "{}@{}:{}:{}",
                    p.proc.rank.0,
                    p.hostname,
                    p.state,
                    if p.pid > 0 { "pid" } else { "nopid" }
                )
            })
            .collect::<Vec<_>>()
            .join(","),
        other => fmt_value(other),
    }
}

fn targets(s: &str) -> Vec<Proc> {
    if s == "-" {
        Vec::new()
    } else {
        s.split(',').map(parse_proc).collect()
    }
}

/// Self-pipe for `SIGWATCH`: the handler writes the signal number.
static SIG_PIPE: std::sync::OnceLock<(i32, i32)> = std::sync::OnceLock::new();

extern "C" fn on_signal(sig: i32) {
    if let Some((_, w)) = SIG_PIPE.get() {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; one byte from the stack.
        unsafe { libc::write(*w, (&b as *const u8).cast(), 1) };
    }
}

fn sigwatch(sig: i32) {
    let (r, _) = *SIG_PIPE.get_or_init(|| {
        let mut fds = [0i32; 2];
        // SAFETY: fds has room for the two descriptors pipe(2) returns.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let r = fds[0];
        std::thread::spawn(move || loop {
            let mut b = 0u8;
            // SAFETY: reads one byte into a live local.
            if unsafe { libc::read(r, (&mut b as *mut u8).cast(), 1) } != 1 {
                break;
            }
            println!("SIGNALED {b}");
            let _ = std::io::stdout().flush();
        });
        (fds[0], fds[1])
    });
    let _ = r;
    // SAFETY: installs an async-signal-safe handler for `sig`.
    unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
}

/// Field 3 of /proc/PID/stat: the process state.
pub fn state(pid: u32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Polls `pid`'s state until `want` holds (or [`HANG`] passes); returns the
/// last state seen.
pub fn wait_state(pid: u32, want: impl Fn(char) -> bool) -> char {
    let deadline = Instant::now() + HANG;
    loop {
        let s = state(pid).expect("process exists");
        if want(s) || Instant::now() > deadline {
            return s;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// This process's uid and gid.
pub fn ids() -> (u32, u32) {
    // SAFETY: getuid/getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// Registers the namespaces `spec` names (`(ns, ranks)`) with `server` and
/// starts every rank as a connected client process (this process's uid),
/// in that order.
pub fn spawn_clients(server: &Server, entry: &str, spec: &[(&str, u32)]) -> Vec<ClientProc> {
    let (uid, gid) = ids();
    let mut clients = Vec::new();
    for (ns, n) in spec {
        server
            .register_nspace(&fastpmix::Nspace::new(ns).unwrap(), vec![])
            .unwrap();
        for r in 0..*n {
            let p = Proc::new(ns, r).unwrap();
            server.register_client(&p, uid, gid).unwrap();
            let env = server.setup_fork(&p).unwrap();
            clients.push(ClientProc::spawn(entry, p, &env));
        }
    }
    clients
}

/// Registers namespace `ns` as a whole job of `n` ranks on this node
/// (`PMIX_JOB_SIZE`, `PMIX_LOCAL_PEERS`, as a launcher does) and starts
/// every rank as a connected client process.
#[allow(dead_code)] // not every test binary that includes procs uses it
pub fn spawn_job(server: &Server, entry: &str, ns: &str, n: u32) -> Vec<ClientProc> {
    let peers: Vec<String> = (0..n).map(|r| r.to_string()).collect();
    let info = vec![
        Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(n)),
        Info::new(attrs::PMIX_LOCAL_PEERS, Value::String(peers.join(","))),
    ];
    let (uid, gid) = ids();
    server
        .register_nspace(&fastpmix::Nspace::new(ns).unwrap(), info)
        .unwrap();
    (0..n)
        .map(|r| {
            let p = Proc::new(ns, r).unwrap();
            server.register_client(&p, uid, gid).unwrap();
            let env = server.setup_fork(&p).unwrap();
            ClientProc::spawn(entry, p, &env)
        })
        .collect()
}

#[allow(dead_code)] // only the fence tests use it
pub mod fence;

#[path = "../peer/mod.rs"]
mod peer;
#[allow(unused_imports)] // not every test binary that includes procs uses both
pub use peer::{peer_can_run_this_binary, peer_ids};

/// As root: one client of uid 0 in namespace `root_ns` and one of the
/// second user ([`peer_ids`]) in `nobody_ns` (a namespace's ring belongs
/// to one uid).
pub fn two_uid_clients(
    server: &Server,
    entry: &str,
    root_ns: &str,
    nobody_ns: &str,
) -> (ClientProc, ClientProc) {
    let (root, nobody) = (
        Proc::new(root_ns, 0).unwrap(),
        Proc::new(nobody_ns, 0).unwrap(),
    );
    server.register_nspace(&root.nspace, vec![]).unwrap();
    server.register_nspace(&nobody.nspace, vec![]).unwrap();
    server.register_client(&root, 0, 0).unwrap();
    let (pu, pg) = peer_ids();
    server.register_client(&nobody, pu, pg).unwrap();
    let r = ClientProc::spawn(entry, root, &server.setup_fork(&root).unwrap());
    let u = ClientProc::spawn_as(
        entry,
        nobody,
        &server.setup_fork(&nobody).unwrap(),
        Some((pu, pg)),
    );
    (r, u)
}

pub fn parse_proc(s: &str) -> Proc {
    let (ns, r) = s.rsplit_once(':').expect("ns:rank");
    let rank = if r == "*" {
        Rank::WILDCARD.0
    } else {
        r.parse().unwrap()
    };
    Proc::new(ns, rank).unwrap()
}

/// `BLOCKING_IN_HANDLER`: each blocking call a handler may make, printed
/// as `BLOCKING <call> <status or ref>`, then `BLOCKING_DONE`.
fn blocking_calls(c: &Client, env: Status) {
    let say = |what: &str, s: i64| {
        println!("BLOCKING {what} {s}");
        let _ = std::io::stdout().flush();
    };
    let code = |r: Result<(), Status>| r.err().unwrap_or(Status::SUCCESS).0 as i64;
    // An environment code: a round trip to the server (and its host).
    let reg = c.register(Registration::new(&[env], |inv: Invocation| {
        inv.complete(Status::SUCCESS, Vec::new())
    }));
    say(
        "register",
        reg.map(|r| r.0 as i64).unwrap_or_else(|s| s.0 as i64),
    );
    if let Ok(r) = reg {
        say("deregister", code(c.deregister(r)));
    }
    let me = c.me();
    say(
        "notify_proc_local",
        code(c.notify(Notification::new(Status(-9996), me, DataRange::PROC_LOCAL))),
    );
    say(
        "notify_namespace",
        code(c.notify(Notification::new(Status(-9995), me, DataRange::NAMESPACE))),
    );
    say("fence", code(c.fence(&[me], &[])));
    say(
        "get",
        c.get(&me, attrs::PMIX_JOB_SIZE.as_str())
            .map(|_| 0)
            .unwrap_or_else(|s| s.0 as i64),
    );
    let o = c.log(
        &[Info::new(attrs::PMIX_LOG_STDERR, "from a handler\n")],
        &[],
    );
    say("log", o.status.0 as i64);
    println!("BLOCKING_DONE");
    let _ = std::io::stdout().flush();
}

fn event_line(inv: &Invocation) -> String {
    let seq = inv
        .info()
        .iter()
        .find(|i| i.key == SEQ)
        .map(|i| format!("{:?}", i.value))
        .unwrap_or_else(|| "-".into());
    let affected = inv
        .info()
        .iter()
        .find(|i| i.key == attrs::PMIX_EVENT_AFFECTED_PROC)
        .and_then(|i| i.value.as_procs())
        .map(|v| {
            v.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_else(|| "-".into());
    let proxies: Vec<String> = inv
        .info()
        .iter()
        .filter(|i| i.key == attrs::PMIX_EVENT_PROXY)
        .map(|i| match i.value.as_procs() {
            Some(v) => v
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(","),
            None => format!("{:?}", i.value),
        })
        .collect();
    let proxy = if proxies.is_empty() {
        String::new()
    } else {
        format!(" proxy={}", proxies.join(","))
    };
    format!(
        "EVENT code={} source={} seq={} affected={}{proxy}",
        inv.status().0,
        inv.source(),
        seq,
        affected
    )
}

/// The body of a client child. Call it from a `#[test]` that returns at
/// once unless [`ROLE_ENV`] is set.
pub fn client_main() {
    // libtest printed "test child_client ... " without a newline: end that
    // line before a handler (replaying cached events) prints anything.
    println!();
    if let (Ok(list), Ok(me)) = (
        std::env::var(EXIT_BEFORE_INIT_ENV),
        std::env::var("PMIX_RANK"),
    ) {
        if list.split(',').any(|r| r == me) {
            println!("EXITING_BEFORE_INIT");
            let _ = std::io::stdout().flush();
            std::process::exit(0);
        }
    }
    let c = match Client::init() {
        Ok(c) => c,
        Err(s) => {
            println!("INITFAILED {}", s.0);
            std::process::exit(3);
        }
    };
    let printer = |inv: Invocation| {
        println!("{}", event_line(&inv));
        let _ = std::io::stdout().flush();
        inv.complete(Status::SUCCESS, Vec::new());
    };
    if std::env::var_os(NO_DEFAULT_HANDLER_ENV).is_none() {
        c.register(Registration::new(&[], printer))
            .expect("default handler");
    }
    // libtest printed "test child_client ... " without a newline.
    println!("\nREADY");
    let _ = std::io::stdout().flush();
    // Under `fastpmix run` there is no stdin to drive the child: the
    // commands come from SCRIPT_ENV, separated by ';'.
    let lines: Box<dyn Iterator<Item = std::io::Result<String>>> = match std::env::var(SCRIPT_ENV) {
        Ok(s) => Box::new(
            s.split(';')
                .map(|l| Ok(l.trim().to_owned()))
                .collect::<Vec<_>>()
                .into_iter(),
        ),
        Err(_) => Box::new(std::io::stdin().lock().lines()),
    };
    for line in lines {
        let Ok(line) = line else { break };
        let w: Vec<&str> = line.split_whitespace().collect();
        // `ON <rank> <command>`: the command for that rank only (a script
        // under `fastpmix run` is the same for every rank); `EXCEPT <rank>
        // <command>`: for every other rank.
        let w = match w.as_slice() {
            ["ON", r, rest @ ..] => {
                if r.parse::<u32>().ok() != Some(c.me().rank.0) {
                    continue;
                }
                rest.to_vec()
            }
            ["EXCEPT", r, rest @ ..] => {
                if r.parse::<u32>().ok() == Some(c.me().rank.0) {
                    continue;
                }
                rest.to_vec()
            }
            _ => w,
        };
        match w.as_slice() {
            ["NOTIFY", code, range, rest @ ..] => {
                let mut n = Notification::new(
                    Status(code.parse().unwrap()),
                    c.me(),
                    DataRange(range.parse().unwrap()),
                );
                if let Some(list) = rest.first() {
                    let procs: Vec<Proc> = list.split(',').map(parse_proc).collect();
                    n = n.info(Info::new(attrs::PMIX_EVENT_CUSTOM_RANGE, procs));
                }
                let s = c.notify(n).err().unwrap_or(Status::SUCCESS);
                println!("NOTIFIED {}", s.0);
            }
            ["NOTIFY_N", count, code, range] => {
                let mut s = Status::SUCCESS;
                for i in 0..count.parse::<u64>().unwrap() {
                    let n = Notification::new(
                        Status(code.parse().unwrap()),
                        c.me(),
                        DataRange(range.parse().unwrap()),
                    )
                    .info(Info::new(SEQ, Value::Uint64(i)));
                    if let Err(e) = c.notify(n) {
                        s = e;
                        break;
                    }
                }
                println!("NOTIFIED {}", s.0);
            }
            ["REGISTER_ONESHOT", code] => {
                let reg = Registration::new(&[Status(code.parse().unwrap())], |inv: Invocation| {
                    println!("ONESHOT_RAN {}", inv.status().0);
                    let _ = std::io::stdout().flush();
                    inv.complete(Status::SUCCESS, Vec::new())
                })
                .info(Info::new(attrs::PMIX_EVENT_ONESHOT, true));
                let r = c
                    .register(reg)
                    .map(|r| r.0 as i64)
                    .unwrap_or_else(|s| s.0 as i64);
                println!("REGISTERED {r}");
            }
            ["REGISTER_IN", code, range] => {
                let reg = Registration::new(&[Status(code.parse().unwrap())], |inv: Invocation| {
                    inv.complete(Status::SUCCESS, Vec::new())
                })
                .info(Info::new(
                    attrs::PMIX_RANGE,
                    Value::DataRange(DataRange(range.parse().unwrap())),
                ));
                let r = c
                    .register(reg)
                    .map(|r| r.0 as i64)
                    .unwrap_or_else(|s| s.0 as i64);
                println!("REGISTERED {r}");
            }
            ["REGISTER", code] => {
                let r = c
                    .register(Registration::new(
                        &[Status(code.parse().unwrap())],
                        |inv: Invocation| inv.complete(Status::SUCCESS, Vec::new()),
                    ))
                    .map(|r| r.0 as i64)
                    .unwrap_or_else(|s| s.0 as i64);
                println!("REGISTERED {r}");
            }
            ["BLOCKING_IN_HANDLER", env] => {
                // A PROC_LOCAL trigger whose handler makes every kind of
                // blocking call, on the progress thread.
                let (inner, env) = (c.clone(), Status(env.parse().unwrap()));
                let trigger = Status(-9997);
                let r = c.register(Registration::new(&[trigger], move |inv: Invocation| {
                    blocking_calls(&inner, env);
                    inv.complete(Status::SUCCESS, Vec::new());
                }));
                let s = r.and_then(|_| {
                    c.notify(Notification::new(trigger, c.me(), DataRange::PROC_LOCAL))
                });
                println!("BLOCKING_STARTED {}", s.err().unwrap_or(Status::SUCCESS).0);
            }
            ["DEREGISTER", r] => {
                let s = c
                    .deregister(fastpmix::event::HandlerRef(r.parse().unwrap()))
                    .err()
                    .unwrap_or(Status::SUCCESS);
                println!("DEREGISTERED {}", s.0);
            }
            ["FINALIZE"] => {
                let s = c.finalize().err().unwrap_or(Status::SUCCESS);
                println!("FINALIZED {}", s.0);
                let _ = std::io::stdout().flush();
                std::process::exit(0);
            }
            ["ABORT"] => std::process::abort(),
            ["NOTIFY_BIG", bytes, code, range] => {
                let n = Notification::new(
                    Status(code.parse().unwrap()),
                    c.me(),
                    DataRange(range.parse().unwrap()),
                )
                .info(Info::new(BIG, "x".repeat(bytes.parse().unwrap())));
                let s = c.notify(n).err().unwrap_or(Status::SUCCESS);
                println!("NOTIFIED {}", s.0);
            }
            ["WATCH", code] => watch(&c, code, |inv| {
                format!("CAUGHT {}", event_line(inv).trim_start_matches("EVENT "))
            }),
            ["PMIX_ABORT", status, msg, t] => {
                let s = c.abort(
                    Status(status.parse().unwrap()),
                    &msg.replace('~', " "),
                    &targets(t),
                );
                println!("ABORT_RESULT {}", s.0);
            }
            ["AWAIT", code, n] => {
                let (code, n): (i32, u32) = (code.parse().unwrap(), n.parse().unwrap());
                let (m, cv) = &CAUGHT;
                let g = m.lock().unwrap();
                let (g, _) = cv
                    .wait_timeout_while(g, HANG, |c| c.get(&code).copied().unwrap_or(0) < n)
                    .unwrap();
                println!("AWAITED {code} {}", g.get(&code).copied().unwrap_or(0));
            }
            ["INIT_AGAIN"] => {
                let again = Client::init().expect("second init");
                let same = again.me() == c.me() && again.server() == c.server();
                println!("INIT_AGAIN {}", if same { "same" } else { "different" });
            }
            ["PLACEMENT"] => println!("PLACEMENT {}", c.placement()),
            ["TOPOLOGY"] => println!(
                "TOPOLOGY {}",
                if fastpmix::place::topology_loaded() {
                    "loaded"
                } else {
                    "not-loaded"
                }
            ),
            ["PING"] => {
                // Handlers run on the progress thread: a PROC_LOCAL event
                // through it flushes everything delivered before. Not kept
                // for later registrations.
                let (tx, rx) = mpsc::channel();
                let _ = c.engine().notify_nb(
                    Notification::new(Status(-9999), c.me(), DataRange::PROC_LOCAL)
                        .info(Info::new(attrs::PMIX_EVENT_HDLR_NAME, "ping"))
                        .info(Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, true)),
                    move |_| {
                        let _ = tx.send(());
                    },
                );
                let _ = rx.recv_timeout(HANG);
                println!("PONG");
            }
            ["JOBCTL", t, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let o = c.job_control(&targets(t), &d);
                println!("JOBCTL_RESULT {} {}", o.status.0, fmt_infos(&o.results));
            }
            ["JOBCTL_NB", tag, t, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let tag2 = tag.to_string();
                let s = c.job_control_nb(&targets(t), &d, move |o| {
                    println!("JOBCTL_CB {tag2} {} {}", o.status.0, fmt_infos(&o.results));
                    let _ = std::io::stdout().flush();
                });
                println!("JOBCTL_NB_STARTED {tag} {}", s.0);
            }
            ["MONITOR", m, err, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let o = c.monitor(&parse_info(m), Status(err.parse().unwrap()), &d);
                println!("MONITOR_RESULT {} {}", o.status.0, fmt_infos(&o.results));
            }
            ["ALLOC", dir, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let o = c.allocate(fastpmix::types::AllocDirective(dir.parse().unwrap()), &d);
                println!("ALLOC_RESULT {} {}", o.status.0, fmt_infos(&o.results));
            }
            ["LOG", rest @ ..] => {
                let cut = rest.iter().position(|x| *x == "--").unwrap_or(rest.len());
                let data: Vec<Info> = rest[..cut].iter().map(|x| parse_info(x)).collect();
                let dirs: Vec<Info> = rest[(cut + 1).min(rest.len())..]
                    .iter()
                    .map(|x| parse_info(x))
                    .collect();
                let o = c.log(&data, &dirs);
                println!("LOG_RESULT {} {}", o.status.0, fmt_infos(&o.results));
            }
            ["BEAT"] => {
                let s = c.heartbeat().err().unwrap_or(Status::SUCCESS);
                println!("BEAT_OK {}", s.0);
            }
            ["BEAT_EVERY", ms, n] => {
                let (ms, n): (u64, u32) = (ms.parse().unwrap(), n.parse().unwrap());
                let c2 = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..n {
                        let _ = c2.heartbeat();
                        std::thread::sleep(Duration::from_millis(ms));
                    }
                    println!("BEATS_DONE");
                    let _ = std::io::stdout().flush();
                });
            }
            ["IGNORE_TERM"] => {
                // SAFETY: SIG_IGN for SIGTERM; no handler code runs.
                unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
                println!("IGNORING");
            }
            ["SIGWATCH", sig] => {
                sigwatch(sig.parse().unwrap());
                println!("SIGWATCHING");
            }
            ["CKPT_RESPONDER", code, range] => {
                let c2 = c.clone();
                let range = DataRange(range.parse().unwrap());
                let responder = move |inv: Invocation| {
                    let id = inv
                        .info()
                        .iter()
                        .find(|i| i.key == attrs::PMIX_JOB_CTRL_CHECKPOINT)
                        .and_then(|i| i.value.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    println!("CHECKPOINTING {id}");
                    let _ = std::io::stdout().flush();
                    let n = Notification::new(Status::JCTRL_CHECKPOINT_COMPLETE, c2.me(), range)
                        .info(Info::new(attrs::PMIX_JOB_CTRL_CHECKPOINT, id));
                    let _ = c2.notify(n);
                    inv.complete(Status::SUCCESS, Vec::new());
                };
                let r = c
                    .register(Registration::new(
                        &[Status(code.parse().unwrap())],
                        responder,
                    ))
                    .map(|r| r.0 as i64)
                    .unwrap_or_else(|s| s.0 as i64);
                println!("RESPONDING {r}");
            }
            // `WATCH_INFO <code>` → `WATCHING <ref or negative status>`: like
            // `WATCH`, but each event prints as `CAUGHT_INFO code=<i32>
            // source=<ns>:<rank> affected=<procs or -> <infos>` (the infos
            // as `MONITOR_RESULT` prints results, spaces as `~`); it counts
            // for `AWAIT` too.
            ["WATCH_INFO", code] => watch(&c, code, caught_info_line),
            // `LOG_NB <info>... -- <info>...` → `LOG_NB_STARTED <status>`,
            // then, from the callback, `LOG_CB <status> <results>
            // thread=<other|caller>`. A callback on another thread prints
            // only after the call returned and `LOG_NB_STARTED` was printed;
            // one run on the caller's thread (inside the call) prints at
            // once, so its line comes first.
            ["LOG_NB", rest @ ..] => {
                let cut = rest.iter().position(|x| *x == "--").unwrap_or(rest.len());
                let data: Vec<Info> = rest[..cut].iter().map(|x| parse_info(x)).collect();
                let dirs: Vec<Info> = rest[(cut + 1).min(rest.len())..]
                    .iter()
                    .map(|x| parse_info(x))
                    .collect();
                let (gate_tx, gate_rx) = mpsc::channel::<()>();
                let caller = std::thread::current().id();
                let s = c.log_nb(&data, &dirs, move |o| {
                    let other = std::thread::current().id() != caller;
                    if other {
                        let _ = gate_rx.recv_timeout(HANG);
                    }
                    let t = if other { "other" } else { "caller" };
                    println!("LOG_CB {} {} thread={t}", o.status.0, fmt_infos(&o.results));
                    let _ = std::io::stdout().flush();
                });
                println!("LOG_NB_STARTED {}", s.0);
                let _ = std::io::stdout().flush();
                let _ = gate_tx.send(());
            }
            // `MONITOR_NB <tag> <info> <error> <info>...` →
            // `MONITOR_NB_STARTED <tag> <status>`, then, from the callback,
            // `MONITOR_CB <tag> <status> <results> thread=<other|caller>`
            // (ordered as `LOG_NB`: a callback on another thread prints only
            // after the STARTED line).
            ["MONITOR_NB", tag, m, err, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let (gate_tx, gate_rx) = mpsc::channel::<()>();
                let caller = std::thread::current().id();
                let tag2 = tag.to_string();
                let s = c.monitor_nb(&parse_info(m), Status(err.parse().unwrap()), &d, move |o| {
                    let other = std::thread::current().id() != caller;
                    if other {
                        let _ = gate_rx.recv_timeout(HANG);
                    }
                    let t = if other { "other" } else { "caller" };
                    println!(
                        "MONITOR_CB {tag2} {} {} thread={t}",
                        o.status.0,
                        fmt_infos(&o.results)
                    );
                    let _ = std::io::stdout().flush();
                });
                println!("MONITOR_NB_STARTED {tag} {}", s.0);
                let _ = std::io::stdout().flush();
                let _ = gate_tx.send(());
            }
            // `ALLOC_NB <tag> <directive> <info>...` →
            // `ALLOC_NB_STARTED <tag> <status>`, then, from the callback,
            // `ALLOC_CB <tag> <status> <results> thread=<other|caller>`
            // (ordered as `LOG_NB`).
            ["ALLOC_NB", tag, dir, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let (gate_tx, gate_rx) = mpsc::channel::<()>();
                let caller = std::thread::current().id();
                let tag2 = tag.to_string();
                let directive = fastpmix::types::AllocDirective(dir.parse().unwrap());
                let s = c.allocate_nb(directive, &d, move |o| {
                    let other = std::thread::current().id() != caller;
                    if other {
                        let _ = gate_rx.recv_timeout(HANG);
                    }
                    let t = if other { "other" } else { "caller" };
                    println!(
                        "ALLOC_CB {tag2} {} {} thread={t}",
                        o.status.0,
                        fmt_infos(&o.results)
                    );
                    let _ = std::io::stdout().flush();
                });
                println!("ALLOC_NB_STARTED {tag} {}", s.0);
                let _ = std::io::stdout().flush();
                let _ = gate_tx.send(());
            }
            // `FINALIZE_STAY` → `FINALIZED_STAYING <status>`: finalizes and
            // keeps running and reading commands (`PING` still answers
            // `PONG`; calls on the client fail).
            ["FINALIZE_STAY"] => {
                let s = c.finalize().err().unwrap_or(Status::SUCCESS);
                println!("FINALIZED_STAYING {}", s.0);
            }
            // `CKPT_DONE <id> <range>` → `CKPT_DONE_SENT <status>`: reports
            // `PMIX_JCTRL_CHECKPOINT_COMPLETE` for checkpoint `<id>` in
            // `<range>` (a `CKPT_RESPONDER` under the test's control).
            ["CKPT_DONE", id, range] => {
                let n = Notification::new(
                    Status::JCTRL_CHECKPOINT_COMPLETE,
                    c.me(),
                    DataRange(range.parse().unwrap()),
                )
                .info(Info::new(attrs::PMIX_JOB_CTRL_CHECKPOINT, id.to_string()));
                let s = c.notify(n).err().unwrap_or(Status::SUCCESS);
                println!("CKPT_DONE_SENT {}", s.0);
            }
            ["FENCE", p, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let s = c
                    .fence(&procs_of(&c, p), &d)
                    .err()
                    .unwrap_or(Status::SUCCESS);
                println!("FENCE_RESULT {}", s.0);
            }
            ["FENCE_NB", tag, p, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let (gate_tx, gate_rx) = mpsc::channel::<()>();
                let caller = std::thread::current().id();
                let tag2 = tag.to_string();
                let s = c.fence_nb(&procs_of(&c, p), &d, move |st| {
                    let other = std::thread::current().id() != caller;
                    if other {
                        let _ = gate_rx.recv_timeout(HANG);
                    }
                    FENCES.lock().unwrap().push((tag2.clone(), st.0));
                    let t = if other { "other" } else { "caller" };
                    println!("FENCE_CB {tag2} {} thread={t}", st.0);
                    let _ = std::io::stdout().flush();
                });
                println!("FENCE_NB_STARTED {tag} {}", s.0);
                let _ = std::io::stdout().flush();
                let _ = gate_tx.send(());
            }
            ["FENCE_CHECK", tag] => {
                let (tx, rx) = mpsc::channel();
                let s = c.fence_nb(&[c.me()], &[], move |st| {
                    let _ = tx.send(st);
                });
                assert!(s.is_success(), "probe fence refused: {s}");
                let probe = rx.recv_timeout(HANG).expect("probe fence answered");
                assert!(probe.is_success(), "probe fence failed: {probe}");
                let state = FENCES
                    .lock()
                    .unwrap()
                    .iter()
                    .find(|(t, _)| t == tag)
                    .map(|(_, st)| format!("done {st}"))
                    .unwrap_or_else(|| "pending".into());
                println!("FENCE_STATE {tag} {state}");
            }
            ["GET", p, key] => {
                let key = match *key {
                    "EMPTY" => String::new(),
                    k if k.starts_with("LONG") => "x".repeat(k[4..].parse().unwrap()),
                    k => k.to_owned(),
                };
                match c.get(&proc_of(&c, p), &key) {
                    Ok(v) => println!("GET_RESULT 0 {}", fmt_value(&v)),
                    Err(s) => println!("GET_RESULT {} -", s.0),
                }
            }
            // `PUT <scope> <key>=<T:V>` → `PUT_RESULT <status>`
            // (`bytes:<n>`: n bytes, byte i = i mod 251).
            ["PUT", scope, kv] => {
                let (k, v) = put_item(kv);
                let s = c.put(scope.parse().unwrap(), &k, v);
                println!("PUT_RESULT {}", s.err().unwrap_or(Status::SUCCESS).0);
            }
            ["COMMIT"] => {
                let s = c.commit().err().unwrap_or(Status::SUCCESS);
                println!("COMMIT_RESULT {}", s.0);
            }
            // `STORE_INTERNAL <proc> <key>=<T:V>` → `STORE_RESULT <status>`.
            ["STORE_INTERNAL", p, kv] => {
                let (k, v) = put_item(kv);
                let s = c.store_internal(&proc_of(&c, p), &k, v);
                println!("STORE_RESULT {}", s.err().unwrap_or(Status::SUCCESS).0);
            }
            // `GETX <proc> <key> [infos]` → `GETX_RESULT <status> <value>`.
            ["GETX", p, key, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                match c.get_with(&proc_of(&c, p), &long_key(key), &d) {
                    Ok(v) => println!("GETX_RESULT 0 {}", fmt_value(&v)),
                    Err(s) => println!("GETX_RESULT {} -", s.0),
                }
            }
            // `GETX_NB <tag> <proc> <key> [infos]` → `GETX_NB_STARTED <tag>
            // <status>`, later `GETX_CB <tag> <status> <value>`.
            ["GETX_NB", tag, p, key, infos @ ..] => {
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let tag2 = tag.to_string();
                let s = c.get_nb(&proc_of(&c, p), &long_key(key), &d, move |r| {
                    let (st, v) = match r {
                        Ok(v) => (0, fmt_value(&v)),
                        Err(s) => (s.0, "-".into()),
                    };
                    FENCES.lock().unwrap().push((tag2.clone(), st));
                    println!("GETX_CB {tag2} {st} {v}");
                    let _ = std::io::stdout().flush();
                });
                println!("GETX_NB_STARTED {tag} {}", s.0);
            }
            ["QUERY", keys, ns] => {
                let o = c.query(&[query_of(keys, ns)]);
                println!("QUERY_RESULT {} {}", o.status.0, o.results.len());
                for i in &o.results {
                    println!(
                        "QUERY_VALUE {} {}",
                        i.key.as_str(),
                        fmt_query_value(&i.value)
                    );
                }
            }
            ["QUERY_NB", keys, ns] => {
                // The Rust API calls back when the answer comes, possibly
                // before query_nb returned (the C API adds the after-return
                // gate: c_client's query test checks it).
                let s = c.query_nb(&[query_of(keys, ns)], move |o| {
                    println!("QUERY_NB_RESULT {} {}", o.status.0, o.results.len());
                    let _ = std::io::stdout().flush();
                });
                println!("QUERY_NB_CALLED {}", s.0);
            }
            ["WATCH_HANG", code] => {
                let hang = |inv: Invocation| {
                    println!("HANGING code={} source={}", inv.status().0, inv.source());
                    let _ = std::io::stdout().flush();
                    // Never completes: the chain stays in progress until the
                    // process dies.
                    loop {
                        std::thread::park();
                    }
                };
                let r = c
                    .register(Registration::new(&[Status(code.parse().unwrap())], hang))
                    .map(|r| r.0 as i64)
                    .unwrap_or_else(|s| s.0 as i64);
                println!("WATCHING {r}");
            }
            ["WATCH_AT", code] => watch(&c, code, |inv| {
                let at = mono_ns();
                format!("CAUGHT_AT code={} mono_ns={at}", inv.status().0)
            }),
            ["NOTIFY_FROM", first, count, code, range] => {
                let first: u64 = first.parse().unwrap();
                let mut s = Status::SUCCESS;
                for i in first..first + count.parse::<u64>().unwrap() {
                    let n = Notification::new(
                        Status(code.parse().unwrap()),
                        c.me(),
                        DataRange(range.parse().unwrap()),
                    )
                    .info(Info::new(SEQ, Value::Uint64(i)));
                    if let Err(e) = c.notify(n) {
                        s = e;
                        break;
                    }
                }
                println!("NOTIFIED {}", s.0);
            }
            ["NOTIFY_FOR", ms, code, range] => {
                let until = Instant::now() + Duration::from_millis(ms.parse().unwrap());
                let (code, range) = (
                    Status(code.parse().unwrap()),
                    DataRange(range.parse().unwrap()),
                );
                let (mut s, mut i) = (Status::SUCCESS, 0u64);
                while Instant::now() < until {
                    let n = Notification::new(code, c.me(), range)
                        .info(Info::new(SEQ, Value::Uint64(i)));
                    if let Err(e) = c.notify(n) {
                        s = e;
                        break;
                    }
                    i += 1;
                }
                println!("NOTIFIED_FOR {} {i}", s.0);
            }
            ["COUNT", code, sources] => {
                let code: i32 = code.parse().unwrap();
                let allowed: Vec<Proc> = sources.split(',').map(parse_proc).collect();
                COUNTS.lock().unwrap().entry(code).or_default();
                let counter = move |inv: Invocation| {
                    let seq = inv
                        .info()
                        .iter()
                        .find(|i| i.key == SEQ)
                        .map(|i| i.value.clone());
                    let src = *inv.source();
                    let mut g = COUNTS.lock().unwrap();
                    let st = g.entry(code).or_default();
                    let bad = if inv.status().0 != code {
                        Some(format!("code {} for {code}", inv.status().0))
                    } else if !allowed.contains(&src) {
                        Some(format!("unknown source {src}"))
                    } else {
                        match seq {
                            Some(Value::Uint64(n)) => match st.last.insert(src, n) {
                                Some(prev) if prev >= n => {
                                    Some(format!("seq {n} from {src} after {prev}"))
                                }
                                _ => None,
                            },
                            other => Some(format!("test.seq {other:?} from {src}")),
                        }
                    };
                    match bad {
                        None => st.valid += 1,
                        Some(why) => {
                            st.invalid += 1;
                            st.first_invalid.get_or_insert(why);
                        }
                    }
                    drop(g);
                    inv.complete(Status::EVENT_ACTION_COMPLETE, Vec::new());
                };
                let r = c
                    .register(Registration::new(&[Status(code)], counter))
                    .map(|r| r.0 as i64)
                    .unwrap_or_else(|s| s.0 as i64);
                println!("COUNTING {r}");
            }
            ["COUNTED", code] => {
                let code: i32 = code.parse().unwrap();
                let g = COUNTS.lock().unwrap();
                let st = g.get(&code);
                println!(
                    "COUNT_RESULT {code} valid={} invalid={} first_invalid={}",
                    st.map_or(0, |s| s.valid),
                    st.map_or(0, |s| s.invalid),
                    st.and_then(|s| s.first_invalid.as_deref())
                        .unwrap_or("-")
                        .replace(' ', "~")
                );
            }
            ["CHURN", ms, code, env] => {
                static CALLS: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
                let until = Instant::now() + Duration::from_millis(ms.parse().unwrap());
                let (code, env) = (Status(code.parse().unwrap()), Status(env.parse().unwrap()));
                let (mut s, mut cycles) = (Status::SUCCESS, 0u64);
                let counted = |inv: Invocation| {
                    *CALLS.lock().unwrap() += 1;
                    inv.complete(Status::SUCCESS, Vec::new());
                };
                let quiet = |inv: Invocation| inv.complete(Status::SUCCESS, Vec::new());
                while Instant::now() < until {
                    let step = c
                        .register(Registration::new(&[code], counted))
                        .and_then(|a| {
                            let b = c.register(Registration::new(&[env], quiet));
                            let da = c.deregister(a);
                            let b = b?;
                            da?;
                            c.deregister(b)
                        });
                    if let Err(e) = step {
                        s = e;
                        break;
                    }
                    cycles += 1;
                }
                println!("CHURNED {} {cycles} {}", s.0, *CALLS.lock().unwrap());
            }
            // `WATCH_RANGE <code>` → `WATCHING <ref or negative status>`:
            // like `WATCH_INFO`, but each event prints as `CAUGHT_RANGE
            // code=<i32> source=<ns>:<rank> range=<data range as a number>
            // <infos>`; it counts for `AWAIT` too.
            ["WATCH_RANGE", code] => watch(&c, code, |inv| {
                format!(
                    "CAUGHT_RANGE code={} source={} range={} {}",
                    inv.status().0,
                    inv.source(),
                    inv.range().0,
                    fmt_infos(inv.info())
                )
            }),
            // `ALLOC_UNTIL <status> <directive> <info>...` →
            // `ALLOC_UNTIL_RESULT <tries> <status> <results>`: repeats the
            // request (10 ms apart) until it answers `<status>`, or
            // [`HANG`] passed (then the last answer prints). For a change
            // the server makes on its own time (a holder's end noticed, a
            // loan ended); never a measurement.
            ["ALLOC_UNTIL", want, dir, infos @ ..] => {
                let want: i32 = want.parse().unwrap();
                let d: Vec<Info> = infos.iter().map(|x| parse_info(x)).collect();
                let directive = fastpmix::types::AllocDirective(dir.parse().unwrap());
                let deadline = Instant::now() + HANG;
                let mut tries = 0u32;
                let o = loop {
                    tries += 1;
                    let o = c.allocate(directive, &d);
                    if o.status.0 == want || Instant::now() > deadline {
                        break o;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                };
                println!(
                    "ALLOC_UNTIL_RESULT {tries} {} {}",
                    o.status.0,
                    fmt_infos(&o.results)
                );
            }
            // `STALL` → `STALLING`: the progress thread is held in a
            // PROC_LOCAL handler (it reads nothing meanwhile, while this
            // thread goes on taking commands) until `RELEASE` (or
            // [`HANG`]); `STALL_OVER` once it returns.
            ["STALL"] => {
                let (tx, rx) = mpsc::channel::<()>();
                *stall_release().lock().unwrap() = Some(tx);
                let rx = Mutex::new(rx);
                let code = Status(-9998);
                c.register(Registration::new(&[code], move |inv: Invocation| {
                    let _ = rx.lock().unwrap().recv_timeout(HANG);
                    println!("STALL_OVER");
                    let _ = std::io::stdout().flush();
                    inv.complete(Status::SUCCESS, Vec::new());
                }))
                .expect("register the stall");
                let _ = c
                    .engine()
                    .notify(Notification::new(code, c.me(), DataRange::PROC_LOCAL));
                println!("STALLING");
            }
            ["RELEASE"] => {
                if let Some(tx) = stall_release().lock().unwrap().take() {
                    let _ = tx.send(());
                }
                println!("RELEASED");
            }
            // `KILL_SELF`: SIGKILL to this process (lost, as a crash is).
            ["KILL_SELF"] => {
                let _ = std::io::stdout().flush();
                // SAFETY: raise(2) with a valid signal number.
                unsafe { libc::raise(libc::SIGKILL) };
            }
            _ => println!("UNKNOWN {line}"),
        }
        let _ = std::io::stdout().flush();
    }
    std::process::exit(0);
}

/// The sender that ends a `STALL`.
fn stall_release() -> &'static Mutex<Option<mpsc::Sender<()>>> {
    static R: Mutex<Option<mpsc::Sender<()>>> = Mutex::new(None);
    &R
}

/// The server child's host: every upcall is the default (not supported),
/// but it says it carries events, as an RM does, so that its clients'
/// RM-range events are taken (and dropped) rather than refused by the
/// client: the tests stream them to fill submission queues.
struct TakesEvents;

impl fastpmix::server::Host for TakesEvents {
    fn relays_events(&self) -> bool {
        true
    }
}

/// The body of a server child. Call it from a `#[test]` that returns at
/// once unless [`ROLE_ENV`] is `server`.
pub fn server_main() {
    let mut b = Server::builder().host(std::sync::Arc::new(TakesEvents));
    if std::env::var_os(SERVER_TRACE_ENV).is_some() {
        b = b.trace(|l| {
            println!("TRACE {l}");
            let _ = std::io::stdout().flush();
        });
    }
    let server = b.start().expect("start the server");
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let list = |var: &str| -> Vec<Proc> {
        std::env::var(var)
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(parse_proc)
            .collect()
    };
    let procs = list(SERVER_PROCS_ENV);
    let peer_procs = list(SERVER_PEER_PROCS_ENV);
    // libtest printed "test child_server ... " without a newline.
    println!();
    for (p, (u, g)) in procs
        .iter()
        .map(|p| (p, (uid, gid)))
        .chain(peer_procs.iter().map(|p| (p, peer_ids())))
    {
        if !server.namespaces().iter().any(|n| n.nspace == p.nspace) {
            // As a host does: how many of its processes run here, so
            // that the ring holds them all.
            let local = procs.iter().filter(|q| q.nspace == p.nspace).count();
            let size = Info::new(attrs::PMIX_LOCAL_SIZE, Value::Uint32(local as u32));
            let mut info = vec![size];
            if std::env::var_os(SERVER_WHOLE_JOB_ENV).is_some() {
                let ranks: Vec<String> = procs
                    .iter()
                    .filter(|q| q.nspace == p.nspace)
                    .map(|q| q.rank.0.to_string())
                    .collect();
                info.push(Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(local as u32)));
                info.push(Info::new(
                    attrs::PMIX_LOCAL_PEERS,
                    Value::String(ranks.join(",")),
                ));
            }
            server.register_nspace(&p.nspace, info).unwrap();
        }
        server.register_client(p, u, g).unwrap();
    }
    if let Some(slack) = std::env::var(SERVER_NOFILE_SLACK_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
        let lim = libc::rlimit {
            rlim_cur: open + slack,
            rlim_max: open + slack,
        };
        // SAFETY: setrlimit reads the live struct above.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
        println!("NOFILE {}", open + slack);
    }
    for n in server.namespaces() {
        println!("SEGMENT {}", n.segment);
    }
    for p in procs.iter().chain(&peer_procs) {
        for (k, v) in server.setup_fork(p).unwrap() {
            println!("ENV {p} {k}={v}");
        }
    }
    println!("SERVER_READY {}", std::process::id());
    let _ = std::io::stdout().flush();
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
    server.stop();
    std::process::exit(0);
}

/// A server process (the test binary's `entry` test run as [`server_main`]).
pub struct ServerProc {
    child: Child,
    stdin: Option<ChildStdin>,
    /// `setup_fork` environment of each registered client.
    pub env: HashMap<Proc, Vec<(String, String)>>,
    /// Its ring segments (removed on drop: a killed server leaves them).
    pub segments: Vec<String>,
    /// Its stdout lines after `SERVER_READY` (in a mutex: a
    /// `ServerProc` is shared by the threads of some tests).
    pub lines: std::sync::Mutex<mpsc::Receiver<String>>,
}

impl ServerProc {
    /// Starts a server child that registers `procs` (their namespaces too).
    pub fn spawn(entry: &str, procs: &[Proc]) -> ServerProc {
        Self::spawn_with_env(entry, procs, &[])
    }

    /// [`spawn`](Self::spawn), with more environment for the server process.
    pub fn spawn_with_env(entry: &str, procs: &[Proc], env: &[(&str, String)]) -> ServerProc {
        let exe = std::env::current_exe().unwrap();
        let list: Vec<String> = procs.iter().map(|p| p.to_string()).collect();
        let mut child = Command::new(exe)
            .args([entry, "--exact", "--nocapture", "--test-threads=1"])
            .env(ROLE_ENV, "server")
            .env(SERVER_PROCS_ENV, list.join(","))
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn server process");
        let out = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut s = ServerProc {
            child,
            stdin,
            env: HashMap::new(),
            segments: Vec::new(),
            lines: std::sync::Mutex::new(rx),
        };
        let deadline = Instant::now() + HANG;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let l = s
                .lines
                .get_mut()
                .unwrap()
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("server child never got ready"));
            if let Some(name) = l.strip_prefix("SEGMENT ") {
                s.segments.push(name.to_owned());
            } else if let Some(rest) = l.strip_prefix("ENV ") {
                let (p, kv) = rest.split_once(' ').expect("ENV <proc> K=V");
                let (k, v) = kv.split_once('=').expect("K=V");
                s.env
                    .entry(parse_proc(p))
                    .or_default()
                    .push((k.to_owned(), v.to_owned()));
            } else if l.starts_with("SERVER_READY") {
                break;
            }
        }
        s
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line to the server child's stdin (for a server role that
    /// reads commands there; [`server_main`] ignores them).
    pub fn send(&mut self, line: &str) {
        let s = self.stdin.as_mut().expect("stdin open");
        writeln!(s, "{line}").unwrap();
        s.flush().unwrap();
    }

    /// The environment a client needs to connect as `p`.
    pub fn env_of(&self, p: &Proc) -> Vec<(String, String)> {
        self.env.get(p).cloned().expect("a registered client")
    }

    /// SIGKILLs the server and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The server's socket directory (from the environment it printed).
    fn dir(&self) -> Option<std::path::PathBuf> {
        let addr = self
            .env
            .values()
            .flatten()
            .find(|(k, _)| k == SERVER_ADDR_ENV)?;
        std::path::Path::new(&addr.1).parent().map(|d| d.to_owned())
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        self.stdin = None;
        self.kill();
        // A killed server cannot clean up: remove what it left.
        for s in &self.segments {
            let _ = std::fs::remove_file(format!("/dev/shm/{s}"));
        }
        if let Some(d) = self.dir() {
            let _ = std::fs::remove_file(d.join("ctl"));
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// `WATCH*` commands: registers a handler for `code` that prints
/// `line(event)` and counts the event for `AWAIT`; prints `WATCHING <ref or
/// negative status>`.
fn watch(c: &Client, code: &str, line: impl Fn(&Invocation) -> String + Send + Sync + 'static) {
    let watcher = move |inv: Invocation| {
        println!("{}", line(&inv));
        let _ = std::io::stdout().flush();
        let (m, cv) = &CAUGHT;
        *m.lock().unwrap().entry(inv.status().0).or_insert(0) += 1;
        cv.notify_all();
        inv.complete(Status::SUCCESS, Vec::new());
    };
    let r = c
        .register(Registration::new(&[Status(code.parse().unwrap())], watcher))
        .map(|r| r.0 as i64)
        .unwrap_or_else(|s| s.0 as i64);
    println!("WATCHING {r}");
}

/// The line a `WATCH_INFO` handler prints for one event: `CAUGHT_INFO`, the
/// fields of an `EVENT` line, then every info of the event.
fn caught_info_line(inv: &Invocation) -> String {
    let ev = event_line(inv);
    format!(
        "CAUGHT_INFO {} {}",
        ev.trim_start_matches("EVENT "),
        fmt_infos(inv.info())
    )
}

/// CLOCK_MONOTONIC in nanoseconds (the same clock in every process of the
/// machine, for `WATCH_AT`).
pub fn mono_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into a live local.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// What a `COUNT` handler saw, per code.
#[derive(Default)]
struct CountState {
    valid: u64,
    invalid: u64,
    first_invalid: Option<String>,
    /// Last `test.seq` per source.
    last: HashMap<Proc, u64>,
}

/// `COUNT` handlers' tallies, per code.
static COUNTS: std::sync::LazyLock<std::sync::Mutex<HashMap<i32, CountState>>> =
    std::sync::LazyLock::new(|| std::sync::Mutex::new(HashMap::new()));

/// A submission-queue record as a client library encodes it (for tests
/// that write a queue themselves).
#[allow(dead_code)] // not every test binary that includes procs writes one
pub fn encoded(code: i32, source: Proc, range: DataRange, info: Vec<Info>) -> Vec<u8> {
    let rec = fastpmix::internals::wire::event_to_record(&fastpmix::internals::wire::WireEvent {
        code: Status(code),
        source,
        range,
        info,
        class: fastpmix::event::EventClass::Job,
        source_seq: 0,
        timestamp_ns: fastpmix::internals::wire::now_realtime_ns(),
    });
    rkyv::to_bytes::<rkyv::rancor::Error>(&rec)
        .unwrap()
        .to_vec()
}

/// What a `fastpmix run` job printed, and how it ended.
pub struct JobOutput {
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// The launcher's stdout (the ranks' lines, prefixed `[rank] `).
    pub stdout: String,
    /// The launcher's stderr.
    pub stderr: String,
}

/// Runs `fastpmix run <args>` with `env` and waits for it; a job still
/// running after `hang` is killed and the test fails (a hang turned into a
/// failure, never a time asserted).
pub fn run_job(bin: &str, args: &[&str], env: &[(&str, &str)], hang: Duration) -> JobOutput {
    use std::io::Read;
    let mut cmd = Command::new(bin);
    cmd.arg("run").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fastpmix run");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for fastpmix run") {
            break Some(s);
        }
        if t0.elapsed() > hang {
            // The launcher; its ranks lose their server and end.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    let Some(status) = status else {
        panic!("fastpmix run {args:?} still running after {hang:?}: hung\n{stdout}\n{stderr}");
    };
    JobOutput {
        code: status.code(),
        stdout,
        stderr,
    }
}
