//! Client → server submission queues: one SPSC queue per client-table entry.
//! The client produces, the server consumes, copies out and validates (the
//! bytes cross a trust boundary). A full queue makes the producer wait; a
//! record is never dropped. The server sleeps on one segment-wide bell while
//! every queue is empty; a producer rings it only when the server sleeps.
//!
//! Each queue is also its client's *lane*: the namespace's other clients
//! read a record meant for them straight from the slot, by copy, with the
//! slot's `seq` as a seqlock (`super::lane`). The server releases a slot
//! only after it published the record's ring copy, so a reader that finds
//! the slot rewritten finds the record in the ring.

use super::lane::{self, Lane};
use super::protocol::RingMemory;
use crate::sync::{fence_release, fence_seqcst, Cell32, Cell64};
use rkyv::util::AlignedVec;
use shm_layout::LANE_WRITING;
use std::time::Duration;

/// What the queue protocol needs from memory.
pub(crate) trait SubmitMemory {
    /// Slots per queue.
    fn depth(&self) -> u32;
    /// Record bytes per slot.
    fn capacity(&self) -> u32;
    fn produced(&self, c: u32) -> &Cell64;
    fn consumed(&self, c: u32) -> &Cell64;
    fn space_waiting(&self, c: u32) -> &Cell32;
    fn space_bell(&self, c: u32) -> &Cell32;
    fn submit_bell(&self) -> &Cell32;
    fn submit_sleepy(&self) -> &Cell32;
    fn entry_len(&self, c: u32, i: u32) -> &Cell32;
    /// Slot `i` of queue `c`'s commit word: the position + 1 of the record
    /// in it, [`LANE_WRITING`] while the producer rewrites it.
    fn entry_seq(&self, c: u32, i: u32) -> &Cell64;
    /// Bumped after every lane record ([`shm_layout::RingHeader::lane_epoch`]).
    fn lane_epoch(&self) -> &Cell64;
    /// The entries that ever pushed a lane record, bit `c % 64`
    /// ([`shm_layout::RingHeader::lane_senders`]).
    fn lane_senders(&self) -> &Cell64;
    /// Copies `bytes` into slot `i` of queue `c`.
    ///
    /// # Safety
    /// Only the queue's producer calls this, for a slot the consumer has
    /// released (`produced - consumed < depth`, observed with Acquire).
    unsafe fn write_entry(&self, c: u32, i: u32, bytes: &[u8]);
    /// Copies up to `len` bytes of slot `i` of queue `c` into `out`
    /// (replacing its contents).
    fn read_entry(&self, c: u32, i: u32, len: u32, out: &mut AlignedVec);
    /// [`SubmitMemory::read_entry`] by a reader that is not the consumer:
    /// the producer may be rewriting the slot meanwhile (the reader's
    /// seqlock check tells; the copy is discarded then).
    fn read_entry_shared(&self, c: u32, i: u32, len: u32, out: &mut AlignedVec);
}

/// Why a submission failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitError {
    /// Larger than a slot.
    TooLarge {
        /// Record bytes.
        len: usize,
        /// Slot capacity.
        max: usize,
    },
    /// Still full after the timeout (the server is not draining).
    Full,
}

impl std::fmt::Display for SubmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubmitError::TooLarge { len, max } => {
                write!(
                    f,
                    "record of {len} bytes exceeds the slot capacity of {max} bytes"
                )
            }
            SubmitError::Full => write!(f, "submission queue full: the server is not draining it"),
        }
    }
}

impl std::error::Error for SubmitError {}

/// The producing side of queue `c` (the client). `lane`: whether the
/// record is also for the namespace's other clients, who read it from the
/// slot, and which of them; `topic`, its code's interest bit: the
/// sleeping peers it is for that want it are woken here, before the
/// server; `peers`, where the sender found its custom ranges' targets.
pub(crate) fn push(
    m: &(impl SubmitMemory + RingMemory),
    c: u32,
    bytes: &[u8],
    timeout: Option<Duration>,
    lane: Lane<'_>,
    topic: u64,
    peers: &mut lane::PeerIndex,
) -> Result<u64, SubmitError> {
    let max = m.capacity() as usize;
    if bytes.len() > max {
        return Err(SubmitError::TooLarge {
            len: bytes.len(),
            max,
        });
    }
    let depth = m.depth() as u64;
    // Only we write it.
    let p = m.produced(c).load_relaxed();
    // Read the clock only when the queue is full: a clock read costs ~50 ns
    // on a virtual machine's clock, on every event's path to its wake-up.
    let mut deadline = None;
    loop {
        // Acquire: pairs with the consumer's Release of `consumed`: its
        // reads of the slot we are about to reuse happened before.
        let done = m.consumed(c).load_acquire();
        if p.wrapping_sub(done) < depth {
            break;
        }
        let bell = m.space_bell(c).load_acquire();
        m.space_waiting(c).store_seqcst(1);
        // Pairs with the consumer's fence after releasing a slot.
        fence_seqcst();
        if p.wrapping_sub(m.consumed(c).load_acquire()) < depth {
            m.space_waiting(c).store_relaxed(0);
            break;
        }
        let now = std::time::Instant::now();
        let left = match timeout.map(|t| *deadline.get_or_insert(now + t)) {
            Some(d) => match d.checked_duration_since(now) {
                Some(l) => Some(l),
                None => {
                    m.space_waiting(c).store_relaxed(0);
                    return Err(SubmitError::Full);
                }
            },
            None => None,
        };
        m.space_bell(c).wait_while(bell, left);
    }
    let i = (p % depth) as u32;
    let seq = m.entry_seq(c, i);
    // The seqlock's mark, before any byte changes: a lane reader whose copy
    // overlaps the rewrite sees it (or the final value) at its re-check —
    // the release fence orders it before the stores below. Release also
    // carries the consumer's release of the slot (and so its ring copy of
    // the old record) to a reader that loads the mark with Acquire.
    seq.store_release(LANE_WRITING);
    fence_release();
    // SAFETY: we are the producer and `p - consumed < depth`: slot `i` was
    // released by the consumer (Acquire above).
    unsafe { m.write_entry(c, i, bytes) };
    m.entry_len(c, i).store_relaxed(bytes.len() as u32);
    // Release: the commit word of a lane reader's copy.
    seq.store_release(p + 1);
    // Release: pairs with the consumer's Acquire of `produced`.
    m.produced(c).store_release(p + 1);
    if lane != Lane::No {
        // Readers scan only the lanes of entries with this bit; set once,
        // before the epoch RMW that sends them to look.
        let bit = 1u64 << (c % 64);
        if m.lane_senders().load_relaxed() & bit == 0 {
            m.lane_senders().fetch_or_seqcst(bit);
        }
        m.lane_epoch().fetch_add_seqcst(1);
    }
    // Pairs with the fence in `prepare_sleep`: either the server sees our
    // record, or we see its sleepy flag; and with a lane reader's fence
    // before it re-checks `lane_epoch` (`lane::wake_peers`).
    fence_seqcst();
    match lane {
        Lane::No => {}
        Lane::All => lane::wake_peers(m, c, topic, None, peers),
        Lane::Ranks(r) => lane::wake_peers(m, c, topic, Some(r), peers),
    }
    if m.submit_sleepy().load_relaxed() == 1 && m.submit_sleepy().swap_seqcst(0) == 1 {
        m.submit_bell().fetch_add_seqcst(1);
        m.submit_bell().wake_all();
    }
    Ok(p)
}

/// What the consumer found in one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Popped {
    /// Nothing queued.
    Empty,
    /// One record's bytes were copied into the caller's buffer.
    Record {
        /// Its position in this queue.
        seq: u64,
    },
    /// The queue's counters are impossible (more queued than it holds): the
    /// producer corrupted them. The consumer resynchronised to the producer.
    Corrupt {
        /// What was wrong.
        why: &'static str,
    },
}

/// The consuming side of queue `c` (the server): copies the next record into
/// `out`. The caller validates the bytes.
pub(crate) fn pop(m: &impl SubmitMemory, c: u32, out: &mut AlignedVec) -> Popped {
    let depth = m.depth() as u64;
    // Only we write it.
    let done = m.consumed(c).load_relaxed();
    // Acquire: pairs with the producer's Release of `produced`.
    let p = m.produced(c).load_acquire();
    if p == done {
        return Popped::Empty;
    }
    if p.wrapping_sub(done) > depth {
        m.consumed(c).store_release(p);
        return Popped::Corrupt {
            why: "producer counter runs ahead of the queue",
        };
    }
    let i = (done % depth) as u32;
    let len = m.entry_len(c, i).load_relaxed();
    if len > m.capacity() {
        release(m, c, done + 1);
        return Popped::Corrupt {
            why: "entry length exceeds the slot",
        };
    }
    m.read_entry(c, i, len, out);
    Popped::Record { seq: done }
}

/// Releases queue `c`'s slots up to position `upto` (the consumer, after
/// it is done with a popped record: for a lane record, after its ring copy
/// is published, so a reader that finds the slot rewritten finds the ring
/// copy). The next [`pop`] of `c` starts at `upto`.
pub(crate) fn release(m: &impl SubmitMemory, c: u32, upto: u64) {
    // Release: our copy of the slot happens before the producer reuses it.
    m.consumed(c).store_release(upto);
    // Pairs with the producer's fence before it re-checks for space.
    fence_seqcst();
    if m.space_waiting(c).load_relaxed() == 1 && m.space_waiting(c).swap_seqcst(0) == 1 {
        m.space_bell(c).fetch_add_seqcst(1);
        m.space_bell(c).wake_all();
    }
}

/// Server side of the sleep handshake: announce, then re-check every queue.
/// Returns the bell value to sleep on, or `None` when something is queued.
pub(crate) fn prepare_sleep(
    m: &impl SubmitMemory,
    queues: impl Iterator<Item = u32>,
) -> Option<u32> {
    let bell = m.submit_bell().load_acquire();
    m.submit_sleepy().store_seqcst(1);
    // Pairs with the producer's fence after publishing `produced`.
    fence_seqcst();
    let mut queues = queues;
    if queues.any(|c| holds(m, c)) {
        return None;
    }
    Some(bell)
}

/// Whether queue `c` holds a record the consumer has not taken: two loads
/// of one line, for a round that visits every queue.
pub(crate) fn holds(m: &impl SubmitMemory, c: u32) -> bool {
    // Acquire: pairs with the producer's Release of `produced`.
    m.produced(c).load_acquire() != m.consumed(c).load_relaxed()
}

/// Sleeps until a producer rings (or `timeout`), if every queue is empty.
pub(crate) fn wait(
    m: &impl SubmitMemory,
    queues: impl Iterator<Item = u32>,
    timeout: Option<Duration>,
) {
    if let Some(bell) = prepare_sleep(m, queues) {
        m.submit_bell().wait_while(bell, timeout);
    }
}
