//! Application setup from C: `PMIx_server_setup_application` and
//! `PMIx_server_setup_local_support`.
//!
//! The Standard's two-step preparation of a job: the host calls
//! `setup_application` once for the whole application (where it is
//! scheduled), and passes what comes back to `setup_local_support` on
//! every node that runs some of its processes, after registering the
//! namespace there. A library uses them to prepare what its processes
//! need before they start (fabric endpoints, security keys, environment).
//! fastpmix prepares nothing per application: a namespace's ring and data
//! store are made at `PMIx_server_register_nspace`, the client's
//! environment by `PMIx_server_setup_fork`. So `setup_application`
//! succeeds with no information (an empty array, which the host passes on
//! unchanged), and `setup_local_support` succeeds with whatever it is
//! given. Open MPI 4.1's daemons call both when run with
//! `--mca orte_enable_instant_on_support 1` (docs/hosts.md).
//!
//! Both check their arguments like the other server calls and call back on
//! the library's callback thread after returning, never inside the call.

use super::conv::{infos_from_c, nspace_from_ptr};
use super::ctypes::*;
use super::server::server;
use super::{defer, status_of, CPtr};
use crate::types::Status;
use std::ffi::{c_char, c_void};

/// `pmix_setup_application_cbfunc_t`.
pub type SetupAppCb = unsafe extern "C" fn(
    status: i32,
    info: *mut pmix_info_t,
    ninfo: usize,
    provided_cbdata: *mut c_void,
    release: Option<OpCb>,
    release_cbdata: *mut c_void,
);

/// `PMIx_server_setup_application`: `cbfunc` gets `PMIX_SUCCESS` and no
/// information (NULL, 0) after the call returns; there is nothing for the
/// host to release (the release function passed is NULL). `PMIX_ERR_INIT`
/// before `PMIx_server_init`; a NULL or unterminated namespace, a NULL
/// callback or a malformed info array: `PMIX_ERR_BAD_PARAM` (no callback).
/// The namespace need not be registered yet (the Standard calls this
/// before the job is placed).
///
/// # Safety
/// `nspace` NULL or readable up to its terminator or 256 bytes; `info`
/// NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_setup_application(
    nspace: *const c_char,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbfunc: Option<SetupAppCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let _s = server()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `nspace` NULL or
        // readable up to its terminator or 256 bytes.
        let _ns = unsafe { nspace_from_ptr(nspace) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` NULL or
        // `ninfo` valid infos. Read only to refuse a malformed array.
        let _ = unsafe { infos_from_c(info, ninfo) }?;
        let cb = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let cbdata = CPtr(cbdata);
        let _gate = defer(move || {
            let cbdata = cbdata;
            // SAFETY: the caller's callback with its own cbdata; no info,
            // so nothing to release.
            unsafe {
                cb(
                    Status::SUCCESS.0,
                    std::ptr::null_mut(),
                    0,
                    cbdata.0,
                    None,
                    std::ptr::null_mut(),
                )
            }
        });
        Ok(())
    })
}

/// `PMIx_server_setup_local_support`: accepts what `setup_application`
/// produced (fastpmix needs none of it) and completes with
/// `PMIX_SUCCESS`: through `cbfunc` after the call returns, or as the
/// call's own result when `cbfunc` is NULL. Errors as for
/// [`PMIx_server_setup_application`] (a NULL callback is allowed).
///
/// # Safety
/// As [`PMIx_server_setup_application`].
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_setup_local_support(
    nspace: *const c_char,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let _s = server()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `nspace` NULL or
        // readable up to its terminator or 256 bytes.
        let _ns = unsafe { nspace_from_ptr(nspace) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` NULL or
        // `ninfo` valid infos.
        let _ = unsafe { infos_from_c(info, ninfo) }?;
        let Some(cb) = cbfunc else { return Ok(()) };
        let cbdata = CPtr(cbdata);
        let _gate = defer(move || {
            let cbdata = cbdata;
            // SAFETY: the caller's callback with its own cbdata.
            unsafe { cb(Status::SUCCESS.0, cbdata.0) }
        });
        Ok(())
    })
}
