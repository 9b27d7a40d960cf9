//! Requests the server hands on: to the host (allocation, `PMIx_Abort`,
//! host log channels) or to its log worker, and the numbered `Result`
//! frames that answer them, now or when a `Done` completes later on any
//! thread (posted back to the progress thread as `Cmd::Reply`). A request
//! served in parts (job control on this node's processes and other
//! nodes') is answered once, when its last part is in (`Join`).

use super::progress::Loop;
use super::{lock, Cmd, Done, Shared};
use crate::job::{log as joblog, REASON};
use crate::types::{attrs, AllocDirective, Info, Proc, Status, Value};
use crate::wire::control::{self, Reply};
use crate::wire::info_to_record;
use std::sync::{mpsc, Arc, Mutex};

/// A status and results; `None` where the answer comes later.
pub(super) type Answer = Option<(Status, Vec<Info>)>;

pub(super) fn refusal(s: Status, why: impl Into<String>) -> Answer {
    Some((s, vec![Info::new(REASON, why.into())]))
}

/// The results of a Done upcall, posted back to the progress thread.
pub(super) fn post_result(shared: &Shared, conn: u64, rid: u64, s: Status, info: Vec<Info>) {
    shared.command(Cmd::Reply {
        conn,
        frame: result_frame(rid, s, &info),
    });
}

pub(super) fn result_frame(rid: u64, s: Status, info: &[Info]) -> Vec<u8> {
    control::frame(&Reply::Result {
        id: rid,
        status: s.0,
        info: info.iter().map(info_to_record).collect(),
    })
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

/// What waits for a request's answer to be sent (the requester's own
/// signal: it hears the result before it is paused or killed).
pub(super) type Then = Box<dyn FnOnce(&mut Loop)>;

/// A request answered in parts: one `Result` once every part is in.
pub(super) struct Join {
    left: usize,
    parts: Vec<(Status, Vec<Info>)>,
    then: Vec<Then>,
}

/// One answer from the parts: `PMIX_SUCCESS` when every part succeeded,
/// `PMIX_ERR_PARTIAL_SUCCESS` when some did, else the first part's error;
/// the results of every part, in the order the parts came in.
fn merge(parts: Vec<(Status, Vec<Info>)>) -> (Status, Vec<Info>) {
    let ok = parts.iter().filter(|(s, _)| s.is_success()).count();
    let status = match parts.first() {
        Some(_) if ok == parts.len() => Status::SUCCESS,
        Some((s, _)) if ok == 0 => *s,
        Some(_) => Status::ERR_PARTIAL_SUCCESS,
        None => Status::ERROR,
    };
    (status, parts.into_iter().flat_map(|(_, i)| i).collect())
}

/// A request in progress: its connection and number, and who asked (the
/// connection's `SO_PEERCRED` identity).
#[derive(Clone, Copy, Debug)]
pub(super) struct Req {
    pub conn: u64,
    pub rid: u64,
    pub me: Proc,
    pub uid: u32,
    pub gid: u32,
}

impl Req {
    /// Completes the request from any thread (posted to the progress thread).
    pub fn done(self, shared: Arc<Shared>) -> Done<Vec<Info>> {
        Done::new(
            move |s, info| post_result(&shared, self.conn, self.rid, s, info),
            Vec::new,
        )
    }

    /// Completes one part of a request answered in parts ([`Loop::join`]).
    pub fn part(self, shared: Arc<Shared>) -> Done<Vec<Info>> {
        Done::new(
            move |status, info| {
                shared.command(Cmd::Part {
                    conn: self.conn,
                    rid: self.rid,
                    status,
                    info,
                })
            },
            Vec::new,
        )
    }
}

impl Loop {
    /// The request `rid` on `conn`, if the connection is authenticated.
    pub(super) fn req(&self, conn: u64, rid: u64) -> Option<Req> {
        self.requester(conn).map(|(me, uid, gid)| Req {
            conn,
            rid,
            me,
            uid,
            gid,
        })
    }

    /// The authenticated requester behind a connection, with its uid/gid.
    pub(super) fn requester(&self, conn: u64) -> Option<(Proc, u32, u32)> {
        let c = self.conns.get(&conn)?;
        c.who.map(|(p, _)| (p, c.cred.uid, c.cred.gid))
    }

    /// Sends a `Result` reply now, or, for a request answered in parts,
    /// records this part (the last one sends the merged answer).
    pub(super) fn answer(&mut self, conn: u64, rid: u64, a: Answer) {
        if let Some(a) = a {
            self.answer_then(conn, rid, a, None);
        }
    }

    /// [`Loop::answer`], then `then` once the answer was sent.
    pub(super) fn answer_then(
        &mut self,
        conn: u64,
        rid: u64,
        (s, info): (Status, Vec<Info>),
        then: Option<Then>,
    ) {
        let Some(j) = self.joins.get_mut(&(conn, rid)) else {
            self.send_frame(conn, result_frame(rid, s, &info));
            if let Some(f) = then {
                f(self);
            }
            return;
        };
        j.parts.push((s, info));
        j.then.extend(then);
        j.left -= 1;
        if j.left > 0 {
            return;
        }
        let Some(j) = self.joins.remove(&(conn, rid)) else {
            return;
        };
        let (s, info) = merge(j.parts);
        self.send_frame(conn, result_frame(rid, s, &info));
        for f in j.then {
            f(self);
        }
    }

    /// Request `rid` on `conn` will be answered in `parts` parts.
    pub(super) fn join(&mut self, conn: u64, rid: u64, parts: usize) {
        self.joins.insert(
            (conn, rid),
            Join {
                left: parts,
                parts: Vec::new(),
                then: Vec::new(),
            },
        );
    }

    /// The connection `conn` closed: its requests in parts will not be
    /// answered, but what waited for their answers was asked for and runs.
    pub(super) fn forget_joins(&mut self, conn: u64) {
        let keys: Vec<(u64, u64)> = self.joins.keys().filter(|k| k.0 == conn).copied().collect();
        for k in keys {
            if let Some(j) = self.joins.remove(&k) {
                for f in j.then {
                    f(self);
                }
            }
        }
    }

    /// `PMIx_Allocation_request`: the host's business, with the
    /// requester's credentials added.
    pub(super) fn allocate(&mut self, conn: u64, rid: u64, directive: u8, info: Vec<Info>) {
        let Some(r) = self.req(conn, rid) else {
            return;
        };
        if let Some(i) = info.iter().find(|i| attrs::check(i).is_err()) {
            let a = refusal(
                Status::ERR_BAD_PARAM,
                format!("{} has the wrong type", i.key.as_str()),
            );
            return self.answer(conn, rid, a);
        }
        self.shared.host.allocate(
            &r.me,
            AllocDirective(directive),
            &with_ids(&info, r.uid, r.gid),
            r.done(self.shared.clone()),
        );
    }

    /// `PMIx_Abort`: the host decides (the default answers NOT_SUPPORTED);
    /// the caller's answer waits for the host's completion.
    pub(super) fn abort(
        &mut self,
        conn: u64,
        rid: u64,
        status: Status,
        msg: &str,
        targets: Vec<Proc>,
    ) {
        let Some((me, _, _)) = self.requester(conn) else {
            return;
        };
        let shared = self.shared.clone();
        self.shared.host.abort(
            &me,
            status,
            msg,
            &targets,
            Done::new(
                move |s, ()| post_result(&shared, conn, rid, s, Vec::new()),
                || (),
            ),
        );
    }

    /// `PMIx_Log`: local channels are written by the server's log worker
    /// (in order, off the progress thread), the rest goes to the host.
    pub(super) fn log(&mut self, conn: u64, rid: u64, data: Vec<Info>, dirs: Vec<Info>) {
        let Some((me, uid, gid)) = self.requester(conn) else {
            return;
        };
        let req = match joblog::Request::parse(&data, &dirs) {
            Ok(r) => r,
            Err(s) => {
                let a = refusal(s, "invalid log request");
                return self.answer(conn, rid, a);
            }
        };
        let shared = self.shared.clone();
        let global = self.shared.host.has_global_syslog();
        self.shared.worker.run(Box::new(move || {
            let now = crate::wire::now_realtime_ns() as i64 / 1_000_000_000;
            // A sink supplied by the embedder may panic: the client still
            // gets an answer.
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut sinks = lock(&shared.log_sinks);
                joblog::carry_out(&req, &me, &mut sinks, global, now)
            }));
            let Ok(out) = out else {
                return post_result(&shared, conn, rid, Status::ERROR, Vec::new());
            };
            if out.to_host.is_empty() {
                return post_result(&shared, conn, rid, out.status, Vec::new());
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
                Done::new(
                    move |s, ()| post_result(&s2, conn, rid, out.finish(s), Vec::new()),
                    || (),
                ),
            );
        }));
    }
}

/// Work for the [`Worker`] thread.
type Job = Box<dyn FnOnce() + Send>;

pub(crate) struct Worker(Mutex<Option<mpsc::Sender<Job>>>);

impl Worker {
    pub fn new() -> Worker {
        Worker(Mutex::new(None))
    }

    pub fn run(&self, job: Job) {
        let mut g = lock(&self.0);
        if g.is_none() {
            let (tx, rx) = mpsc::channel::<Job>();
            let spawned = std::thread::Builder::new()
                .name("fastpmix-srv-work".into())
                .spawn(move || {
                    while let Ok(j) = rx.recv() {
                        j()
                    }
                });
            if spawned.is_err() {
                drop(g);
                return job(); // no thread to be had: run it here
            }
            *g = Some(tx);
        }
        if let Some(tx) = g.as_ref() {
            if let Err(mpsc::SendError(job)) = tx.send(job) {
                *g = None;
                drop(g);
                job();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(s: Status, why: &str) -> (Status, Vec<Info>) {
        (s, vec![Info::new(crate::job::REASON, why.to_owned())])
    }

    #[test]
    fn a_request_in_parts_succeeds_when_every_part_did_and_keeps_every_reason() {
        let (s, info) = merge(vec![
            part(Status::SUCCESS, "here"),
            part(Status::SUCCESS, "there"),
        ]);
        assert_eq!(s, Status::SUCCESS);
        let why: Vec<_> = info.iter().filter_map(|i| i.value.as_str()).collect();
        assert_eq!(why, ["here", "there"]);
    }

    #[test]
    fn a_request_in_parts_is_partial_when_some_part_failed_and_the_first_error_when_all_did() {
        let partial = merge(vec![
            part(Status::ERR_NOT_FOUND, "here"),
            part(Status::SUCCESS, "there"),
        ]);
        assert_eq!(partial.0, Status::ERR_PARTIAL_SUCCESS);
        let failed = merge(vec![
            part(Status::ERR_NOT_FOUND, "here"),
            part(Status::ERR_NOT_SUPPORTED, "there"),
        ]);
        assert_eq!(failed.0, Status::ERR_NOT_FOUND);
        assert_eq!(failed.1.len(), 2);
    }
}
