//! The C memory of values: everything fastpmix hands to C is malloc'd
//! here, and everything C hands back for release (by the Standard's
//! `*_FREE`/`*_DESTRUCT` macros, see `macros`) is freed here, so a value
//! built by C code and one fastpmix built are released the same way.
//! Deep copies (`copy_value`, `copy_darray`) live here too: they allocate
//! what they copy, and undo it on failure.
//!
//! This module depends on the C layouts (`ctypes`) and `types` only; the
//! conversions (`conv`) and the exported functions build on it.

use super::ctypes::*;
use crate::types::{DataType, Status};
use std::ffi::{c_char, c_void};
use std::ptr;

/// `calloc(n, size_of::<T>())`; NULL for `n == 0`.
pub(super) fn alloc_array<T>(n: usize) -> Result<*mut T, Status> {
    if n == 0 {
        return Ok(ptr::null_mut());
    }
    // SAFETY: calloc has no preconditions; the result is checked for NULL.
    let p = unsafe { libc::calloc(n, std::mem::size_of::<T>()) } as *mut T;
    if p.is_null() {
        Err(Status::ERR_NOMEM)
    } else {
        Ok(p)
    }
}

/// A malloc'd, NUL-terminated copy of `s` (interior NULs end it early).
pub(super) fn strdup(s: &str) -> *mut c_char {
    let b = s.as_bytes();
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let p = alloc_array::<c_char>(n + 1).unwrap_or(ptr::null_mut());
    if !p.is_null() {
        // SAFETY: `p` has room for n + 1 bytes (calloc zeroed the last one);
        // `b` has at least n bytes.
        unsafe { ptr::copy_nonoverlapping(b.as_ptr() as *const c_char, p, n) };
    }
    p
}

pub(super) fn free(p: *mut c_void) {
    // SAFETY: every pointer released here came from malloc (ours or the
    // caller's, as the Standard's ownership rules require), or is NULL.
    unsafe { libc::free(p) }
}

/// A malloc'd copy of a C string (NULL stays NULL).
///
/// # Safety
/// `s` is NULL or NUL-terminated.
pub(super) unsafe fn dup_cstr(s: *const c_char) -> *mut c_char {
    if s.is_null() {
        ptr::null_mut()
    } else {
        // SAFETY: the caller's obligation (this function's `# Safety`): `s` is NULL or
        // NUL-terminated.
        unsafe { libc::strdup(s) }
    }
}

/// # Safety
/// `b` describes readable memory.
unsafe fn dup_bytes(b: &pmix_byte_object_t) -> Result<pmix_byte_object_t, Status> {
    if b.bytes.is_null() || b.size == 0 {
        return Ok(pmix_byte_object_t {
            bytes: ptr::null_mut(),
            size: 0,
        });
    }
    let p = alloc_array::<u8>(b.size)?;
    // SAFETY: both hold b.size bytes.
    unsafe { ptr::copy_nonoverlapping(b.bytes as *const u8, p, b.size) };
    Ok(pmix_byte_object_t {
        bytes: p as *mut c_char,
        size: b.size,
    })
}

/// Releases what `v` owns and leaves it `PMIX_UNDEF`.
///
/// # Safety
/// `v`'s pointers are valid (or NULL) for its type and owned by it.
pub(super) unsafe fn destruct_value(v: &mut pmix_value_t) {
    let d = v.data;
    // SAFETY: each arm reads the member the tag names; the pointers are owned.
    unsafe {
        match v.type_ {
            t if t == DataType::STRING.0 || t == NSPACE => free(d.ptr),
            t if t == DataType::PROC.0 => free(d.ptr),
            t if t == DataType::BYTE_OBJECT.0 => free(d.bo.bytes as *mut c_void),
            t if t == DataType::DATA_ARRAY.0 => {
                if let Some(a) = d.darray.as_mut() {
                    destruct_darray(a);
                    free(d.darray as *mut c_void);
                }
            }
            ENVAR => {
                free(d.envar.envar as *mut c_void);
                free(d.envar.value as *mut c_void);
            }
            t if t == DataType::PROC_INFO.0 => {
                if let Some(p) = d.pinfo.as_mut() {
                    destruct_pinfo(p);
                    free(d.pinfo as *mut c_void);
                }
            }
            _ => {}
        }
    }
    v.type_ = DataType::UNDEF.0;
    v.data.raw = [0; 3];
}

/// # Safety
/// The strings are owned (or NULL).
unsafe fn destruct_pinfo(p: &mut pmix_proc_info_t) {
    free(p.hostname as *mut c_void);
    free(p.executable_name as *mut c_void);
    p.hostname = ptr::null_mut();
    p.executable_name = ptr::null_mut();
}

/// # Safety
/// `argv` is NULL or a NULL-terminated array of owned strings.
unsafe fn free_argv(argv: *mut *mut c_char) {
    if argv.is_null() {
        return;
    }
    let mut p = argv;
    // SAFETY: NULL-terminated by contract.
    unsafe {
        while !(*p).is_null() {
            free(*p as *mut c_void);
            p = p.add(1);
        }
    }
    free(argv as *mut c_void);
}

/// Releases the elements of `a` and its array; leaves it empty.
///
/// # Safety
/// `a.array` holds `a.size` valid, owned elements of `a.type_`.
pub(super) unsafe fn destruct_darray(a: &mut pmix_data_array_t) {
    let (t, n, base) = (a.type_, a.size, a.array);
    if !base.is_null() {
        // SAFETY: elements are in bounds and owned, by contract.
        unsafe {
            for k in 0..n {
                match t {
                    t if t == DataType::STRING.0 => free(*(base as *mut *mut c_void).add(k)),
                    t if t == DataType::VALUE.0 => {
                        destruct_value(&mut *(base as *mut pmix_value_t).add(k))
                    }
                    t if t == DataType::INFO.0 => {
                        destruct_value(&mut (*(base as *mut pmix_info_t).add(k)).value)
                    }
                    t if t == DataType::PDATA.0 => {
                        // value at 776 (proc 260 + key 512, aligned to 8)
                        let e = (base as *mut u8).add(k * 808 + 776) as *mut pmix_value_t;
                        destruct_value(&mut *e)
                    }
                    t if t == DataType::BYTE_OBJECT.0 => {
                        free((*(base as *mut pmix_byte_object_t).add(k)).bytes as *mut c_void)
                    }
                    ENVAR => {
                        let e = &*(base as *mut pmix_envar_t).add(k);
                        free(e.envar as *mut c_void);
                        free(e.value as *mut c_void);
                    }
                    t if t == DataType::PROC_INFO.0 => {
                        destruct_pinfo(&mut *(base as *mut pmix_proc_info_t).add(k))
                    }
                    t if t == DataType::DATA_ARRAY.0 => {
                        destruct_darray(&mut *(base as *mut pmix_data_array_t).add(k))
                    }
                    t if t == DataType::APP.0 => {
                        let e = (base as *mut u8).add(k * 56) as *mut *mut c_char;
                        free(*e as *mut c_void); // cmd
                        free_argv(*(e.add(1) as *mut *mut *mut c_char)); // argv
                        free_argv(*(e.add(2) as *mut *mut *mut c_char)); // env
                        free(*e.add(3) as *mut c_void); // cwd
                        let info = *(e.add(5) as *mut *mut pmix_info_t);
                        free_infos(info, *(e.add(6) as *mut usize));
                    }
                    t if t == DataType::QUERY.0 => {
                        let e = (base as *mut u8).add(k * 24) as *mut *mut c_void;
                        free_argv(*e as *mut *mut c_char);
                        free_infos(*e.add(1) as *mut pmix_info_t, *(e.add(2) as *mut usize));
                    }
                    _ => {}
                }
            }
        }
        free(base);
    }
    a.size = 0;
    a.array = ptr::null_mut();
}

/// Releases `n` infos and the array.
///
/// # Safety
/// `p` is NULL or a malloc'd array of `n` owned infos.
pub(super) unsafe fn free_infos(p: *mut pmix_info_t, n: usize) {
    if p.is_null() {
        return;
    }
    for k in 0..n {
        // SAFETY: in bounds, by contract.
        unsafe { destruct_value(&mut (*p.add(k)).value) };
    }
    free(p as *mut c_void);
}

thread_local! {
    /// Data arrays being copied on this thread, one inside the other.
    static COPY_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Deep copy of a data array's elements into `dst` (which owns nothing).
/// Arrays nested deeper than [`MAX_INFO_NESTING`] are `PMIX_ERR_BAD_PARAM`:
/// the copy recurses, and a caller's array nested thousands deep would
/// overflow the stack.
///
/// # Safety
/// `src` is a valid data array.
pub(super) unsafe fn copy_darray(dst: &mut pmix_data_array_t, src: &pmix_data_array_t) -> Status {
    let depth = COPY_DEPTH.get();
    if depth >= crate::types::MAX_INFO_NESTING {
        dst.type_ = src.type_;
        dst.size = 0;
        dst.array = ptr::null_mut();
        return Status::ERR_BAD_PARAM;
    }
    COPY_DEPTH.set(depth + 1);
    // SAFETY: the caller's guarantee, passed on.
    let st = unsafe { copy_darray_elems(dst, src) };
    COPY_DEPTH.set(depth);
    st
}

/// [`copy_darray`] without the depth check.
///
/// # Safety
/// `src` is a valid data array.
unsafe fn copy_darray_elems(dst: &mut pmix_data_array_t, src: &pmix_data_array_t) -> Status {
    dst.type_ = src.type_;
    dst.size = 0;
    dst.array = ptr::null_mut();
    if src.size == 0 || src.array.is_null() {
        return Status::SUCCESS;
    }
    let Some(es) = elem_size(src.type_) else {
        return Status::ERR_NOT_SUPPORTED;
    };
    let t = src.type_;
    if t == DataType::APP.0 || t == DataType::QUERY.0 || t == DataType::PDATA.0 {
        return Status::ERR_NOT_SUPPORTED;
    }
    let Ok(base) = alloc_array::<u8>(src.size * es) else {
        return Status::ERR_NOMEM;
    };
    // SAFETY: both arrays hold src.size elements of es bytes; owned pointer
    // members are duplicated element by element below.
    unsafe {
        ptr::copy_nonoverlapping(src.array as *const u8, base, src.size * es);
        dst.array = base as *mut c_void;
        dst.size = src.size;
        for k in 0..src.size {
            let ok = match t {
                t if t == DataType::STRING.0 => {
                    let e = (base as *mut *mut c_char).add(k);
                    *e = dup_cstr(*e);
                    Status::SUCCESS
                }
                t if t == DataType::VALUE.0 => {
                    let e = (base as *mut pmix_value_t).add(k);
                    let s = *e;
                    copy_value(&mut *e, &s)
                }
                t if t == DataType::INFO.0 => {
                    let e = (base as *mut pmix_info_t).add(k);
                    let s = (*e).value;
                    copy_value(&mut (*e).value, &s)
                }
                t if t == DataType::BYTE_OBJECT.0 => {
                    let e = (base as *mut pmix_byte_object_t).add(k);
                    match dup_bytes(&*e) {
                        Ok(b) => {
                            *e = b;
                            Status::SUCCESS
                        }
                        Err(s) => s,
                    }
                }
                ENVAR => {
                    let e = &mut *(base as *mut pmix_envar_t).add(k);
                    e.envar = dup_cstr(e.envar);
                    e.value = dup_cstr(e.value);
                    Status::SUCCESS
                }
                t if t == DataType::PROC_INFO.0 => {
                    let e = &mut *(base as *mut pmix_proc_info_t).add(k);
                    e.hostname = dup_cstr(e.hostname);
                    e.executable_name = dup_cstr(e.executable_name);
                    Status::SUCCESS
                }
                t if t == DataType::DATA_ARRAY.0 => {
                    let e = &mut *(base as *mut pmix_data_array_t).add(k);
                    let s = ptr::read(e);
                    copy_darray(e, &s)
                }
                _ => Status::SUCCESS,
            };
            if !ok.is_success() {
                // Elements after k still alias the source: cut them off.
                dst.size = k;
                destruct_darray(dst);
                return ok;
            }
        }
    }
    Status::SUCCESS
}

/// A malloc'd deep copy of a data array.
///
/// # Safety
/// `src` is NULL or a valid data array.
unsafe fn dup_darray(src: *const pmix_data_array_t) -> Result<*mut pmix_data_array_t, Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `src` is NULL or a valid data
    // array.
    let Some(s) = (unsafe { src.as_ref() }) else {
        return Ok(ptr::null_mut());
    };
    let d = alloc_array::<pmix_data_array_t>(1)?;
    // SAFETY: `d` is a fresh zeroed allocation; `s` is valid.
    let st = unsafe { copy_darray(&mut *d, s) };
    if st.is_success() {
        Ok(d)
    } else {
        free(d as *mut c_void);
        Err(st)
    }
}

/// Deep copy of `src` into `dst` (which owns nothing).
///
/// # Safety
/// `src` is valid for its type tag.
pub(super) unsafe fn copy_value(dst: &mut pmix_value_t, src: &pmix_value_t) -> Status {
    dst.type_ = src.type_;
    dst.data = src.data;
    let d = &mut dst.data;
    // SAFETY: the tag names the member; pointed-to data is valid by contract.
    let r: Result<(), Status> = unsafe {
        match src.type_ {
            t if t == DataType::STRING.0 => {
                d.string = dup_cstr(src.data.string);
                Ok(())
            }
            NSPACE | 22 => {
                // PROC_NSPACE and PROC: fixed-size blocks
                let n = if src.type_ == NSPACE { 256 } else { 260 };
                if src.data.ptr.is_null() {
                    Ok(())
                } else {
                    alloc_array::<u8>(n).map(|p| {
                        ptr::copy_nonoverlapping(src.data.ptr as *const u8, p, n);
                        d.ptr = p as *mut c_void;
                    })
                }
            }
            t if t == DataType::BYTE_OBJECT.0 => dup_bytes(&src.data.bo).map(|b| d.bo = b),
            t if t == DataType::DATA_ARRAY.0 => dup_darray(src.data.darray).map(|a| d.darray = a),
            ENVAR => {
                d.envar.envar = dup_cstr(src.data.envar.envar);
                d.envar.value = dup_cstr(src.data.envar.value);
                Ok(())
            }
            t if t == DataType::PROC_INFO.0 => match src.data.pinfo.as_ref() {
                None => Ok(()),
                Some(s) => alloc_array::<pmix_proc_info_t>(1).map(|p| {
                    ptr::copy_nonoverlapping(s, p, 1);
                    (*p).hostname = dup_cstr(s.hostname);
                    (*p).executable_name = dup_cstr(s.executable_name);
                    d.pinfo = p;
                }),
            },
            t if !known_type(t) => Err(Status::ERR_BAD_PARAM),
            t if elem_size(t).is_none() || t == DataType::VALUE.0 || t == DataType::INFO.0 => {
                Err(Status::ERR_NOT_SUPPORTED)
            }
            _ => Ok(()),
        }
    };
    match r {
        Ok(()) => Status::SUCCESS,
        Err(s) => {
            dst.type_ = DataType::UNDEF.0;
            dst.data.raw = [0; 3];
            s
        }
    }
}
