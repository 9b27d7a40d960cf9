//! Data exchange from C: `PMIx_Put`, `PMIx_Commit`, `PMIx_Store_internal`,
//! `PMIx_Get` and `PMIx_Get_nb`. The rules (what a Get finds where, what
//! waits, what each directive does) are the client's: `client/data.rs`.
//! Here: the C arguments, checked, and the value handed back.

use super::conv::{infos_from_c, key_text, proc_from_ptr, value_from_c, value_to_c};
use super::ctypes::*;
use super::macros::{PMIx_Value_create, PMIx_Value_free};
use super::{after_return, client, role, status_of, CPtr, Role};
use crate::client::Client;
use crate::types::{Nspace, Proc, Rank, Status, Value};
use std::ffi::{c_char, c_void};

/// `PMIx_Put`: `val` (copied) under `key` for the processes `scope` names:
/// `PMIX_LOCAL` (this node's), `PMIX_REMOTE` (other nodes'), `PMIX_GLOBAL`
/// (all; also `PMIX_SCOPE_UNDEF`), `PMIX_INTERNAL` (this process only).
/// Visible to this process at once, to the others after `PMIx_Commit`.
/// A value of a type fastpmix does not carry is `PMIX_ERR_NOT_SUPPORTED`.
///
/// # Safety
/// `key` NULL or readable up to its terminator or 512 bytes; `val` NULL or
/// a valid value.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Put(scope: u8, key: *const c_char, val: *mut pmix_value_t) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `key` NULL or readable
        // up to its terminator or 512 bytes.
        let key = unsafe { key_text(key) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `val` NULL or valid.
        let v = unsafe { val.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: `v` is a valid value (the caller's obligation).
        let value = unsafe { value_from_c(v) }?;
        c.put(scope, key, value)
    })
}

/// `PMIx_Commit`: sends what was put since the last commit to the server,
/// which makes it visible to this node's processes (and to other nodes'
/// through a fence that collects data, or the host's direct modex). Does
/// not wait: a fence or Get issued after it finds the data there.
#[no_mangle]
pub extern "C" fn PMIx_Commit() -> i32 {
    status_of(|| client()?.commit())
}

/// `PMIx_Store_internal`: `val` under `key` for `proc`, in this process
/// only; its `PMIx_Get` of that process and key finds it first. In a
/// server process (a host daemon after `PMIx_server_init`) it goes to the
/// server's own store (`server/own_data.rs`), which the daemon's own
/// `PMIx_Get` reads.
///
/// # Safety
/// `proc_` NULL or valid; `key` and `val` as for [`PMIx_Put`].
#[no_mangle]
pub unsafe extern "C" fn PMIx_Store_internal(
    proc_: *const pmix_proc_t,
    key: *const c_char,
    val: *mut pmix_value_t,
) -> i32 {
    status_of(|| {
        let who = role()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` NULL or valid.
        let p = unsafe { proc_from_ptr(proc_) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): as for `PMIx_Put`.
        let key = unsafe { key_text(key) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `val` NULL or valid.
        let v = unsafe { val.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: `v` is a valid value (the caller's obligation).
        let value = unsafe { value_from_c(v) }?;
        match who {
            Role::Client(c) => c.store_internal(&p, key, value),
            Role::Server(s) => s.store_internal(&p, key, value),
        }
    })
}

/// The process a `PMIx_Get` names. NULL stands "in place of the caller's
/// ID" (the Standard); as in OpenPMIx it is this namespace with
/// `PMIX_RANK_UNDEF`, so the key is looked for among every process of
/// the namespace (legacy PMI's globally unique keys), this process's own
/// puts first. An empty namespace is this process's (OpenPMIx too).
///
/// # Safety
/// `p` NULL or valid.
unsafe fn target(c: &Client, p: *const pmix_proc_t) -> Result<Proc, Status> {
    let me = c.me();
    if p.is_null() {
        return Ok(Proc {
            nspace: me.nspace,
            rank: Rank::UNDEF,
        });
    }
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` NULL or valid.
    let mut p = unsafe { proc_from_ptr(p) }?;
    if p.nspace == Nspace::EMPTY {
        p.nspace = me.nspace;
    }
    Ok(p)
}

/// `v` as a malloc'd `pmix_value_t` (`PMIX_VALUE_RELEASE` frees it).
fn value_out(v: &Value) -> Result<*mut pmix_value_t, Status> {
    let out = PMIx_Value_create(1);
    // SAFETY: `out` is NULL or one zeroed value of ours.
    let o = unsafe { out.as_mut() }.ok_or(Status::ERR_NOMEM)?;
    if let Err(e) = value_to_c(v, o) {
        // SAFETY: `out` owns nothing yet.
        unsafe { PMIx_Value_free(out, 1) };
        return Err(e);
    }
    Ok(out)
}

/// `PMIx_Get`: the value of `key` for `proc` (NULL: see [`target`]), with
/// the caller's directives (`PMIX_OPTIONAL`, `PMIX_IMMEDIATE`,
/// `PMIX_TIMEOUT`, `PMIX_GET_REFRESH_CACHE`, `PMIX_DATA_SCOPE`). Job
/// information and a local peer's committed data are read in this thread;
/// a peer that has not committed yet is waited for (bounded by
/// `PMIX_TIMEOUT`), another node's process asked for through the host.
/// `*val` is released with `PMIX_VALUE_RELEASE`; NULL on any error.
/// In a server process it reads what the host stored for itself with
/// `PMIx_Store_internal` (a NULL key: every key of `proc`, as a
/// `PMIX_DATA_ARRAY` of infos); see `server/own_data.rs`.
///
/// # Safety
/// `proc_` NULL or valid; `key` readable up to its terminator or 512
/// bytes; `info` NULL or `ninfo` valid infos; `val` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Get(
    proc_: *const pmix_proc_t,
    key: *const c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    val: *mut *mut pmix_value_t,
) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `val` NULL or writable.
        let val = unsafe { val.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        *val = std::ptr::null_mut();
        let c = match role()? {
            Role::Client(c) => c,
            Role::Server(s) => {
                // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` NULL or
                // valid.
                let p = unsafe { proc_from_ptr(proc_) }?;
                // A NULL key asks for every key of `proc` (the host's own data only).
                let key = if key.is_null() {
                    None
                } else {
                    // SAFETY: as below: `key` readable up to its terminator or 512 bytes.
                    Some(unsafe { key_text(key) }?)
                };
                *val = value_out(&s.get_own(&p, key)?)?;
                return Ok(());
            }
        };
        // SAFETY: the caller's obligation (this function's `# Safety`): `key` readable up to its
        // terminator or 512 bytes.
        let key = unsafe { key_text(key) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` NULL or `ninfo`
        // valid infos.
        let directives = unsafe { infos_from_c(info, ninfo) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` NULL or valid.
        let p = unsafe { target(&c, proc_) }?;
        *val = value_out(&c.get_with(&p, key, &directives)?)?;
        Ok(())
    })
}

/// `PMIx_Get_nb`: as `PMIx_Get`; `cbfunc` gets the outcome on the
/// library's callback thread after this call returned, and the value
/// (NULL on error) is released by the library when `cbfunc` returns. A
/// status other than `PMIX_SUCCESS` returned here is the outcome:
/// `cbfunc` then never runs.
///
/// # Safety
/// As [`PMIx_Get`]; `cbdata` is handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Get_nb(
    proc_: *const pmix_proc_t,
    key: *const c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<ValueCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let cb = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): as for `PMIx_Get`.
        let key = unsafe { key_text(key) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): as for `PMIx_Get`.
        let directives = unsafe { infos_from_c(info, ninfo) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): as for `PMIx_Get`.
        let p = unsafe { target(&c, proc_) }?;
        let cbdata = CPtr(cbdata);
        let (_gate, done) = after_return(move |r: Result<Value, Status>| {
            let cbdata = cbdata;
            let (st, v) = match r.and_then(|v| value_out(&v)) {
                Ok(v) => (Status::SUCCESS, v),
                Err(s) => (s, std::ptr::null_mut()),
            };
            // SAFETY: the caller's callback with its own cbdata; the value
            // is ours, released after the callback returned.
            unsafe {
                cb(st.0, v, cbdata.0);
                PMIx_Value_free(v, 1);
            }
        });
        c.get_nb(&p, key, &directives, done).into_result()
    })
}
