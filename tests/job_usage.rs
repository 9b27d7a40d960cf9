//! `job::usage` against the live /proc of this machine: every value the
//! reports carry is compared with the same quantity read independently
//! (or with a state the test put the process in).

use fastpmix::job::usage::{disk_usage, net_usage, node_usage, proc_usage};
use fastpmix::types::attrs::{self, *};
use fastpmix::{Info, Key, Proc, Status, Value};
use nix::sys::signal::{kill, Signal};
use nix::time::{clock_gettime, ClockId};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn get<'a>(r: &'a [Info], k: &Key) -> Option<&'a Value> {
    r.iter().find(|i| &i.key == k).map(|i| &i.value)
}

fn float(r: &[Info], k: &Key) -> f32 {
    match get(r, k) {
        Some(Value::Float(f)) => *f,
        v => panic!("{k}: {v:?}"),
    }
}

fn string(r: &[Info], k: &Key) -> String {
    match get(r, k) {
        Some(Value::String(s)) => s.clone(),
        v => panic!("{k}: {v:?}"),
    }
}

fn cpu_time(r: &[Info]) -> Duration {
    match get(r, &PMIX_PROC_TIME) {
        Some(Value::Timeval(t)) => Duration::new(t.sec as u64, t.usec as u32 * 1000),
        v => panic!("PMIX_PROC_TIME: {v:?}"),
    }
}

fn keys(r: &[Info]) -> Vec<&str> {
    r.iter().map(|i| i.key.as_str()).collect()
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Documented types, each key once, sample time last and current.
fn check_shape(r: &[Info], time_key: &Key, t0: i64) {
    attrs::check_all(r).unwrap();
    let mut k = keys(r);
    k.sort();
    k.dedup();
    assert_eq!(k.len(), r.len(), "duplicate keys in {r:?}");
    let last = r.last().unwrap();
    assert_eq!(&last.key, time_key);
    let t = last.value.as_integer().unwrap() as i64;
    assert!((t0..=now()).contains(&t), "{t} not in {t0}..");
}

fn kb(file: &str, name: &str) -> f32 {
    let text = std::fs::read_to_string(file).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{name}:")))
        .unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<f32>()
        .unwrap()
        / 1024.0
}

fn tasks() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn own_process_matches_proc_read_independently() {
    let t0 = now();
    let pid = std::process::id() as i32;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
    let parked: Vec<_> = (0..2)
        .map(|_| {
            let rx = rx.clone();
            std::thread::spawn(move || {
                let _ = rx.lock().unwrap().recv();
            })
        })
        .collect();
    let start = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).unwrap();
    let mut x = 0u64;
    while clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).unwrap() - start
        < Duration::from_millis(60).into()
    {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }

    // Other tests start and end threads: retry until the count is stable
    // around the sample.
    let mut settled = None;
    for _ in 0..50 {
        let before = tasks();
        let r = proc_usage(pid, None, &[]).unwrap();
        if tasks() == before {
            settled = Some((before, r));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (n, r) = settled.expect("thread count never stable");
    assert!(n > 2);
    assert_eq!(
        get(&r, &PMIX_PROC_NUM_THREADS),
        Some(&Value::Uint16(n as u16))
    );
    assert_eq!(r[0], Info::new(PMIX_PROC_PID, Value::Pid(pid)));
    check_shape(&r, &PMIX_PROC_SAMPLE_TIME, t0);

    let state = string(&r, &PMIX_PROC_OS_STATE);
    assert!(state == "R" || state == "S", "{state}");
    let argv0 = std::env::args().next().unwrap();
    assert_eq!(string(&r, &PMIX_CMD_LINE), argv0);
    let host = nix::unistd::gethostname().unwrap();
    assert_eq!(string(&r, &PMIX_HOSTNAME), host.to_string_lossy());

    let rss = float(&r, &PMIX_PROC_RSS);
    let vmrss = kb("/proc/self/status", "VmRSS");
    assert!(
        rss > vmrss / 2.0 - 2.0 && rss < vmrss * 2.0 + 2.0,
        "{rss} vs {vmrss}"
    );
    let pss = float(&r, &PMIX_PROC_PSS);
    assert!(pss > 0.0 && pss < vmrss * 1.5 + 2.0, "pss {pss} vs {vmrss}");
    let vsize = float(&r, &PMIX_PROC_VSIZE);
    assert!(vsize >= rss && float(&r, &PMIX_PROC_PEAK_VSIZE) >= vsize - 0.01);

    let cpu1 = cpu_time(&r);
    assert!(cpu1 >= Duration::from_millis(30), "{cpu1:?}");
    let pcpu = float(&r, &PMIX_PROC_PERCENT_CPU);
    assert!(pcpu > 0.0 && pcpu.is_finite(), "{pcpu}");
    let ncpu = std::fs::read_dir("/sys/devices/system/cpu")
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("cpu")
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    match get(&r, &PMIX_PROC_CPU) {
        Some(Value::Uint16(c)) => assert!((*c as usize) < ncpu, "cpu {c} of {ncpu}"),
        v => panic!("PMIX_PROC_CPU: {v:?}"),
    }
    let cpu2 = cpu_time(&proc_usage(pid, None, &[PMIX_PROC_TIME]).unwrap());
    assert!(cpu2 >= cpu1, "{cpu2:?} < {cpu1:?}");

    drop(tx);
    parked.into_iter().for_each(|t| t.join().unwrap());
}

fn wait_for(pid: i32, what: impl Fn(&[Info]) -> bool) -> Vec<Info> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = proc_usage(pid, None, &[]).unwrap();
        if what(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "never reached: {r:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn stopped_zombie_and_reaped_child() {
    let mut child = std::process::Command::new("nice")
        .args(["-n", "5", "sleep", "60"])
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let npid = nix::unistd::Pid::from_raw(pid);
    // `nice` execs `sleep`: wait for the exec before looking at it.
    wait_for(pid, |r| string(r, &PMIX_CMD_LINE) == "sleep");
    kill(npid, Signal::SIGSTOP).unwrap();
    let r = wait_for(pid, |r| string(r, &PMIX_PROC_OS_STATE) == "T");
    assert_eq!(get(&r, &PMIX_PROC_PRIORITY), Some(&Value::Int32(-5)));
    assert_eq!(get(&r, &PMIX_PROC_NUM_THREADS), Some(&Value::Uint16(1)));

    let me = Proc::new("job.usage", 3).unwrap();
    let r = proc_usage(pid, Some(&me), &[]).unwrap();
    assert_eq!(r[0], Info::new(PMIX_PROCID, me));
    assert_eq!(get(&r, &PMIX_PROC_PID), Some(&Value::Pid(pid)));

    kill(npid, Signal::SIGKILL).unwrap();
    wait_for(pid, |r| string(r, &PMIX_PROC_OS_STATE) == "Z");
    child.wait().unwrap();
    assert_eq!(proc_usage(pid, None, &[]), Err(Status::ERR_NOT_FOUND));
}

#[test]
fn bad_pids_and_foreign_process() {
    assert_eq!(proc_usage(0, None, &[]), Err(Status::ERR_BAD_PARAM));
    assert_eq!(proc_usage(-1, None, &[]), Err(Status::ERR_BAD_PARAM));
    // Beyond pid_max (at most 2^22): no such process.
    assert_eq!(proc_usage(i32::MAX, None, &[]), Err(Status::ERR_NOT_FOUND));
    // PSS needs ptrace-read rights on init: present exactly when readable.
    let r = proc_usage(1, None, &[]).unwrap();
    let readable = std::fs::read("/proc/1/smaps_rollup").is_ok();
    assert_eq!(get(&r, &PMIX_PROC_PSS).is_some(), readable);
}

#[test]
fn want_filters_fields() {
    let pid = std::process::id() as i32;
    let r = proc_usage(pid, None, &[PMIX_PROC_RSS]).unwrap();
    assert_eq!(
        keys(&r),
        ["pmix.ppid", "pmix.proc.rss", "pmix.proc.samptime"]
    );
    let unknown = Key::new("no.such.key").unwrap();
    let r = proc_usage(pid, None, &[unknown.clone(), PMIX_PROC_RSS]).unwrap();
    assert_eq!(
        keys(&r),
        ["pmix.ppid", "pmix.proc.rss", "pmix.proc.samptime"]
    );
    let me = Proc::new("job.usage", 0).unwrap();
    let r = proc_usage(pid, Some(&me), &[PMIX_PROC_RSS, PMIX_PROC_SAMPLE_TIME]).unwrap();
    assert_eq!(
        keys(&r),
        ["pmix.procid", "pmix.proc.rss", "pmix.proc.samptime"]
    );
    let r = node_usage(&[PMIX_NODE_MEM_TOTAL, unknown]).unwrap();
    assert_eq!(
        keys(&r),
        ["pmix.hname", "pmix.node.mtot", "pmix.node.samptime"]
    );
    let r = net_usage(&["lo".into()], &[PMIX_NET_SENT_ERRS]).unwrap();
    assert_eq!(
        keys(&r[0]),
        ["pmix.net.id", "pmix.net.snterr", "pmix.net.samptime"]
    );
}

fn loadavg() -> Vec<f32> {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap();
    text.split_whitespace()
        .take(3)
        .map(|s| s.parse().unwrap())
        .collect()
}

#[test]
fn node_matches_meminfo_and_loadavg() {
    let t0 = now();
    let before = loadavg();
    let r = node_usage(&[]).unwrap();
    let after = loadavg();
    let host = nix::unistd::gethostname().unwrap();
    assert_eq!(
        r[0],
        Info::new(PMIX_HOSTNAME, host.to_string_lossy().as_ref())
    );
    check_shape(&r, &PMIX_NODE_SAMPLE_TIME, t0);
    assert_eq!(r.len(), 1 + 3 + 8 + 1);
    let total = kb("/proc/meminfo", "MemTotal");
    assert!((float(&r, &PMIX_NODE_MEM_TOTAL) - total).abs() <= total * 1e-6);
    let swap = kb("/proc/meminfo", "SwapTotal");
    assert!((float(&r, &PMIX_NODE_MEM_SWAP_TOTAL) - swap).abs() <= swap * 1e-6);
    assert!(float(&r, &PMIX_NODE_MEM_FREE) <= total);
    let load = [
        PMIX_NODE_LOAD_AVG,
        PMIX_NODE_LOAD_AVG5,
        PMIX_NODE_LOAD_AVG15,
    ];
    for (i, k) in load.iter().enumerate() {
        let v = float(&r, k);
        let (lo, hi) = (before[i].min(after[i]), before[i].max(after[i]));
        assert!(
            v >= lo - 0.005 && v <= hi + 0.005,
            "{k}: {v} not in {lo}..{hi}"
        );
    }
    // Nested per-device arrays only when asked for.
    let r = node_usage(&[PMIX_NETWORK_RESOURCE_USAGE]).unwrap();
    let nested: Vec<_> = r
        .iter()
        .filter(|i| i.key == PMIX_NETWORK_RESOURCE_USAGE)
        .collect();
    assert_eq!(nested.len(), net_usage(&[], &[]).unwrap().len());
    assert!(nested.iter().any(|i| match &i.value {
        Value::DataArray(fastpmix::types::DataArray::Info(v)) =>
            v[0] == Info::new(PMIX_NETWORK_ID, "lo"),
        _ => false,
    }));
}

fn lo_rx_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/net/dev").unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("lo:"))
        .unwrap();
    line.split_once(':')
        .unwrap()
        .1
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn network_interfaces() {
    let t0 = now();
    let all = net_usage(&[], &[]).unwrap();
    assert!(all.iter().any(|r| r[0] == Info::new(PMIX_NETWORK_ID, "lo")));
    for r in &all {
        assert_eq!(r[0].key, PMIX_NETWORK_ID);
        assert_eq!(r.len(), 1 + 6 + 1);
        check_shape(r, &PMIX_NET_SAMPLE_TIME, t0);
    }
    let before = lo_rx_bytes();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.send_to(&[0u8; 1000], sock.local_addr().unwrap())
        .unwrap();
    sock.recv(&mut [0u8; 1000]).unwrap();
    let r = net_usage(&["lo".into()], &[]).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0][0], Info::new(PMIX_NETWORK_ID, "lo"));
    match get(&r[0], &PMIX_NET_RECVD_BYTES) {
        Some(Value::Uint64(b)) => assert!(*b >= before + 1000, "{b} < {before} + 1000"),
        v => panic!("{v:?}"),
    }
    let missing = net_usage(&["lo".into(), "nosuchif0".into()], &[]);
    assert_eq!(missing, Err(Status::ERR_NOT_FOUND));
}

#[test]
fn disks() {
    let t0 = now();
    let all = disk_usage(&[], &[]).unwrap();
    let listed = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    assert_eq!(
        all.len(),
        listed.lines().filter(|l| !l.trim().is_empty()).count()
    );
    for r in &all {
        assert_eq!(r[0].key, PMIX_DISK_ID);
        assert_eq!(r.len(), 1 + 11 + 1);
        check_shape(r, &PMIX_DISK_SAMPLE_TIME, t0);
    }
    if let Some(first) = all.first() {
        let name = string(first, &PMIX_DISK_ID);
        let one = disk_usage(std::slice::from_ref(&name), &[PMIX_DISK_READ_COMPLETED]).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0][0], Info::new(PMIX_DISK_ID, name.as_str()));
        let (Some(Value::Uint64(a)), Some(Value::Uint64(b))) = (
            get(first, &PMIX_DISK_READ_COMPLETED),
            get(&one[0], &PMIX_DISK_READ_COMPLETED),
        ) else {
            panic!("{one:?}");
        };
        assert!(b >= a);
    }
    assert_eq!(
        disk_usage(&["nosuchdisk9".into()], &[]),
        Err(Status::ERR_NOT_FOUND)
    );
}
