//! Info arrays handed to C event handlers, kept for the next event.
//!
//! A handler gets the event's infos as a malloc'd `pmix_info_t` array
//! (544 B per entry). Two entries or more are a "large" request to glibc's
//! malloc, which then consolidates its fast bins on every call: that showed
//! as the biggest single cost of the receiving thread in the throughput
//! profile. A handful of arrays is recycled instead (bounded in count and
//! size, so an odd huge event does not stay resident).

use super::cmem::{alloc_array, destruct_value};
use super::conv::info_to_c;
use super::ctypes::pmix_info_t;
use super::lock;
use crate::types::{Info, Status};
use std::sync::Mutex;

/// Arrays kept: (address, capacity in entries).
static SPARE: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
/// Most arrays kept.
const MAX_KEPT: usize = 8;
/// Largest array kept, in entries; larger ones are freed.
const MAX_CAP: usize = 32;
/// Smallest array allocated, so that events of a few infos share arrays.
const MIN_CAP: usize = 8;

/// A C array of the infos of `parts` in order (zeroed, then filled as
/// [`info_to_c`] does), with its capacity for [`give_back`].
/// `(NULL, 0, 0)` for no infos.
pub fn fill(parts: &[&[Info]]) -> Result<(*mut pmix_info_t, usize, usize), Status> {
    let n = parts.iter().map(|p| p.len()).sum();
    let infos = parts.iter().flat_map(|p| p.iter());
    if n == 0 {
        return Ok((std::ptr::null_mut(), 0, 0));
    }
    let (p, cap) = take(n)?;
    for (k, i) in infos.enumerate() {
        // SAFETY: `p` holds at least n zeroed entries; k < n.
        if let Err(e) = info_to_c(i, unsafe { &mut *p.add(k) }) {
            // SAFETY: entries 0..k were filled, the rest are zeroed (no
            // value to destruct); the array is ours.
            unsafe { give_back(p, n, cap) };
            return Err(e);
        }
    }
    Ok((p, n, cap))
}

fn take(n: usize) -> Result<(*mut pmix_info_t, usize), Status> {
    let reused = {
        let mut s = lock(&SPARE);
        s.iter()
            .position(|&(_, cap)| cap >= n)
            .map(|k| s.swap_remove(k))
    };
    match reused {
        Some((p, cap)) => {
            let p = p as *mut pmix_info_t;
            // SAFETY: a kept array has `cap` ≥ n entries and no owner.
            unsafe { std::ptr::write_bytes(p, 0, n) };
            Ok((p, cap))
        }
        None => {
            let cap = n.max(MIN_CAP);
            Ok((alloc_array::<pmix_info_t>(cap)?, cap))
        }
    }
}

/// Destructs the `n` filled entries of an array from [`fill`] and keeps
/// or frees it.
///
/// # Safety
/// `(p, n, cap)` came from [`fill`] and nothing refers to the array after.
pub unsafe fn give_back(p: *mut pmix_info_t, n: usize, cap: usize) {
    if p.is_null() {
        return;
    }
    for k in 0..n {
        // SAFETY: entry k < n was filled by `fill` (or zeroed).
        unsafe { destruct_value(&mut (*p.add(k)).value) };
    }
    if cap <= MAX_CAP {
        let mut s = lock(&SPARE);
        if s.len() < MAX_KEPT {
            s.push((p as usize, cap));
            return;
        }
    }
    // SAFETY: allocated by calloc in `take`.
    unsafe { libc::free(p.cast()) };
}
