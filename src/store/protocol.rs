//! The store's publication protocol over one chunk, on a memory trait so
//! the loom model (`model.rs`) checks the code the mapped chunks run.
//!
//! One writer appends: it writes an entry above `used`, then publishes the
//! new end with Release. Readers load `used` with Acquire and read only
//! below it, where nothing changes again. A full chunk is sealed (Release)
//! after its successor was initialised; a reader that loads `sealed`
//! (Acquire) before `used` knows that `used` is final.

use crate::sync::{Cell32, Cell64};
use shm_layout::store::{next_entry, FIRST_ENTRY};

/// One chunk's memory.
pub(crate) trait ChunkMemory {
    /// The published end.
    fn used(&self) -> &Cell64;
    /// 1 once the next chunk exists and this one is final.
    fn sealed(&self) -> &Cell32;
    /// Bytes of the chunk, header included.
    fn capacity(&self) -> u64;
    /// Writes the entry (its header and `body`) at `at` (writer only, at
    /// or above the published end).
    fn write_entry(&self, at: u64, body: &[u8]);
    /// The record length in the entry header at `at` (below the published
    /// end).
    fn entry_len(&self, at: u64) -> u32;
}

/// The entry does not fit in this chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Full;

/// Appends `body` as one entry; returns where it starts.
pub(crate) fn append(m: &impl ChunkMemory, body: &[u8]) -> Result<u64, Full> {
    // The one writer is the only one that stores `used`.
    let at = m.used().load_relaxed().max(FIRST_ENTRY);
    let end = next_entry(at, body.len() as u64);
    if end > m.capacity() || u32::try_from(body.len()).is_err() {
        return Err(Full);
    }
    m.write_entry(at, body);
    m.used().store_release(end);
    Ok(at)
}

/// This chunk takes no more entries; its successor is ready.
pub(crate) fn seal(m: &impl ChunkMemory) {
    m.sealed().store_release(1);
}

/// Where a reader stands after a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// The next entry to read in this chunk.
    pub cursor: u64,
    /// Every entry of this chunk was read and it is sealed: go on with
    /// the next one.
    pub finished: bool,
}

/// An entry header names bytes beyond the published end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Corrupt {
    /// Where.
    pub at: u64,
}

/// Calls `f(at, len)` for every published entry from `from` on.
pub(crate) fn scan(
    m: &impl ChunkMemory,
    from: u64,
    mut f: impl FnMut(u64, u32),
) -> Result<Scanned, Corrupt> {
    // Sealed first: once it is seen, the `used` loaded after it is final.
    let sealed = m.sealed().load_acquire() == 1;
    let used = m.used().load_acquire().min(m.capacity());
    let mut at = from.max(FIRST_ENTRY);
    while at < used {
        let len = m.entry_len(at);
        let next = next_entry(at, u64::from(len));
        if next > used {
            return Err(Corrupt { at });
        }
        f(at, len);
        at = next;
    }
    Ok(Scanned {
        cursor: at,
        finished: sealed && at >= used,
    })
}
