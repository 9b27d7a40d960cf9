//! A client's `Hello`: checked against the registered client and the
//! socket's credentials, answered with a `Welcome` (its ring, its job's
//! information, the events cached for it), or parked until the host
//! registers the process.

use super::conn::Parked;
use super::progress::{Loop, PIDFD};
use super::{lock, Done};
use crate::sync::{pidfd_open, Token};
use crate::types::{Info, Proc, Status, Value};
use crate::wire::control::{Reply, PROTOCOL_VERSION};
use crate::wire::{info_to_record, proc_to_record};
use std::os::fd::AsRawFd;

impl Loop {
    /// `Hello`: answered now, or parked until the process is registered.
    pub(super) fn hello_request(
        &mut self,
        id: u64,
        version: u32,
        nspace: String,
        rank: u32,
    ) -> bool {
        let authenticated = self.conns.get(&id).is_some_and(|c| c.who.is_some());
        if authenticated || self.parked.contains_key(&id) {
            self.refuse_and_drop(id, Status::ERR_BAD_PARAM, "second Hello");
            return false;
        }
        let p = Parked {
            version,
            nspace,
            rank,
        };
        if !self.registered(&p) {
            self.parked.insert(id, p);
            return true;
        }
        self.welcome(id, &p)
    }

    /// Whether the process a Hello names is registered.
    pub(super) fn registered(&self, p: &Parked) -> bool {
        let Ok(proc) = Proc::new(&p.nspace, p.rank) else {
            return true; // refused by `hello` with its reason
        };
        self.shared
            .nspaces()
            .get(&proc.nspace)
            .is_some_and(|ns| ns.clients.contains_key(&proc.rank))
    }

    /// Answers a Hello: `Welcome`, or refused and dropped. `false`: the
    /// connection was dropped.
    pub(super) fn welcome(&mut self, id: u64, p: &Parked) -> bool {
        match self.hello(id, p.version, &p.nspace, p.rank) {
            Ok(reply) => self.reply(id, &reply),
            Err((s, why)) => {
                self.refuse_and_drop(id, s, &why);
                false
            }
        }
    }

    /// Answers the parked Hellos whose process is registered now.
    pub(super) fn unpark(&mut self) {
        let ready: Vec<u64> = self
            .parked
            .iter()
            .filter(|(_, p)| self.registered(p))
            .map(|(id, _)| *id)
            .collect();
        for id in ready {
            if let Some(p) = self.parked.remove(&id) {
                if self.welcome(id, &p) {
                    self.unpend(id);
                }
            }
        }
    }

    /// A parked Hello whose connection reached the gate's deadline: refused
    /// with the reason the process was not let in.
    pub(super) fn refuse_parked(&mut self, id: u64) -> bool {
        let Some(p) = self.parked.remove(&id) else {
            return false;
        };
        let why = match Proc::new(&p.nspace, p.rank) {
            Ok(proc) if self.shared.nspaces().contains_key(&proc.nspace) => {
                format!("{proc} is not a registered client")
            }
            _ => format!("namespace {} is not registered", p.nspace),
        };
        self.refuse_and_drop(id, Status::ERR_NOT_FOUND, &why);
        true
    }

    pub(super) fn hello(
        &mut self,
        id: u64,
        version: u32,
        nspace: &str,
        rank: u32,
    ) -> Result<Reply, (Status, String)> {
        if version != PROTOCOL_VERSION {
            return Err((
                Status::ERR_NOT_SUPPORTED,
                format!("protocol version {version}, server speaks {PROTOCOL_VERSION}"),
            ));
        }
        let cred = self
            .conns
            .get(&id)
            .map(|c| c.cred)
            .ok_or((Status::ERROR, String::new()))?;
        let proc = Proc::new(nspace, rank).map_err(|s| (s, "invalid namespace".to_string()))?;
        // What the client must refuse itself: events only a relay could
        // deliver, when the host has none.
        let norelay = (!self.shared.host.relays_events())
            .then(|| Info::new(super::HOST_RELAYS_NO_EVENTS, Value::Bool(true)));
        let (reply, entry) = {
            let mut m = self.shared.nspaces();
            let ns = m.get_mut(&proc.nspace).ok_or((
                Status::ERR_NOT_FOUND,
                format!("namespace {nspace} is not registered"),
            ))?;
            let slot = ns.clients.get(&proc.rank).ok_or((
                Status::ERR_NOT_FOUND,
                format!("{proc} is not a registered client"),
            ))?;
            if slot.uid != cred.uid || slot.gid != cred.gid {
                return Err((
                    Status::ERR_NO_PERMISSIONS,
                    format!(
                        "{proc} is registered for uid {} gid {}, the peer is uid {} gid {}",
                        slot.uid, slot.gid, cred.uid, cred.gid
                    ),
                ));
            }
            if slot.entry.is_some() {
                return Err((
                    Status::ERR_BAD_PARAM,
                    format!("{proc} is already connected"),
                ));
            }
            let region = ns.seg.region();
            let head = region.published();
            let entry = region
                .claim_client_from(cred.pid as u32, proc.rank.0, head, ns.claim_from)
                .ok_or((
                    Status::ERR_OUT_OF_RESOURCE,
                    "the namespace's client table is full".to_string(),
                ))?;
            // Its own records count from 1 again, as the claimed entry's
            // `own_relayed` does from 0 (lock order: nspaces, own_seqs).
            self.shared.restart_own_seq(&proc);
            let handoff = lock(&self.shared.cache).handoff(&proc);
            ns.claim_from = entry + 1;
            let slot = ns.clients.get_mut(&proc.rank).expect("checked above");
            slot.entry = Some(entry);
            slot.pid = Some(cred.pid);
            slot.finalized = false;
            if !slot.ever_connected && !slot.ended {
                ns.pending = ns.pending.saturating_sub(1);
            }
            slot.ever_connected = true;
            slot.ended = false;
            (
                Reply::Welcome {
                    segment: ns.seg.name().to_owned(),
                    client: entry,
                    server: proc_to_record(&self.shared.me),
                    job_info: ns
                        .info
                        .iter()
                        .map(info_to_record)
                        .chain(norelay.as_ref().map(info_to_record))
                        .collect(),
                    replay: handoff.events.iter().map(|r| (**r).clone()).collect(),
                    lost: handoff.lost,
                    cache_size: handoff.capacity,
                },
                entry,
            )
        };
        if let Some(w) = self.watches.get_mut(&proc.nspace) {
            w.entries.insert(entry, proc);
        }
        let pidfd = pidfd_open(cred.pid).ok();
        if let Some(fd) = &pidfd {
            let _ = self
                .reactor
                .watch_readable(fd.as_raw_fd(), Token(PIDFD | id));
        }
        if let Some(c) = self.conns.get_mut(&id) {
            c.who = Some((proc, entry));
            c.pidfd = pidfd;
        }
        self.shared.host.client_connected(&proc, Done::ignored());
        Ok(reply)
    }
}
