//! Job control on the server's progress thread (the Standard's "Job
//! Control" section and RFC0015): signals to local processes, cleanup
//! registration, checkpoint declaration and delivery, cancellation,
//! preemption alerts. Restart, provisioning and other nodes' processes go
//! to the host (`handoff.rs` carries the answers back).
//!
//! Authorisation: a requester acts only on processes of its own uid (root
//! on any). Identity comes from `SO_PEERCRED`, never from a message; the
//! host gets `PMIX_USERID` / `PMIX_GRPID` from the same source.

use super::directives::{ckpt_methods, parse_action, required_unknown, Action};
use super::handoff::with_ids;
use super::outbox::{refusal, Answer, Ctx, GraceOrder, Req, Then, Timed};
use super::routing::{Route, Via};
use super::shared::CkptMethod;
use super::{lock, Done, Shared};
use crate::event::{EventClass, Notification};
use crate::job::cleanup::Cleanup;
use crate::job::REASON;
use crate::sync::{pidfd_exited, pidfd_send_signal};
use crate::types::find_info;
use crate::types::Value;
use crate::types::{attrs, DataArray, DataRange, Info, Key, Proc, Rank, Status};
use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

/// Default time between SIGTERM and SIGKILL for `PMIX_JOB_CTRL_TERMINATE`
/// (and for a process the host terminates after a monitor alert).
pub const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(5);
/// Server attribute overriding [`DEFAULT_TERM_GRACE`], in milliseconds.
pub const TERM_GRACE_MS: Key = Key::from_static("fastpmix.srv.term.grace.ms");
/// How long a checkpoint request waits for `PMIX_JCTRL_CHECKPOINT_COMPLETE`
/// when the requester gives no `PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT`.
pub const DEFAULT_CHECKPOINT_TIMEOUT: Duration = Duration::from_secs(60);

/// Requests waiting for something, and what runs when a process ends.
#[derive(Default)]
pub(super) struct JobState {
    cleanups: HashMap<Proc, (Cleanup, u32, u32)>,
    ckpts: Vec<Ckpt>,
    graces: Vec<Grace>,
}

struct Ckpt {
    conn: u64,
    rid: u64,
    requester: Proc,
    ctl_id: Option<String>,
    ckpt_id: String,
    waiting: Vec<Proc>,
    failed: Vec<Proc>,
    deadline: Instant,
}

struct Grace {
    proc: Proc,
    pidfd: OwnedFd,
    deadline: Instant,
    requester: Option<Proc>,
    ctl_id: Option<String>,
}

/// A local process a request resolved to.
pub(super) struct Target {
    pub proc: Proc,
    pub uid: u32,
    /// `None`: registered but not running (never connected, or gone).
    pub pidfd: Option<OwnedFd>,
}

impl JobState {
    /// Resolves targets (empty = the requester's namespace; a wildcard rank
    /// = every registered rank). `Err`: a local target that is not
    /// registered. The second list holds targets of other nodes.
    fn resolve(
        cx: &Ctx,
        me: &Proc,
        targets: &[Proc],
    ) -> Result<(Vec<Target>, Vec<Proc>), (Status, String)> {
        let wanted: Vec<Proc> = if targets.is_empty() {
            vec![Proc {
                nspace: me.nspace,
                rank: Rank::WILDCARD,
            }]
        } else {
            targets.to_vec()
        };
        let ns = cx.shared.nspaces();
        let (mut local, mut remote) = (Vec::new(), Vec::new());
        for t in wanted {
            let Some(x) = ns.get(&t.nspace) else {
                remote.push(t);
                continue;
            };
            let ranks: Vec<Rank> = if t.rank == Rank::WILDCARD {
                let mut r: Vec<Rank> = x.clients.keys().copied().collect();
                r.sort_by_key(|r| r.0);
                r
            } else if x.clients.contains_key(&t.rank) {
                vec![t.rank]
            } else {
                return Err((
                    Status::ERR_NOT_FOUND,
                    format!("{t} is not a process of this job"),
                ));
            };
            for r in ranks {
                let p = Proc {
                    nspace: t.nspace,
                    rank: r,
                };
                if local.iter().any(|x: &Target| x.proc == p) {
                    continue;
                }
                let uid = x.clients[&r].uid;
                local.push(Target {
                    proc: p,
                    uid,
                    pidfd: (cx.pidfd)(&p),
                });
            }
        }
        Ok((local, remote))
    }

    /// `PMIx_Job_control` from the client on `conn`.
    pub(super) fn request(&mut self, cx: &mut Ctx, r: Req, targets: Vec<Proc>, dirs: Vec<Info>) {
        let a = self.inner(cx, r, &targets, &dirs);
        cx.answer(r.conn, r.rid, a);
    }

    fn inner(&mut self, cx: &mut Ctx, r: Req, targets: &[Proc], dirs: &[Info]) -> Answer {
        let (me, uid, gid) = (r.me, r.uid, r.gid);
        // A NULL cancel ID (no value) is "cancel all", whatever its type.
        let null_cancel = |i: &Info| {
            i.key == attrs::PMIX_JOB_CTRL_CANCEL
                && matches!(i.value, Value::Undef | Value::Pointer(_))
        };
        if let Some(i) = dirs
            .iter()
            .find(|i| !null_cancel(i) && attrs::check(i).is_err())
        {
            return refusal(
                Status::ERR_BAD_PARAM,
                format!("{} has the wrong type", i.key.as_str()),
            );
        }
        if let Some(i) = required_unknown(dirs) {
            return refusal(
                Status::ERR_NOT_SUPPORTED,
                format!("required directive {} is not supported", i.key.as_str()),
            );
        }
        let action = match parse_action(dirs) {
            Ok(a) => a,
            Err((s, why)) => return refusal(s, why),
        };
        let cleanup = match Cleanup::parse(dirs) {
            Ok(c) => c,
            Err(s) => return refusal(s, "invalid cleanup registration"),
        };
        // Declarations about the requester itself (RFC0015: informational).
        let mut declared = None;
        let preempt = find_info(dirs, &attrs::PMIX_JOB_CTRL_PREEMPTIBLE);
        let method = find_info(dirs, &attrs::PMIX_JOB_CTRL_CHECKPOINT_METHOD);
        if preempt.is_some() || method.is_some() {
            let mut d = lock(&cx.shared.declared)
                .get(&me)
                .cloned()
                .unwrap_or_default();
            if let Some(p) = preempt {
                d.preemptible = p.value.as_flag().unwrap_or(false);
            }
            if let Some(m) = method {
                let list = match &m.value {
                    Value::DataArray(DataArray::Info(v)) => ckpt_methods(v),
                    _ => Err(Status::ERR_BAD_PARAM),
                };
                match list {
                    Ok(l) if !l.is_empty() => d.ckpt = l,
                    _ => {
                        return refusal(
                            Status::ERR_BAD_PARAM,
                            "PMIX_JOB_CTRL_CHECKPOINT_METHOD must hold _EVENT and/or _SIGNAL",
                        )
                    }
                }
            }
            declared = Some(d);
        }
        if action.is_none() && cleanup.is_none() && declared.is_none() {
            return refusal(
                Status::ERR_BAD_PARAM,
                "no job-control action or registration",
            );
        }
        if let Some(c) = cleanup {
            let e = self
                .cleanups
                .entry(me)
                .or_insert_with(|| (Cleanup::default(), uid, gid));
            if let Err(s) = e.0.merge(c) {
                return refusal(
                    s,
                    "conflicts with this process's earlier cleanup registration",
                );
            }
        }
        if let Some(d) = declared {
            lock(&cx.shared.declared).insert(me, d);
        }
        let ctl_id = find_info(dirs, &attrs::PMIX_JOB_CTRL_ID)
            .and_then(|i| i.value.as_str().map(str::to_owned));
        let Some(action) = action else {
            return Answer::Now(Status::SUCCESS, Vec::new());
        };
        if let Action::Cancel(id) = &action {
            return self.cancel(cx, &me, id);
        }
        let (local, remote) = match Self::resolve(cx, &me, targets) {
            Ok(x) => x,
            Err((s, why)) => return refusal(s, why),
        };
        if let Some(t) = local.iter().find(|t| uid != 0 && t.uid != uid) {
            return refusal(
                Status::ERR_NO_PERMISSIONS,
                format!("uid {uid} may not act on {} (uid {})", t.proc, t.uid),
            );
        }
        if let Action::Host(_) = action {
            return hand_to_host(cx.shared, r, targets, dirs, r.done(cx.shared.clone()));
        }
        if !remote.is_empty() && local.is_empty() {
            // Nothing here: all of it is the host's.
            return hand_to_host(cx.shared, r, &remote, dirs, r.done(cx.shared.clone()));
        }
        if !remote.is_empty() {
            // Act here on the local ones and let the host act on the rest;
            // the requester gets one answer once both parts are in.
            cx.join(r.conn, r.rid, 2);
            let a = self.act(cx, r, ctl_id, &action, local, dirs);
            hand_to_host(cx.shared, r, &remote, dirs, r.done(cx.shared.clone()));
            return a;
        }
        self.act(cx, r, ctl_id, &action, local, dirs)
    }

    /// Carries out a local action on resolved, authorised targets.
    fn act(
        &mut self,
        cx: &mut Ctx,
        r: Req,
        ctl_id: Option<String>,
        action: &Action,
        local: Vec<Target>,
        dirs: &[Info],
    ) -> Answer {
        if let Action::Checkpoint(id) = action {
            return self.checkpoint(cx, r, ctl_id, id, local, dirs);
        }
        let sig = match action {
            Action::Pause => libc::SIGSTOP,
            Action::Resume => libc::SIGCONT,
            Action::Terminate => libc::SIGTERM,
            Action::Kill => libc::SIGKILL,
            Action::Signal(s) => *s,
            _ => return refusal(Status::ERR_NOT_SUPPORTED, "not a local action"),
        };
        let running: Vec<(Proc, OwnedFd)> = local
            .into_iter()
            .filter_map(|t| t.pidfd.map(|fd| (t.proc, fd)))
            .collect();
        if running.is_empty() {
            return refusal(Status::ERR_NOT_FOUND, "no target process is running");
        }
        // The requester itself is signalled last, after its answer: a
        // process that pauses or kills its own job still hears the result.
        let mut mine = None;
        let mut failed = Vec::new();
        let mut done = 0u32;
        for (p, fd) in running {
            if p == r.me {
                mine = Some(fd);
                continue;
            }
            match pidfd_send_signal(&fd, sig) {
                Ok(()) => {
                    done += 1;
                    if *action == Action::Terminate {
                        self.grace(
                            cx.now + cx.shared.term_grace,
                            GraceOrder {
                                proc: p,
                                pidfd: fd,
                                by: Some(r.me),
                                ctl_id: ctl_id.clone(),
                            },
                        );
                    }
                }
                Err(e) => failed.push(format!("{p}: {e}")),
            }
        }
        let mut results = vec![Info::new(
            REASON,
            format!(
                "signal {sig} sent to {} process(es)",
                done + mine.is_some() as u32
            ),
        )];
        let status = if failed.is_empty() {
            Status::SUCCESS
        } else {
            results.push(Info::new(
                REASON,
                format!("not signalled: {}", failed.join("; ")),
            ));
            if done == 0 && mine.is_none() {
                Status::ERR_NOT_FOUND
            } else {
                Status::ERR_PARTIAL_SUCCESS
            }
        };
        if let Some(fd) = mine {
            // Its grace starts with its answer; the grace ends harmlessly
            // if the signal cannot be sent (the process is gone).
            if *action == Action::Terminate {
                if let Ok(dup) = fd.try_clone() {
                    let g = GraceOrder {
                        proc: r.me,
                        pidfd: dup,
                        by: Some(r.me),
                        ctl_id,
                    };
                    self.grace(cx.now + cx.shared.term_grace, g);
                }
            }
            let signal_me: Then = Box::new(move || {
                let _ = pidfd_send_signal(&fd, sig);
            });
            cx.answer_then(r.conn, r.rid, status, results, Some(signal_me));
            return Answer::Later;
        }
        Answer::Now(status, results)
    }

    /// SIGKILL at the end of the grace unless the process is gone.
    pub(super) fn grace(&mut self, deadline: Instant, g: GraceOrder) {
        self.graces.push(Grace {
            proc: g.proc,
            pidfd: g.pidfd,
            deadline,
            requester: g.by,
            ctl_id: g.ctl_id,
        });
    }

    fn checkpoint(
        &mut self,
        cx: &mut Ctx,
        r: Req,
        ctl_id: Option<String>,
        ckpt_id: &str,
        local: Vec<Target>,
        dirs: &[Info],
    ) -> Answer {
        let chosen = match ckpt_methods(dirs) {
            Ok(m) => m.first().copied(),
            Err(s) => return refusal(s, "invalid checkpoint method"),
        };
        let timeout = match find_info(dirs, &attrs::PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT)
            .map(|i| i.value.as_integer())
        {
            None => DEFAULT_CHECKPOINT_TIMEOUT,
            Some(Some(n)) if n > 0 => Duration::from_secs(n.min(86_400 * 365) as u64),
            Some(_) => return refusal(Status::ERR_BAD_PARAM, "checkpoint timeout must be > 0 s"),
        };
        // Every target must be running and have a method before anything
        // is delivered.
        let mut plan = Vec::new();
        {
            let declared = lock(&cx.shared.declared);
            for t in local {
                let Some(fd) = t.pidfd else {
                    return refusal(Status::ERR_NOT_FOUND, format!("{} is not running", t.proc));
                };
                let m =
                    chosen.or_else(|| declared.get(&t.proc).and_then(|d| d.ckpt.first().copied()));
                let Some(m) = m else {
                    return refusal(
                        Status::ERR_NOT_SUPPORTED,
                        format!("{} declared no checkpoint method", t.proc),
                    );
                };
                plan.push((t.proc, fd, m));
            }
        }
        let mut waiting = Vec::new();
        for (p, fd, m) in plan {
            let ok = match m {
                CkptMethod::Signal(s) => pidfd_send_signal(&fd, s).is_ok(),
                CkptMethod::Event(code) => {
                    let mut info = vec![
                        Info::new(
                            attrs::PMIX_EVENT_CUSTOM_RANGE,
                            Value::DataArray(DataArray::Proc(vec![p])),
                        ),
                        Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, Value::Proc(Box::new(p))),
                        Info::new(attrs::PMIX_JOB_CTRL_CHECKPOINT, ckpt_id.to_owned()),
                    ];
                    if let Some(id) = &ctl_id {
                        info.push(Info::new(attrs::PMIX_JOB_CTRL_ID, id.clone()));
                    }
                    let n = Notification {
                        code,
                        source: cx.shared.me,
                        range: DataRange::CUSTOM,
                        info,
                    };
                    cx.shared.dispatch(Via::Server, n, EventClass::Job).is_ok()
                }
            };
            if ok {
                waiting.push(p);
            }
        }
        if waiting.is_empty() {
            return refusal(
                Status::ERR_NOT_FOUND,
                "no target could be asked to checkpoint",
            );
        }
        self.ckpts.push(Ckpt {
            conn: r.conn,
            rid: r.rid,
            requester: r.me,
            ctl_id,
            ckpt_id: ckpt_id.to_owned(),
            waiting,
            failed: Vec::new(),
            deadline: cx.now + timeout,
        });
        Answer::Later
    }

    /// A client's `PMIX_JCTRL_CHECKPOINT_COMPLETE`: completes the requests
    /// waiting for it and makes sure each requester hears the event.
    pub(super) fn checkpoint_complete(
        &mut self,
        cx: &mut Ctx,
        from: Proc,
        route: &Route,
        n: &Notification,
    ) {
        let mut finished = Vec::new();
        let mut tell = Vec::new();
        // A report naming a checkpoint completes that one only.
        let named =
            find_info(&n.info, &attrs::PMIX_JOB_CTRL_CHECKPOINT).and_then(|i| i.value.as_str());
        for (i, c) in self.ckpts.iter_mut().enumerate() {
            if named.is_some_and(|id| id != c.ckpt_id) {
                continue;
            }
            let Some(k) = c.waiting.iter().position(|p| *p == from) else {
                continue;
            };
            c.waiting.swap_remove(k);
            let reached = route.rings.contains(&c.requester.nspace)
                && (n.range != DataRange::CUSTOM
                    || super::custom_targets(&n.info)
                        .iter()
                        .any(|p| p.covers(&c.requester)));
            if !reached && c.requester != from {
                tell.push((c.requester, c.ckpt_id.clone()));
            }
            if c.waiting.is_empty() {
                finished.push(i);
            }
        }
        for (requester, id) in tell {
            let relay = Notification {
                code: Status::JCTRL_CHECKPOINT_COMPLETE,
                source: cx.shared.me,
                range: DataRange::CUSTOM,
                info: vec![
                    Info::new(
                        attrs::PMIX_EVENT_CUSTOM_RANGE,
                        Value::DataArray(DataArray::Proc(vec![requester])),
                    ),
                    Info::new(attrs::PMIX_EVENT_AFFECTED_PROC, Value::Proc(Box::new(from))),
                    Info::new(attrs::PMIX_JOB_CTRL_CHECKPOINT, id),
                ],
            };
            cx.shared.publish_or_report(relay, EventClass::Job);
        }
        for i in finished.into_iter().rev() {
            let c = self.ckpts.swap_remove(i);
            finish_ckpt(cx, c, None);
        }
    }

    /// `PMIX_JOB_CTRL_CANCEL`: pending checkpoints and SIGKILL graces of the
    /// requester with that `PMIX_JOB_CTRL_ID` (empty: all of them).
    fn cancel(&mut self, cx: &mut Ctx, me: &Proc, id: &str) -> Answer {
        let hit = |rq: &Option<Proc>, cid: &Option<String>| {
            *rq == Some(*me) && (id.is_empty() || cid.as_deref() == Some(id))
        };
        let before = self.graces.len();
        self.graces.retain(|g| !hit(&g.requester, &g.ctl_id));
        let mut n = before - self.graces.len();
        let mut i = 0;
        while i < self.ckpts.len() {
            let c = &self.ckpts[i];
            if hit(&Some(c.requester), &c.ctl_id) {
                let c = self.ckpts.swap_remove(i);
                finish_ckpt(cx, c, Some((Status::ERR_JOB_CANCELED, "cancelled".into())));
                n += 1;
            } else {
                i += 1;
            }
        }
        if n == 0 {
            return refusal(
                Status::ERR_NOT_FOUND,
                format!("no pending request with ID {id:?}"),
            );
        }
        Answer::Now(
            Status::SUCCESS,
            vec![Info::new(REASON, format!("{n} request(s) cancelled"))],
        )
    }

    /// A process's connection ended: its declarations and pending requests
    /// go; its cleanup runs once the process is gone. `Some`: its cleanup
    /// waits for this pidfd to report the exit ([`JobState::run_cleanup`]).
    pub(super) fn proc_ended(
        &mut self,
        cx: &mut Ctx,
        p: Proc,
        pidfd: Option<OwnedFd>,
    ) -> Option<(OwnedFd, Proc)> {
        lock(&cx.shared.declared).remove(&p);
        self.ckpts.retain(|c| c.requester != p);
        let mut finished = Vec::new();
        for (i, c) in self.ckpts.iter_mut().enumerate() {
            if let Some(k) = c.waiting.iter().position(|q| *q == p) {
                c.waiting.swap_remove(k);
                c.failed.push(p);
                if c.waiting.is_empty() {
                    finished.push(i);
                }
            }
        }
        for i in finished.into_iter().rev() {
            let c = self.ckpts.swap_remove(i);
            finish_ckpt(cx, c, None);
        }
        if !self.cleanups.contains_key(&p) {
            return None;
        }
        match pidfd {
            Some(fd) if !pidfd_exited(&fd) => Some((fd, p)),
            _ => {
                self.run_cleanup(cx.shared, &p);
                None
            }
        }
    }

    /// Runs `p`'s registered cleanup on a thread of its own (it blocks on
    /// the file system and switches credentials).
    pub(super) fn run_cleanup(&mut self, shared: &Shared, p: &Proc) {
        let Some((c, uid, gid)) = self.cleanups.remove(p) else {
            return;
        };
        let trace = shared.trace.clone();
        let p = *p;
        let _ = std::thread::Builder::new()
            .name("fastpmix-cleanup".into())
            .spawn(move || {
                let r = c.execute(uid, gid);
                if let Some(t) = trace {
                    t(&format!(
                        "cleanup for {p}: removed {:?}, kept {:?}",
                        r.removed, r.kept
                    ));
                }
            });
    }
}

impl Timed for JobState {
    /// Deadlines of job control (graces, checkpoint timeouts).
    fn deadline(&self) -> Option<Instant> {
        let g = self.graces.iter().map(|g| g.deadline);
        let c = self.ckpts.iter().map(|c| c.deadline);
        g.chain(c).min()
    }

    /// Runs what is due.
    fn tick(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let (due, keep): (Vec<Grace>, Vec<Grace>) = std::mem::take(&mut self.graces)
            .into_iter()
            .partition(|g| g.deadline <= now);
        self.graces = keep;
        for g in due {
            if !pidfd_exited(&g.pidfd) {
                let _ = pidfd_send_signal(&g.pidfd, libc::SIGKILL);
                if let Some(t) = &cx.shared.trace {
                    t(&format!(
                        "{} ignored SIGTERM: SIGKILL after the grace",
                        g.proc
                    ));
                }
            }
        }
        let mut i = 0;
        while i < self.ckpts.len() {
            if self.ckpts[i].deadline <= now {
                let c = self.ckpts.swap_remove(i);
                let why = format!("no checkpoint completion from {:?} in time", c.waiting);
                finish_ckpt(cx, c, Some((Status::ERR_TIMEOUT, why)));
            } else {
                i += 1;
            }
        }
    }
}

/// Restart, provisioning and other nodes' processes: the host's, with
/// the requester's credentials; `done` answers the request (or its
/// host part, [`Req::part`]).
fn hand_to_host(
    shared: &Shared,
    r: Req,
    targets: &[Proc],
    dirs: &[Info],
    done: Done<Vec<Info>>,
) -> Answer {
    shared
        .host
        .job_control(&r.me, targets, &with_ids(dirs, r.uid, r.gid), done);
    Answer::Later
}

fn finish_ckpt(cx: &mut Ctx, c: Ckpt, why: Option<(Status, String)>) {
    let mut results = vec![Info::new(
        attrs::PMIX_JOB_CTRL_CHECKPOINT,
        c.ckpt_id.clone(),
    )];
    let status = match why {
        Some((s, w)) => {
            results.push(Info::new(REASON, w));
            s
        }
        None if c.failed.is_empty() => Status::SUCCESS,
        None => {
            results.push(Info::new(
                REASON,
                format!("ended before completing the checkpoint: {:?}", c.failed),
            ));
            Status::ERR_PROC_CHECKPOINT
        }
    };
    cx.answer(c.conn, c.rid, Answer::Now(status, results));
}

impl Shared {
    /// `PMIX_JCTRL_PREEMPT_ALERT` to every target that declared itself
    /// preemptible (targets empty: every such process). Returns how many
    /// processes it reached.
    pub(super) fn preempt_alert(&self, targets: &[Proc], info: Vec<Info>) -> Result<usize, Status> {
        let chosen: Vec<Proc> = lock(&self.declared)
            .iter()
            .filter(|(p, d)| {
                d.preemptible && (targets.is_empty() || targets.iter().any(|t| t.covers(p)))
            })
            .map(|(p, _)| *p)
            .collect();
        if chosen.is_empty() {
            return Ok(0);
        }
        let mut all = info;
        all.retain(|i| i.key != attrs::PMIX_EVENT_CUSTOM_RANGE);
        all.push(Info::new(
            attrs::PMIX_EVENT_CUSTOM_RANGE,
            Value::DataArray(DataArray::Proc(chosen.clone())),
        ));
        let n = Notification {
            code: Status::JCTRL_PREEMPT_ALERT,
            source: self.me,
            range: DataRange::CUSTOM,
            info: all,
        };
        self.dispatch(Via::Host, n, EventClass::Job)?;
        Ok(chosen.len())
    }
}
