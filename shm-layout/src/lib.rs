//! The shared-memory contract of fastpmix.
//!
//! Every process that maps a fastpmix node segment (the server, its clients,
//! tools and any future C reader) agrees on the definitions in this crate and
//! nothing else: `#[repr(C)]` layouts with plain integer fields (a C reader
//! sees `uint64_t`/`uint32_t`; fastpmix accesses them atomically through its
//! `sync` module) and the rkyv schema of an event record.

pub mod barrier;
pub mod layout;
pub mod record;
pub mod store;

pub use layout::*;

/// Version of the shared-memory layout. Bumped on any change to a `#[repr(C)]`
/// definition in this crate or to the protocol over it; an opener refuses a
/// segment with another version. v2: readers sleep on their own client-table
/// wake word as well as the ring's doorbell (the writer wakes only the
/// readers a record is for) and the ring's `sleepy` flag became the
/// `sleepers` mask. v3: a client entry's `own_relayed`, and a relayed
/// record's `source_seq` counts its source's records in the source's own
/// ring (readers subtract their own records from what they report lost).
/// v4: one sleeper bit per entry in as many words as needed (bit 63 no
/// longer stands for every entry from 63 on), so a record for a few readers
/// visits only theirs. v5: a client entry's `interest`, the event codes its
/// reader has handlers for; a sleeper is woken only for those (or once half
/// the ring is unread). v6: the ring header's `interest_gen`, which the
/// writer watches instead of loading every sleeper's interest per publish.
/// v7: lanes — a client's records for its own namespace are read by its
/// peers straight from its submission queue (each queue slot's `seq` is a
/// commit word, the ring header's `lane_epoch` tells readers to look, a
/// client entry's `rank` authenticates them, a record's `LANED` flag and
/// `lane_entry`/`lane_pos` tell its ring copy from others; `source_seq`
/// shrank to 32 bits so that the record did not grow). v8: the
/// submission queues' headers side by side, their slots after them
/// (`SegmentHeader::submit_slots_offset`): whoever reads every queue's
/// counters — a client attaching (its lanes), a registration, the server's
/// round — touches a few pages instead of one per queue. v9: marks — the
/// last two records published for every reader (`RingHeader::mark`) and
/// for each client entry alone (`ClientEntry::mark`): a reader the ring
/// lapped with nothing for it among the records it missed passes over
/// them without a loss, so the writer need not wake an idle reader to skip
/// records for others.
pub const LAYOUT_VERSION: u32 = 9;

/// FNV-1a of a byte string, at compile time.
pub const fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

/// Hash of [`record::SCHEMA`] and [`store::STORE_SCHEMA`] together: a
/// store chunk's records embed the event schema's `InfoRecord`.
pub const STORE_SCHEMA_HASH: u64 = fnv1a64(store::STORE_SCHEMA.as_bytes()) ^ SCHEMA_HASH;

/// Hash of [`record::SCHEMA`]: openers refuse a segment written with another.
pub const SCHEMA_HASH: u64 = fnv1a64(record::SCHEMA.as_bytes());

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::size_of;

    /// Prints the layout, so a change shows up in review (`cargo test -p
    /// shm-layout -- --nocapture print_layout`).
    #[test]
    fn print_layout() {
        let g = Geometry::default();
        let o = g.validate().unwrap();
        println!("layout v{LAYOUT_VERSION}, schema hash {SCHEMA_HASH:#018x}");
        println!(
            "SegmentHeader {} B, RingHeader {} B, ClientEntry {} B, SlotHeader {} B",
            size_of::<SegmentHeader>(),
            size_of::<RingHeader>(),
            size_of::<ClientEntry>(),
            size_of::<SlotHeader>()
        );
        println!("default geometry {g:?}: {o:?}");
        assert_eq!(o.ring, 256);
        assert_eq!(o.clients, 256 + 640);
        assert_eq!(o.index, 896 + 64 * 128);
        assert_eq!(o.slots % LINE as u64, 0);
        assert_eq!(o.data_slots, 512 + 64 + 1);
        assert_eq!(o.submit, o.slots + 577 * 1024);
        assert_eq!(o.submit_slots, o.submit + 64 * 256);
        assert_eq!(o.submit_queue_size, 4 * 1024);
        assert_eq!(o.sleepers, o.submit_slots + 64 * 4 * 1024);
        assert_eq!(
            o.total, o.sleepers,
            "64 sleeper bits: the ring header's word"
        );
    }

    #[test]
    fn default_segment_footprint_is_at_most_one_mebibyte() {
        let o = Geometry::default().validate().unwrap();
        assert!(o.total <= 1 << 20, "default footprint {} B", o.total);
    }

    #[test]
    fn segment_footprint_per_client_table_size() {
        // What a namespace's ring costs as the server sizes it from the
        // job's PMIX_LOCAL_SIZE: 5 504 B per client (entry, a data slot
        // it may pin, its submission queue) over the 64-client default,
        // and a line of sleeper words per 1 024 clients (the first sleeper
        // word is in the ring header).
        let total = |c: u32| {
            Geometry {
                client_capacity: c,
                ..Geometry::default()
            }
            .validate()
            .unwrap()
            .total
        };
        let per_client = (128 + 1024 + 256 + 4 * 1024) as u64;
        // The 65th entry opens the second sleeper word.
        assert_eq!(total(65) - total(64), per_client + LINE as u64);
        assert_eq!(total(66) - total(65), per_client);
        assert_eq!(total(1024), 6_166_528);
        assert!(total(1024) <= 6 << 20);
        // The most clients a ring can address: slot_count + clients + 1
        // data slots, named in 16 bits.
        let most = MAX_DATA_SLOTS - DEFAULT_SLOT_COUNT - 1;
        let g = Geometry {
            client_capacity: most,
            ..Geometry::default()
        };
        assert!(g.validate().is_ok());
        let over = Geometry {
            client_capacity: most + 1,
            ..Geometry::default()
        };
        assert!(over.validate().is_err());
        println!(
            "footprint: 64 clients {} B, 1024 {} B, {most} {} B",
            total(64),
            total(1024),
            total(most)
        );
    }

    #[test]
    fn index_entries_round_trip_and_empty_names_nothing() {
        for (seq, slot) in [(0u64, 0u32), (1, 7), ((1 << 48) - 1, MAX_DATA_SLOTS - 1)] {
            assert_eq!(index_parts(index_entry(seq, slot)), (seq, slot));
        }
        assert_eq!(index_parts(INDEX_EMPTY).1, MAX_DATA_SLOTS);
    }

    #[test]
    fn invalid_geometry_is_refused() {
        let bad = [
            Geometry {
                slot_count: 1,
                ..Geometry::default()
            },
            Geometry {
                slot_size: 200,
                ..Geometry::default()
            },
            Geometry {
                slot_size: 128,
                ..Geometry::default()
            },
            Geometry {
                client_capacity: 0,
                ..Geometry::default()
            },
            Geometry {
                slot_count: 65_000,
                client_capacity: 1000,
                ..Geometry::default()
            },
        ];
        for g in bad {
            assert!(g.validate().is_err(), "{g:?}");
        }
    }

    #[test]
    fn schema_hash_follows_the_schema_text() {
        assert_eq!(SCHEMA_HASH, fnv1a64(record::SCHEMA.as_bytes()));
        assert_ne!(fnv1a64(b"a"), fnv1a64(b"b"));
    }
}
