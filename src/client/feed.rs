//! What comes from the server becomes engine events here: the ring feed
//! the progress thread pumps ([`RingFeed`], with its loss account), and the
//! conversions of a wire event (ring record, `Welcome` hand-off, local
//! notice) into an engine event.

use super::losses::LossAccount;
use crate::event::{Event, EventClass, Feed, Notification, Origin};
use crate::ring::lane::{widen, LanePoll};
use crate::ring::{Next, RingReader};
use crate::sync::Cell32;
use crate::types::find_info;
use crate::types::{
    attrs, DataRange, Info, Proc, Rank, Status, Value, EVENTS_LOST, EVENTS_LOST_COUNT,
};
use crate::wire::{event_from_archived, now_realtime_ns, WireEvent};
use shm_layout::record::{flags, ArchivedEventRecord};
use std::time::Duration;

/// The client's ring as the engine's [`Feed`]: the progress thread reads
/// records itself and sleeps on its ring wake word, the ring's doorbell and
/// its own doorbell at once.
/// Every record it cannot deliver (lag, corruption, undecodable) becomes
/// an [`EVENTS_LOST`] event carrying the count.
pub(super) struct RingFeed {
    reader: RingReader,
    me: Proc,
    server: Proc,
    losses: LossAccount,
    /// A lane record's copy (bytes from a peer, validated here).
    lane_buf: rkyv::util::AlignedVec,
    /// A lane was found behind its queue: the ring holds its next records
    /// and is read before the lanes again.
    behind: bool,
    /// The lanes of the current scan (kept to reuse its allocation).
    peers: Vec<u32>,
}

/// Records taken per `pump`, so local work interleaves with a flood.
const PUMP_BATCH: usize = 64;

impl RingFeed {
    /// The feed of `me`'s ring, read through `reader`; `server` is the
    /// source of its loss notices.
    pub(super) fn new(reader: RingReader, me: Proc, server: Proc) -> RingFeed {
        RingFeed {
            reader,
            me,
            server,
            losses: LossAccount::default(),
            lane_buf: rkyv::util::AlignedVec::with_capacity(1024),
            behind: false,
            peers: Vec::new(),
        }
    }

    /// Reads every peer's lane (`ring::lane`): the records the namespace's
    /// other clients pushed for it, read before the server's ring copies
    /// reach the ring. A lane found behind is left for the next pump, after
    /// the ring. Records it cannot deliver count as lost.
    fn read_lanes(&mut self, out: &mut Vec<Event>) {
        let mut peers = std::mem::take(&mut self.peers);
        self.reader.lane_peers(&mut peers);
        for &c in &peers {
            loop {
                match self.reader.lane_poll(c, &mut self.lane_buf) {
                    LanePoll::Empty => break,
                    LanePoll::Behind => {
                        self.behind = true;
                        break;
                    }
                    LanePoll::Corrupt(_) => self.lost(1, out),
                    LanePoll::Record(pos) => {
                        let (got, laned) = self.lane_record(c, pos);
                        if laned {
                            // Its ring copy is skipped, and no loss in a gap.
                            self.losses.lane_taken(c, pos);
                        }
                        match got {
                            Ok(Some(ev)) => out.push(ev),
                            Ok(None) => {}
                            Err(()) => self.lost(1, out),
                        }
                    }
                }
            }
        }
        self.peers = peers;
    }

    /// The event of lane `c`'s record at `pos`, copied into `lane_buf`:
    /// `Ok(None)` when it is not for this client (no lane record, another
    /// range), `Err` when it cannot be delivered; and whether it is a lane
    /// record (whose ring copy this reader skips). Its source must be the
    /// entry's client, which the server registered in the entry.
    fn lane_record(&self, c: u32, pos: u64) -> (Result<Option<Event>, ()>, bool) {
        let Ok(rec) = rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(&self.lane_buf)
        else {
            // Not a record: the server drops it too (no ring copy).
            return (Err(()), false);
        };
        if rec.flags.to_native() & flags::LANED == 0
            || rec.lane_entry.to_native() as u32 != c
            || rec.lane_pos.to_native() != pos as u32
        {
            return (Ok(None), false);
        }
        if rec.source.nspace.as_str() != self.me.nspace.as_str()
            || rec.source.rank.to_native() != self.reader.client_rank(c)
        {
            return (Err(()), true);
        }
        let range = DataRange(rec.range);
        if range == DataRange::RM || range == DataRange::PROC_LOCAL || !names_me(rec, &self.me) {
            return (Ok(None), true);
        }
        let ev = event_from_archived(rec).and_then(|mut w| {
            add_proxy(&mut w, self.server);
            into_event(w)
        });
        (ev.map(Some).map_err(|_| ()), true)
    }

    fn lost(&self, n: u64, out: &mut Vec<Event>) {
        // The keeper keeps it for handlers registered later.
        if let Ok(e) = into_event(lost_event(self.server, n)) {
            out.push(e);
        }
    }
}

/// Whether a record's range takes in `me`, as far as its derived fields
/// tell: `false` only for a custom range that names neither `me` nor
/// `me`'s namespace with the wildcard rank (the server derives the field
/// from the infos of every record it publishes, or checks the submitter's
/// against them: `wire::relayable_as_is`).
fn names_me(rec: &ArchivedEventRecord, me: &Proc) -> bool {
    rec.range != DataRange::CUSTOM.0
        || rec.custom_range.iter().any(|p| {
            let rank = p.rank.to_native();
            p.nspace.as_str() == me.nspace.as_str()
                && (rank == Rank::WILDCARD.0 || rank == me.rank.0)
        })
}

/// What one poll of the ring came to. One lives on the stack per record,
/// never in a collection: boxing the event to shrink it would cost an
/// allocation per event.
#[allow(clippy::large_enum_variant)]
enum Step {
    /// This client's own record, numbered: skipped.
    Own(u64),
    /// To hand to the engine; `true`: after the lanes (a peer pushed a
    /// lane record since the last scan, maybe before this was published).
    Deliver(Event, bool),
    /// A custom-range event that does not name this client: skipped.
    NotMine,
    /// Lost to corruption or a bad record.
    Lost(u64),
    /// A gap of this many records.
    Gap(u64),
    /// Nothing to read.
    Empty,
}

impl Feed for RingFeed {
    fn pump(&mut self, out: &mut Vec<Event>) -> usize {
        let before = out.len();
        for _ in 0..PUMP_BATCH {
            // Loaded before the poll only while a gap waits to be settled.
            let relayed_before = self.losses.waiting().then(|| self.reader.own_relayed());
            // And, while it waits on lane copies not read yet, how far the
            // server released their lanes (every copy below is published).
            let released_before: Vec<(u32, u64)> = if self.losses.waits_on_lanes() {
                let lanes: Vec<u32> = self.losses.lanes_unseen().collect();
                lanes
                    .into_iter()
                    .map(|c| (c, self.reader.lane_consumed(c)))
                    .collect()
            } else {
                Vec::new()
            };
            // Reported with this step: gaps that the ring copy read now
            // shows were (partly) copies of lane records taken already.
            let mut copy_lost = 0;
            let step = match self.reader.try_next() {
                Next::Record(mut r) => {
                    // The ring copy of a peer's lane record this client
                    // had from the lane (a record of another namespace's
                    // client names a lane of that namespace's segment).
                    let copy = r.lane_copy(self.me.nspace.as_str());
                    let dup = copy.is_some_and(|(_, _, new)| !new);
                    let rec = r.record();
                    copy_lost = copy.map_or(0, |(c, pos, _)| self.losses.lane_copy(c, pos));
                    // Our own event relayed back is never echoed: seen
                    // on the archived source, before any decoding (a
                    // sender that sleeps through its own events reads
                    // them in batches when half the ring is unread).
                    if rec.flags.to_native() & flags::RELAYED != 0
                        && rec.source.rank.to_native() == self.me.rank.0
                        && rec.source.nspace.as_str() == self.me.nspace.as_str()
                    {
                        // 32 bits in the record, within a ring of the
                        // last own number accounted for.
                        Step::Own(widen(self.losses.own_last, rec.source_seq.to_native()))
                    } else if dup {
                        Step::NotMine
                    } else if !names_me(rec, &self.me) {
                        // A custom range that leaves this client out, read
                        // from the record's derived field before any
                        // decoding (the engine would drop it after).
                        Step::NotMine
                    } else {
                        // Causal order: a peer's lane record pushed before
                        // this record was published is delivered before it
                        // (not for a lane record's own ring copy: the lane
                        // may hold that sender's later records).
                        let moved = copy.is_none() && r.lanes_moved();
                        let decoded = event_from_archived(rec);
                        drop(r);
                        let ev = decoded.and_then(|mut w| {
                            add_proxy(&mut w, self.server);
                            into_event(w)
                        });
                        match ev {
                            Ok(ev) => Step::Deliver(ev, moved),
                            Err(_) => Step::Lost(1),
                        }
                    }
                }
                Next::LaneCopy { lane, pos } => {
                    copy_lost = self.losses.lane_copy(lane, pos);
                    Step::NotMine
                }
                Next::Lagged { missed } => Step::Gap(missed),
                Next::Corrupt { .. } => Step::Lost(1),
                Next::Empty => Step::Empty,
            };
            let empty = matches!(step, Step::Empty);
            let lost = match step {
                Step::Deliver(ev, lanes_first) => {
                    if lanes_first && self.reader.lanes_begin() {
                        self.read_lanes(out);
                    }
                    out.push(ev);
                    0
                }
                Step::Own(seq) => self.losses.own(seq),
                Step::Gap(missed) => {
                    let relayed = self.reader.own_relayed();
                    self.losses.gap(missed, relayed)
                }
                Step::Lost(n) => n,
                Step::NotMine => 0,
                Step::Empty => {
                    let mut n = relayed_before.map_or(0, |r| self.losses.caught_up(r));
                    for (c, consumed) in released_before {
                        n += self.losses.lane_published(c, consumed);
                    }
                    n
                }
            } + copy_lost;
            if lost > 0 {
                self.lost(lost, out);
            }
            if empty {
                // The ring is read: now the lanes, when a peer pushed
                // since the last look or one was behind.
                let behind = std::mem::take(&mut self.behind);
                if self.reader.lanes_begin() || behind {
                    self.read_lanes(out);
                }
                break;
            }
        }
        out.len() - before
    }

    fn ready(&self) -> bool {
        self.behind || self.reader.has_news()
    }

    /// The ring reader's policy: spin only while runnable threads do not
    /// outnumber the cores (16 clients woken at once on 2 cores must not
    /// each burn their window).
    fn spin(&mut self, window: Duration) -> Duration {
        // No window (the placement gave this thread no core of its own):
        // the load need not be read at all (it cost five syscalls per
        // 50 ms of an idle receiver).
        if window.is_zero() {
            return Duration::ZERO;
        }
        self.reader.spin_budget().min(window)
    }

    fn prepare_sleep(&self) -> Option<[(&Cell32, u32); 2]> {
        self.reader.prepare_sleep()
    }

    fn end_sleep(&self) {
        self.reader.end_sleep()
    }
}

/// `PMIX_EVENT_PROXY` for an event the server routed: the proxy the record
/// names (another node's server, relayed by the host), else `server`. The
/// server leaves it out of its records to save ring bytes. Not added to the
/// server's own events, whose source already names it: each attribute
/// costs every C receiver a 512-byte key copy and an allocation per event
/// (+25 % client CPU in `tput-1` when it was added to every event).
pub(super) fn add_proxy(w: &mut WireEvent, server: Proc) {
    if w.source != server && find_info(&w.info, &attrs::PMIX_EVENT_PROXY).is_none() {
        w.info
            .push(Info::new(attrs::PMIX_EVENT_PROXY, Value::from(server)));
    }
}

/// The `EVENTS_LOST` notice for `n` events.
pub(super) fn lost_event(server: Proc, n: u64) -> WireEvent {
    WireEvent {
        code: EVENTS_LOST,
        source: server,
        range: DataRange::PROC_LOCAL,
        info: vec![Info::new(EVENTS_LOST_COUNT, Value::Uint64(n))],
        class: EventClass::Job,
        source_seq: 0,
        timestamp_ns: now_realtime_ns(),
    }
}

/// The engine event for a record from the ring, the replay hand-off, or a
/// local notice.
pub(super) fn into_event(w: WireEvent) -> Result<Event, Status> {
    let origin = if w.range == DataRange::PROC_LOCAL {
        Origin::ThisProcess
    } else {
        Origin::ThisNode
    };
    let n = Notification {
        code: w.code,
        source: w.source,
        range: w.range,
        info: w.info,
    };
    Event::of_class(n, origin, w.class)
}
