//! The server interface for resource-manager daemons written in C:
//! `PMIx_server_init` embeds a [`Server`] whose host is the daemon's
//! `pmix_server_module_t` ([`CHost`]).
//!
//! How upcalls complete, whatever the host does (a callback inside the
//! upcall, a callback and an error return both, none): `upcall.rs`. The
//! data-exchange upcalls (`fence_nb`, `direct_modex`) and
//! `PMIx_server_dmodex_request`: `modex.rs`.

use super::cmem::strdup;
use super::conv::{infos_from_c, nspace_from_ptr, proc_from_ptr, str_from_c};
use super::ctypes::*;
use super::upcall::{info_done, op_done, park, returned, upcall_over, Finish, Keep, Payload};
use super::{defer, lock, status_of, CPtr, STATE};
use crate::server::{Done, Host, HostEvent, Server};
use crate::sync::Published;
use crate::types::find_info;
use crate::types::{AllocDirective, App, Info, Nspace, PData, Proc, Status, Value};
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex, Weak};

/// The daemon's module as the server's [`Host`].
pub(super) struct CHost {
    pub(super) m: pmix_server_module_t,
    /// `server_object` of each registered client.
    objects: Mutex<HashMap<Proc, CPtr>>,
}

// SAFETY: the module holds function pointers the daemon gave for calls from
// any thread (the Standard lets the server library call its host from its
// own threads); the opaque entries are never dereferenced.
unsafe impl Send for CHost {}
// SAFETY: as above; `objects` is behind a mutex.
unsafe impl Sync for CHost {}

fn status_done(done: Done) -> Finish {
    Box::new(move |s, _| done.status(s))
}

fn infos_done(done: Done<Vec<Info>>) -> Finish {
    Box::new(move |s, v: Payload| done.complete(s, v.infos()))
}

impl CHost {
    fn object(&self, p: &Proc) -> *mut c_void {
        lock(&self.objects)
            .get(p)
            .map_or(std::ptr::null_mut(), |o| o.0)
    }
}

impl Host for CHost {
    fn client_connected(&self, proc: &Proc, done: Done) {
        let mut keep = Keep::default();
        let p = keep.proc(proc);
        let obj = self.object(proc);
        let (c1, c2) = (self.m.client_connected, self.m.client_connected2);
        if c1.is_none() && c2.is_none() {
            return done.status(Status::ERR_NOT_SUPPORTED);
        }
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall; `p` lives until completion.
        let rc = unsafe {
            match (c2, c1) {
                (Some(f), _) => f(
                    p,
                    obj,
                    std::ptr::null_mut(),
                    0,
                    Some(op_done),
                    id as *mut c_void,
                ),
                (None, Some(f)) => f(p, obj, Some(op_done), id as *mut c_void),
                (None, None) => Status::ERR_NOT_SUPPORTED.0,
            }
        };
        returned(id, rc);
    }

    /// Only for a client that called `PMIx_Finalize`, as the Standard
    /// defines the upcall: hosts count finalizations (Open MPI's runtime
    /// takes a process that ends without one for an abnormal end). A lost
    /// client reaches a C host as the death event the server raises.
    fn client_finalized(&self, proc: &Proc, lost: bool, done: Done) {
        let Some(f) = self.m.client_finalized.filter(|_| !lost) else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(proc);
        let obj = self.object(proc);
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall; `p` lives until completion.
        returned(id, unsafe { f(p, obj, Some(op_done), id as *mut c_void) });
    }

    fn abort(&self, proc: &Proc, status: Status, msg: &str, targets: &[Proc], done: Done) {
        let Some(f) = self.m.abort else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(proc);
        let m = keep.string(strdup(msg));
        let (tp, tn) = keep.procs(targets);
        let obj = self.object(proc);
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall; every pointer lives until completion.
        let rc = unsafe {
            f(
                p,
                obj,
                status.0,
                m,
                tp,
                tn,
                Some(op_done),
                id as *mut c_void,
            )
        };
        returned(id, rc);
    }

    fn notify_event(&self, ev: &HostEvent, done: Done) {
        let Some(f) = self.m.notify_event else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let src = keep.proc(&ev.source);
        let (ip, n) = match keep.infos(ev.info) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall; the arrays live until completion.
        let rc = unsafe {
            f(
                ev.code.0,
                src,
                ev.range.0,
                ip,
                n,
                Some(op_done),
                id as *mut c_void,
            )
        };
        returned(id, rc);
    }

    fn relays_events(&self) -> bool {
        self.m.notify_event.is_some()
    }

    fn register_events(&self, codes: &[Status], done: Done) {
        let Some(f) = self.m.register_events else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        keep.codes = codes.iter().map(|c| c.0).collect();
        let (cp, cn) = (keep.codes.as_ptr() as *mut i32, keep.codes.len());
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall; `codes` (moved, heap unchanged) lives
        // until completion.
        returned(id, unsafe {
            f(
                cp,
                cn,
                std::ptr::null(),
                0,
                Some(op_done),
                id as *mut c_void,
            )
        });
    }

    fn deregister_events(&self, codes: &[Status], done: Done) {
        let Some(f) = self.m.deregister_events else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        keep.codes = codes.iter().map(|c| c.0).collect();
        let (cp, cn) = (keep.codes.as_ptr() as *mut i32, keep.codes.len());
        let id = park(status_done(done), keep);
        // SAFETY: as register_events.
        returned(id, unsafe { f(cp, cn, Some(op_done), id as *mut c_void) });
    }

    fn allocate(&self, requestor: &Proc, d: AllocDirective, info: &[Info], done: Done<Vec<Info>>) {
        let Some(f) = self.m.allocate else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(requestor);
        let (ip, n) = match keep.infos(info) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(infos_done(done), keep);
        // SAFETY: the daemon's upcall; the arrays live until completion.
        returned(id, unsafe {
            f(p, d.0, ip, n, Some(info_done), id as *mut c_void)
        });
    }

    fn job_control(
        &self,
        requestor: &Proc,
        targets: &[Proc],
        dirs: &[Info],
        done: Done<Vec<Info>>,
    ) {
        let Some(f) = self.m.job_control else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(requestor);
        let (tp, tn) = keep.procs(targets);
        let (ip, n) = match keep.infos(dirs) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(infos_done(done), keep);
        // SAFETY: the daemon's upcall; the arrays live until completion.
        returned(id, unsafe {
            f(p, tp, tn, ip, n, Some(info_done), id as *mut c_void)
        });
    }

    fn monitor(
        &self,
        requestor: &Proc,
        monitor: &Info,
        error: Status,
        dirs: &[Info],
        done: Done<Vec<Info>>,
    ) {
        let Some(f) = self.m.monitor else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(requestor);
        let m = match keep.infos(std::slice::from_ref(monitor)) {
            Ok(a) => a.0,
            Err(e) => return done.status(e),
        };
        let (ip, n) = match keep.infos(dirs) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(infos_done(done), keep);
        // SAFETY: the daemon's upcall; the arrays live until completion.
        returned(id, unsafe {
            f(p, m, error.0, ip, n, Some(info_done), id as *mut c_void)
        });
    }

    fn log(&self, requestor: &Proc, data: &[Info], dirs: &[Info], done: Done) {
        let Some(f) = self.m.log else {
            return done.status(Status::ERR_NOT_SUPPORTED);
        };
        let mut keep = Keep::default();
        let p = keep.proc(requestor);
        let (dp, dn) = match keep.infos(data) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let (ip, n) = match keep.infos(dirs) {
            Ok(a) => a,
            Err(e) => return done.status(e),
        };
        let id = park(status_done(done), keep);
        // SAFETY: the daemon's upcall (void: its callback always comes).
        unsafe { f(p, dp, dn, ip, n, Some(op_done), id as *mut c_void) };
        upcall_over(id);
    }

    fn fence_nb(&self, procs: &[Proc], info: &[Info], data: &[u8], done: Done<Vec<u8>>) {
        self.fence_upcall(procs, info, data, done)
    }

    fn direct_modex(&self, proc: &Proc, info: &[Info], done: Done<Vec<u8>>) {
        self.modex_upcall(proc, info, done)
    }

    // Publish/lookup and dynamic processes: `src/capi/host_dpm.rs`.
    fn publish(&self, proc: &Proc, info: &[Info], done: Done) {
        self.publish_upcall(proc, info, done)
    }

    fn lookup(&self, proc: &Proc, keys: &[String], info: &[Info], done: Done<Vec<PData>>) {
        self.keys_upcall(proc, keys, info, Ok(done))
    }

    fn unpublish(&self, proc: &Proc, keys: &[String], info: &[Info], done: Done) {
        self.keys_upcall(proc, keys, info, Err(done))
    }

    fn spawn(&self, proc: &Proc, job_info: &[Info], apps: &[App], done: Done<Option<Nspace>>) {
        self.spawn_upcall(proc, job_info, apps, done)
    }

    fn connect(&self, procs: &[Proc], info: &[Info], done: Done) {
        self.connect_upcall(procs, info, done, false)
    }

    fn disconnect(&self, procs: &[Proc], info: &[Info], done: Done) {
        self.connect_upcall(procs, info, done, true)
    }
}

pub(super) fn server() -> Result<Arc<Server>, Status> {
    lock(&STATE).server.clone().ok_or(Status::ERR_INIT)
}

/// The embedded server for `PMIx_server_setup_fork`, read without a lock:
/// hosts call it in the child they forked, where `STATE`, if another thread
/// held it at the fork, is held forever.
static FORK_VIEW: Published<Weak<Server>> = Published::new();

/// Runs `cbfunc` (if any) with `s` after the call returns; without one the
/// call was blocking and `s` is its result.
fn answer(s: Result<(), Status>, cbfunc: Option<OpCb>, cbdata: *mut c_void) -> Result<(), Status> {
    let Some(cb) = cbfunc else { return s };
    let st = match s {
        Ok(()) => Status::SUCCESS,
        Err(e) => e,
    };
    let cbdata = CPtr(cbdata);
    let _gate = defer(move || {
        let cbdata = cbdata;
        // SAFETY: the caller's callback with its own cbdata.
        unsafe { cb(st.0, cbdata.0) }
    });
    Ok(())
}

/// `PMIx_server_init`: starts the node server with `module` as its host.
/// Attributes: `PMIX_SERVER_TMPDIR` (where the control socket goes),
/// `PMIX_SERVER_NSPACE`/`PMIX_SERVER_RANK` (the server's identity), and
/// the server builder's own (see `server::ServerBuilder::attribute`).
///
/// # Safety
/// `module` NULL or a valid module; `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_init(
    module: *mut pmix_server_module_t,
    info: *mut pmix_info_t,
    ninfo: usize,
) -> i32 {
    status_of(|| {
        let mut st = lock(&STATE);
        if st.server.is_some() {
            return Ok(());
        }
        // SAFETY: the caller's obligation (this function's `# Safety`): `module` NULL or a valid
        // module; `info` NULL or `ninfo` valid infos.
        let infos = unsafe { infos_from_c(info, ninfo) }?;
        // SAFETY: by contract; NULL = a module with no upcalls.
        let m = match unsafe { module.as_ref() } {
            Some(m) => *m,
            // SAFETY: all-zero is a valid module (every entry NULL / None).
            None => unsafe { std::mem::zeroed() },
        };
        let host = Arc::new(CHost {
            m,
            objects: Mutex::new(HashMap::new()),
        });
        *lock(&HOST) = Some(host.clone());
        let mut b = Server::builder().host(host);
        let (mut ns, mut rank) = (None, 0u32);
        for i in infos {
            if i.key == SERVER_TMPDIR {
                // The server makes its private directory in it (mkdtemp)
                // and removes it at finalize.
                b = b.dir_in(i.value.as_str().ok_or(Status::ERR_BAD_PARAM)?);
            } else if i.key == SERVER_NSPACE {
                ns = Some(i.value.as_str().ok_or(Status::ERR_BAD_PARAM)?.to_owned());
            } else if i.key == SERVER_RANK {
                rank = i
                    .value
                    .as_integer()
                    .and_then(|r| u32::try_from(r).ok())
                    .ok_or(Status::ERR_BAD_PARAM)?;
            } else {
                b = b.attribute(i);
            }
        }
        if let Some(ns) = ns {
            b = b.me(Proc::new(&ns, rank)?);
        }
        let s = Arc::new(b.start()?);
        FORK_VIEW.set(Some(Arc::downgrade(&s)));
        st.server = Some(s);
        Ok(())
    })
}

use crate::types::attrs::{
    PMIX_LOCAL_SIZE as LOCAL_SIZE, PMIX_SERVER_NSPACE as SERVER_NSPACE,
    PMIX_SERVER_RANK as SERVER_RANK, PMIX_SERVER_TMPDIR as SERVER_TMPDIR,
};

/// `PMIx_server_finalize`: stops the server (clients lose their
/// connection and are told so). Every callback the library owed the host
/// has run when it returns (a deregistration's just before it, the
/// completions of upcalls the stop ended): none runs concurrently with
/// the host's own teardown, unless finalize is called from a callback.
#[no_mangle]
pub extern "C" fn PMIx_server_finalize() -> i32 {
    status_of(|| {
        crate::client::callbacks::flush();
        let s = lock(&STATE).server.take().ok_or(Status::ERR_INIT)?;
        FORK_VIEW.set(None);
        s.stop();
        crate::client::callbacks::flush();
        Ok(())
    })
}

/// Hands a generated string to C.
///
/// # Safety
/// `out` NULL or writable.
unsafe fn give(out: *mut *mut c_char, s: Result<String, Status>) -> Result<(), Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `out` NULL or writable.
    let out = unsafe { out.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
    *out = strdup(&s?);
    if out.is_null() {
        Err(Status::ERR_NOMEM)
    } else {
        Ok(())
    }
}

/// `PMIx_generate_regex`: a compact form of a comma-separated node list that
/// `PMIX_NODE_MAP` accepts (see docs/regex.md); free it with `free`.
///
/// # Safety
/// `input` terminated; `regex` writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_generate_regex(input: *const c_char, regex: *mut *mut c_char) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `input` terminated;
        // `regex` writable.
        let s = unsafe { str_from_c(input) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `input` terminated;
        // `regex` writable.
        unsafe { give(regex, Ok(crate::server::regex::generate_regex(s))) }
    })
}

/// `PMIx_generate_ppn`: a compact form of per-node rank lists (nodes
/// separated by `;`) that `PMIX_PROC_MAP` accepts.
///
/// # Safety
/// `input` terminated; `ppn` writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_generate_ppn(input: *const c_char, ppn: *mut *mut c_char) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `input` terminated; `ppn`
        // writable.
        let s = unsafe { str_from_c(input) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `input` terminated; `ppn`
        // writable.
        unsafe { give(ppn, crate::server::regex::try_generate_ppn(s)) }
    })
}

/// `PMIx_server_register_nspace`: the job information clients of `nspace`
/// read with `PMIx_Get` (`PMIX_LOCAL_SIZE` defaults to `nlocalprocs`).
///
/// # Safety
/// `nspace` terminated; `info` NULL or `ninfo` valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_register_nspace(
    nspace: *const c_char,
    nlocalprocs: i32,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let s = server()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `nspace` terminated;
        // `info` NULL or `ninfo` valid infos.
        let ns = unsafe { nspace_from_ptr(nspace) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `nspace` terminated;
        // `info` NULL or `ninfo` valid infos.
        let mut infos = unsafe { infos_from_c(info, ninfo) }?;
        if nlocalprocs >= 0 && find_info(&infos, &LOCAL_SIZE).is_none() {
            infos.push(Info::new(LOCAL_SIZE, Value::Uint32(nlocalprocs as u32)));
        }
        answer(s.register_nspace(&ns, infos), cbfunc, cbdata)
    })
}

/// `PMIx_server_deregister_nspace`.
///
/// # Safety
/// `nspace` terminated.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_deregister_nspace(
    nspace: *const c_char,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) {
    let _ = status_of(|| {
        let r = server().and_then(|s| {
            // SAFETY: the caller's obligation (this function's `# Safety`): `nspace` terminated.
            let ns = unsafe { nspace_from_ptr(nspace) }?;
            s.deregister_nspace(&ns)
        });
        answer(r, cbfunc.or(Some(ignore)), cbdata)
    });
}

unsafe extern "C" fn ignore(_: i32, _: *mut c_void) {}

/// `PMIx_server_register_client`: `proc` may connect with this uid/gid;
/// `server_object` comes back in the module's upcalls about it.
///
/// # Safety
/// `proc_` valid.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_register_client(
    proc_: *const pmix_proc_t,
    uid: u32,
    gid: u32,
    server_object: *mut c_void,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32 {
    status_of(|| {
        let s = server()?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` valid.
        let p = unsafe { proc_from_ptr(proc_) }?;
        let r = s.register_client_any_order(&p, uid, gid);
        if r.is_ok() {
            if let Some(h) = host_of(&s) {
                lock(&h.objects).insert(p, CPtr(server_object));
            }
        }
        answer(r, cbfunc, cbdata)
    })
}

/// `PMIx_server_deregister_client`.
///
/// # Safety
/// `proc_` valid.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_deregister_client(
    proc_: *const pmix_proc_t,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) {
    let _ = status_of(|| {
        let r = server().and_then(|s| {
            // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` valid.
            let p = unsafe { proc_from_ptr(proc_) }?;
            if let Some(h) = host_of(&s) {
                lock(&h.objects).remove(&p);
            }
            match s.deregister_client(&p) {
                Err(Status::ERR_NOT_FOUND) if s.forget_early_client(&p) => Ok(()),
                r => r,
            }
        });
        answer(r, cbfunc.or(Some(ignore)), cbdata)
    });
}

/// The C host of the server `PMIx_server_init` started.
static HOST: Mutex<Option<Arc<CHost>>> = Mutex::new(None);

fn host_of(_: &Server) -> Option<Arc<CHost>> {
    lock(&HOST).clone()
}

/// `PMIx_server_setup_fork`: adds to `*env` (a NULL-terminated, malloc'd
/// `KEY=VALUE` array, created when NULL) what a child needs to find the
/// server; existing entries for the same variables are replaced.
///
/// # Safety
/// `proc_` valid; `env` writable; `*env` NULL or a malloc'd array of
/// malloc'd strings.
#[no_mangle]
pub unsafe extern "C" fn PMIx_server_setup_fork(
    proc_: *const pmix_proc_t,
    env: *mut *mut *mut c_char,
) -> i32 {
    status_of(|| {
        let s = FORK_VIEW
            .get()
            .and_then(Weak::upgrade)
            .ok_or(Status::ERR_INIT)?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` valid; `env`
        // writable; `*env` NULL or a malloc'd array of malloc'd strings.
        let p = unsafe { proc_from_ptr(proc_) }?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `proc_` valid; `env`
        // writable; `*env` NULL or a malloc'd array of malloc'd strings.
        let env = unsafe { env.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        for (k, v) in s.setup_fork(&p)? {
            // SAFETY: `*env` is an argv-style malloc'd array, by contract.
            unsafe { setenv_in(env, &k, &v) }?;
        }
        Ok(())
    })
}

/// Sets `k=v` in a malloc'd, NULL-terminated environment array.
///
/// # Safety
/// `*env` NULL or a malloc'd NULL-terminated array of malloc'd strings.
unsafe fn setenv_in(env: &mut *mut *mut c_char, k: &str, v: &str) -> Result<(), Status> {
    let entry = strdup(&format!("{k}={v}"));
    if entry.is_null() {
        return Err(Status::ERR_NOMEM);
    }
    let prefix = format!("{k}=");
    let mut n = 0usize;
    if !env.is_null() {
        // SAFETY: NULL-terminated by contract.
        unsafe {
            while !(*env.add(n)).is_null() {
                let cur = std::ffi::CStr::from_ptr(*env.add(n));
                if cur.to_bytes().starts_with(prefix.as_bytes()) {
                    libc::free(*env.add(n) as *mut c_void);
                    *env.add(n) = entry;
                    return Ok(());
                }
                n += 1;
            }
        }
    }
    // SAFETY: growing the caller's malloc'd array by one slot (+ terminator).
    let grown = unsafe {
        libc::realloc(
            *env as *mut c_void,
            (n + 2) * std::mem::size_of::<*mut c_char>(),
        )
    } as *mut *mut c_char;
    if grown.is_null() {
        // SAFETY: our own string.
        unsafe { libc::free(entry as *mut c_void) };
        return Err(Status::ERR_NOMEM);
    }
    // SAFETY: `grown` has n + 2 slots.
    unsafe {
        *grown.add(n) = entry;
        *grown.add(n + 1) = std::ptr::null_mut();
    }
    *env = grown;
    Ok(())
}
