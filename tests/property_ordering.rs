//! Property: random sequences of registrations (with every ordering directive),
//! deregistrations and notifications give the same statuses and the same chain
//! order as a small list-based model of the ordering rules (Standard "Event
//! Notification", PMIx_Register_event_handler; RFC0018 "Desired ordering").
//!
//! The model is written from the rules, not from the engine: each category is
//! a plain `Vec` scanned linearly, a pin is a property of the pinned handler,
//! and the chain is the concatenation FIRST, single, multi, default, LAST.

mod common;

use common::{engine, me};
use fastpmix::event::{Engine, Event, HandlerRef, Invocation, Notification, Origin, Registration};
use fastpmix::types::attrs::*;
use fastpmix::{DataRange, Info, Status};
use proptest::prelude::*;
use proptest::sample::Index;
use std::collections::HashSet;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Handler names drawn from a small pool, so duplicates and BEFORE/AFTER hits
/// are frequent.
const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];
/// Registration codes; notifications also use 103, which only defaults take.
const CODES: [i32; 3] = [100, 101, 102];
const NOTIFY_CODES: [i32; 4] = [100, 101, 102, 103];

// ---------------------------------------------------------------- operations

/// Whom a BEFORE/AFTER directive names.
#[derive(Clone, Debug)]
enum Target {
    /// One of the names live at that step (any category or slot); falls back
    /// to the first pool name when none is.
    Live(Index),
    /// Any pool name, live or not.
    Pool(usize),
}

/// A placement directive as generated.
#[derive(Clone, Debug)]
enum Dir {
    First,
    Last,
    FirstInCat,
    LastInCat,
    Prepend,
    Append,
    Before(Target),
    After(Target),
}

/// A placement directive with its target resolved to a name.
#[derive(Clone, Debug)]
enum Place {
    First,
    Last,
    FirstInCat,
    LastInCat,
    Prepend,
    Append,
    Before(&'static str),
    After(&'static str),
}

impl Dir {
    fn resolve(&self, model: &Model) -> Place {
        let name = |t: &Target| match t {
            Target::Pool(i) => NAMES[*i],
            Target::Live(i) => {
                let live: Vec<&'static str> = NAMES
                    .iter()
                    .copied()
                    .filter(|n| model.all().any(|h| h.name.as_deref() == Some(*n)))
                    .collect();
                if live.is_empty() {
                    NAMES[0]
                } else {
                    live[i.index(live.len())]
                }
            }
        };
        match self {
            Dir::First => Place::First,
            Dir::Last => Place::Last,
            Dir::FirstInCat => Place::FirstInCat,
            Dir::LastInCat => Place::LastInCat,
            Dir::Prepend => Place::Prepend,
            Dir::Append => Place::Append,
            Dir::Before(t) => Place::Before(name(t)),
            Dir::After(t) => Place::After(name(t)),
        }
    }
}

#[derive(Clone, Debug)]
enum Dereg {
    /// A live registration (falls back to `Never` when none is live).
    Live(Index),
    /// A ref that was deregistered already (falls back to `Never`).
    Stale(Index),
    /// A ref the engine never handed out.
    Never,
}

#[derive(Clone, Debug)]
enum Op {
    Register {
        codes: Vec<i32>,
        name: Option<usize>,
        dirs: Vec<Dir>,
        name_after_dirs: bool,
    },
    Deregister(Dereg),
    Notify {
        code: i32,
        non_default: bool,
        run: bool,
    },
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        3 => any::<Index>().prop_map(Target::Live),
        1 => (0..NAMES.len()).prop_map(Target::Pool),
    ]
}

fn dir() -> impl Strategy<Value = Dir> {
    prop_oneof![
        1 => Just(Dir::First),
        1 => Just(Dir::Last),
        2 => Just(Dir::FirstInCat),
        2 => Just(Dir::LastInCat),
        1 => Just(Dir::Prepend),
        1 => Just(Dir::Append),
        3 => target().prop_map(Dir::Before),
        3 => target().prop_map(Dir::After),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    // Skewed towards 100 and towards few codes, so that handlers of one
    // category often share a chain.
    let code = prop_oneof![4 => Just(CODES[0]), 2 => Just(CODES[1]), 1 => Just(CODES[2])];
    let len = prop_oneof![3 => Just(0usize), 3 => Just(1), 2 => Just(2), 1 => Just(3)];
    let codes = len.prop_flat_map(move |n| prop::collection::vec(code.clone(), n));
    let dirs = prop_oneof![
        2 => Just(Vec::new()),
        7 => dir().prop_map(|d| vec![d]),
        1 => prop::collection::vec(dir(), 2..=2),
    ];
    let register = (
        codes,
        prop::option::weighted(0.85, 0..NAMES.len()),
        dirs,
        any::<bool>(),
    )
        .prop_map(|(codes, name, dirs, name_after_dirs)| Op::Register {
            codes,
            name,
            dirs,
            name_after_dirs,
        });
    let dereg = prop_oneof![
        6 => any::<Index>().prop_map(Dereg::Live),
        2 => any::<Index>().prop_map(Dereg::Stale),
        1 => Just(Dereg::Never),
    ]
    .prop_map(Op::Deregister);
    let notify = (
        prop::sample::select(&NOTIFY_CODES[..]),
        prop::bool::weighted(0.25),
        any::<bool>(),
    )
        .prop_map(|(code, non_default, run)| Op::Notify {
            code,
            non_default,
            run,
        });
    prop_oneof![6 => register, 2 => dereg, 2 => notify]
}

// --------------------------------------------------------------------- model

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pin {
    None,
    FirstInCat,
    LastInCat,
}

#[derive(Clone, Debug)]
struct MHandler {
    r: HandlerRef,
    name: Option<String>,
    /// Distinct codes; empty = default handler.
    codes: Vec<i32>,
    pin: Pin,
}

impl MHandler {
    fn takes(&self, code: i32, non_default: bool) -> bool {
        if self.codes.is_empty() {
            !non_default
        } else {
            self.codes.contains(&code)
        }
    }
}

/// Where a registration goes.
enum Spot {
    First,
    Last,
    Cat { cat: usize, at: usize, pin: Pin },
}

const SINGLE: usize = 0;
const MULTI: usize = 1;
const DEFAULT: usize = 2;

#[derive(Default)]
struct Model {
    first: Option<MHandler>,
    last: Option<MHandler>,
    /// single, multi, default: each in chain order.
    cats: [Vec<MHandler>; 3],
}

impl Model {
    fn all(&self) -> impl Iterator<Item = &MHandler> {
        self.first
            .iter()
            .chain(self.cats.iter().flatten())
            .chain(self.last.iter())
    }

    fn live_refs(&self) -> Vec<HandlerRef> {
        let mut v: Vec<HandlerRef> = self.all().map(|h| h.r).collect();
        v.sort();
        v
    }

    /// Where a registration would go, or the status refusing it.
    fn plan(&self, codes: &[i32], name: Option<&str>, dirs: &[Place]) -> Result<Spot, Status> {
        if dirs.len() > 1 {
            return Err(Status::ERR_BAD_PARAM);
        }
        let refused = Err(Status::ERR_EVENT_REGISTRATION);
        if let Some(n) = name {
            if self.all().any(|h| h.name.as_deref() == Some(n)) {
                return refused;
            }
        }
        let cat = match codes.len() {
            0 => DEFAULT,
            1 => SINGLE,
            _ => MULTI,
        };
        let list = &self.cats[cat];
        let has_pin = |p: Pin| list.iter().any(|h| h.pin == p);
        let index_of = |n: &str| list.iter().position(|h| h.name.as_deref() == Some(n));
        let spot = |at: usize, pin: Pin| Ok(Spot::Cat { cat, at, pin });
        // Head, but behind a FIRST_IN_CATEGORY handler; tail, but ahead of
        // a LAST_IN_CATEGORY handler.
        let head = list.iter().take_while(|h| h.pin == Pin::FirstInCat).count();
        let tail = list.len()
            - list
                .iter()
                .rev()
                .take_while(|h| h.pin == Pin::LastInCat)
                .count();
        let global = |g: &Option<MHandler>, t: &str| {
            g.as_ref().is_some_and(|g| g.name.as_deref() == Some(t))
        };
        match dirs.first() {
            Some(Place::First) if self.first.is_some() => refused,
            Some(Place::First) => Ok(Spot::First),
            Some(Place::Last) if self.last.is_some() => refused,
            Some(Place::Last) => Ok(Spot::Last),
            Some(Place::FirstInCat) if has_pin(Pin::FirstInCat) => refused,
            Some(Place::FirstInCat) => spot(0, Pin::FirstInCat),
            Some(Place::LastInCat) if has_pin(Pin::LastInCat) => refused,
            Some(Place::LastInCat) => spot(list.len(), Pin::LastInCat),
            None | Some(Place::Prepend) => spot(head, Pin::None),
            Some(Place::Append) => spot(tail, Pin::None),
            Some(Place::Before(t)) => match index_of(t) {
                // BEFORE the global LAST handler: the category's tail.
                None if global(&self.last, t) => spot(tail, Pin::None),
                None => refused,
                Some(i) if list[i].pin == Pin::FirstInCat => refused,
                Some(i) => spot(i, Pin::None),
            },
            Some(Place::After(t)) => match index_of(t) {
                // AFTER the global FIRST handler: the category's head.
                None if global(&self.first, t) => spot(head, Pin::None),
                None => refused,
                Some(i) if list[i].pin == Pin::LastInCat => refused,
                Some(i) => spot(i + 1, Pin::None),
            },
        }
    }

    fn apply(&mut self, spot: Spot, r: HandlerRef, name: Option<&str>, codes: Vec<i32>) {
        let mut h = MHandler {
            r,
            name: name.map(str::to_owned),
            codes,
            pin: Pin::None,
        };
        match spot {
            Spot::First => self.first = Some(h),
            Spot::Last => self.last = Some(h),
            Spot::Cat { cat, at, pin } => {
                h.pin = pin;
                self.cats[cat].insert(at, h);
            }
        }
    }

    /// Removes a live registration; `false` if `r` is not live.
    fn remove(&mut self, r: HandlerRef) -> bool {
        if self.first.as_ref().is_some_and(|h| h.r == r) {
            self.first = None;
            return true;
        }
        if self.last.as_ref().is_some_and(|h| h.r == r) {
            self.last = None;
            return true;
        }
        for list in &mut self.cats {
            if let Some(i) = list.iter().position(|h| h.r == r) {
                list.remove(i);
                return true;
            }
        }
        false
    }

    /// The chain an event with `code` runs, in order.
    fn chain(&self, code: i32, non_default: bool) -> Vec<HandlerRef> {
        self.first
            .iter()
            .chain(&self.cats[SINGLE])
            .chain(&self.cats[MULTI])
            .chain(&self.cats[DEFAULT])
            .chain(self.last.iter())
            .filter(|h| h.takes(code, non_default))
            .map(|h| h.r)
            .collect()
    }
}

// ------------------------------------------------------------ engine harness

fn directive(d: &Place) -> Info {
    match d {
        Place::First => Info::new(PMIX_EVENT_HDLR_FIRST, true),
        Place::Last => Info::new(PMIX_EVENT_HDLR_LAST, true),
        Place::FirstInCat => Info::new(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, true),
        Place::LastInCat => Info::new(PMIX_EVENT_HDLR_LAST_IN_CATEGORY, true),
        Place::Prepend => Info::new(PMIX_EVENT_HDLR_PREPEND, true),
        Place::Append => Info::new(PMIX_EVENT_HDLR_APPEND, true),
        Place::Before(t) => Info::new(PMIX_EVENT_HDLR_BEFORE, *t),
        Place::After(t) => Info::new(PMIX_EVENT_HDLR_AFTER, *t),
    }
}

fn notification(code: i32, non_default: bool) -> Notification {
    let n = Notification::new(Status(code), me(), DataRange::PROC_LOCAL);
    if non_default {
        n.info(Info::new(PMIX_EVENT_NON_DEFAULT, true))
    } else {
        n
    }
}

fn preview(e: &Engine, code: i32, non_default: bool) -> Vec<HandlerRef> {
    let ev = Event::new(notification(code, non_default), Origin::ThisProcess).unwrap();
    e.chain_preview(&ev)
}

/// Runs the chain for real; returns the refs in call order and the outcome's
/// handler count.
fn run(
    e: &Engine,
    calls: &Mutex<Vec<HandlerRef>>,
    code: i32,
    non_default: bool,
) -> (Vec<HandlerRef>, usize, Option<Status>) {
    calls.lock().unwrap().clear();
    let (tx, rx) = mpsc::channel();
    let dispatched = e
        .notify_observed(notification(code, non_default), move |o| {
            let _ = tx.send((o.handlers_run, o.final_status));
        })
        .unwrap();
    assert!(dispatched, "a PROC_LOCAL event of this process is in range");
    let (ran, status) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("chain outcome within 10 s");
    (calls.lock().unwrap().clone(), ran, status)
}

fn check_sequence(ops: &[Op]) -> Result<(), TestCaseError> {
    let e = engine();
    let calls: Arc<Mutex<Vec<HandlerRef>>> = Arc::default();
    let mut model = Model::default();
    let mut issued: HashSet<HandlerRef> = HashSet::new();
    let mut stale: Vec<HandlerRef> = Vec::new();
    for (step, op) in ops.iter().enumerate() {
        match op {
            Op::Register {
                codes,
                name,
                dirs,
                name_after_dirs,
            } => {
                let name = name.map(|i| NAMES[i]);
                let dirs: Vec<Place> = dirs.iter().map(|d| d.resolve(&model)).collect();
                let mut info: Vec<Info> = dirs.iter().map(directive).collect();
                if let Some(n) = name {
                    let i = Info::new(PMIX_EVENT_HDLR_NAME, n);
                    if *name_after_dirs {
                        info.push(i);
                    } else {
                        info.insert(0, i);
                    }
                }
                let log = calls.clone();
                let handler = move |inv: Invocation| {
                    log.lock().unwrap().push(inv.id());
                    inv.complete(Status::SUCCESS, vec![]);
                };
                let status_codes: Vec<Status> = codes.iter().map(|&c| Status(c)).collect();
                let got = e.register(Registration::new(&status_codes, handler).infos(info));
                let mut distinct = codes.clone();
                distinct.sort_unstable();
                distinct.dedup();
                let want = model.plan(&distinct, name, &dirs);
                match (got, want) {
                    (Ok(r), Ok(spot)) => {
                        prop_assert!(r.0 >= 1, "step {step}: ref {r} below 1");
                        prop_assert!(issued.insert(r), "step {step}: ref {r} reused");
                        model.apply(spot, r, name, distinct);
                    }
                    (Err(g), Err(w)) => {
                        prop_assert_eq!(g, w, "step {}: refusal status", step)
                    }
                    (Ok(r), Err(w)) => {
                        prop_assert!(
                            false,
                            "step {step}: engine accepted as {r}, model says {w:?}"
                        )
                    }
                    (Err(g), Ok(_)) => {
                        prop_assert!(
                            false,
                            "step {step}: engine refused with {g:?}, model accepts"
                        )
                    }
                }
            }
            Op::Deregister(pick) => {
                let live = model.live_refs();
                let r = match pick {
                    Dereg::Live(i) if !live.is_empty() => live[i.index(live.len())],
                    Dereg::Stale(i) if !stale.is_empty() => stale[i.index(stale.len())],
                    // Far beyond anything handed out in ≤ 40 registrations.
                    _ => HandlerRef(1_000_000 + step as u64),
                };
                let want = if model.remove(r) {
                    stale.push(r);
                    Ok(())
                } else {
                    Err(Status::ERR_BAD_PARAM)
                };
                prop_assert_eq!(e.deregister(r), want, "step {}: deregister {}", step, r);
            }
            Op::Notify {
                code,
                non_default,
                run: run_it,
            } => {
                let want = model.chain(*code, *non_default);
                let got = preview(&e, *code, *non_default);
                prop_assert_eq!(&got, &want, "step {}: chain of code {}", step, code);
                if *run_it {
                    let (ran, count, status) = run(&e, &calls, *code, *non_default);
                    prop_assert_eq!(&ran, &got, "step {}: executed order", step);
                    prop_assert_eq!(count, got.len(), "step {}: handlers_run", step);
                    let want_status = (!got.is_empty()).then_some(Status::SUCCESS);
                    prop_assert_eq!(status, want_status, "step {}: final status", step);
                }
            }
        }
        // Previews are cheap: compare every possible chain after every step.
        for code in NOTIFY_CODES {
            for non_default in [false, true] {
                prop_assert_eq!(
                    preview(&e, code, non_default),
                    model.chain(code, non_default),
                    "after step {}: chain of code {} (non-default {})",
                    step,
                    code,
                    non_default
                );
            }
        }
        prop_assert_eq!(
            e.handler_count(),
            model.live_refs().len(),
            "step {}: live registrations",
            step
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every registration/deregistration status and every chain (previewed and
    /// executed) equals what the ordering rules give, for any op sequence.
    #[test]
    fn chain_order_and_registration_statuses_follow_the_ordering_rules(
        ops in prop::collection::vec(op(), 1..=40)
    ) {
        check_sequence(&ops)?;
    }
}

#[test]
fn refs_start_at_1_and_are_never_reused() {
    let e = engine();
    let noop = |inv: Invocation| inv.complete(Status::SUCCESS, vec![]);
    let a = e.register(Registration::new(&[Status(100)], noop)).unwrap();
    assert_eq!(a, HandlerRef(1));
    e.deregister(a).unwrap();
    let b = e.register(Registration::new(&[Status(100)], noop)).unwrap();
    assert_ne!(b, a);
    assert_eq!(e.deregister(a), Err(Status::ERR_BAD_PARAM));
    assert_eq!(e.deregister(HandlerRef(0)), Err(Status::ERR_BAD_PARAM));
    e.deregister(b).unwrap();
}
