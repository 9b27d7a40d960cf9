//! Lanes: a client's records for its own namespace reach its peers with
//! one wake-up. The sender's submission queue is its lane: after the push,
//! the sender bumps the segment's `lane_epoch` and wakes the sleeping peers
//! that want the code itself ([`wake_peers`]); a peer copies the record out
//! of the slot, using the slot's `seq` as a seqlock ([`LaneCore::poll`]).
//! The server still takes every record from the queue and publishes a ring
//! copy (for the cache, the host, other namespaces and readers that missed
//! the lane), without waking anyone for it; the ring copy names its lane
//! position, so a reader delivers each record once ([`LaneCore::ring_copy`]).
//!
//! Why a reader never loses a record to a rewritten slot: the server
//! releases a slot only after it published the record's ring copy, and the
//! producer rewrites a slot only after that release. A reader that sees the
//! slot rewritten (an Acquire load of the new `seq`, or of a `produced`
//! more than a queue ahead) therefore sees the ring copy in the ring, and
//! reads the ring before the lane again (docs/shm-format.md, "Lanes").

use super::protocol::RingMemory;
use super::submit::SubmitMemory;
use crate::sync::{fence_acquire, WakeBatch};
use rkyv::util::AlignedVec;

/// Which of its namespace's peers a record is for, as its sender sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane<'a> {
    /// No lane record: the server alone takes it.
    No,
    /// Every peer (a custom range's wildcard rank of the namespace, and
    /// every range but RM and PROC_LOCAL).
    All,
    /// The peers of these ranks (a custom range): only they are woken for
    /// it; the others skip it when they read it.
    Ranks(&'a [u32]),
}

/// Where a sender last found the entries of the ranks its custom ranges
/// named: a scan of the whole client table loads a line per entry (about
/// 1 µs at 256 entries, on the sender's path to its peer's wake-up), a
/// cached entry one. The sender keeps it (its `Submitter`).
#[derive(Debug, Default)]
pub(crate) struct PeerIndex {
    /// (rank, entry), one per rank found.
    found: Vec<(u32, u32)>,
}

impl PeerIndex {
    /// Whether the entries of `ranks` other than `mine` are all still
    /// where they were found: the entry is active and holds that rank. A
    /// rank's entry changes only after its old one was freed (the server
    /// claims one per connection, after releasing the last), and the new
    /// reader sleeps only after its claim: a sender that, after its fence,
    /// still finds the old entry active reads it before that release, so
    /// the new reader's fence comes after the sender's and it sees the
    /// sender's `lane_epoch` (Dekker, as in [`wake_peers`]).
    fn covers<M: RingMemory>(&self, m: &M, mine: u32, ranks: &[u32]) -> bool {
        ranks.iter().filter(|&&r| r != mine).all(|&r| {
            self.found
                .iter()
                .find(|&&(x, _)| x == r)
                .is_some_and(|&(_, c)| m.client_active(c) && m.client_rank(c) == r)
        })
    }

    /// The entries [`PeerIndex::covers`] checked (one per rank found).
    fn entries<'a>(&'a self, mine: u32, ranks: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
        self.found
            .iter()
            .filter(move |&&(r, _)| r != mine && ranks.contains(&r))
            .map(|&(_, c)| c)
    }

    fn note(&mut self, rank: u32, c: u32) {
        match self.found.iter_mut().find(|(r, _)| *r == rank) {
            Some(f) => f.1 = c,
            None => self.found.push((rank, c)),
        }
    }
}

/// Wakes every sleeping reader of the segment other than `me` that wants
/// `topic` and that `ranks` names (`None`: any), after the sender's lane
/// record and its SeqCst fence. A Dekker pair with the reader's sleep: it
/// stores `waiting = 1`, fences, then loads `lane_epoch`
/// ([`LaneCore::has_news`]); the sender bumped
/// `lane_epoch`, fenced, and loads `waiting` here. Either the reader sees
/// the new epoch and does not sleep, or this sees it waiting. The sleeper
/// bits are not used: the server takes them for a moment in every sweep,
/// and a bit it holds would hide the sleeper from this scan. The entries
/// of `ranks` come from `index` while they are where it found them
/// ([`PeerIndex`]); otherwise every entry is looked at, and `index`
/// learns where they are.
pub(crate) fn wake_peers<M: SubmitMemory + RingMemory>(
    m: &M,
    me: u32,
    topic: u64,
    ranks: Option<&[u32]>,
    index: &mut PeerIndex,
) {
    let mut batch = WakeBatch::new();
    if let Some(r) = ranks {
        let mine = m.client_rank(me);
        if index.covers(m, mine, r) {
            for c in index.entries(mine, r) {
                wake_peer(m, c, topic, &mut batch);
            }
            batch.flush();
            return;
        }
    }
    for c in (0..m.client_capacity()).filter(|&c| c != me) {
        if let Some(r) = ranks {
            // A custom range wakes its targets only, as the server's
            // `Wake::Only` does (the rank is on the line `waiting` is on).
            let rank = m.client_rank(c);
            if !r.contains(&rank) {
                continue;
            }
            if m.client_active(c) {
                index.note(rank, c);
            }
        }
        wake_peer(m, c, topic, &mut batch);
    }
    batch.flush();
}

/// Wakes entry `c` if it sleeps and wants `topic` (see [`wake_peers`]).
fn wake_peer<'m, M: RingMemory>(m: &'m M, c: u32, topic: u64, batch: &mut WakeBatch<'m>) {
    let waiting = m.client_waiting(c);
    if waiting.load_relaxed() != 1 {
        return;
    }
    // A stale interest is older, so smaller: a reader that just added
    // the bit sees this record in its own check (`protocol::want`
    // looks at the queues too).
    if m.client_interest(c).load_relaxed() & topic == 0 {
        return;
    }
    // One waker wins the swap (the server may be waking it too).
    if waiting.swap_seqcst(0) == 1 {
        let w = m.client_wake(c);
        w.fetch_add_seqcst(1);
        batch.add(w);
    }
}

/// Whether some queue holds a record the server has not released yet: a
/// lane record whose ring copy may still be to come, published without a
/// wake-up. `protocol::want` asks, after its fence.
pub(crate) fn unreleased<M: SubmitMemory + RingMemory>(m: &M) -> bool {
    (0..m.client_capacity()).any(|c| m.produced(c).load_acquire() != m.consumed(c).load_acquire())
}

/// A reader's place in one lane.
#[derive(Clone, Copy, Debug)]
struct Place {
    /// `produced` when the reader attached: a ring copy of an earlier
    /// record is delivered from the ring (the lane never had it for us).
    init: u64,
    /// The next position to deliver from the lane; a ring copy of a lane
    /// record below it was delivered (or passed over) already.
    next: u64,
    /// `consumed` when the lane was last found behind: after the reader has
    /// read the ring since, every record below it was in the ring.
    behind_at: Option<u64>,
}

/// What one look at a lane found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LanePoll {
    /// The record at this position was copied into the caller's buffer
    /// (not yet validated: the bytes come from another process).
    Record(u64),
    /// The next record's slot was rewritten: its ring copy is in the ring,
    /// which the reader must read before this lane again.
    Behind,
    /// The slot's length is impossible (the producer corrupted it): the
    /// record is skipped (its ring copy never comes: the server drops it).
    Corrupt(u64),
    /// Nothing new.
    Empty,
}

/// A reader's private state over every lane of its segment.
pub(crate) struct LaneCore {
    me: u32,
    /// `lane_epoch` at the last scan.
    seen: u64,
    lanes: Vec<Place>,
}

impl LaneCore {
    /// The lanes as reader `me` finds them now. Called once the reader's
    /// ring cursor is set: a record pushed after this has its ring copy
    /// after the cursor (the server published it after the push, and read
    /// `head` for the cursor before), so each is delivered once, from the
    /// lane or the ring.
    pub(crate) fn new<M: SubmitMemory + RingMemory>(m: &M, me: u32) -> LaneCore {
        let seen = m.lane_epoch().load_acquire();
        let lanes = (0..m.client_capacity())
            .map(|c| {
                let p = m.produced(c).load_acquire();
                Place {
                    init: p,
                    next: p,
                    behind_at: None,
                }
            })
            .collect();
        LaneCore { me, seen, lanes }
    }

    /// Whether a lane record was pushed since the last scan.
    pub(crate) fn has_news<M: SubmitMemory>(&self, m: &M) -> bool {
        m.lane_epoch().load_acquire() != self.seen
    }

    /// Starts a scan when a lane record was pushed since the last one
    /// (`true`). The epoch is taken before the lanes are read, so a record
    /// pushed during the scan makes the next [`LaneCore::has_news`] true.
    pub(crate) fn begin<M: SubmitMemory>(&mut self, m: &M) -> bool {
        let e = m.lane_epoch().load_acquire();
        if e == self.seen {
            return false;
        }
        self.seen = e;
        true
    }

    /// The lanes to scan: every entry but the reader's own whose bit is
    /// set in `lane_senders` (loaded after [`LaneCore::begin`]'s epoch: a
    /// sender sets its bit before its epoch RMW). Written into `out`, so a
    /// scan allocates nothing once `out` has grown.
    pub(crate) fn peers<M: SubmitMemory>(&self, m: &M, out: &mut Vec<u32>) {
        out.clear();
        let cap = self.lanes.len() as u32;
        let mut bits = m.lane_senders().load_acquire();
        while bits != 0 {
            let b = bits.trailing_zeros();
            bits &= bits - 1;
            out.extend((b..cap).step_by(64).filter(|&c| c != self.me));
        }
    }

    /// Copies lane `c`'s next record into `out`.
    pub(crate) fn poll<M: SubmitMemory>(
        &mut self,
        m: &M,
        c: u32,
        out: &mut AlignedVec,
    ) -> LanePoll {
        let Some(lane) = self.lanes.get_mut(c as usize) else {
            return LanePoll::Empty;
        };
        let p = lane.next;
        // Acquire: pairs with the producer's Release of `produced`.
        let produced = m.produced(c).load_acquire();
        if produced <= p {
            return LanePoll::Empty;
        }
        let depth = m.depth() as u64;
        let i = (p % depth) as u32;
        let seq = m.entry_seq(c, i);
        // Acquire: the producer's commit (or, for a rewritten slot, its
        // mark, which carries the server's release and so its ring copy).
        if produced - p > depth || seq.load_acquire() != p + 1 {
            return behind(lane, m, c);
        }
        let len = m.entry_len(c, i).load_relaxed();
        if len <= m.capacity() {
            m.read_entry_shared(c, i, len, out);
        }
        // The seqlock re-check: a copy that read any byte of a rewrite sees
        // the producer's mark here (its release fence before those bytes
        // pairs with this acquire fence).
        fence_acquire();
        if seq.load_acquire() != p + 1 {
            return behind(lane, m, c);
        }
        lane.next = p + 1;
        lane.behind_at = None;
        if len > m.capacity() {
            return LanePoll::Corrupt(p);
        }
        LanePoll::Record(p)
    }

    /// The position of lane `c`'s record whose low 32 bits are `low` when
    /// the reader delivered it from the lane already (its ring copy is a
    /// duplicate); `None` otherwise. Changes nothing ([`LaneCore::ring_copy`]
    /// gives the same answer for it).
    pub(crate) fn delivered(&self, c: u32, low: u32) -> Option<u64> {
        let lane = self.lanes.get(c as usize)?;
        let pos = widen(lane.next, low);
        (pos >= lane.init && pos < lane.next).then_some(pos)
    }

    /// A ring copy of lane `c`'s record at the position whose low 32 bits
    /// are `low`: the position, and `true` when the reader delivers it
    /// (the lane did not).
    pub(crate) fn ring_copy(&mut self, c: u32, low: u32) -> (u64, bool) {
        let Some(lane) = self.lanes.get_mut(c as usize) else {
            return (low as u64, true);
        };
        let pos = widen(lane.next, low);
        if pos < lane.init {
            return (pos, true);
        }
        if pos < lane.next {
            return (pos, false);
        }
        lane.next = pos + 1;
        (pos, true)
    }
}

/// A ring record's lane, read before the record is validated: `Some((lane
/// entry, low 32 bits of its position))` when its flags say `LANED`. Only
/// fixed-size fields at fixed offsets from the root are read (where
/// `rkyv::access` finds the root: the end of the bytes), so bytes that are
/// no record give a wrong answer, never an out-of-bounds read. The server
/// sets `LANED` only in the copy it publishes into the sender's own
/// namespace's ring, so a reader that finds the record delivered from that
/// lane ([`LaneCore::delivered`]) can skip it unvalidated.
pub(crate) fn peek(bytes: &[u8]) -> Option<(u32, u32)> {
    use shm_layout::record::{flags, ArchivedEventRecord};
    use std::mem::{offset_of, size_of};
    let root = bytes.len().checked_sub(size_of::<ArchivedEventRecord>())?;
    let word = |off: usize, n: usize| bytes.get(root + off..root + off + n);
    let u32_at = |off| Some(u32::from_le_bytes(word(off, 4)?.try_into().ok()?));
    if u32_at(offset_of!(ArchivedEventRecord, flags))? & flags::LANED == 0 {
        return None;
    }
    let entry = word(offset_of!(ArchivedEventRecord, lane_entry), 2)?;
    let entry = u16::from_le_bytes(entry.try_into().ok()?);
    Some((
        u32::from(entry),
        u32_at(offset_of!(ArchivedEventRecord, lane_pos))?,
    ))
}

/// Marks a record as no lane record (`LANED` off, no lane named): the copy
/// the server publishes into another namespace's ring, or a record that is
/// not where it says.
///
/// # Safety
/// `bytes` are a valid archive of a record: one `rkyv::access` validated,
/// or one this process encoded, changed since at most in its fixed-size
/// fields (which keeps it valid).
pub(crate) unsafe fn clear_lane(bytes: &mut [u8]) {
    use rkyv::munge::munge;
    use shm_layout::record::{flags, ArchivedEventRecord};
    // SAFETY: the caller's obligation: a valid archive of the record.
    let rec = unsafe { rkyv::access_unchecked_mut::<ArchivedEventRecord>(bytes) };
    munge!(let ArchivedEventRecord { flags: mut bits, lane_entry: mut entry, lane_pos: mut pos, .. } = rec);
    *bits = (bits.to_native() & !flags::LANED).into();
    *entry = 0.into();
    *pos = 0.into();
}

/// Lane `c` is behind its queue. The first time, the reader reads the ring
/// and comes back: the ring copies advance `next`. Found behind again with
/// `next` still below the `consumed` noted the first time (the records
/// there were no lane records, whose ring copies name no lane, or a
/// counter was corrupted), the lane moves on to it: every record below it
/// was in the ring the reader read since.
fn behind<M: SubmitMemory>(lane: &mut Place, m: &M, c: u32) -> LanePoll {
    match lane.behind_at {
        Some(at) if at > lane.next => {
            lane.next = at;
            lane.behind_at = None;
            LanePoll::Empty
        }
        _ => {
            lane.behind_at = Some(m.consumed(c).load_acquire());
            LanePoll::Behind
        }
    }
}

/// The number whose low 32 bits are `low` closest to `near`: records carry
/// 32-bit positions and numbers, and a reader only ever compares one with
/// a number of its own within far less than 2^31 of it (a ring and a
/// queue apart).
pub(crate) fn widen(near: u64, low: u32) -> u64 {
    let delta = low.wrapping_sub(near as u32) as i32;
    near.wrapping_add_signed(delta as i64)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{clear_lane, peek, widen};
    use shm_layout::record::{flags, EventRecord, InfoRecord, ValueRecord};

    fn encoded(rec: &EventRecord) -> rkyv::util::AlignedVec {
        rkyv::to_bytes::<rkyv::rancor::Error>(rec).unwrap()
    }

    /// The lane a duplicate is skipped by is read without validation, from
    /// the root `rkyv::access` would find: it agrees with the validated
    /// record, says nothing of a record that names no lane, and reads
    /// nothing out of bounds on bytes that are no record.
    #[test]
    fn a_ring_copy_names_its_lane_before_validation_and_clearing_it_leaves_a_valid_record() {
        let mut rec = EventRecord {
            code: -170,
            flags: flags::LANED | flags::RELAYED,
            lane_entry: 0xBEEF,
            lane_pos: 0x1234_5678,
            info: vec![InfoRecord {
                key: "fastpmix.test".into(),
                flags: 0,
                value: ValueRecord::String("x".repeat(300)),
            }],
            ..EventRecord::default()
        };
        let mut bytes = encoded(&rec);
        assert_eq!(peek(&bytes), Some((0xBEEF, 0x1234_5678)));
        // SAFETY: `bytes` were just encoded from a record.
        unsafe { clear_lane(&mut bytes) };
        assert_eq!(peek(&bytes), None);
        let back =
            rkyv::access::<shm_layout::record::ArchivedEventRecord, rkyv::rancor::Error>(&bytes)
                .expect("still a valid record");
        assert_eq!(back.flags.to_native(), flags::RELAYED);
        assert_eq!(
            (back.lane_entry.to_native(), back.lane_pos.to_native()),
            (0, 0)
        );
        rec.flags = 0;
        assert_eq!(peek(&encoded(&rec)), None);
        for n in [0, 1, 7, 31] {
            assert_eq!(peek(&vec![0xFF; n]), None, "{n} bytes");
        }
    }

    #[test]
    fn a_32_bit_number_widens_to_the_closest_64_bit_one_across_the_wrap() {
        assert_eq!(widen(10, 7), 7);
        assert_eq!(widen(10, 12), 12);
        let base = 5u64 << 32;
        assert_eq!(widen(base + 3, u32::MAX), base - 1);
        assert_eq!(widen(base - 2, 1), base + 1);
        assert_eq!(widen(0, 0), 0);
    }
}
