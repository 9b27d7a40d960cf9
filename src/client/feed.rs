//! What comes from the server becomes engine events here: the ring feed
//! the progress thread pumps ([`RingFeed`], with its loss account), and the
//! conversions of a wire event (ring record, `Welcome` hand-off, local
//! notice) into an engine event.

use crate::event::{Event, EventClass, Feed, Notification, Origin};
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
}

/// What the reader missed to lag, less its own records: a client that
/// notifies its own namespace skips its relayed records anyway, so missing
/// them is no loss (a notifier flooding its namespace was told it lost
/// thousands of events). The server numbers a client's records in its own
/// ring 1, 2, 3… (`source_seq`) and keeps the last number in the client's
/// entry (`own_relayed`), so the own records inside a gap are known:
/// exactly at the next own record read, or once the reader has caught up;
/// until then the gap's count waits here.
#[derive(Default)]
struct LossAccount {
    /// Missed to lag, not reported yet (some may be own records).
    pending: u64,
    /// The `source_seq` of the last own record accounted for: read, or
    /// known to have been in a gap.
    own_last: u64,
}

impl LossAccount {
    /// A gap of `missed` records; `relayed` is the entry's `own_relayed`
    /// loaded after the poll that found it. The lost to report now.
    fn gap(&mut self, missed: u64, relayed: u64) -> u64 {
        self.pending += missed;
        if relayed <= self.own_last {
            // No own record beyond those accounted for was published
            // before the gap was found: none is in it.
            std::mem::take(&mut self.pending)
        } else {
            0
        }
    }

    /// An own record numbered `seq` was read: own records between the last
    /// one and it were in the gaps before it. The lost to report now.
    fn own(&mut self, seq: u64) -> u64 {
        let in_gaps = seq.saturating_sub(self.own_last.saturating_add(1));
        self.own_last = self.own_last.max(seq);
        std::mem::take(&mut self.pending).saturating_sub(in_gaps)
    }

    /// The reader caught up (its poll found nothing) with `relayed` loaded
    /// before that poll: every own record up to it lies behind the cursor,
    /// so those not read were in gaps. The lost to report now.
    fn caught_up(&mut self, relayed: u64) -> u64 {
        if self.pending == 0 || relayed < self.own_last {
            // Nothing waits, or an own record was read before its number
            // was stored: settled at the next chance.
            return 0;
        }
        let in_gaps = relayed - self.own_last;
        self.own_last = relayed;
        std::mem::take(&mut self.pending).saturating_sub(in_gaps)
    }
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
        }
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

/// What one poll of the ring came to.
enum Step {
    /// This client's own record, numbered: skipped.
    Own(u64),
    /// Handed to the engine.
    Delivered,
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
            let relayed_before = (self.losses.pending > 0).then(|| self.reader.own_relayed());
            let step = match self.reader.try_next() {
                Next::Record(r) => {
                    let rec = r.record();
                    // Our own event relayed back is never echoed: seen
                    // on the archived source, before any decoding (a
                    // sender that sleeps through its own events reads
                    // them in batches when half the ring is unread).
                    if rec.flags.to_native() & flags::RELAYED != 0
                        && rec.source.rank.to_native() == self.me.rank.0
                        && rec.source.nspace.as_str() == self.me.nspace.as_str()
                    {
                        Step::Own(rec.source_seq.to_native())
                    } else if !names_me(rec, &self.me) {
                        // A custom range that leaves this client out, read
                        // from the record's derived field before any
                        // decoding (the engine would drop it after).
                        Step::NotMine
                    } else {
                        let decoded = event_from_archived(rec);
                        drop(r);
                        let ev = decoded.and_then(|mut w| {
                            add_proxy(&mut w, self.server);
                            into_event(w)
                        });
                        match ev {
                            Ok(ev) => {
                                out.push(ev);
                                Step::Delivered
                            }
                            Err(_) => Step::Lost(1),
                        }
                    }
                }
                Next::Lagged { missed } => Step::Gap(missed),
                Next::Corrupt { .. } => Step::Lost(1),
                Next::Empty => Step::Empty,
            };
            let lost = match step {
                Step::Own(seq) => self.losses.own(seq),
                Step::Gap(missed) => {
                    let relayed = self.reader.own_relayed();
                    self.losses.gap(missed, relayed)
                }
                Step::Lost(n) => n,
                Step::Delivered | Step::NotMine => 0,
                Step::Empty => relayed_before.map_or(0, |r| self.losses.caught_up(r)),
            };
            if lost > 0 {
                self.lost(lost, out);
            }
            if matches!(step, Step::Empty) {
                break;
            }
        }
        out.len() - before
    }

    fn ready(&self) -> bool {
        self.reader.has_news()
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

#[cfg(test)]
mod loss_tests {
    use super::LossAccount;

    #[test]
    fn a_reader_that_never_notifies_is_told_of_every_gap_at_once() {
        let mut a = LossAccount::default();
        assert_eq!(a.gap(10, 0), 10);
        assert_eq!(a.gap(3, 0), 3);
        assert_eq!(a.pending, 0);
    }

    #[test]
    fn own_records_inside_a_gap_are_settled_at_the_next_own_record() {
        let mut a = LossAccount::default();
        assert_eq!(a.own(1), 0);
        assert_eq!(a.own(2), 0);
        // A gap of 5 while own records 3..=7 were published: undecided.
        assert_eq!(a.gap(5, 7), 0);
        // Own record 8: 3..=7 were the gap. Nothing else was lost.
        assert_eq!(a.own(8), 0);
        // Own 9 read; a gap of 10 holding own 10..=12 and 7 others.
        assert_eq!(a.own(9), 0);
        assert_eq!(a.gap(10, 12), 0);
        assert_eq!(a.own(13), 7);
    }

    #[test]
    fn a_gap_after_the_last_own_record_is_settled_once_caught_up() {
        let mut a = LossAccount::default();
        assert_eq!(a.own(1), 0);
        assert_eq!(a.gap(6, 3), 0);
        // Caught up, with own 2 and 3 published before the last poll: they
        // were in the gap with 4 others.
        assert_eq!(a.caught_up(3), 4);
        assert_eq!((a.pending, a.own_last), (0, 3));
        // Own 4 and 5 in a later gap of 2: nothing else was lost.
        assert_eq!(a.gap(2, 5), 0);
        assert_eq!(a.own(6), 0);
        assert_eq!(a.gap(1, 6), 1);
    }
}
