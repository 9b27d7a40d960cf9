//! `fastpmix-shm-inspect`: prints what is inside fastpmix node segments,
//! read-only.
//!
//! ```text
//! fastpmix-shm-inspect [--records] [--timeout-ms N] NAME...
//! fastpmix-shm-inspect [--records] [--timeout-ms N] --all
//! tools/shm-inspect ...            (builds this binary, then runs it)
//! ```
//!
//! `NAME` is a segment name as `Segment::name` gives it (`/fastpmix-…`), with
//! or without the leading `/`, or its path under `/dev/shm`. `--all` inspects
//! every `/dev/shm/fastpmix-*` object owned by the calling user.
//!
//! The segment is opened with `Segment::open_read_only` (a read-only shared
//! mapping: the tool cannot disturb the ring) after waiting up to
//! `--timeout-ms` (default 200) for its creator's init-complete word. For each
//! segment it prints:
//! - the header: magic, layout version, record-schema hash and whether it is
//!   this build's, geometry, offsets, total size, server pid and whether that
//!   process is alive, server generation and heartbeat;
//! - the ring: head (records published), the sleeper words, futex wakes
//!   issued, publishes refused;
//! - every client-table entry that is not FREE: state, pid (alive?),
//!   generation, cursor, lag (head − cursor; more than `slot_count` means the
//!   reader will lose records), waiting flag, records lost, pinned slot,
//!   heartbeat;
//! - a validation pass over every record still in the ring (sequences
//!   `head − slot_count .. head`): each is copied out seqlock-style
//!   (`Region::copy_record`) and checked with `rkyv::access`; it prints how
//!   many are valid, invalid (fail validation) and unstable (overwritten or
//!   changing while copied: normal on a busy ring). With `--records`, one
//!   line per record: sequence, length, event code, source, range, flags,
//!   number of infos.
//!
//! Everything is read with single atomic loads while the server may be
//! writing: the picture is a snapshot, not a consistent cut.
//!
//! Exit status: 0 when every segment could be opened, 1 when one could not
//! (its typed error is printed; for a segment of another layout version or
//! record schema the raw header is printed as well), 2 for a usage error.

// Under `--cfg loom` the library has no shared-memory backend (its atomics are
// loom's), but `cargo test` still builds every binary: the tool is then empty.
#[cfg(not(loom))]
mod inspect;

fn main() {
    #[cfg(not(loom))]
    inspect::main();
}
