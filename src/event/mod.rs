//! The event-chain engine of one process (a client or a server owns one).
//!
//! Pure Rust and in-process: registration with ordering directives, matching
//! of events to handlers, chains with completions and consolidated results,
//! and PROC_LOCAL notification. Transports (the shared-memory ring, the
//! server) hand events in through [`Engine::deliver`].
//!
//! ```
//! use fastpmix::event::{Engine, Notification, Registration};
//! use fastpmix::{DataRange, Proc, Status};
//! use std::sync::mpsc;
//!
//! let me = Proc::new("job-1", 0).unwrap();
//! let engine = Engine::builder(me).build().unwrap();
//! let (tx, rx) = mpsc::channel();
//! let tx = std::sync::Mutex::new(tx);
//! engine
//!     .register(Registration::new(&[Status(42)], move |inv: fastpmix::event::Invocation| {
//!         tx.lock().unwrap().send(inv.status()).unwrap();
//!         inv.complete(Status::EVENT_ACTION_COMPLETE, vec![]);
//!     }))
//!     .unwrap();
//! engine.notify(Notification::new(Status(42), me, DataRange::PROC_LOCAL)).unwrap();
//! assert_eq!(rx.recv().unwrap(), Status(42));
//! ```

mod chain;
mod engine;
mod filter;
mod registry;

#[cfg(not(loom))] // its only implementation is the C ABI's
pub(crate) use chain::Mirror;
pub use chain::{verdict, ChainOutcome, Invocation, Termination, UNNAMED_HANDLER_KEY};
pub use engine::MAX_QUEUED_LOCAL;
pub use filter::{EventClass, Origin};
pub use registry::Category;

use crate::sync::{LifeCell, LifeState};
use crate::types::{DataRange, Info, Key, Proc, Status};
use engine::{Core, Work};
use filter::EventAttrs;
use registry::Entry;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A registration reference (`size_t` in C). Starts at 1, never reused.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct HandlerRef(pub u64);

impl fmt::Display for HandlerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An event handler (`pmix_notification_fn_t`). Called on the progress
/// thread (or, when [`EngineBuilder::proc_local_inline`] is on, for this
/// process's own blocking PROC_LOCAL notify, in the notifying thread).
pub trait Handler: Send + Sync + 'static {
    /// Handles one event; must eventually call [`Invocation::complete`].
    fn handle(&self, inv: Invocation);
}

impl<F: Fn(Invocation) + Send + Sync + 'static> Handler for F {
    fn handle(&self, inv: Invocation) {
        self(inv)
    }
}

/// What `PMIx_Register_event_handler` takes: codes, directives, handler.
pub struct Registration {
    codes: Vec<Status>,
    info: Vec<Info>,
    handler: Arc<dyn Handler>,
    mirrored: bool,
}

impl Registration {
    /// A handler for `codes`: none = a default handler, one = single-code,
    /// several = multi-code.
    pub fn new(codes: &[Status], handler: impl Handler) -> Registration {
        Registration::shared(codes, Arc::new(handler))
    }

    /// As [`Registration::new`] with an already shared handler.
    pub fn shared(codes: &[Status], handler: Arc<dyn Handler>) -> Registration {
        Registration {
            codes: codes.to_vec(),
            info: Vec::new(),
            handler,
            mirrored: false,
        }
    }

    /// The codes this registration is for (empty: a default handler).
    pub fn codes(&self) -> &[Status] {
        &self.codes
    }

    /// Whether it accepts only events generated in this process
    /// (`PMIX_RANGE` = PROC_LOCAL): nothing outside the process needs to
    /// know of it.
    pub fn proc_local(&self) -> bool {
        self.info.iter().any(|i| {
            i.key.as_str() == "pmix.range"
                && filter::range_of(&i.value) == Ok(DataRange::PROC_LOCAL)
        })
    }

    /// The handler keeps the chain's results in a [`chain::Mirror`] of its
    /// own (the C ABI's handlers): it is handed them as they are.
    #[cfg_attr(loom, allow(dead_code))] // the C ABI is not built under loom
    pub(crate) fn mirrored(mut self) -> Registration {
        self.mirrored = true;
        self
    }

    /// Adds a directive (`PMIX_EVENT_HDLR_NAME`, ordering, `PMIX_RANGE`, …).
    pub fn info(mut self, i: Info) -> Registration {
        self.info.push(i);
        self
    }

    /// Adds several directives.
    pub fn infos(mut self, v: impl IntoIterator<Item = Info>) -> Registration {
        self.info.extend(v);
        self
    }
}

/// What `PMIx_Notify_event` takes.
#[derive(Clone, Debug)]
pub struct Notification {
    /// The event code.
    pub code: Status,
    /// The process named as the source.
    pub source: Proc,
    /// The target range.
    pub range: DataRange,
    /// The generator's attributes.
    pub info: Vec<Info>,
}

impl Notification {
    /// A notification without attributes.
    pub fn new(code: Status, source: Proc, range: DataRange) -> Notification {
        Notification {
            code,
            source,
            range,
            info: Vec::new(),
        }
    }

    /// Adds an attribute.
    pub fn info(mut self, i: Info) -> Notification {
        self.info.push(i);
        self
    }
}

/// An event inside the engine: validated, its targeting attributes parsed once.
#[derive(Debug)]
pub struct Event {
    code: Status,
    source: Proc,
    range: DataRange,
    info: Vec<Info>,
    origin: Origin,
    class: EventClass,
    attrs: EventAttrs,
}

impl Event {
    /// Validates a notification (range, attribute types, custom-range rules)
    /// arriving from `origin`. Its class follows from the code
    /// (`PMIX_SYSTEM_EVENT` = environment) unless set with [`Event::with_class`].
    pub fn new(n: Notification, origin: Origin) -> Result<Event, Status> {
        let class = EventClass::of(n.code);
        Event::of_class(n, origin, class)
    }

    /// Checks a notification as [`Event::new`] would (range, attribute
    /// types, custom-range rules) without building the event.
    pub fn validate(n: &Notification) -> Result<(), Status> {
        filter::parse_event(n.range, &n.info).map(|_| ())
    }

    /// [`Event::new`] with its class given: built in place, where a
    /// caller that moves the event on would copy it once more.
    pub(crate) fn of_class(
        n: Notification,
        origin: Origin,
        class: EventClass,
    ) -> Result<Event, Status> {
        let attrs = filter::parse_event(n.range, &n.info)?;
        Ok(Event {
            class,
            code: n.code,
            source: n.source,
            range: n.range,
            info: n.info,
            origin,
            attrs,
        })
    }

    /// Overrides the job/environment classification.
    pub fn with_class(mut self, class: EventClass) -> Event {
        self.class = class;
        self
    }

    /// The generator's attributes.
    pub fn info(&self) -> &[Info] {
        &self.info
    }

    /// The attributes, to add one that does not target (the server's
    /// `PMIX_EVENT_PROXY`) or to lend them to a record encoder.
    #[cfg_attr(loom, allow(dead_code))] // the server is not built under loom
    pub(crate) fn info_mut(&mut self) -> &mut Vec<Info> {
        &mut self.info
    }

    /// The process named as the source.
    pub fn source(&self) -> &Proc {
        &self.source
    }

    /// Job or environment event.
    pub fn class(&self) -> EventClass {
        self.class
    }

    /// The event code.
    pub fn code(&self) -> Status {
        self.code
    }

    /// The generator's target range.
    pub fn range(&self) -> DataRange {
        self.range
    }

    /// Does the generator's target range include the process `me`, given
    /// where the event came from? (RFC0018: the receiver re-checks a custom
    /// range; the RM range never reaches application processes.)
    pub fn targets(&self, me: &Proc) -> bool {
        match self.range {
            DataRange::RM => false,
            DataRange::PROC_LOCAL => self.origin == Origin::ThisProcess,
            DataRange::LOCAL => self.origin != Origin::Remote,
            // The server scopes the NAMESPACE events it generates about a
            // process (source: the server) to that process's namespace
            // (`server::Shared::dispatch`): an affected process of this
            // namespace brings the event in too.
            DataRange::NAMESPACE => {
                self.origin == Origin::ThisProcess
                    || self.source.nspace == me.nspace
                    || self
                        .attrs
                        .affected
                        .as_deref()
                        .is_some_and(|l| l.iter().any(|p| p.nspace == me.nspace))
            }
            DataRange::CUSTOM => self
                .attrs
                .custom_range
                .as_deref()
                .is_some_and(|l| l.iter().any(|p| p.covers(me))),
            _ => true,
        }
    }
}

/// A transport whose events the progress thread reads itself (the client's
/// ring): it sleeps on the transport's doorbell and its own at once, so an
/// arriving event costs one wake-up, not two. All methods run on the
/// progress thread.
pub trait Feed: Send + 'static {
    /// Moves whatever arrived into `out` without blocking; returns how many.
    fn pump(&mut self, out: &mut Vec<Event>) -> usize;
    /// Would `pump` find something? (Cheap: polled while spinning.)
    fn ready(&self) -> bool;
    /// The transport's half of the sleep handshake: `Some` two words and the
    /// values to sleep on (the same word twice if it has one), `None` when
    /// something arrived meanwhile.
    fn prepare_sleep(&self) -> Option<[(&crate::sync::Cell32, u32); 2]>;
    /// After a sleep that `prepare_sleep` armed.
    fn end_sleep(&self);
    /// How long the progress thread may spin before it sleeps, given the
    /// engine's configured window. A transport that knows the machine is
    /// oversubscribed answers zero (spinning on a shared core delays the
    /// very processes that would produce the next event).
    fn spin(&mut self, window: Duration) -> Duration {
        window
    }
}

/// Keeps events for handlers registered later (the client's replay list).
/// Shown every event from the [`Feed`] and every PROC_LOCAL event of this
/// process once it was dispatched, on the progress thread; and a
/// PROC_LOCAL event no handler could take on the notifying thread, which
/// then does not wake the progress thread for it (`progress` false).
/// `matched`: a handler took it; `seen(r)`: handler `r` was in the
/// snapshot that decided. Returns the handlers registered since, without a
/// replay, that must still get it alone (see `Client::register`); usually
/// none.
pub trait Keeper: Send + Sync + 'static {
    /// See the trait.
    fn keep(
        &self,
        ev: &Arc<Event>,
        matched: bool,
        seen: &dyn Fn(HandlerRef) -> bool,
        progress: bool,
    ) -> Vec<HandlerRef>;
}

/// Configures an [`Engine`].
pub struct EngineBuilder {
    me: Proc,
    spin: Duration,
    thread_name: String,
    feed: Option<Box<dyn Feed>>,
    keeper: Option<Arc<dyn Keeper>>,
    on_start: Option<Box<dyn FnOnce() -> bool + Send>>,
    inline_local: bool,
}

/// The environment variable that lets a blocking PROC_LOCAL notify run its
/// handlers in the notifying thread (`1`), see
/// [`EngineBuilder::proc_local_inline`].
pub const PROC_LOCAL_INLINE_ENV: &str = "FASTPMIX_PROC_LOCAL_INLINE";

impl EngineBuilder {
    /// Runs `f` first thing on the progress thread (its owner pins it
    /// there, see `place::apply`); `f` returning `false` turns spinning off
    /// (the thread did not get a core of its own).
    pub fn on_start(mut self, f: impl FnOnce() -> bool + Send + 'static) -> EngineBuilder {
        self.on_start = Some(Box::new(f));
        self
    }

    /// How long the progress thread spins before it sleeps on its futex.
    /// Spinning saves the ~5 µs futex wake when work arrives soon, and only
    /// pays while the progress thread has a core of its own. Default 20 µs;
    /// zero sleeps at once.
    pub fn spin(mut self, d: Duration) -> EngineBuilder {
        self.spin = d;
        self
    }

    /// Whether a blocking PROC_LOCAL notify (no callback) from a caller's
    /// thread may run this process's handlers there, when the progress
    /// thread is not dispatching and nothing is queued: no wake-up of
    /// another thread, the handler entered in well under a microsecond.
    /// OpenPMIx 4.2 always runs them in the notifying thread. Off by
    /// default (`FASTPMIX_PROC_LOCAL_INLINE=1` turns it on): on the
    /// progress thread, as RFC0002 describes, a handler that waits for its
    /// notifier (a lock the notifier holds, a flag it sets after the call)
    /// cannot wedge it, and code that relies on the handler running after
    /// the call keeps working; on, such code waits for itself, as with
    /// OpenPMIx. The library's own notifications never run inline.
    pub fn proc_local_inline(mut self, on: bool) -> EngineBuilder {
        self.inline_local = on;
        self
    }

    /// Name of the progress thread.
    pub fn thread_name(mut self, name: impl Into<String>) -> EngineBuilder {
        self.thread_name = name.into();
        self
    }

    /// Lets the progress thread read a transport's events itself.
    pub fn feed(mut self, f: Box<dyn Feed>) -> EngineBuilder {
        self.feed = Some(f);
        self
    }

    /// Shows dispatched events to `k`, which may keep them for later
    /// registrations.
    pub fn keeper(mut self, k: Arc<dyn Keeper>) -> EngineBuilder {
        self.keeper = Some(k);
        self
    }

    /// Starts the progress thread.
    pub fn build(self) -> Result<Engine, Status> {
        let feed = self.feed;
        let core = Arc::new(Core::new(
            self.me,
            self.spin,
            self.keeper,
            self.inline_local,
        ));
        let c = core.clone();
        let on_start = self.on_start;
        let thread = std::thread::Builder::new()
            .name(self.thread_name)
            .spawn(move || {
                let spins = on_start.is_none_or(|f| f());
                c.run(feed, spins)
            })
            .map_err(|_| Status::ERR_OUT_OF_RESOURCE)?;
        Ok(Engine {
            inner: Arc::new(EngineHandle {
                core,
                thread: Mutex::new(Some(thread)),
            }),
        })
    }
}

struct EngineHandle {
    core: Arc<Core>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl EngineHandle {
    fn shutdown(&self) {
        let t = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(t) = t else { return };
        self.core.stopping.set();
        self.core.push(Work::Shutdown);
        if !self.core.on_progress_thread() {
            let _ = t.join();
        }
    }
}

impl Drop for EngineHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// One process's event engine. Cheap to clone; the progress thread stops when
/// [`Engine::shutdown`] is called or the last clone is dropped.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<EngineHandle>,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("me", &self.core().me)
            .finish()
    }
}

impl Engine {
    /// Configure an engine for the process `me`.
    pub fn builder(me: Proc) -> EngineBuilder {
        EngineBuilder {
            me,
            spin: Duration::from_micros(20),
            thread_name: "fastpmix-progress".into(),
            feed: None,
            keeper: None,
            on_start: None,
            inline_local: std::env::var_os(PROC_LOCAL_INLINE_ENV).is_some_and(|v| v == "1"),
        }
    }

    /// `f` is told of each `PMIX_EVENT_ONESHOT` handler removed after its
    /// call, on the progress thread (a transport forgets what it told its
    /// server about the registration). Set once; later calls are ignored.
    #[cfg_attr(loom, allow(dead_code))] // the client is not built under loom
    pub(crate) fn on_retire(&self, f: impl Fn(HandlerRef) + Send + Sync + 'static) {
        let _ = self.core().retired.set(Box::new(f));
    }

    fn core(&self) -> &Arc<Core> {
        &self.inner.core
    }

    fn live(&self) -> Result<&Arc<Core>, Status> {
        let c = self.core();
        if c.stopping.is_set() {
            Err(Status::ERR_INIT)
        } else {
            Ok(c)
        }
    }

    /// The process this engine serves.
    pub fn me(&self) -> Proc {
        self.core().me
    }

    /// Is the calling thread this engine's progress thread (i.e. are we inside
    /// a handler or callback)?
    pub fn on_progress_thread(&self) -> bool {
        self.core().on_progress_thread()
    }

    /// Stops the progress thread after the work queued so far. Later calls
    /// return `PMIX_ERR_INIT`. Idempotent.
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }

    fn add(&self, reg: Registration, life: LifeState) -> Result<Arc<Entry>, Status> {
        let core = self.live()?;
        let spec = filter::parse_registration(&reg.info)?;
        let mut codes: Vec<i32> = reg.codes.iter().map(|c| c.0).collect();
        codes.sort_unstable();
        codes.dedup();
        let category = match codes.len() {
            0 => Category::Default,
            1 => Category::Single,
            _ => Category::Multi,
        };
        // A name is at most a key long: it becomes the handler's results key.
        let results_key = match &spec.name {
            Some(n) => Key::new(n)?,
            None => Key::from_static(UNNAMED_HANDLER_KEY),
        };
        let entry = Arc::new(Entry {
            id: HandlerRef(core.ids.next()),
            name: spec.name.map(Arc::from),
            results_key,
            codes: codes.into_boxed_slice(),
            category,
            unfiltered: spec.filter.is_trivial(),
            filter: spec.filter,
            return_object: spec.return_object,
            oneshot: spec.oneshot,
            mirrored: reg.mirrored,
            handler: reg.handler,
            life: LifeCell::new(life),
        });
        let mut r = core.registry();
        r.insert(entry.clone(), &spec.placement)?;
        core.publish(&r);
        Ok(entry)
    }

    /// Blocking registration: returns the reference. Events notified after
    /// this returns can reach the handler.
    pub fn register(&self, reg: Registration) -> Result<HandlerRef, Status> {
        Ok(self.add(reg, LifeState::Active)?.id)
    }

    /// Non-blocking registration. Returns `PMIX_SUCCESS` and calls
    /// `cb(status, ref)` later on the progress thread (never before this
    /// returns); the handler receives no event before `cb` has run. On an
    /// error the error is returned and `cb` is not called.
    pub fn register_nb(
        &self,
        reg: Registration,
        cb: impl FnOnce(Status, HandlerRef) + Send + 'static,
    ) -> Status {
        match self.register_deferred(reg, cb) {
            Ok(_) => Status::SUCCESS,
            Err(s) => s,
        }
    }

    /// [`Engine::register_nb`] that also returns the handler's reference
    /// at once (the handler stays pending until `cb` has run). For a
    /// registration made on the progress thread itself, which cannot wait
    /// for `cb`.
    pub fn register_deferred(
        &self,
        reg: Registration,
        cb: impl FnOnce(Status, HandlerRef) + Send + 'static,
    ) -> Result<HandlerRef, Status> {
        let e = self.add(reg, LifeState::Pending)?;
        let id = e.id;
        self.core().push(Work::Call(Box::new(move || {
            // Activate even if the callback panics: the registration
            // succeeded and must not stay pending forever.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                cb(Status::SUCCESS, e.id)
            }));
            e.life.activate();
        })));
        Ok(id)
    }

    fn remove(&self, r: HandlerRef) -> Result<(), Status> {
        let core = self.live()?;
        let e = {
            let mut reg = core.registry();
            let e = reg.remove(r).ok_or(Status::ERR_BAD_PARAM)?;
            core.publish(&reg);
            e
        };
        e.life.kill();
        Ok(())
    }

    /// Whether `r` names a live registration (one a deregistration would
    /// remove). False once the engine shut down.
    pub fn is_registered(&self, r: HandlerRef) -> bool {
        self.live().is_ok_and(|core| core.registry().contains(r))
    }

    /// Blocking deregistration: when it returns, the handler never runs again,
    /// not even for a chain already in flight. From a handler (the progress
    /// thread) it completes inline.
    pub fn deregister(&self, r: HandlerRef) -> Result<(), Status> {
        self.remove(r)?;
        let core = self.core();
        if core.on_progress_thread() {
            return Ok(());
        }
        // Killed above: the progress thread, if it is between announcing
        // this handler and calling it, or calling it, is waited for here;
        // any later check sees it dead. No trip through the progress
        // thread (`sync::Running`).
        core.running.wait_while_calling(r.0);
        Ok(())
    }

    /// Runs `f` on the progress thread after everything queued before it.
    /// `PMIX_ERR_INIT` once the engine has stopped.
    #[cfg_attr(loom, allow(dead_code))] // its users are not built under loom
    pub(crate) fn run_on_progress_thread(
        &self,
        f: impl FnOnce() + Send + 'static,
    ) -> Result<(), Status> {
        let core = self.live()?;
        core.push(Work::Call(Box::new(f)));
        Ok(())
    }

    /// Non-blocking deregistration: `PMIX_SUCCESS` and `cb(PMIX_SUCCESS)` later
    /// (once it is complete), or `PMIX_OPERATION_SUCCEEDED` when called on the
    /// progress thread, where it completes at once and `cb` is not called.
    /// `PMIX_ERR_BAD_PARAM` for an unknown reference.
    pub fn deregister_nb(&self, r: HandlerRef, cb: impl FnOnce(Status) + Send + 'static) -> Status {
        if let Err(s) = self.remove(r) {
            return s;
        }
        if self.core().on_progress_thread() {
            return Status::OPERATION_SUCCEEDED;
        }
        self.core()
            .push(Work::Call(Box::new(move || cb(Status::SUCCESS))));
        Status::SUCCESS
    }

    fn enqueue(
        &self,
        n: Notification,
        op: Option<engine::OpFn>,
        outcome: Option<chain::OutcomeFn>,
        may_inline: bool,
    ) -> Result<bool, Status> {
        let core = self.live()?;
        let ev = Event::new(n, Origin::ThisProcess)?;
        if ev.range == DataRange::RM {
            // Only the SMS receives RM-range events: in a client or server
            // process they travel through the server, not this engine.
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        if !ev.targets(&core.me) {
            return Ok(false);
        }
        if op.is_none() && outcome.is_none() {
            // Nobody to tell and no handler of this process in range: do not
            // wake the progress thread for nothing (a client that notifies
            // others pays one futex wake less on its way to the server). A
            // PROC_LOCAL event is offered to the keeper right here.
            let snap = core.snapshot();
            if !snap.anyone_for(&ev, &core.me) {
                if let (DataRange::PROC_LOCAL, Some(k)) = (ev.range, &core.keeper) {
                    let ev = Arc::new(ev);
                    for r in k.keep(&ev, false, &|r| snap.contains(r), false) {
                        core.push(Work::Event {
                            ev: ev.clone(),
                            op: None,
                            outcome: None,
                            only: Some(r),
                        });
                    }
                }
                return Ok(false);
            }
        }
        let mut ev = Arc::new(ev);
        // `may_inline`: the blocking notify (no `op`, no `outcome`).
        if may_inline
            && core.inline_local
            && ev.range == DataRange::PROC_LOCAL
            && !core.on_progress_thread()
        {
            match core.dispatch_inline(ev) {
                Ok(()) => return Ok(true),
                Err(back) => ev = back,
            }
        }
        // Backpressure: a notifier that outruns the progress thread waits
        // for it. The progress thread itself (a handler notifying) cannot
        // wait for itself: refused instead, the event not accepted.
        if core.on_progress_thread() {
            if !core.local.try_take() {
                return Err(Status::ERR_OUT_OF_RESOURCE);
            }
        } else {
            core.local.take();
        }
        core.push(Work::Local { ev, op, outcome });
        Ok(true)
    }

    /// Blocking notify: returns once the event is queued for this process's
    /// handlers (the process-local operation). `PMIX_ERR_BAD_PARAM` for an
    /// invalid range or attribute, `PMIX_ERR_NOT_SUPPORTED` for the RM range
    /// (no SMS attached yet).
    pub fn notify(&self, n: Notification) -> Result<(), Status> {
        self.enqueue(n, None, None, true).map(|_| ())
    }

    /// [`Engine::notify`] that never runs the chain in the calling thread,
    /// whatever [`EngineBuilder::proc_local_inline`] says: for the
    /// library's own threads (a control thread reporting its lost server
    /// must not run handlers that may wait for that very thread).
    #[cfg_attr(loom, allow(dead_code))] // its users are not built under loom
    pub(crate) fn notify_queued(&self, n: Notification) -> Result<(), Status> {
        self.enqueue(n, None, None, false).map(|_| ())
    }

    /// Non-blocking notify: `PMIX_SUCCESS` and `cb(PMIX_SUCCESS)` on the
    /// progress thread once the chain has been dispatched; or
    /// `PMIX_OPERATION_SUCCEEDED` (no callback) when no handler of this
    /// process is in range; or an error (no callback).
    pub fn notify_nb(&self, n: Notification, cb: impl FnOnce(Status) + Send + 'static) -> Status {
        match self.enqueue(n, Some(Box::new(cb)), None, false) {
            Ok(true) => Status::SUCCESS,
            Ok(false) => Status::OPERATION_SUCCEEDED,
            Err(s) => s,
        }
    }

    /// Notify and learn how this process's chain ended: `on_outcome` runs on
    /// the progress thread after the last handler completed, with the
    /// consolidated results and termination verdict. Not called when no
    /// handler of this process is in range (the call returns `Ok(false)`).
    pub fn notify_observed(
        &self,
        n: Notification,
        on_outcome: impl FnOnce(ChainOutcome) + Send + 'static,
    ) -> Result<bool, Status> {
        self.enqueue(n, None, Some(Box::new(on_outcome)), false)
    }

    /// Transport entry: an event that arrived from outside this process.
    /// Dropped (`Ok(false)`) when its target range excludes this process.
    /// When no handler could take it (`Ok(true)`), the progress thread is
    /// not woken for nothing: a server with no handlers of its own relays
    /// every event without that wake-up.
    pub fn deliver(&self, ev: Event) -> Result<bool, Status> {
        let core = self.live()?;
        if !ev.targets(&core.me) {
            return Ok(false);
        }
        if !core.snapshot().anyone_for(&ev, &core.me) {
            return Ok(true);
        }
        core.push(Work::Event {
            ev: Arc::new(ev),
            op: None,
            outcome: None,
            only: None,
        });
        Ok(true)
    }

    /// Transport entry for a replay: `ev` goes to handler `r` alone, if it
    /// matches it (a cached event offered to a new registration). `Ok(false)`
    /// when the event's target range excludes this process.
    pub fn deliver_to(&self, ev: Arc<Event>, r: HandlerRef) -> Result<bool, Status> {
        let core = self.live()?;
        if !ev.targets(&core.me) {
            return Ok(false);
        }
        core.push(Work::Event {
            ev,
            op: None,
            outcome: None,
            only: Some(r),
        });
        Ok(true)
    }

    /// The handlers `ev` would reach right now, in chain order, without
    /// running them (what `pattrs`-like tools and tests inspect).
    pub fn chain_preview(&self, ev: &Event) -> Vec<HandlerRef> {
        let core = self.core();
        let snap = core.snapshot();
        let mut v = Vec::new();
        snap.assemble(ev, &core.me, &mut v);
        v.into_iter().map(|i| snap.entry(i).id).collect()
    }

    /// Number of live registrations.
    pub fn handler_count(&self) -> usize {
        self.core().registry().len()
    }
}
