//! `PMIx_Publish`, `PMIx_Lookup`, `PMIx_Unpublish` and their `_nb` forms
//! from C (`client::Client::publish` and the rest do the work).
//!
//! - `PMIx_Lookup` takes its keys from the caller's `pmix_pdata_t` array
//!   and fills, for each item found, every entry of that key: its `proc`
//!   (the publisher) and its `value` (malloc'd, released with
//!   `PMIX_PDATA_DESTRUCT`/`FREE`). Entries not found are left as they were.
//! - `PMIx_Lookup_nb` hands its callback a `pmix_pdata_t` array of the
//!   items found that the library owns and releases after the callback
//!   returns (the Standard's rule; the callback copies what it keeps).
//! - Non-blocking callbacks run on the library's callback thread, after the
//!   call returned (`after_return`).
//!
//! Bad arguments are `PMIX_ERR_BAD_PARAM` from the call, no callback:
//! nothing to publish (NULL info or `ninfo` 0), no pdata or no keys for a
//! lookup, a key that is empty or longer than `PMIX_MAX_KEYLEN`, and a
//! lookup's or spawn's missing callback (its answer would have nowhere
//! to go).

use super::cmem::{alloc_array, destruct_value, free};
use super::conv::{infos_from_c, key_text, proc_to_c, strings_from_c, value_to_c};
use super::ctypes::*;
use super::{after_return, client, status_of, CPtr};
use crate::client::{Found, Outcome};
use crate::types::{PData, Status};
use std::ffi::{c_char, c_void};

/// A `pmix_op_cbfunc_t` as the Rust completion (no callback: nothing runs).
pub(super) fn op_callback(
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> impl FnOnce(Outcome) + Send + 'static {
    let cbdata = CPtr(cbdata);
    move |o: Outcome| {
        let cbdata = cbdata;
        if let Some(cb) = cbfunc {
            // SAFETY: the caller's callback with its own cbdata.
            unsafe { cb(o.status.0, cbdata.0) }
        }
    }
}

/// Writes one found item into a `pmix_pdata_t` (its value malloc'd).
fn pdata_to_c(p: &PData, out: &mut pmix_pdata_t) -> Result<(), Status> {
    out.proc_ = proc_to_c(&p.proc);
    let k = p.key.as_str().as_bytes();
    out.key = [0; KEYLEN];
    for (d, s) in out.key.iter_mut().zip(k.iter().take(KEYLEN - 1)) {
        *d = *s as c_char;
    }
    value_to_c(&p.value, &mut out.value)
}

/// `PMIx_Publish`.
///
/// # Safety
/// `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Publish(info: *const pmix_info_t, ninfo: usize) -> i32 {
    status_of(|| {
        let c = client()?;
        if info.is_null() || ninfo == 0 {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's obligation (this function's `# Safety`):
        // `info` holds `ninfo` valid infos.
        let i = unsafe { infos_from_c(info, ninfo) }?;
        c.publish(&i).status.into_result()
    })
}

/// `PMIx_Publish_nb`.
///
/// # Safety
/// As [`PMIx_Publish`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Publish_nb(
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        if info.is_null() || ninfo == 0 {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's obligation (this function's `# Safety`):
        // `info` holds `ninfo` valid infos.
        let i = unsafe { infos_from_c(info, ninfo) }?;
        let (_gate, cb) = after_return(op_callback(cbfunc, cbdata));
        c.publish_nb(&i, cb).into_result()
    })
}

/// `PMIx_Lookup`: fills the entries of `data` whose key was found.
///
/// # Safety
/// `data` NULL or `ndata` writable pdata with terminated keys; `info` NULL
/// or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Lookup(
    data: *mut pmix_pdata_t,
    ndata: usize,
    info: *const pmix_info_t,
    ninfo: usize,
) -> i32 {
    let mut out = 0;
    let st = status_of(|| {
        let c = client()?;
        if data.is_null() || ndata == 0 {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: `data` holds `ndata` writable pdata (the caller's
        // obligation), not aliased during this call.
        let d = unsafe { std::slice::from_raw_parts_mut(data, ndata) };
        let keys = d
            .iter()
            // SAFETY: each key is a 512-byte array the caller terminated.
            .map(|p| unsafe { key_text(p.key.as_ptr()) }.map(str::to_owned))
            .collect::<Result<Vec<_>, _>>()?;
        // SAFETY: the caller's obligation (this function's `# Safety`):
        // `info` NULL or `ninfo` valid infos.
        let i = unsafe { infos_from_c(info, ninfo) }?;
        let found = c.lookup(&keys, &i);
        for item in &found.data {
            for (slot, k) in d.iter_mut().zip(&keys) {
                if k == item.key.as_str() {
                    pdata_to_c(item, slot)?;
                }
            }
        }
        out = found.status.0;
        Ok(())
    });
    if st == 0 {
        out
    } else {
        st
    }
}

/// Hands the found items to a `pmix_lookup_cbfunc_t` in an array the
/// library releases after the callback returned.
fn lookup_callback(cb: LookupCb, cbdata: *mut c_void) -> impl FnOnce(Found) + Send + 'static {
    let cbdata = CPtr(cbdata);
    move |f: Found| {
        let cbdata = cbdata;
        let n = f.data.len();
        let built = alloc_array::<pmix_pdata_t>(n).and_then(|a| {
            for (k, item) in f.data.iter().enumerate() {
                // SAFETY: `a` holds `n` zeroed pdata; `k` < n. A failed
                // item leaves its slot zeroed (an undefined value), which
                // the release below handles.
                if let Err(e) = pdata_to_c(item, unsafe { &mut *a.add(k) }) {
                    release_pdata(a, n);
                    return Err(e);
                }
            }
            Ok(a)
        });
        let (st, a, n) = match built {
            Ok(a) => (f.status, a, n),
            Err(e) => (e, std::ptr::null_mut(), 0),
        };
        // SAFETY: the caller's callback with its own cbdata; the array is
        // ours and valid for the call.
        unsafe { cb(st.0, a, n, cbdata.0) };
        release_pdata(a, n);
    }
}

/// Releases an array built by [`lookup_callback`].
fn release_pdata(a: *mut pmix_pdata_t, n: usize) {
    if a.is_null() {
        return;
    }
    for k in 0..n {
        // SAFETY: `a` holds `n` pdata whose values we filled (or left
        // zeroed: PMIX_UNDEF, nothing to release).
        unsafe { destruct_value(&mut (*a.add(k)).value) };
    }
    free(a as *mut c_void);
}

/// `PMIx_Lookup_nb`: `keys` a NULL-terminated array.
///
/// # Safety
/// `keys` NULL or a NULL-terminated array of terminated strings; `info`
/// NULL or `ninfo` valid infos; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Lookup_nb(
    keys: *mut *mut c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<LookupCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        let cb = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        if keys.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's obligation (this function's `# Safety`).
        let (k, i) = unsafe { (strings_from_c(keys)?, infos_from_c(info, ninfo)?) };
        let (_gate, done) = after_return(lookup_callback(cb, cbdata));
        c.lookup_nb(&k, &i, done).into_result()
    })
}

/// `PMIx_Unpublish`: `keys` NULL = everything this process published.
///
/// # Safety
/// `keys` NULL or a NULL-terminated array of terminated strings; `info`
/// NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Unpublish(
    keys: *mut *mut c_char,
    info: *const pmix_info_t,
    ninfo: usize,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`).
        let (k, i) = unsafe { (strings_from_c(keys)?, infos_from_c(info, ninfo)?) };
        c.unpublish(&k, &i).status.into_result()
    })
}

/// `PMIx_Unpublish_nb`.
///
/// # Safety
/// As [`PMIx_Unpublish`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Unpublish_nb(
    keys: *mut *mut c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`).
        let (k, i) = unsafe { (strings_from_c(keys)?, infos_from_c(info, ninfo)?) };
        let (_gate, cb) = after_return(op_callback(cbfunc, cbdata));
        c.unpublish_nb(&k, &i, cb).into_result()
    })
}
