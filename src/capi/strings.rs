//! The Standard's "string" helpers: a readable name for a data type, range,
//! state, scope, directive, channel, ... (`PMIx_*_string`), the text of a
//! value or info (`PMIx_Value_string`, `PMIx_Info_string`,
//! `PMIx_Data_print`), attribute name/key look-ups, `PMIx_Value_compare`,
//! and `PMIx_Progress`.
//!
//! The names are OpenPMIx 4.2.2's output strings where it has one
//! (`PMIx_Data_type_string(PMIX_STRING)` is `"PMIX_STRING"`,
//! `PMIx_Data_range_string(PMIX_RANGE_LOCAL)` is `"AVAIL ON LOCAL NODE
//! ONLY"`); docs/openpmix-differences.md lists where they differ. A value
//! outside the Standard's gives an "UNKNOWN" string, never NULL; the
//! functions returning `const char *` return static strings, the ones
//! returning `char *` a malloc'd string the caller frees (NULL only when
//! memory runs out).

use super::cmem::strdup;
use super::ctypes::*;
use super::{guard, status_of};
use crate::types::{attrs, names, Status};
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::OnceLock;

/// A static C string from a literal table (the tables below hold only
/// NUL-free literals, so this cannot fail).
macro_rules! cstr_table {
    ($v:expr, $unknown:literal, { $($k:pat => $s:literal,)* }) => {
        match $v {
            $($k => concat!($s, "\0"),)*
            _ => concat!($unknown, "\0"),
        }
        .as_ptr() as *const c_char
    };
}

/// The Standard's name of data type `t`, or None.
fn data_type_name(t: u16) -> Option<&'static str> {
    Some(match t {
        0 => "PMIX_UNDEF",
        1 => "PMIX_BOOL",
        2 => "PMIX_BYTE",
        3 => "PMIX_STRING",
        4 => "PMIX_SIZE",
        5 => "PMIX_PID",
        6 => "PMIX_INT",
        7 => "PMIX_INT8",
        8 => "PMIX_INT16",
        9 => "PMIX_INT32",
        10 => "PMIX_INT64",
        11 => "PMIX_UINT",
        12 => "PMIX_UINT8",
        13 => "PMIX_UINT16",
        14 => "PMIX_UINT32",
        15 => "PMIX_UINT64",
        16 => "PMIX_FLOAT",
        17 => "PMIX_DOUBLE",
        18 => "PMIX_TIMEVAL",
        19 => "PMIX_TIME",
        20 => "PMIX_STATUS",
        21 => "PMIX_VALUE",
        22 => "PMIX_PROC",
        23 => "PMIX_APP",
        24 => "PMIX_INFO",
        25 => "PMIX_PDATA",
        26 => "PMIX_BUFFER",
        27 => "PMIX_BYTE_OBJECT",
        28 => "PMIX_KVAL",
        30 => "PMIX_PERSIST",
        31 => "PMIX_POINTER",
        32 => "PMIX_SCOPE",
        33 => "PMIX_DATA_RANGE",
        34 => "PMIX_COMMAND",
        35 => "PMIX_INFO_DIRECTIVES",
        36 => "PMIX_DATA_TYPE",
        37 => "PMIX_PROC_STATE",
        38 => "PMIX_PROC_INFO",
        39 => "PMIX_DATA_ARRAY",
        40 => "PMIX_PROC_RANK",
        41 => "PMIX_QUERY",
        42 => "PMIX_COMPRESSED_STRING",
        43 => "PMIX_ALLOC_DIRECTIVE",
        // The pre-v4 info-array type, which OpenPMIx still names.
        44 => "PMIX_INFO_ARRAY",
        45 => "PMIX_IOF_CHANNEL",
        46 => "PMIX_ENVAR",
        47 => "PMIX_COORD",
        48 => "PMIX_REGATTR",
        49 => "PMIX_REGEX",
        50 => "PMIX_JOB_STATE",
        51 => "PMIX_LINK_STATE",
        52 => "PMIX_PROC_CPUSET",
        53 => "PMIX_GEOMETRY",
        54 => "PMIX_DEVICE_DIST",
        55 => "PMIX_ENDPOINT",
        56 => "PMIX_TOPO",
        57 => "PMIX_DEVTYPE",
        58 => "PMIX_LOCTYPE",
        59 => "PMIX_COMPRESSED_BYTE_OBJECT",
        60 => "PMIX_PROC_NSPACE",
        61 => "PMIX_PROC_STATS",
        62 => "PMIX_DISK_STATS",
        63 => "PMIX_NET_STATS",
        64 => "PMIX_NODE_STATS",
        65 => "PMIX_DATA_BUFFER",
        66 => "PMIX_STOR_MEDIUM",
        67 => "PMIX_STOR_ACCESS",
        68 => "PMIX_STOR_PERSIST",
        69 => "PMIX_STOR_ACCESS_TYPE",
        _ => return None,
    })
}

/// Interns `s` as a static C string (a handful of distinct names).
fn interned(s: &str) -> *const c_char {
    static NAMES: OnceLock<std::sync::Mutex<HashMap<String, &'static CStr>>> = OnceLock::new();
    let m = NAMES.get_or_init(Default::default);
    let mut m = super::lock(m);
    if let Some(c) = m.get(s) {
        return c.as_ptr();
    }
    let c: &'static CStr = Box::leak(
        CString::new(s.replace('\0', ""))
            .unwrap_or_default()
            .into_boxed_c_str(),
    );
    m.insert(s.to_owned(), c);
    c.as_ptr()
}

/// `PMIx_Data_type_string`: `"PMIX_STRING"` for `PMIX_STRING`; an unknown
/// type gives `"UNKNOWN"`.
#[no_mangle]
pub extern "C" fn PMIx_Data_type_string(t: u16) -> *const c_char {
    guard(c"UNKNOWN".as_ptr(), || {
        data_type_name(t).map_or(c"UNKNOWN".as_ptr(), interned)
    })
}

/// `PMIx_Data_range_string`.
#[no_mangle]
pub extern "C" fn PMIx_Data_range_string(range: u8) -> *const c_char {
    guard(c"UNKNOWN".as_ptr(), || {
        cstr_table!(range, "UNKNOWN", {
            0 => "UNDEFINED",
            1 => "INTENDED FOR HOST RESOURCE MANAGER ONLY",
            2 => "AVAIL ON LOCAL NODE ONLY",
            3 => "AVAIL TO PROCESSES IN SAME JOB ONLY",
            4 => "AVAIL TO PROCESSES IN SAME ALLOCATION ONLY",
            5 => "AVAIL TO ANYONE WITH AUTHORIZATION",
            6 => "AVAIL AS SPECIFIED IN DIRECTIVES",
            7 => "AVAIL ON LOCAL PROC ONLY",
            255 => "INVALID",
        })
    })
}

/// `PMIx_Proc_state_string`.
#[no_mangle]
pub extern "C" fn PMIx_Proc_state_string(state: u8) -> *const c_char {
    guard(c"UNKNOWN STATE".as_ptr(), || {
        cstr_table!(state, "UNKNOWN STATE", {
            0 => "UNDEFINED",
            1 => "PREPPED FOR LAUNCH",
            2 => "LAUNCH UNDERWAY",
            3 => "PROC READY FOR RESTART",
            4 => "PROC MARKED FOR TERMINATION",
            5 => "PROC EXECUTING",
            6 => "PROC HAS CONNECTED TO LOCAL PMIX SERVER",
            15 => "PROC HAS NOT TERMINATED",
            20 => "PROC HAS TERMINATED",
            50 => "PROC ERROR",
            51 => "PROC KILLED BY CMD",
            52 => "PROC ABNORMALLY ABORTED",
            53 => "PROC FAILED TO START",
            54 => "PROC ABORTED BY SIGNAL",
            55 => "PROC TERMINATED WITHOUT CALLING PMIx_Finalize",
            56 => "PROC LOST COMMUNICATION",
            57 => "PROC SENSOR BOUND EXCEEDED",
            58 => "PROC CALLED PMIx_Abort",
            59 => "PROC FAILED TO REPORT HEARTBEAT",
            60 => "PROC WAITING TO MIGRATE",
            61 => "PROC CANNOT BE RESTARTED",
            62 => "PROC TERMINATED WITH NON-ZERO STATUS",
            63 => "PROC FAILED TO LAUNCH",
        })
    })
}

/// `PMIx_Job_state_string`.
#[no_mangle]
pub extern "C" fn PMIx_Job_state_string(state: u8) -> *const c_char {
    guard(c"UNKNOWN".as_ptr(), || {
        cstr_table!(state, "UNKNOWN", {
            0 => "UNDEFINED",
            1 => "PREPPED FOR LAUNCH",
            2 => "LAUNCHING",
            3 => "RUNNING",
            4 => "SUSPENDED",
            5 => "CONNECTED",
            15 => "UNTERMINATED",
            20 => "TERMINATED",
            50 => "TERMINATED WITH ERROR",
        })
    })
}

/// `PMIx_Alloc_directive_string` (OpenPMIx 4.2.2 has no name for
/// `PMIX_ALLOC_EXTERNAL`: "UNSPECIFIED"; fastpmix says "EXTERNAL").
#[no_mangle]
pub extern "C" fn PMIx_Alloc_directive_string(directive: u8) -> *const c_char {
    guard(c"UNSPECIFIED".as_ptr(), || {
        cstr_table!(directive, "UNSPECIFIED", {
            1 => "NEW",
            2 => "EXTEND",
            3 => "RELEASE",
            4 => "REACQUIRE",
            128 => "EXTERNAL",
        })
    })
}

/// `PMIx_Scope_string`.
#[no_mangle]
pub extern "C" fn PMIx_Scope_string(scope: u8) -> *const c_char {
    guard(c"UNKNOWN SCOPE".as_ptr(), || {
        cstr_table!(scope, "UNKNOWN SCOPE", {
            0 => "UNDEFINED",
            1 => "SHARE ON LOCAL NODE ONLY",
            2 => "SHARE ON REMOTE NODES ONLY",
            3 => "SHARE ACROSS ALL NODES",
            4 => "STORE INTERNALLY",
        })
    })
}

/// `PMIx_Persistence_string`.
#[no_mangle]
pub extern "C" fn PMIx_Persistence_string(persist: u8) -> *const c_char {
    guard(c"UNKNOWN PERSISTENCE".as_ptr(), || {
        cstr_table!(persist, "UNKNOWN PERSISTENCE", {
            0 => "INDEFINITE",
            1 => "DELETE ON FIRST ACCESS",
            2 => "RETAIN UNTIL PUBLISHING PROCESS TERMINATES",
            3 => "RETAIN UNTIL APPLICATION OF PUBLISHING PROCESS TERMINATES",
            4 => "RETAIN UNTIL ALLOCATION OF PUBLISHING PROCESS TERMINATES",
            255 => "INVALID",
        })
    })
}

/// `PMIx_Link_state_string`.
#[no_mangle]
pub extern "C" fn PMIx_Link_state_string(state: u8) -> *const c_char {
    guard(c"UNKNOWN".as_ptr(), || {
        cstr_table!(state, "UNKNOWN", {
            1 => "INACTIVE",
            2 => "ACTIVE",
        })
    })
}

/// `PMIx_Device_type_string` (one device type; a combination or an
/// unknown bit gives "UNKNOWN").
#[no_mangle]
pub extern "C" fn PMIx_Device_type_string(t: u64) -> *const c_char {
    guard(c"UNKNOWN".as_ptr(), || {
        cstr_table!(t, "UNKNOWN", {
            0x01 => "BLOCK",
            0x02 => "GPU",
            0x04 => "NETWORK",
            0x08 => "OPENFABRICS",
            0x10 => "DMA",
            0x20 => "COPROCESSOR",
        })
    })
}

/// `PMIx_Value_comparison_string`.
#[no_mangle]
pub extern "C" fn PMIx_Value_comparison_string(cmp: i32) -> *const c_char {
    guard(c"UNKNOWN VALUE".as_ptr(), || {
        cstr_table!(cmp, "UNKNOWN VALUE", {
            0 => "EQUAL",
            1 => "VALUE1 GREATER",
            2 => "VALUE2 GREATER",
            3 => "DIFFERENT TYPES",
            4 => "INCOMPATIBLE OBJECTS",
            5 => "COMPARISON NOT AVAILABLE",
        })
    })
}

/// `PMIx_IOF_channel_string`: the channels set in `channel`, each followed
/// by a space (`"STDOUT STDERR "`), or `"NONE"`.
#[no_mangle]
pub extern "C" fn PMIx_IOF_channel_string(channel: u16) -> *const c_char {
    guard(c"NONE".as_ptr(), || {
        let mut s = String::new();
        for (bit, name) in [(1, "STDIN"), (2, "STDOUT"), (4, "STDERR"), (8, "STDDIAG")] {
            if channel & bit != 0 {
                s.push_str(name);
                s.push(' ');
            }
        }
        if s.is_empty() {
            c"NONE".as_ptr()
        } else {
            interned(&s)
        }
    })
}

/// The text of info flags: `"QUALIFIER"`, or `"REQUIRED"`/`"OPTIONAL"`
/// followed by `":PROCESSED"`, `":END"` and `":PERSISTENT"` when set.
fn directives_text(d: u32) -> String {
    if d & 0x8 != 0 {
        return "QUALIFIER".into();
    }
    let mut s = String::from(if d & 0x1 != 0 { "REQUIRED" } else { "OPTIONAL" });
    for (bit, name) in [(0x4, ":PROCESSED"), (0x2, ":END"), (0x10, ":PERSISTENT")] {
        if d & bit != 0 {
            s.push_str(name);
        }
    }
    s
}

/// `PMIx_Info_directives_string`: malloc'd; the caller frees it.
#[no_mangle]
pub extern "C" fn PMIx_Info_directives_string(directives: u32) -> *mut c_char {
    guard(ptr::null_mut(), || strdup(&directives_text(directives)))
}

/// `PMIx_Get_attribute_string`: the key string of an attribute name
/// (`"PMIX_NODE_LIST"` → `"pmix.nlist"`). A name that is not one of the
/// Standard's gives the argument itself back, as OpenPMIx does (NULL gives
/// NULL).
///
/// # Safety
/// `attribute` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Get_attribute_string(attribute: *const c_char) -> *const c_char {
    guard(ptr::null(), || {
        // SAFETY: `attribute` is NULL or NUL-terminated (the `# Safety` contract); str_from_c checks for NULL.
        let Ok(name) = (unsafe { super::conv::str_from_c(attribute) }) else {
            return attribute;
        };
        attribute_table()
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(attribute, |(_, k)| interned(k))
    })
}

/// `PMIx_Get_attribute_name`: the attribute name of a key string
/// (`"pmix.nlist"` → `"PMIX_NODE_LIST"`). An unknown key gives the
/// argument itself back, as OpenPMIx does; NULL gives NULL.
///
/// # Safety
/// `attrstring` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Get_attribute_name(attrstring: *const c_char) -> *const c_char {
    guard(ptr::null(), || {
        // SAFETY: `attrstring` is NULL or NUL-terminated (the `# Safety` contract); str_from_c checks for NULL.
        let Ok(key) = (unsafe { super::conv::str_from_c(attrstring) }) else {
            return attrstring;
        };
        attribute_table()
            .iter()
            .find(|(_, k)| *k == key)
            .map_or(attrstring, |(n, _)| interned(n))
    })
}

/// (name, key) of every attribute the headers declare.
fn attribute_table() -> &'static [(&'static str, &'static str)] {
    static T: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    T.get_or_init(|| {
        attrs::ALL
            .iter()
            .map(|a| (a.name, a.key))
            .chain(names::DECLARED_KEYS.iter().copied())
            .collect()
    })
}

/// A C string field as text (`NULL` for a null pointer).
///
/// # Safety
/// `p` is NULL or NUL-terminated.
unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        "NULL".into()
    } else {
        // SAFETY: `p` is non-NULL here and NUL-terminated (the `# Safety` contract).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `nspace:rank` with the special ranks by name.
fn proc_text(p: &pmix_proc_t) -> String {
    format!("{}:{}", fixed_text(&p.nspace), rank_text(p.rank))
}

/// The text of a fixed-size, NUL-padded C array (a key or namespace).
fn fixed_text(a: &[c_char]) -> String {
    let b: Vec<u8> = a
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&b).into_owned()
}

fn rank_text(r: u32) -> String {
    match r {
        u32::MAX => "PMIX_RANK_UNDEF".into(),
        0xffff_fffe => "PMIX_RANK_WILDCARD".into(),
        0xffff_fffd => "PMIX_RANK_LOCAL_NODE".into(),
        0xffff_fffc => "PMIX_RANK_INVALID".into(),
        0xffff_fffb => "PMIX_RANK_LOCAL_PEERS".into(),
        r => r.to_string(),
    }
}

/// A static C string's text.
fn static_text(p: *const c_char) -> String {
    // SAFETY: every `PMIx_*_string` above returns a static, terminated
    // string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The value text of a scalar or enumerated datum of type `t` at `src`,
/// or None for a type printed otherwise (or not at all).
///
/// # Safety
/// `src` points to a valid datum of type `t` (for `PMIX_STRING`, `src`
/// is the string itself, NULL or terminated).
unsafe fn scalar_text(src: *const c_void, t: u16) -> Option<String> {
    if t == 3 {
        // SAFETY: for PMIX_STRING `src` is the string, NULL or terminated
        // (the `# Safety` contract).
        return Some(unsafe { c_text(src.cast()) });
    }
    if src.is_null() {
        return None;
    }
    // SAFETY: `src` points to a datum of type `t` (the `# Safety`
    // contract); each arm reads exactly that type.
    Some(unsafe {
        match t {
            1 => (if *(src as *const bool) {
                "TRUE"
            } else {
                "FALSE"
            })
            .to_string(),
            2 | 12 => (*(src as *const u8)).to_string(),
            4 => (*(src as *const usize)).to_string(),
            5 | 6 | 9 => (*(src as *const i32)).to_string(),
            7 => (*(src as *const i8)).to_string(),
            8 => (*(src as *const i16)).to_string(),
            10 => (*(src as *const i64)).to_string(),
            11 | 14 => (*(src as *const u32)).to_string(),
            13 => (*(src as *const u16)).to_string(),
            15 => (*(src as *const u64)).to_string(),
            16 => format!("{:.6}", *(src as *const f32)),
            17 => format!("{:.6}", *(src as *const f64)),
            18 => {
                let tv = &*(src as *const libc::timeval);
                format!("{}.{:06}", tv.tv_sec, tv.tv_usec)
            }
            19 => (*(src as *const i64)).to_string(),
            20 => static_text(super::client::PMIx_Error_string(*(src as *const i32))),
            30 => static_text(PMIx_Persistence_string(*(src as *const u8))),
            32 => static_text(PMIx_Scope_string(*(src as *const u8))),
            33 => static_text(PMIx_Data_range_string(*(src as *const u8))),
            35 => directives_text(*(src as *const u32)),
            36 => static_text(PMIx_Data_type_string(*(src as *const u16))),
            37 => static_text(PMIx_Proc_state_string(*(src as *const u8))),
            40 => rank_text(*(src as *const u32)),
            43 => static_text(PMIx_Alloc_directive_string(*(src as *const u8))),
            45 => static_text(PMIx_IOF_channel_string(*(src as *const u16))),
            50 => static_text(PMIx_Job_state_string(*(src as *const u8))),
            _ => return None,
        }
    })
}

/// What `PMIx_Data_print` prints for the datum of type `t` at `src`, in
/// OpenPMIx 4.2.2's layout: `{prefix}Data type: PMIX_INT\tValue: -5`;
/// `{prefix}PROC: ns:3`; `{prefix}PMIX_VALUE: ` and the value's datum
/// with prefix " "; an info as three lines (`KEY: <attribute name>`, its
/// directives, its value). None for a type it does not print.
///
/// # Safety
/// As [`scalar_text`].
unsafe fn print_datum(prefix: &str, src: *const c_void, t: u16) -> Option<String> {
    let ty = static_text(PMIx_Data_type_string(t));
    if t != 3 && src.is_null() {
        return None;
    }
    // SAFETY: `src` is non-NULL (or a string) and points to a datum of
    // type `t` (the `# Safety` contract); each arm reads that type.
    unsafe {
        Some(match t {
            21 => format!(
                "{prefix}PMIX_VALUE: {}",
                value_print(" ", &*(src as *const pmix_value_t))
            ),
            22 => format!("{prefix}PROC: {}", proc_text(&*(src as *const pmix_proc_t))),
            24 => {
                let i = &*(src as *const pmix_info_t);
                let key = fixed_text(&i.key);
                let name = attribute_table()
                    .iter()
                    .find(|(_, k)| *k == key)
                    .map_or(key.clone(), |(n, _)| n.to_string());
                format!(
                    "{prefix}KEY: {name}\n{prefix}\t{prefix}Data type: PMIX_INFO_DIRECTIVES\tValue: \
                     {}\n{prefix}\t{prefix}PMIX_VALUE: {}",
                    directives_text(i.flags),
                    value_print(" ", &i.value)
                )
            }
            27 => format!(
                "{prefix}Data type: PMIX_BYTE_OBJECT\tSize: {}",
                (*(src as *const pmix_byte_object_t)).size
            ),
            31 => format!(
                "{prefix}Data type: PMIX_POINTER\tAddress: {:p}",
                *(src as *const *const c_void)
            ),
            _ => format!("{prefix}Data type: {ty}\tValue: {}", scalar_text(src, t)?),
        })
    }
}

/// The datum a value holds, printed with `prefix` (its pointer members
/// followed, NULL printed as `NULL`).
///
/// # Safety
/// `v` is a valid value (its pointers valid for its type, or NULL).
unsafe fn value_print(prefix: &str, v: &pmix_value_t) -> String {
    let t = v.type_;
    let ty = static_text(PMIx_Data_type_string(t));
    let line = |text: String| format!("{prefix}Data type: {ty}\tValue: {text}");
    match t {
        0 => line("NONE".into()),
        // SAFETY: the union's string member, NULL or terminated (`v` is
        // valid).
        3 => line(unsafe { c_text(v.data.string) }),
        // SAFETY: the union's proc pointer, NULL or valid (`v` is valid).
        22 => match unsafe { v.data.proc_.as_ref() } {
            Some(p) => format!("{prefix}PROC: {}", proc_text(p)),
            None => line("NULL".into()),
        },
        // SAFETY: the union's proc-info pointer, NULL or valid.
        38 => line(match unsafe { v.data.pinfo.as_ref() } {
            Some(p) => format!(
                "{} host {} exe {} pid {} state {}",
                proc_text(&p.proc_),
                // SAFETY: strings of a valid proc info, NULL or terminated.
                unsafe { c_text(p.hostname) },
                // SAFETY: as above.
                unsafe { c_text(p.executable_name) },
                p.pid,
                static_text(PMIx_Proc_state_string(p.state))
            ),
            None => "NULL".into(),
        }),
        // SAFETY: the union's data-array pointer, NULL or valid.
        39 => line(match unsafe { v.data.darray.as_ref() } {
            Some(a) => format!(
                "{} elements of type {}",
                a.size,
                static_text(PMIx_Data_type_string(a.type_))
            ),
            None => "NULL".into(),
        }),
        46 => {
            // SAFETY: the union's envar member (`v` is valid).
            let e = unsafe { &v.data.envar };
            line(format!(
                "{}={} (separator {:?})",
                // SAFETY: the envar's strings are NULL or terminated.
                unsafe { c_text(e.envar) },
                // SAFETY: as above.
                unsafe { c_text(e.value) },
                e.separator as u8 as char
            ))
        }
        // SAFETY: the union's nspace pointer, NULL or a 256-byte array.
        60 => line(match unsafe { v.data.nspace.as_ref() } {
            Some(ns) => fixed_text(ns),
            None => "NULL".into(),
        }),
        _ => {
            let data = ptr::addr_of!(v.data) as *const c_void;
            // SAFETY: every other type the union holds in place (scalars,
            // timeval, byte object, pointer) at `data`; print_datum reads
            // exactly type `t` there.
            unsafe { print_datum(prefix, data, t) }.unwrap_or_else(|| line("UNPRINTABLE".into()))
        }
    }
}

/// `PMIx_Value_string`: malloc'd text of a value, as OpenPMIx 4.2.2 prints
/// it (`" PMIX_VALUE:  Data type: PMIX_STRING\tValue: hello"`); the caller
/// frees it. NULL: `"NULL"`.
///
/// # Safety
/// `value` is NULL or a valid value.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_string(value: *const pmix_value_t) -> *mut c_char {
    guard(ptr::null_mut(), || {
        if value.is_null() {
            return strdup("NULL");
        }
        // SAFETY: `value` is a valid value (the `# Safety` contract).
        strdup(&unsafe { print_datum(" ", value.cast(), 21) }.unwrap_or_default())
    })
}

/// `PMIx_Info_string`: malloc'd text of an info (its attribute name or
/// key, directives and value, on three lines as OpenPMIx 4.2.2 prints
/// them); the caller frees it. NULL: `"NULL"`.
///
/// # Safety
/// `info` is NULL or a valid info.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Info_string(info: *const pmix_info_t) -> *mut c_char {
    guard(ptr::null_mut(), || {
        if info.is_null() {
            return strdup("NULL");
        }
        // SAFETY: `info` is a valid info (the `# Safety` contract).
        strdup(&unsafe { print_datum(" ", info.cast(), 24) }.unwrap_or_default())
    })
}

/// `PMIx_Data_print`: `*output` = malloc'd text of the datum of type `t`
/// at `src` (for `PMIX_STRING`, `src` is the string), each line starting
/// with `prefix` (NULL: none), in OpenPMIx 4.2.2's layout. NULL `output`
/// or `src`: `PMIX_ERR_BAD_PARAM`; a type it does not print (`PMIX_APP`,
/// `PMIX_QUERY`, the structures of unimplemented chapters, an unknown
/// type): `PMIX_ERR_NOT_SUPPORTED`; `*output` is then untouched.
///
/// # Safety
/// `output` is NULL or writable; `prefix` NULL or terminated; `src` NULL
/// or a valid datum of type `t`.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Data_print(
    output: *mut *mut c_char,
    prefix: *mut c_char,
    src: *mut c_void,
    t: u16,
) -> i32 {
    status_of(|| {
        if output.is_null() || (src.is_null() && t != 3) {
            return Err(Status::ERR_BAD_PARAM);
        }
        let prefix = if prefix.is_null() {
            String::new()
        } else {
            // SAFETY: `prefix` is non-NULL and NUL-terminated (the
            // `# Safety` contract).
            unsafe { c_text(prefix) }
        };
        // SAFETY: `src` is a valid datum of type `t` (the `# Safety`
        // contract).
        let text = unsafe { print_datum(&prefix, src, t) }.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let p = strdup(&text);
        if p.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        // SAFETY: `output` is non-NULL and writable (the `# Safety`
        // contract).
        unsafe { *output = p };
        Ok(())
    })
}

/// `PMIx_Value_compare` (`pmix_value_cmp_t`): `PMIX_EQUAL` (0) for equal
/// values, `PMIX_VALUE1_GREATER`/`PMIX_VALUE2_GREATER` (1/2) for numbers,
/// strings (byte order) and booleans, `PMIX_VALUE_TYPE_DIFFERENT` (3) for
/// different types, `PMIX_VALUE_COMPARISON_NOT_AVAIL` (5) for NULL or a
/// type fastpmix does not carry.
///
/// # Safety
/// `v1`, `v2` NULL or valid values.
#[no_mangle]
pub unsafe extern "C" fn PMIx_Value_compare(v1: *mut pmix_value_t, v2: *mut pmix_value_t) -> i32 {
    use crate::types::Value as V;
    use std::cmp::Ordering;
    const NOT_AVAIL: i32 = 5;
    guard(NOT_AVAIL, || {
        // SAFETY: `v1` is NULL or points to a valid, initialised structure (the `# Safety` contract).
        let (Some(a), Some(b)) = (unsafe { v1.as_ref() }, unsafe { v2.as_ref() }) else {
            return NOT_AVAIL;
        };
        if a.type_ != b.type_ {
            return 3;
        }
        // SAFETY: by contract, valid values.
        let (Ok(a), Ok(b)) = (unsafe { super::conv::value_from_c(a) }, unsafe {
            super::conv::value_from_c(b)
        }) else {
            return NOT_AVAIL;
        };
        if a == b {
            return 0;
        }
        let ord = match (&a, &b) {
            (V::Bool(x), V::Bool(y)) => x.partial_cmp(y),
            (V::String(x), V::String(y)) => x.partial_cmp(y),
            (V::Float(x), V::Float(y)) => x.partial_cmp(y),
            (V::Double(x), V::Double(y)) => x.partial_cmp(y),
            _ => match (as_i128(&a), as_i128(&b)) {
                (Some(x), Some(y)) => x.partial_cmp(&y),
                _ => None,
            },
        };
        match ord {
            Some(Ordering::Greater) => 1,
            Some(Ordering::Less) => 2,
            Some(Ordering::Equal) => 0,
            None => NOT_AVAIL,
        }
    })
}

fn as_i128(v: &crate::types::Value) -> Option<i128> {
    use crate::types::Value as V;
    Some(match v {
        V::Byte(x) | V::Uint8(x) => (*x).into(),
        V::Size(x) | V::Uint64(x) => (*x).into(),
        V::Pid(x) | V::Int(x) | V::Int32(x) => (*x).into(),
        V::Int8(x) => (*x).into(),
        V::Int16(x) => (*x).into(),
        V::Int64(x) | V::Time(x) => (*x).into(),
        V::Uint(x) | V::Uint32(x) => (*x).into(),
        V::Uint16(x) => (*x).into(),
        V::Status(s) => s.0.into(),
        V::Rank(r) => r.0.into(),
        _ => return None,
    })
}

/// `PMIx_Progress`: a no-op. fastpmix's progress thread always runs, so
/// there is nothing for the caller to drive.
#[no_mangle]
pub extern "C" fn PMIx_Progress() {}
