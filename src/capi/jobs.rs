//! Job management from C: allocation, job control, monitoring, heartbeat,
//! logging. Blocking forms hand their results to the caller (released with
//! `PMIX_INFO_FREE`); non-blocking forms pass them to the `pmix_info_cbfunc_t`
//! with a release function the callback must call.

use super::cmem::free_infos;
use super::conv::{info_from_c, infos_from_c, infos_to_c, procs_from_c};
use super::ctypes::*;
use super::{after_return, client, status_of, CPtr};
use crate::client::Outcome;
use crate::types::{AllocDirective, Info, Status, Value};
use std::ffi::c_void;

/// Stores a blocking call's results where the caller asked (both pointers
/// NULL: the caller does not want them).
///
/// # Safety
/// `results`/`nresults` NULL or writable.
unsafe fn hand_out(o: Outcome, results: *mut *mut pmix_info_t, nresults: *mut usize) -> i32 {
    // SAFETY: the caller's obligation (this function's `# Safety`): `results`/`nresults` NULL or
    // writable.
    let (r, n) = unsafe { (results.as_mut(), nresults.as_mut()) };
    if let (Some(r), Some(n)) = (r, n) {
        match infos_to_c(&o.results) {
            Ok((p, k)) => {
                *r = p;
                *n = k;
            }
            Err(e) => return e.0,
        }
    }
    o.status.0
}

/// The release function handed with a non-blocking call's results.
unsafe extern "C" fn release_results(cbdata: *mut c_void) {
    super::guard((), || {
        if !cbdata.is_null() {
            // SAFETY: `cbdata` is the box made in `info_callback`, released once.
            let b = unsafe { Box::from_raw(cbdata as *mut (CPtr, usize)) };
            // SAFETY: the array we built for this callback.
            unsafe { free_infos(b.0 .0 as *mut pmix_info_t, b.1) };
        }
    })
}

/// Turns a C `pmix_info_cbfunc_t` into the Rust completion (no callback:
/// the outcome is dropped).
fn info_callback(cb: Option<InfoCb>, cbdata: *mut c_void) -> impl FnOnce(Outcome) + Send + 'static {
    let cbdata = CPtr(cbdata);
    move |o: Outcome| {
        let cbdata = cbdata;
        let Some(cb) = cb else { return };
        let (st, (p, n)) = match infos_to_c(&o.results) {
            Ok(a) => (o.status, a),
            Err(e) => (e, (std::ptr::null_mut(), 0)),
        };
        let rel = Box::into_raw(Box::new((CPtr(p as *mut c_void), n))) as *mut c_void;
        // SAFETY: the caller's callback with its own cbdata; our array and
        // its release function.
        unsafe { cb(st.0, p, n, cbdata.0, Some(release_results), rel) }
    }
}

/// `PMIx_Allocation_request`.
///
/// # Safety
/// `info` NULL or `ninfo` valid infos; `results`/`nresults` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Allocation_request(
    directive: u8,
    info: *mut pmix_info_t,
    ninfo: usize,
    results: *mut *mut pmix_info_t,
    nresults: *mut usize,
) -> i32 {
    let mut out = 0;
    let st = status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` NULL or `ninfo`
        // valid infos; `results`/`nresults` NULL or writable.
        let i = unsafe { infos_from_c(info, ninfo) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` NULL or `ninfo`
        // valid infos; `results`/`nresults` NULL or writable.
        out = unsafe { hand_out(c.allocate(AllocDirective(directive), &i), results, nresults) };
        Ok(())
    });
    if st == 0 {
        out
    } else {
        st
    }
}

/// `PMIx_Allocation_request_nb`.
///
/// # Safety
/// `info` NULL or `ninfo` valid infos; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Allocation_request_nb(
    directive: u8,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` NULL or `ninfo`
        // valid infos; `cbdata` handed back untouched.
        let i = unsafe { infos_from_c(info, ninfo) }?;
        let (_gate, cb) = after_return(info_callback(cbfunc, cbdata));
        c.allocate_nb(AllocDirective(directive), &i, cb)
            .into_result()
    })
}

/// `PMIx_Job_control`.
///
/// # Safety
/// `targets` NULL or `ntargets` procs; `directives` NULL or `ndirs` infos;
/// `results`/`nresults` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Job_control(
    targets: *const pmix_proc_t,
    ntargets: usize,
    directives: *const pmix_info_t,
    ndirs: usize,
    results: *mut *mut pmix_info_t,
    nresults: *mut usize,
) -> i32 {
    let mut out = 0;
    let st = status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `targets` NULL or
        // `ntargets` procs; `directives` NULL or `ndirs` infos; `results`/`nresults` NULL or
        // writable.
        let (t, d) = unsafe {
            (
                procs_from_c(targets, ntargets)?,
                infos_from_c(directives, ndirs)?,
            )
        };
        // SAFETY: the caller's obligation (this function's `# Safety`): `targets` NULL or
        // `ntargets` procs; `directives` NULL or `ndirs` infos; `results`/`nresults` NULL or
        // writable.
        out = unsafe { hand_out(c.job_control(&t, &d), results, nresults) };
        Ok(())
    });
    if st == 0 {
        out
    } else {
        st
    }
}

/// `PMIx_Job_control_nb`.
///
/// # Safety
/// As [`PMIx_Job_control`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Job_control_nb(
    targets: *const pmix_proc_t,
    ntargets: usize,
    directives: *const pmix_info_t,
    ndirs: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): As [`PMIx_Job_control`];
        // `cbdata` handed back untouched.
        let (t, d) = unsafe {
            (
                procs_from_c(targets, ntargets)?,
                infos_from_c(directives, ndirs)?,
            )
        };
        let (_gate, cb) = after_return(info_callback(cbfunc, cbdata));
        c.job_control_nb(&t, &d, cb).into_result()
    })
}

/// The monitor argument. Its value may be NULL whatever the monitor's
/// documented type (`PMIX_MONITOR_PROC_RESOURCE_USAGE` NULL: every field):
/// C says so with a NULL data array or a NULL `PMIX_POINTER`, both "no
/// value" here.
///
/// # Safety
/// `monitor` NULL or a valid info.
unsafe fn monitor_from_c(monitor: *const pmix_info_t) -> Result<Info, Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `monitor` NULL or a valid
    // info.
    let mut m = unsafe { info_from_c(monitor.as_ref().ok_or(Status::ERR_BAD_PARAM)?) }?;
    if matches!(m.value, Value::Pointer(0)) {
        m.value = Value::Undef;
    }
    Ok(m)
}

/// `PMIx_Process_monitor`.
///
/// # Safety
/// `monitor` valid; `directives` NULL or `ndirs` infos; `results`/`nresults`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Process_monitor(
    monitor: *const pmix_info_t,
    error: i32,
    directives: *const pmix_info_t,
    ndirs: usize,
    results: *mut *mut pmix_info_t,
    nresults: *mut usize,
) -> i32 {
    let mut out = 0;
    let st = status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `monitor` valid;
        // `directives` NULL or `ndirs` infos; `results`/`nresults` NULL or writable.
        let m = unsafe { monitor_from_c(monitor) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `monitor` valid;
        // `directives` NULL or `ndirs` infos; `results`/`nresults` NULL or writable.
        let d = unsafe { infos_from_c(directives, ndirs) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `monitor` valid;
        // `directives` NULL or `ndirs` infos; `results`/`nresults` NULL or writable.
        out = unsafe { hand_out(c.monitor(&m, Status(error), &d), results, nresults) };
        Ok(())
    });
    if st == 0 {
        out
    } else {
        st
    }
}

/// `PMIx_Process_monitor_nb`. A `PMIX_SEND_HEARTBEAT` monitor completes at
/// once: `PMIX_OPERATION_SUCCEEDED`, no callback (so the 4.2 headers'
/// `PMIx_Heartbeat` macro, which passes a NULL callback, works too).
///
/// # Safety
/// As [`PMIx_Process_monitor`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Process_monitor_nb(
    monitor: *const pmix_info_t,
    error: i32,
    directives: *const pmix_info_t,
    ndirs: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> i32 {
    let mut out = 0;
    let st = status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): As
        // [`PMIx_Process_monitor`]; `cbdata` handed back untouched.
        let m = unsafe { monitor_from_c(monitor) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): As
        // [`PMIx_Process_monitor`]; `cbdata` handed back untouched.
        let d = unsafe { infos_from_c(directives, ndirs) }?;
        let (_gate, cb) = after_return(info_callback(cbfunc, cbdata));
        out = c.monitor_nb(&m, Status(error), &d, cb).0;
        Ok(())
    });
    if st == 0 {
        out
    } else {
        st
    }
}

/// `PMIx_Heartbeat`: one relaxed increment of this process's counter in
/// shared memory (no syscall). Before `PMIx_Init` it does nothing.
#[no_mangle]
pub extern "C" fn PMIx_Heartbeat() {
    super::guard((), || {
        if let Ok(c) = client() {
            let _ = c.heartbeat();
        }
    })
}

/// `PMIx_Log`.
///
/// # Safety
/// `data` NULL or `ndata` infos; `directives` NULL or `ndirs` infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Log(
    data: *const pmix_info_t,
    ndata: usize,
    directives: *const pmix_info_t,
    ndirs: usize,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `data` NULL or `ndata`
        // infos; `directives` NULL or `ndirs` infos.
        let (d, dirs) = unsafe { (infos_from_c(data, ndata)?, infos_from_c(directives, ndirs)?) };
        c.log(&d, &dirs).status.into_result()
    })
}

/// `PMIx_Log_nb`.
///
/// # Safety
/// As [`PMIx_Log`]; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Log_nb(
    data: *const pmix_info_t,
    ndata: usize,
    directives: *const pmix_info_t,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): As [`PMIx_Log`]; `cbdata`
        // handed back untouched.
        let (d, dirs) = unsafe { (infos_from_c(data, ndata)?, infos_from_c(directives, ndirs)?) };
        let cbdata = CPtr(cbdata);
        let (_gate, done) = after_return(move |o: crate::client::Outcome| {
            let cbdata = cbdata;
            if let Some(cb) = cbfunc {
                // SAFETY: the caller's callback with its own cbdata.
                unsafe { cb(o.status.0, cbdata.0) }
            }
        });
        c.log_nb(&d, &dirs, done).into_result()
    })
}

/// Most keys one `pmix_query_t` may list before its NULL terminator (an
/// unterminated array must not be read forever).
const MAX_QUERY_KEYS: usize = 4096;

/// The caller's queries, checked: a NULL array, no queries, a query with
/// NULL or no keys, an empty, oversized or non-UTF-8 key, or malformed
/// qualifiers are `PMIX_ERR_BAD_PARAM`.
///
/// # Safety
/// `queries` NULL or `nqueries` valid `pmix_query_t`s, each `keys` NULL or
/// a NULL-terminated array of strings, `qualifiers` NULL or `nqual` infos.
unsafe fn queries_from_c(
    queries: *const pmix_query_t,
    nqueries: usize,
) -> Result<Vec<crate::client::Query>, Status> {
    if queries.is_null() || nqueries == 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: `queries` holds `nqueries` elements, by contract.
    let qs = unsafe { std::slice::from_raw_parts(queries, nqueries) };
    qs.iter()
        .map(|q| {
            if q.keys.is_null() {
                return Err(Status::ERR_BAD_PARAM);
            }
            let mut keys = Vec::new();
            loop {
                if keys.len() >= MAX_QUERY_KEYS {
                    return Err(Status::ERR_BAD_PARAM);
                }
                // SAFETY: the array is NULL-terminated and we have not
                // passed its terminator.
                let k = unsafe { *q.keys.add(keys.len()) };
                if k.is_null() {
                    break;
                }
                // SAFETY: a key of the caller's: a terminated string.
                keys.push(unsafe { super::conv::key_text(k) }?.to_owned());
            }
            if keys.is_empty() {
                return Err(Status::ERR_BAD_PARAM);
            }
            // SAFETY: `qualifiers` NULL or `nqual` infos, by contract.
            let qualifiers = unsafe { infos_from_c(q.qualifiers, q.nqual) }?;
            Ok(crate::client::Query { keys, qualifiers })
        })
        .collect()
}

/// `PMIx_Query_info`: `*results` (released with `PMIX_INFO_FREE`) holds one
/// info per answered key; the status is `PMIX_SUCCESS`,
/// `PMIX_ERR_PARTIAL_SUCCESS` or `PMIX_ERR_NOT_FOUND` (see
/// `server::query`).
///
/// # Safety
/// As `queries_from_c`; `results`/`nresults` writable (NULL: BAD_PARAM).
#[no_mangle]
pub unsafe extern "C" fn PMIx_Query_info(
    queries: *mut pmix_query_t,
    nqueries: usize,
    results: *mut *mut pmix_info_t,
    nresults: *mut usize,
) -> i32 {
    let mut out = 0;
    let st = status_of(|| {
        if results.is_null() || nresults.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: both writable, by contract.
        unsafe {
            *results = std::ptr::null_mut();
            *nresults = 0;
        }
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): As `queries_from_c`;
        // `results`/`nresults` writable (NULL: BAD_PARAM).
        let q = unsafe { queries_from_c(queries, nqueries) }?;
        // SAFETY: both writable, by contract.
        out = unsafe { hand_out(c.query(&q), results, nresults) };
        Ok(())
    });
    if st == 0 {
        out
    } else {
        st
    }
}

/// `PMIx_Query_info_nb`: `PMIX_SUCCESS` means `cbfunc` will run on the
/// library's callback thread, after this call returned, with the answers
/// and a release function it must call.
///
/// # Safety
/// As `queries_from_c`; `cbdata` handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Query_info_nb(
    queries: *mut pmix_query_t,
    nqueries: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        if cbfunc.is_none() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): As `queries_from_c`;
        // `cbdata` handed back untouched.
        let q = unsafe { queries_from_c(queries, nqueries) }?;
        let (_gate, cb) = after_return(info_callback(cbfunc, cbdata));
        c.query_nb(&q, cb).into_result()
    })
}
