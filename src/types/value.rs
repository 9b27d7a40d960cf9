//! `pmix_value_t` as a Rust enum: the typed values event and job-management
//! attributes carry.

use super::{AllocDirective, DataRange, DataType, Info, Proc, Rank, Status};

/// `struct timeval`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Timeval {
    /// Seconds.
    pub sec: i64,
    /// Microseconds.
    pub usec: i64,
}

/// Deepest nesting of info arrays a value may have (a value that is an info
/// array counts 1, an info array inside one of its infos 2, …). Deeper
/// values are refused with `PMIX_ERR_BAD_PARAM` wherever they enter: from C,
/// from a record another process wrote, and by the validators of every
/// request, so nothing recurses without bound over a caller's data.
pub const MAX_INFO_NESTING: usize = 32;

/// Whether `infos` nest info arrays deeper than [`MAX_INFO_NESTING`]
/// (`infos` themselves at depth 0). Iterative: it never recurses over the
/// caller's data, however deep.
pub fn nested_too_deep(infos: &[Info]) -> bool {
    // Nearly every list nests nothing: answered without the stack's
    // allocation (this runs for every info of every event).
    let nests = |i: &Info| matches!(&i.value, Value::DataArray(DataArray::Info(_)));
    if !infos.iter().any(nests) {
        return false;
    }
    let mut stack: Vec<(&[Info], usize)> = vec![(infos, 0)];
    while let Some((list, depth)) = stack.pop() {
        for i in list {
            if let Value::DataArray(DataArray::Info(inner)) = &i.value {
                if depth >= MAX_INFO_NESTING {
                    return true;
                }
                stack.push((inner, depth + 1));
            }
        }
    }
    false
}

/// `pmix_proc_info_t`: what `PMIx_Query_info`'s proc tables hold for each
/// process.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ProcInfo {
    /// The process.
    pub proc: Proc,
    /// The node it runs on (empty: unknown).
    pub hostname: String,
    /// Its executable (empty: unknown).
    pub executable: String,
    /// Its pid (0: unknown, e.g. on another node).
    pub pid: i32,
    /// Its exit code (0 while it runs).
    pub exit_code: i32,
    /// `pmix_proc_state_t`.
    pub state: u8,
}

/// `pmix_data_array_t` for the element types the two chapters use.
#[derive(Clone, PartialEq, Debug)]
pub enum DataArray {
    /// An array of `pmix_info_t` (a nested info list).
    Info(Vec<Info>),
    /// An array of `pmix_proc_t`.
    Proc(Vec<Proc>),
    /// An array of strings.
    String(Vec<String>),
    /// An array of `uint32_t`.
    Uint32(Vec<u32>),
    /// An array of `pmix_proc_info_t`.
    ProcInfo(Vec<ProcInfo>),
}

impl DataArray {
    /// Element type tag.
    pub fn data_type(&self) -> DataType {
        match self {
            DataArray::Info(_) => DataType::INFO,
            DataArray::Proc(_) => DataType::PROC,
            DataArray::String(_) => DataType::STRING,
            DataArray::Uint32(_) => DataType::UINT32,
            DataArray::ProcInfo(_) => DataType::PROC_INFO,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            DataArray::Info(v) => v.len(),
            DataArray::Proc(v) => v.len(),
            DataArray::String(v) => v.len(),
            DataArray::Uint32(v) => v.len(),
            DataArray::ProcInfo(v) => v.len(),
        }
    }

    /// No elements?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A typed PMIx value.
#[derive(Clone, PartialEq, Debug, Default)]
pub enum Value {
    /// `PMIX_UNDEF`: no value (also how a void attribute may be passed).
    #[default]
    Undef,
    /// `PMIX_BOOL`.
    Bool(bool),
    /// `PMIX_BYTE`.
    Byte(u8),
    /// `PMIX_STRING`.
    String(String),
    /// `PMIX_SIZE` (`size_t`).
    Size(u64),
    /// `PMIX_PID` (`pid_t`).
    Pid(i32),
    /// `PMIX_INT`.
    Int(i32),
    /// `PMIX_INT8`.
    Int8(i8),
    /// `PMIX_INT16`.
    Int16(i16),
    /// `PMIX_INT32`.
    Int32(i32),
    /// `PMIX_INT64`.
    Int64(i64),
    /// `PMIX_UINT`.
    Uint(u32),
    /// `PMIX_UINT8`.
    Uint8(u8),
    /// `PMIX_UINT16`.
    Uint16(u16),
    /// `PMIX_UINT32`.
    Uint32(u32),
    /// `PMIX_UINT64`.
    Uint64(u64),
    /// `PMIX_FLOAT`.
    Float(f32),
    /// `PMIX_DOUBLE`.
    Double(f64),
    /// `PMIX_TIMEVAL`.
    Timeval(Timeval),
    /// `PMIX_TIME` (`time_t`).
    Time(i64),
    /// `PMIX_STATUS`.
    Status(Status),
    /// `PMIX_PROC` (boxed: a proc is 260 bytes and most values are small).
    Proc(Box<Proc>),
    /// `PMIX_PROC_RANK`.
    Rank(Rank),
    /// `PMIX_DATA_RANGE`.
    DataRange(DataRange),
    /// `PMIX_ALLOC_DIRECTIVE`.
    AllocDirective(AllocDirective),
    /// `PMIX_BYTE_OBJECT`.
    ByteObject(Vec<u8>),
    /// `PMIX_DATA_ARRAY`.
    DataArray(DataArray),
    /// `PMIX_POINTER`: an address owned by the process that put it there
    /// (e.g. `PMIX_EVENT_RETURN_OBJECT`); never dereferenced by fastpmix.
    Pointer(usize),
}

impl Value {
    /// The `pmix_data_type_t` tag of this value.
    pub fn data_type(&self) -> DataType {
        match self {
            Value::Undef => DataType::UNDEF,
            Value::Bool(_) => DataType::BOOL,
            Value::Byte(_) => DataType::BYTE,
            Value::String(_) => DataType::STRING,
            Value::Size(_) => DataType::SIZE,
            Value::Pid(_) => DataType::PID,
            Value::Int(_) => DataType::INT,
            Value::Int8(_) => DataType::INT8,
            Value::Int16(_) => DataType::INT16,
            Value::Int32(_) => DataType::INT32,
            Value::Int64(_) => DataType::INT64,
            Value::Uint(_) => DataType::UINT,
            Value::Uint8(_) => DataType::UINT8,
            Value::Uint16(_) => DataType::UINT16,
            Value::Uint32(_) => DataType::UINT32,
            Value::Uint64(_) => DataType::UINT64,
            Value::Float(_) => DataType::FLOAT,
            Value::Double(_) => DataType::DOUBLE,
            Value::Timeval(_) => DataType::TIMEVAL,
            Value::Time(_) => DataType::TIME,
            Value::Status(_) => DataType::STATUS,
            Value::Proc(_) => DataType::PROC,
            Value::Rank(_) => DataType::PROC_RANK,
            Value::DataRange(_) => DataType::DATA_RANGE,
            Value::AllocDirective(_) => DataType::ALLOC_DIRECTIVE,
            Value::ByteObject(_) => DataType::BYTE_OBJECT,
            Value::DataArray(_) => DataType::DATA_ARRAY,
            Value::Pointer(_) => DataType::POINTER,
        }
    }

    /// The value of any integer-typed variant, widened.
    pub fn as_integer(&self) -> Option<i128> {
        Some(match *self {
            Value::Byte(v) | Value::Uint8(v) => v.into(),
            Value::Size(v) | Value::Uint64(v) => v.into(),
            Value::Pid(v) | Value::Int(v) | Value::Int32(v) => v.into(),
            Value::Int8(v) => v.into(),
            Value::Int16(v) => v.into(),
            Value::Int64(v) | Value::Time(v) => v.into(),
            Value::Uint(v) | Value::Uint32(v) => v.into(),
            Value::Uint16(v) => v.into(),
            Value::Status(s) => s.0.into(),
            Value::Rank(r) => r.0.into(),
            _ => return None,
        })
    }

    /// A flag's meaning: `Bool(b)` is `b`; a void value (`Undef`/`Pointer`),
    /// as C code loads with a NULL data pointer, means "set".
    pub fn as_flag(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            Value::Undef | Value::Pointer(_) => Some(true),
            _ => None,
        }
    }

    /// The string of a `String` value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A single proc or an array of procs, as a slice-like list.
    pub fn as_procs(&self) -> Option<Vec<Proc>> {
        match self {
            Value::Proc(p) => Some(vec![**p]),
            Value::DataArray(DataArray::Proc(v)) => Some(v.clone()),
            _ => None,
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::String(v.to_owned())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Uint32(v)
    }
}
impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Uint64(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v)
    }
}
impl From<Status> for Value {
    fn from(v: Status) -> Self {
        Value::Status(v)
    }
}
impl From<Proc> for Value {
    fn from(v: Proc) -> Self {
        Value::Proc(Box::new(v))
    }
}
impl From<DataRange> for Value {
    fn from(v: DataRange) -> Self {
        Value::DataRange(v)
    }
}
impl From<Vec<Proc>> for Value {
    fn from(v: Vec<Proc>) -> Self {
        Value::DataArray(DataArray::Proc(v))
    }
}
impl From<Vec<Info>> for Value {
    fn from(v: Vec<Info>) -> Self {
        Value::DataArray(DataArray::Info(v))
    }
}
