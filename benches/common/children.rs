//! The child processes: this bench binary re-executed with [`CHILD_ENV`]
//! naming the role (floor partner, ring reader, publisher under strace).

use super::block::{Ctl, L_ERRORS, L_LOST};
use super::records::typical;
use super::wait::{env_parse, mono_ns, sleep_until};
use super::{
    ACK, CHILD_ENV, COUNT_ENV, CTL_ENV, INDEX_ENV, PING_STOP, READERS_ENV, SEGMENT_ENV, STOP_CODE,
};
use fastpmix::internals::ring::{Next, RingReader, RingWriter, Segment, SpinPolicy, Start};
use shm_layout::Geometry;
use std::hint::spin_loop;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Child processes of one rig; killed (by pid) if they do not exit.
pub struct Kids(Vec<Child>);

impl Kids {
    pub(super) fn spawn(role: &str, ctl: &Ctl, extra: &[(&str, String)], n: usize) -> Kids {
        let exe = std::env::current_exe().expect("current_exe");
        let kids = (0..n)
            .map(|i| {
                let mut cmd = Command::new(&exe);
                cmd.env(CHILD_ENV, role)
                    .env(CTL_ENV, ctl.fd.to_string())
                    .env(INDEX_ENV, i.to_string())
                    .stdin(Stdio::null());
                for (k, v) in extra {
                    cmd.env(k, v);
                }
                cmd.spawn().expect("spawn bench child")
            })
            .collect();
        let k = Kids(kids);
        sleep_until(ctl.ready(), n as u32, "children to start");
        k
    }

    /// Waits up to `timeout` for every child to exit, then kills the rest.
    pub(super) fn finish(&mut self, timeout: Duration) {
        let t = Instant::now();
        for c in &mut self.0 {
            loop {
                match c.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if t.elapsed() < timeout => thread::sleep(Duration::from_millis(1)),
                    Ok(None) => {
                        eprintln!("bench child {} did not exit: killing it", c.id());
                        let _ = c.kill();
                        let _ = c.wait();
                        break;
                    }
                }
            }
        }
        self.0.clear();
    }
}

impl Drop for Kids {
    fn drop(&mut self) {
        self.finish(Duration::from_secs(2));
    }
}

/// Runs the child role named in the environment, if any, and exits.
/// Both bench mains call this first.
pub fn run_child_if_requested() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    let code = match role.as_str() {
        "floor" => floor_child(),
        "floor-spin" => floor_spin_child(),
        "reader-sleep" => reader_child(false),
        "reader-spin" => reader_child(true),
        "publish" => publish_child(),
        other => {
            eprintln!("unknown bench child role {other:?}");
            2
        }
    };
    std::process::exit(code);
}

fn announce(ctl: &Ctl) {
    ctl.ready().fetch_add_seqcst(1);
    ctl.ready().wake_all();
}

/// Sleeps on `ping`; on each change stamps its wake-up and rings `pong`.
fn floor_child() -> i32 {
    let ctl = Ctl::from_env();
    announce(&ctl);
    let mut seen = 0u32;
    loop {
        let v = ctl.ping().load_acquire();
        if v == seen {
            ctl.ping().wait_while(seen, None);
            continue;
        }
        let now = mono_ns();
        if v == PING_STOP {
            return 0;
        }
        ctl.floor_stamp().store_relaxed(now);
        seen = v;
        // Release: the stamp is visible once the parent sees pong.
        ctl.pong().store_release(v);
        ctl.pong().wake_all();
    }
}

/// Busy-polls `ping`; on each change stamps the moment it saw it and
/// answers on `pong` (no syscall on either side).
fn floor_spin_child() -> i32 {
    let ctl = Ctl::from_env();
    announce(&ctl);
    let mut seen = 0u32;
    loop {
        let v = ctl.ping().load_acquire();
        if v == seen {
            spin_loop();
            continue;
        }
        let now = mono_ns();
        if v == PING_STOP {
            return 0;
        }
        ctl.floor_stamp().store_relaxed(now);
        seen = v;
        ctl.pong().store_release(v);
    }
}

/// Attaches to the ring and reports every ACK record: its latency (own
/// clock minus the record's timestamp) into the results area, then the
/// shared `done` counter. Sleeping readers never spin; spinning ones
/// busy-poll.
fn reader_child(spin: bool) -> i32 {
    let ctl = Ctl::from_env();
    let name: String = env_parse(SEGMENT_ENV);
    let idx: usize = env_parse(INDEX_ENV);
    let n: u32 = env_parse(READERS_ENV);
    let seg = match Segment::open(&name, Duration::from_secs(5)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bench reader: cannot open {name}: {e}");
            return 1;
        }
    };
    let Some(mut r) = RingReader::attach(seg.region().clone(), Start::Head) else {
        eprintln!("bench reader: client table full");
        return 1;
    };
    r.set_spin(SpinPolicy::never());
    announce(&ctl);
    let stamp = ctl.stamp(idx);
    loop {
        let mut empty = false;
        match r.try_next() {
            Next::Record(rec) => {
                let now = mono_ns();
                if rec.code.to_native() == STOP_CODE {
                    break;
                }
                if rec.flags.to_native() & ACK != 0 {
                    stamp.store_relaxed(now.saturating_sub(rec.timestamp_ns.to_native()));
                    // SeqCst RMW (Release): the parent's Acquire load of
                    // `done` makes the stamp visible.
                    let prev = ctl.done().fetch_add_seqcst(1);
                    if !spin && prev.wrapping_add(1) % n == 0 {
                        ctl.done().wake_all();
                    }
                }
            }
            Next::Empty => empty = true,
            Next::Lagged { missed } => {
                ctl.c64(L_LOST).fetch_add_relaxed(missed);
            }
            Next::Corrupt { seq, why } => {
                eprintln!("bench reader {idx}: corrupt record {seq}: {why}");
                ctl.c64(L_ERRORS).fetch_add_relaxed(1);
            }
            // This reader reads no lane: nothing is a copy of one.
            Next::LaneCopy { lane, pos } => {
                eprintln!("bench reader {idx}: skipped as lane {lane}'s copy at {pos}");
                ctl.c64(L_ERRORS).fetch_add_relaxed(1);
            }
        }
        if empty {
            if spin {
                spin_loop();
            } else {
                r.wait(None);
            }
        }
    }
    drop(r);
    drop(seg);
    0
}

/// Publishes `COUNT` typical records (encode + publish) with no reader
/// asleep, then prints what the ring counted. Run under strace.
fn publish_child() -> i32 {
    let n: u64 = env_parse(COUNT_ENV);
    let seg = Segment::create(Geometry::default()).expect("create segment");
    let mut w = RingWriter::new(seg.region().clone());
    let mut rec = typical(0);
    let vcs0 = voluntary_switches();
    for i in 0..n {
        rec.source_seq = i as u32;
        rec.timestamp_ns = i;
        w.publish(&rec).expect("publish");
    }
    let vcs1 = voluntary_switches();
    println!(
        "published={} wakes={} voluntary_ctxt_switches={}",
        w.published(),
        w.wakes(),
        vcs1.saturating_sub(vcs0)
    );
    drop(w);
    drop(seg);
    0
}

/// `voluntary_ctxt_switches` of this process (0 when unreadable).
pub fn voluntary_switches() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Environment for a `publish` child that publishes `n` records.
pub fn publish_child_env(n: u64) -> Vec<(String, String)> {
    vec![
        (CHILD_ENV.into(), "publish".into()),
        (COUNT_ENV.into(), n.to_string()),
    ]
}
