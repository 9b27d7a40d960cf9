//! The Standard's C structures, laid out as `include/pmix_common.h`
//! declares them; the asserts below are the x86_64 facts the header and
//! the ABI probe (tests/c_abi_probe.rs) check too.

#![allow(non_camel_case_types, missing_docs)]

use crate::types::DataType;
use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};

pub const NSLEN: usize = 256;
pub const KEYLEN: usize = 512;

/// `pmix_byte_object_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_byte_object_t {
    pub bytes: *mut c_char,
    pub size: usize,
}

/// `pmix_envar_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_envar_t {
    pub envar: *mut c_char,
    pub value: *mut c_char,
    pub separator: c_char,
}

/// `pmix_data_array_t`.
#[repr(C)]
pub struct pmix_data_array_t {
    pub type_: u16,
    pub size: usize,
    pub array: *mut c_void,
}

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_proc_t {
    pub nspace: [c_char; NSLEN],
    pub rank: u32,
}

/// `pmix_proc_info_t`.
#[repr(C)]
pub struct pmix_proc_info_t {
    pub proc_: pmix_proc_t,
    pub hostname: *mut c_char,
    pub executable_name: *mut c_char,
    pub pid: i32,
    pub exit_code: i32,
    pub state: u8,
}

/// `pmix_pdata_t`: a published item, its key and its publisher.
#[repr(C)]
pub struct pmix_pdata_t {
    pub proc_: pmix_proc_t,
    pub key: [c_char; KEYLEN],
    pub value: pmix_value_t,
}

/// `pmix_app_t`: one application of a spawn.
#[repr(C)]
pub struct pmix_app_t {
    pub cmd: *mut c_char,
    pub argv: *mut *mut c_char,
    pub env: *mut *mut c_char,
    pub cwd: *mut c_char,
    pub maxprocs: i32,
    pub info: *mut pmix_info_t,
    pub ninfo: usize,
}

/// `pmix_query_t`: a NULL-terminated array of keys and the qualifiers.
#[repr(C)]
pub struct pmix_query_t {
    pub keys: *mut *mut c_char,
    pub qualifiers: *mut pmix_info_t,
    pub nqual: usize,
}

/// The `data` union of `pmix_value_t` (24 bytes: the largest member is
/// `pmix_envar_t`).
#[repr(C)]
#[derive(Clone, Copy)]
pub union pmix_value_data {
    pub flag: bool,
    pub byte: u8,
    pub string: *mut c_char,
    pub size: usize,
    pub pid: i32,
    pub integer: i32,
    pub int8: i8,
    pub int16: i16,
    pub int32: i32,
    pub int64: i64,
    pub uint: u32,
    pub uint8: u8,
    pub uint16: u16,
    pub uint32: u32,
    pub uint64: u64,
    pub fval: f32,
    pub dval: f64,
    pub tv: libc::timeval,
    pub time: i64,
    pub status: i32,
    pub rank: u32,
    pub nspace: *mut [c_char; NSLEN],
    pub proc_: *mut pmix_proc_t,
    pub bo: pmix_byte_object_t,
    pub pinfo: *mut pmix_proc_info_t,
    pub darray: *mut pmix_data_array_t,
    pub ptr: *mut c_void,
    pub envar: pmix_envar_t,
    pub raw: [u64; 3],
}

/// `pmix_value_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_value_t {
    pub type_: u16,
    pub data: pmix_value_data,
}

/// `pmix_info_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_info_t {
    pub key: [c_char; KEYLEN],
    pub flags: u32,
    pub value: pmix_value_t,
}

/// `pmix_server_module_t` (4.x): 28 upcalls in the Standard's order. Only
/// the ones fastpmix calls have typed signatures here; the others are
/// opaque (fastpmix never calls them).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_server_module_t {
    pub client_connected: Option<ConnectedFn>,
    pub client_finalized: Option<ConnectedFn>,
    pub abort: Option<AbortFn>,
    pub fence_nb: Option<FenceNbFn>,
    pub direct_modex: Option<DirectModexFn>,
    pub publish: Option<PublishFn>,
    pub lookup: Option<LookupFn>,
    pub unpublish: Option<UnpublishFn>,
    pub spawn: Option<SpawnFn>,
    pub connect: Option<ConnectFn>,
    pub disconnect: Option<ConnectFn>,
    pub register_events: Option<RegisterEventsFn>,
    pub deregister_events: Option<DeregisterEventsFn>,
    pub listener: *const c_void,
    pub notify_event: Option<NotifyEventFn>,
    pub query: *const c_void,
    pub tool_connected: *const c_void,
    pub log: Option<LogFn>,
    pub allocate: Option<AllocFn>,
    pub job_control: Option<JobControlFn>,
    pub monitor: Option<MonitorFn>,
    pub get_credential: *const c_void,
    pub validate_credential: *const c_void,
    pub iof_pull: *const c_void,
    pub push_stdin: *const c_void,
    pub group: *const c_void,
    pub fabric: *const c_void,
    pub client_connected2: Option<Connected2Fn>,
}

pub type OpCb = unsafe extern "C" fn(status: i32, cbdata: *mut c_void);
pub type ReleaseCb = unsafe extern "C" fn(cbdata: *mut c_void);
pub type InfoCb = unsafe extern "C" fn(
    status: i32,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbdata: *mut c_void,
    release_fn: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
);
pub type ValueCb = unsafe extern "C" fn(status: i32, kv: *mut pmix_value_t, cbdata: *mut c_void);
/// `pmix_modex_cbfunc_t`: the host's answer to `fence_nb` and
/// `direct_modex`.
pub type ModexCb = unsafe extern "C" fn(
    status: i32,
    data: *const c_char,
    ndata: usize,
    cbdata: *mut c_void,
    release_fn: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
);
/// `pmix_dmodex_response_fn_t`: `PMIx_server_dmodex_request`'s answer.
pub type DmodexResponseFn =
    unsafe extern "C" fn(status: i32, data: *mut c_char, sz: usize, cbdata: *mut c_void);
pub type HdlrRegCb = unsafe extern "C" fn(status: i32, refid: usize, cbdata: *mut c_void);
pub type EventCompleteFn = unsafe extern "C" fn(
    status: i32,
    results: *mut pmix_info_t,
    nresults: usize,
    cbfunc: Option<OpCb>,
    thiscbdata: *mut c_void,
    notification_cbdata: *mut c_void,
);
pub type NotificationFn = unsafe extern "C" fn(
    id: usize,
    status: i32,
    source: *const pmix_proc_t,
    info: *mut pmix_info_t,
    ninfo: usize,
    results: *mut pmix_info_t,
    nresults: usize,
    cbfunc: EventCompleteFn,
    cbdata: *mut c_void,
);

/// `pmix_lookup_cbfunc_t`.
pub type LookupCb =
    unsafe extern "C" fn(status: i32, data: *mut pmix_pdata_t, ndata: usize, cbdata: *mut c_void);
/// `pmix_spawn_cbfunc_t` (the namespace is a `pmix_nspace_t`, passed as a
/// pointer to its first character).
pub type SpawnCb = unsafe extern "C" fn(status: i32, nspace: *mut c_char, cbdata: *mut c_void);
/// `pmix_server_publish_fn_t`.
pub type PublishFn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
/// `pmix_server_lookup_fn_t`.
pub type LookupFn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    keys: *mut *mut c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<LookupCb>,
    cbdata: *mut c_void,
) -> i32;
/// `pmix_server_unpublish_fn_t`.
pub type UnpublishFn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    keys: *mut *mut c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
/// `pmix_server_spawn_fn_t`.
pub type SpawnFn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    job_info: *const pmix_info_t,
    ninfo: usize,
    apps: *const pmix_app_t,
    napps: usize,
    cbfunc: Option<SpawnCb>,
    cbdata: *mut c_void,
) -> i32;
/// `pmix_server_connect_fn_t` and `pmix_server_disconnect_fn_t`.
pub type ConnectFn = unsafe extern "C" fn(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;

pub type ConnectedFn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    server_object: *mut c_void,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
pub type Connected2Fn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    server_object: *mut c_void,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
pub type AbortFn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    server_object: *mut c_void,
    status: i32,
    msg: *const c_char,
    procs: *mut pmix_proc_t,
    nprocs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
/// `pmix_server_fencenb_fn_t`.
pub type FenceNbFn = unsafe extern "C" fn(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    data: *mut c_char,
    ndata: usize,
    cbfunc: Option<ModexCb>,
    cbdata: *mut c_void,
) -> i32;
/// `pmix_server_dmodex_req_fn_t`.
pub type DirectModexFn = unsafe extern "C" fn(
    proc_: *const pmix_proc_t,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<ModexCb>,
    cbdata: *mut c_void,
) -> i32;
pub type RegisterEventsFn = unsafe extern "C" fn(
    codes: *mut i32,
    ncodes: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
pub type DeregisterEventsFn = unsafe extern "C" fn(
    codes: *mut i32,
    ncodes: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
pub type NotifyEventFn = unsafe extern "C" fn(
    code: i32,
    source: *const pmix_proc_t,
    range: u8,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> i32;
pub type LogFn = unsafe extern "C" fn(
    client: *const pmix_proc_t,
    data: *const pmix_info_t,
    ndata: usize,
    directives: *const pmix_info_t,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
);
pub type AllocFn = unsafe extern "C" fn(
    client: *const pmix_proc_t,
    directive: u8,
    data: *const pmix_info_t,
    ndata: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> i32;
pub type JobControlFn = unsafe extern "C" fn(
    requestor: *const pmix_proc_t,
    targets: *const pmix_proc_t,
    ntargets: usize,
    directives: *const pmix_info_t,
    ndirs: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> i32;
pub type MonitorFn = unsafe extern "C" fn(
    requestor: *const pmix_proc_t,
    monitor: *const pmix_info_t,
    error: i32,
    directives: *const pmix_info_t,
    ndirs: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> i32;

// The Standard's x86_64 layouts (../shared/reference/pmix-abi-facts.md).
// ---- type tags: which the Standard defines, and their C element sizes ----

/// Type tags the Standard defines (0..=69 without the holes 26, 29, 44).
pub fn known_type(t: u16) -> bool {
    t <= 69 && !matches!(t, 26 | 29 | 44)
}

/// Size of one element of an array of `t`, for the types whose arrays
/// fastpmix can build, copy and release.
pub fn elem_size(t: u16) -> Option<usize> {
    Some(match DataType(t) {
        DataType::BOOL | DataType::BYTE | DataType::INT8 | DataType::UINT8 => 1,
        DataType::INT16 | DataType::UINT16 => 2,
        DataType::PID | DataType::INT | DataType::INT32 | DataType::UINT | DataType::UINT32 => 4,
        DataType::STATUS | DataType::PROC_RANK => 4,
        DataType::SIZE | DataType::INT64 | DataType::UINT64 | DataType::DOUBLE => 8,
        DataType::TIME | DataType::STRING | DataType::POINTER => 8,
        DataType::FLOAT => 4,
        DataType::TIMEVAL | DataType::BYTE_OBJECT => 16,
        DataType::VALUE => 32,
        DataType::PROC => 260,
        DataType::INFO => 552,
        DataType::PDATA => 808,
        DataType::APP => 56,
        DataType::QUERY | DataType::DATA_ARRAY => 24,
        DataType::PROC_INFO => 296,
        DataType(n) => match n {
            30 | 32 | 33 | 34 | 37 | 43 | 50 => 1, // persist, scope, range, command, states, directive
            35 => 4,                               // info directives
            36 | 45 => 2,                          // data type, iof channel
            46 => 24,                              // envar
            60 => 256,                             // nspace
            _ => return None,
        },
    })
}

/// The `PMIX_ENVAR` tag, for `match` on a raw `u16` tag.
pub const ENVAR: u16 = DataType::ENVAR.0;
/// The `PMIX_PROC_NSPACE` tag, for `match` on a raw `u16` tag.
pub const NSPACE: u16 = DataType::PROC_NSPACE.0;

const _: () = {
    assert!(size_of::<pmix_proc_t>() == 260);
    assert!(offset_of!(pmix_proc_t, rank) == 256);
    assert!(size_of::<pmix_value_data>() == 24);
    assert!(size_of::<pmix_value_t>() == 32);
    assert!(offset_of!(pmix_value_t, data) == 8);
    assert!(size_of::<pmix_info_t>() == 552);
    assert!(offset_of!(pmix_info_t, flags) == 512);
    assert!(offset_of!(pmix_info_t, value) == 520);
    assert!(size_of::<pmix_data_array_t>() == 24);
    assert!(offset_of!(pmix_data_array_t, size) == 8);
    assert!(offset_of!(pmix_data_array_t, array) == 16);
    assert!(size_of::<pmix_byte_object_t>() == 16);
    assert!(size_of::<pmix_envar_t>() == 24);
    assert!(size_of::<pmix_proc_info_t>() == 296);
    assert!(size_of::<pmix_query_t>() == 24);
    assert!(size_of::<pmix_pdata_t>() == 808);
    assert!(offset_of!(pmix_pdata_t, value) == 776);
    assert!(size_of::<pmix_app_t>() == 56);
    assert!(offset_of!(pmix_app_t, info) == 40);
    assert!(offset_of!(pmix_server_module_t, publish) == 40);
    assert!(offset_of!(pmix_server_module_t, disconnect) == 80);
    assert!(std::mem::offset_of!(pmix_query_t, nqual) == 16);
    assert!(size_of::<pmix_server_module_t>() == 224);
    assert!(offset_of!(pmix_server_module_t, fence_nb) == 24);
    assert!(offset_of!(pmix_server_module_t, direct_modex) == 32);
    assert!(offset_of!(pmix_server_module_t, register_events) == 88);
    assert!(offset_of!(pmix_server_module_t, deregister_events) == 96);
    assert!(offset_of!(pmix_server_module_t, notify_event) == 112);
    assert!(offset_of!(pmix_server_module_t, log) == 136);
    assert!(offset_of!(pmix_server_module_t, allocate) == 144);
    assert!(offset_of!(pmix_server_module_t, job_control) == 152);
    assert!(offset_of!(pmix_server_module_t, monitor) == 160);
    assert!(offset_of!(pmix_server_module_t, client_connected2) == 216);
};
