//! `fastpmix notify …` and `fastpmix inspect`: tools that talk to a running
//! server over its control socket (they must run as the server's user).
//!
//! The server is found through `--server <socket>`, `FASTPMIX_SERVER_ADDR`,
//! `--pid <launcher pid>` (its socket is `$TMPDIR/fastpmix-<pid>-*/ctl`, and
//! the process listening on it must be that pid), or,
//! when exactly one fastpmix server of this machine is found, that one.

use fastpmix::internals::wire::control::{self, ArchivedReply, Request};
use fastpmix::internals::wire::{info_to_record, proc_to_record};
use fastpmix::types::attrs::{self, AttrType};
use fastpmix::{DataRange, Info, Key, Proc, Rank, Status, Value};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

fn tmpdir() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/tmp".into())
}

/// Finds the server's control socket.
pub fn find_server(server: Option<&str>, pid: Option<u32>) -> Result<PathBuf, String> {
    if let Some(s) = server {
        return Ok(s.into());
    }
    if let Some(s) = std::env::var_os(fastpmix::server::SERVER_ADDR_ENV) {
        return Ok(s.into());
    }
    let prefix = match pid {
        Some(p) => format!("fastpmix-{p}-"),
        None => "fastpmix-".into(),
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(tmpdir())
        .map_err(|e| format!("cannot list {}: {e}", tmpdir().display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path().join("ctl"))
        .filter(|p| is_server(p, pid))
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(
            "no running fastpmix server found (give --server <socket> or --pid <launcher pid>)"
                .into(),
        ),
        n => Err(format!(
            "{n} fastpmix servers are running: choose one with --pid or --server ({})",
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Is `sock` a live server that this tool may trust: listening in process
/// `pid` (when given), as this user (or any user, for root)? A directory
/// name in the shared temp directory is anyone's to imitate; the
/// listener's credentials (`SO_PEERCRED`) are not.
fn is_server(sock: &std::path::Path, pid: Option<u32>) -> bool {
    let Ok(s) = UnixStream::connect(sock) else {
        return false;
    };
    let Ok(cred) = fastpmix::internals::wire::control::peer_cred(&s) else {
        return false;
    };
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    pid.is_none_or(|p| cred.pid as u32 == p) && (cred.uid == euid || euid == 0)
}

fn request(addr: &PathBuf, r: &Request) -> Result<rkyv::util::AlignedVec, String> {
    let mut s = UnixStream::connect(addr)
        .map_err(|e| format!("cannot connect to {}: {e}", addr.display()))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    control::send(&mut s, r).map_err(|e| format!("send: {e}"))?;
    control::read_body(&mut s).map_err(|e| format!("reply: {e}"))
}

/// `fastpmix inspect`.
pub fn inspect(addr: &PathBuf) -> Result<(), String> {
    let body = request(addr, &Request::Inspect)?;
    match control::reply(&body).map_err(|e| e.to_string())? {
        ArchivedReply::Text { text } => {
            print!("{}", text.as_str());
            Ok(())
        }
        ArchivedReply::Refused { status, why } => Err(format!(
            "refused ({}): {}",
            Status(status.to_native()),
            why.as_str()
        )),
        _ => Err("unexpected reply".into()),
    }
}

/// An event code by number or standard name (`PMIX_ERR_PROC_ABORTED`,
/// `ERR_PROC_ABORTED`, `-7`).
pub fn parse_code(s: &str) -> Result<Status, String> {
    if let Ok(n) = s.parse::<i32>() {
        return Ok(Status(n));
    }
    let want = if s.starts_with("PMIX_") {
        s.to_string()
    } else {
        format!("PMIX_{s}")
    };
    Status::all_named()
        .find(|(_, n)| n.eq_ignore_ascii_case(&want))
        .map(|(c, _)| c)
        .ok_or_else(|| format!("unknown event code {s:?} (give a number or a standard name)"))
}

/// A range by name (`namespace`, `PMIX_RANGE_LOCAL`, …).
pub fn parse_range(s: &str) -> Result<DataRange, String> {
    let n = s.to_ascii_lowercase();
    let n = n.trim_start_matches("pmix_range_");
    Ok(match n {
        "rm" => DataRange::RM,
        "local" => DataRange::LOCAL,
        "namespace" => DataRange::NAMESPACE,
        "session" => DataRange::SESSION,
        "global" => DataRange::GLOBAL,
        "custom" => DataRange::CUSTOM,
        "proc_local" => DataRange::PROC_LOCAL,
        _ => {
            return Err(format!(
                "unknown range {s:?} (rm, local, namespace, session, global, custom, proc_local)"
            ))
        }
    })
}

/// `ns:rank` (`*` = wildcard).
pub fn parse_proc(s: &str) -> Result<Proc, String> {
    let (ns, r) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("{s:?} is not ns:rank"))?;
    let rank = if r == "*" {
        Rank::WILDCARD.0
    } else {
        r.parse().map_err(|_| format!("bad rank in {s:?}"))?
    };
    Proc::new(ns, rank).map_err(|e| format!("{s:?}: {e}"))
}

/// `key=value`, typed: a known attribute gets its documented type; an
/// unknown key takes `type:value` (`bool`, `int`, `uint32`, `uint64`,
/// `string`, `proc`) or is a string.
pub fn parse_info(s: &str) -> Result<Info, String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not key=value"))?;
    let key = Key::new(k).map_err(|e| format!("key {k:?}: {e}"))?;
    let known = attrs::ALL.iter().find(|a| a.key == k).map(|a| a.ty);
    let bad = |what: &str| format!("{k}: {v:?} is not {what}");
    let value = match known {
        Some(AttrType::Bool | AttrType::Void | AttrType::BoolOrStatus | AttrType::BoolOrStr) => {
            Value::Bool(v.parse().map_err(|_| bad("true/false"))?)
        }
        Some(AttrType::Int | AttrType::Int32 | AttrType::Pid) => {
            Value::Int(v.parse().map_err(|_| bad("an int"))?)
        }
        Some(AttrType::Uint16 | AttrType::Uint32 | AttrType::RankT) => {
            Value::Uint32(v.parse().map_err(|_| bad("an unsigned int"))?)
        }
        Some(AttrType::Uint64 | AttrType::Size | AttrType::Time) => {
            Value::Uint64(v.parse().map_err(|_| bad("an unsigned int"))?)
        }
        Some(AttrType::Float) => Value::Double(v.parse().map_err(|_| bad("a number"))?),
        Some(AttrType::Proc) => Value::Proc(Box::new(parse_proc(v)?)),
        Some(AttrType::ProcList) => v
            .split(',')
            .map(parse_proc)
            .collect::<Result<Vec<Proc>, String>>()?
            .into(),
        Some(AttrType::DataRange) => Value::DataRange(parse_range(v)?),
        Some(AttrType::Str | AttrType::StrOrArray) => Value::String(v.into()),
        Some(other) => {
            return Err(format!(
                "{k}: values of type {other:?} cannot be given on the command line"
            ))
        }
        None => match v.split_once(':') {
            Some(("bool", x)) => Value::Bool(x.parse().map_err(|_| bad("bool:true/false"))?),
            Some(("int", x)) => Value::Int(x.parse().map_err(|_| bad("int:<n>"))?),
            Some(("uint32", x)) => Value::Uint32(x.parse().map_err(|_| bad("uint32:<n>"))?),
            Some(("uint64", x)) => Value::Uint64(x.parse().map_err(|_| bad("uint64:<n>"))?),
            Some(("string", x)) => Value::String(x.into()),
            Some(("proc", x)) => Value::Proc(Box::new(parse_proc(x)?)),
            _ => Value::String(v.into()),
        },
    };
    Ok(Info::new(key, value))
}

/// `fastpmix notify`.
pub fn notify(
    addr: &PathBuf,
    code: Status,
    range: DataRange,
    source: Proc,
    info: Vec<Info>,
) -> Result<(), String> {
    let r = Request::ToolNotify {
        code: code.0,
        range: range.0,
        source: proc_to_record(&source),
        info: info.iter().map(info_to_record).collect(),
    };
    let body = request(addr, &r)?;
    match control::reply(&body).map_err(|e| e.to_string())? {
        ArchivedReply::Done { status } if status.to_native() == 0 => Ok(()),
        ArchivedReply::Done { status } => Err(format!(
            "the server refused the event: {}",
            Status(status.to_native())
        )),
        ArchivedReply::Refused { status, why } => Err(format!(
            "refused ({}): {}",
            Status(status.to_native()),
            why.as_str()
        )),
        _ => Err("unexpected reply".into()),
    }
}
