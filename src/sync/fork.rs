//! Whether this process is a child forked since some moment, without a
//! system call: `getpid()` is one in every glibc since 2.25 (no cached
//! pid), and the client asks on every call (~100 ns each in a VM, 15 % of
//! a `PMIx_Get` answered from shared memory).
//!
//! A `pthread_atfork` child handler counts forks. `fork()`, and everything
//! built on it, runs the handler; a child made by a raw `clone` system call
//! does not, and is taken for the parent: such a child may only call
//! async-signal-safe functions until it execs (POSIX), which PMIx's are not.

use super::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Once;

/// Forks of this process's ancestry since the library was loaded.
static FORKS: AtomicU32 = AtomicU32::new(0);
/// Whether the child handler is installed (else `getpid` decides).
static HOOKED: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

extern "C" fn in_child() {
    // Relaxed: the child has one thread at this point, and the count is
    // read only by the child's own threads, which it starts later.
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// A moment to compare against: [`ForkWatch::forked`] says whether this
/// process is a child forked since.
#[derive(Debug, Clone, Copy)]
pub struct ForkWatch {
    forks: u32,
    pid: u32,
}

impl ForkWatch {
    /// Now (installs the child handler on the first call).
    pub fn now() -> ForkWatch {
        HOOK.call_once(|| {
            // SAFETY: `in_child` is a valid `extern "C" fn()` for the whole
            // life of the library: glibc ties a handler registered by a
            // shared object to it (its `__dso_handle`) and drops it when
            // the object is unloaded. It only does an atomic add, which is
            // async-signal-safe, as a child handler must be.
            let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
            // Only ENOMEM can fail it: then every check asks `getpid`.
            // Release: pairs with the Acquire in `forked`, though `Once`
            // orders it already for the threads that called `now`.
            HOOKED.store(rc == 0, Ordering::Release);
        });
        ForkWatch {
            forks: FORKS.load(Ordering::Relaxed),
            pid: std::process::id(),
        }
    }

    /// Whether this process is a child forked since [`ForkWatch::now`].
    pub fn forked(&self) -> bool {
        if HOOKED.load(Ordering::Acquire) {
            FORKS.load(Ordering::Relaxed) != self.forks
        } else {
            std::process::id() != self.pid
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn a_forked_child_knows_it_and_its_parent_does_not() {
        let w = ForkWatch::now();
        assert!(!w.forked());
        // SAFETY: the child only reads an atomic and exits with `_exit`,
        // both async-signal-safe; it never returns into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = if w.forked() && !ForkWatch::now().forked() {
                0
            } else {
                1
            };
            // SAFETY: `_exit` ends the child without running the parent's
            // atexit handlers or unwinding into the harness.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let got = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(got, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child: {status:#x}"
        );
        assert!(!w.forked(), "the parent is not a child");
    }
}
