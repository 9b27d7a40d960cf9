//! Event handler registrations: the inline fast path, activation with the
//! replay list on the progress thread, and the server's account of the
//! environment codes this process registered for (it tells its host once
//! per code).

use super::replay::MAX_INLINE;
use super::Client;
use crate::event::{HandlerRef, Registration};
use crate::sync::lock;
use crate::types::Status;
use crate::wire::control::Request;
use shm_layout::{interest_bit, INTEREST_ALL};
use std::sync::{mpsc, Arc, Mutex};

impl Client {
    /// Registers an event handler (`PMIx_Register_event_handler`). Handlers
    /// for environment codes are announced to the server, which tells its
    /// host once per code.
    pub fn register(&self, reg: Registration) -> Result<HandlerRef, Status> {
        self.want(&reg);
        match self.register_inline(reg)? {
            Ok(r) => Ok(r),
            Err(reg) => self.register_then(reg, |_, _| {}),
        }
    }

    /// The fast path of [`Client::register`]: when no cached event could
    /// reach the handler there is nothing to replay, so it is activated
    /// right here, on the caller's thread, without a trip through the
    /// progress thread. Under the replay cache's lock, so that an event
    /// being cached meanwhile either is seen here (queued path) or finds
    /// the handler in the replay cache's `inline` list (delivered to it by
    /// the progress thread). `Ok(Err(reg))`: take the queued path.
    fn register_inline(
        &self,
        reg: Registration,
    ) -> Result<Result<HandlerRef, Registration>, Status> {
        let engine = &self.inner.engine;
        if engine.on_progress_thread() || self.live().is_err() {
            return Ok(Err(reg));
        }
        let mut cache = lock(&self.inner.replay);
        if cache.may_reach(reg.codes()) {
            return Ok(Err(reg));
        }
        let env = Self::environment_codes(&reg);
        let r = engine.register(reg)?;
        cache.inline.push(r);
        if cache.inline.len() >= MAX_INLINE && !cache.prune_queued {
            cache.prune_queued = self.queue_inline_pruning(r);
        }
        drop(cache);
        self.announce(r, env)?;
        Ok(Ok(r))
    }

    /// Forgets, on the progress thread, the inline registrations up to `r`
    /// (references only grow): once a job queued after them has run
    /// there, every later dispatch takes its snapshot after their
    /// registration (it checks the registry's generation first), and the
    /// dispatches before it have seen them in the list. So the list stays
    /// short when no event arrives, without a registration ever waiting
    /// for the progress thread. `false` if it could not be queued.
    fn queue_inline_pruning(&self, r: HandlerRef) -> bool {
        let cache = self.inner.replay.clone();
        self.inner
            .engine
            .run_on_progress_thread(move || {
                let mut c = lock(&cache);
                c.inline.retain(|x| x.0 > r.0);
                c.prune_queued = false;
            })
            .is_ok()
    }

    /// [`Client::register`] that also calls `on_active` with the outcome
    /// right before the handler becomes active, on the progress thread:
    /// the C ABI's non-blocking registration callback, which the Standard
    /// runs before any event reaches the handler. Called from a handler,
    /// this returns the reference at once and the handler becomes active
    /// (and is offered the cached events) when the current work returns.
    pub fn register_then(
        &self,
        reg: Registration,
        on_active: impl FnOnce(Status, HandlerRef) + Send + 'static,
    ) -> Result<HandlerRef, Status> {
        if let Err(e) = self.live() {
            on_active(e, HandlerRef(0));
            return Err(e);
        }
        self.want(&reg);
        let env = Self::environment_codes(&reg);
        let engine = &self.inner.engine;
        // Activation happens on the progress thread right after the
        // callback: the events cached so far are offered to the new handler
        // alone, before any later event (FIFO), so each reaches it exactly
        // once.
        let (tx, rx) = mpsc::channel();
        let (cache, eng) = (self.inner.replay.clone(), engine.clone());
        // Called exactly once: by the engine, or below when it refuses.
        let slot = Arc::new(Mutex::new(Some(on_active)));
        let on = slot.clone();
        let r = match engine.register_deferred(reg, move |s, r| {
            if let Some(f) = lock(&on).take() {
                f(s, r);
            }
            if s.is_success() {
                for ev in lock(&cache).events() {
                    let _ = eng.deliver_to(ev.clone(), r);
                }
            }
            let _ = tx.send(s);
        }) {
            Ok(r) => r,
            Err(e) => {
                if let Some(f) = lock(&slot).take() {
                    f(e, HandlerRef(0));
                }
                return Err(e);
            }
        };
        // From inside a handler this thread cannot wait for its own queue:
        // the handler stays pending until the current work returns.
        if !engine.on_progress_thread() {
            // No outcome: the engine shut down with the activation queued.
            rx.recv().map_err(|_| Status::ERR_INIT)?.into_result()?;
        }
        self.announce(r, env)?;
        Ok(r)
    }

    /// Adds a registration's codes to what this client's ring reader wants
    /// woken for (all of them for a default handler; none for one that
    /// takes only this process's own events). Interest only grows while
    /// the client is attached: a deregistration leaves it, costing at
    /// most a wake-up for an event no handler takes. When the ring may
    /// hold records the reader was left asleep for, the progress thread is
    /// sent to read them; it offers them to this registration as it would
    /// any event arriving around it.
    fn want(&self, reg: &Registration) {
        if reg.proc_local() {
            return;
        }
        let bits = match reg.codes() {
            [] => INTEREST_ALL,
            codes => codes.iter().fold(0, |b, c| b | interest_bit(c.0)),
        };
        if self.inner.seg.region().want(self.inner.entry, bits) {
            // A no-op job: the thread reads the ring after its queue.
            let _ = self.inner.engine.run_on_progress_thread(|| {});
        }
    }

    /// The environment codes of a registration: the server is told of them,
    /// unless it takes only this process's own events (PROC_LOCAL), which
    /// the host has no part in.
    fn environment_codes(reg: &Registration) -> Vec<Status> {
        if reg.proc_local() {
            return Vec::new();
        }
        reg.codes()
            .iter()
            .copied()
            .filter(|c| c.is_system_event())
            .collect()
    }

    /// Tells the server about a registration's environment codes (it tells
    /// its host once per code).
    fn announce(&self, r: HandlerRef, env: Vec<Status>) -> Result<(), Status> {
        if env.is_empty() {
            return Ok(());
        }
        let codes = env.iter().map(|c| c.0).collect();
        lock(&self.inner.codes).insert(r.0, env);
        self.request(&Request::RegisterEvents { codes })?;
        Ok(())
    }

    /// Non-blocking registration (the C ABI's `PMIx_Register_event_handler`
    /// with a callback). The handler takes its place and name among this
    /// process's registrations before this returns, as *pending*: chains
    /// skip it, but a later registration placed BEFORE or AFTER it finds
    /// it. On the progress thread, right before the handler becomes
    /// active: its environment codes are announced to the server (as the
    /// blocking form does before returning), `on_active` gets the outcome,
    /// and the events cached so far are offered to the handler alone,
    /// ahead of any later event. On an error return `on_active` is never
    /// called.
    pub fn register_nb(
        &self,
        reg: Registration,
        on_active: impl FnOnce(Status, HandlerRef) + Send + 'static,
    ) -> Result<(), Status> {
        self.live()?;
        self.want(&reg);
        let env = Self::environment_codes(&reg);
        let (cache, eng) = (self.inner.replay.clone(), self.inner.engine.clone());
        // Weak: the closure waits in the engine's queue; it must not keep
        // the client alive by itself.
        let me = Arc::downgrade(&self.inner);
        self.inner
            .engine
            .register_nb(reg, move |s, r| {
                if s.is_success() {
                    if let Some(inner) = me.upgrade() {
                        // A lost server only costs the environment events;
                        // the handler itself is registered.
                        let _ = Client { inner }.announce(r, env);
                    }
                }
                on_active(s, r);
                if s.is_success() {
                    for ev in lock(&cache).events() {
                        let _ = eng.deliver_to(ev.clone(), r);
                    }
                }
            })
            .into_result()
    }

    /// Deregisters a handler (`PMIx_Deregister_event_handler`).
    pub fn deregister(&self, r: HandlerRef) -> Result<(), Status> {
        self.inner.engine.deregister(r)?;
        self.forget_registration(r);
        Ok(())
    }

    /// What this client kept about a registration that is gone: its place
    /// among the inline replays, and the environment codes the server was
    /// told of (it tells its host when the last one goes).
    pub(super) fn forget_registration(&self, r: HandlerRef) {
        lock(&self.inner.replay).inline.retain(|x| *x != r);
        if let Some(codes) = lock(&self.inner.codes).remove(&r.0) {
            let _ = self.request(&Request::DeregisterEvents {
                codes: codes.iter().map(|c| c.0).collect(),
            });
        }
    }
}
