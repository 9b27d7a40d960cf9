//! The rkyv schema of an event record, as it sits in a ring slot.
//!
//! Readers in other processes validate these bytes (`rkyv::access`) before
//! use; see docs/shm-format.md for the compatibility policy. Any change here
//! changes [`SCHEMA`], hence [`crate::SCHEMA_HASH`], and openers refuse a
//! segment with another hash.

use rkyv::{Archive, Deserialize, Serialize};

/// A process identifier.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
#[rkyv(derive(Debug))]
pub struct ProcRecord {
    /// Namespace (≤ 255 bytes, no NUL; checked by the reader's conversion).
    pub nspace: String,
    /// Rank.
    pub rank: u32,
}

/// A `pmix_info_t`.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[rkyv(derive(Debug))]
#[rkyv(serialize_bounds(__S: rkyv::ser::Writer + rkyv::ser::Allocator, __S::Error: rkyv::rancor::Source))]
#[rkyv(deserialize_bounds(__D::Error: rkyv::rancor::Source))]
#[rkyv(bytecheck(bounds(__C: rkyv::validation::ArchiveContext, __C::Error: rkyv::rancor::Source)))]
pub struct InfoRecord {
    /// Key (≤ 511 bytes, no NUL).
    pub key: String,
    /// `pmix_info_directives_t`.
    pub flags: u32,
    /// The value.
    #[rkyv(omit_bounds)]
    pub value: ValueRecord,
}

/// A `pmix_value_t`, one variant per `Value` kind of the foundation issue.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[rkyv(derive(Debug))]
#[rkyv(serialize_bounds(__S: rkyv::ser::Writer + rkyv::ser::Allocator, __S::Error: rkyv::rancor::Source))]
#[rkyv(deserialize_bounds(__D::Error: rkyv::rancor::Source))]
#[rkyv(bytecheck(bounds(__C: rkyv::validation::ArchiveContext, __C::Error: rkyv::rancor::Source)))]
#[rkyv(attr(allow(missing_docs)))]
#[allow(missing_docs)]
pub enum ValueRecord {
    Undef,
    Bool(bool),
    Byte(u8),
    String(String),
    Size(u64),
    Pid(i32),
    Int(i32),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Uint(u32),
    Uint8(u8),
    Uint16(u16),
    Uint32(u32),
    Uint64(u64),
    Float(f32),
    Double(f64),
    /// (seconds, microseconds).
    Timeval(i64, i64),
    Time(i64),
    Status(i32),
    Proc(ProcRecord),
    Rank(u32),
    DataRange(u8),
    AllocDirective(u8),
    ByteObject(Vec<u8>),
    InfoArray(#[rkyv(omit_bounds)] Vec<InfoRecord>),
    ProcArray(Vec<ProcRecord>),
    StringArray(Vec<String>),
    Uint32Array(Vec<u32>),
    /// An address in the generating process: opaque elsewhere.
    Pointer(u64),
}

/// `EventRecord::flags` bits.
pub mod flags {
    /// `PMIX_EVENT_NON_DEFAULT` was given.
    pub const NON_DEFAULT: u32 = 0x1;
    /// `PMIX_EVENT_DO_NOT_CACHE` was given.
    pub const DO_NOT_CACHE: u32 = 0x2;
    /// An environment (SMS) event rather than a job event.
    pub const ENVIRONMENT: u32 = 0x4;
    /// The server relayed this event from a client's submission queue (its
    /// source is that client, authenticated): the source's own reader
    /// skips it, so an event is never echoed to its generator.
    pub const RELAYED: u32 = 0x8;
    /// A lane record: its source's namespace peers read it from the
    /// source's submission queue, entry `lane_entry`, at the position whose
    /// low 32 bits are `lane_pos`; its ring copy says so too, so that a
    /// peer delivers it once (docs/shm-format.md, "Lanes").
    pub const LANED: u32 = 0x10;
}

/// One event. `Default` is the empty record a writer refills per event.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[rkyv(derive(Debug))]
pub struct EventRecord {
    /// The event code (`pmix_status_t`).
    pub code: i32,
    /// `pmix_data_range_t`.
    pub range: u8,
    /// A [`flags::LANED`] record's submission queue (the source's
    /// client-table entry); in what was padding.
    pub lane_entry: u16,
    /// [`flags`] bits.
    pub flags: u32,
    /// The generator.
    pub source: ProcRecord,
    /// Sequence number per source, assigned by the server (its low 32
    /// bits: readers compare numbers that are close, with wrap-around).
    pub source_seq: u32,
    /// A [`flags::LANED`] record's position in its queue (low 32 bits).
    pub lane_pos: u32,
    /// CLOCK_REALTIME nanoseconds when the event was generated.
    pub timestamp_ns: u64,
    /// `PMIX_EVENT_CUSTOM_RANGE` targets (empty unless range is CUSTOM).
    pub custom_range: Vec<ProcRecord>,
    /// `PMIX_EVENT_AFFECTED_PROC(S)`.
    pub affected: Vec<ProcRecord>,
    /// The remaining attributes.
    pub info: Vec<InfoRecord>,
}

/// A textual description of the schema above; its hash is the segment's
/// record-schema hash. Edit it together with the types.
pub const SCHEMA: &str = "rkyv0.8/le/aligned/ptr32;\
ProcRecord{nspace:String,rank:u32};\
InfoRecord{key:String,flags:u32,value:ValueRecord};\
ValueRecord=Undef|Bool(bool)|Byte(u8)|String(String)|Size(u64)|Pid(i32)|Int(i32)|Int8(i8)|Int16(i16)|Int32(i32)|Int64(i64)|Uint(u32)|Uint8(u8)|Uint16(u16)|Uint32(u32)|Uint64(u64)|Float(f32)|Double(f64)|Timeval(i64,i64)|Time(i64)|Status(i32)|Proc(ProcRecord)|Rank(u32)|DataRange(u8)|AllocDirective(u8)|ByteObject(Vec<u8>)|InfoArray(Vec<InfoRecord>)|ProcArray(Vec<ProcRecord>)|StringArray(Vec<String>)|Uint32Array(Vec<u32>)|Pointer(u64);\
EventRecord{code:i32,range:u8,lane_entry:u16,flags:u32,source:ProcRecord,source_seq:u32,lane_pos:u32,timestamp_ns:u64,custom_range:Vec<ProcRecord>,affected:Vec<ProcRecord>,info:Vec<InfoRecord>}";
