//! A client's control request, decoded once from its validated archived
//! frame into owned values. The loop matches on [`Request`] with one line
//! per variant; a request whose contents do not decode is refused here,
//! with its number when it has one, and never reaches a subsystem.

use super::outbox::Refusal;
use super::query::{self, Query};
use crate::event::Notification;
use crate::types::{App, DataRange, Info, Key, Proc, Status};
use crate::wire::control::{ArchivedAppRecord, ArchivedRequest};
use crate::wire::{info_from_archived, proc_from_archived};
use rkyv::vec::ArchivedVec;
use shm_layout::record::{ArchivedInfoRecord, ArchivedProcRecord};

/// One request, owned.
#[derive(Debug)]
pub(super) enum Request {
    /// The first message of a client.
    Hello {
        version: u32,
        nspace: String,
        rank: u32,
    },
    /// From a tool: no `Hello`, the server's uid (or root).
    Tool(ToolRequest),
    /// From a client after its `Hello`.
    Client(ClientRequest),
}

/// What a tool may ask.
#[derive(Debug)]
pub(super) enum ToolRequest {
    /// An event (its source as the tool gave it).
    Notify(Box<Notification>),
    /// The report `fastpmix inspect` prints.
    Inspect,
}

/// What a connected client may ask.
#[derive(Debug)]
pub(super) enum ClientRequest {
    RegisterEvents(Vec<Status>),
    DeregisterEvents(Vec<Status>),
    Allocate {
        rid: u64,
        directive: u8,
        info: Vec<Info>,
    },
    JobControl {
        rid: u64,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    },
    Monitor {
        rid: u64,
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    },
    Abort {
        rid: u64,
        status: Status,
        msg: String,
        targets: Vec<Proc>,
    },
    Log {
        rid: u64,
        data: Vec<Info>,
        directives: Vec<Info>,
    },
    Fence {
        rid: u64,
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    Query {
        rid: u64,
        queries: Vec<Query>,
    },
    /// Items in put order, each with its scope.
    Commit(Vec<(u8, Info)>),
    Get {
        rid: u64,
        proc: Box<Proc>,
        key: Key,
        info: Vec<Info>,
    },
    Finalize,
    Publish {
        rid: u64,
        info: Vec<Info>,
    },
    Lookup {
        rid: u64,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    Unpublish {
        rid: u64,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    Spawn {
        rid: u64,
        job_info: Vec<Info>,
        apps: Vec<App>,
    },
    Connect {
        rid: u64,
        disconnect: bool,
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
}

/// A request that did not decode: refused, with its number when it is a
/// numbered request (answered by a `Result`), else by a `Done`.
#[derive(Debug)]
pub(super) struct Undecodable {
    pub rid: Option<u64>,
    pub refusal: Refusal,
}

impl Request {
    /// Decodes a validated archived request.
    pub(super) fn decode(a: &ArchivedRequest) -> Result<Request, Undecodable> {
        use ArchivedRequest as A;
        let numbered = |rid: u64, what: &'static str| {
            move |s: Status| Undecodable {
                rid: Some(rid),
                refusal: Refusal::new(s, format!("undecodable {what}")),
            }
        };
        use ClientRequest as C;
        Ok(Request::Client(match a {
            A::Hello {
                version,
                nspace,
                rank,
            } => {
                return Ok(Request::Hello {
                    version: version.to_native(),
                    nspace: nspace.as_str().to_owned(),
                    rank: rank.to_native(),
                })
            }
            A::ToolNotify {
                code,
                range,
                source,
                info,
            } => {
                let n = proc_from_archived(source).and_then(|source| {
                    Ok(Notification {
                        code: Status(code.to_native()),
                        source,
                        range: DataRange(*range),
                        info: infos(info)?,
                    })
                });
                let n = n.map_err(|s| Undecodable {
                    rid: None,
                    refusal: Refusal::new(s, "undecodable event"),
                })?;
                return Ok(Request::Tool(ToolRequest::Notify(Box::new(n))));
            }
            A::Inspect => return Ok(Request::Tool(ToolRequest::Inspect)),
            A::RegisterEvents { codes } => C::RegisterEvents(codes_of(codes)),
            A::DeregisterEvents { codes } => C::DeregisterEvents(codes_of(codes)),
            A::Allocate {
                id,
                directive,
                info,
            } => {
                let rid = id.to_native();
                C::Allocate {
                    rid,
                    directive: *directive,
                    info: infos(info).map_err(numbered(rid, "attributes"))?,
                }
            }
            A::JobControl {
                id,
                targets,
                directives,
            } => {
                let rid = id.to_native();
                let bad = numbered(rid, "request");
                C::JobControl {
                    rid,
                    targets: procs(targets).map_err(bad)?,
                    directives: infos(directives).map_err(bad)?,
                }
            }
            A::Monitor {
                id,
                monitor,
                error,
                directives,
            } => {
                let rid = id.to_native();
                let bad = numbered(rid, "request");
                C::Monitor {
                    rid,
                    monitor: info_from_archived(monitor).map_err(bad)?,
                    error: Status(error.to_native()),
                    directives: infos(directives).map_err(bad)?,
                }
            }
            A::Abort {
                id,
                status,
                msg,
                targets,
            } => {
                let rid = id.to_native();
                C::Abort {
                    rid,
                    status: Status(status.to_native()),
                    msg: msg.as_str().to_owned(),
                    targets: procs(targets).map_err(numbered(rid, "targets"))?,
                }
            }
            A::Log {
                id,
                data,
                directives,
            } => {
                let rid = id.to_native();
                let bad = numbered(rid, "request");
                C::Log {
                    rid,
                    data: infos(data).map_err(bad)?,
                    directives: infos(directives).map_err(bad)?,
                }
            }
            A::Fence { id, procs: p, info } => {
                let rid = id.to_native();
                let bad = numbered(rid, "request");
                C::Fence {
                    rid,
                    procs: procs(p).map_err(bad)?,
                    info: infos(info).map_err(bad)?,
                }
            }
            A::Query {
                id,
                keys,
                qualifiers,
            } => {
                let rid = id.to_native();
                C::Query {
                    rid,
                    queries: query::decode(keys, qualifiers).map_err(numbered(rid, "query"))?,
                }
            }
            A::Commit { items } => C::Commit(
                items
                    .iter()
                    .map(|i| Ok((i.scope, info_from_archived(&i.info)?)))
                    .collect::<Result<_, Status>>()
                    .map_err(|s| Undecodable {
                        rid: None,
                        refusal: Refusal::new(s, "undecodable commit"),
                    })?,
            ),
            A::Get {
                id,
                proc,
                key,
                info,
            } => {
                let rid = id.to_native();
                let bad = numbered(rid, "get");
                C::Get {
                    rid,
                    proc: Box::new(proc_from_archived(proc).map_err(bad)?),
                    key: Key::new(key.as_str()).map_err(bad)?,
                    info: infos(info).map_err(bad)?,
                }
            }
            A::Finalize => C::Finalize,
            A::Publish { id, info } => {
                let rid = id.to_native();
                C::Publish {
                    rid,
                    info: infos(info).map_err(numbered(rid, "publish"))?,
                }
            }
            A::Lookup { id, keys, info } => {
                let rid = id.to_native();
                let bad = numbered(rid, "lookup");
                C::Lookup {
                    rid,
                    keys: strings(keys),
                    info: infos(info).map_err(bad)?,
                }
            }
            A::Unpublish { id, keys, info } => {
                let rid = id.to_native();
                let bad = numbered(rid, "unpublish");
                C::Unpublish {
                    rid,
                    keys: strings(keys),
                    info: infos(info).map_err(bad)?,
                }
            }
            A::Spawn { id, job_info, apps } => {
                let rid = id.to_native();
                let bad = numbered(rid, "spawn");
                C::Spawn {
                    rid,
                    job_info: infos(job_info).map_err(bad)?,
                    apps: apps
                        .iter()
                        .map(app_from_archived)
                        .collect::<Result<_, _>>()
                        .map_err(bad)?,
                }
            }
            A::Connect {
                id,
                disconnect,
                procs: p,
                info,
            } => {
                let rid = id.to_native();
                let bad = numbered(rid, "connect");
                C::Connect {
                    rid,
                    disconnect: *disconnect,
                    procs: procs(p).map_err(bad)?,
                    info: infos(info).map_err(bad)?,
                }
            }
        }))
    }
}

fn infos(v: &ArchivedVec<ArchivedInfoRecord>) -> Result<Vec<Info>, Status> {
    v.iter().map(info_from_archived).collect()
}

fn procs(v: &ArchivedVec<ArchivedProcRecord>) -> Result<Vec<Proc>, Status> {
    v.iter().map(proc_from_archived).collect()
}

fn strings(v: &ArchivedVec<rkyv::string::ArchivedString>) -> Vec<String> {
    v.iter().map(|s| s.as_str().to_owned()).collect()
}

fn app_from_archived(a: &ArchivedAppRecord) -> Result<App, Status> {
    Ok(App {
        cmd: a.cmd.as_str().to_owned(),
        argv: strings(&a.argv),
        env: strings(&a.env),
        cwd: a.cwd.as_str().to_owned(),
        maxprocs: a.maxprocs.to_native(),
        info: infos(&a.info)?,
    })
}

fn codes_of(v: &ArchivedVec<rkyv::rend::i32_le>) -> Vec<Status> {
    v.iter().map(|c| Status(c.to_native())).collect()
}
