//! Stress: 8 threads (on however few cores) register and deregister handlers,
//! blocking and non-blocking, while notifying PROC_LOCAL events, each with a
//! unique sequence number in its info. Handlers complete inline or later from
//! other threads. A single Mutex-protected logical clock orders everything
//! that matters ("registration completed", "deregistration started/completed",
//! "handler entered", "chain finished"), and every rule is checked against it:
//!
//! - a handler never runs after its deregistration completed (the blocking
//!   call returned, or the non-blocking callback ran);
//! - no event is lost or duplicated: a handler live before the notify was
//!   issued, whose deregistration had not started when the chain finished,
//!   saw the event exactly once; no handler ever sees an event twice;
//! - a handler of a non-blocking registration receives no event before its
//!   registration callback ran.
//!
//! The default run is short (about a second); `FASTPMIX_STRESS_LONG=1` runs
//! ~40x more operations. `FASTPMIX_STRESS_SEED=<n>` fixes the operation mix
//! (the thread interleaving stays up to the scheduler).

mod common;

use common::me;
use fastpmix::event::{ChainOutcome, Engine, HandlerRef, Invocation, Notification, Registration};
use fastpmix::types::attrs::{PMIX_EVENT_HDLR_APPEND, PMIX_EVENT_HDLR_PREPEND};
use fastpmix::{DataRange, Info, Key, Status, Value};
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

const CODE_A: i32 = 7001;
const CODE_B: i32 = 7002;
/// The code sets handlers register for: default, single A, single B, multi.
const CODE_SETS: [&[i32]; 4] = [&[], &[CODE_A], &[CODE_B], &[CODE_A, CODE_B]];
const SEQ_KEY: &str = "test.seq";
const WORKERS: usize = 8;
/// Most handlers registered (or being registered) at once.
const MAX_LIVE: usize = 24;
/// Events a worker has in flight before it waits for the oldest outcome.
const MAX_IN_FLIGHT: usize = 4;
/// Turns a hang into a failure.
const WAIT: Duration = Duration::from_secs(30);

fn long_run() -> bool {
    std::env::var("FASTPMIX_STRESS_LONG").is_ok_and(|v| v == "1")
}

fn ops_per_worker() -> usize {
    if long_run() {
        150_000
    } else {
        4_000
    }
}

fn base_seed() -> u64 {
    std::env::var("FASTPMIX_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| RandomState::new().hash_one(0u8))
}

/// xorshift64*: the tests may not depend on a RNG crate for this.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn takes(codes: &[i32], code: i32) -> bool {
    codes.is_empty() || codes.contains(&code)
}

/// What the test knows about one handler (keyed by a test-assigned id, since
/// a non-blocking registration learns its ref only in the callback).
struct HState {
    codes: &'static [i32],
    nb: bool,
    r: Option<HandlerRef>,
    /// Clock when the registration completed (blocking call returned / the
    /// non-blocking callback ran).
    live_at: Option<u64>,
    dereg_started: Option<u64>,
    /// Clock when the deregistration completed (blocking call returned / the
    /// non-blocking callback ran).
    dereg_done: Option<u64>,
}

struct EvState {
    code: i32,
    /// Clock just before `notify_observed` was called.
    issued: u64,
    /// Handlers that entered for this event.
    seen_by: HashSet<u64>,
    finished: bool,
}

#[derive(Default, Debug)]
struct Stats {
    registered: u64,
    registered_nb: u64,
    deregistered: u64,
    deregistered_nb: u64,
    events: u64,
    entries: u64,
    deferred: u64,
    /// (event, handler) pairs the no-loss rule required.
    required_deliveries: u64,
}

#[derive(Default)]
struct World {
    clock: u64,
    next_hid: u64,
    next_seq: u64,
    handlers: HashMap<u64, HState>,
    events: HashMap<u64, EvState>,
    /// Registration completed, deregistration not started.
    live: Vec<u64>,
    /// Registrations not completed yet (counted against MAX_LIVE).
    registering: usize,
    /// Non-blocking deregistrations whose callback has not run yet.
    deregistering_nb: usize,
    violations: Vec<String>,
    stats: Stats,
}

impl World {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn violation(&mut self, v: String) {
        if self.violations.len() < 50 {
            self.violations.push(v);
        }
    }

    fn registered(&mut self, hid: u64, r: HandlerRef) {
        let t = self.tick();
        let h = self.handlers.get_mut(&hid).expect("known handler");
        h.r = Some(r);
        h.live_at = Some(t);
        self.live.push(hid);
        self.registering -= 1;
    }

    /// A handler was entered (on the progress thread).
    fn entered(&mut self, hid: u64, seq: Option<u64>, code: i32) {
        let t = self.tick();
        self.stats.entries += 1;
        let h = &self.handlers[&hid];
        let mut bad = Vec::new();
        if let Some(d) = h.dereg_done {
            bad.push(format!(
                "handler {hid} entered at {t} (event {seq:?}) after its deregistration completed at {d}"
            ));
        }
        if h.nb && h.live_at.is_none() {
            bad.push(format!(
                "handler {hid} (non-blocking registration) entered at {t} (event {seq:?}) before its registration callback"
            ));
        }
        if !takes(h.codes, code) {
            bad.push(format!(
                "handler {hid} for codes {:?} entered for code {code}",
                h.codes
            ));
        }
        match seq.map(|s| (s, self.events.get_mut(&s))) {
            None => bad.push(format!(
                "handler {hid} entered for an event without {SEQ_KEY}"
            )),
            Some((s, None)) => bad.push(format!("handler {hid} entered for unknown event {s}")),
            Some((s, Some(ev))) => {
                if ev.finished {
                    bad.push(format!(
                        "handler {hid} entered at {t} for event {s} whose chain had finished"
                    ));
                } else if !ev.seen_by.insert(hid) {
                    bad.push(format!("handler {hid} entered twice for event {s}"));
                }
            }
        }
        for b in bad {
            self.violation(b);
        }
    }

    /// An event's chain finished (on the progress thread).
    fn finished(&mut self, seq: u64, handlers_run: usize) {
        let t = self.tick();
        let Some(ev) = self.events.get_mut(&seq) else {
            return self.violation(format!("outcome for unknown event {seq}"));
        };
        if ev.finished {
            return self.violation(format!("second outcome for event {seq}"));
        }
        ev.finished = true;
        let seen = std::mem::take(&mut ev.seen_by);
        let (code, issued) = (ev.code, ev.issued);
        let mut bad = Vec::new();
        if handlers_run != seen.len() {
            bad.push(format!(
                "event {seq}: outcome says {handlers_run} handlers ran, {} entered",
                seen.len()
            ));
        }
        for hid in &self.live {
            let h = &self.handlers[hid];
            let live_before = h.live_at.is_some_and(|l| l < issued);
            if live_before && takes(h.codes, code) {
                self.stats.required_deliveries += 1;
                if !seen.contains(hid) {
                    bad.push(format!(
                        "event {seq} (code {code}, issued at {issued}, finished at {t}) lost for handler {hid} (live since {:?}, not deregistered)",
                        h.live_at
                    ));
                }
            }
        }
        for b in bad {
            self.violation(b);
        }
    }
}

type Shared = Arc<Mutex<World>>;

fn lock(w: &Shared) -> MutexGuard<'_, World> {
    // A handler runs under catch_unwind on the progress thread; never let a
    // poisoned lock turn every later check into a swallowed panic.
    w.lock().unwrap_or_else(|e| e.into_inner())
}

/// Completes deferred invocations, a batch at a time, newest first (so chains
/// resume out of their suspension order).
fn completer(rx: mpsc::Receiver<Invocation>, stop: mpsc::Receiver<()>) {
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(inv) => {
                let mut batch = vec![inv];
                batch.extend(rx.try_iter());
                while let Some(inv) = batch.pop() {
                    inv.complete(Status::SUCCESS, vec![]);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if stop.try_recv().is_ok() {
                    return;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

struct Ctx {
    engine: Engine,
    world: Shared,
    defer_tx: Mutex<mpsc::Sender<Invocation>>,
}

fn handler(ctx: &Arc<Ctx>, hid: u64) -> impl Fn(Invocation) + Send + Sync + 'static {
    let world = ctx.world.clone();
    let defer_tx = Mutex::new(ctx.defer_tx.lock().unwrap().clone());
    move |inv: Invocation| {
        let seq = inv
            .info()
            .iter()
            .find(|i| i.key.as_str() == SEQ_KEY)
            .and_then(|i| i.value.as_integer())
            .and_then(|s| u64::try_from(s).ok());
        // Deferred for about a third of the (handler, event) pairs.
        let defer = seq.is_some_and(|s| {
            ((s ^ hid.rotate_left(17)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) % 3 == 0
        });
        {
            let mut w = lock(&world);
            w.entered(hid, seq, inv.status().0);
            if defer {
                w.stats.deferred += 1;
            }
        }
        if defer {
            let _ = defer_tx.lock().unwrap().send(inv);
        } else {
            inv.complete(Status::SUCCESS, vec![]);
        }
    }
}

fn register(ctx: &Arc<Ctx>, rng: &mut Rng) {
    let codes = CODE_SETS[rng.below(CODE_SETS.len())];
    let nb = rng.below(2) == 0;
    let hid = {
        let mut w = lock(&ctx.world);
        if w.live.len() + w.registering >= MAX_LIVE {
            return;
        }
        w.next_hid += 1;
        let hid = w.next_hid;
        w.registering += 1;
        w.handlers.insert(
            hid,
            HState {
                codes,
                nb,
                r: None,
                live_at: None,
                dereg_started: None,
                dereg_done: None,
            },
        );
        if nb {
            w.stats.registered_nb += 1;
        } else {
            w.stats.registered += 1;
        }
        hid
    };
    let codes: Vec<Status> = codes.iter().map(|&c| Status(c)).collect();
    let mut reg = Registration::new(&codes, handler(ctx, hid));
    match rng.below(3) {
        0 => reg = reg.info(Info::new(PMIX_EVENT_HDLR_APPEND, true)),
        1 => reg = reg.info(Info::new(PMIX_EVENT_HDLR_PREPEND, true)),
        _ => {}
    }
    if nb {
        let world = ctx.world.clone();
        let s = ctx.engine.register_nb(reg, move |s, r| {
            let mut w = lock(&world);
            if s != Status::SUCCESS {
                w.violation(format!("registration callback of {hid} got {s:?}"));
            }
            w.registered(hid, r);
        });
        assert_eq!(s, Status::SUCCESS, "register_nb of handler {hid}");
    } else {
        let r = ctx.engine.register(reg).expect("blocking registration");
        lock(&ctx.world).registered(hid, r);
    }
}

/// Returns false when nothing was live to deregister.
fn deregister(ctx: &Arc<Ctx>, rng: &mut Rng) -> bool {
    let nb = rng.below(2) == 0;
    let (hid, r) = {
        let mut w = lock(&ctx.world);
        if w.live.is_empty() {
            return false;
        }
        let i = rng.below(w.live.len());
        let hid = w.live.swap_remove(i);
        let t = w.tick();
        if nb {
            w.deregistering_nb += 1;
            w.stats.deregistered_nb += 1;
        } else {
            w.stats.deregistered += 1;
        }
        let h = w.handlers.get_mut(&hid).expect("known handler");
        h.dereg_started = Some(t);
        (hid, h.r.expect("a live handler has its ref"))
    };
    if nb {
        let world = ctx.world.clone();
        let s = ctx.engine.deregister_nb(r, move |s| {
            let mut w = lock(&world);
            if s != Status::SUCCESS {
                w.violation(format!("deregistration callback of {hid} got {s:?}"));
            }
            let t = w.tick();
            w.handlers.get_mut(&hid).expect("known handler").dereg_done = Some(t);
            w.deregistering_nb -= 1;
        });
        assert_eq!(s, Status::SUCCESS, "deregister_nb of handler {hid} ({r})");
    } else {
        assert_eq!(
            ctx.engine.deregister(r),
            Ok(()),
            "deregister of {hid} ({r})"
        );
        // Stamped just after the return: an entry squeezed between the return
        // and this stamp would go unnoticed, any later one is caught.
        let mut w = lock(&ctx.world);
        let t = w.tick();
        w.handlers.get_mut(&hid).expect("known handler").dereg_done = Some(t);
    }
    true
}

fn notify(
    ctx: &Arc<Ctx>,
    rng: &mut Rng,
    outcomes: &mpsc::Sender<u64>,
    in_flight: &mut usize,
    done: &mpsc::Receiver<u64>,
) {
    let code = if rng.below(2) == 0 { CODE_A } else { CODE_B };
    let seq = {
        let mut w = lock(&ctx.world);
        w.next_seq += 1;
        let seq = w.next_seq;
        let issued = w.tick();
        w.events.insert(
            seq,
            EvState {
                code,
                issued,
                seen_by: HashSet::new(),
                finished: false,
            },
        );
        w.stats.events += 1;
        seq
    };
    let n = Notification::new(Status(code), me(), DataRange::PROC_LOCAL)
        .info(Info::new(Key::new(SEQ_KEY).unwrap(), Value::Uint64(seq)));
    let world = ctx.world.clone();
    let tx = outcomes.clone();
    let dispatched = ctx.engine.notify_observed(n, move |o: ChainOutcome| {
        lock(&world).finished(seq, o.handlers_run);
        let _ = tx.send(seq);
    });
    assert_eq!(dispatched, Ok(true), "notify_observed of event {seq}");
    *in_flight += 1;
    while *in_flight >= MAX_IN_FLIGHT {
        done.recv_timeout(WAIT)
            .expect("a chain outcome within the wait");
        *in_flight -= 1;
    }
}

fn worker(ctx: Arc<Ctx>, seed: u64, ops: usize) {
    let mut rng = Rng::new(seed);
    let (otx, orx) = mpsc::channel();
    let mut in_flight = 0;
    for _ in 0..ops {
        match rng.below(10) {
            0..=3 => notify(&ctx, &mut rng, &otx, &mut in_flight, &orx),
            4..=6 => register(&ctx, &mut rng),
            _ => {
                if !deregister(&ctx, &mut rng) {
                    register(&ctx, &mut rng);
                }
            }
        }
    }
    while in_flight > 0 {
        orx.recv_timeout(WAIT)
            .expect("a chain outcome within the wait");
        in_flight -= 1;
    }
}

/// Polls `cond` on the world until true; panics after `WAIT`.
fn wait_world(world: &Shared, what: &str, cond: impl Fn(&World) -> bool) {
    let t0 = std::time::Instant::now();
    while !cond(&lock(world)) {
        assert!(t0.elapsed() < WAIT, "{what}: not reached within {WAIT:?}");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn no_event_lost_duplicated_or_delivered_outside_a_registration_under_concurrency() {
    let seed = base_seed();
    let ops = ops_per_worker();
    let engine = Engine::builder(me()).build().unwrap();
    let world: Shared = Arc::default();
    let (defer_tx, defer_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel();
    let completer = thread::spawn(move || completer(defer_rx, stop_rx));
    let ctx = Arc::new(Ctx {
        engine: engine.clone(),
        world: world.clone(),
        defer_tx: Mutex::new(defer_tx),
    });

    let (done_tx, done_rx) = mpsc::channel();
    let workers: Vec<_> = (0..WORKERS)
        .map(|i| {
            let ctx = ctx.clone();
            let done = done_tx.clone();
            let s = seed.wrapping_add(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1));
            thread::Builder::new()
                .name(format!("stress-{i}"))
                .spawn(move || {
                    worker(ctx, s, ops);
                    let _ = done.send(());
                })
                .unwrap()
        })
        .collect();
    drop(done_tx);
    // A worker blocked in the engine (a deregistration barrier that never
    // runs) would hang the join: bound the whole phase instead.
    let phase = if long_run() {
        Duration::from_secs(3600)
    } else {
        Duration::from_secs(120)
    };
    let t0 = std::time::Instant::now();
    let mut finished = 0;
    while finished < WORKERS {
        match done_rx.recv_timeout(phase.saturating_sub(t0.elapsed())) {
            Ok(()) => finished += 1,
            Err(mpsc::RecvTimeoutError::Disconnected) => break, // a worker panicked
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("seed {seed}: workers stuck ({finished}/{WORKERS} done)")
            }
        }
    }
    for w in workers {
        if let Err(p) = w.join() {
            eprintln!("seed {seed}: a worker failed");
            std::panic::resume_unwind(p);
        }
    }

    // Every non-blocking callback runs eventually.
    wait_world(&world, "pending registration callbacks", |w| {
        w.registering == 0
    });
    wait_world(&world, "pending deregistration callbacks", |w| {
        w.deregistering_nb == 0
    });
    let live: Vec<HandlerRef> = {
        let w = lock(&world);
        w.live.iter().map(|h| w.handlers[h].r.unwrap()).collect()
    };
    assert_eq!(
        engine.handler_count(),
        live.len(),
        "seed {seed}: live registrations"
    );
    for r in live {
        engine.deregister(r).unwrap();
    }
    assert_eq!(engine.handler_count(), 0);
    let _ = stop_tx.send(());
    completer.join().unwrap();
    engine.shutdown();

    let w = lock(&world);
    assert!(
        w.violations.is_empty(),
        "seed {seed}: {} violation(s), first ones:\n{}",
        w.violations.len(),
        w.violations.join("\n")
    );
    let unfinished = w.events.values().filter(|e| !e.finished).count();
    assert_eq!(unfinished, 0, "seed {seed}: chains that never finished");
    // The run exercised what it claims to check.
    let s = &w.stats;
    eprintln!("seed {seed}: {s:?}");
    assert!(s.registered > 0 && s.registered_nb > 0, "{s:?}");
    assert!(s.deregistered > 0 && s.deregistered_nb > 0, "{s:?}");
    assert!(s.required_deliveries > 0 && s.deferred > 0, "{s:?}");
    assert!(
        s.entries > s.deferred,
        "some handlers completed inline: {s:?}"
    );
}
