//! The C ABI: the PMIx Standard's client and server functions, with the
//! names, types and layouts of `include/pmix.h` and `include/pmix_server.h`.
//!
//! This is the one boundary between C and the safe Rust layers:
//! - every exported function runs inside [`guard`]/[`status_of`], so no
//!   panic unwinds into C (a panic becomes `PMIX_ERROR`);
//! - C data reaches Rust only through the checked conversions of [`conv`]
//!   (NULL, unterminated or oversized keys and namespaces, unknown type
//!   tags: `PMIX_ERR_BAD_PARAM`);
//! - everything handed to C is malloc'd ([`cmem`]) and released by the
//!   Standard's macros (the exports behind them: [`macros`]);
//! - callbacks never run on the caller's stack: they run on the library's
//!   threads after the call returned ([`defer`]).
//!
//! Before `PMIx_Init` (or `PMIx_server_init`) every call returns
//! `PMIX_ERR_INIT`, but for the helpers that need no connection (the
//! structure, string and argv helpers of [`macros`], `strings`, `argv`)
//! and the functions fastpmix does not implement ([`unsupported`]), which
//! return `PMIX_ERR_NOT_SUPPORTED` whatever their arguments, NULL included.

#![allow(non_snake_case)]

mod app_setup;
mod argv;
mod chain_mirror;
mod client;
mod cmem;
mod conv;
pub(crate) mod ctypes;
mod data;
mod dpm;
mod events;
mod host_dpm;
mod jobs;
mod macros;
mod modex;
mod pubsub;
mod server;
mod spare;
mod strings;
pub(crate) mod unsupported;
mod upcall;

#[doc(hidden)]
pub use events::c_registration;

use crate::client::Client;
use crate::server::Server;
use crate::types::Status;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};

/// Runs `f`; a panic becomes `fallback` (and is reported on stderr by the
/// panic hook) instead of unwinding into C.
pub(crate) fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// An exported function returning `pmix_status_t`.
pub(crate) fn status_of(f: impl FnOnce() -> Result<(), Status>) -> i32 {
    guard(Status::ERROR.0, || match f() {
        Ok(()) => Status::SUCCESS.0,
        Err(s) => s.0,
    })
}

use crate::sync::lock;

/// The process's C-level state: the client (with `PMIx_Init`'s reference
/// count) and the embedded server, if any.
struct State {
    client: Option<(Client, usize)>,
    server: Option<Arc<Server>>,
}

static STATE: Mutex<State> = Mutex::new(State {
    client: None,
    server: None,
});

/// The client `PMIx_Init` connected, or `PMIX_ERR_INIT`.
/// This process's client; `PMIX_ERR_INIT` before `PMIx_Init`, and in a
/// child forked after it (the connection is the parent's).
fn client() -> Result<Client, Status> {
    lock(&STATE)
        .client
        .as_ref()
        .filter(|(c, _)| !c.forked())
        .map(|(c, _)| c.clone())
        .ok_or(Status::ERR_INIT)
}

/// Who answers an event call: this process's client, or the server a
/// resource manager embedded with `PMIx_server_init`.
enum Role {
    Client(Client),
    Server(Arc<Server>),
}

fn role() -> Result<Role, Status> {
    let st = lock(&STATE);
    if let Some((c, _)) = &st.client {
        if c.forked() {
            // A child forked after PMIx_Init: the connection is the parent's.
            return Err(Status::ERR_INIT);
        }
        Ok(Role::Client(c.clone()))
    } else if let Some(s) = &st.server {
        Ok(Role::Server(s.clone()))
    } else {
        Err(Status::ERR_INIT)
    }
}

/// A C pointer carried to another thread. The C caller owns what it points
/// to and, by the Standard's contract, keeps it valid until its callback.
#[derive(Clone, Copy)]
pub(crate) struct CPtr(pub *mut c_void);
// SAFETY: the pointer is only handed back to the C code that gave it, on
// the thread the Standard allows (any library thread).
unsafe impl Send for CPtr {}

/// Opens when the exported function that created it returns (drop), so a
/// deferred callback cannot overtake the call's return.
pub(crate) struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn new() -> (Gate, GateWait) {
        let g = Arc::new((Mutex::new(false), Condvar::new()));
        (Gate(g.clone()), GateWait(g))
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        *lock(&self.0 .0) = true;
        self.0 .1.notify_all();
    }
}

pub(crate) struct GateWait(Arc<(Mutex<bool>, Condvar)>);

impl GateWait {
    fn wait(self) {
        let mut open = lock(&self.0 .0);
        while !*open {
            open = self.0 .1.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Wraps a completion that a library thread may run at any time so that it
/// first waits for the returned gate: the exported function that started
/// the operation keeps the gate until it returns, so the C callback never
/// runs before the call that registered it has returned.
pub(crate) fn after_return<A: Send + 'static>(
    f: impl FnOnce(A) + Send + 'static,
) -> (Gate, impl FnOnce(A) + Send + 'static) {
    let (gate, wait) = Gate::new();
    (gate, move |a| {
        wait.wait();
        f(a)
    })
}

/// Runs `job` on the library's callback thread once the returned gate is
/// dropped (keep it alive until the exported function returns), in FIFO
/// order with every other callback of the library: the client's request
/// completions run on the same thread (`client::callbacks` has the order).
/// Never panics: without a callback thread the job runs when the gate is
/// dropped.
pub(crate) fn defer(job: impl FnOnce() + Send + 'static) -> crate::client::callbacks::Gate {
    crate::client::callbacks::defer(job)
}
