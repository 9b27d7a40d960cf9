//! Atomic cells that live in shared memory (or on the heap, or in a loom
//! model): the only way the ring touches a shared word. Every method names
//! its ordering, so the protocol code reads as the pairing it implements.

use super::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use super::futex::{self, Scope};
use std::time::Duration;

/// A shared 64-bit word.
#[repr(transparent)]
#[derive(Default)]
pub struct Cell64(AtomicU64);

/// A shared 32-bit word; it can also be slept on (futex).
#[repr(transparent)]
#[derive(Default)]
pub struct Cell32(AtomicU32);

/// A full fence. Each use names the fence it pairs with.
pub fn fence_seqcst() {
    fence(Ordering::SeqCst);
}

/// A release fence: the stores after it are not seen before the stores
/// and loads ahead of it (a seqlock writer's, after it marks a slot).
pub fn fence_release() {
    fence(Ordering::Release);
}

/// An acquire fence: the loads before it happen before what follows (a
/// seqlock reader's, between its copy and its re-check).
pub fn fence_acquire() {
    fence(Ordering::Acquire);
}

macro_rules! cell_ops {
    ($cell:ident, $int:ty, $atomic:ty) => {
        impl $cell {
            /// A cell holding `v` (heap or model memory).
            pub fn new(v: $int) -> Self {
                Self(<$atomic>::new(v))
            }

            /// Views a field of mapped memory as a cell.
            ///
            /// # Safety
            /// `p` is non-null, aligned for the type, points into a mapping
            /// that outlives `'a`, and every process and thread accesses that
            /// word only atomically while the mapping exists.
            #[cfg(not(loom))]
            pub unsafe fn at<'a>(p: *mut $int) -> &'a $cell {
                // SAFETY: the caller guarantees alignment, liveness for 'a and
                // atomic-only access; `$cell` is `repr(transparent)` over the
                // atomic, which has the same layout as `$int`.
                unsafe { &*(<$atomic>::from_ptr(p) as *const $atomic as *const $cell) }
            }

            /// Load, Relaxed: no ordering (own writes, diagnostics).
            pub fn load_relaxed(&self) -> $int {
                self.0.load(Ordering::Relaxed)
            }
            /// Load, Acquire: pairs with a `store_release` of the writer.
            pub fn load_acquire(&self) -> $int {
                self.0.load(Ordering::Acquire)
            }
            /// Load, SeqCst: one side of a Dekker handshake.
            pub fn load_seqcst(&self) -> $int {
                self.0.load(Ordering::SeqCst)
            }
            /// Store, Relaxed.
            pub fn store_relaxed(&self, v: $int) {
                self.0.store(v, Ordering::Relaxed)
            }
            /// Store, Release: publishes everything written before it.
            pub fn store_release(&self, v: $int) {
                self.0.store(v, Ordering::Release)
            }
            /// Store, SeqCst: one side of a Dekker handshake.
            pub fn store_seqcst(&self, v: $int) {
                self.0.store(v, Ordering::SeqCst)
            }
            /// Swap, SeqCst.
            pub fn swap_seqcst(&self, v: $int) -> $int {
                self.0.swap(v, Ordering::SeqCst)
            }
            /// Add, SeqCst (returns the previous value).
            pub fn fetch_add_seqcst(&self, v: $int) -> $int {
                self.0.fetch_add(v, Ordering::SeqCst)
            }
            /// Or, SeqCst (returns the previous value).
            pub fn fetch_or_seqcst(&self, v: $int) -> $int {
                self.0.fetch_or(v, Ordering::SeqCst)
            }
            /// And, SeqCst (returns the previous value).
            pub fn fetch_and_seqcst(&self, v: $int) -> $int {
                self.0.fetch_and(v, Ordering::SeqCst)
            }
            /// Subtract, Release (returns the previous value).
            pub fn fetch_sub_release(&self, v: $int) -> $int {
                self.0.fetch_sub(v, Ordering::Release)
            }
            /// Add, Relaxed (counters).
            pub fn fetch_add_relaxed(&self, v: $int) -> $int {
                self.0.fetch_add(v, Ordering::Relaxed)
            }
            /// Compare-exchange, AcqRel on success.
            pub fn cas_acqrel(&self, old: $int, new: $int) -> Result<$int, $int> {
                self.0
                    .compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire)
            }
        }
    };
}

cell_ops!(Cell64, u64, AtomicU64);
cell_ops!(Cell32, u32, AtomicU32);

impl Cell32 {
    /// Sleeps while the word equals `expected` (shared futex), at most
    /// `timeout`; may return spuriously: callers re-check.
    pub fn wait_while(&self, expected: u32, timeout: Option<Duration>) {
        futex::wait(&self.0, expected, timeout);
    }

    /// Wakes every sleeper on this word (one syscall).
    pub fn wake_all(&self) {
        futex::wake(&self.0, i32::MAX);
    }

    /// The atomic itself, for the futex calls of this module's siblings.
    pub(crate) fn atomic(&self) -> &AtomicU32 {
        &self.0
    }

    /// Sleeps while `self` holds `v` and `other` holds `ov` (one
    /// `futex_waitv`), at most `timeout`; may return spuriously.
    pub fn wait_while_both(&self, v: u32, other: &Cell32, ov: u32, timeout: Option<Duration>) {
        futex::wait_any(
            &[(&self.0, v, Scope::Shared), (&other.0, ov, Scope::Shared)],
            timeout,
        );
    }
}

/// Hints the CPU to start fetching the cache lines of `[p, p + len)` for
/// reading. No effect on correctness (a prefetch never faults, even on an
/// unmapped address); it overlaps cross-core line transfers that dependent
/// loads would otherwise take one after another.
#[inline]
pub fn prefetch_read(p: *const u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut off = 0;
        while off < len {
            // `wrapping_add`: no pointer arithmetic obligations; a prefetch
            // of any address is allowed.
            // SAFETY: SSE is part of the x86_64 baseline; a prefetch has no
            // memory-safety obligation (it never faults).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off).cast()) };
            off += 64;
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    let _ = (p, len);
}

/// As [`prefetch_read`] for one line the caller will write (or RMW) next:
/// the line is fetched in exclusive state.
#[inline]
pub fn prefetch_write(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        // SAFETY: as in `prefetch_read`.
        unsafe { _mm_prefetch::<_MM_HINT_ET0>(p.cast()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    let _ = p;
}
