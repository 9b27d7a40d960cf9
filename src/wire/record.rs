//! The conversions themselves; see the module documentation.

use crate::event::EventClass;
use crate::types::attrs;
use crate::types::{
    AllocDirective, DataArray, DataRange, Info, InfoFlags, Key, Nspace, Proc, ProcInfo, Rank,
    Status, Timeval, Value,
};
use shm_layout::record::{
    flags, ArchivedEventRecord, ArchivedInfoRecord, ArchivedProcRecord, ArchivedValueRecord,
    EventRecord, InfoRecord, ProcRecord, ValueRecord,
};

pub use crate::types::MAX_INFO_NESTING;

/// A notification as it travels: what the generator passed, plus what the
/// server stamps.
#[derive(Clone, Debug, PartialEq)]
pub struct WireEvent {
    /// The event code.
    pub code: Status,
    /// The generator (stamped by the server for client events).
    pub source: Proc,
    /// The target range.
    pub range: DataRange,
    /// The generator's infos, verbatim and in order.
    pub info: Vec<Info>,
    /// Job or environment event.
    pub class: EventClass,
    /// Sequence number per source, assigned by the server (its low 32
    /// bits: see `EventRecord::source_seq`).
    pub source_seq: u32,
    /// CLOCK_REALTIME nanoseconds when the event was generated.
    pub timestamp_ns: u64,
}

/// `CLOCK_REALTIME` now, in nanoseconds since the Unix epoch (0 for a clock
/// set before 1970, saturating in 2554), for [`WireEvent::timestamp_ns`].
pub fn now_realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

// ---------------------------------------------------------------- encoding

/// A [`Proc`] as a record.
pub fn proc_to_record(p: &Proc) -> ProcRecord {
    ProcRecord {
        nspace: p.nspace.as_str().to_owned(),
        rank: p.rank.0,
    }
}

/// A [`Value`] as a record; every variant has one. `Pointer` travels as the
/// address, opaque to any other process.
pub fn value_to_record(v: &Value) -> ValueRecord {
    match v {
        Value::Undef => ValueRecord::Undef,
        Value::Bool(b) => ValueRecord::Bool(*b),
        Value::Byte(b) => ValueRecord::Byte(*b),
        Value::String(s) => ValueRecord::String(s.clone()),
        Value::Size(n) => ValueRecord::Size(*n),
        Value::Pid(n) => ValueRecord::Pid(*n),
        Value::Int(n) => ValueRecord::Int(*n),
        Value::Int8(n) => ValueRecord::Int8(*n),
        Value::Int16(n) => ValueRecord::Int16(*n),
        Value::Int32(n) => ValueRecord::Int32(*n),
        Value::Int64(n) => ValueRecord::Int64(*n),
        Value::Uint(n) => ValueRecord::Uint(*n),
        Value::Uint8(n) => ValueRecord::Uint8(*n),
        Value::Uint16(n) => ValueRecord::Uint16(*n),
        Value::Uint32(n) => ValueRecord::Uint32(*n),
        Value::Uint64(n) => ValueRecord::Uint64(*n),
        Value::Float(x) => ValueRecord::Float(*x),
        Value::Double(x) => ValueRecord::Double(*x),
        Value::Timeval(t) => ValueRecord::Timeval(t.sec, t.usec),
        Value::Time(t) => ValueRecord::Time(*t),
        Value::Status(s) => ValueRecord::Status(s.0),
        Value::Proc(p) => ValueRecord::Proc(proc_to_record(p)),
        Value::Rank(r) => ValueRecord::Rank(r.0),
        Value::DataRange(r) => ValueRecord::DataRange(r.0),
        Value::AllocDirective(d) => ValueRecord::AllocDirective(d.0),
        Value::ByteObject(b) => ValueRecord::ByteObject(b.clone()),
        Value::DataArray(DataArray::Info(v)) => {
            ValueRecord::InfoArray(v.iter().map(info_to_record).collect())
        }
        Value::DataArray(DataArray::Proc(v)) => {
            ValueRecord::ProcArray(v.iter().map(proc_to_record).collect())
        }
        Value::DataArray(DataArray::String(v)) => ValueRecord::StringArray(v.clone()),
        Value::DataArray(DataArray::Uint32(v)) => ValueRecord::Uint32Array(v.clone()),
        Value::DataArray(DataArray::ProcInfo(v)) => {
            ValueRecord::InfoArray(v.iter().map(proc_info_to_record).collect())
        }
        // `usize` is at most 64 bits on every target fastpmix builds for.
        Value::Pointer(a) => ValueRecord::Pointer(*a as u64),
    }
}

/// An [`Info`] as a record: key, directive bits, value.
pub fn info_to_record(i: &Info) -> InfoRecord {
    InfoRecord {
        key: i.key.as_str().to_owned(),
        flags: i.flags.0,
        value: value_to_record(&i.value),
    }
}

/// The routing index an event record duplicates from its infos.
struct Derived {
    /// `NON_DEFAULT` and `DO_NOT_CACHE` bits (never `ENVIRONMENT`).
    flags: u32,
    custom_range: Vec<ProcRecord>,
    affected: Vec<ProcRecord>,
}

/// Derives the routing index from an info list, as the event engine reads
/// it (`event::filter::parse_event`): every `PMIX_EVENT_CUSTOM_RANGE` info
/// adds its procs (a proc or a proc array) to the custom range, every
/// `PMIX_EVENT_AFFECTED_PROC(S)` info to the affected set, in info order; a
/// flag info sets its bit when its value means "set" (`Bool(true)`, or a
/// void value), so `Bool(false)` does not. Values of the wrong type add
/// nothing (type checking is the notifier's business, not the encoder's).
fn derive(info: &[Info]) -> Derived {
    let mut d = Derived {
        flags: 0,
        custom_range: Vec::new(),
        affected: Vec::new(),
    };
    let procs = |v: &Value, into: &mut Vec<ProcRecord>| match v {
        Value::Proc(p) => into.push(proc_to_record(p)),
        Value::DataArray(DataArray::Proc(l)) => into.extend(l.iter().map(proc_to_record)),
        _ => {}
    };
    for i in info {
        let k = &i.key;
        if *k == attrs::PMIX_EVENT_CUSTOM_RANGE {
            procs(&i.value, &mut d.custom_range);
        } else if *k == attrs::PMIX_EVENT_AFFECTED_PROC || *k == attrs::PMIX_EVENT_AFFECTED_PROCS {
            procs(&i.value, &mut d.affected);
        } else if *k == attrs::PMIX_EVENT_NON_DEFAULT {
            if i.value.as_flag().unwrap_or(false) {
                d.flags |= flags::NON_DEFAULT;
            }
        } else if *k == attrs::PMIX_EVENT_DO_NOT_CACHE && i.value.as_flag().unwrap_or(false) {
            d.flags |= flags::DO_NOT_CACHE;
        }
    }
    d
}

/// An event as a record: the infos verbatim and in order, plus the derived
/// routing index (`custom_range`, `affected`, flag bits; `ENVIRONMENT` when
/// `class` is [`EventClass::Environment`]).
pub fn event_to_record(e: &WireEvent) -> EventRecord {
    let mut r = EventRecord::default();
    event_into_record(e, &mut r);
    r
}

/// As [`event_to_record`], into a record reused from an earlier event:
/// its strings and vectors keep their heap buffers (the server encodes
/// every event through one such record; allocating the record's strings
/// anew per event was a tenth of its CPU time per event).
pub fn event_into_record(e: &WireEvent, r: &mut EventRecord) {
    let d = derive(&e.info);
    let class_bit = match e.class {
        EventClass::Environment => flags::ENVIRONMENT,
        EventClass::Job => 0,
    };
    r.code = e.code.0;
    r.range = e.range.0;
    r.flags = d.flags | class_bit;
    r.source.nspace.clear();
    r.source.nspace.push_str(e.source.nspace.as_str());
    r.source.rank = e.source.rank.0;
    r.source_seq = e.source_seq;
    r.timestamp_ns = e.timestamp_ns;
    r.custom_range = d.custom_range;
    r.affected = d.affected;
    r.info.truncate(e.info.len());
    let reused = r.info.len();
    for (slot, i) in r.info.iter_mut().zip(&e.info) {
        slot.key.clear();
        slot.key.push_str(i.key.as_str());
        slot.flags = i.flags.0;
        slot.value = value_to_record(&i.value);
    }
    r.info.extend(e.info[reused..].iter().map(info_to_record));
    // No lane record unless its submitter (or the server relaying one)
    // says so (`flags` above has no `LANED`): the record may be a reused
    // scratch.
    (r.lane_entry, r.lane_pos) = (0, 0);
}

// ---------------------------------------------------------------- decoding

/// A proc from another process's record. `PMIX_ERR_BAD_PARAM` if the
/// namespace is longer than 255 bytes or contains a NUL.
pub fn proc_from_archived(p: &ArchivedProcRecord) -> Result<Proc, Status> {
    Ok(Proc {
        nspace: Nspace::new(p.nspace.as_str())?,
        rank: Rank(p.rank.to_native()),
    })
}

/// A value from another process's record. `PMIX_ERR_BAD_PARAM` for an
/// invalid namespace or key anywhere inside it, a pointer wider than this
/// process's `usize`, or info arrays nested deeper than
/// [`MAX_INFO_NESTING`].
pub fn value_from_archived(v: &ArchivedValueRecord) -> Result<Value, Status> {
    value_at_depth(v, 0)
}

/// An info from another process's record. `PMIX_ERR_BAD_PARAM` if the key is
/// longer than 511 bytes or contains a NUL, or the value is refused (see
/// [`value_from_archived`]). Directive bits are kept as they are.
pub fn info_from_archived(i: &ArchivedInfoRecord) -> Result<Info, Status> {
    info_at_depth(i, 0)
}

fn info_at_depth(i: &ArchivedInfoRecord, depth: usize) -> Result<Info, Status> {
    Ok(Info {
        key: Key::intern(i.key.as_str())?,
        flags: InfoFlags(i.flags.to_native()),
        value: value_at_depth(&i.value, depth)?,
    })
}

/// `depth`: how many info arrays enclose `v`.
fn value_at_depth(v: &ArchivedValueRecord, depth: usize) -> Result<Value, Status> {
    use ArchivedValueRecord as A;
    Ok(match v {
        A::Undef => Value::Undef,
        A::Bool(b) => Value::Bool(*b),
        A::Byte(b) => Value::Byte(*b),
        A::String(s) => Value::String(s.as_str().to_owned()),
        A::Size(n) => Value::Size(n.to_native()),
        A::Pid(n) => Value::Pid(n.to_native()),
        A::Int(n) => Value::Int(n.to_native()),
        A::Int8(n) => Value::Int8(*n),
        A::Int16(n) => Value::Int16(n.to_native()),
        A::Int32(n) => Value::Int32(n.to_native()),
        A::Int64(n) => Value::Int64(n.to_native()),
        A::Uint(n) => Value::Uint(n.to_native()),
        A::Uint8(n) => Value::Uint8(*n),
        A::Uint16(n) => Value::Uint16(n.to_native()),
        A::Uint32(n) => Value::Uint32(n.to_native()),
        A::Uint64(n) => Value::Uint64(n.to_native()),
        A::Float(x) => Value::Float(x.to_native()),
        A::Double(x) => Value::Double(x.to_native()),
        A::Timeval(sec, usec) => Value::Timeval(Timeval {
            sec: sec.to_native(),
            usec: usec.to_native(),
        }),
        A::Time(t) => Value::Time(t.to_native()),
        A::Status(s) => Value::Status(Status(s.to_native())),
        A::Proc(p) => Value::Proc(Box::new(proc_from_archived(p)?)),
        A::Rank(r) => Value::Rank(Rank(r.to_native())),
        A::DataRange(r) => Value::DataRange(DataRange(*r)),
        A::AllocDirective(d) => Value::AllocDirective(AllocDirective(*d)),
        A::ByteObject(b) => Value::ByteObject(b.as_slice().to_vec()),
        A::InfoArray(l) if !l.is_empty() && l.iter().all(|i| i.key == PROC_INFO_KEY) => {
            Value::DataArray(DataArray::ProcInfo(
                l.iter()
                    .map(proc_info_from_archived)
                    .collect::<Result<_, _>>()?,
            ))
        }
        A::InfoArray(l) => {
            if depth >= MAX_INFO_NESTING {
                return Err(Status::ERR_BAD_PARAM);
            }
            Value::DataArray(DataArray::Info(
                l.iter()
                    .map(|i| info_at_depth(i, depth + 1))
                    .collect::<Result<_, _>>()?,
            ))
        }
        A::ProcArray(l) => Value::DataArray(DataArray::Proc(
            l.iter().map(proc_from_archived).collect::<Result<_, _>>()?,
        )),
        A::StringArray(l) => Value::DataArray(DataArray::String(
            l.iter().map(|s| s.as_str().to_owned()).collect(),
        )),
        A::Uint32Array(l) => {
            Value::DataArray(DataArray::Uint32(l.iter().map(|n| n.to_native()).collect()))
        }
        A::Pointer(a) => {
            Value::Pointer(usize::try_from(a.to_native()).map_err(|_| Status::ERR_BAD_PARAM)?)
        }
    })
}

/// An event from another process's record, rebuilt from its infos (taken
/// verbatim, in order) and header fields; the class comes from the
/// `ENVIRONMENT` flag bit. The derived routing index (`custom_range`,
/// `affected`, the other flag bits) is ignored: a receiver never trusts it.
/// `PMIX_ERR_BAD_PARAM` if the source or any info is refused.
pub fn event_from_archived(r: &ArchivedEventRecord) -> Result<WireEvent, Status> {
    let flag_bits = r.flags.to_native();
    // One spare entry: a client adds PMIX_EVENT_PROXY to a relayed event,
    // which would otherwise reallocate the vector.
    let mut info = Vec::with_capacity(r.info.len() + 1);
    for i in r.info.iter() {
        info.push(info_from_archived(i)?);
    }
    Ok(WireEvent {
        code: Status(r.code.to_native()),
        source: proc_from_archived(&r.source)?,
        range: DataRange(r.range),
        info,
        class: if flag_bits & flags::ENVIRONMENT != 0 {
            EventClass::Environment
        } else {
            EventClass::Job
        },
        source_seq: r.source_seq.to_native(),
        timestamp_ns: r.timestamp_ns.to_native(),
    })
}

/// Do a record's derived fields (`custom_range`, `affected`, the
/// `NON_DEFAULT` / `DO_NOT_CACHE` flag bits) say exactly what its infos say,
/// and are no unknown flag bits set? `false` also when the record does not
/// decode. For tools: receivers ignore the derived fields anyway.
pub fn derived_fields_consistent(r: &ArchivedEventRecord) -> bool {
    let Ok(e) = event_from_archived(r) else {
        return false;
    };
    // ENVIRONMENT and RELAYED are set by the generator / the server, not
    // derived from the infos.
    derived_as(r, &e.info, flags::ENVIRONMENT | flags::RELAYED)
}

/// Can the server relay a client's submitted record as its bytes are
/// (after [`crate::ring::Collector::relay_last`] stamps it)? Only when it
/// names `source`, the authenticated submitter, and its derived fields
/// (`custom_range`, `affected`, the `NON_DEFAULT` / `DO_NOT_CACHE` bits)
/// say exactly what `info`, its validated infos, say, with no flag bit
/// but those and `ENVIRONMENT` set. Anything else (another source given,
/// a hand-made record) is re-encoded from the validated event.
pub fn relayable_as_is(r: &ArchivedEventRecord, source: &Proc, info: &[Info]) -> bool {
    r.source.nspace.as_str() == source.nspace.as_str()
        && r.source.rank.to_native() == source.rank.0
        && derived_as(r, info, flags::ENVIRONMENT)
}

/// Do `r`'s derived fields say what `info` says, with no flag bits set
/// beyond the derived ones and `free` (bits not derived from the infos)?
fn derived_as(r: &ArchivedEventRecord, info: &[Info], free: u32) -> bool {
    let d = derive(info);
    let same = |got: &[ArchivedProcRecord], want: &[ProcRecord]| {
        got.len() == want.len()
            && got
                .iter()
                .zip(want)
                .all(|(g, w)| g.nspace.as_str() == w.nspace && g.rank.to_native() == w.rank)
    };
    r.flags.to_native() & !free == d.flags
        && same(&r.custom_range, &d.custom_range)
        && same(&r.affected, &d.affected)
}

/// Validates and decodes the bytes of one record as another process wrote
/// them into a ring or submission slot: rkyv's validated access, then
/// [`event_from_archived`] (the readers' path, for tools and the fuzz
/// harness). `PMIX_ERR_BAD_PARAM` if the bytes are not a valid record.
pub fn decode_record(bytes: &[u8]) -> Result<WireEvent, Status> {
    let mut buf = rkyv::util::AlignedVec::<16>::with_capacity(bytes.len());
    buf.extend_from_slice(bytes);
    let rec = rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(&buf)
        .map_err(|_| Status::ERR_BAD_PARAM)?;
    event_from_archived(rec)
}

/// The key under which a `pmix_proc_info_t` travels: the record schema has
/// no proc-info value, so an array of them is an info array of these, each
/// holding the fields in order (`pmix.procid`, `pmix.hname`, executable,
/// `pmix.ppid`, `pmix.exit.code`, state). No Standard key starts with
/// `fastpmix.`, so no info array of a caller's is read as one.
pub const PROC_INFO_KEY: &str = "fastpmix.pinfo";

fn proc_info_to_record(p: &ProcInfo) -> InfoRecord {
    let f = |key: &str, value: ValueRecord| InfoRecord {
        key: key.to_owned(),
        flags: 0,
        value,
    };
    f(
        PROC_INFO_KEY,
        ValueRecord::InfoArray(vec![
            f("pmix.procid", ValueRecord::Proc(proc_to_record(&p.proc))),
            f("pmix.hname", ValueRecord::String(p.hostname.clone())),
            f("fastpmix.exec", ValueRecord::String(p.executable.clone())),
            f("pmix.ppid", ValueRecord::Pid(p.pid)),
            f("pmix.exit.code", ValueRecord::Int(p.exit_code)),
            f("fastpmix.state", ValueRecord::Uint8(p.state)),
        ]),
    )
}

fn proc_info_from_archived(i: &ArchivedInfoRecord) -> Result<ProcInfo, Status> {
    use ArchivedValueRecord as A;
    let bad = Status::ERR_BAD_PARAM;
    let A::InfoArray(l) = &i.value else {
        return Err(bad);
    };
    let [proc, host, exe, pid, code, state] = l.as_slice() else {
        return Err(bad);
    };
    let (
        A::Proc(proc),
        A::String(host),
        A::String(exe),
        A::Pid(pid),
        A::Int(code),
        A::Uint8(state),
    ) = (
        &proc.value,
        &host.value,
        &exe.value,
        &pid.value,
        &code.value,
        &state.value,
    )
    else {
        return Err(bad);
    };
    Ok(ProcInfo {
        proc: proc_from_archived(proc)?,
        hostname: host.as_str().to_owned(),
        executable: exe.as_str().to_owned(),
        pid: pid.to_native(),
        exit_code: code.to_native(),
        state: *state,
    })
}
