//! Routing and publishing one event: into every ring its range reaches,
//! the cache, the host and this process's own handlers.

use super::cache;
use super::lock;
use super::routing;
use super::routing::Route;
use super::routing::Via;
use super::shared::Scratch;
use super::Done;
use super::FastMap;
use super::HostEvent;
use super::Ns;
use super::Shared;
use crate::event::Notification;
use crate::event::Origin;
use crate::event::{Event, EventClass};
use crate::ring::{Collector, Wake};
use crate::types::attrs;
use crate::types::find_info;
use crate::types::DataRange;
use crate::types::Info;
use crate::types::Nspace;
use crate::types::Proc;
use crate::types::Rank;
use crate::types::Status;
use crate::types::Value;
use crate::wire::event_into_record;
use crate::wire::now_realtime_ns;
use crate::wire::WireEvent;
use shm_layout::interest_bit;
use shm_layout::record::EventRecord;
use std::sync::Arc;

impl Shared {
    /// Routes an event the server generates on its own, with no caller to
    /// take an error (monitor updates, a checkpoint's relay). One that
    /// cannot be published (a report with many fields or targets can be
    /// larger than a ring slot) reaches the same receivers as
    /// `EVENTS_LOST` with a count of 1, its affected process, monitor ID
    /// and the reason: nothing is lost silently.
    pub fn publish_or_report(&self, n: Notification, class: EventClass) {
        let keep = |i: &&Info| {
            i.key == attrs::PMIX_EVENT_CUSTOM_RANGE
                || i.key == attrs::PMIX_MONITOR_ID
                || i.key == attrs::PMIX_EVENT_AFFECTED_PROC
        };
        let (code, source, range) = (n.code, n.source, n.range);
        let mut info: Vec<Info> = n.info.iter().filter(keep).cloned().collect();
        let Err(why) = self.dispatch(Via::Server, n, class) else {
            return;
        };
        info.push(Info::new(crate::types::EVENTS_LOST_COUNT, Value::Uint64(1)));
        info.push(Info::new(
            attrs::PMIX_EVENT_TEXT_MESSAGE,
            format!(
                "an event of the server ({code}) could not be published ({why}): most likely larger than a ring slot; select fewer fields or targets"
            ),
        ));
        let lost = Notification {
            code: crate::types::EVENTS_LOST,
            source,
            range,
            info,
        };
        if let Err(s) = self.dispatch(Via::Server, lost, class) {
            self.say(&format!(
                "event {code} not published: {why}, nor its notice: {s}"
            ));
        }
    }

    /// Routes and publishes one event. `Ok(route)` once every ring that
    /// must get it has it; errors (nothing published) are for the caller.
    pub fn dispatch(&self, from: Via, n: Notification, class: EventClass) -> Result<Route, Status> {
        let origin = match from {
            Via::Server => Origin::ThisProcess,
            Via::Client | Via::Host | Via::Tool => Origin::ThisNode,
        };
        // Validated once, here (range, types, custom range rules); the
        // same event goes on to the rings, the host and the engine.
        let mut ev = Event::of_class(n, origin, class)?;
        let (route, to_engine) = self.dispatch_event(from, &mut ev, None, None)?;
        if to_engine {
            let _ = self.engine.deliver(ev);
        }
        Ok(route)
    }

    /// Routes and publishes one validated event (lent, not moved: it is a
    /// few hundred bytes). `submitted`: the collector whose last record the
    /// event was decoded from, when that record can go out as its bytes
    /// are ([`crate::wire::relayable_as_is`]): it is stamped in place and
    /// published without being encoded again. `lane`: a client's lane
    /// record's queue and position ([`Collector::lane`]): its peers had it
    /// from the lane, and its ring copy says so. `Ok((route, true))`: this
    /// process's engine wants the event; the caller delivers it.
    pub(crate) fn dispatch_event(
        &self,
        from: Via,
        ev: &mut Event,
        mut submitted: Option<&mut Collector>,
        lane: Option<(u32, u64)>,
    ) -> Result<(Route, bool), Status> {
        if ev.range() == DataRange::PROC_LOCAL {
            return Err(Status::ERR_BAD_PARAM);
        }
        let (source, range, class) = (*ev.source(), ev.range(), ev.class());
        let custom = custom_targets(ev.info());
        let route = {
            let ns = self.nspaces();
            let is_local = |p: &Proc| {
                ns.get(&p.nspace)
                    .is_some_and(|x| x.clients.contains_key(&p.rank))
            };
            // A namespace-range event the server generates about a process
            // (a monitor alert) is scoped to that process's namespace.
            let scope = match from {
                Via::Server => affected(ev.info()).unwrap_or(source),
                _ => source,
            };
            let route = routing::route(from, &scope, range, &custom, ns.keys(), is_local);
            if !route.rings.is_empty() {
                // Lock order: nspaces, scratch, cache.
                let mut scratch = lock(&self.scratch);
                let sent = Sent {
                    from,
                    topic: interest_bit(ev.code().0),
                    source,
                    range,
                    custom: &custom,
                    // A client's event into its own ring: its reader skips
                    // it, and must be able to tell it from others it misses.
                    own_ring: from == Via::Client && route.rings.contains(&source.nspace),
                    laned: lane.is_some(),
                };
                let seq = if from == Via::Client {
                    self.own_seq(&source, sent.own_ring)
                } else {
                    self.next_seq(&source)
                };
                let ts = now_realtime_ns();
                let relayed = submitted.as_deref_mut().and_then(|c| c.relay_last(seq, ts));
                let built = match relayed {
                    Some(bytes) => {
                        sent.publish(&ns, &route, bytes, seq, &mut scratch.unlaned)?;
                        None
                    }
                    None => {
                        let Scratch {
                            bytes: kept,
                            rec,
                            unlaned,
                        } = &mut *scratch;
                        // The infos are lent to the record encoder, not copied.
                        let w = WireEvent {
                            code: ev.code(),
                            source,
                            range,
                            info: std::mem::take(ev.info_mut()),
                            class,
                            // Low 32 bits: readers widen it (`ring::lane::widen`).
                            source_seq: seq as u32,
                            timestamp_ns: ts,
                        };
                        event_into_record(&w, rec);
                        *ev.info_mut() = w.info;
                        if let Some((entry, pos)) = lane {
                            rec.flags |= shm_layout::record::flags::LANED;
                            // `Collector::lane` checked both against the queue.
                            (rec.lane_entry, rec.lane_pos) = (entry as u16, pos as u32);
                        }
                        if from == Via::Client {
                            rec.flags |= shm_layout::record::flags::RELAYED;
                        }
                        let mut buf = std::mem::take(kept);
                        buf.clear();
                        let bytes =
                            rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(&*rec, buf)
                                .map_err(|_| Status::ERR_BAD_PARAM)?;
                        let published = sent.publish(&ns, &route, &bytes, seq, unlaned);
                        *kept = bytes;
                        published?;
                        Some(&*rec)
                    }
                };
                // Same critical section as the publish (see cache.rs). A
                // relayed record is made an owned one only to be kept.
                let do_not_cache =
                    |flags: u32| flags & shm_layout::record::flags::DO_NOT_CACHE != 0;
                let cacheable = class == EventClass::Environment
                    || route
                        .rings
                        .iter()
                        .any(|r| ns.get(r).is_some_and(|x| x.pending > 0));
                let record = match (built, submitted.as_deref().and_then(|c| c.last())) {
                    _ if !cacheable => None,
                    (Some(rec), _) => (!do_not_cache(rec.flags)).then(|| Arc::new(rec.clone())),
                    (None, Some(a)) if !do_not_cache(a.flags.to_native()) => {
                        rkyv::deserialize::<EventRecord, rkyv::rancor::Error>(a)
                            .ok()
                            .map(Arc::new)
                    }
                    (None, _) => None,
                };
                if let Some(rec) = record {
                    let mut c = lock(&self.cache);
                    if class == EventClass::Environment {
                        c.add_environment(rec, cache::Scope::of(range, scope.nspace, &custom));
                    } else {
                        for r in &route.rings {
                            let Some(x) = ns.get(r) else { continue };
                            let owed: Vec<Rank> = x
                                .clients
                                .iter()
                                .filter(|(rank, cl)| {
                                    cl.entry.is_none()
                                        && !cl.ever_connected
                                        && (range != DataRange::CUSTOM
                                            || custom.iter().any(|p| {
                                                p.covers(&Proc {
                                                    nspace: *r,
                                                    rank: **rank,
                                                })
                                            }))
                                })
                                .map(|(rank, _)| *rank)
                                .collect();
                            c.retain_job(*r, rec.clone(), owed);
                        }
                    }
                }
            }
            route
        };
        // PMIX_EVENT_PROXY, the server that brought the event onto this
        // node: for the host (which relays it on) and this process's own
        // handlers; not on this server's own events, whose source names it.
        // An event the host relays from another node's server keeps the
        // proxy it names. Records carry it only when the host gave it: a
        // client adds this server when the record names none (no ring
        // bytes; see `client::with_proxy`). The engine is skipped while the
        // server process registered no handler (as a handler registered
        // concurrently may miss any live event).
        let handlers = route.server_handlers && self.engine.handler_count() > 0;
        // Nobody looks at the infos past this point on a client's LOCAL
        // event between clients (no upcall, no handler): no proxy added.
        let looked_at = route.upcall || handlers || self.trace.is_some();
        if looked_at
            && source != self.me
            && !ev.info().iter().any(|i| i.key == attrs::PMIX_EVENT_PROXY)
        {
            ev.info_mut()
                .push(Info::new(attrs::PMIX_EVENT_PROXY, Value::from(self.me)));
        }
        if let Some(t) = &self.trace {
            t(&trace_line(from, ev, &route));
        }
        if route.upcall {
            let he = HostEvent {
                code: ev.code(),
                source,
                range,
                info: ev.info(),
            };
            self.host.notify_event(&he, Done::ignored());
        }
        Ok((route, handlers))
    }
}

/// Where one event goes out: what waking its rings needs to know.
struct Sent<'a> {
    from: Via,
    /// The [`interest_bit`] of the event's code: a sleeping client that
    /// registered no handler for it is left asleep.
    topic: u64,
    source: Proc,
    range: DataRange,
    custom: &'a [Proc],
    own_ring: bool,
    /// A client's lane record: its own namespace's clients had it from
    /// the lane, woken by the sender; the ring copy there wakes only a
    /// reader falling behind.
    laned: bool,
}

impl Sent<'_> {
    /// Publishes one record's bytes into every ring of the route; a
    /// client's own ring also learns the number of its own record.
    fn publish(
        &self,
        ns: &FastMap<Nspace, Ns>,
        route: &Route,
        bytes: &[u8],
        seq: u64,
        unlaned: &mut rkyv::util::AlignedVec,
    ) -> Result<(), Status> {
        let mut only = Vec::new();
        // A lane record's copy for another namespace's ring names no lane:
        // its readers skip a record by its lane unvalidated (`ring::lane`).
        // Made once per event, in a buffer reused from one to the next.
        let mut made = false;
        for r in &route.rings {
            let Some(x) = ns.get(r) else { continue };
            let wake = ring_wake(x, r, self, &mut only);
            let own_lane = self.laned && *r == self.source.nspace;
            let topic = if own_lane { 0 } else { self.topic };
            let bytes = if self.laned && !own_lane {
                if !made {
                    unlaned.clear();
                    unlaned.extend_from_slice(bytes);
                    // SAFETY: `bytes` is a record this server encoded, or
                    // one `rkyv::access` validated when the collector took
                    // it from a submission queue (stamped since only in
                    // fixed-size fields); `unlaned` is an aligned copy.
                    unsafe { crate::ring::lane::clear_lane(unlaned) };
                    made = true;
                }
                &unlaned[..]
            } else {
                bytes
            };
            lock(&x.writer)
                .publish_bytes_to(bytes, wake, topic)
                .map_err(|_| Status::ERR_BAD_PARAM)?;
            if self.own_ring && *r == self.source.nspace {
                // After the publish (Release): the reader that sees this
                // number sees the record (`RingReader::own_relayed`).
                let entry = x.clients.get(&self.source.rank).and_then(|c| c.entry);
                if let Some(e) = entry {
                    x.seg.region().own_relayed(e).store_release(seq);
                }
            }
        }
        Ok(())
    }
}

/// Which sleeping clients of ring `r` an event is for, so the writer wakes
/// only those: the members of a custom range, and never a client's own
/// relayed event's source (it drops its own record). Anyone left asleep
/// with a record for it unread is still woken once half the ring is;
/// others pass over what the writer laps (`ring::Wake`).
fn ring_wake<'a>(x: &Ns, r: &Nspace, sent: &Sent, only: &'a mut Vec<u32>) -> Wake<'a> {
    let entry = |rank: &Rank| x.clients.get(rank).and_then(|c| c.entry);
    let custom = sent.custom;
    if sent.range == DataRange::CUSTOM
        && !custom
            .iter()
            .any(|p| p.nspace == *r && p.rank == Rank::WILDCARD)
    {
        only.clear();
        only.extend(
            custom
                .iter()
                .filter(|p| p.nspace == *r)
                .filter_map(|p| entry(&p.rank)),
        );
        return Wake::Only(only);
    }
    match sent.from {
        Via::Client if sent.source.nspace == *r => {
            entry(&sent.source.rank).map_or(Wake::All, Wake::AllBut)
        }
        _ => Wake::All,
    }
}

pub(crate) fn custom_targets(info: &[Info]) -> Vec<Proc> {
    info.iter()
        .filter(|i| i.key.as_str() == attrs::PMIX_EVENT_CUSTOM_RANGE.as_str())
        .flat_map(|i| i.value.as_procs().unwrap_or_default())
        .collect()
}

fn affected(info: &[Info]) -> Option<Proc> {
    find_info(info, &attrs::PMIX_EVENT_AFFECTED_PROC).and_then(|i| match &i.value {
        crate::types::Value::Proc(p) => Some(**p),
        _ => None,
    })
}

pub(super) fn trace_line(from: Via, ev: &Event, r: &Route) -> String {
    let rings: Vec<&str> = r.rings.iter().map(|n| n.as_str()).collect();
    format!(
        "event {} ({}) from {} [{:?}] range {:?} -> rings [{}]{}{}",
        ev.code(),
        ev.code().0,
        ev.source(),
        from,
        ev.range(),
        rings.join(", "),
        if r.upcall { " +host" } else { "" },
        if r.server_handlers { " +server" } else { "" },
    )
}
