//! The data store: what processes `PMIx_Put` and `PMIx_Commit`, and what
//! arrives from other nodes (fence collection, direct modex), kept per
//! namespace in shared memory so that a `PMIx_Get` of a local peer's key
//! is answered in the caller's thread, with no round trip.
//!
//! - `protocol.rs`: the append/seal/scan protocol over one chunk (loom
//!   model in `model.rs`);
//! - `chunk.rs`: a chunk as a shared-memory object;
//! - `writer.rs`: the server's end, growing the chain of chunks;
//! - `reader.rs`: a client's end and its index;
//! - `blob.rs`: the frames a server exchanges with other nodes through its
//!   host.
//!
//! The layout is `shm_layout::store`; the format and its orderings are in
//! docs/shm-format.md.

#[cfg(not(loom))]
pub(crate) mod blob;
#[cfg(not(loom))]
mod chunk;
#[cfg(all(loom, test))]
mod model;
#[cfg_attr(loom, allow(dead_code))]
mod protocol;
#[cfg(not(loom))]
mod reader;
#[cfg(not(loom))]
mod writer;

#[cfg(not(loom))]
pub(crate) use reader::{Found, StoreReader};
#[cfg(not(loom))]
pub(crate) use writer::{StoreError, StoreWriter};

pub use shm_layout::store::scope;

/// Whether an item put with `put` scope is visible to a reader: the
/// process itself sees all it put; a process on the same node sees
/// `PMIX_LOCAL` and `PMIX_GLOBAL` items, one on another node `PMIX_REMOTE`
/// and `PMIX_GLOBAL` ones (an undefined scope counts as global, as
/// OpenPMIx stores it). `wanted`: a `PMIX_DATA_SCOPE` the reader asked for
/// (only items of that scope, or of every scope for `PMIX_SCOPE_UNDEF`).
pub fn visible(put: u8, reader_is_putter: bool, same_node: bool, wanted: Option<u8>) -> bool {
    if let Some(w) = wanted.filter(|w| *w != scope::UNDEF) {
        if put != w && !(w == scope::GLOBAL && put == scope::UNDEF) {
            return false;
        }
    }
    if reader_is_putter {
        return true;
    }
    match put {
        scope::LOCAL => same_node,
        scope::REMOTE => !same_node,
        scope::INTERNAL => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DX-SCOPE: local items stay on the node, remote ones leave it,
    /// global ones go everywhere; the putter sees everything it put.
    #[test]
    fn scopes_decide_who_sees_an_item() {
        use scope::*;
        assert!(visible(LOCAL, false, true, None));
        assert!(!visible(LOCAL, false, false, None));
        assert!(!visible(REMOTE, false, true, None));
        assert!(visible(REMOTE, false, false, None));
        assert!(visible(GLOBAL, false, true, None) && visible(GLOBAL, false, false, None));
        assert!(visible(REMOTE, true, true, None));
        assert!(!visible(INTERNAL, false, true, None));
        assert!(!visible(GLOBAL, true, true, Some(LOCAL)));
        assert!(visible(LOCAL, true, true, Some(LOCAL)));
        assert!(visible(LOCAL, false, true, Some(UNDEF)));
    }
}
