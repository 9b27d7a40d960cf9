//! The barrier as a shared-memory object: created by the server (mode
//! 0600, pages reserved, then given to the namespace's owner), opened
//! read-write and validated by the namespace's clients.

use super::protocol::BarrierMemory;
use crate::ring::{create_object, map_shared, shm_open, shm_unlink, SegmentError};
use crate::sync::{Cell32, Cell64};
use shm_layout::barrier::{
    barrier_size, BarrierHeader, BarrierSlot, APPLIED_SEQ_OFFSET, APPLIERS_OFFSET, BARRIER_MAGIC,
    BARRIER_VERSION, DONE_OFFSET, OUTCOMES, OUTCOMES_OFFSET, SLOTS_OFFSET, STATE_OFFSET,
};
use std::mem::{offset_of, size_of};

/// The object's name: its namespace ring's segment name and `-bar`.
pub(crate) fn area_name(base: &str) -> String {
    format!("{base}-bar")
}

/// A mapped barrier.
pub(crate) struct Area {
    name: String,
    /// Keeps the mapping alive (dropping it unmaps); accessed through `base`.
    _map: memmap2::MmapMut,
    base: *mut u8,
    slots: u32,
    /// The creator unlinks the name when it drops the area.
    owner: bool,
    /// The creator's descriptor, holding the liveness lock.
    _alive: Option<std::fs::File>,
}

impl std::fmt::Debug for Area {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Area")
            .field("name", &self.name)
            .field("slots", &self.slots)
            .finish()
    }
}

// SAFETY: `base` points into the mapping `_map` owns, which lives as long
// as the area; every access to the mapped words goes through atomic cells.
unsafe impl Send for Area {}
// SAFETY: as for `Send`.
unsafe impl Sync for Area {}

impl Area {
    /// Creates the barrier of the namespace whose ring is `base`, for
    /// ranks `0..slots`.
    pub(crate) fn create(base: &str, slots: u32) -> Result<Area, SegmentError> {
        let name = area_name(base);
        let len = barrier_size(slots) as u64;
        let (file, mut mm) = create_object(&name, len)?;
        let h = BarrierHeader {
            magic: BARRIER_MAGIC,
            version: BARRIER_VERSION,
            slot_count: slots,
            state: 0,
            done: 0,
            applied_seq: 0,
            appliers: 0,
            server_pid: std::process::id(),
            _reserved: [0; 3],
        };
        // SAFETY: the mapping is `barrier_size(slots)` ≥ 64 bytes long and
        // page aligned, and nobody else can have opened the object yet
        // (created O_EXCL just now, mode 0600, its name given to no one);
        // the rest of it is zero (a fresh object), which is every slot's
        // and outcome word's initial value.
        unsafe { std::ptr::write(mm.as_mut_ptr() as *mut BarrierHeader, h) };
        Ok(Area {
            name,
            base: mm.as_mut_ptr(),
            _map: mm,
            slots,
            owner: true,
            _alive: Some(file),
        })
    }

    /// Opens the barrier of the namespace whose ring is `base`; `None`:
    /// the namespace has none (its fences go through the server).
    pub(crate) fn open(base: &str) -> Result<Option<Area>, String> {
        let name = area_name(base);
        let file = match shm_open(&name, libc::O_RDWR, 0) {
            Ok(f) => f,
            Err(SegmentError::Sys { err, .. }) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(format!("{name}: {e}")),
        };
        let mut mm = map_shared(&file).map_err(|e| format!("{name}: {e}"))?;
        if mm.len() < size_of::<BarrierHeader>() {
            return Err(format!("{name}: smaller than its header"));
        }
        // SAFETY: at least a header long (checked), page aligned; the
        // plain fields read here are written once, before the name is
        // known to anyone.
        let h = unsafe { &*(mm.as_ptr() as *const BarrierHeader) };
        let why = if h.magic != BARRIER_MAGIC {
            Some("bad magic")
        } else if h.version != BARRIER_VERSION {
            Some("another barrier version")
        } else if barrier_size(h.slot_count) != mm.len() {
            Some("its size is not its slot count's")
        } else {
            None
        };
        if let Some(w) = why {
            return Err(format!("{name}: not a readable fence barrier: {w}"));
        }
        let slots = h.slot_count;
        Ok(Some(Area {
            name,
            base: mm.as_mut_ptr(),
            _map: mm,
            slots,
            owner: false,
            _alive: None,
        }))
    }

    /// Gives the object to `uid`/`gid` (mode stays 0600).
    pub(crate) fn set_owner(&self, uid: u32, gid: u32) -> std::io::Result<()> {
        std::os::unix::fs::chown(format!("/dev/shm/{}", self.name), Some(uid), Some(gid))
    }

    /// Shared-memory bytes.
    pub(crate) fn footprint(&self) -> u64 {
        barrier_size(self.slots) as u64
    }

    fn cell64(&self, off: usize) -> &Cell64 {
        assert!(off + 8 <= barrier_size(self.slots) && off % 8 == 0);
        // SAFETY: in bounds and 8-aligned (asserted; the mapping is page
        // aligned); every process accesses the barrier's words only
        // atomically, and the mapping lives as long as `self`.
        unsafe { Cell64::at(self.base.add(off) as *mut u64) }
    }

    fn cell32(&self, off: usize) -> &Cell32 {
        assert!(off + 4 <= barrier_size(self.slots) && off % 4 == 0);
        // SAFETY: as for `cell64`, 4-aligned.
        unsafe { Cell32::at(self.base.add(off) as *mut u32) }
    }

    fn slot(&self, rank: u32) -> usize {
        assert!(rank < self.slots, "a rank beyond the barrier");
        SLOTS_OFFSET + rank as usize * size_of::<BarrierSlot>()
    }
}

impl BarrierMemory for Area {
    fn slots(&self) -> u32 {
        self.slots
    }
    fn state(&self) -> &Cell64 {
        self.cell64(STATE_OFFSET)
    }
    fn done(&self) -> &Cell32 {
        self.cell32(DONE_OFFSET)
    }
    fn applied_seq(&self) -> &Cell32 {
        self.cell32(APPLIED_SEQ_OFFSET)
    }
    fn appliers(&self) -> &Cell32 {
        self.cell32(APPLIERS_OFFSET)
    }
    fn outcome(&self, i: usize) -> &Cell32 {
        assert!(i < OUTCOMES);
        self.cell32(OUTCOMES_OFFSET + i * 4)
    }
    fn sent(&self, rank: u32) -> &Cell64 {
        self.cell64(self.slot(rank) + offset_of!(BarrierSlot, sent))
    }
    fn applied(&self, rank: u32) -> &Cell64 {
        self.cell64(self.slot(rank) + offset_of!(BarrierSlot, applied))
    }
    fn entered(&self, rank: u32) -> &Cell32 {
        self.cell32(self.slot(rank) + offset_of!(BarrierSlot, entered))
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        if self.owner {
            // Waiters of an open instance hear of the namespace's end.
            super::protocol::close(self, None);
            let _ = shm_unlink(&self.name);
        }
    }
}
