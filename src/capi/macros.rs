//! The functions behind the Standard's structure macros (`PMIX_INFO_*`,
//! `PMIX_VALUE_*`, `PMIX_PROC_*`, `PMIX_DATA_ARRAY_*`, info lists): the C
//! macros of `include/pmix_common.h` call these exports. They work on C
//! memory only, allocated and released by `cmem` (malloc/free): a value
//! built by C code with these macros and one fastpmix hands out are
//! released the same way. Each export runs under `guard`/`status_of`.

use super::cmem::{
    alloc_array, copy_darray, copy_value, destruct_darray, destruct_value, dup_cstr, free,
    free_infos,
};
use super::conv::key_text;
use super::ctypes::*;
use super::{guard, status_of};
use crate::types::{DataType, InfoFlags, Status};
use std::ffi::{c_char, c_void};
use std::ptr;

/// `PMIx_Value_load`: `data` points to a value of `type` (for strings and
/// pointers, it is the string or the pointer itself).
///
/// # Safety
/// `data` is NULL or valid for `t`.
unsafe fn load_value(v: &mut pmix_value_t, data: *const c_void, t: u16) -> Status {
    v.type_ = DataType::UNDEF.0;
    v.data.raw = [0; 3];
    if !known_type(t) {
        return Status::ERR_BAD_PARAM;
    }
    // A NULL bool means true; a NULL pointer, string or data array is a
    // valid value (the Standard gives NULL arrays a meaning, e.g.
    // PMIX_MONITOR_PROC_RESOURCE_USAGE: every field).
    if data.is_null() {
        v.type_ = t;
        return match DataType(t) {
            DataType::BOOL => {
                v.data.flag = true;
                Status::SUCCESS
            }
            DataType::POINTER | DataType::STRING | DataType::UNDEF | DataType::DATA_ARRAY => {
                Status::SUCCESS
            }
            _ => {
                v.type_ = DataType::UNDEF.0;
                Status::ERR_BAD_PARAM
            }
        };
    }
    // Build a source value that borrows the caller's data, then deep-copy.
    let mut src = pmix_value_t {
        type_: t,
        data: pmix_value_data { raw: [0; 3] },
    };
    // SAFETY: `data` is valid for `t` by contract; sizes come from elem_size.
    unsafe {
        match DataType(t) {
            DataType::STRING | DataType::POINTER => src.data.ptr = data as *mut c_void,
            DataType::PROC | DataType::DATA_ARRAY | DataType::PROC_INFO => {
                src.data.ptr = data as *mut c_void
            }
            DataType(NSPACE) => src.data.ptr = data as *mut c_void,
            DataType::VALUE | DataType::INFO | DataType::PDATA | DataType::APP => {
                return Status::ERR_NOT_SUPPORTED
            }
            DataType::QUERY => return Status::ERR_NOT_SUPPORTED,
            _ => match elem_size(t) {
                Some(n) if n <= 24 => ptr::copy_nonoverlapping(
                    data as *const u8,
                    &mut src.data as *mut _ as *mut u8,
                    n,
                ),
                _ => return Status::ERR_NOT_SUPPORTED,
            },
        }
        copy_value(v, &src)
    }
}

fn zero_info(p: &mut pmix_info_t) {
    p.key = [0; KEYLEN];
    p.flags = 0;
    p.value.type_ = 0;
    p.value.data.raw = [0; 3];
}

// ---- exported functions behind the macros ----

/// `PMIX_INFO_CREATE`: `n` zeroed infos (NULL for 0).
#[no_mangle]
pub extern "C" fn PMIx_Info_create(n: usize) -> *mut pmix_info_t {
    guard(ptr::null_mut(), || {
        alloc_array::<pmix_info_t>(n).unwrap_or(ptr::null_mut())
    })
}

/// `PMIX_INFO_CONSTRUCT`.
///
/// # Safety
/// `p` is NULL or a writable info.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_construct(p: *mut pmix_info_t) {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or a writable
    // info.
    if let Some(p) = unsafe { p.as_mut() } {
        zero_info(p);
    }
}

/// `PMIX_INFO_DESTRUCT`.
///
/// # Safety
/// `p` is NULL or an info owning its value.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_destruct(p: *mut pmix_info_t) {
    guard((), || {
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or an info
        // owning its value.
        if let Some(p) = unsafe { p.as_mut() } {
            // SAFETY: the info owns its value.
            unsafe { destruct_value(&mut p.value) };
            zero_info(p);
        }
    })
}

/// `PMIX_INFO_FREE`.
///
/// # Safety
/// `p` is NULL or a malloc'd array of `n` infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_free(p: *mut pmix_info_t, n: usize) {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or a malloc'd
    // array of `n` infos.
    guard((), || unsafe { free_infos(p, n) })
}

/// `PMIX_INFO_LOAD`.
///
/// # Safety
/// `info` is NULL or writable; `key` NULL or terminated; `data` valid for `t`.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_load(
    info: *mut pmix_info_t,
    key: *const c_char,
    data: *const c_void,
    t: u16,
) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` is NULL or
        // writable; `key` NULL or terminated; `data` valid for `t`.
        let i = unsafe { info.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        zero_info(i);
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` is NULL or
        // writable; `key` NULL or terminated; `data` valid for `t`.
        let k = unsafe { key_text(key) }?;
        for (d, s) in i.key.iter_mut().zip(k.bytes()) {
            *d = s as c_char;
        }
        // SAFETY: the caller's obligation (this function's `# Safety`): `info` is NULL or
        // writable; `key` NULL or terminated; `data` valid for `t`.
        unsafe { load_value(&mut i.value, data, t) }.into_result()
    })
}

/// `PMIX_INFO_XFER`: deep copy (`dest` owns nothing before).
///
/// # Safety
/// Both are NULL or valid infos.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_xfer(dest: *mut pmix_info_t, src: *const pmix_info_t) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): Both are NULL or valid
        // infos.
        let (d, s) = unsafe { (dest.as_mut(), src.as_ref()) };
        let (d, s) = (
            d.ok_or(Status::ERR_BAD_PARAM)?,
            s.ok_or(Status::ERR_BAD_PARAM)?,
        );
        d.key = s.key;
        d.flags = s.flags;
        // SAFETY: `s` is valid; `d` owns nothing.
        unsafe { copy_value(&mut d.value, &s.value) }.into_result()
    })
}

/// `PMIX_INFO_REQUIRED`.
///
/// # Safety
/// `p` is NULL or a writable info.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_required(p: *mut pmix_info_t) {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or a writable
    // info.
    if let Some(p) = unsafe { p.as_mut() } {
        p.flags |= InfoFlags::REQD.0;
    }
}

/// `PMIX_INFO_OPTIONAL`.
///
/// # Safety
/// `p` is NULL or a writable info.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_optional(p: *mut pmix_info_t) {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or a writable
    // info.
    if let Some(p) = unsafe { p.as_mut() } {
        p.flags &= !InfoFlags::REQD.0;
    }
}

/// `PMIX_INFO_IS_REQUIRED`.
///
/// # Safety
/// `p` is NULL or a readable info.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_is_required(p: *const pmix_info_t) -> bool {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or a readable
    // info.
    unsafe { p.as_ref() }.is_some_and(|p| p.flags & InfoFlags::REQD.0 != 0)
}

/// `PMIX_INFO_TRUE`: a bool that is true, or a void (undef/pointer) flag.
///
/// # Safety
/// `p` is NULL or a readable info.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_true(p: *const pmix_info_t) -> bool {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or a readable
    // info.
    unsafe { p.as_ref() }.is_some_and(|p| match DataType(p.value.type_) {
        // SAFETY: a BOOL value's byte; read as u8, since C may store any byte.
        DataType::BOOL => (unsafe { p.value.data.byte }) != 0,
        DataType::UNDEF | DataType::POINTER => true,
        _ => false,
    })
}

/// `PMIX_VALUE_CREATE`.
#[no_mangle]
pub extern "C" fn PMIx_Value_create(n: usize) -> *mut pmix_value_t {
    guard(ptr::null_mut(), || {
        alloc_array::<pmix_value_t>(n).unwrap_or(ptr::null_mut())
    })
}

/// `PMIX_VALUE_CONSTRUCT`.
///
/// # Safety
/// `v` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_construct(v: *mut pmix_value_t) {
    // SAFETY: the caller's obligation (this function's `# Safety`): `v` is NULL or writable.
    if let Some(v) = unsafe { v.as_mut() } {
        v.type_ = 0;
        v.data.raw = [0; 3];
    }
}

/// `PMIX_VALUE_DESTRUCT`.
///
/// # Safety
/// `v` is NULL or owns what it points to.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_destruct(v: *mut pmix_value_t) {
    guard((), || {
        // SAFETY: the caller's obligation (this function's `# Safety`): `v` is NULL or owns what
        // it points to.
        if let Some(v) = unsafe { v.as_mut() } {
            // SAFETY: the caller's obligation (this function's `# Safety`): `v` is NULL or owns
            // what it points to.
            unsafe { destruct_value(v) }
        }
    })
}

/// `PMIX_VALUE_FREE` / `PMIX_VALUE_RELEASE`.
///
/// # Safety
/// `v` is NULL or a malloc'd array of `n` owning values.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_free(v: *mut pmix_value_t, n: usize) {
    guard((), || {
        if v.is_null() {
            return;
        }
        for k in 0..n {
            // SAFETY: in bounds, owning, by contract.
            unsafe { destruct_value(&mut *v.add(k)) };
        }
        free(v as *mut c_void);
    })
}

/// `PMIX_VALUE_LOAD`.
///
/// # Safety
/// `v` is NULL or writable; `data` valid for `t`.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_load(v: *mut pmix_value_t, data: *const c_void, t: u16) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `v` is NULL or writable;
        // `data` valid for `t`.
        let v = unsafe { v.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's obligation (this function's `# Safety`): `v` is NULL or writable;
        // `data` valid for `t`.
        unsafe { load_value(v, data, t) }.into_result()
    })
}

/// `PMIX_VALUE_UNLOAD`: strings and structures come back malloc'd in
/// `*data`; scalars are copied into the storage `*data` points to.
///
/// # Safety
/// `v` is NULL or valid; `data` and `sz` NULL or writable; for scalars
/// `*data` points to storage for the value.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_unload(
    v: *mut pmix_value_t,
    data: *mut *mut c_void,
    sz: *mut usize,
) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `v` is NULL or valid;
        // `data` and `sz` NULL or writable; for scalars `*data` points to storage for the value.
        let (v, data, sz) = unsafe { (v.as_ref(), data.as_mut(), sz.as_mut()) };
        let (v, data, sz) = (
            v.ok_or(Status::ERR_BAD_PARAM)?,
            data.ok_or(Status::ERR_BAD_PARAM)?,
            sz.ok_or(Status::ERR_BAD_PARAM)?,
        );
        let t = v.type_;
        // SAFETY: the tag names the member; the copy helpers allocate.
        unsafe {
            match DataType(t) {
                DataType::STRING => {
                    *data = dup_cstr(v.data.string) as *mut c_void;
                    *sz = if v.data.string.is_null() {
                        0
                    } else {
                        libc::strlen(v.data.string) + 1
                    };
                }
                DataType::POINTER => {
                    *data = v.data.ptr;
                    *sz = std::mem::size_of::<*mut c_void>();
                }
                DataType::PROC
                | DataType::DATA_ARRAY
                | DataType::BYTE_OBJECT
                | DataType::PROC_INFO
                | DataType(ENVAR)
                | DataType(NSPACE) => {
                    let mut tmp = pmix_value_t {
                        type_: 0,
                        data: pmix_value_data { raw: [0; 3] },
                    };
                    copy_value(&mut tmp, v).into_result()?;
                    match DataType(t) {
                        DataType::BYTE_OBJECT => {
                            *data = tmp.data.bo.bytes as *mut c_void;
                            *sz = tmp.data.bo.size;
                        }
                        DataType(ENVAR) => {
                            let p = alloc_array::<pmix_envar_t>(1)?;
                            p.write(tmp.data.envar);
                            *data = p as *mut c_void;
                            *sz = std::mem::size_of::<pmix_envar_t>();
                        }
                        _ => {
                            *data = tmp.data.ptr;
                            *sz = elem_size(t).unwrap_or(0);
                        }
                    }
                }
                _ => {
                    let n = elem_size(t)
                        .filter(|&n| n <= 24)
                        .ok_or(Status::ERR_NOT_SUPPORTED)?;
                    if data.is_null() {
                        return Err(Status::ERR_BAD_PARAM);
                    }
                    ptr::copy_nonoverlapping(&v.data as *const _ as *const u8, *data as *mut u8, n);
                    *sz = n;
                }
            }
        }
        Ok(())
    })
}

/// `PMIX_VALUE_XFER`: deep copy into `dest` (which owns nothing).
///
/// # Safety
/// Both NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_xfer(dest: *mut pmix_value_t, src: *const pmix_value_t) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): Both NULL or valid.
        let (d, s) = unsafe { (dest.as_mut(), src.as_ref()) };
        let (d, s) = (
            d.ok_or(Status::ERR_BAD_PARAM)?,
            s.ok_or(Status::ERR_BAD_PARAM)?,
        );
        // SAFETY: `s` is valid; `d` owns nothing.
        unsafe { copy_value(d, s) }.into_result()
    })
}

/// `PMIX_PROC_CREATE`.
#[no_mangle]
pub extern "C" fn PMIx_Proc_create(n: usize) -> *mut pmix_proc_t {
    guard(ptr::null_mut(), || {
        alloc_array::<pmix_proc_t>(n).unwrap_or(ptr::null_mut())
    })
}

/// `PMIX_PROC_FREE`.
///
/// # Safety
/// `p` is NULL or malloc'd.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Proc_free(p: *mut pmix_proc_t, _n: usize) {
    free(p as *mut c_void)
}

/// `PMIX_DATA_ARRAY_INIT`: empty array of type `t`.
///
/// # Safety
/// `p` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Data_array_init(p: *mut pmix_data_array_t, t: u16) {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or writable.
    if let Some(p) = unsafe { p.as_mut() } {
        p.type_ = t;
        p.size = 0;
        p.array = ptr::null_mut();
    }
}

/// `PMIX_DATA_ARRAY_CONSTRUCT`: `n` zeroed elements of type `t` (an
/// unsupported type gives an empty array).
///
/// # Safety
/// `p` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Data_array_construct(p: *mut pmix_data_array_t, n: usize, t: u16) {
    guard((), || {
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or writable.
        let Some(p) = (unsafe { p.as_mut() }) else {
            return;
        };
        p.type_ = t;
        p.size = 0;
        p.array = ptr::null_mut();
        if let Some(es) = elem_size(t) {
            if let Some(bytes) = n.checked_mul(es) {
                if let Ok(a) = alloc_array::<u8>(bytes) {
                    p.array = a as *mut c_void;
                    p.size = if a.is_null() { 0 } else { n };
                }
            }
        }
    })
}

/// `PMIX_DATA_ARRAY_CREATE`.
#[no_mangle]
pub extern "C" fn PMIx_Data_array_create(n: usize, t: u16) -> *mut pmix_data_array_t {
    guard(ptr::null_mut(), || {
        let Ok(p) = alloc_array::<pmix_data_array_t>(1) else {
            return ptr::null_mut();
        };
        // SAFETY: `p` is a fresh allocation.
        unsafe { PMIx_Data_array_construct(p, n, t) };
        p
    })
}

/// `PMIX_DATA_ARRAY_DESTRUCT`.
///
/// # Safety
/// `p` is NULL or owns its elements.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Data_array_destruct(p: *mut pmix_data_array_t) {
    guard((), || {
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or owns its
        // elements.
        if let Some(p) = unsafe { p.as_mut() } {
            // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or owns
            // its elements.
            unsafe { destruct_darray(p) }
        }
    })
}

/// `PMIX_DATA_ARRAY_FREE` / `_RELEASE`.
///
/// # Safety
/// `p` is NULL or malloc'd and owning.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Data_array_free(p: *mut pmix_data_array_t) {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or malloc'd and
    // owning.
    unsafe { PMIx_Data_array_destruct(p) };
    free(p as *mut c_void)
}

/// An info list under construction (`PMIx_Info_list_start`).
struct InfoList(Vec<pmix_info_t>);

impl Drop for InfoList {
    fn drop(&mut self) {
        for i in &mut self.0 {
            // SAFETY: every entry was built by PMIx_Info_load/xfer and owns its value.
            unsafe { destruct_value(&mut i.value) };
        }
    }
}

/// `PMIX_INFO_LIST_START`.
#[no_mangle]
pub extern "C" fn PMIx_Info_list_start() -> *mut c_void {
    guard(ptr::null_mut(), || {
        Box::into_raw(Box::new(InfoList(Vec::new()))) as *mut c_void
    })
}

/// # Safety
/// `p` is NULL or came from `PMIx_Info_list_start` and was not released.
unsafe fn list<'a>(p: *mut c_void) -> Result<&'a mut InfoList, Status> {
    // SAFETY: the caller's obligation (this function's `# Safety`): `p` is NULL or came from
    // `PMIx_Info_list_start` and was not released.
    unsafe { (p as *mut InfoList).as_mut() }.ok_or(Status::ERR_BAD_PARAM)
}

fn empty_info() -> pmix_info_t {
    pmix_info_t {
        key: [0; KEYLEN],
        flags: 0,
        value: pmix_value_t {
            type_: 0,
            data: pmix_value_data { raw: [0; 3] },
        },
    }
}

/// `PMIX_INFO_LIST_ADD`.
///
/// # Safety
/// `p` from `PMIx_Info_list_start`; `key` terminated; `value` valid for `t`.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_list_add(
    p: *mut c_void,
    key: *const c_char,
    value: *const c_void,
    t: u16,
) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` from
        // `PMIx_Info_list_start`; `key` terminated; `value` valid for `t`.
        let l = unsafe { list(p) }?;
        let mut i = empty_info();
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` from
        // `PMIx_Info_list_start`; `key` terminated; `value` valid for `t`.
        Status(unsafe { PMIx_Info_load(&mut i, key, value, t) }).into_result()?;
        l.0.push(i);
        Ok(())
    })
}

/// `PMIX_INFO_LIST_XFER`.
///
/// # Safety
/// `p` from `PMIx_Info_list_start`; `info` valid.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_list_xfer(p: *mut c_void, info: *const pmix_info_t) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` from
        // `PMIx_Info_list_start`; `info` valid.
        let l = unsafe { list(p) }?;
        let mut i = empty_info();
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` from
        // `PMIx_Info_list_start`; `info` valid.
        Status(unsafe { PMIx_Info_xfer(&mut i, info) }).into_result()?;
        l.0.push(i);
        Ok(())
    })
}

/// `PMIX_INFO_LIST_INSERT`: moves `info` into the list without copying
/// its value (the list owns it from now on); the caller's info is left
/// with an empty (`PMIX_UNDEF`) value, so destructing it afterwards is
/// harmless.
///
/// # Safety
/// `p` from `PMIx_Info_list_start`; `info` NULL or a valid, writable info.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_list_insert(p: *mut c_void, info: *mut pmix_info_t) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` from
        // `PMIx_Info_list_start`; `info` NULL or a valid, writable info.
        let (l, info) = unsafe { (list(p)?, info.as_mut().ok_or(Status::ERR_BAD_PARAM)?) };
        let mut moved = empty_info();
        std::mem::swap(&mut moved, info);
        // The caller keeps its key and flags; only the value moved.
        info.key = moved.key;
        info.flags = moved.flags;
        l.0.push(moved);
        Ok(())
    })
}

/// `PMIX_INFO_LIST_CONVERT`: a deep copy of the list as an info data array
/// (the list still needs `PMIX_INFO_LIST_RELEASE`).
///
/// # Safety
/// `p` from `PMIx_Info_list_start`; `par` writable.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_list_convert(
    p: *mut c_void,
    par: *mut pmix_data_array_t,
) -> i32 {
    status_of(|| {
        // SAFETY: the caller's obligation (this function's `# Safety`): `p` from
        // `PMIx_Info_list_start`; `par` writable.
        let (l, par) = unsafe { (list(p)?, par.as_mut().ok_or(Status::ERR_BAD_PARAM)?) };
        let src = pmix_data_array_t {
            type_: DataType::INFO.0,
            size: l.0.len(),
            array: l.0.as_mut_ptr() as *mut c_void,
        };
        // SAFETY: `src` borrows the list's valid infos; `par` receives copies.
        unsafe { copy_darray(par, &src) }.into_result()
    })
}

/// `PMIX_INFO_LIST_RELEASE`.
///
/// # Safety
/// `p` is NULL or from `PMIx_Info_list_start`, released once.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_list_release(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: by contract, `p` is the Box made by PMIx_Info_list_start.
        guard((), || drop(unsafe { Box::from_raw(p as *mut InfoList) }))
    }
}
