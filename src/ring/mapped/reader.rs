//! The readers of the mapped ring: one per client-table entry, each
//! lending validated records zero-copy from the slots.

use super::Region;
use crate::ring::lane::{LaneCore, LanePoll};
use crate::ring::protocol::{Pinned, Poll, ReaderCore, RingMemory, SpinPolicy};
use crate::sync::Cell32;
use shm_layout::record::{ArchivedEventRecord, EventRecord};
use std::time::Duration;

/// Where a new reader starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// At the next record published (nothing old).
    Head,
    /// At the oldest record still in the ring (the cache).
    Oldest,
}

/// What a read found.
#[derive(Debug)]
pub enum Next<'a> {
    /// Nothing new.
    Empty,
    /// The reader fell more than a ring behind and lost `missed` records; the
    /// next read continues at the oldest one still there. Never silent.
    Lagged {
        /// Records lost.
        missed: u64,
    },
    /// The record at `seq` failed validation or its slot was inconsistent
    /// (corrupted memory); it was skipped.
    Corrupt {
        /// Its sequence.
        seq: u64,
        /// What was wrong.
        why: String,
    },
    /// A validated record, borrowed from the ring.
    Record(RecordRef<'a>),
    /// The ring copy of a lane record this reader delivered from the lane
    /// already, skipped without being validated (`ring::lane::peek`).
    LaneCopy {
        /// The lane (the sender's client-table entry).
        lane: u32,
        /// The record's position in it.
        pos: u64,
    },
}

/// One reader of a ring, occupying one client-table entry.
pub struct RingReader {
    region: Region,
    core: ReaderCore,
    /// Where this reader is in every peer's lane (`ring::lane`).
    lanes: LaneCore,
    spin: SpinPolicy,
    peers: Peers,
    /// The entry was claimed by this reader (released on drop), not handed
    /// to it by the server (which claims and releases its clients' entries).
    owns_entry: bool,
}

/// The sleeper bits of the other readers attached to a ring, re-read at
/// most every 50 ms: the input of a spin heuristic, not of the protocol
/// (a reader attached since is missed for that long).
#[derive(Default)]
struct Peers {
    mask: u64,
    checked: Option<std::time::Instant>,
}

impl RingReader {
    /// Claims a free client-table entry and starts reading at `start`.
    /// `None` when the table is full.
    pub fn attach(region: Region, start: Start) -> Option<RingReader> {
        let pid = std::process::id();
        let head = region.head().load_acquire();
        let cursor = match start {
            Start::Head => head,
            Start::Oldest => head.saturating_sub(region.slot_count() as u64),
        };
        let client = region.claim_client(pid, cursor)?;
        Some(RingReader {
            lanes: LaneCore::new(&region, client),
            region,
            core: ReaderCore { client, cursor },
            spin: SpinPolicy::new(Duration::from_micros(20)),
            peers: Peers::default(),
            owns_entry: true,
        })
    }

    /// Reads through client-table entry `client`, which the server claimed
    /// for this process; starts at the cursor stored there. The entry is
    /// not released on drop (its claimant releases it). `None` when the
    /// entry is out of range or not active.
    pub fn adopt(region: Region, client: u32) -> Option<RingReader> {
        if client >= region.geometry().client_capacity
            || region.client_state(client) != shm_layout::client_state::ACTIVE
        {
            return None;
        }
        let cursor = region.cursor_of(client);
        Some(RingReader {
            lanes: LaneCore::new(&region, client),
            region,
            core: ReaderCore { client, cursor },
            spin: SpinPolicy::new(Duration::from_micros(20)),
            peers: Peers::default(),
            owns_entry: false,
        })
    }

    /// First half of a sleep the caller performs itself (on several words at
    /// once): announces this reader as waiting and re-checks. `Some(words)`:
    /// sleep while this reader's wake word and the ring's doorbell hold the
    /// values given, then call [`RingReader::end_sleep`]. `None`: something
    /// arrived, poll instead (no need to call `end_sleep`).
    pub fn prepare_sleep(&self) -> Option<[(&Cell32, u32); 2]> {
        let (own, door) = self.core.prepare_sleep(&self.region)?;
        // After the handshake's fence: pairs with a lane sender's fence
        // after its `lane_epoch` RMW (`lane::wake_peers`).
        if self.lanes.has_news(&self.region) {
            self.end_sleep();
            return None;
        }
        Some([
            (self.region.client_wake(self.core.client), own),
            (self.region.doorbell(), door),
        ])
    }

    /// Clears the waiting flag after a sleep prepared with
    /// [`RingReader::prepare_sleep`].
    pub fn end_sleep(&self) {
        self.region
            .client_waiting(self.core.client)
            .store_relaxed(0);
    }

    /// The spin budget this reader's policy allows now: zero when the
    /// machine is oversubscribed (see [`SpinPolicy`]), and zero while
    /// another reader of this ring is awake. Readers woken together (a
    /// fan-out) run on the same CPUs, and bound ranks' progress threads on
    /// the one spare core the placement rule gives them all: the last one
    /// to finish may spin, the others would hold that core from those
    /// still to run (4 bound readers: fan-out p50 16.6 -> 48.8 us when
    /// every one spun).
    pub fn spin_budget(&mut self) -> Duration {
        let b = self.spin.budget();
        if b.is_zero() || self.peers_awake() {
            return Duration::ZERO;
        }
        b
    }

    /// Whether another reader attached to this ring is awake: not
    /// announced asleep (its sleeper bit clear), as a reader the last
    /// publish woke is until it sleeps again.
    pub fn peers_awake(&mut self) -> bool {
        let stale = self
            .peers
            .checked
            .is_none_or(|t| t.elapsed() > Duration::from_millis(50));
        if stale {
            let me = self.core.client;
            // Entries 0–63 (sleeper word 0) stand for the rest: a job
            // with more local ranks than that does not spin anyway.
            let mask = (0..self.region.geometry().client_capacity.min(64))
                .filter(|&c| {
                    c != me && self.region.client_state(c) == shm_layout::client_state::ACTIVE
                })
                .fold(0, |m, c| m | shm_layout::sleeper_bit(c));
            self.peers = Peers {
                mask,
                checked: Some(std::time::Instant::now()),
            };
        }
        // A stale view only makes one spin more or fewer.
        self.peers.mask & !self.region.sleepers(0).load_relaxed() != 0
    }

    /// Whether a poll (of the ring or of a lane) would return something
    /// other than `Empty`.
    pub fn has_news(&self) -> bool {
        self.core.has_news(&self.region) || self.lanes.has_news(&self.region)
    }

    /// Starts a scan of the peers' lanes if a lane record was pushed since
    /// the last one (`true`); [`RingReader::lane_peers`] are the lanes.
    pub(crate) fn lanes_begin(&mut self) -> bool {
        self.lanes.begin(&self.region)
    }

    /// The client-table entries whose lanes this reader reads now (see
    /// `lane::LaneCore::peers`), into `out`.
    pub(crate) fn lane_peers(&self, out: &mut Vec<u32>) {
        self.lanes.peers(&self.region, out)
    }

    /// Copies lane `c`'s next record into `out` (see `lane::LaneCore::poll`).
    pub(crate) fn lane_poll(&mut self, c: u32, out: &mut rkyv::util::AlignedVec) -> LanePoll {
        self.lanes.poll(&self.region, c, out)
    }

    /// Lane `c`'s `consumed` (Acquire: every ring copy of a position
    /// below it was published before).
    pub(crate) fn lane_consumed(&self, c: u32) -> u64 {
        use crate::ring::submit::SubmitMemory;
        self.region.consumed(c).load_acquire()
    }

    /// The rank of entry `c`'s client (`u32::MAX`: no client).
    pub(crate) fn client_rank(&self, c: u32) -> u32 {
        self.region.client_rank(c)
    }

    /// Replaces the spin policy used by [`RingReader::wait`].
    pub fn set_spin(&mut self, spin: SpinPolicy) {
        self.spin = spin;
    }

    /// This reader's client-table entry.
    pub fn client(&self) -> u32 {
        self.core.client
    }

    /// The next sequence this reader will read.
    pub fn cursor(&self) -> u64 {
        self.core.cursor
    }

    /// Reads the next record without blocking. A `Record` pins its slot until
    /// the returned reference is dropped (one at a time per reader).
    pub fn try_next(&mut self) -> Next<'_> {
        match self.core.poll(&self.region) {
            Poll::Empty => Next::Empty,
            Poll::Lagged { missed } => Next::Lagged { missed },
            Poll::Corrupt { seq, why } => Next::Corrupt {
                seq,
                why: why.to_owned(),
            },
            Poll::Ready(p) => {
                // SAFETY: `p` is pinned by `poll` (the writer will not rewrite
                // the slot until `finish`), and `p.len` ≤ the slot capacity.
                let bytes = unsafe { self.region.slot_bytes(p.slot, p.len) };
                // A duplicate needs no validation: only its lane is read.
                let copy = crate::ring::lane::peek(bytes)
                    .and_then(|(c, low)| Some((c, self.lanes.delivered(c, low)?)));
                if let Some((lane, pos)) = copy {
                    self.core.finish(&self.region, p);
                    return Next::LaneCopy { lane, pos };
                }
                match rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(bytes) {
                    Ok(rec) => Next::Record(RecordRef {
                        core: &mut self.core,
                        lanes: &mut self.lanes,
                        region: &self.region,
                        pinned: p,
                        rec,
                    }),
                    Err(e) => {
                        self.core.finish(&self.region, p);
                        Next::Corrupt {
                            seq: p.seq,
                            why: format!("record fails validation: {e}"),
                        }
                    }
                }
            }
        }
    }

    /// Waits until a record may be available (spinning first only when the
    /// machine has a core to spare), at most `timeout`. May return early.
    pub fn wait(&mut self, timeout: Option<Duration>) {
        let spin = self.spin.budget();
        self.core.wait(&self.region, spin, timeout);
    }

    /// Records this reader lost to lag so far.
    pub fn lost(&self) -> u64 {
        self.region.client_lost(self.core.client).load_relaxed()
    }

    /// The `source_seq` of the last record of this reader's own client that
    /// the server published into this ring (0: none since it attached).
    /// Acquire: pairs with the server's Release store after the publish, so
    /// every own record up to it is visible to this reader's next poll.
    pub fn own_relayed(&self) -> u64 {
        self.region.own_relayed(self.core.client).load_acquire()
    }
}

impl Drop for RingReader {
    fn drop(&mut self) {
        if self.owns_entry {
            self.region.release_client(self.core.client);
        }
    }
}

/// A validated record in a ring slot, pinned until dropped.
pub struct RecordRef<'a> {
    core: &'a mut ReaderCore,
    lanes: &'a mut LaneCore,
    region: &'a Region,
    pinned: Pinned,
    rec: &'a ArchivedEventRecord,
}

impl RecordRef<'_> {
    /// For the ring copy of a lane record of `nspace` (this reader's
    /// namespace): its lane, its position, and whether it is to be
    /// delivered (`false`: the reader had it from the lane already).
    /// `None` for any other record (see `ring::lane`).
    pub(crate) fn lane_copy(&mut self, nspace: &str) -> Option<(u32, u64, bool)> {
        if !self.is_lane_copy(nspace) {
            return None;
        }
        let c = self.rec.lane_entry.to_native() as u32;
        let (pos, new) = self.lanes.ring_copy(c, self.rec.lane_pos.to_native());
        Some((c, pos, new))
    }

    /// Whether a lane record was pushed since this reader's last scan of
    /// the lanes, loaded after this record was acquired: a lane record
    /// pushed before this record was published shows here.
    pub(crate) fn lanes_moved(&self) -> bool {
        self.lanes.has_news(self.region)
    }

    /// Whether this is the ring copy of a lane record of `nspace` (this
    /// reader's namespace).
    fn is_lane_copy(&self, nspace: &str) -> bool {
        self.rec.flags.to_native() & shm_layout::record::flags::LANED != 0
            && self.rec.source.nspace.as_str() == nspace
    }

    /// The record's sequence in the ring.
    pub fn seq(&self) -> u64 {
        self.pinned.seq
    }

    /// The archived record (zero-copy).
    pub fn record(&self) -> &ArchivedEventRecord {
        self.rec
    }

    /// Its encoded size.
    pub fn len(&self) -> usize {
        self.pinned.len as usize
    }

    /// Never empty: a record has at least its root.
    pub fn is_empty(&self) -> bool {
        self.pinned.len == 0
    }

    /// An owned copy (when the consumer asks for one).
    pub fn to_owned(&self) -> EventRecord {
        // Deserialising a validated archive of this schema cannot fail.
        rkyv::deserialize::<EventRecord, rkyv::rancor::Error>(self.rec)
            .expect("validated record deserialises")
    }
}

impl std::ops::Deref for RecordRef<'_> {
    type Target = ArchivedEventRecord;
    fn deref(&self) -> &ArchivedEventRecord {
        self.rec
    }
}

impl std::fmt::Debug for RecordRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordRef")
            .field("seq", &self.pinned.seq)
            .field("rec", self.rec)
            .finish()
    }
}

impl Drop for RecordRef<'_> {
    fn drop(&mut self) {
        self.core.finish(self.region, self.pinned);
    }
}
