//! `PMIx_Argv_*` and `PMIx_Setenv`: the NULL-terminated string arrays
//! behind the `PMIX_ARGV_*` and `PMIX_SETENV` macros (argv and environment
//! arrays, `pmix_app_t` fields, query keys). Every array and string is
//! malloc'd, so C code may also free them with `free`.
//!
//! A NULL array is an empty one; a NULL string to add is
//! `PMIX_ERR_BAD_PARAM`; out of memory is `PMIX_ERR_NOMEM` (the array is
//! then unchanged).

use super::conv::str_from_c;
use super::{guard, status_of};
use crate::types::Status;
use std::ffi::{c_char, c_int, CStr};
use std::ptr;

/// Number of strings before the NULL terminator.
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array.
unsafe fn count(argv: *const *mut c_char) -> usize {
    let mut n = 0;
    if !argv.is_null() {
        // SAFETY: by contract, the array ends at a NULL entry.
        while !unsafe { *argv.add(n) }.is_null() {
            n += 1;
        }
    }
    n
}

/// malloc'd copy of a terminated C string.
///
/// # Safety
/// `s` is terminated.
unsafe fn dup(s: *const c_char) -> Result<*mut c_char, Status> {
    // SAFETY: `s` is NUL-terminated (the `# Safety` contract).
    let p = unsafe { libc::strdup(s) };
    if p.is_null() {
        Err(Status::ERR_NOMEM)
    } else {
        Ok(p)
    }
}

/// Inserts a copy of `arg` at `at` (0: front, count: back).
///
/// # Safety
/// `argv` is NULL or points to NULL or a malloc'd NULL-terminated array;
/// `arg` is NULL or terminated.
unsafe fn insert(
    argv: *mut *mut *mut c_char,
    arg: *const c_char,
    front: bool,
) -> Result<(), Status> {
    if argv.is_null() || arg.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: `argv` was checked non-NULL and is writable (the `# Safety` contract).
    let old = unsafe { *argv };
    // SAFETY: `old` is NULL or a NULL-terminated array (the `# Safety` contract).
    let n = unsafe { count(old) };
    // SAFETY: `arg` was checked non-NULL and is NUL-terminated (the `# Safety` contract).
    let s = unsafe { dup(arg) }?;
    // SAFETY: `old` is NULL or malloc'd; realloc to n + 2 pointers.
    let new = unsafe { libc::realloc(old.cast(), (n + 2) * size_of::<*mut c_char>()) }
        as *mut *mut c_char;
    if new.is_null() {
        // SAFETY: `s` came from strdup.
        unsafe { libc::free(s.cast()) };
        return Err(Status::ERR_NOMEM);
    }
    // SAFETY: `new` has room for n + 2 entries, the first n of them the
    // old strings.
    unsafe {
        if front {
            ptr::copy(new, new.add(1), n);
            *new = s;
        } else {
            *new.add(n) = s;
        }
        *new.add(n + 1) = ptr::null_mut();
        *argv = new;
    }
    Ok(())
}

/// `PMIx_Argv_append_nosize`: appends a copy of `arg` to `*argv`.
///
/// # Safety
/// See [`insert`].
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_append_nosize(
    argv: *mut *mut *mut c_char,
    arg: *const c_char,
) -> i32 {
    // SAFETY: forwarded contract of `insert` (see `# Safety`).
    status_of(|| unsafe { insert(argv, arg, false) })
}

/// `PMIx_Argv_prepend_nosize`: puts a copy of `arg` first.
///
/// # Safety
/// See [`insert`].
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_prepend_nosize(
    argv: *mut *mut *mut c_char,
    arg: *const c_char,
) -> i32 {
    // SAFETY: forwarded contract of `insert` (see `# Safety`).
    status_of(|| unsafe { insert(argv, arg, true) })
}

/// `PMIx_Argv_append_unique_nosize`: appends a copy of `arg` unless an
/// equal string is there already (then `PMIX_SUCCESS`, nothing added).
///
/// # Safety
/// See [`insert`].
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_append_unique_nosize(
    argv: *mut *mut *mut c_char,
    arg: *const c_char,
) -> i32 {
    status_of(|| {
        if argv.is_null() || arg.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: by contract, `*argv` is NULL or a terminated array of
        // terminated strings, and `arg` is terminated.
        let present = unsafe {
            let a = *argv;
            (0..count(a)).any(|k| CStr::from_ptr(*a.add(k)) == CStr::from_ptr(arg))
        };
        if present {
            return Ok(());
        }
        // SAFETY: forwarded contract of `insert` (see `# Safety`).
        unsafe { insert(argv, arg, false) }
    })
}

/// `PMIx_Argv_free`: frees every string and the array (NULL: nothing).
///
/// # Safety
/// `argv` is NULL or a malloc'd NULL-terminated array of malloc'd strings.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_free(argv: *mut *mut c_char) {
    guard((), || {
        if argv.is_null() {
            return;
        }
        // SAFETY: `argv` is non-NULL, NULL-terminated, and it and its strings were malloc'd (the `# Safety` contract); each is freed once.
        unsafe {
            for k in 0..count(argv) {
                libc::free((*argv.add(k)).cast());
            }
            libc::free(argv.cast());
        }
    })
}

/// `PMIx_Argv_count`: the number of strings (NULL: 0).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_count(argv: *mut *mut c_char) -> c_int {
    guard(0, || {
        // SAFETY: the caller passes NULL or a NULL-terminated array.
        let n = unsafe { count(argv) };
        c_int::try_from(n).unwrap_or(c_int::MAX)
    })
}

/// A malloc'd NULL-terminated array of malloc'd copies of `parts`; NULL
/// when `parts` is empty or memory runs out.
fn to_argv<'a>(parts: impl Iterator<Item = &'a [u8]>) -> *mut *mut c_char {
    let mut out: *mut *mut c_char = ptr::null_mut();
    for p in parts {
        let mut s = p.to_vec();
        s.push(0);
        // SAFETY: `out` is NULL or an array built here; `s` is terminated.
        if unsafe { insert(&mut out, s.as_ptr().cast(), false) }.is_err() {
            // SAFETY: built here.
            unsafe { PMIx_Argv_free(out) };
            return ptr::null_mut();
        }
    }
    out
}

/// # Safety
/// `src` NULL or terminated.
unsafe fn split(src: *const c_char, delimiter: c_int, keep_empty: bool) -> *mut *mut c_char {
    guard(ptr::null_mut(), || {
        if src.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: `src` is non-NULL here and NUL-terminated (the caller's contract).
        let bytes = unsafe { CStr::from_ptr(src) }.to_bytes();
        let d = delimiter as u8;
        to_argv(
            bytes
                .split(|&b| b == d)
                .filter(|p| keep_empty || !p.is_empty()),
        )
    })
}

/// `PMIx_Argv_split`: the parts of `src` between `delimiter`s, empty parts
/// dropped; NULL for NULL or an empty result.
///
/// # Safety
/// `src` NULL or terminated.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_split(src: *const c_char, delimiter: c_int) -> *mut *mut c_char {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    guard(ptr::null_mut(), || unsafe { split(src, delimiter, false) })
}

/// `PMIx_Argv_split_with_empty`: as `PMIx_Argv_split`, keeping empty parts.
///
/// # Safety
/// `src` NULL or terminated.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_split_with_empty(
    src: *const c_char,
    delimiter: c_int,
) -> *mut *mut c_char {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    guard(ptr::null_mut(), || unsafe { split(src, delimiter, true) })
}

/// `PMIx_Argv_join`: the strings joined by `delimiter`, malloc'd; an empty
/// or NULL array gives `""`.
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of terminated strings.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_join(argv: *mut *mut c_char, delimiter: c_int) -> *mut c_char {
    guard(ptr::null_mut(), || {
        let mut out: Vec<u8> = Vec::new();
        // SAFETY: `argv` is NULL or a NULL-terminated array (the `# Safety` contract).
        for k in 0..unsafe { count(argv) } {
            if k > 0 {
                out.push(delimiter as u8);
            }
            // SAFETY: k < count, so entry k is a NUL-terminated string (the `# Safety` contract).
            out.extend_from_slice(unsafe { CStr::from_ptr(*argv.add(k)) }.to_bytes());
        }
        out.push(0);
        // SAFETY: `out` is terminated.
        unsafe { dup(out.as_ptr().cast()) }.unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_Argv_copy`: a deep copy (NULL for NULL).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of terminated strings.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Argv_copy(argv: *mut *mut c_char) -> *mut *mut c_char {
    guard(ptr::null_mut(), || {
        // SAFETY: `argv` is NULL or a NULL-terminated array (the `# Safety` contract).
        let n = unsafe { count(argv) };
        // SAFETY: by contract, entries 0..n are terminated strings.
        to_argv((0..n).map(|k| unsafe { CStr::from_ptr(*argv.add(k)) }.to_bytes()))
    })
}

/// `PMIx_Setenv`: sets `name=value` in the environment array `*env`
/// (replacing an existing entry only when `overwrite`; else
/// `PMIX_ERR_EXISTS`). A NULL `value` sets `name=`. NULL `name` or `env`:
/// `PMIX_ERR_BAD_PARAM`.
///
/// # Safety
/// `name`, `value` NULL or terminated; `env` NULL or pointing to NULL or a
/// malloc'd NULL-terminated array of malloc'd strings.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Setenv(
    name: *const c_char,
    value: *const c_char,
    overwrite: bool,
    env: *mut *mut *mut c_char,
) -> i32 {
    status_of(|| {
        if env.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: `name` is NULL or NUL-terminated (the `# Safety` contract); str_from_c checks for NULL.
        let name = unsafe { str_from_c(name) }?;
        let value = if value.is_null() {
            ""
        } else {
            // SAFETY: `value` is NULL or NUL-terminated (the `# Safety` contract); str_from_c checks for NULL.
            unsafe { str_from_c(value) }?
        };
        // Both parts came from C strings, so the entry holds no NUL and this
        // cannot fail; the status is the only cause a C caller could get.
        let entry =
            std::ffi::CString::new(format!("{name}={value}")).map_err(|_| Status::ERR_BAD_PARAM)?;
        let prefix = format!("{name}=");
        // SAFETY: by contract, `*env` is NULL or a terminated array of
        // terminated, malloc'd strings.
        unsafe {
            let a = *env;
            for k in 0..count(a) {
                if CStr::from_ptr(*a.add(k))
                    .to_bytes()
                    .starts_with(prefix.as_bytes())
                {
                    if !overwrite {
                        return Err(Status::ERR_EXISTS);
                    }
                    let s = dup(entry.as_ptr())?;
                    libc::free((*a.add(k)).cast());
                    *a.add(k) = s;
                    return Ok(());
                }
            }
            insert(env, entry.as_ptr(), false)
        }
    })
}
