//! Dynamic process management: `PMIx_Spawn`, `PMIx_Connect` and
//! `PMIx_Disconnect`. The host does the work (it starts jobs, and it
//! carries a connect across nodes); the server adds what only it knows.
//!
//! - A spawn goes to the host's `spawn` with the authenticated requester
//!   and its `PMIX_USERID`/`PMIX_GRPID` added to the job information; the
//!   new namespace comes back as one `PMIX_NSPACE` result.
//! - A connect or disconnect is collective: the host's upcall has no
//!   caller, and is called once per set of participants and node, as the
//!   Standard's server interface has it. [`Connects`] collects this node's
//!   participants (the fence's rules: `fence::participants`) and calls the
//!   host when all of them called; the host's completion answers each of
//!   them. A participant that leaves first fails the others with
//!   `PMIX_ERR_LOST_CONNECTION`.

use super::fence::{gone, participants};
use super::handoff::with_ids;
use super::outbox::{refusal, Ctx, Req};
use super::pubsub::answer;
use super::{Cmd, Done};
use crate::types::{attrs, App, Info, Nspace, Proc, Status};
use std::collections::HashMap;

/// `PMIx_Spawn`.
pub(super) fn spawn(cx: &mut Ctx, r: Req, job_info: Vec<Info>, apps: Vec<App>) {
    let bad = apps.is_empty() || apps.iter().any(|a| a.cmd.is_empty() || a.maxprocs < 0);
    if bad {
        let why = "no application, or one without a command";
        return cx.answer(r.conn, r.rid, refusal(Status::ERR_BAD_PARAM, why));
    }
    let shared = cx.shared.clone();
    let done = Done::new(
        move |s, ns: Option<Nspace>| {
            let info = ns
                .map(|n| vec![Info::new(attrs::PMIX_NSPACE, n.as_str().to_owned())])
                .unwrap_or_default();
            answer(&shared, r, s, info)
        },
        || None,
    );
    cx.shared
        .host
        .spawn(&r.me, &with_ids(&job_info, r.uid, r.gid), &apps, done);
}

/// Connects and disconnects waiting for this node's other participants.
#[derive(Default)]
pub(super) struct Connects {
    /// By (disconnect?, participant set).
    open: HashMap<(bool, Vec<Proc>), Collecting>,
}

/// One collective's local part.
struct Collecting {
    /// The participants as the first caller named them (what the host is
    /// given).
    given: Vec<Proc>,
    /// The first caller's directives.
    info: Vec<Info>,
    /// This node's participants.
    local: Vec<Proc>,
    /// Who called, and where each answer goes.
    entered: Vec<Req>,
}

impl Connects {
    /// `PMIx_Connect` (or, `disconnect`, `PMIx_Disconnect`) from a client.
    pub(super) fn enter(
        &mut self,
        cx: &mut Ctx,
        r: Req,
        disconnect: bool,
        procs: Vec<Proc>,
        info: Vec<Info>,
    ) {
        if procs.is_empty() {
            let a = refusal(Status::ERR_BAD_PARAM, "no processes");
            return cx.answer(r.conn, r.rid, a);
        }
        if let Err(s) = attrs::check_all(&info) {
            return cx.answer(r.conn, r.rid, refusal(s, "attributes refused"));
        }
        let (set, local) = match participants(cx.shared, &r.me, r.uid, &procs) {
            Ok(s) => s,
            Err((s, why)) => return cx.answer(r.conn, r.rid, refusal(s, why)),
        };
        let c = self
            .open
            .entry((disconnect, set))
            .or_insert_with(|| Collecting {
                given: procs,
                info,
                local,
                entered: Vec::new(),
            });
        if c.entered.iter().any(|e| e.me == r.me) {
            let why = "already in a collective over the same processes";
            return cx.answer(r.conn, r.rid, refusal(Status::ERR_BAD_PARAM, why));
        }
        c.entered.push(r);
        self.settle(cx);
    }

    /// Hands every collective whose local participants all called to the
    /// host, and fails those a participant left before calling. Called
    /// after an entry and whenever a process may have left.
    pub(super) fn settle(&mut self, cx: &mut Ctx) {
        if self.open.is_empty() {
            return;
        }
        let mut ready = Vec::new();
        let mut failed = Vec::new();
        {
            let m = cx.shared.nspaces();
            self.open.retain(|(disc, _), c| {
                let left = c
                    .local
                    .iter()
                    .find(|p| !c.entered.iter().any(|e| e.me == **p) && gone(&m, p));
                if let Some(p) = left {
                    failed.push((std::mem::take(&mut c.entered), format!("{p} left first")));
                    false
                } else if c.entered.len() >= c.local.len() {
                    let c = std::mem::replace(
                        c,
                        Collecting {
                            given: Vec::new(),
                            info: Vec::new(),
                            local: Vec::new(),
                            entered: Vec::new(),
                        },
                    );
                    ready.push((*disc, c));
                    false
                } else {
                    true
                }
            });
        }
        for (entered, why) in failed {
            for r in entered {
                let a = refusal(Status::ERR_LOST_CONNECTION, why.clone());
                cx.answer(r.conn, r.rid, a);
            }
        }
        for (disconnect, c) in ready {
            let shared = cx.shared.clone();
            let entered = c.entered;
            let done = Done::new(
                move |s, ()| {
                    for r in entered {
                        shared.command(Cmd::Answer {
                            conn: r.conn,
                            rid: r.rid,
                            status: s,
                            info: Vec::new(),
                        });
                    }
                },
                || (),
            );
            if disconnect {
                cx.shared.host.disconnect(&c.given, &c.info, done);
            } else {
                cx.shared.host.connect(&c.given, &c.info, done);
            }
        }
    }
}
