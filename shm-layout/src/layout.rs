//! `#[repr(C)]` layouts of a node segment. All fields are plain integers:
//! processes access the shared ones atomically (fastpmix through its `sync`
//! module, C through `__atomic` builtins); see docs/shm-format.md for which
//! field is written by whom and which Release pairs with which Acquire.
//!
//! ```text
//! offset 0            SegmentHeader                      (256 B)
//! ring_offset         RingHeader                         (5 × 128 B lines)
//! clients_offset      ClientEntry × client_capacity      (128 B each)
//! index_offset        u64 × slot_count                   (index ring: seq<<16 | slot)
//! slots_offset        Slot × data_slots                  (slot_size each: SlotHeader + record bytes)
//! submit_offset       SubmitHeader × client_capacity     (each queue's counters, side by side)
//! submit_slots_offset slot × submit_depth × client_capacity (queue c's slots at c × submit_queue_size)
//! sleepers_offset     u64 × (⌈client_capacity / 64⌉ − 1)  (sleeper bits of entries 64 on; padded to a line)
//! ```

use core::mem::{align_of, offset_of, size_of};

/// Cache line size the layout pads to (x86_64 prefetches line pairs, so 128).
pub const LINE: usize = 128;

/// `SegmentHeader::magic`: "FPMIXSEG" little-endian.
pub const SEGMENT_MAGIC: u64 = u64::from_le_bytes(*b"FPMIXSEG");

/// `SegmentHeader::init_complete` once the creator finished initialising.
pub const INIT_COMPLETE: u32 = 0x1A17_D0E5;

/// The first bytes of a segment: identity, geometry, owner.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct SegmentHeader {
    /// [`SEGMENT_MAGIC`].
    pub magic: u64,
    /// [`crate::LAYOUT_VERSION`].
    pub layout_version: u32,
    /// `size_of::<SegmentHeader>()`, as a cross-check for C readers.
    pub header_size: u32,
    /// [`crate::SCHEMA_HASH`].
    pub schema_hash: u64,
    /// Bytes mapped.
    pub total_size: u64,
    /// Entries in the index ring (records a reader can lag before it loses some).
    pub slot_count: u32,
    /// Bytes per data slot, header included (a multiple of [`LINE`]).
    pub slot_size: u32,
    /// Data slots: `slot_count + client_capacity + 1` (each reader pins at most one).
    pub data_slots: u32,
    /// Entries in the client table.
    pub client_capacity: u32,
    /// Offset of the [`RingHeader`].
    pub ring_offset: u64,
    /// Offset of the client table.
    pub clients_offset: u64,
    /// Offset of the index ring.
    pub index_offset: u64,
    /// Offset of the first data slot.
    pub slots_offset: u64,
    /// Process id of the server that owns the segment.
    pub server_pid: u32,
    /// Owner uid (the segment is mode 0600).
    pub server_uid: u32,
    /// Incremented by the server while alive (liveness for readers and tools).
    pub server_heartbeat: u64,
    /// Random per server instance: tells a recycled name from the original.
    pub server_generation: u64,
    /// [`INIT_COMPLETE`] once initialised: written last, with Release.
    pub init_complete: u32,
    /// Slots per client submission queue.
    pub submit_depth: u32,
    /// Offset of the submission queues' headers (one [`SubmitHeader`] per
    /// client-table entry, side by side: a reader of every queue's
    /// counters touches a few pages, not one per queue).
    pub submit_offset: u64,
    /// Bytes of one submission queue's slots (`submit_depth × slot_size`).
    pub submit_queue_size: u64,
    /// Offset of the sleeper words of entries 64 on (word `w ≥ 1` of
    /// [`sleeper_word`] at `sleepers_offset + 8 (w − 1)`); word 0 is
    /// [`RingHeader::sleepers`].
    pub sleepers_offset: u64,
    /// Offset of the submission queues' slots: queue `c`'s slot `i` at
    /// `submit_slots_offset + c × submit_queue_size + i × slot_size`.
    pub submit_slots_offset: u64,
    _reserved: [u32; 20],
}

/// Server-written head of the broadcast ring, and the sleep/wake handshake.
/// Each word has its own cache line: readers poll `head` and sleepers touch
/// `sleepers`. A sleeping reader waits on its own [`ClientEntry::wake`] and
/// on `doorbell` at once: the writer rings the doorbell for a record every
/// reader wants (one `FUTEX_WAKE` for all) and the wake words of the readers
/// a targeted record is for.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct RingHeader {
    /// Number of records published (= the next sequence). Writer: Release.
    pub head: u64,
    _pad0: [u8; LINE - 8],
    /// Futex word every sleeper also waits on; the writer bumps it and wakes
    /// all for a record that is for every reader.
    pub doorbell: u32,
    _pad1: [u8; LINE - 4],
    /// Sleeper word 0: which of entries 0–63 may be asleep ([`sleeper_bit`];
    /// the words of later entries follow `SegmentHeader::sleepers_offset`).
    /// Readers set their bit before sleeping; the writer takes the bits of
    /// the sleepers a record is for, and now and then sweeps every word to
    /// wake a sleeper falling behind (docs/shm-format.md).
    pub sleepers: u64,
    _pad2: [u8; LINE - 8],
    /// Diagnostics: futex wakes issued by the writer.
    pub wakes: u64,
    /// Diagnostics: publishes refused (record too large, no free slot).
    pub refused: u64,
    /// Bumped (SeqCst RMW) after any client entry's `interest` changes;
    /// the writer keeps a copy of every entry's interest and reloads it
    /// when this moved, so a publish reads no client's line. On the line
    /// the writer itself writes per wake-up.
    pub interest_gen: u64,
    /// The last two records for every reader (`Wake::All` and
    /// `Wake::AllBut`, whatever their code): writer-written per such
    /// record, read by a reader when the ring lapped it ([`Mark`]).
    pub mark: Mark,
    _pad3: [u8; LINE - 40],
    /// Futex word the server sleeps on while all submission queues are empty.
    pub submit_bell: u32,
    /// 1 when the server may be asleep on `submit_bell`; a producer swaps it
    /// to 0 when it wakes the server.
    pub submit_sleepy: u32,
    /// Bumped (SeqCst RMW) by a client after it pushed a record its
    /// namespace's peers read from its submission queue (a lane record):
    /// a reader whose copy is older scans the queues, and a sleeping
    /// reader re-checks it before it sleeps.
    pub lane_epoch: u64,
    /// Which entries ever pushed a lane record, one sticky bit per entry
    /// modulo 64 (set before the `lane_epoch` RMW): readers look only at
    /// the lanes of entries whose bit is set, not at every entry.
    pub lane_senders: u64,
    _pad4: [u8; LINE - 24],
}

/// The header of one client's submission queue (SPSC: the client produces,
/// the server consumes). The headers of all queues are side by side; the
/// queue's slots of `slot_size` bytes are in the slot area, each a
/// [`SlotHeader`] and the record's bytes; the header's `seq` is the
/// record's position + 1 once written ([`LANE_WRITING`] while the producer
/// rewrites the slot), so that the namespace's other clients can read a
/// lane record by copy and tell a torn copy (docs/shm-format.md, "Lanes").
#[repr(C, align(128))]
#[derive(Debug)]
pub struct SubmitHeader {
    /// Records pushed (producer, Release).
    pub produced: u64,
    _pad0: [u8; LINE - 8],
    /// Records consumed (server, Release).
    pub consumed: u64,
    /// 1 while the producer waits for space.
    pub space_waiting: u32,
    /// Futex word the producer sleeps on while the queue is full.
    pub space_bell: u32,
    _pad1: [u8; LINE - 16],
}

/// `ClientEntry::state` values.
pub mod client_state {
    /// Unused entry.
    pub const FREE: u32 = 0;
    /// Claimed by the server for a client that has not attached yet.
    pub const RESERVED: u32 = 1;
    /// A reader is attached.
    pub const ACTIVE: u32 = 2;
    /// The client died or detached; the server recycles the entry.
    pub const DEAD: u32 = 3;
}

/// Sleeper words of a segment with `client_capacity` entries: one bit per
/// entry (the first word is the ring header's `sleepers`).
pub const fn sleeper_words(client_capacity: u32) -> u32 {
    client_capacity.div_ceil(64)
}

/// The sleeper word that holds client-table entry `c`'s bit.
pub const fn sleeper_word(c: u32) -> u32 {
    c / 64
}

/// Entry `c`'s bit in its [`sleeper_word`].
pub const fn sleeper_bit(c: u32) -> u64 {
    1 << (c % 64)
}

/// One local client's entry in the client table.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct ClientEntry {
    /// [`client_state`].
    pub state: u32,
    /// The client's pid (set by the server from SO_PEERCRED).
    pub pid: u32,
    /// Bumped each time the entry is (re)assigned.
    pub generation: u64,
    /// Next sequence this reader will read (reader-written; the server and
    /// tools read it to show lag).
    pub cursor: u64,
    /// The futex word this reader sleeps on; the writer bumps it to wake it.
    pub wake: u32,
    /// 1 while the reader sleeps on `wake` (and the ring's doorbell).
    pub waiting: u32,
    /// Heartbeats sent by the client (job-management issue).
    pub heartbeat: u64,
    /// Records this reader missed because it fell a ring behind.
    pub lost: u64,
    /// The data slot the reader has pinned now (`u32::MAX`: none).
    pub held_slot: u32,
    /// The client's rank in the segment's namespace (server-written at
    /// claim, `u32::MAX` for a reader that is no client): a peer checks a
    /// record it reads from this entry's submission queue against it.
    pub rank: u32,
    /// The last `source_seq` the server gave a record of this client that
    /// it published into this ring (server-written, after the publish): the
    /// reader's own records count 1, 2, 3… from its attach, so it can tell
    /// which records it missed were its own (it skips those anyway).
    pub own_relayed: u64,
    /// Which event codes the reader has a handler for, hashed to one bit
    /// each ([`interest_bit`]); [`INTEREST_ALL`] (the value at claim): any
    /// code. Reader-written, only ever growing while the entry is held; the
    /// writer wakes a sleeper only for a record whose code's bit is set
    /// here (or once half the ring is unread). On the entry's second cache
    /// line, which nobody writes per record.
    pub interest: u64,
    /// The last two records published for this entry alone (a custom
    /// range naming its client): writer-written, read by the reader when
    /// the ring lapped it ([`Mark`]).
    pub mark: Mark,
    _reserved: [u32; 10],
}

/// The last two records of one kind the writer published, each as its
/// sequence + 1 (0: none). The writer stores `prev` (the old `last`), then
/// `last` with Release, before the record's index entry. A reader the ring
/// lapped loads `last` (Acquire), then `prev`: no record of the kind was
/// among the ones it missed, `[cursor, oldest)`, when `last ≤ cursor`, or
/// when `last > oldest` and `prev ≤ cursor` (docs/shm-format.md, "Passing
/// over records for others").
#[repr(C)]
#[derive(Debug)]
pub struct Mark {
    /// The latest record of the kind, + 1.
    pub last: u64,
    /// The one before it, + 1.
    pub prev: u64,
}

/// [`ClientEntry::interest`] of a reader that wants every code.
pub const INTEREST_ALL: u64 = u64::MAX;

/// The bit an event code has in [`ClientEntry::interest`]: the top six bits
/// of a Fibonacci hash of the code, so the codes a program registers for,
/// which sit close together, spread over the 64 bits.
pub const fn interest_bit(code: i32) -> u64 {
    1u64 << ((code as u32).wrapping_mul(0x9E37_79B1) >> 26)
}

/// The header of one data slot; the record bytes follow it.
#[repr(C, align(16))]
#[derive(Debug)]
pub struct SlotHeader {
    /// Sequence of the record in this slot (the commit word: written after
    /// the bytes, with Release). `u64::MAX`: never written.
    pub seq: u64,
    /// Length of the record bytes.
    pub len: u32,
    /// Readers that pinned this slot; the writer never rewrites a pinned slot.
    pub pins: u32,
}

/// A submission slot's `seq` while its producer rewrites it.
pub const LANE_WRITING: u64 = u64::MAX;

/// An index-ring entry: `seq << 16 | slot`; [`INDEX_EMPTY`] before first use.
pub type IndexEntry = u64;
/// An index entry that names nothing.
pub const INDEX_EMPTY: IndexEntry = u64::MAX;
/// Bits of an index entry that hold the slot number.
pub const INDEX_SLOT_BITS: u32 = 16;
/// Largest number of data slots an index entry can name.
pub const MAX_DATA_SLOTS: u32 = (1 << INDEX_SLOT_BITS) - 1;

/// Packs an index entry.
pub const fn index_entry(seq: u64, slot: u32) -> IndexEntry {
    (seq << INDEX_SLOT_BITS) | slot as u64
}

/// Unpacks an index entry into (seq, slot).
pub const fn index_parts(e: IndexEntry) -> (u64, u32) {
    (
        e >> INDEX_SLOT_BITS,
        (e & ((1 << INDEX_SLOT_BITS) - 1)) as u32,
    )
}

/// Where each part lives for a given geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Index entries.
    pub slot_count: u32,
    /// Bytes per data slot.
    pub slot_size: u32,
    /// Client table entries.
    pub client_capacity: u32,
    /// Slots per client submission queue.
    pub submit_depth: u32,
}

/// Default submission queue depth per client: client-generated events are
/// rare and the server drains queues as they fill; a full queue makes the
/// producer wait, it never loses a record.
pub const DEFAULT_SUBMIT_DEPTH: u32 = 4;

/// Default index entries: OpenPMIx caches 512 events.
pub const DEFAULT_SLOT_COUNT: u32 = 512;
/// Default slot size: a typical event (source, ~8 infos with short keys and
/// scalar or short string values) archives to 300–700 bytes.
pub const DEFAULT_SLOT_SIZE: u32 = 1024;
/// Default client table size.
pub const DEFAULT_CLIENT_CAPACITY: u32 = 64;

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            slot_count: DEFAULT_SLOT_COUNT,
            slot_size: DEFAULT_SLOT_SIZE,
            client_capacity: DEFAULT_CLIENT_CAPACITY,
            submit_depth: DEFAULT_SUBMIT_DEPTH,
        }
    }
}

const fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// Offsets and sizes derived from a [`Geometry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offsets {
    /// Of the ring header.
    pub ring: u64,
    /// Of the client table.
    pub clients: u64,
    /// Of the index ring.
    pub index: u64,
    /// Of data slot 0.
    pub slots: u64,
    /// Data slots.
    pub data_slots: u32,
    /// Of the submission queues' headers.
    pub submit: u64,
    /// Of the submission queues' slots.
    pub submit_slots: u64,
    /// Bytes of one submission queue's slots.
    pub submit_queue_size: u64,
    /// Of the sleeper words after the ring header's (`sleeper_words − 1`).
    pub sleepers: u64,
    /// Whole segment.
    pub total: u64,
}

impl Offsets {
    /// Of queue `c`'s [`SubmitHeader`].
    pub const fn submit_header(&self, c: u32) -> u64 {
        self.submit + c as u64 * size_of::<SubmitHeader>() as u64
    }

    /// Of queue `c`'s slot `i` (its [`SlotHeader`]), with slots of
    /// `slot_size` bytes.
    pub const fn submit_slot(&self, c: u32, i: u32, slot_size: u32) -> u64 {
        self.submit_slots + c as u64 * self.submit_queue_size + i as u64 * slot_size as u64
    }
}

impl Geometry {
    /// Checks the geometry: at least 2 index entries, slot size a multiple of
    /// [`LINE`] with room for a header and a record, data slots nameable by
    /// an index entry.
    pub fn validate(&self) -> Result<Offsets, &'static str> {
        if self.slot_count < 2 {
            return Err("slot_count must be at least 2");
        }
        if self.slot_size < 2 * LINE as u32 || self.slot_size % LINE as u32 != 0 {
            return Err("slot_size must be a multiple of 128 and at least 256");
        }
        if self.client_capacity == 0 {
            return Err("client_capacity must be at least 1");
        }
        if self.submit_depth == 0 {
            return Err("submit_depth must be at least 1");
        }
        let data_slots = self.slot_count as u64 + self.client_capacity as u64 + 1;
        if data_slots > MAX_DATA_SLOTS as u64 {
            return Err("slot_count + client_capacity + 1 must fit in 16 bits");
        }
        let ring = size_of::<SegmentHeader>() as u64;
        let clients = ring + size_of::<RingHeader>() as u64;
        let index = clients + self.client_capacity as u64 * size_of::<ClientEntry>() as u64;
        let slots = round_up(index + self.slot_count as u64 * 8, LINE as u64);
        let submit = slots + data_slots * self.slot_size as u64;
        let submit_slots = submit + self.client_capacity as u64 * size_of::<SubmitHeader>() as u64;
        let submit_queue_size = self.submit_depth as u64 * self.slot_size as u64;
        let sleepers = submit_slots + self.client_capacity as u64 * submit_queue_size;
        let more = sleeper_words(self.client_capacity) as u64 - 1;
        let total = sleepers + round_up(more * 8, LINE as u64);
        Ok(Offsets {
            ring,
            clients,
            index,
            slots,
            data_slots: data_slots as u32,
            submit,
            submit_slots,
            submit_queue_size,
            sleepers,
            total,
        })
    }
}

// The contract, checked at compile time: a change here is a layout change and
// must bump LAYOUT_VERSION (and docs/shm-format.md).
const _: () = {
    assert!(size_of::<SegmentHeader>() == 256);
    assert!(align_of::<SegmentHeader>() == 128);
    assert!(offset_of!(SegmentHeader, magic) == 0);
    assert!(offset_of!(SegmentHeader, layout_version) == 8);
    assert!(offset_of!(SegmentHeader, header_size) == 12);
    assert!(offset_of!(SegmentHeader, schema_hash) == 16);
    assert!(offset_of!(SegmentHeader, total_size) == 24);
    assert!(offset_of!(SegmentHeader, slot_count) == 32);
    assert!(offset_of!(SegmentHeader, slot_size) == 36);
    assert!(offset_of!(SegmentHeader, data_slots) == 40);
    assert!(offset_of!(SegmentHeader, client_capacity) == 44);
    assert!(offset_of!(SegmentHeader, ring_offset) == 48);
    assert!(offset_of!(SegmentHeader, clients_offset) == 56);
    assert!(offset_of!(SegmentHeader, index_offset) == 64);
    assert!(offset_of!(SegmentHeader, slots_offset) == 72);
    assert!(offset_of!(SegmentHeader, server_pid) == 80);
    assert!(offset_of!(SegmentHeader, server_uid) == 84);
    assert!(offset_of!(SegmentHeader, server_heartbeat) == 88);
    assert!(offset_of!(SegmentHeader, server_generation) == 96);
    assert!(offset_of!(SegmentHeader, init_complete) == 104);
    assert!(offset_of!(SegmentHeader, submit_depth) == 108);
    assert!(offset_of!(SegmentHeader, submit_offset) == 112);
    assert!(offset_of!(SegmentHeader, submit_queue_size) == 120);
    assert!(offset_of!(SegmentHeader, sleepers_offset) == 128);
    assert!(offset_of!(SegmentHeader, submit_slots_offset) == 136);

    assert!(size_of::<RingHeader>() == 5 * LINE);
    assert!(align_of::<RingHeader>() == LINE);
    assert!(offset_of!(RingHeader, head) == 0);
    assert!(offset_of!(RingHeader, doorbell) == LINE);
    assert!(offset_of!(RingHeader, sleepers) == 2 * LINE);
    assert!(offset_of!(RingHeader, wakes) == 3 * LINE);
    assert!(offset_of!(RingHeader, refused) == 3 * LINE + 8);
    assert!(offset_of!(RingHeader, interest_gen) == 3 * LINE + 16);
    assert!(offset_of!(RingHeader, mark) == 3 * LINE + 24);
    assert!(offset_of!(RingHeader, submit_bell) == 4 * LINE);
    assert!(offset_of!(RingHeader, submit_sleepy) == 4 * LINE + 4);
    assert!(offset_of!(RingHeader, lane_epoch) == 4 * LINE + 8);
    assert!(offset_of!(RingHeader, lane_senders) == 4 * LINE + 16);

    assert!(size_of::<SubmitHeader>() == 2 * LINE);
    assert!(align_of::<SubmitHeader>() == LINE);
    assert!(offset_of!(SubmitHeader, produced) == 0);
    assert!(offset_of!(SubmitHeader, consumed) == LINE);
    assert!(offset_of!(SubmitHeader, space_waiting) == LINE + 8);
    assert!(offset_of!(SubmitHeader, space_bell) == LINE + 12);

    assert!(size_of::<ClientEntry>() == LINE);
    assert!(align_of::<ClientEntry>() == LINE);
    assert!(offset_of!(ClientEntry, state) == 0);
    assert!(offset_of!(ClientEntry, pid) == 4);
    assert!(offset_of!(ClientEntry, generation) == 8);
    assert!(offset_of!(ClientEntry, cursor) == 16);
    assert!(offset_of!(ClientEntry, wake) == 24);
    assert!(offset_of!(ClientEntry, waiting) == 28);
    assert!(offset_of!(ClientEntry, heartbeat) == 32);
    assert!(offset_of!(ClientEntry, lost) == 40);
    assert!(offset_of!(ClientEntry, held_slot) == 48);
    assert!(offset_of!(ClientEntry, rank) == 52);
    assert!(offset_of!(ClientEntry, own_relayed) == 56);
    assert!(offset_of!(ClientEntry, interest) == 64);
    assert!(offset_of!(ClientEntry, mark) == 72);

    assert!(size_of::<Mark>() == 16);
    assert!(offset_of!(Mark, last) == 0);
    assert!(offset_of!(Mark, prev) == 8);

    assert!(size_of::<SlotHeader>() == 16);
    assert!(align_of::<SlotHeader>() == 16);
    assert!(offset_of!(SlotHeader, seq) == 0);
    assert!(offset_of!(SlotHeader, len) == 8);
    assert!(offset_of!(SlotHeader, pins) == 12);
};

/// Bytes of record a slot of `slot_size` holds.
pub const fn slot_capacity(slot_size: u32) -> u32 {
    slot_size - size_of::<SlotHeader>() as u32
}
