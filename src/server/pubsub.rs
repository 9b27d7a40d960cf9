//! `PMIx_Publish`, `PMIx_Lookup` and `PMIx_Unpublish`: the host's data
//! server keeps what is published (the Standard gives the PMIx server no
//! store of its own for it), so each request goes to the host's upcall
//! with the authenticated requester as the publishing (or asking) process
//! and its `PMIX_USERID`/`PMIX_GRPID`; the directives (`PMIX_RANGE`,
//! `PMIX_PERSISTENCE`, `PMIX_WAIT`, `PMIX_TIMEOUT`) reach the host
//! verbatim. The answer comes back through the host's `Done`, posted to the
//! progress thread ([`Req::done`]); a lookup's items travel to the client
//! as [`pdata_to_info`] infos.

use super::handoff::with_ids;
use super::outbox::{refusal, Ctx, Req};
use super::{Cmd, Done};
use crate::types::{attrs, DataArray, Info, Key, PData, Status, Value};

/// The key of one found item in a lookup's answer: an info array of
/// `pmix.procid` (the publisher) and the item itself (its key and value).
/// No Standard key starts with `fastpmix.`, so a refusal's reason beside
/// them is never read as one.
pub(crate) const PDATA_KEY: Key = Key::from_static("fastpmix.pdata");

/// One found item as it travels in a `Result`.
pub(crate) fn pdata_to_info(p: PData) -> Info {
    Info::new(
        PDATA_KEY,
        Value::DataArray(DataArray::Info(vec![
            Info::new(attrs::PMIX_PROCID, p.proc),
            Info::new(p.key, p.value),
        ])),
    )
}

/// The found items of a lookup's answer (other infos, such as a reason,
/// are skipped; a malformed item is dropped).
pub(crate) fn pdata_from_infos(v: Vec<Info>) -> Vec<PData> {
    v.into_iter()
        .filter(|i| i.key == PDATA_KEY)
        .filter_map(|i| match i.value {
            Value::DataArray(DataArray::Info(pair)) => {
                let [p, item]: [Info; 2] = pair.try_into().ok()?;
                let proc = match p.value {
                    Value::Proc(b) if p.key == attrs::PMIX_PROCID => *b,
                    _ => return None,
                };
                Some(PData::new(proc, item.key, item.value))
            }
            _ => None,
        })
        .collect()
}

/// Refuses a request whose directives carry a known attribute of the
/// wrong type (`false`: refused and answered).
fn typed(cx: &mut Ctx, r: &Req, info: &[Info]) -> bool {
    match info.iter().find(|i| attrs::check(i).is_err()) {
        Some(i) => {
            let why = format!("{} has the wrong type", i.key.as_str());
            cx.answer(r.conn, r.rid, refusal(Status::ERR_BAD_PARAM, why));
            false
        }
        None => true,
    }
}

/// `PMIx_Publish`.
pub(super) fn publish(cx: &mut Ctx, r: Req, info: Vec<Info>) {
    if info.is_empty() {
        let a = refusal(Status::ERR_BAD_PARAM, "nothing to publish");
        return cx.answer(r.conn, r.rid, a);
    }
    if !typed(cx, &r, &info) {
        return;
    }
    let shared = cx.shared.clone();
    let done = Done::new(move |s, ()| answer(&shared, r, s, Vec::new()), || ());
    cx.shared
        .host
        .publish(&r.me, &with_ids(&info, r.uid, r.gid), done);
}

/// `PMIx_Lookup`.
pub(super) fn lookup(cx: &mut Ctx, r: Req, keys: Vec<String>, info: Vec<Info>) {
    if keys.is_empty() || keys.iter().any(|k| Key::new(k).is_err() || k.is_empty()) {
        let a = refusal(Status::ERR_BAD_PARAM, "no keys, or an invalid key");
        return cx.answer(r.conn, r.rid, a);
    }
    if !typed(cx, &r, &info) {
        return;
    }
    let shared = cx.shared.clone();
    let done = Done::new(
        move |s, found: Vec<PData>| {
            answer(
                &shared,
                r,
                s,
                found.into_iter().map(pdata_to_info).collect(),
            )
        },
        Vec::new,
    );
    cx.shared
        .host
        .lookup(&r.me, &keys, &with_ids(&info, r.uid, r.gid), done);
}

/// `PMIx_Unpublish` (no keys: everything the caller published).
pub(super) fn unpublish(cx: &mut Ctx, r: Req, keys: Vec<String>, info: Vec<Info>) {
    if keys.iter().any(|k| Key::new(k).is_err() || k.is_empty()) {
        let a = refusal(Status::ERR_BAD_PARAM, "an invalid key");
        return cx.answer(r.conn, r.rid, a);
    }
    if !typed(cx, &r, &info) {
        return;
    }
    let shared = cx.shared.clone();
    let done = Done::new(move |s, ()| answer(&shared, r, s, Vec::new()), || ());
    cx.shared
        .host
        .unpublish(&r.me, &keys, &with_ids(&info, r.uid, r.gid), done);
}

/// Posts the answer of `r` to the progress thread (the host's completion
/// runs on any thread, inside the upcall included).
pub(super) fn answer(shared: &super::Shared, r: Req, status: Status, info: Vec<Info>) {
    shared.command(Cmd::Answer {
        conn: r.conn,
        rid: r.rid,
        status,
        info,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Proc;

    #[test]
    fn found_items_travel_as_infos_and_come_back_whole() {
        let p = Proc::new("pub", 3).unwrap();
        let items = vec![
            PData::new(p, Key::new("svc").unwrap(), "port-1"),
            PData::new(p, Key::new("n").unwrap(), Value::Uint32(7)),
        ];
        let mut wire: Vec<Info> = items.iter().cloned().map(pdata_to_info).collect();
        wire.push(Info::new(crate::job::REASON, "a reason is no item"));
        wire.push(Info::new(PDATA_KEY, Value::Uint8(1)));
        assert_eq!(pdata_from_infos(wire), items);
    }
}
