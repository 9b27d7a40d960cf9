//! A namespace's fence barrier: `PMIx_Fence` over every process of a
//! namespace that runs wholly on this node, carried out in shared memory
//! by the participants themselves. The last to enter completes the fence
//! and wakes the others with one `FUTEX_WAKE`; the server only keeps the
//! commits and departures the fence must account for.
//!
//! ```text
//! shm object "<ring segment name>-bar", mode 0600, the namespace owner's,
//! mapped read-write by the server and the namespace's clients
//! offset 0     BarrierHeader                       (64 B)
//! 64           outcomes: [u32; OUTCOMES]           (256 B)
//! 320          slots: [BarrierSlot; slot_count]    (32 B each, one per rank)
//! ```
//!
//! `state` packs the open instance: bit 63 `CLOSED`, bits 62..32 its
//! generation (31 bits, wrapping), bits 31..0 how many entered it. A
//! process enters by writing its slot's `sent` and then adding one to the
//! count with a compare-and-swap (AcqRel); the one that makes the count
//! `slot_count` moves `state` to the next generation with count 0 in the
//! same CAS, waits until the participants' commits are applied (below),
//! then stores the instance's outcome (Release, by a CAS that keeps an
//! outcome already there) in `outcomes[gen % OUTCOMES]`, adds one to
//! `done` (Release) and wakes `done`'s sleepers. A waiter loads `done` before it looks at its outcome
//! word and sleeps while `done` is unchanged, so no wake is lost. An
//! outcome word is `(gen << 8) | code`, `code` one of [`outcome`].
//!
//! A waiter whose `PMIX_TIMEOUT` passes ends the instance the same way
//! (if it is still open) with [`outcome::TIMEOUT`]; the server ends it
//! with [`outcome::LOST`] when a participant leaves without having
//! entered (it reads the slot's `entered`, written after the entering CAS,
//! so a process that died between the two counts as not entered: a
//! spurious failure, never a hang). `CLOSED` (set by the server when a
//! participant left, or the namespace gained a rank beyond its size) stops
//! new instances: a process that finds the count at 0 and `CLOSED` set
//! takes the server's fence instead, which fails as its rules say. An
//! instance already open is completed by its remaining participants.
//!
//! Commits: the server stores a rank's commit in the data store, then
//! its slot's `applied` (SeqCst), then reads `appliers` (SeqCst) and, when
//! a process waits, adds one to `applied_seq` and wakes it. A process
//! entering writes in `sent` how many commits it had sent; after the
//! instance succeeded it waits until every slot's `applied` reaches its
//! `sent` (adding itself to `appliers`, SeqCst, before its last check):
//! what a participant committed before it entered is in the store when the
//! fence returns, as the server's fence guarantees.

use core::mem::size_of;

/// `BarrierHeader::magic`: "FPMXBAR1" little-endian.
pub const BARRIER_MAGIC: u64 = u64::from_le_bytes(*b"FPMXBAR1");

/// Version of the barrier's layout and protocol; an opener refuses another.
pub const BARRIER_VERSION: u32 = 1;

/// Outcome words kept (a waiter reads its instance's within this many
/// later instances).
pub const OUTCOMES: usize = 64;

/// `state` bit: no new instance starts here.
pub const CLOSED: u64 = 1 << 63;

/// The generation field of `state` (31 bits).
pub const GEN_MASK: u64 = 0x7FFF_FFFF;

/// Codes of an outcome word.
pub mod outcome {
    /// Every participant entered.
    pub const SUCCESS: u32 = 1;
    /// A participant's `PMIX_TIMEOUT` passed.
    pub const TIMEOUT: u32 = 2;
    /// A participant left before entering (or the namespace went away).
    pub const LOST: u32 = 3;
}

/// `state` from its parts.
pub const fn pack(closed: bool, gen: u32, count: u32) -> u64 {
    (if closed { CLOSED } else { 0 }) | (((gen as u64) & GEN_MASK) << 32) | count as u64
}

/// `state`'s parts: (closed, generation, count).
pub const fn unpack(s: u64) -> (bool, u32, u32) {
    (
        s & CLOSED != 0,
        ((s >> 32) & GEN_MASK) as u32,
        (s & 0xFFFF_FFFF) as u32,
    )
}

/// An outcome word.
pub const fn outcome_word(gen: u32, code: u32) -> u32 {
    (gen << 8) | (code & 0xFF)
}

/// The first bytes of the object.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct BarrierHeader {
    /// [`BARRIER_MAGIC`].
    pub magic: u64,
    /// [`BARRIER_VERSION`].
    pub version: u32,
    /// Participants: the namespace's ranks 0..slot_count.
    pub slot_count: u32,
    /// The open instance (atomic; see the module notes).
    pub state: u64,
    /// Instances ended (atomic, wrapping; the waiters' futex word).
    pub done: u32,
    /// Bumped when a commit was applied and someone waits (futex word).
    pub applied_seq: u32,
    /// Processes waiting for commits to be applied (atomic).
    pub appliers: u32,
    /// The server's process id (stale objects of a dead server are removed).
    pub server_pid: u32,
    /// Reserved (0).
    pub _reserved: [u64; 3],
}

/// One participant's words.
#[repr(C, align(32))]
#[derive(Debug, Default, Clone, Copy)]
pub struct BarrierSlot {
    /// Commits the process had sent when it last entered (atomic; its own).
    pub sent: u64,
    /// Commits of the process the server applied (atomic; the server's).
    pub applied: u64,
    /// Generation + 1 of the instance it last entered (atomic; its own,
    /// written after the entering CAS).
    pub entered: u32,
    /// Reserved (0).
    pub _reserved: u32,
}

/// Offset of the outcome words.
pub const OUTCOMES_OFFSET: usize = size_of::<BarrierHeader>();

/// Offset of slot 0.
pub const SLOTS_OFFSET: usize = OUTCOMES_OFFSET + OUTCOMES * 4;

/// Bytes of an object with `slots` participants.
pub const fn barrier_size(slots: u32) -> usize {
    SLOTS_OFFSET + slots as usize * size_of::<BarrierSlot>()
}

/// Byte offsets of the header's atomic words.
pub const STATE_OFFSET: usize = core::mem::offset_of!(BarrierHeader, state);
/// See [`STATE_OFFSET`].
pub const DONE_OFFSET: usize = core::mem::offset_of!(BarrierHeader, done);
/// See [`STATE_OFFSET`].
pub const APPLIED_SEQ_OFFSET: usize = core::mem::offset_of!(BarrierHeader, applied_seq);
/// See [`STATE_OFFSET`].
pub const APPLIERS_OFFSET: usize = core::mem::offset_of!(BarrierHeader, appliers);

const _: () = {
    assert!(size_of::<BarrierHeader>() == 64);
    assert!(size_of::<BarrierSlot>() == 32);
    assert!(STATE_OFFSET % 8 == 0);
    assert!(DONE_OFFSET % 4 == 0 && APPLIED_SEQ_OFFSET % 4 == 0 && APPLIERS_OFFSET % 4 == 0);
    assert!(SLOTS_OFFSET % 32 == 0);
    assert!(core::mem::offset_of!(BarrierSlot, applied) == 8);
    assert!(core::mem::offset_of!(BarrierSlot, entered) == 16);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_packs_and_unpacks() {
        let s = pack(true, 0x7FFF_FFFF, 7);
        assert_eq!(unpack(s), (true, 0x7FFF_FFFF, 7));
        assert_eq!(unpack(pack(false, 0x8000_0001, 0)), (false, 1, 0));
        assert_eq!(outcome_word(3, outcome::LOST) & 0xFF, outcome::LOST);
    }
}
