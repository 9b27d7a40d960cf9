//! How a sleeping progress thread is woken, path by path: the one-way
//! latency from a `FUTEX_WAKE` on a word in shared memory to the sleeper
//! running again, for each way fastpmix sleeps, with the plain `FUTEX_WAIT`
//! as the floor of the same run.
//!
//! ```sh
//! cargo bench --bench wake_paths                              # 20 000 samples per row
//! FASTPMIX_BENCH_SAMPLES=5000 cargo bench --bench wake_paths  # fewer
//! ```
//!
//! Rows (the word is in a `MAP_SHARED` memfd mapping, so every futex key is
//! a shared one, as in the rings):
//! - `futex_wait`: one word, `FUTEX_WAIT` (the floor);
//! - `futex_waitv, 2 words`: a client reader's sleep (its wake word and the
//!   ring doorbell; the real one adds a private parker word);
//! - `io_uring futex watch`: a `FutexWait` submission re-armed after every
//!   wake and completed by `io_uring_enter` (`sync::Reactor::wait`): the
//!   server progress thread's sleep on a doorbell until 2026-11-27;
//! - `futex_waitv + io_uring`: the server progress thread's sleep
//!   (`sync::Reactor::wait_with`): one `futex_waitv` on the word and on the
//!   reactor's completion-queue tail;
//! - `pipe read` (not a fastpmix path): the sleeper blocks in `read(2)` on a
//!   pipe the waker writes a byte to, as a socket-based library's progress
//!   thread does. A pipe wake is a "sync" wake-up (`WF_SYNC`: the scheduler
//!   may run the sleeper on the waker's CPU), a futex wake is not; on an idle
//!   virtual machine this row shows what that is worth.
//!
//! Each row runs twice: with both threads free to run anywhere, and with
//! both pinned to CPU 0 (no idle CPU to wake: the software path alone).
//! Rows are interleaved in rounds so drift hits them alike. Nothing asserts
//! on a time. Without `--bench` (`cargo test --benches`) it does a quick
//! pass of 200 samples per row.

use fastpmix::internals::sync::{Cell32, Cell64, Reactor, Token};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
mod common;

use common::machine;

const DEFAULT_SAMPLES: usize = 20_000;
const QUICK_SAMPLES: usize = 200;
const ROUNDS: usize = 4;
/// Pause after each answer so the sleeper is back asleep before the next ring.
const GAP: Duration = Duration::from_micros(50);

#[derive(Clone, Copy, PartialEq, Debug)]
enum Path {
    FutexWait,
    FutexWaitv,
    IoUring,
    Hybrid,
    Pipe,
}

impl Path {
    fn name(self) -> &'static str {
        match self {
            Path::FutexWait => "futex_wait (floor)",
            Path::FutexWaitv => "futex_waitv, 2 words",
            Path::IoUring => "io_uring futex watch",
            Path::Hybrid => "futex_waitv + io_uring",
            Path::Pipe => "pipe read (reference)",
        }
    }
}

/// Words in a shared mapping, a cache line apart: 0 = ping (rung by the
/// bench thread), 1 = the second word the waitv row sleeps on, 2 = pong
/// (the answer).
struct Words {
    _map: memmap2::MmapMut,
    base: *mut u32,
}

// SAFETY: the mapping lives as long as `Words`; every access to it goes
// through `Cell32`, whose operations are atomic.
unsafe impl Send for Words {}
// SAFETY: as above.
unsafe impl Sync for Words {}

impl Words {
    fn new() -> Words {
        let fd = memfd_create();
        let file = std::fs::File::from(fd);
        file.set_len(4096).expect("size the memfd");
        // Shared (not anonymous) so that futex keys are the shared kind, as in the rings.
        // SAFETY: a fresh memfd that only this process maps.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.expect("map the memfd");
        let base = map.as_mut_ptr().cast::<u32>();
        Words { _map: map, base }
    }

    fn word(&self, i: usize) -> &Cell32 {
        assert!(i < 3);
        // SAFETY: in the 4096-byte mapping, 4-byte aligned, alive as long as `self`.
        unsafe { Cell32::at(self.base.add(i * 16)) }
    }
}

fn memfd_create() -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: a NUL-terminated name; the fd returned is new and ours.
    let fd = unsafe { libc::memfd_create(c"fastpmix-wake-paths".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
}

/// The calling thread's CPU set.
fn affinity() -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        set
    }
}

fn set_affinity(set: &libc::cpu_set_t) {
    // SAFETY: `set` is a valid cpu_set_t; applies to the calling thread.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
}

fn pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 returns.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: fresh descriptors nobody else owns.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

fn pin_to(cpu: Option<usize>) {
    let Some(cpu) = cpu else { return };
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET is in bounds for a small CPU number.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    };
    set_affinity(&set);
}

/// One row: `samples` one-way wakes of a helper sleeping on `path`.
fn run(path: Path, cpu: Option<usize>, samples: usize) -> Vec<u64> {
    let words = Arc::new(Words::new());
    let stamp = Arc::new(Cell64::new(0));
    let stop = Arc::new(Cell32::new(0));
    let epoch = Instant::now();
    let (rd, wr) = pipe();
    let helper = {
        let (words, stamp, stop) = (words.clone(), stamp.clone(), stop.clone());
        thread::spawn(move || {
            pin_to(cpu);
            let mut reactor = matches!(path, Path::IoUring | Path::Hybrid)
                .then(|| Reactor::new(8).expect("io_uring"));
            let mut out = Vec::new();
            let (ping, other, pong) = (words.word(0), words.word(1), words.word(2));
            let mut seen = 0;
            while stop.load_acquire() == 0 {
                while ping.load_acquire() == seen {
                    match &mut reactor {
                        None if path == Path::Pipe => {
                            let mut b = [0u8; 1];
                            // SAFETY: reads one byte into a live buffer.
                            unsafe { libc::read(rd.as_raw_fd(), b.as_mut_ptr().cast(), 1) };
                        }
                        None if path == Path::FutexWait => ping.wait_while(seen, None),
                        None => ping.wait_while_both(seen, other, 0, None),
                        Some(r) if path == Path::Hybrid => {
                            out.clear();
                            r.wait_with(None, [(ping, seen)], &mut out)
                                .expect("reactor wait");
                        }
                        Some(r) => {
                            // The reactor is a local, dropped before the captured `words`.
                            // SAFETY: the mapping outlives every watch of the reactor.
                            unsafe { r.watch_futex(ping, seen, Token(1)) }.expect("arm");
                            out.clear();
                            r.wait(None, &mut out).expect("reactor wait");
                        }
                    }
                }
                stamp.store_release(epoch.elapsed().as_nanos() as u64);
                seen = ping.load_acquire();
                pong.store_release(seen);
                pong.wake_all();
            }
        })
    };
    let before = affinity();
    pin_to(cpu);
    let (ping, pong) = (words.word(0), words.word(2));
    let mut v = Vec::with_capacity(samples);
    thread::sleep(Duration::from_millis(2));
    for i in 1..=samples as u32 {
        let t0 = epoch.elapsed().as_nanos() as u64;
        ping.store_release(i);
        if path == Path::Pipe {
            // SAFETY: writes one byte from a live buffer.
            unsafe { libc::write(wr.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        } else {
            ping.wake_all();
        }
        while pong.load_acquire() != i {
            pong.wait_while(i - 1, Some(Duration::from_millis(100)));
        }
        v.push(stamp.load_acquire().saturating_sub(t0));
        thread::sleep(GAP);
    }
    stop.store_release(1);
    ping.store_release(u32::MAX);
    ping.wake_all();
    // SAFETY: as above; ends a pipe row's helper read.
    unsafe { libc::write(wr.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
    let _ = helper.join();
    set_affinity(&before);
    v
}

fn pct(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let samples = std::env::var("FASTPMIX_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if bench {
            DEFAULT_SAMPLES
        } else {
            QUICK_SAMPLES
        });
    println!("{}", machine_line());
    let per_round = samples.div_ceil(ROUNDS);
    let paths = [
        Path::FutexWait,
        Path::FutexWaitv,
        Path::IoUring,
        Path::Hybrid,
        Path::Pipe,
    ];
    for (label, cpu) in [("any CPU", None), ("both on CPU 0", Some(0))] {
        let mut all: Vec<Vec<u64>> = vec![Vec::new(); paths.len()];
        for _ in 0..ROUNDS {
            for (i, p) in paths.iter().enumerate() {
                all[i].extend(run(*p, cpu, per_round));
            }
        }
        println!("\n{label}: one-way wake latency, {samples} samples per row ({ROUNDS} interleaved rounds)");
        println!(
            "{:<24} {:>9} {:>9} {:>9} {:>9}",
            "path", "p50 µs", "p90 µs", "p99 µs", "p50/floor"
        );
        let floor = pct(&mut all[0], 0.5).max(1);
        for (i, p) in paths.iter().enumerate() {
            let v = &mut all[i];
            let (p50, p90, p99) = (pct(v, 0.5), pct(v, 0.9), pct(v, 0.99));
            println!(
                "{:<24} {:>9.2} {:>9.2} {:>9.2} {:>8.2}x",
                p.name(),
                p50 as f64 / 1e3,
                p90 as f64 / 1e3,
                p99 as f64 / 1e3,
                p50 as f64 / floor as f64
            );
        }
    }
    println!("\n{}", machine_line());
}

fn machine_line() -> String {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    machine::process_machine_line(cores, Instant::now)
}
