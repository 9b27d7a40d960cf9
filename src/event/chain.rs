//! Running one event's chain: invocations, completions, results consolidation
//! (RFC0018) and the termination verdict.

use super::engine::Core;
use super::registry::{Entry, Snapshot};
use super::{Event, HandlerRef};
use crate::types::{attrs, Info, Proc, Status, Value};
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

/// One event on its way through its handlers.
pub(crate) struct Chain {
    pub seq: u64,
    pub event: Arc<Event>,
    /// The registrations as of dispatch; `handlers` index into it.
    pub snapshot: Arc<Snapshot>,
    pub handlers: Vec<u32>,
    pub next: usize,
    pub results: Vec<Info>,
    pub last_status: Option<Status>,
    pub ran: usize,
    pub stopped: bool,
    pub on_outcome: Option<OutcomeFn>,
}

impl Chain {
    /// The next handler still registered, if the chain goes on.
    pub fn next_live(&mut self) -> Option<u32> {
        if self.stopped {
            return None;
        }
        while let Some(&i) = self.handlers.get(self.next) {
            self.next += 1;
            // Checked at invocation, on the progress thread: a deregistration
            // that completed (its barrier ran on this thread) is seen here.
            if self.snapshot.entry(i).life.get() == crate::sync::LifeState::Active {
                return Some(i);
            }
        }
        None
    }

    /// Folds one handler's completion into the chain (RFC0018): drop results
    /// marked for removal, append `name → status`, append what it returned.
    /// Only a handler that borrowed the results mutably can have marked one,
    /// so the sweep runs only then (it would make long chains quadratic).
    pub fn absorb(
        &mut self,
        idx: u32,
        status: Status,
        mut results: Vec<Info>,
        edited: bool,
        returned: Vec<Info>,
    ) {
        if edited {
            results.retain(|i| !i.key.is_empty());
        }
        let key = self.snapshot.entry(idx).results_key.clone();
        results.push(Info::new(key, Value::Status(status)));
        results.extend(returned.into_iter().filter(|i| !i.key.is_empty()));
        self.results = results;
        self.last_status = Some(status);
        self.ran += 1;
        if status == Status::EVENT_ACTION_COMPLETE {
            self.stopped = true;
        }
    }

    /// The outcome reported to the generator.
    pub fn outcome(&mut self) -> ChainOutcome {
        ChainOutcome {
            final_status: self.last_status,
            termination: verdict(&self.results),
            results: std::mem::take(&mut self.results),
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
