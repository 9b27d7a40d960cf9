//! A namespace's data on the server: what each process committed or
//! another node sent, kept twice — in the shared-memory store its
//! clients read ([`StoreWriter`]), and as owned items the progress thread
//! answers from (a `PMIx_Get` that came as a request, a fence's
//! contribution for other nodes, a direct-modex answer).

use crate::store::{visible, StoreError, StoreWriter};
use crate::types::fasthash::FastMap;
use crate::types::{Info, Value};
use crate::wire::info_to_record;
use shm_layout::store::{scope, KvItem, KvRecord};

/// What one process has here.
#[derive(Debug, Default)]
struct ProcData {
    /// (scope, item), oldest first; a later item of a key wins.
    items: Vec<(u8, Info)>,
    /// It committed on this node at least once.
    committed: bool,
    /// Some of it came from another node.
    remote: bool,
}

/// A namespace's data.
#[derive(Debug)]
pub(crate) struct NsData {
    store: StoreWriter,
    procs: FastMap<u32, ProcData>,
    /// Items held, for `inspect` and the footprint.
    items: usize,
}

impl NsData {
    /// The data of a namespace whose ring segment is named `base`.
    pub(crate) fn create(base: &str) -> Result<NsData, crate::ring::SegmentError> {
        Ok(NsData {
            store: StoreWriter::create(base)?,
            procs: FastMap::default(),
            items: 0,
        })
    }

    /// Gives the store to the namespace's owner.
    pub(crate) fn set_owner(&mut self, uid: u32, gid: u32) -> std::io::Result<()> {
        self.store.set_owner(uid, gid)
    }

    /// Shared-memory bytes and items held.
    pub(crate) fn footprint(&self) -> (u64, usize) {
        (self.store.footprint(), self.items)
    }

    /// Stores what `rank` committed (`remote`: what another node sent for
    /// it). The store gets one record; readers see it at once.
    pub(crate) fn add(
        &mut self,
        rank: u32,
        items: Vec<(u8, Info)>,
        remote: bool,
    ) -> Result<(), StoreError> {
        let rec = KvRecord {
            rank,
            items: items
                .iter()
                .map(|(s, i)| KvItem {
                    scope: *s,
                    info: info_to_record(i),
                })
                .collect(),
        };
        self.store.append(&rec)?;
        let p = self.procs.entry(rank).or_default();
        self.items += items.len();
        p.items.extend(items);
        p.committed |= !remote;
        p.remote |= remote;
        Ok(())
    }

    /// Whether `rank` committed here, or another node's data for it came.
    pub(crate) fn has(&self, rank: u32) -> bool {
        self.procs.contains_key(&rank)
    }

    /// Whether `rank` committed on this node.
    pub(crate) fn committed(&self, rank: u32) -> bool {
        self.procs.get(&rank).is_some_and(|p| p.committed)
    }

    /// The latest item `key` of `rank` a reader may see (see [`visible`]).
    pub(crate) fn find(
        &self,
        rank: u32,
        key: &str,
        reader_is_putter: bool,
        same_node: bool,
        wanted: Option<u8>,
    ) -> Option<&Value> {
        let p = self.procs.get(&rank)?;
        p.items
            .iter()
            .rev()
            .find(|(s, i)| {
                i.key.as_str() == key && visible(*s, reader_is_putter, same_node, wanted)
            })
            .map(|(_, i)| &i.value)
    }

    /// `key` of any rank (`PMIX_RANK_UNDEF`), lowest rank first.
    /// `same_node(rank)`: whether that rank is on this node.
    pub(crate) fn find_any(
        &self,
        key: &str,
        same_node: impl Fn(u32) -> bool,
        wanted: Option<u8>,
    ) -> Option<&Value> {
        let mut ranks: Vec<u32> = self.procs.keys().copied().collect();
        ranks.sort_unstable();
        ranks
            .into_iter()
            .find_map(|r| self.find(r, key, false, same_node(r), wanted))
    }

    /// What `ranks` (local processes) give other nodes: their
    /// `PMIX_REMOTE` and `PMIX_GLOBAL` items, one record per rank that
    /// has any.
    pub(crate) fn export(&self, ranks: impl Iterator<Item = u32>) -> Vec<KvRecord> {
        ranks
            .filter_map(|r| {
                let p = self.procs.get(&r).filter(|p| p.committed)?;
                let items: Vec<KvItem> = p
                    .items
                    .iter()
                    .filter(|(s, _)| *s != scope::LOCAL && *s != scope::INTERNAL)
                    .map(|(s, i)| KvItem {
                        scope: *s,
                        info: info_to_record(i),
                    })
                    .collect();
                Some(KvRecord { rank: r, items })
            })
            .collect()
    }
}
