//! `PMIx_Register_event_handler`, `PMIx_Deregister_event_handler` and
//! `PMIx_Notify_event`: C handlers on top of the event engine.
//!
//! A C handler gets the event's info array (plus, as the Standard asks, its
//! own `PMIX_EVENT_HDLR_NAME` and `PMIX_EVENT_RETURN_OBJECT`), its source
//! and the results so far as malloc'd arrays that stay valid until the
//! later of its return and its call of the completion function (code
//! everywhere completes first and reads afterwards). The completion copies
//! the handler's results (and any edit it made in place to the results it
//! was given, RFC0018), tells the handler through its `cbfunc` that its
//! results may be released, and lets the chain go on; the arrays are freed
//! by whichever of the return and the completion comes last.

use super::conv::{infos_from_c, infos_to_c, proc_from_ptr, proc_to_c, slice};
use super::ctypes::*;
use super::helpers::free_infos;
use super::{after_return, defer, lock, role, spare, status_of, CPtr, Role};
use crate::event::{HandlerRef, Invocation, Notification, Registration};
use crate::types::fasthash::FastMap;
use crate::types::{DataRange, Info, Key, Status};
use std::ffi::c_void;
use std::sync::Mutex;

/// What a C handler was handed: its source, info and results arrays. The
/// handler holds pointers into them, so they stay put (boxed) until the
/// later of its return and its completion: example code everywhere
/// completes first and then reads the info array or the source.
struct Given {
    source: pmix_proc_t,
    /// From [`spare::fill`]: address, entries, capacity.
    info: (*mut pmix_info_t, usize, usize),
    results: (*mut pmix_info_t, usize),
}

// SAFETY: the arrays are malloc'd memory owned by this value alone (no
// thread affinity); whichever thread ends the call frees them, once.
unsafe impl Send for Given {}

impl Given {
    /// Frees the arrays.
    ///
    /// # Safety
    /// The handler has both returned and completed: nothing refers to them.
    unsafe fn release(self) {
        // SAFETY: the arrays built for this call, freed once (self is
        // consumed) after their last use, as the caller guarantees.
        unsafe {
            spare::give_back(self.info.0, self.info.1, self.info.2);
            free_infos(self.results.0, self.results.1);
        }
    }
}

/// One C handler call in progress, keyed in [`LIVE`] by its [`Given`]'s
/// address (the `notification_cbdata` the handler hands back).
struct Call {
    given: Box<Given>,
    /// Until the completion takes it.
    inv: Option<Invocation>,
    /// The results as handed out, to see the handler's edits in place.
    results: Vec<Info>,
    /// The handler function has returned.
    returned: bool,
}

/// Calls handed to C and not yet ended. A completion with any other
/// pointer (a second completion, garbage) is ignored instead of freeing
/// twice.
static LIVE: Mutex<Option<FastMap<usize, Call>>> = Mutex::new(None);

struct CHandler(NotificationFn);

impl crate::event::Handler for CHandler {
    fn handle(&self, inv: Invocation) {
        let own = inv.handler_info();
        let results = inv.results().to_vec();
        let ci = match spare::fill(&[inv.info(), &own]) {
            Ok(ci) => ci,
            Err(s) => return inv.complete(s, Vec::new()),
        };
        let Ok(cr) = infos_to_c(&results) else {
            // SAFETY: just filled; not handed out.
            unsafe { spare::give_back(ci.0, ci.1, ci.2) };
            return inv.complete(Status::ERR_NOMEM, Vec::new());
        };
        let (id, code) = (inv.id().0 as usize, inv.status().0);
        let given = Box::new(Given {
            source: proc_to_c(inv.source()),
            info: ci,
            results: cr,
        });
        let source: *const pmix_proc_t = &given.source;
        let key = &*given as *const Given as usize;
        lock(&LIVE).get_or_insert_with(FastMap::default).insert(
            key,
            Call {
                given,
                inv: Some(inv),
                results,
                returned: false,
            },
        );
        // SAFETY: the handler is the C function the caller registered; the
        // pointers are into the boxed `Given` held in LIVE, which is freed
        // only once the handler has both returned (below) and completed.
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

/// The results array after the handler ran: an entry whose key it cleared
/// is marked for removal (RFC0018).
///
/// # Safety
/// `p` holds `n` infos we built.
unsafe fn edited(p: *const pmix_info_t, n: usize) -> Vec<Info> {
    // SAFETY: `p` holds `n` infos, as the caller guarantees.
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

/// `pmix_event_notification_cbfunc_fn_t`: the handler is done. The chain
/// goes on at once; the arrays the handler was given are freed here only if
/// it has already returned (else when it does).
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
                    // SAFETY: the handler's results, valid until its cbfunc
                    // runs (the Standard's completion contract).
                    let returned = unsafe { infos_from_c(results, nresults) }.unwrap_or_default();
                    // SAFETY: the results array built for this call, alive
                    // while it is in LIVE.
                    let now = unsafe { edited(c.given.results.0, c.given.results.1) };
                    let edits = (now != c.results).then_some(now);
                    let inv = c.inv.take();
                    let ended = if c.returned { map.remove(&key) } else { None };
                    Some((inv, returned, edits, ended))
                }
                _ => None,
            }
        };
        let Some((Some(mut inv), returned, edits, ended)) = taken else {
            eprintln!("fastpmix: an event handler completed an unknown or finished event; ignored");
            return;
        };
        if let Some(cb) = cbfunc {
            // SAFETY: the handler's own release callback and data.
            unsafe { cb(Status::SUCCESS.0, thiscbdata) };
        }
        if let Some(c) = ended {
            // SAFETY: the handler returned before, and this is its completion.
            unsafe { c.given.release() };
        }
        if let Some(now) = edits {
            *inv.results_mut() = now;
        }
        inv.complete(Status(status), returned);
    })
}

/// The registration `PMIx_Register_event_handler` makes for the C handler
/// `f`, for an engine built without a client or server: the benches and
/// the tests of the C handler path use it.
#[doc(hidden)]
pub fn c_registration(codes: &[Status], f: NotificationFn) -> Registration {
    Registration::new(codes, CHandler(f))
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
