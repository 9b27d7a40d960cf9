//! A minimal shared-futex wrapper (nix has no futex; see engineering.md).

use super::atomic::AtomicU32;
use std::time::Duration;

/// Sleeps while `*word == expected`, at most `timeout`. Returns on a wake, a
/// value change, a signal, a timeout or spuriously: callers re-check in a loop.
#[cfg(not(loom))]
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: libc::c_long::from(t.subsec_nanos() as i32),
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, 4-byte-aligned AtomicU32 for the whole call
    // (borrowed), `ts_ptr` is null or points to a timespec on this stack frame.
    // FUTEX_WAIT only reads the word; EAGAIN/EINTR/ETIMEDOUT are all "re-check".
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Sleeps until either word is woken or differs from its expected value
/// (`futex_waitv`, Linux 5.16+; shared futexes, 32-bit). Returns like
/// [`wait`]: callers re-check. Without futex_waitv (ENOSYS) it sleeps on
/// `a` alone for at most 1 ms, so `b` is polled rather than missed.
#[cfg(not(loom))]
pub(crate) fn wait_either(a: &AtomicU32, av: u32, b: &AtomicU32, bv: u32) {
    /// `struct futex_waitv` of the kernel ABI.
    #[repr(C)]
    struct FutexWaitv {
        val: u64,
        uaddr: u64,
        flags: u32,
        reserved: u32,
    }
    const FUTEX2_SIZE_U32: u32 = 0x02;
    let v = [
        FutexWaitv {
            val: av as u64,
            uaddr: a.as_ptr() as u64,
            flags: FUTEX2_SIZE_U32,
            reserved: 0,
        },
        FutexWaitv {
            val: bv as u64,
            uaddr: b.as_ptr() as u64,
            flags: FUTEX2_SIZE_U32,
            reserved: 0,
        },
    ];
    // SAFETY: `v` is a live array of two kernel-ABI `futex_waitv` entries
    // naming live, aligned u32 words (borrowed for the call); no timeout
    // (null), clock id 0 is ignored without one. The kernel only reads.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            v.as_ptr(),
            2u32,
            0u32,
            std::ptr::null::<libc::timespec>(),
            0u32,
        )
    };
    if rc < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
        wait(a, av, Some(Duration::from_millis(1)));
    }
}

#[cfg(loom)]
pub(crate) fn wait_either(a: &AtomicU32, av: u32, b: &AtomicU32, bv: u32) {
    use super::atomic::Ordering::SeqCst;
    while a.load(SeqCst) == av && b.load(SeqCst) == bv {
        loom::thread::yield_now();
    }
}

/// Wakes up to `n` waiters sleeping on `word`.
#[cfg(not(loom))]
pub(crate) fn wake(word: &AtomicU32, n: i32) {
    // SAFETY: `word` is a live, aligned AtomicU32; FUTEX_WAKE does not access
    // memory through the pointer, it only uses the address as the wait key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            n,
            0usize,
            0usize,
            0u32,
        );
    }
}

// Under loom there is no kernel. A wait blocks (yielding to loom's scheduler)
// until the word changes, so a lost wake-up becomes a livelock that loom
// reports, instead of a spurious return that would hide it.
#[cfg(loom)]
pub(crate) fn wait(word: &AtomicU32, expected: u32, _timeout: Option<Duration>) {
    while word.load(super::atomic::Ordering::SeqCst) == expected {
        loom::thread::yield_now();
    }
}

#[cfg(loom)]
pub(crate) fn wake(_word: &AtomicU32, _n: i32) {}
