//! The ring's memory: a byte region laid out as `shm_layout` says, backed by
//! a MAP_SHARED mapping (the segment) or by the heap (the in-process backend,
//! which runs the same conformance tests and miri).

mod memory;

use crate::ring::protocol::RingMemory;
use crate::ring::submit::SubmitMemory;
use crate::sync::{prefetch_read, Cell32, Cell64};
use shm_layout::{
    client_state, ClientEntry, Geometry, Offsets, SegmentHeader, SlotHeader, INDEX_EMPTY,
    INIT_COMPLETE, LAYOUT_VERSION, SCHEMA_HASH, SEGMENT_MAGIC,
};
use std::mem::{offset_of, size_of};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a region could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    /// Smaller than a segment header.
    TooSmall(usize),
    /// The creator did not publish init-complete within the timeout.
    InitTimeout,
    /// Not a fastpmix segment.
    BadMagic(u64),
    /// Another layout version.
    VersionMismatch {
        /// Ours.
        expected: u32,
        /// The segment's.
        found: u32,
    },
    /// Another record schema.
    SchemaMismatch {
        /// Ours.
        expected: u64,
        /// The segment's.
        found: u64,
    },
    /// Header fields disagree with each other or with the mapping.
    BadGeometry(&'static str),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::TooSmall(n) => write!(f, "segment of {n} bytes is smaller than its header"),
            OpenError::InitTimeout => write!(f, "segment creator did not finish initialising"),
            OpenError::BadMagic(m) => write!(f, "not a fastpmix segment (magic {m:#x})"),
            OpenError::VersionMismatch { expected, found } => {
                write!(f, "layout version {found}, this build reads {expected}")
            }
            OpenError::SchemaMismatch { expected, found } => {
                write!(
                    f,
                    "record schema {found:#x}, this build reads {expected:#x}"
                )
            }
            OpenError::BadGeometry(w) => write!(f, "inconsistent segment geometry: {w}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// Who owns the bytes.
pub(crate) enum Backing {
    /// A MAP_SHARED mapping of a shared-memory object.
    Mapped(memmap2::MmapMut),
    /// A read-only shared mapping (inspection tools): only loads happen.
    ReadOnly(memmap2::Mmap),
    /// 128-byte aligned heap memory (in-process backend).
    Heap(HeapBytes),
}

/// Zeroed, 128-byte aligned heap memory.
pub(crate) struct HeapBytes {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: HeapBytes is an owned allocation; all shared access to it goes
// through atomic cells or the ring's pin protocol.
unsafe impl Send for HeapBytes {}
// SAFETY: as above.
unsafe impl Sync for HeapBytes {}

impl HeapBytes {
    fn zeroed(len: usize) -> HeapBytes {
        let layout = std::alloc::Layout::from_size_align(len.max(1), shm_layout::LINE)
            .expect("segment size fits a layout");
        // SAFETY: the layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        HeapBytes { ptr, layout }
    }
}

impl Drop for HeapBytes {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

impl Backing {
    fn base(&self) -> *mut u8 {
        match self {
            Backing::Mapped(m) => m.as_ptr() as *mut u8,
            Backing::ReadOnly(m) => m.as_ptr() as *mut u8,
            Backing::Heap(h) => h.ptr,
        }
    }

    fn len(&self) -> usize {
        match self {
            Backing::Mapped(m) => m.len(),
            Backing::ReadOnly(m) => m.len(),
            Backing::Heap(h) => h.layout.size(),
        }
    }
}

/// A point-in-time view of a ring, for tools.
#[derive(Clone, Debug)]
pub struct RingState {
    /// Records published.
    pub head: u64,
    /// Doorbell futex value (bumped per wake-all).
    pub doorbell: u32,
    /// Which entries may be asleep: every sleeper word, word 0 (entries
    /// 0–63) first (`shm_layout::sleeper_word`, `sleeper_bit`).
    pub sleeper_words: Vec<u64>,
    /// Futex wakes issued.
    pub wakes: u64,
    /// Publishes refused.
    pub refused: u64,
    /// Server liveness counter.
    pub server_heartbeat: u64,
    /// Every client-table entry.
    pub clients: Vec<ClientState>,
}

/// One client-table entry, as read.
#[derive(Clone, Debug)]
pub struct ClientState {
    /// Entry index.
    pub index: u32,
    /// `shm_layout::client_state` value.
    pub state: u32,
    /// Client pid.
    pub pid: u32,
    /// Assignment generation.
    pub generation: u64,
    /// Next sequence it will read.
    pub cursor: u64,
    /// Asleep on a futex.
    pub waiting: bool,
    /// Its wake word (bumped each time the writer wakes it).
    pub wake: u32,
    /// Heartbeats.
    pub heartbeat: u64,
    /// Records lost to lag.
    pub lost: u64,
    /// Pinned slot (`u32::MAX`: none).
    pub held_slot: u32,
    /// The event codes its reader wants woken for (`interest_bit`s;
    /// `INTEREST_ALL`: every code).
    pub interest: u64,
    /// Records its client pushed into its submission queue (its lane).
    pub submitted: u64,
    /// Of those, the records the server has routed and released.
    pub routed: u64,
}

/// A validated region: geometry known, every offset inside the backing.
#[derive(Clone)]
pub struct Region {
    /// Keeps the memory `base` points into alive.
    _backing: Arc<Backing>,
    base: *mut u8,
    geometry: Geometry,
    offsets: Offsets,
}

// SAFETY: the raw base pointer is derived from `backing`, which the Arc keeps
// alive; shared words are only accessed through atomic cells, slot bytes only
// under the pin protocol (docs/shm-format.md).
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl std::fmt::Debug for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Region")
            .field("geometry", &self.geometry)
            .field("offsets", &self.offsets)
            .finish()
    }
}

impl Region {
    /// A fresh in-process ring on the heap.
    pub fn heap(g: Geometry, client_pid: u32) -> Result<Region, OpenError> {
        let o = g.validate().map_err(OpenError::BadGeometry)?;
        let backing = Backing::Heap(HeapBytes::zeroed(o.total as usize));
        Ok(Region::initialise(backing, g, o, client_pid, 0, 0))
    }

    /// Lays out and initialises a zeroed backing, then publishes init-complete.
    pub(crate) fn initialise(
        backing: Backing,
        g: Geometry,
        o: Offsets,
        pid: u32,
        uid: u32,
        generation: u64,
    ) -> Region {
        assert!(
            backing.len() as u64 >= o.total,
            "backing smaller than the geometry"
        );
        let base = backing.base();
        let r = Region {
            _backing: Arc::new(backing),
            base,
            geometry: g,
            offsets: o,
        };
        // SAFETY: the region is not shared yet (init_complete unpublished) and
        // the header lies at offset 0 of a backing at least `o.total` long.
        unsafe {
            let h = base as *mut SegmentHeader;
            (*h).magic = SEGMENT_MAGIC;
            (*h).layout_version = LAYOUT_VERSION;
            (*h).header_size = size_of::<SegmentHeader>() as u32;
            (*h).schema_hash = SCHEMA_HASH;
            (*h).total_size = o.total;
            (*h).slot_count = g.slot_count;
            (*h).slot_size = g.slot_size;
            (*h).data_slots = o.data_slots;
            (*h).client_capacity = g.client_capacity;
            (*h).ring_offset = o.ring;
            (*h).clients_offset = o.clients;
            (*h).index_offset = o.index;
            (*h).slots_offset = o.slots;
            (*h).server_pid = pid;
            (*h).server_uid = uid;
            (*h).server_generation = generation;
            (*h).submit_depth = g.submit_depth;
            (*h).submit_offset = o.submit;
            (*h).submit_queue_size = o.submit_queue_size;
            (*h).submit_slots_offset = o.submit_slots;
            (*h).sleepers_offset = o.sleepers;
        }
        for i in 0..g.slot_count {
            r.index(i).store_relaxed(INDEX_EMPTY);
        }
        for s in 0..o.data_slots {
            r.slot_seq(s).store_relaxed(u64::MAX);
        }
        for c in 0..g.client_capacity {
            r.client_held(c).store_relaxed(u32::MAX);
        }
        // Written last. Release: pairs with the Acquire in `open`.
        r.init_word().store_release(INIT_COMPLETE);
        r
    }

    /// Validates a backing someone else initialised, waiting up to `timeout`
    /// for its init-complete word.
    pub(crate) fn open(backing: Backing, timeout: Duration) -> Result<Region, OpenError> {
        let len = backing.len();
        if len < size_of::<SegmentHeader>() {
            return Err(OpenError::TooSmall(len));
        }
        let base = backing.base();
        // SAFETY: the header fits (checked above); init_complete is aligned.
        let init =
            unsafe { Cell32::at(base.add(offset_of!(SegmentHeader, init_complete)) as *mut u32) };
        let t0 = Instant::now();
        // Acquire: pairs with the creator's Release store of INIT_COMPLETE,
        // after which the header fields below are immutable.
        while init.load_acquire() != INIT_COMPLETE {
            if t0.elapsed() >= timeout {
                return Err(OpenError::InitTimeout);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        // SAFETY: as above; the fields are immutable after init-complete.
        let h = unsafe { &*(base as *const SegmentHeader) };
        if h.magic != SEGMENT_MAGIC {
            return Err(OpenError::BadMagic(h.magic));
        }
        if h.layout_version != LAYOUT_VERSION {
            return Err(OpenError::VersionMismatch {
                expected: LAYOUT_VERSION,
                found: h.layout_version,
            });
        }
        if h.schema_hash != SCHEMA_HASH {
            return Err(OpenError::SchemaMismatch {
                expected: SCHEMA_HASH,
                found: h.schema_hash,
            });
        }
        let g = Geometry {
            slot_count: h.slot_count,
            slot_size: h.slot_size,
            client_capacity: h.client_capacity,
            submit_depth: h.submit_depth,
        };
        let o = g.validate().map_err(OpenError::BadGeometry)?;
        let agrees = h.header_size as usize == size_of::<SegmentHeader>()
            && h.total_size == o.total
            && h.data_slots == o.data_slots
            && (
                h.ring_offset,
                h.clients_offset,
                h.index_offset,
                h.slots_offset,
            ) == (o.ring, o.clients, o.index, o.slots)
            && (h.submit_offset, h.submit_queue_size) == (o.submit, o.submit_queue_size)
            && h.submit_slots_offset == o.submit_slots
            && h.sleepers_offset == o.sleepers;
        if !agrees {
            return Err(OpenError::BadGeometry(
                "header offsets disagree with its geometry",
            ));
        }
        if (len as u64) < o.total {
            return Err(OpenError::BadGeometry("mapping shorter than total_size"));
        }
        Ok(Region {
            _backing: Arc::new(backing),
            base,
            geometry: g,
            offsets: o,
        })
    }

    /// The geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The derived offsets.
    pub fn offsets(&self) -> Offsets {
        self.offsets
    }

    /// The segment header (immutable after init).
    pub fn header(&self) -> &SegmentHeader {
        // SAFETY: validated at construction; header fields other than the
        // liveness words are immutable after init-complete.
        unsafe { &*(self.base as *const SegmentHeader) }
    }

    fn init_word(&self) -> &Cell32 {
        self.cell32(offset_of!(SegmentHeader, init_complete) as u64)
    }

    /// The server's liveness counter.
    pub fn server_heartbeat(&self) -> &Cell64 {
        self.cell64(offset_of!(SegmentHeader, server_heartbeat) as u64)
    }

    fn cell64(&self, off: u64) -> &Cell64 {
        debug_assert!(off + 8 <= self.offsets.total && off % 8 == 0);
        // SAFETY: every caller passes an offset computed from the validated
        // geometry of a field declared u64 in shm_layout (aligned, in bounds);
        // the backing lives as long as `self`; shared words are atomic-only.
        unsafe { Cell64::at(self.base.add(off as usize) as *mut u64) }
    }

    fn cell32(&self, off: u64) -> &Cell32 {
        debug_assert!(off + 4 <= self.offsets.total && off % 4 == 0);
        // SAFETY: as for `cell64`, for a u32 field.
        unsafe { Cell32::at(self.base.add(off as usize) as *mut u32) }
    }

    fn slot_off(&self, s: u32) -> u64 {
        assert!(s < self.offsets.data_slots, "slot {s} out of range");
        self.offsets.slots + s as u64 * self.geometry.slot_size as u64
    }

    fn client_off(&self, c: u32) -> u64 {
        assert!(c < self.geometry.client_capacity, "client {c} out of range");
        self.offsets.clients + c as u64 * size_of::<ClientEntry>() as u64
    }

    /// The record bytes of slot `s`, `len` long.
    ///
    /// # Safety
    /// The caller holds a pin on `s` obtained through the protocol (so the
    /// writer does not rewrite it) and `len` ≤ the slot capacity.
    pub(crate) unsafe fn slot_bytes(&self, s: u32, len: u32) -> &[u8] {
        let off = self.slot_off(s) + size_of::<SlotHeader>() as u64;
        // rkyv validation starts at the root (the record's end) and follows
        // relative pointers backwards: fetch every line at once.
        prefetch_read(self.base.wrapping_add(off as usize), len as usize);
        // SAFETY: in bounds (validated geometry, len ≤ capacity by the
        // caller); stable while pinned (caller).
        unsafe { std::slice::from_raw_parts(self.base.add(off as usize), len as usize) }
    }

    /// A consistent-enough picture of the ring for tools: every field is read
    /// with a single atomic load (no stores: works on a read-only mapping).
    pub fn state(&self) -> RingState {
        let g = self.geometry;
        let clients = (0..g.client_capacity)
            .map(|c| {
                let base = self.client_off(c);
                ClientState {
                    index: c,
                    state: self
                        .cell32(base + offset_of!(ClientEntry, state) as u64)
                        .load_acquire(),
                    pid: self
                        .cell32(base + offset_of!(ClientEntry, pid) as u64)
                        .load_relaxed(),
                    generation: self
                        .cell64(base + offset_of!(ClientEntry, generation) as u64)
                        .load_relaxed(),
                    cursor: self.client_cursor(c).load_acquire(),
                    waiting: self.client_waiting(c).load_relaxed() != 0,
                    wake: self.client_wake(c).load_relaxed(),
                    heartbeat: self
                        .cell64(base + offset_of!(ClientEntry, heartbeat) as u64)
                        .load_relaxed(),
                    lost: self.client_lost(c).load_relaxed(),
                    held_slot: self.client_held(c).load_relaxed(),
                    interest: self.client_interest(c).load_relaxed(),
                    submitted: SubmitMemory::produced(self, c).load_acquire(),
                    routed: SubmitMemory::consumed(self, c).load_acquire(),
                }
            })
            .collect();
        RingState {
            head: self.head().load_acquire(),
            doorbell: self.doorbell().load_relaxed(),
            sleeper_words: (0..self.sleeper_words())
                .map(|w| self.sleepers(w).load_relaxed())
                .collect(),
            wakes: self.wakes().load_relaxed(),
            refused: self.refused().load_relaxed(),
            server_heartbeat: self.server_heartbeat().load_relaxed(),
            clients,
        }
    }

    /// Copies the record with sequence `seq` out of the ring, if it is still
    /// there and stable while copied (seqlock-style: the slot's commit word
    /// is read before and after the copy). For tools on read-only mappings,
    /// which cannot pin.
    pub fn copy_record(&self, seq: u64) -> Option<rkyv::util::AlignedVec> {
        let n = self.geometry.slot_count;
        let e = self.index((seq % n as u64) as u32).load_acquire();
        let (s, slot) = shm_layout::index_parts(e);
        if e == INDEX_EMPTY || s != seq || slot >= self.offsets.data_slots {
            return None;
        }
        if self.slot_seq(slot).load_acquire() != seq {
            return None;
        }
        let len = self.slot_len(slot).load_relaxed().min(self.slot_capacity());
        let off = self.slot_off(slot) + size_of::<SlotHeader>() as u64;
        let mut out = rkyv::util::AlignedVec::with_capacity(len as usize);
        out.resize(len as usize, 0);
        // SAFETY: in bounds (validated geometry, len clamped to capacity).
        // The bytes may be rewritten concurrently (we hold no pin): they are
        // copied with volatile reads into our buffer and the copy is only
        // returned if the commit word did not move, as a seqlock reader does.
        unsafe {
            let src = self.base.add(off as usize);
            for (i, b) in out.iter_mut().enumerate() {
                *b = std::ptr::read_volatile(src.add(i));
            }
        }
        crate::sync::fence_seqcst();
        (self.slot_seq(slot).load_acquire() == seq).then_some(out)
    }

    /// Claims a free client-table entry for a reader started by `pid` that
    /// starts reading at `cursor`. Every field of the entry is reset before
    /// it is published as ACTIVE (Release), so a reused entry carries nothing
    /// of its previous owner.
    pub fn claim_client(&self, pid: u32, cursor: u64) -> Option<u32> {
        self.claim_client_from(pid, u32::MAX, cursor, 0)
    }

    /// [`Region::claim_client`], looking from entry `from` on (wrapping
    /// around): a caller that claims one entry after another passes the
    /// one after its last claim, and a claim then costs one probe instead
    /// of one per entry already taken. A taken entry is skipped on a plain
    /// load: its line is its reader's, which a CAS would pull over.
    /// `rank`: the client's rank (`u32::MAX` for a reader that is none),
    /// against which peers check the source of its lane records.
    pub fn claim_client_from(&self, pid: u32, rank: u32, cursor: u64, from: u32) -> Option<u32> {
        let cap = self.geometry.client_capacity;
        (0..cap).map(|i| (from % cap + i) % cap).find(|&c| {
            let base = self.client_off(c);
            let st = self.cell32(base + offset_of!(ClientEntry, state) as u64);
            if st.load_relaxed() != client_state::FREE
                || st
                    .cas_acqrel(client_state::FREE, client_state::RESERVED)
                    .is_err()
            {
                return false;
            }
            self.cell32(base + offset_of!(ClientEntry, pid) as u64)
                .store_relaxed(pid);
            self.cell32(base + offset_of!(ClientEntry, rank) as u64)
                .store_relaxed(rank);
            self.cell64(base + offset_of!(ClientEntry, generation) as u64)
                .fetch_add_relaxed(1);
            self.client_cursor(c).store_relaxed(cursor);
            self.client_lost(c).store_relaxed(0);
            self.own_relayed(c).store_relaxed(0);
            self.client_waiting(c).store_relaxed(0);
            self.client_held(c).store_relaxed(u32::MAX);
            crate::ring::protocol::set_interest(self, c, shm_layout::INTEREST_ALL);
            self.cell64(base + offset_of!(ClientEntry, heartbeat) as u64)
                .store_relaxed(0);
            // Release: pairs with the Acquire in `client_state`/`state`.
            st.store_release(client_state::ACTIVE);
            true
        })
    }

    /// Records published so far (the ring's `head`): where a reader
    /// claimed now starts. One load, where [`Region::state`] reads every
    /// entry.
    pub fn published(&self) -> u64 {
        self.head().load_acquire()
    }

    /// Client `c`'s reader wants no event code yet (a client library with
    /// no handler registered, right after it attached): the writer wakes
    /// it only once half the ring is unread until [`Region::want`] adds
    /// codes.
    pub fn want_nothing(&self, c: u32) {
        crate::ring::protocol::set_interest(self, c, 0);
    }

    /// Adds `bits` ([`shm_layout::interest_bit`]s) to client `c`'s
    /// interest. `true`: its reader may have been left asleep for records
    /// it has not read, and must look at the ring now (see
    /// `protocol::want`).
    pub fn want(&self, c: u32, bits: u64) -> bool {
        crate::ring::protocol::want(self, c, bits)
    }

    /// Client `c`'s `own_relayed`: the `source_seq` of the last record of
    /// that client the server published into this ring. The server stores
    /// it (Release) after the publish; the reader loads it (Acquire), so
    /// every own record up to it is visible to the reader's next poll.
    pub fn own_relayed(&self, c: u32) -> &Cell64 {
        self.cell64(self.client_off(c) + offset_of!(ClientEntry, own_relayed) as u64)
    }

    /// Client `c`'s heartbeat counter: the client adds one per
    /// `PMIx_Heartbeat` (Relaxed: only the count matters, nothing is
    /// published with it); the server's monitor samples it.
    pub fn heartbeat(&self, c: u32) -> &Cell64 {
        self.cell64(self.client_off(c) + offset_of!(ClientEntry, heartbeat) as u64)
    }

    /// The next sequence client `c` will read (what a writer checks to see
    /// how far behind its slowest reader is; one load).
    pub fn cursor_of(&self, c: u32) -> u64 {
        self.client_cursor(c).load_acquire()
    }

    /// Returns a client-table entry to the free pool.
    pub fn release_client(&self, c: u32) {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, waiting) as u64)
            .store_relaxed(0);
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, state) as u64)
            .store_release(client_state::FREE);
    }

    /// A client entry's state word.
    pub fn client_state(&self, c: u32) -> u32 {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, state) as u64)
            .load_acquire()
    }

    /// A client entry's pid.
    pub fn client_pid(&self, c: u32) -> u32 {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, pid) as u64)
            .load_relaxed()
    }
}
