//! `PMIx_Register_event_handler`, `PMIx_Deregister_event_handler` and
//! `PMIx_Notify_event`: C handlers on top of the event engine.
//!
//! A C handler gets the event's info array (plus, as the Standard asks, its
//! own `PMIX_EVENT_HDLR_NAME` and `PMIX_EVENT_RETURN_OBJECT`), its source
//! and the results so far, valid until the later of its return and its
//! call of the completion function (code everywhere completes first and
//! reads afterwards). The info array and the source are made for the call
//! and freed by whichever of the return and the completion comes last. The
//! results array is the chain's C mirror of its results
//! ([`super::chain_mirror`]), kept across consecutive C handlers and edited
//! in place by them (RFC0018). The completion copies the handler's returned
//! infos, tells the handler through its `cbfunc` that they may be released,
//! and lets the chain go on.

use super::chain_mirror::CMirror;
use super::conv::{infos_from_c, proc_from_ptr, proc_to_c, slice};
use super::ctypes::*;
use super::{after_return, defer, lock, role, spare, status_of, CPtr, Role};
use crate::event::{HandlerRef, Invocation, Notification, Registration};
use crate::types::fasthash::FastMap;
use crate::types::{DataRange, Status};
use std::ffi::c_void;
use std::sync::Mutex;

/// What a C handler was handed and nothing else keeps: its source and info
/// array. The handler holds pointers into them, so they stay put (boxed)
/// until the later of its return and its completion: example code
/// everywhere completes first and then reads the info array or the source.
/// (Its results array belongs to the chain's mirror, which leaves it alone
/// until the chain's next handler: see `chain_mirror`.)
struct Given {
    source: pmix_proc_t,
    /// From [`spare::fill`]: address, entries, capacity.
    info: (*mut pmix_info_t, usize, usize),
}

// SAFETY: the array is malloc'd memory owned by this value alone (no
// thread affinity); whichever thread ends the call frees it, once.
unsafe impl Send for Given {}

impl Given {
    /// Frees the info array.
    ///
    /// # Safety
    /// The handler has both returned and completed: nothing refers to it.
    unsafe fn release(self) {
        // SAFETY: the array built for this call, freed once (self is
        // consumed) after its last use, as the caller guarantees.
        unsafe { spare::give_back(self.info.0, self.info.1, self.info.2) };
    }
}

/// One C handler call in progress, keyed in [`LIVE`] by its [`Given`]'s
/// address (the `notification_cbdata` the handler hands back).
struct Call {
    given: Box<Given>,
    /// Until the completion takes it.
    inv: Option<Invocation>,
    /// The handler function has returned.
    returned: bool,
}

/// Calls handed to C and not yet ended. A completion with any other
/// pointer (a second completion, garbage) is ignored instead of freeing
/// twice.
static LIVE: Mutex<Option<FastMap<usize, Call>>> = Mutex::new(None);

struct CHandler(NotificationFn);

impl crate::event::Handler for CHandler {
    fn handle(&self, mut inv: Invocation) {
        let own = inv.handler_info();
        let ci = match spare::fill(&[inv.info(), &own]) {
            Ok(ci) => ci,
            Err(s) => return inv.complete(s, Vec::new()),
        };
        // A chain with no results yet hands out none and makes no mirror:
        // a one-handler chain (the common case) costs what it did before
        // mirrors; the next C handler's mirror starts from this one's.
        let cr = if !inv.has_mirror() && inv.results().is_empty() {
            Ok((std::ptr::null_mut(), 0))
        } else {
            match inv.mirror(CMirror::from_infos) {
                // SAFETY: the progress thread calls this handler only once
                // the chain's previous handler returned and completed:
                // nobody reads the mirror's array now.
                Ok(m) => unsafe { m.settle() },
                Err(s) => Err(s),
            }
        };
        let Ok(cr) = cr else {
            // SAFETY: just filled; not handed out.
            unsafe { spare::give_back(ci.0, ci.1, ci.2) };
            return inv.complete(Status::ERR_NOMEM, Vec::new());
        };
        let (id, code) = (inv.id().0 as usize, inv.status().0);
        let given = Box::new(Given {
            source: proc_to_c(inv.source()),
            info: ci,
        });
        let source: *const pmix_proc_t = &given.source;
        let key = &*given as *const Given as usize;
        lock(&LIVE).get_or_insert_with(FastMap::default).insert(
            key,
            Call {
                given,
                inv: Some(inv),
                returned: false,
            },
        );
        // SAFETY: the handler is the C function the caller registered; the
        // source and info pointers are into the boxed `Given` held in LIVE,
        // which is freed only once the handler has both returned (below)
        // and completed; the results array is the mirror's, which the chain
        // changes only at its next handler (after both).
        unsafe {
            (self.0)(
                id,
                code,
                source,
                ci.0,
                ci.1,
                cr.0,
                cr.1,
                complete,
                key as *mut c_void,
            )
        }
        let ended = {
            let mut live = lock(&LIVE);
            let map = live.get_or_insert_with(FastMap::default);
            match map.get_mut(&key) {
                Some(c) if c.inv.is_none() => map.remove(&key),
                Some(c) => {
                    c.returned = true;
                    None
                }
                None => None,
            }
        };
        if let Some(c) = ended {
            // SAFETY: returned just now and completed before.
            unsafe { c.given.release() };
        }
    }
}

/// `pmix_event_notification_cbfunc_fn_t`: the handler is done. The chain
/// goes on at once; the arrays the handler was given are freed here only if
/// it has already returned (else when it does). Its edits of the results
/// array in place are already in the chain's mirror.
unsafe extern "C" fn complete(
    status: i32,
    results: *mut pmix_info_t,
    nresults: usize,
    cbfunc: Option<OpCb>,
    thiscbdata: *mut c_void,
    notification_cbdata: *mut c_void,
) {
    super::guard((), || {
        let key = notification_cbdata as usize;
        // Read under the lock: the handler's thread frees the arrays as
        // soon as it sees the call completed and its handler returned.
        let taken = {
            let mut live = lock(&LIVE);
            let map = live.get_or_insert_with(FastMap::default);
            match map.get_mut(&key) {
                Some(c) if c.inv.is_some() => {
                    let inv = c.inv.take();
                    let ended = if c.returned { map.remove(&key) } else { None };
                    Some((inv, ended))
                }
                _ => None,
            }
        };
        let Some((Some(inv), ended)) = taken else {
            eprintln!("fastpmix: an event handler completed an unknown or finished event; ignored");
            return;
        };
        // SAFETY: the handler's results, valid until its cbfunc runs (the
        // Standard's completion contract).
        let returned = unsafe { infos_from_c(results, nresults) }.unwrap_or_default();
        if let Some(cb) = cbfunc {
            // SAFETY: the handler's own release callback and data.
            unsafe { cb(Status::SUCCESS.0, thiscbdata) };
        }
        if let Some(c) = ended {
            // SAFETY: the handler returned before, and this is its completion.
            unsafe { c.given.release() };
        }
        inv.complete(Status(status), returned);
    })
}

/// The registration `PMIx_Register_event_handler` makes for the C handler
/// `f`, for an engine built without a client or server: the benches and
/// the tests of the C handler path use it.
#[doc(hidden)]
pub fn c_registration(codes: &[Status], f: NotificationFn) -> Registration {
    Registration::new(codes, CHandler(f)).mirrored()
}

/// `PMIx_Register_event_handler`. Blocking (`cbfunc` NULL): returns the
/// handler's reference (≥ 1) or a negative status. Non-blocking: returns
/// `PMIX_SUCCESS` and `cbfunc` gets the reference before any event can
/// reach the handler.
///
/// # Safety
/// `codes` NULL or `ncodes` codes; `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Register_event_handler(
    codes: *const i32,
    ncodes: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    evhdlr: Option<NotificationFn>,
    cbfunc: Option<HdlrRegCb>,
    cbdata: *mut c_void,
) -> i32 {
    let mut reference = 0i32;
    let st = status_of(|| {
        let role = role()?;
        let h = evhdlr.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `codes` NULL or `ncodes`
        // codes; `info` NULL or `ninfo` valid infos.
        let codes: Vec<Status> = unsafe { slice(codes, ncodes) }?
            .iter()
            .map(|&c| Status(c))
            .collect();
        // SAFETY: the caller's obligation (this function's `# Safety`): `codes` NULL or `ncodes`
        // codes; `info` NULL or `ninfo` valid infos.
        let infos = unsafe { infos_from_c(info, ninfo) }?;
        let reg = c_registration(&codes, h).infos(infos);
        let Some(cb) = cbfunc else {
            let r = match role {
                Role::Client(c) => c.register(reg),
                Role::Server(s) => s.engine().register(reg),
            }?;
            reference = i32::try_from(r.0).map_err(|_| Status::ERR_OUT_OF_RESOURCE)?;
            return Ok(());
        };
        // The registration takes its place (pending) before this returns;
        // the callback runs on the progress thread right before the handler
        // becomes active, once this call has returned. Refused: an error
        // return, and the callback never runs.
        let cbdata = CPtr(cbdata);
        let (_gate, done) = after_return(move |(s, r): (Status, HandlerRef)| {
            let cbdata = cbdata;
            // SAFETY: the caller's callback with its own cbdata.
            unsafe { cb(s.0, r.0 as usize, cbdata.0) }
        });
        let done = move |s: Status, r: HandlerRef| done((s, r));
        match role {
            Role::Client(c) => c.register_nb(reg, done)?,
            Role::Server(s) => s.engine().register_nb(reg, done).into_result()?,
        }
        Ok(())
    });
    if st == Status::SUCCESS.0 && reference > 0 {
        reference
    } else {
        st
    }
}

/// `PMIx_Deregister_event_handler`. After it returns (blocking) or its
/// callback ran, the handler is never called again.
///
/// # Safety
/// `cbdata` is handed back untouched.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Deregister_event_handler(
    evhdlr_ref: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let role = role()?;
        let r = HandlerRef(evhdlr_ref as u64);
        let known = match &role {
            Role::Client(c) => c.engine().is_registered(r),
            Role::Server(s) => s.engine().is_registered(r),
        };
        let run = move || match role {
            Role::Client(c) => c.deregister(r),
            Role::Server(s) => s.engine().deregister(r),
        };
        let Some(cb) = cbfunc else {
            return run();
        };
        // A reference that names no handler is refused now, and the
        // callback never runs (the Standard: not after an error return):
        // nothing is left to run after the call. Slurm deregisters
        // reference 0, which it never received, right before
        // `PMIx_server_finalize`; a callback with the refusal would race it.
        if !known {
            return Err(Status::ERR_BAD_PARAM);
        }
        let cbdata = CPtr(cbdata);
        let _gate = defer(move || {
            let cbdata = cbdata;
            let s = match run() {
                Ok(()) => Status::SUCCESS,
                Err(e) => e,
            };
            // SAFETY: the caller's callback with its own cbdata.
            unsafe { cb(s.0, cbdata.0) }
        });
        Ok(())
    })
}

/// `PMIx_Notify_event`. In a client the source is always this process
/// (the server stamps it). In a server process (`PMIx_server_init`) the
/// host names the source (NULL: the server itself). The event is sent
/// before the call returns; `cbfunc`, when given, runs afterwards on the
/// library's callback thread.
///
/// # Safety
/// `source` NULL or valid; `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Notify_event(
    status: i32,
    source: *const pmix_proc_t,
    range: u8,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let role = role()?;
        let range = DataRange(range).validate()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `source` NULL or valid;
        // `info` NULL or `ninfo` valid infos.
        let infos = unsafe { infos_from_c(info, ninfo) }?;
        match role {
            Role::Client(c) => {
                let mut n = Notification::new(Status(status), c.me(), range);
                n.info = infos;
                c.notify(n)?;
            }
            Role::Server(s) => {
                let src = if source.is_null() {
                    s.me()
                } else {
                    // SAFETY: the caller's obligation (this function's `# Safety`): `source` NULL
                    // or valid; `info` NULL or `ninfo` valid infos.
                    unsafe { proc_from_ptr(source) }?
                };
                let mut n = Notification::new(Status(status), src, range);
                n.info = infos;
                s.notify(n)?;
            }
        }
        if let Some(cb) = cbfunc {
            let cbdata = CPtr(cbdata);
            let _gate = defer(move || {
                let cbdata = cbdata;
                // SAFETY: the caller's callback with its own cbdata.
                unsafe { cb(Status::SUCCESS.0, cbdata.0) }
            });
        }
        Ok(())
    })
}
