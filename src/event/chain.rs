//! Running one event's chain: invocations, completions, results consolidation
//! (RFC0018) and the termination verdict.

use super::engine::Core;
use super::registry::{Entry, Snapshot};
use super::{Event, HandlerRef};
use crate::types::{attrs, Info, Proc, Status, Value};
use std::any::Any;
use std::sync::Arc;

/// Results key of a handler registered without `PMIX_EVENT_HDLR_NAME`
/// (OpenPMIx uses the same string).
pub const UNNAMED_HANDLER_KEY: &str = "UNKNOWN";

/// The consolidated termination opinion of a chain (RFC0018
/// `PMIX_EVENT_NO_TERMINATION` / `PMIX_EVENT_WANT_TERMINATION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// No handler expressed an opinion.
    Unspecified,
    /// The last effective opinion: termination is not required.
    NotRequired,
    /// The last effective opinion: the application should be terminated.
    Wanted,
}

/// What the generator of an event learns when its local chain ends.
#[derive(Clone, Debug)]
pub struct ChainOutcome {
    /// The status the last handler that ran returned (`None`: no handler ran).
    pub final_status: Option<Status>,
    /// The consolidated results.
    pub results: Vec<Info>,
    /// The consolidated termination verdict.
    pub termination: Termination,
    /// How many handlers ran.
    pub handlers_run: usize,
}

pub(crate) type OutcomeFn = Box<dyn FnOnce(ChainOutcome) + Send>;

/// A chain's results kept in another form while consecutive handlers of one
/// kind run: the C ABI keeps them as one C array across consecutive C
/// handlers (`capi::chain_mirror`), so that a chain of C handlers does not
/// convert every earlier result at every handler. While a chain holds a
/// mirror, the mirror holds all its results.
///
/// The engine keeps this contract: [`Mirror::into_infos`] and the drop run
/// only when no handler of the chain is running or may still read what it
/// was handed (on the progress thread, between handler calls, after the
/// previous handler both returned and completed); [`Mirror::append`] may
/// run on any thread, while the handler that completed is still running.
pub(crate) trait Mirror: Send {
    /// Adds `infos` after everything held (a completion's status entry and
    /// returned infos), touching nothing a handler was handed.
    fn append(&mut self, infos: Vec<Info>);
    /// The results as Rust values, for a Rust handler or the outcome.
    fn into_infos(self: Box<Self>) -> Vec<Info>;
    /// For the owner's downcast.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// One event on its way through its handlers.
pub(crate) struct Chain {
    pub seq: u64,
    pub event: Arc<Event>,
    /// The registrations as of dispatch; `handlers` index into it.
    pub snapshot: Arc<Snapshot>,
    pub handlers: Vec<u32>,
    pub next: usize,
    /// The results, unless `mirror` holds them.
    pub results: Vec<Info>,
    /// Holds all the results while consecutive mirrored handlers run
    /// (`results` is empty meanwhile).
    pub mirror: Option<Box<dyn Mirror>>,
    pub last_status: Option<Status>,
    pub ran: usize,
    pub stopped: bool,
    pub on_outcome: Option<OutcomeFn>,
}

impl Chain {
    /// The next handler still registered, if the chain goes on; it is
    /// announced in `running` (the caller clears it once the call
    /// returned).
    pub fn next_live(&mut self, running: &crate::sync::Running) -> Option<u32> {
        if self.stopped {
            return None;
        }
        while let Some(&i) = self.handlers.get(self.next) {
            self.next += 1;
            // Announced, then checked, on the progress thread: a
            // deregistration that killed the handler either is seen here,
            // or sees the announcement and waits for the call to return
            // (`sync::Running`).
            let e = self.snapshot.entry(i);
            running.announce(e.id.0);
            if e.life.get() == crate::sync::LifeState::Active {
                return Some(i);
            }
            running.clear();
        }
        None
    }

    /// The results as Rust values, the mirror (if any) converted back.
    pub fn take_results(&mut self) -> Vec<Info> {
        match self.mirror.take() {
            Some(m) => m.into_infos(),
            None => std::mem::take(&mut self.results),
        }
    }

    /// Folds one handler's completion into the chain (RFC0018): drop results
    /// marked for removal, append `name → status`, append what it returned.
    /// Only a handler that borrowed the results mutably can have marked one,
    /// so the sweep runs only then (it would make long chains quadratic).
    /// A chain whose results are in a mirror gets the two appends there
    /// (its handler was handed the mirror, and `results` is empty; the
    /// mirror sees removals itself).
    pub fn absorb(
        &mut self,
        idx: u32,
        status: Status,
        mut results: Vec<Info>,
        edited: bool,
        returned: Vec<Info>,
    ) {
        let key = self.snapshot.entry(idx).results_key.clone();
        let entry = Info::new(key, Value::Status(status));
        let returned = returned.into_iter().filter(|i| !i.key.is_empty());
        if let Some(m) = self.mirror.as_mut() {
            debug_assert!(
                results.is_empty() && !edited,
                "a mirrored handler got Rust results"
            );
            m.append(std::iter::once(entry).chain(returned).collect());
        } else {
            if edited {
                results.retain(|i| !i.key.is_empty());
            }
            results.push(entry);
            results.extend(returned);
            self.results = results;
        }
        self.last_status = Some(status);
        self.ran += 1;
        if status == Status::EVENT_ACTION_COMPLETE {
            self.stopped = true;
        }
    }

    /// The outcome reported to the generator.
    pub fn outcome(&mut self) -> ChainOutcome {
        let results = self.take_results();
        ChainOutcome {
            final_status: self.last_status,
            termination: verdict(&results),
            results,
            handlers_run: self.ran,
        }
    }
}

/// RFC0018: a later opinion overrides an earlier one, unless the earlier entry
/// carries `PMIX_INFO_REQD`, which fixes the verdict. A flag set to false
/// expresses no opinion.
pub fn verdict(results: &[Info]) -> Termination {
    let mut v = Termination::Unspecified;
    for i in results {
        let opinion = if i.key == attrs::PMIX_EVENT_NO_TERMINATION {
            Termination::NotRequired
        } else if i.key == attrs::PMIX_EVENT_WANT_TERMINATION {
            Termination::Wanted
        } else {
            continue;
        };
        if i.value.as_flag() != Some(true) {
            continue;
        }
        v = opinion;
        if i.is_required() {
            break;
        }
    }
    v
}

/// One call of one handler: the event, the results so far (which the handler
/// may edit through [`Invocation::results_mut`]: change values, or
/// [`Info::mark_removed`]), and the completion.
///
/// Call [`Invocation::complete`] when done, on any thread, at any time: the
/// chain continues only then. Dropping an invocation without completing it
/// completes it with `PMIX_ERROR` (so a panicking or forgetful handler cannot
/// wedge the chain).
pub struct Invocation {
    pub(crate) chain: Option<Box<Chain>>,
    pub(crate) idx: u32,
    pub(crate) core: Arc<Core>,
    pub(crate) results: Vec<Info>,
    pub(crate) edited: bool,
}

impl Invocation {
    fn chain(&self) -> &Chain {
        // `chain` is Some until completion consumes the invocation.
        self.chain.as_ref().expect("live invocation")
    }

    fn entry(&self) -> &Entry {
        let c = self.chain();
        c.snapshot.entry(self.idx)
    }

    fn event(&self) -> &Event {
        &self.chain().event
    }

    /// This handler's registration reference.
    pub fn id(&self) -> HandlerRef {
        self.entry().id
    }

    /// The event code.
    pub fn status(&self) -> Status {
        self.event().code
    }

    /// The process that generated the event.
    pub fn source(&self) -> &Proc {
        &self.event().source
    }

    /// The range the generator gave.
    pub fn range(&self) -> crate::types::DataRange {
        self.event().range
    }

    /// The generator's info array.
    pub fn info(&self) -> &[Info] {
        &self.event().info
    }

    /// The consolidated results of the handlers before this one.
    pub fn results(&self) -> &[Info] {
        &self.results
    }

    /// The results, for editing (RFC0018: change a value, or mark an entry
    /// for removal with [`Info::mark_removed`]).
    pub fn results_mut(&mut self) -> &mut Vec<Info> {
        self.edited = true;
        &mut self.results
    }

    /// Whether the chain keeps its results in a mirror (then
    /// [`Invocation::results`] is empty whatever the chain holds).
    #[cfg_attr(loom, allow(dead_code))] // the C ABI is not built under loom
    pub(crate) fn has_mirror(&self) -> bool {
        self.chain.as_ref().is_some_and(|c| c.mirror.is_some())
    }

    /// The chain's mirror of type `M` (see [`Mirror`]), made by `make`
    /// from the results so far when the chain holds none (a mirror of
    /// another kind is converted back first). If `make` fails, the results
    /// stay as they were, as Rust values.
    #[cfg_attr(loom, allow(dead_code))] // the C ABI is not built under loom
    pub(crate) fn mirror<M: Mirror + 'static>(
        &mut self,
        make: impl FnOnce(&[Info]) -> Result<M, Status>,
    ) -> Result<&mut M, Status> {
        let chain = self.chain.as_mut().ok_or(Status::ERROR)?;
        let ours = chain
            .mirror
            .as_mut()
            .is_some_and(|m| m.as_any_mut().is::<M>());
        if !ours {
            if let Some(other) = chain.mirror.take() {
                self.results = other.into_infos();
            }
            let m = make(&self.results)?;
            self.results = Vec::new();
            chain.mirror = Some(Box::new(m));
        }
        chain
            .mirror
            .as_mut()
            .and_then(|m| m.as_any_mut().downcast_mut::<M>())
            .ok_or(Status::ERROR)
    }

    /// `PMIX_EVENT_HDLR_NAME` given at registration.
    pub fn handler_name(&self) -> Option<&str> {
        self.entry().name.as_deref()
    }

    /// `PMIX_EVENT_RETURN_OBJECT` given at registration, on every call.
    pub fn return_object(&self) -> Option<&Value> {
        self.entry().return_object.as_ref()
    }

    /// The attributes the C ABI appends to the handler's info array: the
    /// handler name and the return object, when registered.
    pub fn handler_info(&self) -> Vec<Info> {
        let e = self.entry();
        let mut v = Vec::new();
        if let Some(n) = &e.name {
            v.push(Info::new(
                attrs::PMIX_EVENT_HDLR_NAME,
                Value::String(n.to_string()),
            ));
        }
        if let Some(o) = &e.return_object {
            v.push(Info::new(attrs::PMIX_EVENT_RETURN_OBJECT, o.clone()));
        }
        v
    }

    /// Completes this handler's work: `status` is recorded under the handler's
    /// name, `returned` is appended to the results, and `PMIX_EVENT_ACTION_COMPLETE`
    /// ends the chain.
    pub fn complete(mut self, status: Status, returned: Vec<Info>) {
        self.finish(status, returned);
    }

    fn finish(&mut self, status: Status, returned: Vec<Info>) {
        if let Some(mut chain) = self.chain.take() {
            let results = std::mem::take(&mut self.results);
            chain.absorb(self.idx, status, results, self.edited, returned);
            self.core.resume(chain);
        }
    }
}

impl Drop for Invocation {
    fn drop(&mut self) {
        self.finish(Status::ERROR, Vec::new());
    }
}

impl std::fmt::Debug for Invocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Invocation");
        if self.chain.is_some() {
            d.field("id", &self.id())
                .field("name", &self.handler_name());
        }
        d.field("results", &self.results).finish()
    }
}
