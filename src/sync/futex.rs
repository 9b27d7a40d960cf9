//! A minimal futex wrapper (nix has no futex).

use super::atomic::AtomicU32;
use std::time::Duration;

/// Who can wake a word: any process that maps it, or only this process.
///
/// A word in shared memory must be `Shared` (a private key would never
/// match the other process's). A word in this process's own memory can be
/// `Private`: the kernel then keys it by address space and address, with no
/// page lookup, which is most of the cost of a shared futex operation
/// (`get_futex_key`/`gup_fast_fallback` in a profile). Waiters and wakers
/// of one word must agree.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Scope {
    /// The word may be mapped by several processes.
    Shared,
    /// The word is in this process's private memory.
    Private,
}

#[cfg(not(loom))]
impl Scope {
    /// The `FUTEX_WAIT`/`FUTEX_WAKE` operation with this scope's flag.
    fn op(self, op: libc::c_int) -> libc::c_int {
        match self {
            Scope::Shared => op,
            Scope::Private => op | libc::FUTEX_PRIVATE_FLAG,
        }
    }
}

/// Sleeps while `*word == expected`, at most `timeout`. Returns on a wake, a
/// value change, a signal, a timeout or spuriously: callers re-check in a loop.
#[cfg(not(loom))]
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    wait_in(Scope::Shared, word, expected, timeout)
}

/// [`wait`] on a word of the given [`Scope`].
#[cfg(not(loom))]
pub(crate) fn wait_in(scope: Scope, word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
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
            scope.op(libc::FUTEX_WAIT),
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// A word to wait on, the value it must still have, and its scope.
pub(crate) type WaitWord<'a> = (&'a AtomicU32, u32, Scope);

/// `struct futex_waitv` of the kernel ABI.
#[cfg(not(loom))]
#[repr(C)]
#[derive(Clone, Copy)]
struct FutexWaitv {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

#[cfg(not(loom))]
impl FutexWaitv {
    const EMPTY: FutexWaitv = FutexWaitv {
        val: 0,
        uaddr: 0,
        flags: 0,
        reserved: 0,
    };

    fn of((w, val, scope): &WaitWord<'_>) -> FutexWaitv {
        const FUTEX2_SIZE_U32: u32 = 0x02;
        const FUTEX2_PRIVATE: u32 = 128;
        FutexWaitv {
            val: u64::from(*val),
            uaddr: w.as_ptr() as u64,
            flags: match scope {
                Scope::Shared => FUTEX2_SIZE_U32,
                Scope::Private => FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
            },
            reserved: 0,
        }
    }
}

/// The most words one `futex_waitv` takes (`FUTEX_WAITV_MAX`).
#[cfg_attr(loom, allow(dead_code))] // its users are not built under loom
pub(crate) const WAITV_MAX: usize = 128;

/// Sleeps until any of `words` (at most 4) is woken or differs from its
/// expected value, at most `timeout` (`futex_waitv`, Linux 5.16+; 32-bit
/// futexes, each of its own scope). Returns like [`wait`]: callers
/// re-check. Without futex_waitv (ENOSYS, or under miri) it polls them
/// ([`poll_any`]).
#[cfg(not(loom))]
pub(crate) fn wait_any(words: &[WaitWord<'_>], timeout: Option<Duration>) {
    debug_assert!(words.len() <= 4, "wait_any takes at most 4 words");
    if cfg!(miri) {
        return poll_any(words, timeout);
    }
    let mut v = [FutexWaitv::EMPTY; 4];
    let n = words.len().min(4);
    for (e, w) in v.iter_mut().zip(words) {
        *e = FutexWaitv::of(w);
    }
    if waitv(&v[..n], timeout) == Err(libc::ENOSYS) {
        poll_any(words, timeout);
    }
}

/// A reusable list of up to [`WAITV_MAX`] words for one `futex_waitv`: the
/// server's progress thread sleeps on every namespace's doorbell and its
/// io_uring's completion queue at once (`Reactor::wait_with`). The list
/// keeps raw addresses between `clear` and `wait`, so it is filled and used
/// inside one borrow of the words (see `push`).
#[cfg(not(loom))]
#[derive(Default)]
pub(crate) struct WaitList(Vec<FutexWaitv>);

#[cfg(not(loom))]
impl WaitList {
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Adds a word; `false` when the list already holds [`WAITV_MAX`].
    /// The caller keeps `word` alive until the next `clear` (the list holds
    /// only its address; a word unmapped before `wait` makes the kernel
    /// report `EFAULT`, not a fault in this process).
    pub(crate) fn push(&mut self, w: WaitWord<'_>) -> bool {
        if self.0.len() >= WAITV_MAX {
            return false;
        }
        self.0.push(FutexWaitv::of(&w));
        true
    }

    /// Sleeps until a word is woken or differs from its value, a signal
    /// (or io_uring task work) interrupts the sleep, or `timeout` passes.
    /// Returns the `errno` of a failed call (`EAGAIN`: a word already
    /// differed; `ETIMEDOUT`; `EFAULT`: a word was not mapped); `Ok` on a
    /// wake. Callers re-check either way.
    pub(crate) fn wait(&self, timeout: Option<Duration>) -> Result<(), i32> {
        waitv(&self.0, timeout)
    }
}

/// One `futex_waitv` call on `v`; `Err(errno)` when it failed.
#[cfg(not(loom))]
fn waitv(v: &[FutexWaitv], timeout: Option<Duration>) -> Result<(), i32> {
    // futex_waitv takes an absolute CLOCK_MONOTONIC deadline.
    let deadline = timeout.map(|t| {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a live timespec on this frame; the call only
        // writes it.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        let ns = now.tv_nsec as u64 + u64::from(t.subsec_nanos());
        libc::timespec {
            tv_sec: now
                .tv_sec
                .saturating_add(t.as_secs().min(i32::MAX as u64) as libc::time_t)
                .saturating_add((ns / 1_000_000_000) as libc::time_t),
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        }
    });
    let ts = deadline
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // `v` holds kernel-ABI `futex_waitv` entries (at most WAITV_MAX:
    // `WaitList::push` and `wait_any` bound them) whose words the callers
    // keep alive for the call; `ts` is null or a timespec on this frame.
    // SAFETY: the kernel only reads these live buffers (above).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            v.as_ptr(),
            v.len() as u32,
            0u32,
            ts,
            libc::CLOCK_MONOTONIC,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL));
    }
    Ok(())
}

/// `wait_any` without futex_waitv: sleeps on the first word in 1 ms slices
/// until any word differs from its value or `timeout` passes, so the
/// others are polled rather than missed (and the caller stays asleep, as
/// with the syscall, until something changed).
#[cfg(not(loom))]
fn poll_any(words: &[WaitWord<'_>], timeout: Option<Duration>) {
    use super::atomic::Ordering::Acquire;
    let Some((first, fv, scope)) = words.first() else {
        return;
    };
    let deadline = timeout.map(|t| std::time::Instant::now() + t);
    let slice = Duration::from_millis(1);
    while words.iter().all(|(w, v, _)| w.load(Acquire) == *v) {
        let left = match deadline {
            Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                Some(l) => l.min(slice),
                None => return,
            },
            None => slice,
        };
        wait_in(*scope, first, *fv, Some(left));
    }
}

#[cfg(loom)]
pub(crate) fn wait_any(words: &[WaitWord<'_>], _timeout: Option<Duration>) {
    use super::atomic::Ordering::SeqCst;
    while words.iter().all(|(w, v, _)| w.load(SeqCst) == *v) {
        loom::thread::yield_now();
    }
}

/// Wakes up to `n` waiters sleeping on `word`.
#[cfg(not(loom))]
pub(crate) fn wake(word: &AtomicU32, n: i32) {
    wake_in(Scope::Shared, word, n)
}

/// [`wake`] for a word of the given [`Scope`].
#[cfg(not(loom))]
pub(crate) fn wake_in(scope: Scope, word: &AtomicU32, n: i32) {
    // SAFETY: `word` is a live, aligned AtomicU32; FUTEX_WAKE does not access
    // memory through the pointer, it only uses the address as the wait key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            scope.op(libc::FUTEX_WAKE),
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
pub(crate) fn wait_in(_scope: Scope, word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    wait(word, expected, timeout)
}

#[cfg(loom)]
pub(crate) fn wake(_word: &AtomicU32, _n: i32) {}

#[cfg(loom)]
pub(crate) fn wake_in(_scope: Scope, _word: &AtomicU32, _n: i32) {}
