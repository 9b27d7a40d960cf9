//! The io_uring reactor (`fastpmix::internals::sync::Reactor`): every kind of watch
//! completes when its condition happens, exactly once, cancelled watches are
//! never reported, and a submission queue smaller than the number of watches
//! still arms them all.
//!
//! No test asserts on a time: deadlines only turn a hang into a failure.
//!
//! Children re-execute this test binary (`--exact <child test>`) with
//! `FASTPMIX_REACTOR_CHILD` set; the `child_*` tests do nothing without it.

use fastpmix::internals::sync::{pidfd_open, Cell32, Reactor, Token};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "FASTPMIX_REACTOR_CHILD";
const FD_ENV: &str = "FASTPMIX_REACTOR_FD";
/// Turns a hang into a failure (never asserted as a time).
const HANG: Duration = Duration::from_secs(60);

/// Waits until `n` completions were reported (or panics after `HANG`).
fn collect(r: &mut Reactor, n: usize) -> Vec<(Token, i32)> {
    let start = Instant::now();
    let mut out = Vec::new();
    while out.len() < n {
        assert!(
            start.elapsed() < HANG,
            "only {} of {n} completions: {out:?}",
            out.len()
        );
        r.wait(Some(Duration::from_millis(200)), &mut out).unwrap();
    }
    out
}

/// Whatever is reported within a short grace period (for "nothing more").
fn drain_briefly(r: &mut Reactor) -> Vec<(Token, i32)> {
    let mut out = Vec::new();
    r.wait(Some(Duration::from_millis(50)), &mut out).unwrap();
    out
}

/// Exactly one completion, of `token`, reporting the fd readable.
fn assert_one_readable(got: &[(Token, i32)], token: Token) {
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, token);
    let revents = got[0].1;
    assert!(
        revents & i32::from(libc::POLLIN) != 0,
        "revents {revents:#x}"
    );
}

fn by_token(events: &[(Token, i32)]) -> HashMap<u64, Vec<i32>> {
    let mut m: HashMap<u64, Vec<i32>> = HashMap::new();
    for &(t, res) in events {
        m.entry(t.0).or_default().push(res);
    }
    m
}

/// A 4 KiB MAP_SHARED mapping of a fresh memfd (inherited across exec: no
/// CLOEXEC), as the node segment's futex words are.
fn shared_page() -> (OwnedFd, memmap2::MmapMut) {
    // SAFETY: the name is a NUL-terminated literal; flags 0 (no CLOEXEC, so
    // a child process inherits the descriptor).
    let fd = unsafe { libc::memfd_create(c"fastpmix-reactor-test".as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: memfd_create just returned this descriptor and nothing owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let file = File::from(fd.try_clone().unwrap());
    file.set_len(4096).unwrap();
    // SAFETY: the memfd is private to this test and its child; the word in
    // it is only accessed through `Cell32` (atomically).
    let map = unsafe { memmap2::MmapMut::map_mut(&file) }.unwrap();
    (fd, map)
}

/// The futex word at the start of a mapping.
fn word_of(map: &memmap2::MmapMut) -> &Cell32 {
    // SAFETY: the mapping is page-aligned, at least 4 bytes, outlives the
    // borrow, and its first word is only accessed through `Cell32`.
    unsafe { Cell32::at(map.as_ptr() as *mut u32) }
}

fn spawn_child(test: &str, role: &str, fd: Option<i32>) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, role)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Some(fd) = fd {
        cmd.env(FD_ENV, fd.to_string());
    }
    cmd.spawn().unwrap()
}

// ---------------------------------------------------------------------------
// Children.

/// Child: maps the inherited memfd, changes the word and wakes it.
#[test]
fn child_wakes_shared_futex() {
    if std::env::var(CHILD_ENV).as_deref() != Ok("waker") {
        return;
    }
    let fd: i32 = std::env::var(FD_ENV).unwrap().parse().unwrap();
    // SAFETY: the parent left this memfd descriptor open across exec for us;
    // nothing else in this process owns it.
    let file = unsafe { File::from_raw_fd(fd) };
    // SAFETY: as in `shared_page`: the word is only accessed atomically.
    let map = unsafe { memmap2::MmapMut::map_mut(&file) }.unwrap();
    let word = word_of(&map);
    word.store_release(1);
    word.wake_all();
}

/// Child: exits when its stdin closes.
#[test]
fn child_exits_on_stdin_eof() {
    if std::env::var(CHILD_ENV).as_deref() != Ok("sleeper") {
        return;
    }
    let mut sink = Vec::new();
    std::io::stdin().read_to_end(&mut sink).unwrap();
}

// ---------------------------------------------------------------------------
// Futex watches.

#[test]
fn futex_watch_completes_when_another_thread_wakes_the_word() {
    let mut r = Reactor::new(8).unwrap();
    let word = Arc::new(Cell32::new(0));
    // SAFETY: `word` lives (in this Arc) until the completion is reaped.
    unsafe { r.watch_futex(&word, 0, Token(1)) }.unwrap();
    // Armed in the kernel before the waker runs: this checks the wake, not
    // the value comparison.
    r.submit().unwrap();
    let w = word.clone();
    let waker = std::thread::spawn(move || {
        w.store_release(1);
        w.wake_all();
    });
    let got = collect(&mut r, 1);
    waker.join().unwrap();
    assert_eq!(got, vec![(Token(1), 0)]);
    assert_eq!(r.in_flight(), 0);
}

#[test]
fn futex_watch_completes_on_a_wake_even_if_the_value_is_unchanged() {
    let mut r = Reactor::new(8).unwrap();
    let word = Arc::new(Cell32::new(0));
    // SAFETY: `word` lives until the completion is reaped.
    unsafe { r.watch_futex(&word, 0, Token(2)) }.unwrap();
    r.submit().unwrap();
    let w = word.clone();
    std::thread::spawn(move || w.wake_all()).join().unwrap();
    assert_eq!(collect(&mut r, 1), vec![(Token(2), 0)]);
}

#[test]
fn futex_watch_with_stale_expected_value_completes_at_once_with_eagain() {
    let mut r = Reactor::new(8).unwrap();
    let word = Cell32::new(5);
    // SAFETY: `word` lives until the end of the test, after the reap.
    unsafe { r.watch_futex(&word, 4, Token(3)) }.unwrap();
    // Nobody will ever wake it: only the value comparison can complete it.
    assert_eq!(collect(&mut r, 1), vec![(Token(3), -libc::EAGAIN)]);
}

#[test]
fn futex_watch_is_woken_from_another_process_over_shared_memory() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let (fd, map) = shared_page();
    let word = word_of(&map);
    let mut r = Reactor::new(8).unwrap();
    // SAFETY: `map` outlives the reap below.
    unsafe { r.watch_futex(word, 0, Token(4)) }.unwrap();
    // Armed before the child exists: only a shared (inode-keyed) futex wait
    // is woken by another process's FUTEX_WAKE.
    r.submit().unwrap();
    let mut child = spawn_child("child_wakes_shared_futex", "waker", Some(fd.as_raw_fd()));
    let got = collect(&mut r, 1);
    assert!(child.wait().unwrap().success());
    assert_eq!(got, vec![(Token(4), 0)]);
    assert_eq!(word.load_acquire(), 1);
}

// ---------------------------------------------------------------------------
// Readable fds, pidfds, timers.

#[test]
fn readable_watch_completes_when_the_socket_gets_data() {
    let (a, mut b) = UnixStream::pair().unwrap();
    let mut r = Reactor::new(8).unwrap();
    r.watch_readable(a.as_raw_fd(), Token(5)).unwrap();
    r.submit().unwrap();
    assert!(drain_briefly(&mut r).is_empty(), "fired with no data");
    b.write_all(b"x").unwrap();
    assert_one_readable(&collect(&mut r, 1), Token(5));
}

#[test]
fn readable_watch_completes_on_peer_hangup() {
    let (a, b) = UnixStream::pair().unwrap();
    let mut r = Reactor::new(8).unwrap();
    r.watch_readable(a.as_raw_fd(), Token(6)).unwrap();
    r.submit().unwrap();
    drop(b);
    let got = collect(&mut r, 1);
    assert_eq!(got[0].0, Token(6));
    assert!(got[0].1 > 0, "result {}", got[0].1);
}

#[test]
fn writable_watch_completes_once_the_peer_drains_a_full_socket() {
    let (a, mut b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    let mut filled = 0usize;
    let chunk = [0u8; 4096];
    loop {
        match (&a).write(&chunk) {
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("write: {e}"),
        }
    }
    let mut r = Reactor::new(8).unwrap();
    r.watch_writable(a.as_raw_fd(), Token(9)).unwrap();
    r.submit().unwrap();
    assert!(drain_briefly(&mut r).is_empty(), "fired on a full socket");
    let mut sink = vec![0u8; filled];
    b.read_exact(&mut sink).unwrap();
    let got = collect(&mut r, 1);
    assert_eq!(got[0].0, Token(9));
    assert!(
        got[0].1 & i32::from(libc::POLLOUT) != 0,
        "revents {:#x}",
        got[0].1
    );
}

#[test]
fn pidfd_watch_completes_when_the_child_exits() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let mut child = spawn_child("child_exits_on_stdin_eof", "sleeper", None);
    let pidfd = pidfd_open(child.id() as i32).unwrap();
    let mut r = Reactor::new(8).unwrap();
    r.watch_readable(pidfd.as_raw_fd(), Token(7)).unwrap();
    r.submit().unwrap();
    // The child is alive (blocked on stdin) while the watch is armed.
    drop(child.stdin.take());
    let got = collect(&mut r, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, Token(7));
    assert!(
        got[0].1 & i32::from(libc::POLLIN) != 0,
        "revents {:#x}",
        got[0].1
    );
    assert!(child.wait().unwrap().success());
}

#[test]
fn pidfd_open_of_a_missing_process_fails() {
    // pid_max is at most 2^22 on Linux.
    let err = pidfd_open(i32::MAX).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ESRCH));
}

#[test]
fn timeout_watch_fires_with_etime() {
    let mut r = Reactor::new(8).unwrap();
    r.watch_timeout(Duration::from_millis(5), Token(8)).unwrap();
    assert_eq!(collect(&mut r, 1), vec![(Token(8), -libc::ETIME)]);
}

#[test]
fn wait_returns_nothing_when_its_timeout_elapses() {
    let mut r = Reactor::new(8).unwrap();
    let word = Cell32::new(0);
    // SAFETY: `word` outlives the watch: the cancel below ends it first.
    unsafe { r.watch_futex(&word, 0, Token(9)) }.unwrap();
    let mut out = Vec::new();
    r.wait(Some(Duration::from_millis(20)), &mut out).unwrap();
    assert!(out.is_empty());
    r.wait(Some(Duration::ZERO), &mut out).unwrap();
    assert!(out.is_empty());
    r.cancel(Token(9)).unwrap();
}

// ---------------------------------------------------------------------------
// Cancellation.

#[test]
fn cancel_suppresses_every_pending_watch_of_the_token() {
    let word = Arc::new(Cell32::new(0));
    let (a, mut b) = UnixStream::pair().unwrap();
    let mut r = Reactor::new(8).unwrap();
    // Two watches on token 10, one still unsubmitted when cancelled.
    // SAFETY: `word` outlives the reactor's use of it (cancel below).
    unsafe { r.watch_futex(&word, 0, Token(10)) }.unwrap();
    r.submit().unwrap();
    r.watch_readable(a.as_raw_fd(), Token(10)).unwrap();
    r.watch_timeout(Duration::from_millis(30), Token(11))
        .unwrap();
    r.cancel(Token(10)).unwrap();
    // Both conditions now happen; neither may be reported.
    word.store_release(1);
    word.wake_all();
    b.write_all(b"x").unwrap();
    let got = collect(&mut r, 1);
    assert_eq!(got, vec![(Token(11), -libc::ETIME)]);
    assert!(drain_briefly(&mut r).is_empty());
    assert_eq!(r.in_flight(), 0, "cancelled watches were not retired");
}

#[test]
fn cancelled_token_can_be_rearmed_at_once_without_stale_reports() {
    let word = Arc::new(Cell32::new(0));
    let (a, mut b) = UnixStream::pair().unwrap();
    let mut r = Reactor::new(8).unwrap();
    // SAFETY: `word` outlives the watch (cancelled below).
    unsafe { r.watch_futex(&word, 0, Token(12)) }.unwrap();
    r.submit().unwrap();
    r.cancel(Token(12)).unwrap();
    r.watch_readable(a.as_raw_fd(), Token(12)).unwrap();
    word.wake_all();
    b.write_all(b"x").unwrap();
    let got = collect(&mut r, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, Token(12));
    assert!(
        got[0].1 & i32::from(libc::POLLIN) != 0,
        "the futex's result leaked: {got:?}"
    );
    assert!(drain_briefly(&mut r).is_empty());
}

#[test]
fn cancel_of_an_unknown_token_is_not_an_error() {
    let mut r = Reactor::new(8).unwrap();
    r.cancel(Token(u64::MAX)).unwrap();
}

// ---------------------------------------------------------------------------
// Many watches, small queues.

#[test]
fn many_watches_are_each_reported_exactly_once() {
    const WORDS: usize = 200;
    const SOCKETS: usize = 20;
    let words: Arc<Vec<Cell32>> = Arc::new((0..WORDS).map(|_| Cell32::new(0)).collect());
    // A third are already stale when armed.
    for w in words.iter().step_by(3) {
        w.store_release(1);
    }
    let pairs: Vec<(UnixStream, UnixStream)> =
        (0..SOCKETS).map(|_| UnixStream::pair().unwrap()).collect();
    let mut r = Reactor::new(64).unwrap();
    for (i, w) in words.iter().enumerate() {
        // SAFETY: `words` lives until after every completion is reaped.
        unsafe { r.watch_futex(w, 0, Token(i as u64)) }.unwrap();
    }
    for (j, (a, _)) in pairs.iter().enumerate() {
        r.watch_readable(a.as_raw_fd(), Token(1000 + j as u64))
            .unwrap();
    }
    r.submit().unwrap();
    let ws = words.clone();
    let waker = std::thread::spawn(move || {
        for w in ws.iter() {
            w.store_release(1);
            w.wake_all();
        }
    });
    for (_, b) in &pairs {
        (&*b).write_all(b"x").unwrap();
    }
    let got = collect(&mut r, WORDS + SOCKETS);
    waker.join().unwrap();
    let m = by_token(&got);
    assert_eq!(m.len(), WORDS + SOCKETS);
    for i in 0..WORDS {
        let res = &m[&(i as u64)];
        assert_eq!(res.len(), 1, "token {i}: {res:?}");
        if i % 3 == 0 {
            assert_eq!(res[0], -libc::EAGAIN, "stale word {i}");
        } else {
            // Armed before the waker started: woken, not stale.
            assert_eq!(res[0], 0, "woken word {i}");
        }
    }
    for j in 0..SOCKETS {
        let res = &m[&(1000 + j as u64)];
        assert_eq!(res.len(), 1, "socket {j}: {res:?}");
        assert!(res[0] & i32::from(libc::POLLIN) != 0);
    }
    assert!(drain_briefly(&mut r).is_empty());
    assert_eq!(r.in_flight(), 0);
}

#[test]
fn full_submission_queue_still_arms_every_watch() {
    const N: usize = 20;
    let words: Vec<Cell32> = (0..N).map(|_| Cell32::new(0)).collect();
    // Half complete at submission (more than the 8-entry completion queue
    // holds before the first reap), half need a wake.
    for w in words.iter().step_by(2) {
        w.store_release(1);
    }
    let mut r = Reactor::new(4).unwrap();
    for (i, w) in words.iter().enumerate() {
        // SAFETY: `words` lives until after every completion is reaped.
        unsafe { r.watch_futex(w, 0, Token(i as u64)) }.unwrap();
    }
    r.submit().unwrap();
    for w in words.iter().skip(1).step_by(2) {
        w.store_release(1);
        w.wake_all();
    }
    let got = collect(&mut r, N);
    let m = by_token(&got);
    assert_eq!(m.len(), N, "{got:?}");
    for i in 0..N {
        let res = &m[&(i as u64)];
        assert_eq!(res.len(), 1, "token {i}: {res:?}");
        let want = if i % 2 == 0 { -libc::EAGAIN } else { 0 };
        assert_eq!(res[0], want, "token {i}");
    }
    assert_eq!(r.in_flight(), 0);
}

#[test]
fn dropping_the_reactor_with_armed_watches_returns() {
    let word = Cell32::new(0);
    let (a, _b) = UnixStream::pair().unwrap();
    let mut r = Reactor::new(8).unwrap();
    // SAFETY: the reactor is dropped (closing the ring, which cancels the
    // wait) before `word`.
    unsafe { r.watch_futex(&word, 0, Token(1)) }.unwrap();
    r.watch_readable(a.as_raw_fd(), Token(2)).unwrap();
    r.watch_timeout(Duration::from_secs(3600), Token(3))
        .unwrap();
    r.submit().unwrap();
    drop(r);
}

// ---------------------------------------------------------------------------
// `wait_with`: one futex_waitv on the caller's words and the ring's
// completions (the server's progress thread sleeps so on its doorbells).

/// Calls `wait_with` on `words` until `done` holds (or panics after `HANG`).
fn wait_with_until(
    r: &mut Reactor,
    words: &[(&Cell32, u32)],
    out: &mut Vec<(Token, i32)>,
    done: impl Fn(&[(Token, i32)]) -> bool,
) {
    let start = Instant::now();
    while !done(out) {
        assert!(start.elapsed() < HANG, "still waiting: {out:?}");
        r.wait_with(Some(HANG), words.iter().copied(), out).unwrap();
    }
}

#[test]
fn wait_with_returns_when_another_process_wakes_a_word() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let (fd, map) = shared_page();
    let word = word_of(&map);
    let mut r = Reactor::new(8).unwrap();
    // This project's kernels (6.7+, for io_uring futex waits) all can.
    assert!(r.can_wait_with());
    let mut child = spawn_child("child_wakes_shared_futex", "waker", Some(fd.as_raw_fd()));
    let mut out = Vec::new();
    let start = Instant::now();
    while word.load_acquire() == 0 {
        assert!(start.elapsed() < HANG, "the word was never woken");
        r.wait_with(Some(HANG), [(word, 0)], &mut out).unwrap();
    }
    assert!(child.wait().unwrap().success());
    assert!(out.is_empty(), "no watch was armed: {out:?}");
}

#[test]
fn wait_with_reports_a_socket_that_becomes_readable_while_it_sleeps_on_words() {
    let (a, mut b) = UnixStream::pair().unwrap();
    let idle = Cell32::new(7);
    let mut r = Reactor::new(8).unwrap();
    r.watch_readable(a.as_raw_fd(), Token(5)).unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        b.write_all(b"x").unwrap();
        b
    });
    let mut out = Vec::new();
    // The completion arrives while the thread sleeps in futex_waitv on a
    // word nobody touches: only the completion queue's tail can end it.
    wait_with_until(&mut r, &[(&idle, 7)], &mut out, |o| !o.is_empty());
    let _b = writer.join().unwrap();
    assert_one_readable(&out, Token(5));
}

#[test]
fn wait_with_reports_a_timer_and_a_futex_watch_armed_through_io_uring() {
    let idle = Cell32::new(0);
    let watched = Arc::new(Cell32::new(0));
    let mut r = Reactor::new(8).unwrap();
    r.watch_timeout(Duration::from_millis(20), Token(1))
        .unwrap();
    // SAFETY: `watched` (in this Arc) outlives the reap below.
    unsafe { r.watch_futex(&watched, 0, Token(2)) }.unwrap();
    r.submit().unwrap();
    let w = watched.clone();
    let waker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(40));
        w.store_release(1);
        w.wake_all();
    });
    let mut out = Vec::new();
    wait_with_until(&mut r, &[(&idle, 0)], &mut out, |o| o.len() == 2);
    waker.join().unwrap();
    assert_eq!(
        by_token(&out),
        HashMap::from([(1, vec![-libc::ETIME]), (2, vec![0])])
    );
}

#[test]
fn wait_with_returns_at_once_when_a_word_already_differs() {
    let word = Cell32::new(2);
    let mut r = Reactor::new(8).unwrap();
    let mut out = Vec::new();
    // No timeout: a sleep here would never end.
    r.wait_with(None, [(&word, 1)], &mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn wait_with_returns_nothing_when_its_timeout_elapses() {
    let word = Cell32::new(0);
    let mut r = Reactor::new(8).unwrap();
    let mut out = Vec::new();
    let start = Instant::now();
    r.wait_with(Some(Duration::from_millis(30)), [(&word, 0)], &mut out)
        .unwrap();
    assert!(out.is_empty());
    // At least the timeout (a deadline, never checked as an upper bound).
    assert!(start.elapsed() >= Duration::from_millis(30));
}

#[test]
fn wait_with_refuses_more_words_than_one_futex_waitv_holds() {
    let words: Vec<Cell32> = (0..=Reactor::MAX_WORDS).map(|_| Cell32::new(0)).collect();
    let mut r = Reactor::new(8).unwrap();
    let mut out = Vec::new();
    let err = r
        .wait_with(None, words.iter().map(|w| (w, 0)), &mut out)
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    // The most it takes is fine (one differs, so it returns at once).
    words[0].store_release(1);
    r.wait_with(
        None,
        words[..Reactor::MAX_WORDS].iter().map(|w| (w, 0)),
        &mut out,
    )
    .unwrap();
}
