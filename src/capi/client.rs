//! Client initialisation, synchronisation (`PMIx_Fence`), `PMIx_Abort`,
//! `PMIx_Resolve_*`, version and error strings (`PMIx_Get`, `PMIx_Put` and
//! the rest of data exchange: `data.rs`).

use super::conv::{infos_from_c, proc_to_c, procs_from_c};
use super::ctypes::*;
use super::{after_return, client, guard, lock, status_of, CPtr, STATE};
use crate::client::Client;
use crate::types::{Proc, Rank, Status};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// `PMIx_Init`: connects to the server named by the environment the
/// launcher (or `PMIx_server_setup_fork`) provided. Reference-counted: each
/// call needs its `PMIx_Finalize`.
///
/// # Safety
/// `proc_` is NULL or writable; `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Init(
    proc_: *mut pmix_proc_t,
    info: *mut pmix_info_t,
    ninfo: usize,
) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` is NULL or
        // writable; `info` NULL or `ninfo` valid infos.
        let info = unsafe { infos_from_c(info, ninfo) }?;
        let mut st = lock(&STATE);
        let me = match &mut st.client {
            // A child forked after PMIx_Init: the parent's connection is
            // not its to share, and it cannot take another under the same
            // rank (docs/abi.md: exec a new program to be a client).
            Some((c, _)) if c.forked() => return Err(Status::ERR_INIT),
            Some((c, n)) => {
                *n += 1;
                c.me()
            }
            None => {
                // The binding directives (PMIX_BIND_PROGRESS_THREAD,
                // PMIX_BIND_REQUIRED) apply to the first, connecting call.
                let p = crate::client::Params::from_env()?.with_info(&info)?;
                let c = Client::init_with(&p)?;
                let me = c.me();
                st.client = Some((c, 1));
                me
            }
        };
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` is NULL or
        // writable; `info` NULL or `ninfo` valid infos.
        if let Some(p) = unsafe { proc_.as_mut() } {
            *p = proc_to_c(&me);
        }
        Ok(())
    })
}

/// `PMIx_Finalize`: the last matching call disconnects.
///
/// # Safety
/// `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Finalize(info: *const pmix_info_t, ninfo: usize) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` NULL or `ninfo`
        // valid infos.
        unsafe { infos_from_c(info, ninfo) }?;
        let c = {
            let mut st = lock(&STATE);
            match &mut st.client {
                None => return Err(Status::ERR_INIT),
                // A forked child: nothing of the connection is its own (its
                // threads stayed in the parent, so none could be joined).
                Some((c, _)) if c.forked() => return Err(Status::ERR_INIT),
                Some((_, n)) if *n > 1 => {
                    *n -= 1;
                    return Ok(());
                }
                Some(_) => st.client.take().map(|(c, _)| c),
            }
        };
        // Outside the state lock: finalize joins threads that may be
        // running C callbacks which call back into this library.
        c.map_or(Ok(()), |c| c.finalize())
    })
}

/// `PMIx_Initialized`: 1 between `PMIx_Init` and the last `PMIx_Finalize`.
#[no_mangle]
pub extern "C" fn PMIx_Initialized() -> c_int {
    guard(0, || {
        c_int::from(
            lock(&STATE)
                .client
                .as_ref()
                .is_some_and(|(c, _)| !c.forked()),
        )
    })
}

/// `PMIx_Get_version`.
#[no_mangle]
pub extern "C" fn PMIx_Get_version() -> *const c_char {
    c"fastpmix 0.1.0 (PMIx Standard 4.2 interfaces)".as_ptr()
}

/// `PMIx_Error_string`: the status's name (`"PMIX_ERR_BAD_PARAM"`), as
/// OpenPMIx prints it.
#[no_mangle]
pub extern "C" fn PMIx_Error_string(status: i32) -> *const c_char {
    static NAMES: OnceLock<HashMap<i32, CString>> = OnceLock::new();
    guard(c"PMIX_ERROR".as_ptr(), || {
        let names = NAMES.get_or_init(|| {
            // The first name of a value is its canonical one; later
            // entries are deprecated aliases (`PMIX_ERR_NODE_DOWN`).
            let mut m = HashMap::new();
            for (s, n) in Status::all_named() {
                if let Ok(c) = CString::new(n) {
                    m.entry(s.0).or_insert(c);
                }
            }
            m
        });
        names
            .get(&status)
            .map_or(c"ERROR STRING NOT FOUND".as_ptr(), |s| s.as_ptr())
    })
}

/// `PMIx_Abort`: the host aborts `procs` (none: this namespace) with
/// `status`; when this process is among them the call normally does not
/// return.
///
/// # Safety
/// `msg` NULL or terminated; `procs` NULL or `nprocs` valid procs.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Abort(
    status: c_int,
    msg: *const c_char,
    procs: *mut pmix_proc_t,
    nprocs: usize,
) -> i32 {
    status_of(|| {
        let c = client()?;
        let msg = if msg.is_null() {
            String::new()
        } else {
            // SAFETY: by contract; a non-UTF-8 message is shown lossily.
            unsafe { CStr::from_ptr(msg) }
                .to_string_lossy()
                .into_owned()
        };
        // SAFETY: the caller's obligation (this function's `# Safety`): `msg` NULL or terminated;
        // `procs` NULL or `nprocs` valid procs.
        let targets = unsafe { procs_from_c(procs, nprocs) }?;
        c.abort(Status(status), &msg, &targets).into_result()
    })
}

/// # Safety
/// `procs` NULL or `nprocs` valid procs.
unsafe fn participants(
    c: &Client,
    procs: *const pmix_proc_t,
    n: usize,
) -> Result<Vec<Proc>, Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `procs` NULL or `nprocs` valid
    // procs.
    let v = unsafe { procs_from_c(procs, n) }?;
    Ok(if v.is_empty() {
        vec![Proc {
            nspace: c.me().nspace,
            rank: Rank::WILDCARD,
        }]
    } else {
        v
    })
}

/// `PMIx_Fence`: returns when every participant (none named: this
/// namespace) has entered the same fence. With `PMIX_COLLECT_DATA` true
/// the data they committed reaches every participant's node
/// (participants on other nodes: through the host's `fence_nb`).
///
/// # Safety
/// `procs` NULL or `nprocs` valid procs; `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Fence(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `procs` NULL or `nprocs`
        // valid procs; `info` NULL or `ninfo` valid infos.
        let (p, i) = unsafe { (participants(&c, procs, nprocs)?, infos_from_c(info, ninfo)?) };
        c.fence(&p, &i)
    })
}

/// `PMIx_Fence_nb`.
///
/// # Safety
/// As [`PMIx_Fence`]; `cbdata` is handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Fence_nb(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let c = client()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): As [`PMIx_Fence`];
        // `cbdata` is handed back untouched.
        let (p, i) = unsafe { (participants(&c, procs, nprocs)?, infos_from_c(info, ninfo)?) };
        let cbdata = CPtr(cbdata);
        let (_gate, done) = after_return(move |s: Status| {
            let cbdata = cbdata;
            if let Some(cb) = cbfunc {
                // SAFETY: the caller's callback with its own cbdata.
                unsafe { cb(s.0, cbdata.0) }
            }
        });
        c.fence_nb(&p, &i, done).into_result()
    })
}

/// The namespace a resolve call names: `None` for NULL or empty ("every
/// namespace this process knows").
///
/// # Safety
/// `p` is NULL or readable up to its terminator or 256 bytes.
unsafe fn nspace_or_all(p: *const c_char) -> Result<Option<crate::types::Nspace>, Status> {
    // SAFETY: `p` is not NULL here (checked first) and readable for at
    // least its first byte, as the caller guarantees.
    if p.is_null() || unsafe { *p } == 0 {
        return Ok(None);
    }
    // SAFETY: the caller's guarantee, passed on.
    unsafe { super::conv::nspace_from_ptr(p) }.map(Some)
}

/// `PMIx_Resolve_peers`: the processes of `nspace` (NULL or empty: this
/// process's namespace, the only one it knows) on node `nodename` (NULL:
/// this node), as a malloc'd array the caller frees (`PMIX_PROC_FREE`).
/// `PMIX_ERR_NOT_FOUND` when none.
///
/// # Safety
/// `nodename` NULL or a C string; `nspace` NULL or a C string of at most
/// 255 bytes; `procs` and `nprocs` writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Resolve_peers(
    nodename: *const c_char,
    nspace: *const c_char,
    procs: *mut *mut pmix_proc_t,
    nprocs: *mut usize,
) -> i32 {
    status_of(|| {
        // SAFETY: writable out-params, as the caller guarantees.
        let (procs, nprocs) = unsafe { (procs.as_mut(), nprocs.as_mut()) };
        let (procs, nprocs) = procs.zip(nprocs).ok_or(Status::ERR_BAD_PARAM)?;
        *procs = std::ptr::null_mut();
        *nprocs = 0;
        let node = if nodename.is_null() {
            None
        } else {
            // SAFETY: a C string, as the caller guarantees.
            Some(unsafe { super::conv::str_from_c(nodename) }?)
        };
        // SAFETY: the caller's guarantee, passed on.
        let ns = unsafe { nspace_or_all(nspace) }?;
        let found = client()?.resolve_peers(node, ns.as_ref())?;
        let out = super::cmem::alloc_array::<pmix_proc_t>(found.len())?;
        for (k, p) in found.iter().enumerate() {
            // SAFETY: `out` holds `found.len()` zeroed entries; k < len.
            unsafe { out.add(k).write(proc_to_c(p)) };
        }
        *procs = out;
        *nprocs = found.len();
        Ok(())
    })
}

/// `PMIx_Resolve_nodes`: the nodes hosting processes of `nspace` (NULL or
/// empty: this process's namespace), comma-separated, as a malloc'd string
/// the caller frees. `PMIX_ERR_NOT_FOUND` when none is known.
///
/// # Safety
/// `nspace` NULL or a C string of at most 255 bytes; `nodelist` writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Resolve_nodes(
    nspace: *const c_char,
    nodelist: *mut *mut c_char,
) -> i32 {
    status_of(|| {
        // SAFETY: a writable out-param, as the caller guarantees.
        let out = unsafe { nodelist.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        *out = std::ptr::null_mut();
        // SAFETY: the caller's guarantee, passed on.
        let ns = unsafe { nspace_or_all(nspace) }?;
        let list = client()?.resolve_nodes(ns.as_ref())?;
        let s = super::cmem::strdup(&list);
        if s.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        *out = s;
        Ok(())
    })
}
