//! Resource usage of this Linux node, read from /proc, for
//! `PMIx_Process_monitor` with `PMIX_MONITOR_{PROC,NODE,DISK,NETWORK}_RESOURCE_USAGE`.
//!
//! Each report is a `Vec<Info>` whose first element names what it describes
//! (`PMIX_PROCID` or `PMIX_PROC_PID`, `PMIX_HOSTNAME`, `PMIX_DISK_ID`,
//! `PMIX_NETWORK_ID`), then the requested fields, then the `*_SAMPLE_TIME`
//! (`Value::Time`, seconds since the epoch), which is always present.
//!
//! Mapping decisions:
//! - Memory sizes are `Value::Float` in MBytes of 2^20 bytes (meminfo's kB / 1024).
//! - `PMIX_PROC_PRIORITY`: the Standard's "higher number means higher
//!   priority" is the negated nice value (nice -20 → 20, nice 19 → -19) for
//!   normal tasks; real-time tasks, whose /proc priority is `-1 - rt_prio`,
//!   map to `20 + rt_prio` (21..=119), so they rank above every nice level.
//! - `PMIX_PROC_TIME` is user + system CPU time of all threads;
//!   `PMIX_PROC_PERCENT_CPU` that time over the time since the process
//!   started (the `ps` definition), measured on `CLOCK_BOOTTIME` like the
//!   start time in /proc.
//! - `PMIX_CMD_LINE` is argv\[0\] (the comm when the cmdline is empty, as for
//!   kernel threads and zombies).
//! - `PMIX_PROC_PSS` (smaps_rollup, which needs ptrace-read rights) and
//!   `PMIX_PROC_PEAK_VSIZE` are left out when unavailable, rather than
//!   failing the whole report. `PMIX_NODEID` is never reported: the node id
//!   is the server's knowledge, not /proc's.
//! - An empty `want` means every field the function knows, including
//!   `PMIX_PROC_PID`, `PMIX_HOSTNAME` and `PMIX_CMD_LINE`; the node's nested
//!   `PMIX_DISK_RESOURCE_USAGE` / `PMIX_NETWORK_RESOURCE_USAGE` arrays (one
//!   per device, all fields) only when explicitly asked for.

use crate::types::attrs::*;
use crate::types::{Info, Key, Proc, Status, Timeval, Value};
use std::io;

const MB: f64 = 1024.0 * 1024.0;

/// The fields of /proc/PID/stat that the report uses.
#[derive(Debug, PartialEq)]
struct ProcStat {
    comm: String,
    state: String,
    utime: u64,
    stime: u64,
    priority: i64,
    nice: i64,
    num_threads: u64,
    starttime: u64,
    vsize: u64,
    rss: i64,
    processor: i64,
}

/// Content we do not understand is `PMIX_ERROR`: it is the kernel's fault
/// (or an unknown format), not the caller's.
const BAD: Status = Status::ERROR;

fn num<T: std::str::FromStr>(s: &str) -> Result<T, Status> {
    s.parse().map_err(|_| BAD)
}

/// Parses /proc/PID/stat. The comm may hold any byte, spaces and
/// parentheses included, so it runs from the first '(' to the LAST ')'.
fn parse_stat(text: &str) -> Result<ProcStat, Status> {
    let open = text.find('(').ok_or(BAD)?;
    let close = text.rfind(')').ok_or(BAD)?;
    if close < open {
        return Err(BAD);
    }
    // f[0] is field 3 (state) of proc(5); f[k] is field k + 3.
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    if f.len() < 37 || f[0].chars().count() != 1 {
        return Err(BAD);
    }
    Ok(ProcStat {
        comm: text[open + 1..close].to_owned(),
        state: f[0].to_owned(),
        utime: num(f[11])?,
        stime: num(f[12])?,
        priority: num(f[15])?,
        nice: num(f[16])?,
        num_threads: num(f[17])?,
        starttime: num(f[19])?,
        vsize: num(f[20])?,
        rss: num(f[21])?,
        processor: num(f[36])?,
    })
}

/// The value in kB of the `name:` line of a status/meminfo/smaps-style file.
fn kb_field(text: &str, name: &str) -> Result<u64, Status> {
    let rest = text
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim() == name))
        .ok_or(BAD)?
        .1;
    let mut it = rest.split_whitespace();
    let v = num(it.next().ok_or(BAD)?)?;
    match (it.next(), it.next()) {
        (None | Some("kB"), None) => Ok(v),
        _ => Err(BAD),
    }
}

fn parse_status_vmpeak(text: &str) -> Result<u64, Status> {
    kb_field(text, "VmPeak")
}

fn parse_smaps_rollup_pss(text: &str) -> Result<u64, Status> {
    kb_field(text, "Pss")
}

const MEMINFO: [(&str, Key); 8] = [
    ("MemTotal", PMIX_NODE_MEM_TOTAL),
    ("MemFree", PMIX_NODE_MEM_FREE),
    ("Buffers", PMIX_NODE_MEM_BUFFERS),
    ("Cached", PMIX_NODE_MEM_CACHED),
    ("SwapCached", PMIX_NODE_MEM_SWAP_CACHED),
    ("SwapTotal", PMIX_NODE_MEM_SWAP_TOTAL),
    ("SwapFree", PMIX_NODE_MEM_SWAP_FREE),
    ("Mapped", PMIX_NODE_MEM_MAPPED),
];

/// The kB values of the [`MEMINFO`] lines, in that order.
fn parse_meminfo(text: &str) -> Result<[u64; 8], Status> {
    let mut out = [0; 8];
    for (o, (name, _)) in out.iter_mut().zip(MEMINFO.iter()) {
        *o = kb_field(text, name)?;
    }
    Ok(out)
}

fn parse_loadavg(text: &str) -> Result<[f32; 3], Status> {
    let mut it = text.split_whitespace();
    let mut out = [0.0; 3];
    for o in &mut out {
        *o = num(it.next().ok_or(BAD)?)?;
    }
    Ok(out)
}

/// The classic fields of /proc/diskstats, in the order of the kernel's
/// iostats.rst, which is also the order of [`DISK_KEYS`].
const DISK_KEYS: [Key; 11] = [
    PMIX_DISK_READ_COMPLETED,
    PMIX_DISK_READ_MERGED,
    PMIX_DISK_READ_SECTORS,
    PMIX_DISK_READ_MILLISEC,
    PMIX_DISK_WRITE_COMPLETED,
    PMIX_DISK_WRITE_MERGED,
    PMIX_DISK_WRITE_SECTORS,
    PMIX_DISK_WRITE_MILLISEC,
    PMIX_DISK_IO_IN_PROGRESS,
    PMIX_DISK_IO_MILLISEC,
    PMIX_DISK_IO_WEIGHTED,
];

/// `(name, counters)` per line of /proc/diskstats. Newer kernels append
/// discard and flush counters, which are ignored.
fn parse_diskstats(text: &str) -> Result<Vec<(String, [u64; 11])>, Status> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            return Err(BAD);
        }
        num::<u32>(f[0])?;
        num::<u32>(f[1])?;
        let mut v = [0; 11];
        for (o, s) in v.iter_mut().zip(&f[3..]) {
            *o = num(s)?;
        }
        out.push((f[2].to_owned(), v));
    }
    Ok(out)
}

const NET_KEYS: [Key; 6] = [
    PMIX_NET_RECVD_BYTES,
    PMIX_NET_RECVD_PCKTS,
    PMIX_NET_RECVD_ERRS,
    PMIX_NET_SENT_BYTES,
    PMIX_NET_SENT_PCKTS,
    PMIX_NET_SENT_ERRS,
];

/// `(interface, counters in NET_KEYS order)` per line of /proc/net/dev.
fn parse_netdev(text: &str) -> Result<Vec<(String, [u64; 6])>, Status> {
    let mut out = Vec::new();
    // The two header lines are the ones with '|'; an interface name cannot
    // hold ':' (dev_valid_name), and old kernels glue "eth0:123".
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains('|'))
    {
        let (name, rest) = line.split_once(':').ok_or(BAD)?;
        let f: Vec<u64> = rest.split_whitespace().map(num).collect::<Result<_, _>>()?;
        let name = name.trim();
        if f.len() < 16 || name.is_empty() {
            return Err(BAD);
        }
        out.push((name.to_owned(), [f[0], f[1], f[2], f[8], f[9], f[10]]));
    }
    Ok(out)
}

fn io_status(e: &io::Error) -> Status {
    match e.kind() {
        io::ErrorKind::NotFound => Status::ERR_NOT_FOUND,
        io::ErrorKind::PermissionDenied => Status::ERR_NO_PERMISSIONS,
        // A task that exits while its files are read answers ESRCH.
        _ if e.raw_os_error() == Some(libc::ESRCH) => Status::ERR_NOT_FOUND,
        _ => Status::ERROR,
    }
}

/// Reads a /proc file; a comm or argv need not be UTF-8.
fn read_text(path: &str) -> Result<String, Status> {
    let bytes = std::fs::read(path).map_err(|e| io_status(&e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn sysconf(name: libc::c_int) -> Result<u64, Status> {
    // SAFETY: sysconf only reads a configuration value; any name is allowed
    // (an unknown one returns -1 with EINVAL).
    let v = unsafe { libc::sysconf(name) };
    u64::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or(Status::ERROR)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn hostname() -> Result<String, Status> {
    let h = nix::unistd::gethostname().map_err(|_| Status::ERROR)?;
    Ok(h.to_string_lossy().into_owned())
}

fn mbytes(bytes: f64) -> Value {
    Value::Float((bytes / MB) as f32)
}

/// A report under construction: the identifier first, then the wanted fields.
struct Report<'a> {
    want: &'a [Key],
    out: Vec<Info>,
}

impl<'a> Report<'a> {
    fn new(want: &'a [Key], id: Info) -> Self {
        Report {
            want,
            out: vec![id],
        }
    }

    fn wants(&self, key: &Key) -> bool {
        self.want.is_empty() || self.want.contains(key)
    }

    /// Adds `key` if wanted and `f` has a value for it (`f` runs only then).
    fn put(&mut self, key: Key, f: impl FnOnce() -> Option<Value>) {
        if self.wants(&key) {
            if let Some(v) = f() {
                self.out.push(Info::new(key, v));
            }
        }
    }

    fn finish(mut self, time_key: Key, t: i64) -> Vec<Info> {
        self.out.push(Info::new(time_key, Value::Time(t)));
        self.out
    }
}

/// Usage of process `pid` on this node. `id`, when the caller knows the
/// PMIx identity of the process, is reported first as `PMIX_PROCID`;
/// otherwise the first element is `PMIX_PROC_PID`.
///
/// `want` lists the attribute keys asked for; empty = every field. Unknown
/// keys in `want` are ignored.
///
/// Errors: `PMIX_ERR_BAD_PARAM` for `pid <= 0`, `PMIX_ERR_NOT_FOUND` if
/// there is no such process (a zombie is still found, until reaped),
/// `PMIX_ERR_NO_PERMISSIONS` if /proc hides it, `PMIX_ERROR` if its stat
/// file cannot be parsed.
pub fn proc_usage(pid: i32, id: Option<&Proc>, want: &[Key]) -> Result<Vec<Info>, Status> {
    if pid <= 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    let t = now();
    let dir = format!("/proc/{pid}");
    let st = parse_stat(&read_text(&format!("{dir}/stat"))?)?;
    let tck = sysconf(libc::_SC_CLK_TCK)?;
    let page = sysconf(libc::_SC_PAGESIZE)?;
    let mut r = match id {
        Some(p) => {
            let mut r = Report::new(want, Info::new(PMIX_PROCID, *p));
            r.put(PMIX_PROC_PID, || Some(Value::Pid(pid)));
            r
        }
        None => Report::new(want, Info::new(PMIX_PROC_PID, Value::Pid(pid))),
    };
    r.put(PMIX_HOSTNAME, || hostname().ok().map(Value::String));
    r.put(PMIX_CMD_LINE, || {
        let cmd = read_text(&format!("{dir}/cmdline")).unwrap_or_default();
        let argv0 = cmd.split('\0').next().unwrap_or_default();
        Some(Value::String(if argv0.is_empty() {
            st.comm.clone()
        } else {
            argv0.to_owned()
        }))
    });
    r.put(PMIX_PROC_OS_STATE, || Some(Value::String(st.state.clone())));
    let ticks = st.utime.saturating_add(st.stime);
    r.put(PMIX_PROC_TIME, || {
        let sec = (ticks / tck) as i64;
        let usec = ((ticks % tck) * 1_000_000 / tck) as i64;
        Some(Value::Timeval(Timeval { sec, usec }))
    });
    r.put(PMIX_PROC_PERCENT_CPU, || {
        let up = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).ok()?;
        let up = up.tv_sec() as f64 + up.tv_nsec() as f64 * 1e-9;
        let elapsed = up - st.starttime as f64 / tck as f64;
        let pct = if elapsed > 0.0 {
            ticks as f64 / tck as f64 / elapsed * 100.0
        } else {
            0.0
        };
        Some(Value::Float(pct as f32))
    });
    r.put(PMIX_PROC_PRIORITY, || {
        let p = if st.priority < 0 {
            19 - st.priority
        } else {
            -st.nice
        };
        Some(Value::Int32(
            p.clamp(i32::MIN.into(), i32::MAX.into()) as i32
        ))
    });
    r.put(PMIX_PROC_NUM_THREADS, || {
        Some(Value::Uint16(
            u16::try_from(st.num_threads).unwrap_or(u16::MAX),
        ))
    });
    r.put(PMIX_PROC_PSS, || {
        let text = read_text(&format!("{dir}/smaps_rollup")).ok()?;
        Some(mbytes(parse_smaps_rollup_pss(&text).ok()? as f64 * 1024.0))
    });
    r.put(PMIX_PROC_VSIZE, || Some(mbytes(st.vsize as f64)));
    r.put(PMIX_PROC_RSS, || {
        Some(mbytes(st.rss.max(0) as f64 * page as f64))
    });
    r.put(PMIX_PROC_PEAK_VSIZE, || {
        let text = read_text(&format!("{dir}/status")).ok()?;
        Some(mbytes(parse_status_vmpeak(&text).ok()? as f64 * 1024.0))
    });
    r.put(PMIX_PROC_CPU, || {
        Some(Value::Uint16(
            u16::try_from(st.processor).unwrap_or(u16::MAX),
        ))
    });
    Ok(r.finish(PMIX_PROC_SAMPLE_TIME, t))
}

/// Usage of this node: load averages and memory, first element
/// `PMIX_HOSTNAME`. `want` as for [`proc_usage`]; `PMIX_DISK_RESOURCE_USAGE`
/// and `PMIX_NETWORK_RESOURCE_USAGE` in `want` add one nested array per disk
/// or interface.
pub fn node_usage(want: &[Key]) -> Result<Vec<Info>, Status> {
    let t = now();
    let load = parse_loadavg(&read_text("/proc/loadavg")?)?;
    let mem = parse_meminfo(&read_text("/proc/meminfo")?)?;
    let mut r = Report::new(want, Info::new(PMIX_HOSTNAME, hostname()?));
    let load_keys = [
        PMIX_NODE_LOAD_AVG,
        PMIX_NODE_LOAD_AVG5,
        PMIX_NODE_LOAD_AVG15,
    ];
    for (k, v) in load_keys.into_iter().zip(load) {
        r.put(k, || Some(Value::Float(v)));
    }
    for ((_, k), kb) in MEMINFO.into_iter().zip(mem) {
        r.put(k, || Some(mbytes(kb as f64 * 1024.0)));
    }
    if want.contains(&PMIX_DISK_RESOURCE_USAGE) {
        for d in disk_usage(&[], &[])? {
            r.out.push(Info::new(PMIX_DISK_RESOURCE_USAGE, d));
        }
    }
    if want.contains(&PMIX_NETWORK_RESOURCE_USAGE) {
        for n in net_usage(&[], &[])? {
            r.out.push(Info::new(PMIX_NETWORK_RESOURCE_USAGE, n));
        }
    }
    Ok(r.finish(PMIX_NODE_SAMPLE_TIME, t))
}

/// Picks the named devices (all if `names` is empty), in the order asked.
fn select<const N: usize>(
    all: Vec<(String, [u64; N])>,
    names: &[String],
) -> Result<Vec<(String, [u64; N])>, Status> {
    if names.is_empty() {
        return Ok(all);
    }
    names
        .iter()
        .map(|n| {
            all.iter()
                .find(|(d, _)| d == n)
                .cloned()
                .ok_or(Status::ERR_NOT_FOUND)
        })
        .collect()
}

fn device_reports<const N: usize>(
    devs: Vec<(String, [u64; N])>,
    keys: &[Key; N],
    (id_key, time_key): (Key, Key),
    want: &[Key],
    t: i64,
) -> Vec<Vec<Info>> {
    let report = |(name, vals): (String, [u64; N])| {
        let mut r = Report::new(want, Info::new(id_key.clone(), name));
        for (k, v) in keys.iter().zip(vals) {
            r.put(k.clone(), || Some(Value::Uint64(v)));
        }
        r.finish(time_key.clone(), t)
    };
    devs.into_iter().map(report).collect()
}

/// One report per disk of /proc/diskstats (first element `PMIX_DISK_ID`).
/// `disks` empty = every disk in /proc/diskstats; a named disk that does not
/// exist -> `Err(Status::ERR_NOT_FOUND)`. `want` as for [`proc_usage`].
pub fn disk_usage(disks: &[String], want: &[Key]) -> Result<Vec<Vec<Info>>, Status> {
    let t = now();
    // A kernel without block devices configured has no /proc/diskstats.
    let text = match read_text("/proc/diskstats") {
        Err(Status::ERR_NOT_FOUND) => String::new(),
        r => r?,
    };
    let devs = select(parse_diskstats(&text)?, disks)?;
    let keys = (PMIX_DISK_ID, PMIX_DISK_SAMPLE_TIME);
    Ok(device_reports(devs, &DISK_KEYS, keys, want, t))
}

/// One report per interface of /proc/net/dev (first element
/// `PMIX_NETWORK_ID`), as seen from this process's network namespace.
/// `ifaces` empty = every interface; unknown name -> `Err(Status::ERR_NOT_FOUND)`.
/// `want` as for [`proc_usage`].
pub fn net_usage(ifaces: &[String], want: &[Key]) -> Result<Vec<Vec<Info>>, Status> {
    let t = now();
    let devs = select(parse_netdev(&read_text("/proc/net/dev")?)?, ifaces)?;
    let keys = (PMIX_NETWORK_ID, PMIX_NET_SAMPLE_TIME);
    Ok(device_reports(devs, &NET_KEYS, keys, want, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stat line of `comm` with fields 3.. as proc(5) numbers them.
    fn stat_line(comm: &str) -> String {
        let mut f: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        f[0] = "S".into();
        f[16] = "-5".into(); // nice (field 19)
        format!("4242 ({comm}) {}\n", f.join(" "))
    }

    #[test]
    fn stat_fields_and_odd_comm() {
        for comm in ["a) b (c", "", "x) R 1 2 3", "((", "))"] {
            let st = parse_stat(&stat_line(comm)).unwrap();
            assert_eq!(st.comm, comm);
            assert_eq!(st.state, "S");
            assert_eq!((st.utime, st.stime, st.priority, st.nice), (14, 15, 18, -5));
            assert_eq!(
                (st.num_threads, st.starttime, st.vsize, st.rss),
                (20, 22, 23, 24)
            );
            assert_eq!(st.processor, 39);
        }
    }

    #[test]
    fn stat_malformed() {
        let good = stat_line("sh");
        let truncated = &good[..good.find(" 38 ").unwrap()]; // fields 3..=37
        let bad_num = good.replace(" 14 ", " x ");
        let long_state = good.replace(") S ", ") SS ");
        for text in [
            "",
            "1 sh S 1",
            ") 1 (",
            "1 (sh S 1 2 3",
            truncated,
            &bad_num,
            &long_state,
        ] {
            assert_eq!(parse_stat(text), Err(BAD), "{text:?}");
        }
    }

    #[test]
    fn kb_fields() {
        let status = "Name:\tsleep\nVmPeak:\t    8192 kB\nVmSize:\t 100 kB\n";
        assert_eq!(parse_status_vmpeak(status), Ok(8192));
        let rollup =
            "5555-7fff ---p 00000000 00:00 0 [rollup]\nRss: 10 kB\nPss_Dirty: 3 kB\nPss: 7 kB\n";
        assert_eq!(parse_smaps_rollup_pss(rollup), Ok(7));
        for bad in [
            "",
            "VmSize: 1 kB",
            "VmPeak:",
            "VmPeak: x kB",
            "VmPeak: 1 MB",
            "VmPeak: -1 kB",
        ] {
            assert_eq!(parse_status_vmpeak(bad), Err(BAD), "{bad:?}");
        }
        assert_eq!(parse_smaps_rollup_pss("Pss_Anon: 3 kB\n"), Err(BAD));
    }

    #[test]
    fn meminfo_and_loadavg() {
        let text = "MemTotal: 1000 kB\nMemFree: 2 kB\nMemAvailable: 9 kB\nBuffers: 3 kB\n\
                    Cached: 4 kB\nSwapCached: 5 kB\nHugePages_Total: 0\nSwapTotal: 6 kB\n\
                    SwapFree: 7 kB\nMapped: 8 kB\n";
        assert_eq!(parse_meminfo(text), Ok([1000, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(parse_meminfo(&text.replace("Mapped", "Napped")), Err(BAD));
        assert_eq!(parse_meminfo(&text.replace("2 kB", "two kB")), Err(BAD));
        assert_eq!(parse_meminfo("garbage"), Err(BAD));
        assert_eq!(
            parse_loadavg("0.50 1.25 3.00 1/123 4567\n"),
            Ok([0.5, 1.25, 3.0])
        );
        for bad in ["", "0.5 0.4", "a b c 1/2 3"] {
            assert_eq!(parse_loadavg(bad), Err(BAD), "{bad:?}");
        }
    }

    #[test]
    fn diskstats_fields() {
        let text = " 254  0 vda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n\
                    \n   8 1 sda1 21 22 23 24 25 26 27 28 29 30 31\n";
        let d = parse_diskstats(text).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(
            d[0],
            ("vda".to_owned(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
        );
        assert_eq!(d[1].0, "sda1");
        assert_eq!(d[1].1, [21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]);
        assert_eq!(parse_diskstats(""), Ok(vec![]));
        for bad in [
            "8 1 sda1 1 2 3 4",
            "8 1 sda1 1 2 3 4 5 6 7 8 9 10 x",
            "a 1 sda 1 2 3 4 5 6 7 8 9 10 11",
        ] {
            assert_eq!(parse_diskstats(bad), Err(BAD), "{bad:?}");
        }
        // The reports carry the fields under the documented keys, in order.
        let reports = device_reports(d, &DISK_KEYS, (PMIX_DISK_ID, PMIX_DISK_SAMPLE_TIME), &[], 5);
        let r = &reports[1];
        assert_eq!(r.len(), 13);
        assert_eq!(r[0], Info::new(PMIX_DISK_ID, "sda1"));
        assert_eq!(r[3], Info::new(PMIX_DISK_READ_SECTORS, Value::Uint64(23)));
        assert_eq!(r[11], Info::new(PMIX_DISK_IO_WEIGHTED, Value::Uint64(31)));
        assert_eq!(r[12], Info::new(PMIX_DISK_SAMPLE_TIME, Value::Time(5)));
    }

    #[test]
    fn netdev_fields() {
        let text = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n\
                    lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n\
                    eth0:100 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
        let n = parse_netdev(text).unwrap();
        assert_eq!(n[0], ("lo".to_owned(), [1, 2, 3, 9, 10, 11]));
        assert_eq!(n[1], ("eth0".to_owned(), [100, 2, 3, 9, 10, 11]));
        for bad in [
            "lo 1 2 3",
            "lo: 1 2 3",
            ": 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
            "lo: x 2",
        ] {
            assert_eq!(parse_netdev(bad), Err(BAD), "{bad:?}");
        }
    }

    #[test]
    fn select_by_name() {
        let all = vec![("a".to_owned(), [1u64]), ("b".to_owned(), [2])];
        assert_eq!(select(all.clone(), &[]), Ok(all.clone()));
        assert_eq!(select(all.clone(), &["b".into()]), Ok(vec![all[1].clone()]));
        assert_eq!(
            select(all, &["b".into(), "c".into()]),
            Err(Status::ERR_NOT_FOUND)
        );
    }

    proptest::proptest! {
        /// Any text gives a value or an error, never a panic.
        #[test]
        fn parsers_never_panic(s in "\\PC*", t in "[ (a)0-9:|\n-]*") {
            for x in [&s, &t] {
                let _ = parse_stat(x);
                let _ = parse_meminfo(x);
                let _ = parse_loadavg(x);
                let _ = parse_diskstats(x);
                let _ = parse_netdev(x);
                let _ = parse_status_vmpeak(x);
            }
        }
    }
}
