//! Routing and publishing one event: into every ring its range reaches,
//! the cache, the host and this process's own handlers.

use super::*;

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
    pub fn dispatch(
        &self,
        from: Via,
        mut n: Notification,
        class: EventClass,
    ) -> Result<Route, Status> {
        // Validate once, as the server's engine would (range, types, custom
        // range rules).
        let origin = match from {
            Via::Server => Origin::ThisProcess,
            Via::Client | Via::Host | Via::Tool => Origin::ThisNode,
        };
        crate::event::Event::validate(&n)?;
        if n.range == DataRange::PROC_LOCAL {
            return Err(Status::ERR_BAD_PARAM);
        }
        let custom = custom_targets(&n.info);
        let route = {
            let ns = self.nspaces();
            let local: Vec<&Nspace> = ns.keys().collect();
            let is_local = |p: &Proc| {
                ns.get(&p.nspace)
                    .is_some_and(|x| x.clients.contains_key(&p.rank))
            };
            // A namespace-range event the server generates about a process
            // (a monitor alert) is scoped to that process's namespace.
            let scope = match from {
                Via::Server => affected(&n.info).unwrap_or(n.source),
                _ => n.source,
            };
            let route = routing::route(from, &scope, n.range, &custom, &local, is_local);
            // A client's event into its own ring: its reader skips it, and
            // must be able to tell it from the others it may miss.
            let own_ring = from == Via::Client && route.rings.contains(&n.source.nspace);
            if !route.rings.is_empty() {
                // The infos are lent to the record encoder, not copied.
                let w = WireEvent {
                    code: n.code,
                    source: n.source,
                    range: n.range,
                    info: std::mem::take(&mut n.info),
                    class,
                    source_seq: if from == Via::Client {
                        self.own_seq(&n.source, own_ring)
                    } else {
                        self.next_seq(&n.source)
                    },
                    timestamp_ns: now_realtime_ns(),
                };
                // One record and one encoding for every ring, both reused
                // from the previous event (lock order: nspaces, scratch,
                // cache).
                let mut scratch = lock(&self.scratch);
                let Scratch { bytes: kept, rec } = &mut *scratch;
                event_into_record(&w, rec);
                n.info = w.info;
                if from == Via::Client {
                    rec.flags |= shm_layout::record::flags::RELAYED;
                }
                let mut buf = std::mem::take(kept);
                buf.clear();
                let bytes = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(&*rec, buf)
                    .map_err(|_| Status::ERR_BAD_PARAM)?;
                let mut only = Vec::new();
                let published =
                    route
                        .rings
                        .iter()
                        .try_for_each(|r| -> Result<(), crate::ring::PublishError> {
                            let Some(x) = ns.get(r) else { return Ok(()) };
                            let wake = ring_wake(x, r, from, &n, &custom, &mut only);
                            lock(&x.writer).publish_bytes_to(&bytes, wake)?;
                            if own_ring && *r == n.source.nspace {
                                // After the publish (Release): the reader that sees
                                // this number sees the record (`RingReader::own_relayed`).
                                let entry = x.clients.get(&n.source.rank).and_then(|c| c.entry);
                                if let Some(e) = entry {
                                    x.seg.region().own_relayed(e).store_release(rec.source_seq);
                                }
                            }
                            Ok(())
                        });
                *kept = bytes;
                published.map_err(|_| Status::ERR_BAD_PARAM)?;
                // Same critical section as the publish (see cache.rs).
                let cacheable = rec.flags & shm_layout::record::flags::DO_NOT_CACHE == 0
                    && (class == EventClass::Environment
                        || route
                            .rings
                            .iter()
                            .any(|r| ns.get(r).is_some_and(|x| x.pending > 0)));
                if cacheable {
                    let rec = Arc::new(rec.clone());
                    let mut c = lock(&self.cache);
                    if class == EventClass::Environment {
                        c.add_environment(rec, cache::Scope::of(n.range, scope.nspace, &custom));
                    } else {
                        for r in &route.rings {
                            let Some(x) = ns.get(r) else { continue };
                            let owed: Vec<Rank> = x
                                .clients
                                .iter()
                                .filter(|(rank, cl)| {
                                    cl.entry.is_none()
                                        && !cl.ever_connected
                                        && (n.range != DataRange::CUSTOM
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
        // bytes; see `client::with_proxy`).
        // Building the engine's event costs a second validation: skipped
        // while the server process registered no handler (as a handler
        // registered concurrently may miss any live event).
        let handlers = route.server_handlers && self.engine.handler_count() > 0;
        // Nobody looks at the infos past this point on a client's LOCAL
        // event between clients (no upcall, no handler): no proxy added.
        let looked_at = route.upcall || handlers || self.trace.is_some();
        if looked_at
            && n.source != self.me
            && !n.info.iter().any(|i| i.key == attrs::PMIX_EVENT_PROXY)
        {
            n.info.push(Info::new(
                attrs::PMIX_EVENT_PROXY,
                crate::types::Value::from(self.me),
            ));
        }
        if let Some(t) = &self.trace {
            t(&trace_line(from, &n, &route));
        }
        if route.upcall {
            let he = HostEvent {
                code: n.code,
                source: n.source,
                range: n.range,
                // Moved when no handler of ours needs them after the host.
                info: if handlers {
                    n.info.clone()
                } else {
                    std::mem::take(&mut n.info)
                },
            };
            self.host.notify_event(&he, Done::ignored());
        }
        if handlers {
            if let Ok(ev) = crate::event::Event::new(n, origin) {
                let _ = self.engine.deliver(ev.with_class(class));
            }
        }
        Ok(route)
    }
}

/// Which sleeping clients of ring `r` an event is for, so the writer wakes
/// only those: the members of a custom range, and never a client's own
/// relayed event's source (it drops its own record). Anyone left asleep is
/// still woken once half the ring is unread (`ring::Wake`).
fn ring_wake<'a>(
    x: &Ns,
    r: &Nspace,
    from: Via,
    n: &Notification,
    custom: &[Proc],
    only: &'a mut Vec<u32>,
) -> Wake<'a> {
    let entry = |rank: &Rank| x.clients.get(rank).and_then(|c| c.entry);
    if n.range == DataRange::CUSTOM
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
    match from {
        Via::Client if n.source.nspace == *r => {
            entry(&n.source.rank).map_or(Wake::All, Wake::AllBut)
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
    info.iter()
        .find(|i| i.key == attrs::PMIX_EVENT_AFFECTED_PROC)
        .and_then(|i| match &i.value {
            crate::types::Value::Proc(p) => Some(**p),
            _ => None,
        })
}

pub(super) fn trace_line(from: Via, n: &Notification, r: &Route) -> String {
    let rings: Vec<&str> = r.rings.iter().map(|n| n.as_str()).collect();
    format!(
        "event {} ({}) from {} [{:?}] range {:?} -> rings [{}]{}{}",
        n.code,
        n.code.0,
        n.source,
        from,
        n.range,
        rings.join(", "),
        if r.upcall { " +host" } else { "" },
        if r.server_handlers { " +server" } else { "" },
    )
}
