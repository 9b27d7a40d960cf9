//! C ↔ Rust conversions at the boundary. Everything read from C is checked
//! (NULL, unterminated keys and namespaces, unknown type tags, bad UTF-8)
//! and becomes a status, never a panic. Everything handed to C is allocated
//! with malloc (`cmem`), so the Standard's release macros (behind them,
//! `macros`) and plain `free` both work.

use super::cmem::{alloc_array, free_infos, strdup};
use super::ctypes::*;
use crate::types::{
    AllocDirective, DataArray, DataRange, DataType, Info, InfoFlags, Key, Nspace, Proc, Rank,
    Status, Timeval, Value, MAX_INFO_NESTING,
};
use std::ffi::{c_char, c_void, CStr};
use std::ptr;

/// A C string the caller passed: NULL → BAD_PARAM, invalid UTF-8 → BAD_PARAM.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(super) unsafe fn str_from_c<'a>(p: *const c_char) -> Result<&'a str, Status> {
    if p.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller guarantees a terminated string.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Status::ERR_BAD_PARAM)
}

/// The string in a fixed-size C array: it must be NUL-terminated within the
/// array (a full array is an unterminated or oversized string).
fn bounded(buf: &[c_char]) -> Result<&str, Status> {
    // SAFETY: c_char and u8 have the same size and alignment.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, buf.len()) };
    let n = bytes
        .iter()
        .position(|&b| b == 0)
        .ok_or(Status::ERR_BAD_PARAM)?;
    std::str::from_utf8(&bytes[..n]).map_err(|_| Status::ERR_BAD_PARAM)
}

/// The text of a key passed as `const char *`: not empty, at most
/// `PMIX_MAX_KEYLEN` (511) bytes, terminated within 512, UTF-8. Not
/// interned: a process may use any number of distinct keys (one per peer
/// in legacy PMI code), and the client takes them as text.
///
/// # Safety
/// `p` is NULL or readable up to its terminator or 512 bytes; the text
/// borrows `p`'s bytes.
pub(super) unsafe fn key_text<'a>(p: *const c_char) -> Result<&'a str, Status> {
    if p.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: strnlen reads at most KEYLEN bytes, all readable by contract.
    let n = unsafe { libc::strnlen(p, KEYLEN) };
    if n >= KEYLEN || n == 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: n bytes are readable (strnlen found the terminator after them).
    let b = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
    std::str::from_utf8(b).map_err(|_| Status::ERR_BAD_PARAM)
}

/// A namespace passed as `const char *` (≤ 255 bytes).
///
/// # Safety
/// `p` is NULL or readable up to its terminator or 256 bytes.
pub(super) unsafe fn nspace_from_ptr(p: *const c_char) -> Result<Nspace, Status> {
    if p.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: strnlen reads at most NSLEN bytes, readable by contract.
    let n = unsafe { libc::strnlen(p, NSLEN) };
    if n >= NSLEN {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: n bytes precede the terminator.
    let b = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
    Nspace::new(std::str::from_utf8(b).map_err(|_| Status::ERR_BAD_PARAM)?)
}

/// A `pmix_proc_t` by value.
pub(super) fn proc_from_c(p: &pmix_proc_t) -> Result<Proc, Status> {
    Ok(Proc {
        nspace: Nspace::new(bounded(&p.nspace)?)?,
        rank: Rank(p.rank),
    })
}

/// A `pmix_proc_t` the caller passed by pointer (NULL → BAD_PARAM).
///
/// # Safety
/// `p` is NULL or points to a readable `pmix_proc_t`.
pub(super) unsafe fn proc_from_ptr(p: *const pmix_proc_t) -> Result<Proc, Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or points to a
    // readable `pmix_proc_t`.
    proc_from_c(unsafe { p.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?)
}

/// An array of procs (`n > 0` with NULL → BAD_PARAM).
///
/// # Safety
/// `p` is NULL or points to `n` readable `pmix_proc_t`.
pub(super) unsafe fn procs_from_c(p: *const pmix_proc_t, n: usize) -> Result<Vec<Proc>, Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or points to `n`
    // readable `pmix_proc_t`.
    unsafe { slice(p, n) }?.iter().map(proc_from_c).collect()
}

/// `p[..n]` with the NULL rules of the Standard's array arguments.
///
/// # Safety
/// `p` is NULL or points to `n` readable `T`.
pub(super) unsafe fn slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T], Status> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    if n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: by contract, n readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A `pmix_proc_t` for `p`.
pub(super) fn proc_to_c(p: &Proc) -> pmix_proc_t {
    let mut c = pmix_proc_t {
        nspace: [0; NSLEN],
        rank: p.rank.0,
    };
    for (d, s) in c.nspace.iter_mut().zip(p.nspace.as_str().bytes()) {
        *d = s as c_char;
    }
    c
}

fn copy_key(dst: &mut [c_char; KEYLEN], k: &str) {
    dst.fill(0);
    for (d, s) in dst.iter_mut().zip(k.bytes().take(KEYLEN - 1)) {
        *d = s as c_char;
    }
}

/// The Rust value of a C value. `ERR_NOT_SUPPORTED`: a type of the Standard
/// that fastpmix does not carry; `ERR_BAD_PARAM`: an unknown tag or a NULL
/// where a pointer is required.
///
/// # Safety
/// The pointers inside `v` are valid for its type tag.
pub(super) unsafe fn value_from_c(v: &pmix_value_t) -> Result<Value, Status> {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { value_at(v, 0) }
}

/// [`value_from_c`] of a value inside `depth` info arrays: deeper than
/// [`MAX_INFO_NESTING`] is `PMIX_ERR_BAD_PARAM` (a caller's array nested
/// thousands deep would overflow the stack).
///
/// # Safety
/// As [`value_from_c`].
unsafe fn value_at(v: &pmix_value_t, depth: usize) -> Result<Value, Status> {
    let t = v.type_;
    if !known_type(t) {
        return Err(Status::ERR_BAD_PARAM);
    }
    let d = &v.data;
    // SAFETY: each arm reads the union member the type tag names.
    unsafe {
        Ok(match DataType(t) {
            DataType::UNDEF => Value::Undef,
            DataType::BOOL => Value::Bool(*(d as *const _ as *const u8) != 0),
            DataType::BYTE => Value::Byte(d.byte),
            DataType::STRING => Value::String(str_from_c(d.string)?.to_owned()),
            DataType::SIZE => Value::Size(d.size as u64),
            DataType::PID => Value::Pid(d.pid),
            DataType::INT => Value::Int(d.integer),
            DataType::INT8 => Value::Int8(d.int8),
            DataType::INT16 => Value::Int16(d.int16),
            DataType::INT32 => Value::Int32(d.int32),
            DataType::INT64 => Value::Int64(d.int64),
            DataType::UINT => Value::Uint(d.uint),
            DataType::UINT8 => Value::Uint8(d.uint8),
            DataType::UINT16 => Value::Uint16(d.uint16),
            DataType::UINT32 => Value::Uint32(d.uint32),
            DataType::UINT64 => Value::Uint64(d.uint64),
            DataType::FLOAT => Value::Float(d.fval),
            DataType::DOUBLE => Value::Double(d.dval),
            DataType::TIMEVAL => Value::Timeval(Timeval {
                sec: d.tv.tv_sec,
                usec: d.tv.tv_usec,
            }),
            DataType::TIME => Value::Time(d.time),
            DataType::STATUS => Value::Status(Status(d.status)),
            DataType::PROC => Value::Proc(Box::new(proc_from_ptr(d.proc_)?)),
            DataType::PROC_RANK => Value::Rank(Rank(d.rank)),
            DataType::DATA_RANGE => Value::DataRange(DataRange(d.uint8)),
            DataType::ALLOC_DIRECTIVE => Value::AllocDirective(AllocDirective(d.uint8)),
            // `pmix_scope_t` (the value of `PMIX_DATA_SCOPE`): a `Value`
            // has no scope variant, and a scope is a one-byte number the
            // directive checks and reads as such (`attrs` types
            // `PMIX_DATA_SCOPE` as any integer 0..=255). The tag is not
            // kept: a scope handed back is a `PMIX_UINT8`.
            DataType::SCOPE => Value::Uint8(d.uint8),
            // `pmix_persistence_t` (the value of `PMIX_PERSISTENCE`, which
            // Open MPI's `MPI_Publish_name` passes): a one-byte number the
            // host reads, carried as a scope is.
            DataType::PERSIST => Value::Uint8(d.uint8),
            DataType::BYTE_OBJECT => {
                Value::ByteObject(slice(d.bo.bytes as *const u8, d.bo.size)?.to_vec())
            }
            // A NULL array is no value (what the Standard's NULL means).
            DataType::DATA_ARRAY if d.darray.is_null() => Value::Undef,
            DataType::DATA_ARRAY => Value::DataArray(darray_from_c(d.darray, depth)?),
            DataType::POINTER => Value::Pointer(d.ptr as usize),
            _ => return Err(Status::ERR_NOT_SUPPORTED),
        })
    }
}

/// # Safety
/// `p` is NULL or a valid data array.
unsafe fn darray_from_c(p: *const pmix_data_array_t, depth: usize) -> Result<DataArray, Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or a valid data
    // array.
    let a = unsafe { p.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
    // SAFETY: `array` holds `size` elements of `type_` (the array's contract).
    unsafe {
        Ok(match DataType(a.type_) {
            DataType::INFO if depth >= MAX_INFO_NESTING => return Err(Status::ERR_BAD_PARAM),
            DataType::INFO => DataArray::Info(infos_at(a.array as *const _, a.size, depth + 1)?),
            DataType::PROC => DataArray::Proc(procs_from_c(a.array as *const _, a.size)?),
            DataType::STRING => DataArray::String(
                slice(a.array as *const *const c_char, a.size)?
                    .iter()
                    .map(|&s| str_from_c(s).map(str::to_owned))
                    .collect::<Result<_, _>>()?,
            ),
            DataType::UINT32 => DataArray::Uint32(slice(a.array as *const u32, a.size)?.to_vec()),
            t if known_type(t.0) => return Err(Status::ERR_NOT_SUPPORTED),
            _ => return Err(Status::ERR_BAD_PARAM),
        })
    }
}

/// One info. Its value may be unsupported (see [`value_from_c`]).
///
/// # Safety
/// `i`'s value pointers are valid for its type tag.
pub(super) unsafe fn info_from_c(i: &pmix_info_t) -> Result<Info, Status> {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { info_at(i, 0) }
}

/// [`info_from_c`] inside `depth` info arrays.
///
/// # Safety
/// As [`info_from_c`].
unsafe fn info_at(i: &pmix_info_t, depth: usize) -> Result<Info, Status> {
    let key = Key::intern(bounded(&i.key)?)?;
    Ok(Info {
        key,
        // SAFETY: `i`'s value pointers are valid for its tag (the caller's
        // guarantee).
        value: unsafe { value_at(&i.value, depth) }?,
        flags: InfoFlags(i.flags),
    })
}

/// An info array from C. An info whose value type fastpmix does not carry
/// is dropped unless it is required (`PMIX_INFO_REQD`: then
/// `PMIX_ERR_NOT_SUPPORTED`), as the Standard treats unsupported attributes.
/// So is a known attribute whose value has no type at all (`PMIX_UNDEF`, a
/// hand-built array whose type was never set) where its type needs a value:
/// ignored as if absent, and said once per key (required: `BAD_PARAM`);
/// but a bool attribute given so is true, as `PMIX_INFO_TRUE` reads it.
/// A `PMIX_STRING` info whose string is NULL is absent too (required:
/// `BAD_PARAM`).
/// OpenPMIx accepts such requests.
///
/// # Safety
/// `p` is NULL or points to `n` valid infos.
pub(super) unsafe fn infos_from_c(p: *const pmix_info_t, n: usize) -> Result<Vec<Info>, Status> {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { infos_at(p, n, 0) }
}

/// [`infos_from_c`] of an array inside `depth` info arrays.
///
/// # Safety
/// As [`infos_from_c`].
unsafe fn infos_at(p: *const pmix_info_t, n: usize, depth: usize) -> Result<Vec<Info>, Status> {
    let mut out = Vec::with_capacity(n);
    // SAFETY: the caller's obligation (this function's `# Safety`): As [`infos_from_c`].
    for i in unsafe { slice(p, n) }? {
        let required = i.flags & InfoFlags::REQD.0 != 0;
        // SAFETY: reading the union member the tag names (a string pointer).
        if i.value.type_ == DataType::STRING.0 && unsafe { i.value.data.string }.is_null() {
            // A string attribute with no string: absent (Open MPI registers
            // PMIX_LOCALITY_STRING so for a process bound nowhere).
            if required {
                return Err(Status::ERR_BAD_PARAM);
            }
            continue;
        }
        // SAFETY: `i` is one of the `n` valid infos (the caller's guarantee).
        match unsafe { info_at(i, depth) } {
            // A flag given by presence alone, as PMIX_INFO_TRUE reads it
            // (Open MPI registers its error handler with an untyped
            // PMIX_EVENT_HDLR_PREPEND).
            Ok(mut info) if untyped_flag(i.value.type_, &info) => {
                info.value = Value::Bool(true);
                out.push(info);
            }
            Ok(info) if untyped(i.value.type_, &info) => {
                if required {
                    return Err(Status::ERR_BAD_PARAM);
                }
                note_untyped(&info.key);
            }
            Ok(info) => out.push(info),
            Err(Status::ERR_NOT_SUPPORTED) if !required => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// A `PMIX_UNDEF` value under a bool attribute of ours: the flag is set.
fn untyped_flag(tag: u16, info: &Info) -> bool {
    tag == DataType::UNDEF.0 && info.key.attr_type() == Some(crate::types::attrs::AttrType::Bool)
}

/// A `PMIX_UNDEF` value under a key of ours whose type needs a value.
fn untyped(tag: u16, info: &Info) -> bool {
    tag == DataType::UNDEF.0
        && info
            .key
            .attr_type()
            .is_some_and(|t| !t.accepts(&Value::Undef))
}

/// Says once per key and process that an untyped info was ignored.
///
/// On stderr, as docs/conformance.md (CABI-85) promises: a C program has
/// no sink of fastpmix's to set (the Standard defines none for a library's
/// own diagnostics; OpenPMIx writes its own to stderr too), and conversion
/// runs in client and server processes alike, where no server's trace
/// sink (`Shared::say`) is at hand.
fn note_untyped(key: &Key) {
    static SAID: std::sync::Mutex<Vec<Key>> = std::sync::Mutex::new(Vec::new());
    let mut said = crate::sync::lock(&SAID);
    if !said.contains(key) {
        said.push(key.clone());
        eprintln!(
            "fastpmix: ignoring info {} whose value has no type (PMIX_UNDEF)",
            key.as_str()
        );
    }
}

/// Writes `v` into `out` (which holds no allocation: it is overwritten).
pub(super) fn value_to_c(v: &Value, out: &mut pmix_value_t) -> Result<(), Status> {
    let mut d = pmix_value_data { raw: [0; 3] };
    match v {
        Value::Undef => {}
        Value::Bool(b) => d.flag = *b,
        Value::Byte(x) => d.byte = *x,
        Value::String(s) => d.string = strdup(s),
        Value::Size(x) => d.size = *x as usize,
        Value::Pid(x) => d.pid = *x,
        Value::Int(x) => d.integer = *x,
        Value::Int8(x) => d.int8 = *x,
        Value::Int16(x) => d.int16 = *x,
        Value::Int32(x) => d.int32 = *x,
        Value::Int64(x) => d.int64 = *x,
        Value::Uint(x) => d.uint = *x,
        Value::Uint8(x) => d.uint8 = *x,
        Value::Uint16(x) => d.uint16 = *x,
        Value::Uint32(x) => d.uint32 = *x,
        Value::Uint64(x) => d.uint64 = *x,
        Value::Float(x) => d.fval = *x,
        Value::Double(x) => d.dval = *x,
        Value::Timeval(t) => {
            d.tv = libc::timeval {
                tv_sec: t.sec,
                tv_usec: t.usec,
            }
        }
        Value::Time(x) => d.time = *x,
        Value::Status(s) => d.status = s.0,
        Value::Proc(p) => {
            let c = alloc_array::<pmix_proc_t>(1)?;
            // SAFETY: `c` is a fresh allocation for one proc.
            unsafe { c.write(proc_to_c(p)) };
            d.proc_ = c;
        }
        Value::Rank(r) => d.rank = r.0,
        Value::DataRange(r) => d.uint8 = r.0,
        Value::AllocDirective(a) => d.uint8 = a.0,
        Value::ByteObject(b) => {
            let p = alloc_array::<u8>(b.len())?;
            if !b.is_empty() {
                // SAFETY: `p` has room for b.len() bytes.
                unsafe { ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
            }
            d.bo = pmix_byte_object_t {
                bytes: p as *mut c_char,
                size: b.len(),
            };
        }
        Value::DataArray(a) => d.darray = darray_to_c(a)?,
        Value::Pointer(p) => d.ptr = *p as *mut c_void,
    }
    out.type_ = v.data_type().0;
    out.data = d;
    Ok(())
}

fn darray_to_c(a: &DataArray) -> Result<*mut pmix_data_array_t, Status> {
    let n = a.len();
    let array: *mut c_void = match a {
        DataArray::Info(v) => infos_to_c(v)?.0 as *mut c_void,
        DataArray::Proc(v) => {
            let p = alloc_array::<pmix_proc_t>(n)?;
            for (i, x) in v.iter().enumerate() {
                // SAFETY: `p` holds n procs.
                unsafe { p.add(i).write(proc_to_c(x)) };
            }
            p as *mut c_void
        }
        DataArray::String(v) => {
            let p = alloc_array::<*mut c_char>(n)?;
            for (i, x) in v.iter().enumerate() {
                // SAFETY: `p` holds n pointers.
                unsafe { p.add(i).write(strdup(x)) };
            }
            p as *mut c_void
        }
        DataArray::ProcInfo(v) => {
            let p = alloc_array::<pmix_proc_info_t>(n)?;
            for (i, x) in v.iter().enumerate() {
                let e = pmix_proc_info_t {
                    proc_: proc_to_c(&x.proc),
                    hostname: strdup(&x.hostname),
                    executable_name: strdup(&x.executable),
                    pid: x.pid,
                    exit_code: x.exit_code,
                    state: x.state,
                };
                // SAFETY: `p` holds n proc infos; element i is in bounds.
                unsafe { p.add(i).write(e) };
            }
            p as *mut c_void
        }
        DataArray::Uint32(v) => {
            let p = alloc_array::<u32>(n)?;
            if n > 0 {
                // SAFETY: `p` holds n u32.
                unsafe { ptr::copy_nonoverlapping(v.as_ptr(), p, n) };
            }
            p as *mut c_void
        }
    };
    let da = alloc_array::<pmix_data_array_t>(1)?;
    // SAFETY: fresh allocation for one data array.
    unsafe {
        da.write(pmix_data_array_t {
            type_: a.data_type().0,
            size: n,
            array,
        })
    };
    Ok(da)
}

/// Writes `i` into `out` (overwritten, not released).
pub(super) fn info_to_c(i: &Info, out: &mut pmix_info_t) -> Result<(), Status> {
    copy_key(&mut out.key, i.key.as_str());
    out.flags = i.flags.0;
    value_to_c(&i.value, &mut out.value)
}

/// A malloc'd info array for `v` (NULL when empty), released with
/// `PMIX_INFO_FREE`.
pub(super) fn infos_to_c(v: &[Info]) -> Result<(*mut pmix_info_t, usize), Status> {
    let p = alloc_array::<pmix_info_t>(v.len())?;
    for (k, i) in v.iter().enumerate() {
        // SAFETY: `p` holds v.len() zeroed infos; element k is in bounds.
        if let Err(e) = info_to_c(i, unsafe { &mut *p.add(k) }) {
            // SAFETY: `p` came from alloc_array with v.len() elements.
            unsafe { free_infos(p, v.len()) };
            return Err(e);
        }
    }
    Ok((p, v.len()))
}

/// Most strings a NULL-terminated array from C may hold before its
/// terminator (an unterminated array must not be read forever).
pub(super) const MAX_ARGV: usize = 1 << 16;

/// A NULL-terminated string array (`char **`: keys, argv, environment) as
/// owned strings; a NULL array is an empty one. A NULL-less array longer
/// than [`MAX_ARGV`], or a string that is not UTF-8, is
/// `PMIX_ERR_BAD_PARAM`.
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of terminated strings.
pub(super) unsafe fn strings_from_c(argv: *const *mut c_char) -> Result<Vec<String>, Status> {
    let mut out = Vec::new();
    if argv.is_null() {
        return Ok(out);
    }
    loop {
        if out.len() >= MAX_ARGV {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the array is NULL-terminated (the caller's guarantee) and
        // its terminator was not passed yet.
        let s = unsafe { *argv.add(out.len()) };
        if s.is_null() {
            return Ok(out);
        }
        // SAFETY: a terminated string (the caller's guarantee).
        out.push(unsafe { str_from_c(s) }?.to_owned());
    }
}

/// A malloc'd NULL-terminated copy of `v` (released with
/// `PMIx_Argv_free`).
pub(super) fn strings_to_c(v: &[String]) -> Result<*mut *mut c_char, Status> {
    let a = alloc_array::<*mut c_char>(v.len() + 1)?;
    for (k, s) in v.iter().enumerate() {
        let p = strdup(s);
        // SAFETY: `a` holds v.len() + 1 slots (calloc'd: the last stays
        // NULL); `k` < v.len().
        unsafe { *a.add(k) = p };
    }
    Ok(a)
}
