//! Server side of `PMIx_Log`: which channel each data item goes to, the
//! directives each channel uses, the stdout/stderr formats and the local
//! syslog. Items for channels only the host can serve come back in
//! [`Outcome::to_host`].
//!
//! Readings of the Standard, and where this module departs from it:
//! - **Priority order** (`PMIX_LOG_ONCE`): the Standard ranks nothing, so
//!   the caller's order of the data items is the priority order.
//! - **Default syslog priority** is `LOG_ERR`: the Standard says "Defaults to
//!   ERROR priority" for all three syslog channels, and OpenPMIx's plog
//!   `syslog` uses `LOG_ERR` too. The facility is `LOG_USER` unless the
//!   priority carries one. `PMIX_LOG_SYSLOG_PRI` outside `0..=191` (facility
//!   above `LOG_LOCAL7`) is `ERR_BAD_PARAM`.
//! - **Time-stamped messages.** The Standard's own example stamps a stderr
//!   message because `PMIX_LOG_TIMESTAMP` is given, so stdout/stderr lines
//!   carry a time when the caller gives one (`LOG_TIMESTAMP`), asks for one
//!   (`LOG_GENERATE_TIMESTAMP`) or asks for it in the output
//!   (`LOG_TIMESTAMP_OUTPUT`); the time is `LOG_TIMESTAMP` if given, else
//!   the server's clock. Syslog messages always carry that time (RFC 3164,
//!   in UTC: see `rfc3164_time`).
//! - **Duplicated directives**: the last one wins. A `PMIX_LOG_SOURCE` from
//!   the caller is ignored: the server sets the authenticated requester.
//! - A data item whose key is not a channel counts as an unknown key; if no
//!   channel item is left, the call is `ERR_BAD_PARAM` (nothing to log).
//! - **A server whose stdout or stderr loses every line** (closed, or
//!   `/dev/null`, as a daemon's usually is) does not serve that channel:
//!   its items go to the host's `log` like the host's own channels, and a
//!   host without one refuses them (`PMIX_ERR_NOT_SUPPORTED`), never a
//!   `PMIX_SUCCESS` for a line nobody will read ([`Discarding`]).
//!
//! Output formats of stdout/stderr (`TS` is RFC 3339 UTC to the second,
//! `2026-11-22T10:00:00Z`; `NS`, `R` the source's namespace and rank; the
//! tag names the channel, `stdout` or `stderr`):
//!
//! | directives | line |
//! |---|---|
//! | none | `msg` |
//! | time | `TS msg` |
//! | tag | `[NS,R]<stdout>: msg` |
//! | time + tag | `TS [NS,R]<stdout>: msg` |
//! | xml (tag is implied) | `<stdout rank="R" nspace="NS">msg</stdout>` |
//! | xml + time | `<stdout rank="R" nspace="NS" time="TS">msg</stdout>` |
//!
//! In XML, `& < > " '` of the message and namespace are escaped as entities.
//! Every line ends with exactly one `'\n'`: one trailing newline of the
//! message is dropped first (a message ending in `"\n\n"` keeps a blank
//! line); newlines inside a message are kept as they are. NUL bytes and
//! other control characters are data and are written unchanged.

use crate::types::attrs::{self, *};
use crate::types::{Info, Key, Proc, Status, Value};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Syslog priority used when the caller gives none (`LOG_ERR`, see above).
pub const DEFAULT_PRI: i32 = libc::LOG_ERR;
/// Longest syslog datagram sent; longer messages are cut (at a character
/// boundary). Receivers cut or refuse larger ones anyway (rsyslog: 8 KiB).
pub const SYSLOG_MAX: usize = 16 * 1024;
/// How long a syslog send may wait for room in a busy daemon's queue before
/// the item fails with `ERR_TIMEOUT` (the send runs on a server thread).
const SYSLOG_SEND_TIMEOUT: Duration = Duration::from_millis(250);

/// One `PMIx_Log` channel: the key of a data item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `PMIX_LOG_STDOUT`: the server's stdout.
    Stdout,
    /// `PMIX_LOG_STDERR`: the server's stderr.
    Stderr,
    /// `PMIX_LOG_SYSLOG`: the host's global syslog if it has one, else local.
    Syslog,
    /// `PMIX_LOG_LOCAL_SYSLOG`: this node's syslog.
    LocalSyslog,
    /// `PMIX_LOG_GLOBAL_SYSLOG`: the host's syslog "gateway".
    GlobalSyslog,
    /// `PMIX_LOG_EMAIL` (host): an info array describing the mail.
    Email,
    /// `PMIX_LOG_JOB_RECORD` (host): the host's job record.
    JobRecord,
    /// `PMIX_LOG_GLOBAL_DATASTORE` (host): a data array to store.
    GlobalDatastore,
}

/// Indexed by `Channel as usize`: key, and the name tags and XML use.
const CHANNELS: [(Channel, Key, &str); 8] = [
    (Channel::Stdout, PMIX_LOG_STDOUT, "stdout"),
    (Channel::Stderr, PMIX_LOG_STDERR, "stderr"),
    (Channel::Syslog, PMIX_LOG_SYSLOG, "syslog"),
    (Channel::LocalSyslog, PMIX_LOG_LOCAL_SYSLOG, "lsyslog"),
    (Channel::GlobalSyslog, PMIX_LOG_GLOBAL_SYSLOG, "gsyslog"),
    (Channel::Email, PMIX_LOG_EMAIL, "email"),
    (Channel::JobRecord, PMIX_LOG_JOB_RECORD, "jobrecord"),
    (
        Channel::GlobalDatastore,
        PMIX_LOG_GLOBAL_DATASTORE,
        "gstore",
    ),
];

impl Channel {
    /// The channel a data key names, if any.
    pub fn of(key: &str) -> Option<Channel> {
        CHANNELS.iter().find(|c| c.1.as_str() == key).map(|c| c.0)
    }

    /// The attribute key of this channel.
    pub fn key(self) -> Key {
        CHANNELS[self as usize].1.clone()
    }

    /// Served by the server itself on this node (stdout, stderr, local
    /// syslog). `Syslog` is local too when the host has no global syslog.
    pub fn is_local(self) -> bool {
        matches!(
            self,
            Channel::Stdout | Channel::Stderr | Channel::LocalSyslog
        )
    }

    fn is_syslog(self) -> bool {
        matches!(
            self,
            Channel::Syslog | Channel::LocalSyslog | Channel::GlobalSyslog
        )
    }
}

/// The directives of one call, parsed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Directives {
    /// `PMIX_LOG_SYSLOG_PRI` (syslog channels only).
    pub pri: Option<i32>,
    /// `PMIX_LOG_ONCE`: stop at the first channel that succeeds.
    pub once: bool,
    /// `PMIX_LOG_TIMESTAMP`: the time the caller gives (seconds since 1970).
    pub timestamp: Option<i64>,
    /// `PMIX_LOG_GENERATE_TIMESTAMP`: the caller asks for a time.
    pub generate: bool,
    /// `PMIX_LOG_TAG_OUTPUT` (stdout/stderr only).
    pub tag: bool,
    /// `PMIX_LOG_TIMESTAMP_OUTPUT` (stdout/stderr only).
    pub ts_out: bool,
    /// `PMIX_LOG_XML_OUTPUT` (stdout/stderr only).
    pub xml: bool,
}

impl Directives {
    /// The time a message carries to the host: the caller's, or `now` when
    /// the caller asked for one to be generated.
    pub fn stamp(&self, now: i64) -> Option<i64> {
        self.timestamp.or(self.generate.then_some(now))
    }
}

/// One parsed `PMIx_Log` call.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The data items, in the caller's order, each with its channel.
    pub items: Vec<(Channel, Info)>,
    /// The directives.
    pub directives: Directives,
}

fn ignore_unless_required(info: &Info) -> Result<(), Status> {
    if info.is_required() {
        Err(Status::ERR_NOT_SUPPORTED)
    } else {
        Ok(())
    }
}

impl Request {
    /// Parses a call. `ERR_BAD_PARAM`: no data, no channel item, a known key
    /// with a value of the wrong type, or a syslog priority out of range.
    /// `ERR_NOT_SUPPORTED`: an unknown key marked required.
    pub fn parse(data: &[Info], directives: &[Info]) -> Result<Request, Status> {
        if data.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        attrs::check_all(data)?;
        attrs::check_all(directives)?;
        let mut items = Vec::with_capacity(data.len());
        for info in data {
            match Channel::of(info.key.as_str()) {
                Some(c) => items.push((c, info.clone())),
                None => ignore_unless_required(info)?,
            }
        }
        if items.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut d = Directives::default();
        for info in directives {
            let v = &info.value;
            // attrs::check accepted the value, so the conversions below hold.
            let flag = v.as_flag().unwrap_or(false);
            match info.key.as_str() {
                k if k == PMIX_LOG_SYSLOG_PRI.as_str() => {
                    let pri = v.as_integer().unwrap_or(-1);
                    if !(0..=191).contains(&pri) {
                        return Err(Status::ERR_BAD_PARAM);
                    }
                    d.pri = Some(pri as i32);
                }
                k if k == PMIX_LOG_TIMESTAMP.as_str() => {
                    d.timestamp = v.as_integer().and_then(|t| i64::try_from(t).ok());
                }
                k if k == PMIX_LOG_ONCE.as_str() => d.once = flag,
                k if k == PMIX_LOG_GENERATE_TIMESTAMP.as_str() => d.generate = flag,
                k if k == PMIX_LOG_TAG_OUTPUT.as_str() => d.tag = flag,
                k if k == PMIX_LOG_TIMESTAMP_OUTPUT.as_str() => d.ts_out = flag,
                k if k == PMIX_LOG_XML_OUTPUT.as_str() => d.xml = flag,
                k if k == PMIX_LOG_SOURCE.as_str() => {}
                _ => ignore_unless_required(info)?,
            }
        }
        Ok(Request {
            items,
            directives: d,
        })
    }
}

/// `2026-11-22T10:00:00Z` for `ts` seconds since 1970 (UTC; any i64 works).
fn rfc3339(ts: i64) -> String {
    let (y, mo, d) = civil(ts.div_euclid(86_400));
    format!("{y:04}-{mo:02}-{d:02}T{}Z", hms(ts))
}

fn hms(ts: i64) -> String {
    let s = ts.rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (H. Hinnant's `civil_from_days`; no overflow for any i64/86400;
/// the month is always 1..=12).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Formats one stdout/stderr line in the formats of the module docs, ending
/// with exactly one `'\n'` (one trailing newline of `msg` is dropped first).
/// `now` is the time used when the caller gave none. Other channels format
/// the same way, tagged with a short channel name.
pub fn format_std(channel: Channel, msg: &str, d: &Directives, source: &Proc, now: i64) -> String {
    let msg = msg.strip_suffix('\n').unwrap_or(msg);
    let time = (d.ts_out || d.generate || d.timestamp.is_some())
        .then(|| rfc3339(d.timestamp.unwrap_or(now)));
    let name = CHANNELS[channel as usize].2;
    if d.xml {
        let time = time.map_or(String::new(), |t| format!(" time=\"{t}\""));
        let (rank, ns) = (source.rank, xml_escape(source.nspace.as_str()));
        return format!(
            "<{name} rank=\"{rank}\" nspace=\"{ns}\"{time}>{}</{name}>\n",
            xml_escape(msg)
        );
    }
    let mut out = String::with_capacity(msg.len() + 64);
    if let Some(t) = time {
        out.push_str(&t);
        out.push(' ');
    }
    if d.tag {
        out.push_str(&format!("[{},{}]<{name}>: ", source.nspace, source.rank));
    }
    out.push_str(msg);
    out.push('\n');
    out
}

/// Where local channels write.
pub struct Sinks {
    /// `PMIX_LOG_STDOUT` lines.
    pub stdout: Box<dyn Write + Send>,
    /// `PMIX_LOG_STDERR` lines.
    pub stderr: Box<dyn Write + Send>,
    /// The local syslog datagram socket (normally `/dev/log`).
    pub syslog: PathBuf,
    /// The syslog ident (program name) of the messages.
    pub ident: String,
}

impl Sinks {
    /// The process's own stdout and stderr, `/dev/log`, and the program's
    /// file name as ident (`fastpmix` if unknown).
    pub fn process() -> Sinks {
        let ident = std::env::args_os()
            .next()
            .and_then(|a| Some(Path::new(&a).file_name()?.to_string_lossy().into_owned()))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "fastpmix".to_owned());
        let std_sink = |fd: u32, w: Box<dyn Write + Send>| -> Box<dyn Write + Send> {
            if discards(fd) {
                Box::new(Discarding)
            } else {
                w
            }
        };
        Sinks {
            stdout: std_sink(1, Box::new(io::stdout())),
            stderr: std_sink(2, Box::new(io::stderr())),
            syslog: PathBuf::from("/dev/log"),
            ident,
        }
    }
}

/// Whether this process's file descriptor `fd` is closed or `/dev/null`:
/// a line written there is lost (a daemon's stdout usually is, Slurm's
/// `slurmstepd`'s among them).
fn discards(fd: u32) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(m) = std::fs::metadata(format!("/proc/self/fd/{fd}")) else {
        return true;
    };
    let null = std::fs::metadata("/dev/null");
    m.file_type().is_char_device() && null.is_ok_and(|n| n.rdev() == m.rdev())
}

/// The sink of a stream that would lose every line: each write fails with
/// `Unsupported`, and [`carry_out`] hands the item to the host instead
/// (whose `log` upcall takes it, or refuses it with
/// `PMIX_ERR_NOT_SUPPORTED`): never `PMIX_SUCCESS` for a lost line.
pub struct Discarding;

impl Write for Discarding {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the server's stream is closed or /dev/null",
        ))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `Mmm dd hh:mm:ss` (day space-padded), in UTC: RFC 3164 has no zone
/// field, and rsyslog (imuxsock) and journald replace this stamp with their
/// receive time by default, so a zone-free stamp costs nothing and needs no
/// `localtime_r`.
fn rfc3164_time(ts: i64) -> String {
    const MON: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (_, mo, d) = civil(ts.div_euclid(86_400));
    format!("{} {d:>2} {}", MON[(mo - 1) as usize], hms(ts))
}

/// The short host name (first label), as RFC 3164 wants it.
fn short_hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let h = h.trim().split('.').next().unwrap_or("").replace(' ', "_");
    if h.is_empty() {
        "localhost".to_owned()
    } else {
        h
    }
}

fn send_syslog(path: &Path, pri: i32, ts: i64, ident: &str, msg: &str) -> io::Result<()> {
    if !(0..=191).contains(&pri) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "syslog priority out of range",
        ));
    }
    let pri = if pri < 8 { pri | libc::LOG_USER } else { pri };
    let head = format!(
        "<{pri}>{} {} {ident}[{}]: ",
        rfc3164_time(ts),
        short_hostname(),
        std::process::id()
    );
    let msg = msg.strip_suffix('\n').unwrap_or(msg);
    let mut end = SYSLOG_MAX.saturating_sub(head.len()).min(msg.len());
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    let mut dgram = head.into_bytes();
    dgram.extend_from_slice(&msg.as_bytes()[..end]);
    let sock = UnixDatagram::unbound()?;
    sock.set_write_timeout(Some(SYSLOG_SEND_TIMEOUT))?;
    sock.send_to(&dgram, path).map(drop)
}

/// Sends one RFC 3164 message `<PRI>Mmm dd hh:mm:ss host ident[pid]: msg`,
/// stamped with the current time (UTC), to the Unix datagram socket at
/// `path`. The facility is `LOG_USER` unless `pri` (`0..=191`, else
/// `InvalidInput`) carries one. One trailing newline of `msg` is dropped;
/// the datagram is cut at [`SYSLOG_MAX`] bytes.
pub fn syslog_local(path: &Path, pri: i32, ident: &str, msg: &str) -> io::Result<()> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    send_syslog(path, pri, now, ident, msg)
}

/// The one place I/O errors become statuses: a missing or refusing socket
/// is `ERR_UNREACH`, a busy one `ERR_TIMEOUT`.
fn io_status(e: &io::Error) -> Status {
    use io::ErrorKind as K;
    match e.kind() {
        K::NotFound | K::ConnectionRefused | K::NotConnected | K::AddrNotAvailable => {
            Status::ERR_UNREACH
        }
        K::PermissionDenied => Status::ERR_NO_PERMISSIONS,
        K::WouldBlock | K::TimedOut => Status::ERR_TIMEOUT,
        K::InvalidInput => Status::ERR_BAD_PARAM,
        K::Unsupported => Status::ERR_NOT_SUPPORTED,
        _ => Status::ERROR,
    }
}

/// What the server does with one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Result of the local items: SUCCESS if every attempted one succeeded
    /// (or none was attempted); `ERR_PARTIAL_SUCCESS` if some failed and some
    /// succeeded; else the first failure's status. Under `PMIX_LOG_ONCE` a
    /// local success is SUCCESS whatever failed before it.
    pub status: Status,
    /// Data items for the host's `log`, unchanged, in the caller's order.
    pub to_host: Vec<Info>,
    /// Directives for the host (empty when `to_host` is): `PMIX_LOG_SOURCE`,
    /// `PMIX_LOG_TIMESTAMP` if the caller gave or asked for one, and
    /// `PMIX_LOG_SYSLOG_PRI` if given and a syslog item goes to the host.
    pub host_directives: Vec<Info>,
    /// Number of local items written.
    pub written: usize,
    once_to_host: bool,
}

impl Outcome {
    /// The call's status once the host answered `host` for [`to_host`]
    /// (ignored if nothing went to the host). Under `PMIX_LOG_ONCE` the one
    /// item handed over decides; otherwise local and host results combine
    /// like the local ones do.
    ///
    /// [`to_host`]: Outcome::to_host
    pub fn finish(&self, host: Status) -> Status {
        if self.to_host.is_empty() {
            return self.status;
        }
        if self.once_to_host || (self.written == 0 && self.status.is_success()) {
            return host;
        }
        match (self.status.is_success(), host.is_success()) {
            (true, true) => Status::SUCCESS,
            (false, false) if self.written == 0 => self.status,
            _ => Status::ERR_PARTIAL_SUCCESS,
        }
    }
}

fn write_local(
    ch: Channel,
    info: &Info,
    d: &Directives,
    source: &Proc,
    sinks: &mut Sinks,
    now: i64,
) -> Result<(), Status> {
    let msg = info.value.as_str().ok_or(Status::ERR_BAD_PARAM)?;
    let res = match ch {
        Channel::Stdout | Channel::Stderr => {
            let line = format_std(ch, msg, d, source, now);
            let w = if ch == Channel::Stdout {
                &mut sinks.stdout
            } else {
                &mut sinks.stderr
            };
            w.write_all(line.as_bytes()).and_then(|()| w.flush())
        }
        _ => send_syslog(
            &sinks.syslog,
            d.pri.unwrap_or(DEFAULT_PRI),
            d.timestamp.unwrap_or(now),
            &sinks.ident,
            msg,
        ),
    };
    res.map_err(|e| io_status(&e))
}

/// Carries out `req` for `source` (the authenticated requester): local items
/// are written now, in the caller's order; host items (and `Syslog` when
/// `host_has_global_syslog`) come back in [`Outcome::to_host`]. With
/// `PMIX_LOG_ONCE`, the first local success ends the call, and a host item
/// met before any local success is the only one handed to the host (its
/// answer decides, see [`Outcome::finish`]). `now` is the server's clock.
pub fn carry_out(
    req: &Request,
    source: &Proc,
    sinks: &mut Sinks,
    host_has_global_syslog: bool,
    now: i64,
) -> Outcome {
    let d = &req.directives;
    let (mut written, mut first_fail, mut once_to_host) = (0, None, false);
    let mut to_host = Vec::new();
    for (ch, info) in &req.items {
        let local = ch.is_local() || (*ch == Channel::Syslog && !host_has_global_syslog);
        let to_the_host = !local
            || match write_local(*ch, info, d, source, sinks, now) {
                Ok(()) => {
                    written += 1;
                    false
                }
                // A stream that loses lines ([`Discarding`]): the host's.
                Err(Status::ERR_NOT_SUPPORTED)
                    if matches!(ch, Channel::Stdout | Channel::Stderr) =>
                {
                    true
                }
                Err(s) => {
                    first_fail.get_or_insert(s);
                    false
                }
            };
        if to_the_host {
            to_host.push(info.clone());
            if d.once {
                once_to_host = true;
                break;
            }
            continue;
        }
        if d.once && written > 0 {
            break;
        }
    }
    let status = match first_fail {
        None => Status::SUCCESS,
        Some(_) if d.once && written > 0 => Status::SUCCESS,
        Some(_) if written > 0 => Status::ERR_PARTIAL_SUCCESS,
        Some(s) => s,
    };
    let mut host_directives = Vec::new();
    if !to_host.is_empty() {
        host_directives.push(Info::new(PMIX_LOG_SOURCE, *source));
        if let Some(t) = d.stamp(now) {
            host_directives.push(Info::new(PMIX_LOG_TIMESTAMP, Value::Time(t)));
        }
        let syslog = to_host
            .iter()
            .any(|i| Channel::of(i.key.as_str()).is_some_and(Channel::is_syslog));
        if let (Some(p), true) = (d.pri, syslog) {
            host_directives.push(Info::new(PMIX_LOG_SYSLOG_PRI, Value::Int(p)));
        }
    }
    Outcome {
        status,
        to_host,
        host_directives,
        written,
        once_to_host,
    }
}

/// Escapes a job-record field so a record stays one line of tab-separated
/// fields: `\\`, `\t`, `\n`, `\r` and other control characters as `\xHH`.
fn record_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
}

/// Creates an empty job-record file at `path` for [`append_job_record`]:
/// mode 0600, and only if nothing exists there (`O_CREAT | O_EXCL`, which
/// also refuses a symbolic link, dangling or not).
pub fn create_job_record(path: &Path) -> io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map(drop)
}

/// The default host's job record: appends one line
/// `TS<TAB>nspace<TAB>rank<TAB>msg\n` to `path`, where `TS` is RFC 3339
/// UTC and nspace and msg are escaped as `\\`, `\t`, `\n`, `\r`, `\xHH`
/// (other control bytes) after one trailing newline of `msg` is dropped.
/// Each record is one `write` on an `O_APPEND` file, so concurrent writers
/// do not interleave.
///
/// The file is created with mode 0600 if missing; what is there already
/// must be a regular file with one link, owned by this process's effective
/// uid: a symbolic link, a FIFO (opened without blocking, then refused
/// without a byte written), a device, a hard link or another user's file
/// is an error, so a file someone else put at the name never gets the
/// records and never stalls the writer.
pub fn append_job_record(path: &Path, source: &Proc, ts: i64, msg: &str) -> io::Result<()> {
    let msg = msg.strip_suffix('\n').unwrap_or(msg);
    let mut line = String::with_capacity(msg.len() + 64);
    line.push_str(&rfc3339(ts));
    line.push('\t');
    record_escape(source.nspace.as_str(), &mut line);
    line.push_str(&format!("\t{}\t", source.rank));
    record_escape(msg, &mut line);
    line.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    own_regular_file(&f, path)?;
    f.write_all(line.as_bytes())
}

/// `f` (opened from `path`) is a regular file with one link, owned by this
/// process's effective uid.
fn own_regular_file(f: &std::fs::File, path: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = f.metadata()?;
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let why = if !m.file_type().is_file() {
        "not a regular file".to_string()
    } else if m.uid() != euid {
        format!("owned by uid {}, not by this process (uid {euid})", m.uid())
    } else if m.nlink() != 1 {
        format!("{} links to it", m.nlink())
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} refused: {why}", path.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `civil` against a day-by-day walk of the calendar, 1600..2400.
    #[test]
    fn civil_walks_the_gregorian_calendar() {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let mut want = (1600, 1, 1);
        for days in -135_140..157_800 {
            assert_eq!(civil(days), want, "{days}");
            let len = [
                31,
                28 + i64::from(leap(want.0)),
                31,
                30,
                31,
                30,
                31,
                31,
                30,
                31,
                30,
                31,
            ];
            want.2 += 1;
            if want.2 > len[(want.1 - 1) as usize] {
                want = if want.1 == 12 {
                    (want.0 + 1, 1, 1)
                } else {
                    (want.0, want.1 + 1, 1)
                };
            }
        }
    }

    #[test]
    fn stamps_of_extreme_times_do_not_panic() {
        assert_eq!(rfc3164_time(1_795_341_600), "Nov 22 10:00:00");
        assert_eq!(rfc3164_time(0), "Jan  1 00:00:00");
        for ts in [i64::MIN, -1, i64::MAX] {
            assert_eq!(rfc3164_time(ts).len(), 15);
            assert!(rfc3339(ts).ends_with('Z'));
        }
    }
}
