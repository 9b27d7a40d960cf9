//! How the server's calls into a C host (`pmix_server_module_t` upcalls)
//! complete, whatever the host does.
//!
//! Completions are matched by a number, not a pointer: the `cbdata` the
//! host gets back is a key into [`PENDING`]. Whichever comes first — the
//! host's callback, or a return status that completes the upcall itself —
//! takes the completion out of its slot; anything later finds the slot
//! empty and does nothing. So every host pattern completes exactly once:
//! - the callback later, from any thread (the ordinary case);
//! - the callback inside the upcall, before it returns (Open MPI's
//!   runtime does so), with `PMIX_SUCCESS` returned after it;
//! - the callback and an error return both (Slurm's `fence_nb` on error):
//!   the callback's status is the outcome;
//! - no callback: `PMIX_OPERATION_SUCCEEDED` (success) or an error return;
//! - a callback called twice: the second is ignored.
//!
//! What the upcall was given (procs, info arrays) stays allocated until
//! the upcall has returned and it has completed, both: a host may read its
//! arguments after calling its callback. The fence's data is not among
//! them: it is the host's from the call on (`modex.rs`).

use super::cmem::free_infos;
use super::conv::{infos_from_c, proc_to_c, slice};
use super::ctypes::*;
use super::{lock, CPtr};
use crate::types::{Info, Nspace, PData, Proc, Status};
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::Mutex;

/// What a host's callback hands back.
pub(super) enum Payload {
    /// Nothing (an operation callback, or a completion by return status).
    None,
    /// Result infos (`pmix_info_cbfunc_t`).
    Infos(Vec<Info>),
    /// Bytes (`pmix_modex_cbfunc_t`).
    Bytes(Vec<u8>),
    /// Found items (`pmix_lookup_cbfunc_t`).
    Found(Vec<PData>),
    /// A new namespace (`pmix_spawn_cbfunc_t`; boxed: a namespace is 256
    /// bytes inline).
    Nspace(Option<Box<Nspace>>),
}

impl Payload {
    pub(super) fn infos(self) -> Vec<Info> {
        match self {
            Payload::Infos(v) => v,
            _ => Vec::new(),
        }
    }

    pub(super) fn bytes(self) -> Vec<u8> {
        match self {
            Payload::Bytes(v) => v,
            _ => Vec::new(),
        }
    }

    pub(super) fn found(self) -> Vec<PData> {
        match self {
            Payload::Found(v) => v,
            _ => Vec::new(),
        }
    }

    pub(super) fn nspace(self) -> Option<Nspace> {
        match self {
            Payload::Nspace(n) => n.map(|b| *b),
            _ => None,
        }
    }
}

/// What completes an upcall: its status and payload.
pub(super) type Finish = Box<dyn FnOnce(Status, Payload) + Send>;

/// An upcall in flight.
struct Waiting {
    /// Taken by the first completion.
    finish: Option<Finish>,
    /// The upcall returned (its arguments may go once it completed too).
    returned: bool,
    _keep: Keep,
}

/// C data an upcall was given, released when it is over.
#[derive(Default)]
pub(super) struct Keep {
    // Boxed: the upcall holds their addresses while the Vec may grow.
    #[allow(clippy::vec_box)]
    procs: Vec<Box<pmix_proc_t>>,
    arrays: Vec<Box<[pmix_proc_t]>>,
    infos: Vec<(CPtr, usize)>,
    pub(super) codes: Vec<i32>,
    strings: Vec<CPtr>,
    /// NULL-terminated string arrays (keys, argv, environments).
    argvs: Vec<CPtr>,
    /// Application arrays (their strings and infos are kept above).
    pub(super) apps: Vec<AppArray>,
}

/// A spawn upcall's `pmix_app_t` array.
pub(super) struct AppArray {
    /// Held for its address, never read here.
    _apps: Box<[pmix_app_t]>,
}

impl AppArray {
    pub(super) fn new(apps: Box<[pmix_app_t]>) -> AppArray {
        AppArray { _apps: apps }
    }
}
// SAFETY: the pointers inside point at strings, arrays and infos kept in
// the same `Keep` (malloc'd, owned by no thread); the array is only read by
// the host during its upcall and released with the rest, from whichever
// thread completes it.
unsafe impl Send for AppArray {}

impl Keep {
    /// Keeps `p` for the upcall and returns its address.
    pub(super) fn proc(&mut self, p: &Proc) -> *const pmix_proc_t {
        self.procs.push(Box::new(proc_to_c(p)));
        &**self.procs.last().expect("just pushed")
    }

    /// Keeps `v` as a C proc array; (NULL, 0) when empty.
    pub(super) fn procs(&mut self, v: &[Proc]) -> (*mut pmix_proc_t, usize) {
        if v.is_empty() {
            return (std::ptr::null_mut(), 0);
        }
        let mut a: Box<[pmix_proc_t]> = v.iter().map(proc_to_c).collect();
        let p = a.as_mut_ptr();
        self.arrays.push(a);
        (p, v.len())
    }

    /// Keeps `v` as a C info array (NULL when empty).
    pub(super) fn infos(&mut self, v: &[Info]) -> Result<(*mut pmix_info_t, usize), Status> {
        let (p, n) = super::conv::infos_to_c(v)?;
        self.infos.push((CPtr(p as *mut c_void), n));
        Ok((p, n))
    }

    /// Keeps a malloc'd string (freed with the rest).
    pub(super) fn string(&mut self, s: *mut c_char) -> *mut c_char {
        self.strings.push(CPtr(s as *mut c_void));
        s
    }
}

impl Keep {
    /// Keeps `v` as a malloc'd NULL-terminated array.
    pub(super) fn argv(&mut self, v: &[String]) -> Result<*mut *mut c_char, Status> {
        let a = super::conv::strings_to_c(v)?;
        self.argvs.push(CPtr(a as *mut c_void));
        Ok(a)
    }
}

impl Drop for Keep {
    fn drop(&mut self) {
        for a in self.argvs.drain(..) {
            // SAFETY: built by strings_to_c for this upcall only (malloc'd
            // strings in a malloc'd NULL-terminated array); it is over.
            unsafe { super::argv::PMIx_Argv_free(a.0 as *mut *mut c_char) };
        }
        for (p, n) in self.infos.drain(..) {
            // SAFETY: arrays built by infos_to_c for this upcall only, and
            // the upcall is over (returned and completed).
            unsafe { free_infos(p.0 as *mut pmix_info_t, n) };
        }
        for s in self.strings.drain(..) {
            // SAFETY: strdup'd for this upcall only; the upcall is over.
            unsafe { libc::free(s.0) };
        }
    }
}

static PENDING: Mutex<Option<(u64, HashMap<u64, Waiting>)>> = Mutex::new(None);

/// Registers an upcall about to be made; its number is the `cbdata`.
pub(super) fn park(finish: Finish, keep: Keep) -> u64 {
    let mut g = lock(&PENDING);
    let (next, map) = g.get_or_insert_with(|| (1, HashMap::new()));
    let id = *next;
    *next += 1;
    map.insert(
        id,
        Waiting {
            finish: Some(finish),
            returned: false,
            _keep: keep,
        },
    );
    id
}

/// Completes upcall `id`, if nothing completed it yet.
pub(super) fn finish(id: u64, s: Status, p: Payload) {
    let f = {
        let mut g = lock(&PENDING);
        let Some((_, map)) = g.as_mut() else { return };
        let Some(w) = map.get_mut(&id) else { return };
        let f = w.finish.take();
        if w.returned {
            map.remove(&id);
        }
        f
    };
    if let Some(f) = f {
        f(s, p);
    }
}

/// The upcall returned `rc`: `SUCCESS` = its callback comes (or came);
/// `OPERATION_SUCCEEDED` = done, with success; anything else = done with
/// that status, unless its callback already completed it.
pub(super) fn returned(id: u64, rc: i32) {
    match Status(rc) {
        Status::SUCCESS => {}
        Status::OPERATION_SUCCEEDED => finish(id, Status::SUCCESS, Payload::None),
        s => finish(id, s, Payload::None),
    }
    upcall_over(id);
}

/// The upcall returned (a `void` one: its callback always comes). Its
/// arguments are released now if it has completed.
pub(super) fn upcall_over(id: u64) {
    let mut g = lock(&PENDING);
    let Some((_, map)) = g.as_mut() else { return };
    if let Some(w) = map.get_mut(&id) {
        w.returned = true;
        if w.finish.is_none() {
            map.remove(&id);
        }
    }
}

/// `pmix_op_cbfunc_t` for upcalls.
pub(super) unsafe extern "C" fn op_done(status: i32, cbdata: *mut c_void) {
    super::guard((), || finish(cbdata as u64, Status(status), Payload::None))
}

/// Calls the host's release function for what its callback handed over,
/// on the library's callback thread, never inside the host's callback: a
/// host may call the callback with a lock held that its release function
/// takes. Slurm does: its collectives call the fence's callback under the
/// collective's lock, and their release function takes that lock, so a
/// release from inside the callback deadlocked the step daemon. (OpenPMIx
/// releases from its progress thread, later, too.) `PMIx_server_finalize`
/// waits for it.
fn release_later(release_fn: Option<ReleaseCb>, release_cbdata: *mut c_void) {
    let Some(r) = release_fn else { return };
    let data = CPtr(release_cbdata);
    drop(super::defer(move || {
        let data = data;
        // SAFETY: the host's own release function with its own data, called
        // once, after the callback that handed them over copied its data.
        unsafe { r(data.0) }
    }));
}

/// `pmix_info_cbfunc_t` for upcalls: the infos are copied, then released
/// through the host's release function (later, see [`release_later`]).
pub(super) unsafe extern "C" fn info_done(
    status: i32,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbdata: *mut c_void,
    release_fn: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    super::guard((), || {
        // SAFETY: the host's results, valid until its release function.
        let v = unsafe { infos_from_c(info, ninfo) }.unwrap_or_default();
        release_later(release_fn, release_cbdata);
        finish(cbdata as u64, Status(status), Payload::Infos(v));
    })
}

/// `pmix_modex_cbfunc_t` for `fence_nb` and `direct_modex`: the bytes are
/// copied, then released through the host's release function (later, see
/// [`release_later`]). A NULL
/// `data` with a size is no data: a success becomes
/// `PMIX_ERR_BAD_PARAM` (the host's bug, not a crash).
pub(super) unsafe extern "C" fn modex_done(
    status: i32,
    data: *const c_char,
    ndata: usize,
    cbdata: *mut c_void,
    release_fn: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    super::guard((), || {
        // SAFETY: the host's bytes, `ndata` of them readable until its
        // release function runs (the callback's contract).
        let copied = unsafe { slice(data as *const u8, ndata) }.map(<[u8]>::to_vec);
        release_later(release_fn, release_cbdata);
        let (s, v) = match copied {
            Ok(v) => (Status(status), v),
            Err(_) if status == Status::SUCCESS.0 => (Status::ERR_BAD_PARAM, Vec::new()),
            Err(_) => (Status(status), Vec::new()),
        };
        finish(cbdata as u64, s, Payload::Bytes(v));
    })
}
