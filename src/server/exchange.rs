//! Data exchange on the progress thread: commits into the namespace's
//! store, `PMIx_Get`s a client could not answer from shared memory, the
//! host's direct-modex traffic in both directions.
//!
//! A `PMIx_Get` of a process's key that came here is answered:
//! - at once with the value when the data is here (a scope the caller may
//!   see; `PMIX_DATA_SCOPE` narrows it), or from the job information the
//!   host registered for that namespace and rank;
//! - at once with `PMIX_ERR_NOT_FOUND` when the process's data is here but
//!   not the key (its commit is what it gives), for a reserved key (`pmix`
//!   prefix: the host gives those at start), when `PMIX_IMMEDIATE` was
//!   asked, for a rank outside the job, for a local process that left
//!   without committing, and for a local process's refresh;
//! - at once with `PMIX_ERR_EXISTS_OUTSIDE_SCOPE` when the key is there in
//!   a scope that excludes the caller;
//! - for `PMIX_RANK_UNDEF` (a key unique in the namespace): when some
//!   process provides it (or `PMIX_TIMEOUT`);
//! - for a local process that has not committed yet: when it does (or
//!   leaves, or the caller's `PMIX_TIMEOUT` passes: `PMIX_ERR_TIMEOUT`);
//! - for a process on another node with no data here (or with
//!   `PMIX_GET_REFRESH_CACHE`): after the host's `direct_modex` brought its
//!   node's answer (one upcall per process however many clients wait);
//!   the host's error is the caller's, `PMIX_ERR_NOT_SUPPORTED` becomes
//!   `PMIX_ERR_NOT_FOUND`.
//!
//! A namespace the caller may not see (another uid's, unless root) is
//! `PMIX_ERR_NOT_FOUND`, as if it were not registered.

use super::outbox::{Ctx, Req, Timed};
use super::{Cmd, Done, Ns, Shared};
use crate::job::REASON;
use crate::store::blob;
use crate::types::{attrs, Info, Key, Proc, Rank, Status, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a `PMIx_Get` asked for beyond the key.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct GetOptions {
    pub optional: bool,
    pub immediate: bool,
    pub refresh: bool,
    pub scope: Option<u8>,
    pub timeout: Option<Duration>,
}

impl GetOptions {
    /// Reads a `PMIx_Get`'s directives; a wrongly typed known one, or a
    /// required unknown one, is refused.
    pub(crate) fn of(info: &[Info]) -> Result<GetOptions, Status> {
        attrs::check_all(info)?;
        let mut o = GetOptions::default();
        let flag = |i: &Info| i.value.as_flag() != Some(false);
        for i in info {
            if i.key == attrs::PMIX_OPTIONAL {
                o.optional = flag(i);
            } else if i.key == attrs::PMIX_IMMEDIATE {
                o.immediate = flag(i);
            } else if i.key == attrs::PMIX_GET_REFRESH_CACHE {
                o.refresh = flag(i);
            } else if i.key == attrs::PMIX_DATA_SCOPE {
                o.scope = i.value.as_integer().and_then(|s| u8::try_from(s).ok());
            } else if i.key == attrs::PMIX_TIMEOUT {
                let secs = i.value.as_integer().ok_or(Status::ERR_BAD_PARAM)?;
                if secs < 0 {
                    return Err(Status::ERR_BAD_PARAM);
                }
                o.timeout = (secs > 0).then(|| Duration::from_secs(secs as u64));
            }
        }
        Ok(o)
    }
}

/// Whether `key` is reserved: its text begins with `pmix` (the Standard,
/// "Reserved Keys"). Reserved keys are the host's to provide before a
/// process starts, so a Get of one that was not registered is
/// `PMIX_ERR_NOT_FOUND` at once, never a wait for a commit (the Standard's
/// retrieval rules for reserved keys; OpenPMIx looks for such a key only in
/// the job information).
pub(crate) fn reserved_key(key: &str) -> bool {
    key.starts_with("pmix")
}

/// A Get that waits for data.
struct Waiting {
    req: Req,
    proc: Proc,
    key: Key,
    opts: GetOptions,
    deadline: Option<Instant>,
}

/// The data-exchange subsystem.
#[derive(Default)]
pub(super) struct Exchange {
    waiting: Vec<Waiting>,
    /// Processes whose data the host was asked for (`direct_modex`).
    asked: HashSet<Proc>,
    /// The host's requests for a local process's data, waiting for its
    /// commit.
    serving: Vec<(Proc, Done<Vec<u8>>)>,
}

/// How a lookup ended.
enum Lookup {
    Found(Value),
    NotFound(&'static str),
    /// The key was put in a scope that does not include the caller.
    OutsideScope,
    /// Wait for the local process's commit.
    Wait,
    /// Wait for any process of the namespace to provide the key
    /// (`PMIX_RANK_UNDEF`: a key unique in the namespace).
    WaitAny,
    /// Ask the host for the remote process's data.
    AskHost,
}

fn visible_ns<'a>(
    m: &'a super::FastMap<crate::types::Nspace, Ns>,
    uid: u32,
    p: &Proc,
) -> Option<&'a Ns> {
    m.get(&p.nspace)
        .filter(|ns| uid == 0 || ns.owner.is_none_or(|(u, _)| u == uid))
}

/// Whether `rank` is a process of `ns`'s job (below its size, when known).
fn in_job(ns: &Ns, rank: Rank) -> bool {
    ns.is_local(rank) || ns.job_size().is_none_or(|s| rank.0 < s)
}

fn lookup(shared: &Shared, who: &Req, proc: &Proc, key: &Key, o: &GetOptions) -> Lookup {
    let m = shared.nspaces();
    let Some(ns) = visible_ns(&m, who.uid, proc) else {
        return Lookup::NotFound("no such namespace on this node");
    };
    let job_level = || {
        ns.info
            .iter()
            .find(|i| {
                i.key == *key
                    && *key != attrs::PMIX_PROC_INFO_ARRAY
                    && *key != attrs::PMIX_NODE_INFO_ARRAY
            })
            .map(|i| i.value.clone())
    };
    if *key == attrs::PMIX_NSPACE {
        // Known without registered data, as a client knows its own.
        return Lookup::Found(Value::String(proc.nspace.as_str().to_owned()));
    }
    if proc.rank == Rank::WILDCARD {
        return job_level().map_or(Lookup::NotFound("no such job-level key"), Lookup::Found);
    }
    let reserved = reserved_key(key.as_str());
    if proc.rank == Rank::UNDEF {
        if let Some(v) = job_level() {
            return Lookup::Found(v);
        }
        let here = |r: u32| ns.is_local(Rank(r));
        if let Some(v) = ns.data.find_any(key.as_str(), here, o.scope) {
            return Lookup::Found(v.clone());
        }
        if reserved || o.immediate {
            return Lookup::NotFound("no process of the namespace has the key");
        }
        return Lookup::WaitAny;
    }
    if !proc.rank.is_real() {
        return Lookup::NotFound("a special rank has no data");
    }
    let rank = proc.rank.0;
    let local = ns.is_local(proc.rank);
    let mine = *proc == who.me;
    // A refresh asks the host again for another node's data.
    let cached_ok = local || !o.refresh;
    if let Some(v) = ns.data.find(rank, key.as_str(), mine, local, o.scope) {
        if cached_ok {
            return Lookup::Found(v.clone());
        }
    }
    if let Some(v) = ns.job_map.lookup(&ns.info, proc.rank, key) {
        return Lookup::Found(v);
    }
    if reserved {
        // The host's keys are given at start: never waited for.
        return Lookup::NotFound("a reserved key the host did not register");
    }
    if cached_ok && ns.data.has(rank) {
        if ns
            .data
            .find(rank, key.as_str(), true, local, o.scope)
            .is_some()
        {
            return Lookup::OutsideScope;
        }
        return Lookup::NotFound("the process's data does not hold the key");
    }
    if !in_job(ns, proc.rank) {
        return Lookup::NotFound("the rank is not a process of the job");
    }
    if o.immediate {
        return Lookup::NotFound("not here, and PMIX_IMMEDIATE was asked");
    }
    if local {
        if ns.has_left(proc.rank) {
            return Lookup::NotFound("the process left without committing");
        }
        if o.refresh {
            return Lookup::NotFound("nothing committed yet, and a refresh does not wait");
        }
        return Lookup::Wait;
    }
    Lookup::AskHost
}

fn found(key: &Key, v: Value) -> (Status, Vec<Info>) {
    (Status::SUCCESS, vec![Info::new(key.clone(), v)])
}

fn not_found(why: &str) -> (Status, Vec<Info>) {
    (
        Status::ERR_NOT_FOUND,
        vec![Info::new(REASON, why.to_owned())],
    )
}

fn outside_scope() -> (Status, Vec<Info>) {
    let why = "the key was put in a scope that does not include the caller";
    (
        Status::ERR_EXISTS_OUTSIDE_SCOPE,
        vec![Info::new(REASON, why.to_owned())],
    )
}

impl Exchange {
    /// `PMIx_Commit` from `me`.
    pub(super) fn commit(&mut self, cx: &mut Ctx, me: Proc, items: Vec<(u8, Info)>) {
        let stored = {
            let mut m = cx.shared.nspaces();
            let Some(ns) = m.get_mut(&me.nspace) else {
                return;
            };
            let stored = ns.data.add(me.rank.0, items, false);
            // Counted even when lost: a fence waits for commits handled,
            // and this one never will be stored.
            super::barrier::committed(ns, me.rank);
            stored
        };
        if let Err(e) = stored {
            // The client's Get of its peers will wait or time out; the
            // operator hears why.
            cx.shared.say(&format!("commit from {me} lost: {e}"));
            return;
        }
        self.arrived(cx, &me);
        self.serve_ready(cx);
    }

    /// A `PMIx_Get` a client could not answer itself.
    pub(super) fn get(&mut self, cx: &mut Ctx, r: Req, proc: Proc, key: Key, info: Vec<Info>) {
        let opts = match GetOptions::of(&info) {
            Ok(o) => o,
            Err(s) => {
                let why = "PMIx_Get directives refused".to_owned();
                return cx.answer_then(r.conn, r.rid, s, vec![Info::new(REASON, why)], None);
            }
        };
        match lookup(cx.shared, &r, &proc, &key, &opts) {
            Lookup::Found(v) => {
                let (s, i) = found(&key, v);
                cx.answer_then(r.conn, r.rid, s, i, None)
            }
            Lookup::NotFound(why) => {
                let (s, i) = not_found(why);
                cx.answer_then(r.conn, r.rid, s, i, None)
            }
            Lookup::OutsideScope => {
                let (s, i) = outside_scope();
                cx.answer_then(r.conn, r.rid, s, i, None)
            }
            Lookup::Wait | Lookup::WaitAny => self.wait(cx, r, proc, key, opts),
            Lookup::AskHost => {
                self.wait(cx, r, proc, key, opts);
                if self.asked.insert(proc) {
                    ask_host(cx.shared, proc, &info);
                }
            }
        }
    }

    fn wait(&mut self, cx: &Ctx, req: Req, proc: Proc, key: Key, opts: GetOptions) {
        let deadline = opts.timeout.map(|t| cx.now + t);
        self.waiting.push(Waiting {
            req,
            proc,
            key,
            opts,
            deadline,
        });
    }

    /// Data of `proc` arrived: its waiting Gets are answered (found, or
    /// not found: the data it gave is all it gives), and the Gets of a key
    /// of any rank of its namespace look again.
    fn arrived(&mut self, cx: &mut Ctx, proc: &Proc) {
        let mut keep = Vec::with_capacity(self.waiting.len());
        for w in std::mem::take(&mut self.waiting) {
            let any = w.proc.rank == Rank::UNDEF && w.proc.nspace == proc.nspace;
            if w.proc != *proc && !any {
                keep.push(w);
                continue;
            }
            let opts = GetOptions {
                refresh: false,
                ..w.opts
            };
            let (s, i) = match lookup(cx.shared, &w.req, &w.proc, &w.key, &opts) {
                Lookup::Found(v) => found(&w.key, v),
                Lookup::NotFound(why) => not_found(why),
                Lookup::OutsideScope => outside_scope(),
                Lookup::WaitAny => {
                    keep.push(w);
                    continue;
                }
                Lookup::Wait | Lookup::AskHost => {
                    not_found("the process's data arrived without it")
                }
            };
            cx.answer_then(w.req.conn, w.req.rid, s, i, None);
        }
        self.waiting = keep;
    }

    /// Other nodes' data arrived (a fence collected it): the Gets of a key
    /// of any rank of those namespaces look again.
    pub(super) fn collected(&mut self, cx: &mut Ctx, nspaces: &[crate::types::Nspace]) {
        for ns in nspaces {
            let any = Proc {
                nspace: *ns,
                rank: Rank::UNDEF,
            };
            if self.waiting.iter().any(|w| w.proc == any) {
                self.arrived(cx, &any);
            }
        }
    }

    /// The host's `direct_modex` for `proc` completed.
    pub(super) fn modex_done(&mut self, cx: &mut Ctx, proc: Proc, status: Status, data: Vec<u8>) {
        self.asked.remove(&proc);
        let failed = if status.is_success() {
            import(cx.shared, &data).err()
        } else if status == Status::ERR_NOT_SUPPORTED {
            Some((
                Status::ERR_NOT_FOUND,
                "the host has no direct modex".to_owned(),
            ))
        } else {
            Some((status, "the host's direct modex failed".to_owned()))
        };
        match failed {
            None => self.arrived(cx, &proc),
            Some((s, why)) => {
                let (now, rest): (Vec<Waiting>, Vec<Waiting>) =
                    self.waiting.drain(..).partition(|w| w.proc == proc);
                self.waiting = rest;
                for w in now {
                    let info = vec![Info::new(REASON, why.clone())];
                    cx.answer_then(w.req.conn, w.req.rid, s, info, None);
                }
            }
        }
    }

    /// The host asks for local process `proc`'s data on behalf of another
    /// node: answered when it has committed.
    pub(super) fn serve(&mut self, cx: &mut Ctx, proc: Proc, done: Done<Vec<u8>>) {
        self.serving.push((proc, done));
        self.serve_ready(cx);
    }

    /// Answers the host's requests whose process committed, and fails
    /// those whose process is not here or left without committing.
    fn serve_ready(&mut self, cx: &mut Ctx) {
        if self.serving.is_empty() {
            return;
        }
        let m = cx.shared.nspaces();
        let mut keep = Vec::new();
        for (p, done) in self.serving.drain(..) {
            let Some(ns) = m.get(&p.nspace).filter(|ns| ns.is_local(p.rank)) else {
                done.status(Status::ERR_NOT_FOUND);
                continue;
            };
            if ns.data.committed(p.rank.0) {
                let mut out = Vec::new();
                blob::encode(
                    &p.nspace,
                    ns.data.export(std::iter::once(p.rank.0)),
                    &mut out,
                );
                done.complete(Status::SUCCESS, out);
            } else if ns.has_left(p.rank) {
                done.status(Status::ERR_NOT_FOUND);
            } else {
                keep.push((p, done));
            }
        }
        self.serving = keep;
    }

    /// Processes may have left: the Gets and host requests waiting for
    /// their commit end.
    pub(super) fn settle(&mut self, cx: &mut Ctx) {
        self.serve_ready(cx);
        if self.waiting.is_empty() {
            return;
        }
        let gone: Vec<usize> = {
            let m = cx.shared.nspaces();
            self.waiting
                .iter()
                .enumerate()
                .filter(|(_, w)| {
                    m.get(&w.proc.nspace)
                        .is_none_or(|ns| ns.is_local(w.proc.rank) && ns.has_left(w.proc.rank))
                })
                .map(|(i, _)| i)
                .collect()
        };
        for i in gone.into_iter().rev() {
            let w = self.waiting.swap_remove(i);
            let (s, info) = not_found("the process left without committing");
            cx.answer_then(w.req.conn, w.req.rid, s, info, None);
        }
    }
}

/// Asks the host for `proc`'s data; its answer comes back as
/// [`Cmd::Modex`].
fn ask_host(shared: &Arc<Shared>, proc: Proc, info: &[Info]) {
    let sh = shared.clone();
    let done = Done::new(
        move |status, data| sh.command(Cmd::Modex { proc, status, data }),
        Vec::new,
    );
    shared.host.direct_modex(&proc, info, done);
}

/// Stores every process of every frame of `bytes` (another node's data)
/// whose namespace is registered here; a local process's own data is
/// never replaced by what came back from the host. Returns the
/// namespaces that got data.
pub(super) fn import(
    shared: &Shared,
    bytes: &[u8],
) -> Result<Vec<crate::types::Nspace>, (Status, String)> {
    let frames = blob::decode(bytes)?;
    let mut m = shared.nspaces();
    let mut got = Vec::new();
    for (nspace, procs) in frames {
        let Some(ns) = m.get_mut(&nspace) else {
            continue;
        };
        got.push(nspace);
        for (rank, items) in procs {
            if ns.is_local(Rank(rank)) {
                continue;
            }
            ns.data
                .add(rank, items, true)
                .map_err(|e| (Status::ERR_OUT_OF_RESOURCE, e.to_string()))?;
        }
    }
    Ok(got)
}

impl Timed for Exchange {
    fn deadline(&self) -> Option<Instant> {
        self.waiting.iter().filter_map(|w| w.deadline).min()
    }

    fn tick(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let (due, rest): (Vec<Waiting>, Vec<Waiting>) = self
            .waiting
            .drain(..)
            .partition(|w| w.deadline.is_some_and(|d| d <= now));
        self.waiting = rest;
        for w in due {
            let why = "the Get's PMIX_TIMEOUT passed".to_owned();
            cx.answer_then(
                w.req.conn,
                w.req.rid,
                Status::ERR_TIMEOUT,
                vec![Info::new(REASON, why)],
                None,
            );
        }
    }
}
