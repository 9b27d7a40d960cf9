//! The per-node event ring: a node server publishes rkyv event records into a
//! shared-memory broadcast ring; co-located readers pick them up zero-copy
//! and sleep on a shared futex when there is nothing to read.
//!
//! - [`Segment`]: the `shm_open` lifecycle (create 0600, open with validation,
//!   unlink on drop, stale removal).
//! - [`Region`]: the validated memory (mapped, or on the heap for the
//!   in-process backend).
//! - [`RingWriter`]: the single writer (the server's progress thread).
//! - [`RingReader`]: one reader per client-table entry.
//!
//! The protocol and its memory-ordering pairs are in docs/shm-format.md.

#[cfg(all(loom, test))]
pub mod model;
// Under loom only the models (tests) use the protocol.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod protocol;
#[cfg(not(loom))]
mod region;
#[cfg(not(loom))]
mod segment;
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod submit;

pub use protocol::{PublishError, SpinPolicy, Wake};
#[cfg(not(loom))]
pub use region::{ClientState, OpenError, Region, RingState};
#[cfg(not(loom))]
pub use segment::{Segment, SegmentError, NAME_PREFIX};
pub use shm_layout::record::{ArchivedEventRecord, EventRecord};
pub use submit::{Popped, SubmitError};

#[cfg(not(loom))]
use crate::sync::Cell32;
#[cfg(not(loom))]
use protocol::{Pinned, Poll, ReaderCore, RingMemory, WriterCore};
#[cfg(not(loom))]
use std::time::Duration;

/// Why a record could not be written.
#[cfg(not(loom))]
#[derive(Debug)]
pub enum WriteError {
    /// rkyv could not serialise it.
    Encode(rkyv::rancor::Error),
    /// The ring refused it.
    Publish(PublishError),
}

#[cfg(not(loom))]
impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Encode(e) => write!(f, "cannot encode event record: {e}"),
            WriteError::Publish(e) => write!(f, "{e}"),
        }
    }
}

#[cfg(not(loom))]
impl std::error::Error for WriteError {}

/// The ring's only writer. Create it once, right after creating the region.
#[cfg(not(loom))]
pub struct RingWriter {
    region: Region,
    core: WriterCore,
    scratch: rkyv::util::AlignedVec,
}

#[cfg(not(loom))]
impl RingWriter {
    /// Takes the writer role of a freshly created region.
    pub fn new(region: Region) -> RingWriter {
        let core = WriterCore::new(&region);
        RingWriter {
            region,
            core,
            scratch: rkyv::util::AlignedVec::with_capacity(1024),
        }
    }

    /// Publishes an already encoded record; returns its sequence.
    pub fn publish_bytes(&mut self, bytes: &[u8]) -> Result<u64, PublishError> {
        self.core.publish(&self.region, bytes)
    }

    /// Publishes an already encoded record, waking only the sleeping
    /// readers `wake` names (every reader still sees it; see [`Wake`]).
    pub fn publish_bytes_to(&mut self, bytes: &[u8], wake: Wake<'_>) -> Result<u64, PublishError> {
        self.core.publish_to(&self.region, bytes, wake)
    }

    /// Encodes and publishes an event record (the encode buffer is reused:
    /// no allocation once it has grown to the largest record).
    pub fn publish(&mut self, rec: &EventRecord) -> Result<u64, WriteError> {
        self.publish_to(rec, Wake::All)
    }

    /// [`RingWriter::publish`], waking only the sleeping readers `wake`
    /// names.
    pub fn publish_to(&mut self, rec: &EventRecord, wake: Wake<'_>) -> Result<u64, WriteError> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let buf = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(rec, buf)
            .map_err(WriteError::Encode)?;
        let r = self
            .core
            .publish_to(&self.region, &buf, wake)
            .map_err(WriteError::Publish);
        self.scratch = buf;
        r
    }

    /// The region written to.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Records published so far.
    pub fn published(&self) -> u64 {
        self.region.head().load_acquire()
    }

    /// Futex wakes issued so far (diagnostics: at most one per sleeper
    /// per burst).
    pub fn wakes(&self) -> u64 {
        self.region.wakes().load_relaxed()
    }
}

/// Where a new reader starts.
#[cfg(not(loom))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// At the next record published (nothing old).
    Head,
    /// At the oldest record still in the ring (the cache).
    Oldest,
}

/// What a read found.
#[cfg(not(loom))]
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
}

/// One reader of a ring, occupying one client-table entry.
#[cfg(not(loom))]
pub struct RingReader {
    region: Region,
    core: ReaderCore,
    spin: SpinPolicy,
    peers: Peers,
    /// The entry was claimed by this reader (released on drop), not handed
    /// to it by the server (which claims and releases its clients' entries).
    owns_entry: bool,
}

/// The sleeper bits of the other readers attached to a ring, re-read at
/// most every 50 ms: the input of a spin heuristic, not of the protocol
/// (a reader attached since is missed for that long).
#[cfg(not(loom))]
#[derive(Default)]
struct Peers {
    mask: u64,
    checked: Option<std::time::Instant>,
}

#[cfg(not(loom))]
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
            let mask = (0..self.region.geometry().client_capacity)
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
        self.peers.mask & !self.region.sleepers().load_relaxed() != 0
    }

    /// Whether a poll would return something other than `Empty`.
    pub fn has_news(&self) -> bool {
        self.core.has_news(&self.region)
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
                match rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(bytes) {
                    Ok(rec) => Next::Record(RecordRef {
                        core: &mut self.core,
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

#[cfg(not(loom))]
impl Drop for RingReader {
    fn drop(&mut self) {
        if self.owns_entry {
            self.region.release_client(self.core.client);
        }
    }
}

/// A validated record in a ring slot, pinned until dropped.
#[cfg(not(loom))]
pub struct RecordRef<'a> {
    core: &'a mut ReaderCore,
    region: &'a Region,
    pinned: Pinned,
    rec: &'a ArchivedEventRecord,
}

#[cfg(not(loom))]
impl RecordRef<'_> {
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

#[cfg(not(loom))]
impl std::ops::Deref for RecordRef<'_> {
    type Target = ArchivedEventRecord;
    fn deref(&self) -> &ArchivedEventRecord {
        self.rec
    }
}

#[cfg(not(loom))]
impl std::fmt::Debug for RecordRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordRef")
            .field("seq", &self.pinned.seq)
            .field("rec", self.rec)
            .finish()
    }
}

#[cfg(not(loom))]
impl Drop for RecordRef<'_> {
    fn drop(&mut self) {
        self.core.finish(self.region, self.pinned);
    }
}

/// A client's end of its submission queue (the client-table entry it got).
#[cfg(not(loom))]
pub struct Submitter {
    region: Region,
    client: u32,
    scratch: rkyv::util::AlignedVec,
}

#[cfg(not(loom))]
impl Submitter {
    /// The producer of queue `client` (the entry the server assigned).
    pub fn new(region: Region, client: u32) -> Submitter {
        assert!(
            client < region.geometry().client_capacity,
            "client {client} out of range"
        );
        Submitter {
            region,
            client,
            scratch: rkyv::util::AlignedVec::with_capacity(1024),
        }
    }

    /// Queues encoded bytes; waits for space at most `timeout` (`None`:
    /// forever). Returns the record's position in this queue.
    pub fn submit_bytes(
        &mut self,
        bytes: &[u8],
        timeout: Option<Duration>,
    ) -> Result<u64, SubmitError> {
        submit::push(&self.region, self.client, bytes, timeout)
    }

    /// Encodes and queues an event record.
    pub fn submit(
        &mut self,
        rec: &EventRecord,
        timeout: Option<Duration>,
    ) -> Result<u64, SubmitError> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let buf = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(rec, buf)
            .expect("encoding into a growable buffer cannot fail");
        let r = submit::push(&self.region, self.client, &buf, timeout);
        self.scratch = buf;
        r
    }
}

/// The server's end of every submission queue.
#[cfg(not(loom))]
pub struct Collector {
    region: Region,
    buf: rkyv::util::AlignedVec,
    /// `buf` holds the record the last `pop` validated.
    valid: bool,
}

/// One record taken from a submission queue.
#[cfg(not(loom))]
#[derive(Debug)]
pub enum Collected<'a> {
    /// Every queue is empty.
    Empty,
    /// A validated record (a copy: the producer cannot change it any more).
    Record {
        /// The queue (client-table entry) it came from.
        client: u32,
        /// The record.
        rec: &'a ArchivedEventRecord,
    },
    /// Queue `client` held bytes that are not a valid record, or corrupt
    /// counters; skipped.
    Corrupt {
        /// The queue.
        client: u32,
        /// What was wrong.
        why: String,
    },
}

#[cfg(not(loom))]
impl Collector {
    /// The consumer of every queue of `region`.
    pub fn new(region: Region) -> Collector {
        Collector {
            region,
            buf: rkyv::util::AlignedVec::with_capacity(1024),
            valid: false,
        }
    }

    /// The record the last [`Collector::pop`] returned, with its sequence
    /// number and timestamp set and [`flags::RELAYED`] added, in its own
    /// bytes: what the server publishes when it relays the record as it
    /// came. `None` unless the last pop returned a record.
    ///
    /// [`flags::RELAYED`]: shm_layout::record::flags::RELAYED
    pub fn relay_last(&mut self, source_seq: u64, timestamp_ns: u64) -> Option<&[u8]> {
        use rkyv::munge::munge;
        use shm_layout::record::flags;
        if !self.valid {
            return None;
        }
        // SAFETY: `valid` is set only when `pop` validated exactly these
        // bytes with `rkyv::access`; the buffer is private to the collector
        // and unchanged since (every other outcome of `pop` clears `valid`).
        let rec = unsafe { rkyv::access_unchecked_mut::<ArchivedEventRecord>(&mut self.buf) };
        munge!(let ArchivedEventRecord { flags: mut bits, source_seq: mut seq, timestamp_ns: mut ts, .. } = rec);
        *bits = (bits.to_native() | flags::RELAYED).into();
        *seq = source_seq.into();
        *ts = timestamp_ns.into();
        Some(&self.buf)
    }

    /// The record the last [`Collector::pop`] returned, if it returned one.
    pub fn last(&self) -> Option<&ArchivedEventRecord> {
        // SAFETY: as in `relay_last`: validated by `pop`, unchanged since.
        self.valid
            .then(|| unsafe { rkyv::access_unchecked::<ArchivedEventRecord>(&self.buf) })
    }

    /// Takes the next record from queue `client`.
    pub fn pop(&mut self, client: u32) -> Collected<'_> {
        self.valid = false;
        match submit::pop(&self.region, client, &mut self.buf) {
            Popped::Empty => Collected::Empty,
            Popped::Corrupt { why } => Collected::Corrupt {
                client,
                why: why.to_owned(),
            },
            Popped::Record { .. } => {
                match rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(&self.buf) {
                    Ok(rec) => {
                        self.valid = true;
                        Collected::Record { client, rec }
                    }
                    Err(e) => Collected::Corrupt {
                        client,
                        why: format!("record fails validation: {e}"),
                    },
                }
            }
        }
    }

    /// Sleeps until some queue in `clients` has a record (or `timeout`).
    pub fn wait(&self, clients: impl Iterator<Item = u32>, timeout: Option<Duration>) {
        submit::wait(&self.region, clients, timeout);
    }

    /// First half of a sleep the caller performs itself (e.g. through an
    /// io_uring futex wait): announces the sleep and re-checks `clients`.
    /// `Some(bell)`: sleep while [`Collector::bell`] holds `bell`. `None`:
    /// a queue has a record.
    pub fn prepare_sleep(&self, clients: impl Iterator<Item = u32>) -> Option<u32> {
        submit::prepare_sleep(&self.region, clients)
    }

    /// The segment-wide futex word producers ring.
    pub fn bell(&self) -> &Cell32 {
        use submit::SubmitMemory;
        self.region.submit_bell()
    }

    /// Drops whatever queue `client` still holds (its producer is gone) and
    /// wakes a producer waiting for space, so the entry can be reused.
    pub fn discard(&mut self, client: u32) -> u64 {
        let mut n = 0;
        while !matches!(self.pop(client), Collected::Empty) {
            n += 1;
        }
        n
    }
}
