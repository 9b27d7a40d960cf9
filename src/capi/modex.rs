//! Data exchange between nodes through a C host: the module's `fence_nb`
//! and `direct_modex` upcalls (the server asks the host to carry this
//! node's data to the others, or to fetch another node's), and
//! `PMIx_server_dmodex_request` (the host asks this server for a local
//! process's data on behalf of another node).
//!
//! The bytes are the server's own frames (`store/blob.rs`): the host
//! carries them unread. A NULL upcall is not supported: a fence across
//! nodes then fails with `PMIX_ERR_NOT_SUPPORTED`, a `PMIx_Get` of another
//! node's process is `PMIX_ERR_NOT_FOUND` (`server/fence.rs`,
//! `server/exchange.rs`). How the host's callback and return status
//! complete an upcall exactly once: `upcall.rs`.

use super::conv::proc_from_ptr;
use super::ctypes::*;
use super::server::{server, CHost};
use super::upcall::{modex_done, park, returned, Finish, Keep, Payload};
use super::{defer, lock, status_of, CPtr};
use crate::server::Done;
use crate::types::{Info, Proc, Status};
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

fn bytes_done(done: Done<Vec<u8>>) -> Finish {
    Box::new(move |s, p: Payload| done.complete(s, p.bytes()))
}

/// This node's fence data as `fence_nb` gets it: a malloc'd copy that
/// belongs to the host from the call on, (NULL, 0) when there is none;
/// None when out of memory. OpenPMIx hands the host a buffer it never
/// frees, and Open MPI's runtime takes it (its collective buffer adopts
/// the pointer and `free`s it when the collective is over): a copy the
/// library freed itself after the upcall was freed twice, and killed
/// every `orted` at the first fence across nodes. A host that copies and
/// never frees (Slurm's) leaks it, as it does with OpenPMIx.
fn handed_over(data: &[u8]) -> Option<(*mut c_char, usize)> {
    if data.is_empty() {
        return Some((std::ptr::null_mut(), 0));
    }
    // SAFETY: malloc of a nonzero size; NULL is checked below.
    let p = unsafe { libc::malloc(data.len()) } as *mut u8;
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` holds `data.len()` bytes just allocated, not overlapping
    // `data`.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    Some((p as *mut c_char, data.len()))
}

impl CHost {
    /// The module's `fence_nb`: `procs` as the first caller named them,
    /// `info` (`PMIX_COLLECT_DATA`, `PMIX_TIMEOUT`), this node's `data`
    /// (NULL when there is none; the host's to free, see `handed_over`).
    pub(super) fn fence_upcall(
        &self,
        procs: &[Proc],
        info: &[Info],
        data: &[u8],
        done: Done<Vec<u8>>,
    ) {
        let Some(f) = self.m.fence_nb else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let (pp, pn) = keep.procs(procs);
        let (ip, n) = match keep.infos(info) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let Some((dp, dn)) = handed_over(data) else {
            return done.status(Status::ERR_NOMEM);
        };
        let id = park(bytes_done(done), keep);
        // SAFETY: the daemon's upcall with its own signature; every array
        // lives in `keep` until the upcall returned and completed; `dp` is
        // the host's from here on (see `handed_over`).
        let rc = unsafe { f(pp, pn, ip, n, dp, dn, Some(modex_done), id as *mut c_void) };
        returned(id, rc);
    }

    /// The module's `direct_modex`: the data of `proc`, a process of
    /// another node; `info` holds the `PMIx_Get`'s directives.
    pub(super) fn modex_upcall(&self, proc: &Proc, info: &[Info], done: Done<Vec<u8>>) {
        let Some(f) = self.m.direct_modex else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(proc);
        let (ip, n) = match keep.infos(info) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(bytes_done(done), keep);
        // SAFETY: as `fence_upcall`.
        returned(id, unsafe {
            f(p, ip, n, Some(modex_done), id as *mut c_void)
        });
    }
}

/// The host's response function and its data.
#[derive(Clone, Copy)]
struct Responder {
    cb: DmodexResponseFn,
    cbdata: CPtr,
}

impl Responder {
    /// Calls the host with `data`, valid only during the call.
    fn deliver(self, s: Status, mut data: Vec<u8>) {
        let (p, n) = if data.is_empty() {
            (std::ptr::null_mut(), 0)
        } else {
            (data.as_mut_ptr() as *mut c_char, data.len())
        };
        // SAFETY: the host's callback with its own cbdata; `p` holds `n`
        // bytes until it returns.
        unsafe { (self.cb)(s.0, p, n, self.cbdata.0) }
    }
}

/// Where one `PMIx_server_dmodex_request` stands: its answer reaches the
/// host once, after the call returned SUCCESS, never when it returned an
/// error (that was the outcome).
enum Reply {
    /// The call has not returned; no answer yet.
    Calling,
    /// The call has not returned; the answer came already.
    Early(Status, Vec<u8>),
    /// The call returned SUCCESS; the answer has not come.
    Waiting,
    /// Delivered, or refused by the call's return.
    Over,
}

/// `PMIx_server_dmodex_request`: another node asks, through the host, for
/// what local process `proc` committed. `cbfunc` gets it (the bytes for
/// that node's server, which the host carries unread) once `proc` has
/// committed — at once when it has — or `PMIX_ERR_NOT_FOUND` when `proc`
/// is not a client registered here or leaves without committing. It runs
/// on the library's callback thread, after this call returned, and
/// `data` is valid only during that call (copy what is kept). A status
/// other than `PMIX_SUCCESS` returned here is the outcome: `cbfunc` then
/// never runs.
///
/// # Safety
/// `proc_` NULL or valid; `cbfunc` callable from any thread with `cbdata`.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_dmodex_request(
    proc_: *const pmix_proc_t,
    cbfunc: Option<DmodexResponseFn>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let s = server()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` NULL or valid.
        let p = unsafe { proc_from_ptr(proc_) }?;
        let cb = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        if !p.rank.is_real() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let who = Responder {
            cb,
            cbdata: CPtr(cbdata),
        };
        let state = Arc::new(Mutex::new(Reply::Calling));
        let st = state.clone();
        // Never blocks: it may run on the progress thread, or on this one
        // when the request is refused.
        let done = Done::new(
            move |s, data| {
                let mut g = lock(&st);
                match std::mem::replace(&mut *g, Reply::Over) {
                    Reply::Calling => *g = Reply::Early(s, data),
                    Reply::Waiting => drop(defer(move || who.deliver(s, data))),
                    _ => {}
                }
            },
            Vec::new,
        );
        let r = s.dmodex_request(&p, done);
        let mut g = lock(&state);
        let early = match (&r, std::mem::replace(&mut *g, Reply::Over)) {
            (Ok(()), Reply::Calling) => {
                *g = Reply::Waiting;
                None
            }
            (Ok(()), Reply::Early(s, data)) => Some((s, data)),
            _ => None,
        };
        drop(g);
        // Kept until this call returns: the answer runs after it.
        let _gate = early.map(|(s, data)| defer(move || who.deliver(s, data)));
        r
    })
}
