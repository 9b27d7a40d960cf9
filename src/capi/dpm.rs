//! `PMIx_Spawn`, `PMIx_Connect`, `PMIx_Disconnect` and their `_nb` forms
//! from C (`client::Client::spawn` and the rest do the work).
//!
//! - `PMIx_Spawn` writes the new namespace into the caller's
//!   `pmix_nspace_t` (when not NULL); `PMIx_Spawn_nb` hands it to the
//!   callback in a buffer valid for the call (NULL when the host named
//!   none).
//! - Connect and disconnect return (or call back) once every participant
//!   called and the host completed the collective.
//!
//! Bad arguments are `PMIX_ERR_BAD_PARAM` from the call, no callback: no
//! applications (NULL or `napps` 0), an application with a NULL or empty
//! `cmd` or a negative `maxprocs`, no processes (NULL or `nprocs` 0), a
//! `PMIx_Spawn_nb` without a callback.

use super::conv::{infos_from_c, procs_from_c, slice, str_from_c, strings_from_c};
use super::ctypes::*;
use super::pubsub::op_callback;
use super::{after_return, client, status_of, CPtr};
use crate::client::Spawned;
use crate::types::{App, Nspace, Status};
use std::ffi::{c_char, c_void};

/// The caller's applications, checked.
///
/// # Safety
/// `apps` NULL or `napps` valid `pmix_app_t`s (strings terminated, arrays
/// NULL-terminated, `info` NULL or `ninfo` infos).
unsafe fn apps_from_c(apps: *const pmix_app_t, napps: usize) -> Result<Vec<App>, Status> {
    if apps.is_null() || napps == 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: `apps` holds `napps` elements (the caller's obligation).
    let a = unsafe { slice(apps, napps) }?;
    a.iter()
        .map(|a| {
            // SAFETY: each field as the caller guarantees (this function's
            // `# Safety`): terminated strings, NULL-terminated arrays,
            // `ninfo` infos.
            unsafe {
                let cwd = if a.cwd.is_null() {
                    String::new()
                } else {
                    str_from_c(a.cwd)?.to_owned()
                };
                let app = App {
                    cmd: str_from_c(a.cmd)?.to_owned(),
                    argv: strings_from_c(a.argv)?,
                    env: strings_from_c(a.env)?,
                    cwd,
                    maxprocs: a.maxprocs,
                    info: infos_from_c(a.info, a.ninfo)?,
                };
                if app.cmd.is_empty() || app.maxprocs < 0 {
                    return Err(Status::ERR_BAD_PARAM);
                }
                Ok(app)
            }
        })
        .collect()
}

/// A namespace as a `pmix_nspace_t`.
fn nspace_to_c(n: &Nspace) -> [c_char; NSLEN] {
    let mut out = [0 as c_char; NSLEN];
    for (d, s) in out.iter_mut().zip(n.as_str().bytes().take(NSLEN - 1)) {
        *d = s as c_char;
    }
    out
}

/// `PMIx_Spawn`.
///
/// # Safety
/// `job_info` NULL or `ninfo` valid infos; `apps` as `apps_from_c`;
/// `nspace` NULL or a writable `pmix_nspace_t`.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Spawn(
    job_info: *const pmix_info_t,
    ninfo: usize,
    apps: *const pmix_app_t,
    napps: usize,
    nspace: *mut c_char,
) -> i32 {
    let mut out = 0;
    let st = status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`).
        let (i, a) = unsafe { (infos_from_c(job_info, ninfo)?, apps_from_c(apps, napps)?) };
        let s = c.spawn(&i, &a);
        if let (Some(n), false) = (&s.nspace, nspace.is_null()) {
            let name = nspace_to_c(n);
            // SAFETY: `nspace` is a writable pmix_nspace_t of NSLEN bytes
            // (the caller's obligation).
            unsafe { std::ptr::copy_nonoverlapping(name.as_ptr(), nspace, NSLEN) };
        }
        out = s.status.0;
        Ok(())
    });
    if st == 0 {
        out
    } else {
        st
    }
}

/// `PMIx_Spawn_nb`.
///
/// # Safety
/// As [`PMIx_Spawn`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Spawn_nb(
    job_info: *const pmix_info_t,
    ninfo: usize,
    apps: *const pmix_app_t,
    napps: usize,
    cbfunc: Option<SpawnCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        let cb = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's obligation (this function's `# Safety`).
        let (i, a) = unsafe { (infos_from_c(job_info, ninfo)?, apps_from_c(apps, napps)?) };
        let cbdata = CPtr(cbdata);
        let (_gate, done) = after_return(move |s: Spawned| {
            let cbdata = cbdata;
            let mut name = s.nspace.as_ref().map(nspace_to_c);
            let p = name
                .as_mut()
                .map_or(std::ptr::null_mut(), |n| n.as_mut_ptr());
            // SAFETY: the caller's callback with its own cbdata; `p` is
            // NULL or our buffer, valid for the call.
            unsafe { cb(s.status.0, p, cbdata.0) }
        });
        c.spawn_nb(&i, &a, done).into_result()
    })
}

/// `PMIx_Connect` or `PMIx_Disconnect`, blocking (the export runs it in
/// `status_of`).
///
/// # Safety
/// `procs` NULL or `nprocs` procs; `info` NULL or `ninfo` infos.
unsafe fn collective(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    disconnect: bool,
) -> Result<(), Status> {
    let c = client()?;
    if procs.is_null() || nprocs == 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller's obligation (this function's `# Safety`).
    let (p, i) = unsafe { (procs_from_c(procs, nprocs)?, infos_from_c(info, ninfo)?) };
    let o = if disconnect {
        c.disconnect(&p, &i)
    } else {
        c.connect(&p, &i)
    };
    o.status.into_result()
}

/// `PMIx_Connect_nb` or `PMIx_Disconnect_nb` (as [`collective`]).
///
/// # Safety
/// As [`collective`]; `cbdata` handed back untouched.
unsafe fn collective_nb(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
    disconnect: bool,
) -> Result<(), Status> {
    let c = client()?;
    if procs.is_null() || nprocs == 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller's obligation (this function's `# Safety`).
    let (p, i) = unsafe { (procs_from_c(procs, nprocs)?, infos_from_c(info, ninfo)?) };
    let (_gate, cb) = after_return(op_callback(cbfunc, cbdata));
    let s = if disconnect {
        c.disconnect_nb(&p, &i, cb)
    } else {
        c.connect_nb(&p, &i, cb)
    };
    s.into_result()
}

/// `PMIx_Connect`.
///
/// # Safety
/// `procs` NULL or `nprocs` procs; `info` NULL or `ninfo` infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Connect(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
) -> i32 {
    // SAFETY: this function's `# Safety`, passed on.
    status_of(|| unsafe { collective(procs, nprocs, info, ninfo, false) })
}

/// `PMIx_Connect_nb`.
///
/// # Safety
/// As [`PMIx_Connect`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Connect_nb(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    // SAFETY: this function's `# Safety`, passed on.
    status_of(|| unsafe { collective_nb(procs, nprocs, info, ninfo, cbfunc, cbdata, false) })
}

/// `PMIx_Disconnect`.
///
/// # Safety
/// As [`PMIx_Connect`].
#[no_mangle]
pub unsafe extern "C" fn PMIx_Disconnect(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
) -> i32 {
    // SAFETY: this function's `# Safety`, passed on.
    status_of(|| unsafe { collective(procs, nprocs, info, ninfo, true) })
}

/// `PMIx_Disconnect_nb`.
///
/// # Safety
/// As [`PMIx_Connect`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Disconnect_nb(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    // SAFETY: this function's `# Safety`, passed on.
    status_of(|| unsafe { collective_nb(procs, nprocs, info, ninfo, cbfunc, cbdata, true) })
}
