//! A client's end of its namespace's store: maps the chunks read-only as
//! the server adds them, and keeps an index of what it has read (rank →
//! key → where the latest item of each scope is). A lookup catches up
//! with what was published since (one Acquire load when nothing was),
//! then reads the value from the mapped record: no copy before the one
//! into the caller's value.

use super::chunk::{Chunk, ChunkError};
use super::protocol::scan;
use super::visible;
use crate::types::fasthash::FastMap;
use crate::types::{Status, Value};
use crate::wire::value_from_archived;
use shm_layout::store::ArchivedKvRecord;

/// Where an item is.
#[derive(Debug, Clone, Copy)]
struct Loc {
    chunk: u32,
    at: u64,
    len: u32,
    item: u32,
}

/// The latest item of one key, per scope (`pmix_scope_t` 0..=4).
type Scopes = [Option<Loc>; 5];

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub(crate) enum Found {
    /// The value.
    Value(Value),
    /// The process has data here, but not this key.
    Absent,
    /// The key is here, put in a scope that does not include the reader
    /// (`PMIX_ERR_EXISTS_OUTSIDE_SCOPE`).
    OutsideScope,
    /// Nothing of this process is here yet.
    Unknown,
}

/// The client's view of a namespace's store.
#[derive(Debug)]
pub(crate) struct StoreReader {
    base: String,
    chunks: Vec<Chunk>,
    /// The next entry to read in the last chunk.
    cursor: u64,
    index: FastMap<u32, FastMap<Box<str>, Scopes>>,
    /// Set when the store could not be read on: the reason, said once.
    broken: Option<String>,
}

impl StoreReader {
    /// A reader of the store named after `base` (nothing is mapped until
    /// the first lookup).
    pub(crate) fn new(base: &str) -> StoreReader {
        StoreReader {
            base: base.to_owned(),
            chunks: Vec::new(),
            cursor: 0,
            index: FastMap::default(),
            broken: None,
        }
    }

    /// Maps the first chunk now if the server created it (it does when it
    /// registers the namespace), so that a job's first `PMIx_Get` of a
    /// peer, in its wire-up, does not pay the four system calls of the
    /// mapping. Any failure is left to the first lookup, which retries
    /// and reports it.
    pub(crate) fn open_first(&mut self) {
        if self.chunks.is_empty() && self.broken.is_none() {
            if let Ok(c) = Chunk::open(&self.base, 0) {
                self.chunks.push(c);
            }
        }
    }

    /// Why the store cannot be read, if it cannot.
    pub(crate) fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Reads what was published since the last call.
    pub(crate) fn catch_up(&mut self) {
        if self.broken.is_some() {
            return;
        }
        if self.chunks.is_empty() {
            match Chunk::open(&self.base, 0) {
                Ok(c) => self.chunks.push(c),
                Err(e) => return self.fail(e),
            }
        }
        loop {
            let n = (self.chunks.len() - 1) as u32;
            let c = &self.chunks[n as usize];
            let mut entries = Vec::new();
            let s = match scan(c, self.cursor, |at, len| entries.push((at, len))) {
                Ok(s) => s,
                Err(e) => {
                    self.broken = Some(format!("an entry at {} overruns the chunk", e.at));
                    return;
                }
            };
            for (at, len) in entries {
                self.index_entry(n, at, len);
            }
            self.cursor = s.cursor;
            if !s.finished {
                return;
            }
            match Chunk::open(&self.base, n + 1) {
                Ok(next) => {
                    self.chunks.push(next);
                    self.cursor = 0;
                }
                Err(e) => return self.fail(e),
            }
        }
    }

    fn fail(&mut self, e: ChunkError) {
        self.broken = Some(e.to_string());
    }

    fn index_entry(&mut self, chunk: u32, at: u64, len: u32) {
        let bytes = self.chunks[chunk as usize].record(at, len);
        let Ok(rec) = rkyv::access::<ArchivedKvRecord, rkyv::rancor::Error>(bytes) else {
            // The server wrote it: a record that does not validate is a
            // bug or another build; it is skipped, the rest stays usable.
            return;
        };
        let keys = self.index.entry(rec.rank.to_native()).or_default();
        for (i, item) in rec.items.iter().enumerate() {
            let scope = usize::from(item.scope.min(4));
            let loc = Loc {
                chunk,
                at,
                len,
                item: i as u32,
            };
            match keys.get_mut(item.info.key.as_str()) {
                Some(s) => s[scope] = Some(loc),
                None => {
                    let mut s: Scopes = [None; 5];
                    s[scope] = Some(loc);
                    keys.insert(item.info.key.as_str().into(), s);
                }
            }
        }
    }

    /// The ranks with data here.
    pub(crate) fn ranks(&self) -> Vec<u32> {
        let mut r: Vec<u32> = self.index.keys().copied().collect();
        r.sort_unstable();
        r
    }

    /// `key` of `rank` as another process sees it (`same_node`: whether
    /// it runs on `rank`'s node; `wanted`: a `PMIX_DATA_SCOPE`), from the
    /// latest item it may see (see [`visible`]).
    pub(crate) fn find(
        &mut self,
        rank: u32,
        key: &str,
        same_node: bool,
        wanted: Option<u8>,
    ) -> Result<Found, Status> {
        self.catch_up();
        let Some(keys) = self.index.get(&rank) else {
            return Ok(Found::Unknown);
        };
        let Some(scopes) = keys.get(key) else {
            return Ok(Found::Absent);
        };
        let latest = |seen: &dyn Fn(u8) -> bool| {
            (0u8..5)
                .filter(|sc| seen(*sc))
                .filter_map(|sc| scopes[usize::from(sc)])
                .max_by_key(|l| (l.chunk, l.at))
        };
        let Some(l) = latest(&|sc| visible(sc, false, same_node, wanted)) else {
            // Put, but for others (the putter sees every scope).
            let put = latest(&|sc| visible(sc, true, same_node, wanted)).is_some();
            return Ok(if put {
                Found::OutsideScope
            } else {
                Found::Absent
            });
        };
        let bytes = self.chunks[l.chunk as usize].record(l.at, l.len);
        // Validated again on every read, not only when indexed: a process
        // of the namespace's uid can open the chunk for writing and
        // scribble on it, and a reader must not crash on that. A record
        // that no longer validates sends the Get to the server, which
        // keeps its own copy.
        let Ok(rec) = rkyv::access::<ArchivedKvRecord, rkyv::rancor::Error>(bytes) else {
            return Ok(Found::Unknown);
        };
        let Some(item) = rec.items.get(l.item as usize) else {
            return Ok(Found::Unknown);
        };
        value_from_archived(&item.info.value).map(Found::Value)
    }
}
