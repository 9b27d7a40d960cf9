//! The server's end of a namespace's store: appends records, growing the
//! chain of chunks as the data grows.

use super::chunk::Chunk;
use super::protocol::{append, seal, ChunkMemory};
use crate::ring::SegmentError;
use shm_layout::store::{next_entry, KvRecord, FIRST_CHUNK, FIRST_ENTRY, MAX_CHUNK_STEP};

/// Why a record could not be stored.
#[derive(Debug)]
pub(crate) enum StoreError {
    /// A new chunk could not be made (`/dev/shm` full, a quota).
    Chunk(SegmentError),
    /// The record cannot be encoded.
    Encode(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Chunk(e) => write!(f, "cannot grow the data store: {e}"),
            StoreError::Encode(e) => write!(f, "cannot encode a data-store record: {e}"),
        }
    }
}

/// A namespace's store, as its one writer sees it. Dropping it unlinks
/// every chunk (clients keep what they mapped until they unmap it).
#[derive(Debug)]
pub(crate) struct StoreWriter {
    base: String,
    chunks: Vec<Chunk>,
    owner: Option<(u32, u32)>,
    /// Bytes of every chunk (the footprint).
    bytes: u64,
}

impl StoreWriter {
    /// Creates the first chunk of the store named after `base` (the
    /// namespace's ring segment).
    pub(crate) fn create(base: &str) -> Result<StoreWriter, SegmentError> {
        let first = Chunk::create(base, 0, FIRST_CHUNK)?;
        Ok(StoreWriter {
            base: base.to_owned(),
            chunks: vec![first],
            owner: None,
            bytes: FIRST_CHUNK,
        })
    }

    /// Gives every chunk, and those to come, to `uid`/`gid`.
    pub(crate) fn set_owner(&mut self, uid: u32, gid: u32) -> std::io::Result<()> {
        self.owner = Some((uid, gid));
        self.chunks.iter().try_for_each(|c| c.set_owner(uid, gid))
    }

    /// Bytes of shared memory the store holds.
    pub(crate) fn footprint(&self) -> u64 {
        self.bytes
    }

    /// Appends one record.
    pub(crate) fn append(&mut self, rec: &KvRecord) -> Result<(), StoreError> {
        let body = rkyv::to_bytes::<rkyv::rancor::Error>(rec)
            .map_err(|e| StoreError::Encode(e.to_string()))?;
        let last = self.chunks.last().expect("a store has a first chunk");
        if append(last, &body).is_ok() {
            return Ok(());
        }
        let need = next_entry(FIRST_ENTRY, body.len() as u64);
        let step = (last.capacity() * 2).min(MAX_CHUNK_STEP);
        let capacity = step.max(need.next_power_of_two());
        let index = self.chunks.len() as u32;
        let next = Chunk::create(&self.base, index, capacity).map_err(StoreError::Chunk)?;
        if let Some((uid, gid)) = self.owner {
            // Its readers could not open it: say so now, not at their Get.
            next.set_owner(uid, gid)
                .map_err(|err| StoreError::Chunk(SegmentError::Sys { call: "chown", err }))?;
        }
        append(&next, &body).expect("a new chunk has room for the entry it was sized for");
        // Sealed only now: a reader that sees it finds the next chunk ready.
        seal(last);
        self.bytes += capacity;
        self.chunks.push(next);
        Ok(())
    }
}
