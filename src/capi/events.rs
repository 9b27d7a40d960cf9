//! `PMIx_Register_event_handler`, `PMIx_Deregister_event_handler` and
//! `PMIx_Notify_event`: C handlers on top of the event engine.
//!
//! A C handler gets the event's info array (plus, as the Standard asks, its
//! own `PMIX_EVENT_HDLR_NAME` and `PMIX_EVENT_RETURN_OBJECT`) and the
//! results so far as malloc'd arrays that stay valid until it calls the
//! completion function; the completion copies the handler's results (and
//! any edit it made in place to the results it was given, RFC0018), frees
//! the arrays, tells the handler through its `cbfunc` that its results
//! may be released, and lets the chain go on.

use super::conv::{infos_from_c, infos_to_c, proc_from_ptr, proc_to_c, slice};
use super::ctypes::*;
use super::helpers::free_infos;
use super::{after_return, defer, lock, role, spare, status_of, CPtr, Role};
use crate::event::{HandlerRef, Invocation, Notification, Registration};
use crate::types::fasthash::FastSet;
use crate::types::{DataRange, Info, Key, Status};
use std::ffi::c_void;
use std::sync::Mutex;

/// One C handler call in progress: what the handler was given, until it
/// completes.
struct Call {
    inv: Invocation,
    source: pmix_proc_t,
    /// From [`spare::fill`]: address, entries, capacity.
    info: (*mut pmix_info_t, usize, usize),
    results: (*mut pmix_info_t, usize),
    given: Vec<Info>,
}

/// Calls handed to C and not yet completed: a completion with any other
/// pointer (a second completion, garbage) is ignored instead of freeing
/// twice.
static LIVE: Mutex<Option<FastSet<usize>>> = Mutex::new(None);

struct CHandler(NotificationFn);

impl crate::event::Handler for CHandler {
    fn handle(&self, inv: Invocation) {
        let own = inv.handler_info();
        let given = inv.results().to_vec();
        let ci = match spare::fill(&[inv.info(), &own]) {
            Ok(ci) => ci,
            Err(s) => return inv.complete(s, Vec::new()),
        };
        let Ok(cr) = infos_to_c(&given) else {
            // SAFETY: just filled; not handed out.
            unsafe { spare::give_back(ci.0, ci.1, ci.2) };
            return inv.complete(Status::ERR_NOMEM, Vec::new());
        };
        let (id, code) = (inv.id().0 as usize, inv.status().0);
        let call = Box::new(Call {
            source: proc_to_c(inv.source()),
            inv,
            info: ci,
            results: cr,
            given,
        });
        let p = Box::into_raw(call);
        lock(&LIVE)
            .get_or_insert_with(FastSet::default)
            .insert(p as usize);
        // SAFETY: `p` stays valid (and its arrays allocated) until
        // `complete` takes it back; the handler is the C function the
        // caller registered.
        unsafe {
            (self.0)(
                id,
                code,
                &(*p).source,
                (*p).info.0,
                (*p).info.1,
                (*p).results.0,
                (*p).results.1,
                complete,
                p as *mut c_void,
            )
        }
    }
}

/// The results array after the handler ran: an entry whose key it cleared
/// is marked for removal (RFC0018).
///
/// # Safety
/// `p` holds `n` infos we built.
unsafe fn edited(p: *const pmix_info_t, n: usize) -> Vec<Info> {
    // SAFETY: by contract.
    let arr = unsafe { slice(p, n) }.unwrap_or(&[]);
    arr.iter()
        .filter_map(|i| {
            if i.key[0] == 0 {
                let mut gone = Info::new(Key::EMPTY, crate::types::Value::Undef);
                gone.mark_removed();
                return Some(gone);
            }
            // SAFETY: our own array, edited in place by the handler.
            unsafe { super::conv::info_from_c(i) }.ok()
        })
        .collect()
}

/// `pmix_event_notification_cbfunc_fn_t`: the handler is done.
unsafe extern "C" fn complete(
    status: i32,
    results: *mut pmix_info_t,
    nresults: usize,
    cbfunc: Option<OpCb>,
    thiscbdata: *mut c_void,
    notification_cbdata: *mut c_void,
) {
    super::guard((), || {
        let live = lock(&LIVE)
            .as_mut()
            .is_some_and(|s| s.remove(&(notification_cbdata as usize)));
        if !live {
            eprintln!("fastpmix: an event handler completed an unknown or finished event; ignored");
            return;
        }
        // SAFETY: `notification_cbdata` is a `Call` we leaked and removed
        // from LIVE just now, so this is its only owner.
        let call = unsafe { Box::from_raw(notification_cbdata as *mut Call) };
        // SAFETY: the handler's results, valid until its cbfunc (by contract).
        let returned = unsafe { infos_from_c(results, nresults) }.unwrap_or_default();
        if let Some(cb) = cbfunc {
            // SAFETY: the handler's own release callback and data.
            unsafe { cb(Status::SUCCESS.0, thiscbdata) };
        }
        let Call {
            mut inv,
            info,
            results: given_c,
            given,
            ..
        } = *call;
        // SAFETY: the arrays we built for this call.
        let now = unsafe { edited(given_c.0, given_c.1) };
        if now != given {
            *inv.results_mut() = now;
        }
        // SAFETY: our arrays; nothing refers to them after completion.
        unsafe {
            spare::give_back(info.0, info.1, info.2);
            free_infos(given_c.0, given_c.1);
        }
        inv.complete(Status(status), returned);
    })
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
        // SAFETY: by contract.
        let codes: Vec<Status> = unsafe { slice(codes, ncodes) }?
            .iter()
            .map(|&c| Status(c))
            .collect();
        // SAFETY: by contract.
        let infos = unsafe { infos_from_c(info, ninfo) }?;
        let reg = Registration::new(&codes, CHandler(h)).infos(infos);
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
        let run = move || match role {
            Role::Client(c) => c.deregister(r),
            Role::Server(s) => s.engine().deregister(r),
        };
        let Some(cb) = cbfunc else {
            return run();
        };
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
        // SAFETY: by contract.
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
                    // SAFETY: by contract.
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
