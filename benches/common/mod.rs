//! What the bench programs share, included by each with `mod common;` (a
//! directory under `benches/` is not a bench target of its own).
//!
//! - [`machine`]: the machine line the table programs print first;
//!   [`table`]: percentile rows and the sample loop.
//! - [`engine_fixtures`]: handler mixes and waits of the event-engine benches
//!   (`event_chain`, `latency_table`).
//! - The process harness of the ring, server and job benches, re-exported
//!   here: event records and their encoding (`records.rs`), the shared
//!   control block (`block.rs`), clocks and waits on its words (`wait.rs`),
//!   the re-executed child processes (`children.rs`), the futex floor
//!   (`floor.rs`) and the ring rigs (`rigs.rs`).
//!
//! Children are the bench binary re-executed with [`CHILD_ENV`] naming their
//! role: every bench main that spawns any calls
//! [`run_child_if_requested`] first.
#![allow(dead_code)] // each bench uses a subset

pub mod engine_fixtures;
pub mod machine;
pub mod table;

mod block;
mod children;
mod floor;
mod records;
mod rigs;
mod wait;

#[allow(unused_imports)] // each bench uses a subset
pub use {block::*, children::*, floor::*, records::*, rigs::*, wait::*};

use std::time::Duration;

/// Selects the role of a re-executed child.
pub const CHILD_ENV: &str = "FASTPMIX_RING_BENCH_CHILD";
const SEGMENT_ENV: &str = "FASTPMIX_RING_BENCH_SEGMENT";
const CTL_ENV: &str = "FASTPMIX_RING_BENCH_CTL_FD";
const INDEX_ENV: &str = "FASTPMIX_RING_BENCH_INDEX";
const READERS_ENV: &str = "FASTPMIX_RING_BENCH_READERS";
const COUNT_ENV: &str = "FASTPMIX_RING_BENCH_COUNT";

/// Most reader processes a rig runs.
pub const MAX_READERS: usize = 32;
/// Event code of the record that tells reader children to exit.
const STOP_CODE: i32 = i32::MIN + 7;
/// Record flag (outside the PMIx flag bits): the reader reports this one.
pub const ACK: u32 = 0x4000_0000;
/// Floor ping value that tells the floor child to exit.
const PING_STOP: u32 = u32::MAX;
/// Placeholder timestamp, found in the encoded bytes and patched per send.
const TS_SENTINEL: u64 = 0x5EED_F00D_CAFE_BEEF;
/// How long the bench side of a spinning exchange spins before yielding.
const SPIN_BUDGET: Duration = Duration::from_micros(50);
/// Pause after a sleeper is known to be asleep (or, for the floor, after
/// the answer), so that it is inside `futex_wait` at the next send.
const GAP_ASLEEP: Duration = Duration::from_micros(20);
/// Pause between sends to a spinning reader (it goes back to polling).
const GAP_SPINNING: Duration = Duration::from_micros(2);
/// Any single wait longer than this means a child is gone or stuck.
const DEADLINE: Duration = Duration::from_secs(20);
/// Records the throughput writer publishes between looks at the cursor.
const FLOW_BATCH: u64 = 64;
