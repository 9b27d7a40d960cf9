//! The publish, lookup, unpublish, spawn, connect and disconnect upcalls
//! of a C host (`pmix_server_module_t`): what [`CHost`] calls for
//! `server::pubsub` and `server::dpm`. A NULL upcall is not supported
//! (`PMIX_ERR_NOT_SUPPORTED` to the client). Completion follows
//! `src/capi/upcall.rs`: a host may call back inside the upcall (Open
//! MPI's runtime does), later from any thread, or answer by its return
//! status; what the upcall was given lives until both are over.
//!
//! What the host hands back is copied inside its callback (the Standard
//! gives lookup's and spawn's callbacks no release function: the data is
//! the host's again when the callback returns). A found item that does not
//! convert (a NULL or unterminated key, a value fastpmix does not carry)
//! is left out.

use super::conv::{key_text, nspace_from_ptr, proc_from_c, slice, value_from_c};
use super::ctypes::*;
use super::server::CHost;
use super::upcall::{finish, op_done, park, returned, AppArray, Finish, Keep, Payload};
use crate::server::Done;
use crate::types::{App, Info, Key, Nspace, PData, Proc, Status};
use std::ffi::{c_char, c_void};

fn status_done(done: Done) -> Finish {
    Box::new(move |s, _| done.status(s))
}

/// `pmix_lookup_cbfunc_t` for the `lookup` upcall.
unsafe extern "C" fn lookup_done(
    status: i32,
    data: *mut pmix_pdata_t,
    ndata: usize,
    cbdata: *mut c_void,
) {
    super::guard((), || {
        // SAFETY: the host's `ndata` items, valid during its callback.
        let found = match unsafe { slice(data as *const pmix_pdata_t, ndata) } {
            Ok(items) => items
                .iter()
                .filter_map(|d| {
                    let proc = proc_from_c(&d.proc_).ok()?;
                    // SAFETY: a 512-byte key array, read up to its
                    // terminator.
                    let key = Key::new(unsafe { key_text(d.key.as_ptr()) }.ok()?).ok()?;
                    // SAFETY: the value's pointers are valid for its tag
                    // (the host's obligation).
                    let value = unsafe { value_from_c(&d.value) }.ok()?;
                    Some(PData { proc, key, value })
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        finish(cbdata as u64, Status(status), Payload::Found(found));
    })
}

/// `pmix_spawn_cbfunc_t` for the `spawn` upcall.
unsafe extern "C" fn spawn_done(status: i32, nspace: *mut c_char, cbdata: *mut c_void) {
    super::guard((), || {
        // SAFETY: NULL or the host's namespace, readable up to its
        // terminator or 256 bytes.
        let ns = unsafe { nspace_from_ptr(nspace) }.ok().map(Box::new);
        finish(cbdata as u64, Status(status), Payload::Nspace(ns));
    })
}

impl CHost {
    pub(super) fn publish_upcall(&self, proc: &Proc, info: &[Info], done: Done) {
        let Some(f) = self.m.publish else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(proc);
        let (ip, n) = match keep.infos(info) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall; what it is given lives until it
        // returned and completed.
        returned(id, unsafe { f(p, ip, n, Some(op_done), id as *mut c_void) });
    }

    /// `lookup` (`unpublish` false) or `unpublish`: the same arguments.
    pub(super) fn keys_upcall(
        &self,
        proc: &Proc,
        keys: &[String],
        info: &[Info],
        done: Result<Done<Vec<PData>>, Done>,
    ) {
        let supported = match &done {
            Ok(_) => self.m.lookup.is_some(),
            Err(_) => self.m.unpublish.is_some(),
        };
        let fail = |done: Result<Done<Vec<PData>>, Done>, s| match done {
            Ok(d) => d.status(s),
            Err(d) => d.status(s),
        };
        if !supported {
            return fail(done, Status::ERR_NOT_SUPPORTED);
        }
        let mut keep = Keep::default();
        let p = keep.proc(proc);
        let arrays = keep.infos(info).and_then(|i| Ok((i, keep.argv(keys)?)));
        let ((ip, n), kp) = match arrays {
            Ok(a) => a,
            Err(e) => return fail(done, e),
        };
        // An unpublish of every key is a NULL array, as the client's was.
        let kp = if keys.is_empty() && done.is_err() {
            std::ptr::null_mut()
        } else {
            kp
        };
        match (done, self.m.lookup, self.m.unpublish) {
            (Ok(done), Some(f), _) => {
                let id = park(
                    Box::new(move |s, v: Payload| done.complete(s, v.found())),
                    keep,
                );
                // SAFETY: the daemon's upcall; as publish_upcall.
                returned(id, unsafe {
                    f(p, kp, ip, n, Some(lookup_done), id as *mut c_void)
                });
            }
            (Err(done), _, Some(f)) => {
                let id = park(status_done(done), keep);
                // SAFETY: the daemon's upcall; as publish_upcall.
                returned(id, unsafe {
                    f(p, kp, ip, n, Some(op_done), id as *mut c_void)
                });
            }
            (done, _, _) => fail(done, Status::ERR_NOT_SUPPORTED),
        }
    }

    pub(super) fn spawn_upcall(
        &self,
        proc: &Proc,
        job_info: &[Info],
        apps: &[App],
        done: Done<Option<Nspace>>,
    ) {
        let Some(f) = self.m.spawn else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(proc);
        let built = keep
            .infos(job_info)
            .and_then(|j| Ok((j, c_apps(&mut keep, apps)?)));
        let ((ip, n), (ap, an)) = match built {
            Ok(b) => b,
            Err(e) => return done.status(e),
        };
        let id = park(
            Box::new(move |s, v: Payload| done.complete(s, v.nspace())),
            keep,
        );
        // SAFETY: the daemon's upcall; as publish_upcall.
        returned(id, unsafe {
            f(p, ip, n, ap, an, Some(spawn_done), id as *mut c_void)
        });
    }

    pub(super) fn connect_upcall(&self, procs: &[Proc], info: &[Info], done: Done, disc: bool) {
        let f = if disc {
            self.m.disconnect
        } else {
            self.m.connect
        };
        let Some(f) = f else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let (pp, pn) = keep.procs(procs);
        let (ip, n) = match keep.infos(info) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall; as publish_upcall.
        returned(id, unsafe {
            f(pp, pn, ip, n, Some(op_done), id as *mut c_void)
        });
    }
}

/// `apps` as a C array kept for the upcall, with every string, array and
/// info list it points to.
fn c_apps(keep: &mut Keep, apps: &[App]) -> Result<(*const pmix_app_t, usize), Status> {
    let mut v = Vec::with_capacity(apps.len());
    for a in apps {
        let cwd = if a.cwd.is_empty() {
            std::ptr::null_mut()
        } else {
            keep.string(super::cmem::strdup(&a.cwd))
        };
        let (info, ninfo) = keep.infos(&a.info)?;
        v.push(pmix_app_t {
            cmd: keep.string(super::cmem::strdup(&a.cmd)),
            argv: keep.argv(&a.argv)?,
            env: keep.argv(&a.env)?,
            cwd,
            maxprocs: a.maxprocs,
            info,
            ninfo,
        });
    }
    let b: Box<[pmix_app_t]> = v.into_boxed_slice();
    let p = b.as_ptr();
    keep.apps.push(AppArray::new(b));
    Ok((p, apps.len()))
}
