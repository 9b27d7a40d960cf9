//! What a client tells its handlers it lost: the records its ring reader
//! missed to lag, less the records in those gaps that were no loss to it —
//! its own relayed records (it skips them anyway) and the ring copies of
//! lane records it had from its peers' lanes (`ring::lane`). A gap's
//! count waits here until both kinds are known, then the rest is reported
//! (as one `EVENTS_LOST` per report).
//!
//! Own records: the server numbers a client's records in its own ring 1,
//! 2, 3… (`source_seq`) and keeps the last number in the client's entry
//! (`own_relayed`), so the own records inside a gap are known exactly at
//! the next own record read, or once the reader has caught up.
//!
//! Lane copies: the client keeps, per peer lane, the positions it took from
//! the lane whose ring copies it has not read yet. The server publishes a
//! lane's ring copies in position order, before it releases their slots,
//! so a copy not read when a later copy of the same lane is, or when the
//! reader has caught up with the ring after the lane's `consumed` passed
//! it, was in a gap. Until then each such copy holds back one record of
//! the gaps' count.

use std::collections::VecDeque;

#[derive(Default)]
pub(super) struct LossAccount {
    /// Missed to lag, not reported yet (some may be own records or lane
    /// copies).
    pending: u64,
    /// The `source_seq` of the last own record accounted for: read, or
    /// known to have been in a gap.
    pub(super) own_last: u64,
    /// Own records beyond `own_last` had been published when a gap was
    /// found: any of them may be in it, so nothing is reported until they
    /// are accounted for.
    own_open: bool,
    /// Per peer lane (client-table entry): positions taken from the lane
    /// whose ring copy was not read yet, oldest first.
    copies: Vec<VecDeque<u64>>,
    /// Their number.
    unseen: u64,
}

impl LossAccount {
    /// Whether a gap's count is waiting.
    pub(super) fn waiting(&self) -> bool {
        self.pending > 0
    }

    /// Whether a gap's count waits on lane copies not read yet.
    pub(super) fn waits_on_lanes(&self) -> bool {
        self.pending > 0 && self.unseen > 0
    }

    /// The peer lanes with ring copies not read yet.
    pub(super) fn lanes_unseen(&self) -> impl Iterator<Item = u32> + '_ {
        self.copies
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.is_empty())
            .map(|(c, _)| c as u32)
    }

    /// What can be reported now: the gaps' count less every record that
    /// may still turn out to be an own record or a lane copy.
    fn report(&mut self) -> u64 {
        if self.own_open {
            return 0;
        }
        let r = self.pending.saturating_sub(self.unseen);
        self.pending -= r;
        r
    }

    /// `n` records of the gaps were no loss.
    fn no_loss(&mut self, n: u64) {
        self.pending = self.pending.saturating_sub(n);
    }

    /// A gap of `missed` records; `relayed` is the entry's `own_relayed`
    /// loaded after the poll that found it. The lost to report now.
    pub(super) fn gap(&mut self, missed: u64, relayed: u64) -> u64 {
        self.pending += missed;
        if relayed > self.own_last {
            // Own records published since the last one accounted for may
            // be in it.
            self.own_open = true;
        }
        self.report()
    }

    /// An own record numbered `seq` was read: own records between the last
    /// one and it were in the gaps before it. The lost to report now.
    pub(super) fn own(&mut self, seq: u64) -> u64 {
        let in_gaps = seq.saturating_sub(self.own_last.saturating_add(1));
        self.own_last = self.own_last.max(seq);
        self.no_loss(in_gaps);
        self.own_open = false;
        self.report()
    }

    /// The reader caught up (its poll found nothing) with `relayed` loaded
    /// before that poll: every own record up to it lies behind the cursor,
    /// so those not read were in gaps. The lost to report now.
    pub(super) fn caught_up(&mut self, relayed: u64) -> u64 {
        if self.pending == 0 || relayed < self.own_last {
            // Nothing waits, or an own record was read before its number
            // was stored: settled at the next chance.
            return 0;
        }
        let in_gaps = relayed - self.own_last;
        self.own_last = relayed;
        self.no_loss(in_gaps);
        self.own_open = false;
        self.report()
    }

    /// Lane record `pos` of lane `c` was taken from the lane: its ring copy
    /// will be skipped, and is no loss if a gap takes it.
    pub(super) fn lane_taken(&mut self, c: u32, pos: u64) {
        let c = c as usize;
        if self.copies.len() <= c {
            self.copies.resize_with(c + 1, VecDeque::new);
        }
        self.copies[c].push_back(pos);
        self.unseen += 1;
    }

    /// The ring copy of lane `c`'s record `pos` was read: copies of that
    /// lane before it not read were in gaps. The lost to report now.
    pub(super) fn lane_copy(&mut self, c: u32, pos: u64) -> u64 {
        self.settle_lane(c, |p| p < pos, Some(pos))
    }

    /// The reader caught up with the ring after loading lane `c`'s
    /// `consumed`: every copy of a position below it was published, so
    /// those not read were in gaps. The lost to report now.
    pub(super) fn lane_published(&mut self, c: u32, consumed: u64) -> u64 {
        self.settle_lane(c, |p| p < consumed, None)
    }

    /// Drops lane `c`'s unread copies `in_gap` says were in a gap (no
    /// loss), and the one at `read` if it is next.
    fn settle_lane(&mut self, c: u32, in_gap: impl Fn(u64) -> bool, read: Option<u64>) -> u64 {
        let Some(q) = self.copies.get_mut(c as usize) else {
            return self.report();
        };
        let mut passed = 0;
        while let Some(&p) = q.front() {
            if in_gap(p) {
                passed += 1;
            } else if Some(p) != read {
                break;
            }
            q.pop_front();
            self.unseen -= 1;
            if Some(p) == read {
                break;
            }
        }
        self.no_loss(passed);
        self.report()
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn ring_copies_of_lane_records_inside_a_gap_are_no_loss() {
        let mut a = LossAccount::default();
        // Lane 3's records 0..4 taken from the lane; copies 0 and 1 read.
        for p in 0..4 {
            a.lane_taken(3, p);
        }
        assert_eq!(a.lane_copy(3, 0), 0);
        assert_eq!(a.lane_copy(3, 1), 0);
        // A gap of 5: up to 2 of them may be copies 2 and 3.
        assert_eq!(a.gap(5, 0), 3);
        // The next copy read is a later one (4, not taken from the lane):
        // 2 and 3 were in the gap, nothing more was lost.
        assert_eq!(a.lane_copy(3, 4), 0);
        assert_eq!((a.pending, a.unseen), (0, 0));
    }

    #[test]
    fn lane_copies_read_after_a_gap_were_not_in_it() {
        let mut a = LossAccount::default();
        a.lane_taken(1, 7);
        assert_eq!(a.gap(2, 0), 1);
        // Copy 7 read after the gap: the gap's second record was lost too.
        assert_eq!(a.lane_copy(1, 7), 1);
        assert_eq!(a.pending, 0);
    }

    #[test]
    fn lane_copies_published_before_the_reader_caught_up_and_not_read_were_in_a_gap() {
        let mut a = LossAccount::default();
        a.lane_taken(0, 10);
        a.lane_taken(0, 11);
        assert_eq!(a.gap(4, 0), 2);
        assert!(a.waits_on_lanes());
        assert_eq!(a.lanes_unseen().collect::<Vec<_>>(), [0]);
        // Caught up once lane 0's queue was released past 10 only.
        assert_eq!(a.lane_published(0, 11), 0);
        assert_eq!(a.pending, 1);
        // Then past 11: both copies were in the gap.
        assert_eq!(a.lane_published(0, 12), 0);
        assert_eq!((a.pending, a.unseen), (0, 0));
    }
}
