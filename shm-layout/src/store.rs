//! The data store of a namespace: what its processes committed
//! (`PMIx_Put` + `PMIx_Commit`) and what other nodes' processes sent
//! (fence collection, direct modex), as a chain of append-only
//! shared-memory chunks the server writes and the namespace's clients map
//! read-only.
//!
//! ```text
//! chunk k (shm object "<ring segment name>-kv<k>", mode 0600, the namespace owner's)
//! offset 0     ChunkHeader                          (64 B)
//! 64           entry: EntryHeader (16 B) + KvRecord bytes (rkyv), padded to 16
//! ...          entry ...
//! used         (published end; bytes below it never change again)
//! capacity     (end of the file)
//! ```
//!
//! One writer (the server). It writes an entry's bytes above `used`, then
//! stores the new `used` with Release; a reader loads `used` with Acquire
//! and reads only below it. When an entry does not fit, the writer creates
//! and initialises chunk k+1 (at least twice as large, and large enough),
//! then stores `sealed = 1` in chunk k with Release: a reader that sees
//! `sealed` (Acquire) knows `used` of chunk k is final and chunk k+1
//! exists. Memory grows with the data; nothing is reserved for a worst case.
//!
//! A later entry for the same rank and key replaces an earlier one.

use crate::record::InfoRecord;
use core::mem::{offset_of, size_of};
use rkyv::{Archive, Deserialize, Serialize};

/// `ChunkHeader::magic`: "FPMIXKVS" little-endian.
pub const STORE_MAGIC: u64 = u64::from_le_bytes(*b"FPMIXKVS");

/// Version of the store's layout and protocol. Bumped on any change to
/// this file; an opener refuses a chunk with another version.
pub const STORE_VERSION: u32 = 1;

/// The first chunk's size; each later chunk is at least twice its
/// predecessor (and large enough for the entry that did not fit).
pub const FIRST_CHUNK: u64 = 16 * 1024;

/// Chunks stop doubling here (later ones are this large, or as large as
/// one entry needs).
pub const MAX_CHUNK_STEP: u64 = 64 * 1024 * 1024;

/// Entries start at multiples of this (rkyv's aligned format needs 16).
pub const ENTRY_ALIGN: u64 = 16;

/// The first bytes of a chunk.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct ChunkHeader {
    /// [`STORE_MAGIC`].
    pub magic: u64,
    /// [`STORE_VERSION`].
    pub version: u32,
    /// This chunk's position in the chain (0 first).
    pub index: u32,
    /// [`crate::STORE_SCHEMA_HASH`].
    pub schema_hash: u64,
    /// Bytes of the chunk, header included.
    pub capacity: u64,
    /// Published end (atomic; written by the server with Release).
    pub used: u64,
    /// 1 once chunk `index + 1` exists and this chunk takes no more
    /// entries (atomic; Release after that chunk was initialised).
    pub sealed: u32,
    /// The server's process id (stale chunks of a dead server are removed).
    pub server_pid: u32,
}

/// Before each entry's record bytes.
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy)]
pub struct EntryHeader {
    /// Bytes of the record that follows (not counting padding).
    pub len: u32,
    /// Reserved (0).
    pub kind: u32,
    /// Reserved (0).
    pub _reserved: u64,
}

/// Offset of the first entry.
pub const FIRST_ENTRY: u64 = size_of::<ChunkHeader>() as u64;

/// Byte offset of `used` (for atomic access).
pub const USED_OFFSET: usize = offset_of!(ChunkHeader, used);

/// Byte offset of `sealed` (for atomic access).
pub const SEALED_OFFSET: usize = offset_of!(ChunkHeader, sealed);

/// Where the entry after one of `len` record bytes at `at` starts.
pub const fn next_entry(at: u64, len: u64) -> u64 {
    let end = at + size_of::<EntryHeader>() as u64 + len;
    end.div_ceil(ENTRY_ALIGN) * ENTRY_ALIGN
}

/// `pmix_scope_t` of a stored item.
pub mod scope {
    /// `PMIX_SCOPE_UNDEF`.
    pub const UNDEF: u8 = 0;
    /// `PMIX_LOCAL`: processes on the same node.
    pub const LOCAL: u8 = 1;
    /// `PMIX_REMOTE`: processes on other nodes.
    pub const REMOTE: u8 = 2;
    /// `PMIX_GLOBAL`: everyone.
    pub const GLOBAL: u8 = 3;
    /// `PMIX_INTERNAL`: the putting process only (never stored here).
    pub const INTERNAL: u8 = 4;
}

/// One `PMIx_Put` item.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[rkyv(derive(Debug))]
pub struct KvItem {
    /// [`scope`].
    pub scope: u8,
    /// Key and value (`flags` unused, 0).
    pub info: InfoRecord,
}

/// What one process committed (or what another node sent for it).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[rkyv(derive(Debug))]
pub struct KvRecord {
    /// The process's rank in the chunk's namespace.
    pub rank: u32,
    /// Its items, in `PMIx_Put` order.
    pub items: Vec<KvItem>,
}

/// A node's contribution to a fence, or a direct-modex answer: the
/// processes of one namespace and their items, as the host carries it
/// between servers (see [`BLOB_MAGIC`]).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[rkyv(derive(Debug))]
pub struct BlobRecord {
    /// The namespace.
    pub nspace: String,
    /// Its processes' items.
    pub procs: Vec<KvRecord>,
}

/// A blob frame starts with this ("FPMXBLB1" little-endian), then the
/// body's length (u64 LE), then the body (a [`BlobRecord`]), padded to 8.
/// A host concatenates the frames of every node; a server reads them one
/// after another.
pub const BLOB_MAGIC: u64 = u64::from_le_bytes(*b"FPMXBLB1");

/// The schema of the store's records (hashed into every chunk header).
pub const STORE_SCHEMA: &str = "store1;\
KvItem{scope:u8,info:InfoRecord};\
KvRecord{rank:u32,items:Vec<KvItem>};\
BlobRecord{nspace:String,procs:Vec<KvRecord>}";

const _: () = {
    assert!(size_of::<ChunkHeader>() == 64);
    assert!(size_of::<EntryHeader>() == 16);
    assert!(USED_OFFSET % 8 == 0);
    assert!(SEALED_OFFSET % 4 == 0);
    assert!(FIRST_ENTRY % ENTRY_ALIGN == 0);
    assert!(FIRST_CHUNK.is_power_of_two());
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_stay_aligned() {
        assert_eq!(next_entry(64, 0), 80);
        assert_eq!(next_entry(64, 1), 96);
        assert_eq!(next_entry(64, 16), 96);
        assert_eq!(next_entry(64, 17), 112);
    }
}
