//! Requests the server hands on: to the host (allocation, `PMIx_Abort`,
//! host log channels) or to its log worker. Each is answered later, when
//! its completion runs on any thread and posts the answer back to the
//! progress thread ([`Cmd::Answer`]).

use super::outbox::{refusal, Ctx, Req};
use super::{lock, Cmd, Done, Shared};
use crate::job::log as joblog;
use crate::types::{attrs, AllocDirective, Info, Proc, Status, Value};

/// Posts a status-only answer of `r` to the progress thread.
fn answer_later(shared: &Shared, r: Req, status: Status) {
    shared.command(Cmd::Answer {
        conn: r.conn,
        rid: r.rid,
        status,
        info: Vec::new(),
    });
}

/// `PMIX_USERID` and `PMIX_GRPID` of the authenticated requester.
pub(super) fn with_ids(dirs: &[Info], uid: u32, gid: u32) -> Vec<Info> {
    let mut d: Vec<Info> = dirs
        .iter()
        .filter(|i| i.key != attrs::PMIX_USERID && i.key != attrs::PMIX_GRPID)
        .cloned()
        .collect();
    d.push(Info::new(attrs::PMIX_USERID, Value::Uint32(uid)));
    d.push(Info::new(attrs::PMIX_GRPID, Value::Uint32(gid)));
    d
}

/// `PMIx_Allocation_request`: the host's business, with the
/// requester's credentials added.
pub(super) fn allocate(cx: &mut Ctx, r: Req, directive: u8, info: Vec<Info>) {
    if let Some(i) = info.iter().find(|i| attrs::check(i).is_err()) {
        let a = refusal(
            Status::ERR_BAD_PARAM,
            format!("{} has the wrong type", i.key.as_str()),
        );
        return cx.answer(r.conn, r.rid, a);
    }
    cx.shared.host.allocate(
        &r.me,
        AllocDirective(directive),
        &with_ids(&info, r.uid, r.gid),
        r.done(cx.shared.clone()),
    );
}

/// `PMIx_Abort`: the host decides (the default answers NOT_SUPPORTED);
/// the caller's answer waits for the host's completion.
pub(super) fn abort(cx: &mut Ctx, r: Req, status: Status, msg: &str, targets: Vec<Proc>) {
    let shared = cx.shared.clone();
    cx.shared.host.abort(
        &r.me,
        status,
        msg,
        &targets,
        Done::new(move |s, ()| answer_later(&shared, r, s), || ()),
    );
}

/// `PMIx_Log`: local channels are written by the server's log worker
/// (in order, off the progress thread), the rest goes to the host.
pub(super) fn log(cx: &mut Ctx, r: Req, data: Vec<Info>, dirs: Vec<Info>) {
    let (me, uid, gid) = (r.me, r.uid, r.gid);
    let req = match joblog::Request::parse(&data, &dirs) {
        Ok(r) => r,
        Err(s) => {
            let a = refusal(s, "invalid log request");
            return cx.answer(r.conn, r.rid, a);
        }
    };
    let shared = cx.shared.clone();
    let global = cx.shared.host.has_global_syslog();
    cx.shared.worker.run(Box::new(move || {
        let now = crate::wire::now_realtime_ns() as i64 / 1_000_000_000;
        // A sink supplied by the embedder may panic: the client still
        // gets an answer.
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut sinks = lock(&shared.log_sinks);
            joblog::carry_out(&req, &me, &mut sinks, global, now)
        }));
        let Ok(out) = out else {
            return answer_later(&shared, r, Status::ERROR);
        };
        if out.to_host.is_empty() {
            return answer_later(&shared, r, out.status);
        }
        let (data, dirs) = (
            out.to_host.clone(),
            with_ids(&out.host_directives, uid, gid),
        );
        let s2 = shared.clone();
        shared.host.log(
            &me,
            &data,
            &dirs,
            Done::new(move |s, ()| answer_later(&s2, r, out.finish(s)), || ()),
        );
    }));
}
