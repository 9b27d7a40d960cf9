//! The memory traits of the ring protocol and the submission queues over a
//! [`Region`]: each accessor is an offset into the segment's layout
//! (`shm_layout`), asserted in range.

use super::Region;
use crate::ring::protocol::RingMemory;
use crate::ring::submit::SubmitMemory;
use crate::sync::{prefetch_read, prefetch_write, Cell32, Cell64};
use shm_layout::{ClientEntry, Mark, RingHeader, SlotHeader, SubmitHeader};
use std::mem::{offset_of, size_of};

impl Region {
    /// The words of the [`Mark`] at `off`: `[last, prev]`.
    fn mark_at(&self, off: u64) -> [&Cell64; 2] {
        [
            self.cell64(off + offset_of!(Mark, last) as u64),
            self.cell64(off + offset_of!(Mark, prev) as u64),
        ]
    }

    fn queue_off(&self, c: u32) -> u64 {
        assert!(c < self.geometry.client_capacity, "client {c} out of range");
        self.offsets.submit_header(c)
    }

    fn queue_slot_off(&self, c: u32, i: u32) -> u64 {
        assert!(c < self.geometry.client_capacity, "client {c} out of range");
        assert!(
            i < self.geometry.submit_depth,
            "queue slot {i} out of range"
        );
        self.offsets.submit_slot(c, i, self.geometry.slot_size)
    }
}

impl SubmitMemory for Region {
    fn depth(&self) -> u32 {
        self.geometry.submit_depth
    }
    fn capacity(&self) -> u32 {
        shm_layout::slot_capacity(self.geometry.slot_size)
    }
    fn produced(&self, c: u32) -> &Cell64 {
        self.cell64(self.queue_off(c) + offset_of!(SubmitHeader, produced) as u64)
    }
    fn consumed(&self, c: u32) -> &Cell64 {
        self.cell64(self.queue_off(c) + offset_of!(SubmitHeader, consumed) as u64)
    }
    fn space_waiting(&self, c: u32) -> &Cell32 {
        self.cell32(self.queue_off(c) + offset_of!(SubmitHeader, space_waiting) as u64)
    }
    fn space_bell(&self, c: u32) -> &Cell32 {
        self.cell32(self.queue_off(c) + offset_of!(SubmitHeader, space_bell) as u64)
    }
    fn submit_bell(&self) -> &Cell32 {
        self.cell32(self.offsets.ring + offset_of!(RingHeader, submit_bell) as u64)
    }
    fn submit_sleepy(&self) -> &Cell32 {
        self.cell32(self.offsets.ring + offset_of!(RingHeader, submit_sleepy) as u64)
    }
    fn entry_len(&self, c: u32, i: u32) -> &Cell32 {
        self.cell32(self.queue_slot_off(c, i) + offset_of!(SlotHeader, len) as u64)
    }
    unsafe fn write_entry(&self, c: u32, i: u32, bytes: &[u8]) {
        assert!(
            bytes.len() <= SubmitMemory::capacity(self) as usize,
            "record larger than a slot"
        );
        let off = self.queue_slot_off(c, i) + size_of::<SlotHeader>() as u64;
        // SAFETY: in bounds (validated geometry, length checked); the caller
        // is the queue's only producer and the slot is free (producer
        // invariant of the submission queue).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(off as usize), bytes.len())
        }
    }
    fn entry_seq(&self, c: u32, i: u32) -> &Cell64 {
        self.cell64(self.queue_slot_off(c, i) + offset_of!(SlotHeader, seq) as u64)
    }
    fn lane_epoch(&self) -> &Cell64 {
        self.cell64(self.offsets.ring + offset_of!(RingHeader, lane_epoch) as u64)
    }
    fn lane_senders(&self) -> &Cell64 {
        self.cell64(self.offsets.ring + offset_of!(RingHeader, lane_senders) as u64)
    }
    fn read_entry_shared(&self, c: u32, i: u32, len: u32, out: &mut rkyv::util::AlignedVec) {
        // The same volatile copy as the consumer's: bytes a rewrite changes
        // under it end up in our own buffer only, and the seqlock check
        // after the copy discards them (`lane::LaneCore::poll`).
        self.read_entry(c, i, len, out)
    }
    fn read_entry(&self, c: u32, i: u32, len: u32, out: &mut rkyv::util::AlignedVec) {
        let len = len.min(SubmitMemory::capacity(self));
        let off = self.queue_slot_off(c, i) + size_of::<SlotHeader>() as u64;
        out.clear();
        out.resize(len as usize, 0);
        // SAFETY: in bounds (validated geometry, len clamped). The producer
        // is another, untrusted process that could write concurrently if it
        // broke the protocol: volatile byte copies into our own buffer never
        // hand out a reference to shared bytes, and the caller validates the
        // copy before use.
        unsafe {
            let src = self.base.add(off as usize);
            for (j, b) in out.iter_mut().enumerate() {
                *b = std::ptr::read_volatile(src.add(j));
            }
        }
    }
}

impl RingMemory for Region {
    fn slot_count(&self) -> u32 {
        self.geometry.slot_count
    }
    fn data_slots(&self) -> u32 {
        self.offsets.data_slots
    }
    fn slot_capacity(&self) -> u32 {
        shm_layout::slot_capacity(self.geometry.slot_size)
    }
    fn client_capacity(&self) -> u32 {
        self.geometry.client_capacity
    }
    fn head(&self) -> &Cell64 {
        self.cell64(self.offsets.ring + offset_of!(RingHeader, head) as u64)
    }
    fn doorbell(&self) -> &Cell32 {
        self.cell32(self.offsets.ring + offset_of!(RingHeader, doorbell) as u64)
    }
    fn sleeper_words(&self) -> u32 {
        shm_layout::sleeper_words(self.geometry.client_capacity)
    }
    fn sleepers(&self, w: u32) -> &Cell64 {
        assert!(w < self.sleeper_words(), "sleeper word {w} out of range");
        match w {
            0 => self.cell64(self.offsets.ring + offset_of!(RingHeader, sleepers) as u64),
            w => self.cell64(self.offsets.sleepers + (w as u64 - 1) * 8),
        }
    }
    fn wakes(&self) -> &Cell64 {
        self.cell64(self.offsets.ring + offset_of!(RingHeader, wakes) as u64)
    }
    fn refused(&self) -> &Cell64 {
        self.cell64(self.offsets.ring + offset_of!(RingHeader, refused) as u64)
    }
    fn interest_gen(&self) -> &Cell64 {
        self.cell64(self.offsets.ring + offset_of!(RingHeader, interest_gen) as u64)
    }
    fn index(&self, i: u32) -> &Cell64 {
        assert!(i < self.geometry.slot_count, "index {i} out of range");
        self.cell64(self.offsets.index + i as u64 * 8)
    }
    fn slot_seq(&self, s: u32) -> &Cell64 {
        self.cell64(self.slot_off(s) + offset_of!(SlotHeader, seq) as u64)
    }
    fn slot_len(&self, s: u32) -> &Cell32 {
        self.cell32(self.slot_off(s) + offset_of!(SlotHeader, len) as u64)
    }
    fn slot_pins(&self, s: u32) -> &Cell32 {
        self.cell32(self.slot_off(s) + offset_of!(SlotHeader, pins) as u64)
    }
    fn client_cursor(&self, c: u32) -> &Cell64 {
        self.cell64(self.client_off(c) + offset_of!(ClientEntry, cursor) as u64)
    }
    fn client_lost(&self, c: u32) -> &Cell64 {
        self.cell64(self.client_off(c) + offset_of!(ClientEntry, lost) as u64)
    }
    fn client_waiting(&self, c: u32) -> &Cell32 {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, waiting) as u64)
    }
    fn client_held(&self, c: u32) -> &Cell32 {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, held_slot) as u64)
    }
    fn client_wake(&self, c: u32) -> &Cell32 {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, wake) as u64)
    }
    fn client_interest(&self, c: u32) -> &Cell64 {
        self.cell64(self.client_off(c) + offset_of!(ClientEntry, interest) as u64)
    }
    fn client_rank(&self, c: u32) -> u32 {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, rank) as u64)
            .load_relaxed()
    }
    fn client_active(&self, c: u32) -> bool {
        self.cell32(self.client_off(c) + offset_of!(ClientEntry, state) as u64)
            .load_relaxed()
            == shm_layout::client_state::ACTIVE
    }
    fn mark(&self) -> [&Cell64; 2] {
        self.mark_at(self.offsets.ring + offset_of!(RingHeader, mark) as u64)
    }
    fn client_mark(&self, c: u32) -> [&Cell64; 2] {
        self.mark_at(self.client_off(c) + offset_of!(ClientEntry, mark) as u64)
    }
    fn prefetch_slot(&self, s: u32) {
        let off = self.slot_off(s) as usize;
        // The header line is pinned (an RMW) next: fetch it exclusive. The
        // next lines hold the record's start.
        prefetch_write(self.base.wrapping_add(off));
        prefetch_read(self.base.wrapping_add(off + 64), 64);
    }
    unsafe fn write_slot(&self, s: u32, bytes: &[u8]) {
        assert!(
            bytes.len() <= self.slot_capacity() as usize,
            "record larger than a slot"
        );
        let off = self.slot_off(s) + size_of::<SlotHeader>() as u64;
        // SAFETY: in bounds (validated geometry, length checked above); no
        // reader reads this slot (the caller's unpinned-slot invariant).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(off as usize), bytes.len())
        }
    }
}
