//! One chunk of a namespace's store as a shared-memory object: created by
//! the server (mode 0600, pages reserved, then given to the namespace's
//! owner), opened read-only and validated by its clients.

use super::protocol::ChunkMemory;
use crate::ring::{create_object, shm_open, shm_unlink, SegmentError};
use crate::sync::{Cell32, Cell64};
use shm_layout::store::{
    ChunkHeader, EntryHeader, FIRST_ENTRY, SEALED_OFFSET, STORE_MAGIC, STORE_VERSION, USED_OFFSET,
};
use shm_layout::STORE_SCHEMA_HASH;
use std::mem::size_of;

/// The chunk's name: its namespace ring's segment name, `-kv`, its index.
pub(crate) fn chunk_name(base: &str, index: u32) -> String {
    format!("{base}-kv{index}")
}

/// The mapping, held for its lifetime (dropping it unmaps); accessed
/// through [`Chunk::base`].
#[allow(dead_code)]
enum Map {
    /// The server's writable mapping.
    Write(memmap2::MmapMut),
    /// A client's read-only mapping: only loads happen through it.
    Read(memmap2::Mmap),
}

/// A mapped chunk.
pub(crate) struct Chunk {
    name: String,
    /// Keeps the mapping alive.
    map: Map,
    /// The mapping's first byte (writable only for [`Map::Write`]).
    base: *mut u8,
    capacity: u64,
    /// The creator unlinks the name when it drops the chunk.
    owner: bool,
    /// The creator's descriptor, holding the liveness lock while the chunk
    /// lives (stale removal must not take a live server's chunk).
    _alive: Option<std::fs::File>,
}

impl std::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunk")
            .field("name", &self.name)
            .field("capacity", &self.capacity)
            .finish()
    }
}

/// Why a chunk cannot be read.
#[derive(Debug)]
pub(crate) enum ChunkError {
    /// It does not exist (yet), or a system call failed.
    Sys(SegmentError),
    /// Its header is not one this build reads.
    Invalid(&'static str),
}

impl std::fmt::Display for ChunkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkError::Sys(e) => write!(f, "{e}"),
            ChunkError::Invalid(w) => write!(f, "not a readable data-store chunk: {w}"),
        }
    }
}

impl Chunk {
    /// Creates chunk `index` of `base`, `capacity` bytes, pages reserved
    /// (a full `/dev/shm` is an error here, never a SIGBUS later).
    pub(crate) fn create(base: &str, index: u32, capacity: u64) -> Result<Chunk, SegmentError> {
        let name = chunk_name(base, index);
        let (file, mut mm) = create_object(&name, capacity)?;
        let h = ChunkHeader {
            magic: STORE_MAGIC,
            version: STORE_VERSION,
            index,
            schema_hash: STORE_SCHEMA_HASH,
            capacity,
            used: FIRST_ENTRY,
            sealed: 0,
            server_pid: std::process::id(),
        };
        // SAFETY: the mapping is `capacity` ≥ 64 bytes long and page
        // aligned, and nobody else can have opened the object yet (created
        // O_EXCL just now, mode 0600, its name not given to anyone).
        unsafe { std::ptr::write(mm.as_mut_ptr() as *mut ChunkHeader, h) };
        Ok(Chunk {
            name,
            base: mm.as_mut_ptr(),
            map: Map::Write(mm),
            capacity,
            owner: true,
            _alive: Some(file),
        })
    }

    /// Opens chunk `index` of `base` read-only and checks its header.
    pub(crate) fn open(base: &str, index: u32) -> Result<Chunk, ChunkError> {
        let name = chunk_name(base, index);
        let file = shm_open(&name, libc::O_RDONLY, 0).map_err(ChunkError::Sys)?;
        // SAFETY: a read-only MAP_SHARED mapping of a shm object: this
        // process only loads through it; the server changes only bytes at
        // or above the published end, and the header's atomic words, which
        // are read atomically (docs/shm-format.md).
        let mm = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|err| ChunkError::Sys(SegmentError::Sys { call: "mmap", err }))?;
        if mm.len() < size_of::<ChunkHeader>() {
            return Err(ChunkError::Invalid("smaller than its header"));
        }
        // SAFETY: at least a header long (checked), page aligned; the
        // fields read here are written once, before the name is known.
        let h = unsafe { &*(mm.as_ptr() as *const ChunkHeader) };
        let why = if h.magic != STORE_MAGIC {
            Some("bad magic")
        } else if h.version != STORE_VERSION {
            Some("another store version")
        } else if h.schema_hash != STORE_SCHEMA_HASH {
            Some("another record schema")
        } else if h.index != index {
            Some("another position in the chain")
        } else if h.capacity != mm.len() as u64 {
            Some("its capacity is not its size")
        } else {
            None
        };
        if let Some(w) = why {
            return Err(ChunkError::Invalid(w));
        }
        let capacity = h.capacity;
        Ok(Chunk {
            name,
            base: mm.as_ptr() as *mut u8,
            map: Map::Read(mm),
            capacity,
            owner: false,
            _alive: None,
        })
    }

    fn base(&self) -> *mut u8 {
        self.base
    }

    /// Gives the chunk to `uid`/`gid` (mode stays 0600).
    pub(crate) fn set_owner(&self, uid: u32, gid: u32) -> std::io::Result<()> {
        std::os::unix::fs::chown(format!("/dev/shm/{}", self.name), Some(uid), Some(gid))
    }

    /// The record bytes of the entry at `at` of `len` bytes, which the
    /// caller read from a scan (below the published end).
    pub(crate) fn record(&self, at: u64, len: u32) -> &[u8] {
        let start = at as usize + size_of::<EntryHeader>();
        let end = start + len as usize;
        assert!(end as u64 <= self.capacity, "an entry past the chunk");
        // SAFETY: in bounds (asserted); below the published end, where
        // the one writer never writes again, so no store races this shared
        // borrow for as long as the chunk is mapped.
        unsafe { std::slice::from_raw_parts(self.base().add(start), len as usize) }
    }
}

// SAFETY: `base` points into the mapping `map` owns, which lives as long
// as the chunk; the shared words are atomics, the entries below the
// published end never change, and writes happen only through `&self` of
// the one writer (the server holds its chunks under one lock).
unsafe impl Send for Chunk {}
// SAFETY: as for `Send`.
unsafe impl Sync for Chunk {}

impl ChunkMemory for Chunk {
    fn used(&self) -> &Cell64 {
        // SAFETY: an 8-aligned word of the mapped header, accessed only
        // atomically by every process; a read-only mapping only loads it.
        unsafe { Cell64::at(self.base().add(USED_OFFSET) as *mut u64) }
    }

    fn sealed(&self) -> &Cell32 {
        // SAFETY: as for `used`.
        unsafe { Cell32::at(self.base().add(SEALED_OFFSET) as *mut u32) }
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn write_entry(&self, at: u64, body: &[u8]) {
        assert!(
            matches!(self.map, Map::Write(_)),
            "a read-only chunk is never written"
        );
        let h = EntryHeader {
            len: body.len() as u32,
            kind: 0,
            _reserved: 0,
        };
        let start = at as usize;
        let end = start + size_of::<EntryHeader>() + body.len();
        assert!(end as u64 <= self.capacity, "the protocol checked the room");
        // SAFETY: in bounds (asserted), 16-aligned (`at` is an entry
        // offset); at or above the published end, which no reader reads,
        // and this is the one writer.
        unsafe {
            let p = self.base.add(start);
            std::ptr::write(p as *mut EntryHeader, h);
            std::ptr::copy_nonoverlapping(
                body.as_ptr(),
                p.add(size_of::<EntryHeader>()),
                body.len(),
            );
        }
    }

    fn entry_len(&self, at: u64) -> u32 {
        let p = at as usize;
        assert!(p + size_of::<EntryHeader>() <= self.capacity as usize);
        // SAFETY: in bounds (asserted), below the published end (the
        // protocol's caller), so never written again.
        unsafe { (*(self.base().add(p) as *const EntryHeader)).len }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if self.owner {
            let _ = shm_unlink(&self.name);
        }
    }
}
