//! Loom model of the store's protocol: one writer appending into a chunk,
//! sealing it and going on in the next, one reader scanning both. Loom's
//! cells report a read of an entry (or of the next chunk's header) that
//! the protocol did not order after its write. Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib store::model`.

use super::protocol::{append, scan, seal, ChunkMemory};
use crate::sync::{Cell32, Cell64, ModelBytes};
use shm_layout::store::{next_entry, FIRST_ENTRY};

/// A chunk in loom memory: one cell per possible entry position.
struct ModelChunk {
    used: Cell64,
    sealed: Cell32,
    capacity: u64,
    /// Entry bytes by position ((at - FIRST_ENTRY) / 16).
    entries: Vec<ModelBytes>,
    /// The chunk's "header written" mark (initialisation of a successor).
    init: ModelBytes,
}

impl ModelChunk {
    fn new(capacity: u64) -> ModelChunk {
        let n = ((capacity - FIRST_ENTRY) / 16) as usize;
        ModelChunk {
            used: Cell64::new(FIRST_ENTRY),
            sealed: Cell32::new(0),
            capacity,
            entries: (0..n).map(|_| ModelBytes::new()).collect(),
            init: ModelBytes::new(),
        }
    }

    fn slot(&self, at: u64) -> &ModelBytes {
        &self.entries[((at - FIRST_ENTRY) / 16) as usize]
    }

    fn body(&self, at: u64) -> Vec<u8> {
        self.slot(at).read()
    }
}

impl ChunkMemory for ModelChunk {
    fn used(&self) -> &Cell64 {
        &self.used
    }
    fn sealed(&self) -> &Cell32 {
        &self.sealed
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn write_entry(&self, at: u64, body: &[u8]) {
        self.slot(at).write(body);
    }
    fn entry_len(&self, at: u64) -> u32 {
        self.slot(at).read().len() as u32
    }
}

/// A reader sees only whole entries, in order, and goes on to the next
/// chunk only after it was initialised and the first chunk was final.
#[test]
fn a_reader_sees_whole_entries_and_a_sealed_chunk_is_final() {
    loom::model(|| {
        use loom::sync::Arc;
        // Room for two 8-byte entries (32 B each) in the first chunk.
        let cap = next_entry(next_entry(FIRST_ENTRY, 8), 8);
        let c0 = Arc::new(ModelChunk::new(cap));
        let c1 = Arc::new(ModelChunk::new(cap));
        let (w0, w1) = (c0.clone(), c1.clone());
        let writer = loom::thread::spawn(move || {
            append(&*w0, &[1; 8]).unwrap();
            append(&*w0, &[2; 8]).unwrap();
            assert!(append(&*w0, &[3; 8]).is_err(), "the chunk is full");
            w1.init.write(b"ready");
            seal(&*w0);
            append(&*w1, &[3; 8]).unwrap();
        });
        let mut seen = Vec::new();
        let mut cursor = 0;
        let mut in_next = false;
        for _ in 0..2 {
            let c = if in_next { &c1 } else { &c0 };
            let s = scan(&**c, cursor, |at, len| {
                let b = c.body(at);
                assert_eq!(b.len(), len as usize);
                assert!(b.iter().all(|x| *x == b[0]), "a torn entry: {b:?}");
                seen.push(b[0]);
            })
            .unwrap();
            cursor = s.cursor;
            if s.finished && !in_next {
                assert_eq!(c1.init.read(), b"ready");
                assert_eq!(seen, [1, 2], "sealed means final");
                in_next = true;
                cursor = 0;
            }
        }
        writer.join().unwrap();
        let expect: &[u8] = &[1, 2, 3];
        assert_eq!(seen, expect[..seen.len()], "in order, none twice");
    });
}
