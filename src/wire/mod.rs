//! Conversions between the in-process PMIx types ([`crate::types`]) and the
//! shared-memory record schema ([`shm_layout::record`]).
//!
//! Encoding (`*_to_record`) is infallible: every [`Value`](crate::Value) kind
//! has a record variant. Decoding (`*_from_archived`) reads records that
//! another process wrote, already validated by rkyv but otherwise
//! **untrusted**: every violation of a type invariant (namespace longer than
//! 255 bytes or containing NUL, key longer than 511 bytes or containing NUL,
//! a pointer that does not fit this process's `usize`, info arrays nested
//! deeper than [`MAX_INFO_NESTING`]) is `PMIX_ERR_BAD_PARAM`, and nothing
//! panics on any input.
//!
//! An [`EventRecord`](shm_layout::record::EventRecord) carries the
//! generator's infos verbatim, in order; `custom_range`, `affected` and the
//! `NON_DEFAULT` / `DO_NOT_CACHE` flag bits are a routing index derived from
//! those infos by [`event_to_record`]. [`event_from_archived`] rebuilds the
//! event from the infos alone and never trusts the derived fields;
//! [`derived_fields_consistent`] lets tools check them.

pub mod control;
mod record;

pub use record::{
    decode_record, derived_fields_consistent, event_from_archived, event_into_record,
    event_to_record, info_from_archived, info_to_record, now_realtime_ns, proc_from_archived,
    proc_to_record, relayable_as_is, value_from_archived, value_to_record, WireEvent,
    MAX_INFO_NESTING,
};
