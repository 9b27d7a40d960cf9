//! The functions of the Standard's headers that fastpmix does not implement
//! (credentials, groups,
//! fabrics, topology and device distances, data packing, tools, forwarded
//! I/O, the server's inventory, resources and process sets).
//!
//! They exist so that code written for OpenPMIx 4.2 links against
//! libfastpmix unchanged and is told at run time, cleanly:
//! - every one returns `PMIX_ERR_NOT_SUPPORTED` from the call, before and
//!   after `PMIx_Init`, whatever its arguments (NULL included);
//! - none calls its callback, blocking or `_nb` form alike, and none
//!   touches its arguments (output parameters are left as they were);
//! - the two that return `bool` (`PMIx_Data_compress`/`_decompress`)
//!   return `false`, the Standard's failure value; the two `void`
//!   destructors of objects fastpmix never fills (`PMIx_Topology_destruct`,
//!   `PMIx_Cpuset_destruct`) do nothing.
//!
//! Each body runs under `status_of`/`guard` like every export (nothing
//! here can panic, but the boundary rule has no exceptions to review).
//! Implemented elsewhere, and so not here: `PMIx_Query_info[_nb]`,
//! `PMIx_Resolve_peers`, `PMIx_Resolve_nodes`, `PMIx_Get*`, `PMIx_Fence*`,
//! data exchange (`PMIx_Put`, `PMIx_Commit`, `PMIx_Store_internal`,
//! `PMIx_server_dmodex_request`), application setup
//! (`PMIx_server_setup_application`, `PMIx_server_setup_local_support`:
//! `app_setup.rs`), publish/lookup (`PMIx_Publish`, `PMIx_Lookup`,
//! `PMIx_Unpublish`: `src/capi/pubsub.rs`), spawn and connect/disconnect
//! (`src/capi/dpm.rs`).
//! docs/abi.md lists the same names in one table.

use super::{guard, status_of};
use crate::types::Status;
use std::ffi::{c_int, c_void};

/// Any pointer argument: a struct, an array, a string, a callback or
/// cbdata. The stubs never look at it.
type P = *const c_void;

macro_rules! not_supported {
    ($( $(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?); )*) => {
        $(
            $(#[$m])*
            #[doc = concat!("`", stringify!($name), "`: not supported (`PMIX_ERR_NOT_SUPPORTED`, no callback).")]
            #[no_mangle]
            pub extern "C" fn $name($($arg: $ty),*) -> c_int {
                let _ = ($($arg,)*);
                status_of(|| Err(Status::ERR_NOT_SUPPORTED))
            }
        )*
        /// The names of every stub returning `PMIX_ERR_NOT_SUPPORTED`.
        pub const NOT_SUPPORTED: &[&str] = &[$(stringify!($name)),*];
    };
}

not_supported! {
    // ---- credentials
    fn PMIx_Get_credential(info: P, ninfo: usize, credential: P);
    fn PMIx_Get_credential_nb(info: P, ninfo: usize, cbfunc: P, cbdata: P);
    fn PMIx_Validate_credential(cred: P, info: P, ninfo: usize, results: P, nresults: P);
    fn PMIx_Validate_credential_nb(cred: P, info: P, ninfo: usize, cbfunc: P, cbdata: P);
    // ---- groups
    fn PMIx_Group_construct(grp: P, procs: P, nprocs: usize, dirs: P, ndirs: usize,
                            results: P, nresults: P);
    fn PMIx_Group_construct_nb(grp: P, procs: P, nprocs: usize, info: P, ninfo: usize,
                               cbfunc: P, cbdata: P);
    fn PMIx_Group_invite(grp: P, procs: P, nprocs: usize, info: P, ninfo: usize,
                         results: P, nresults: P);
    fn PMIx_Group_invite_nb(grp: P, procs: P, nprocs: usize, info: P, ninfo: usize,
                            cbfunc: P, cbdata: P);
    fn PMIx_Group_join(grp: P, leader: P, opt: c_int, info: P, ninfo: usize,
                       results: P, nresults: P);
    fn PMIx_Group_join_nb(grp: P, leader: P, opt: c_int, info: P, ninfo: usize,
                          cbfunc: P, cbdata: P);
    fn PMIx_Group_leave(grp: P, info: P, ninfo: usize);
    fn PMIx_Group_leave_nb(grp: P, info: P, ninfo: usize, cbfunc: P, cbdata: P);
    fn PMIx_Group_destruct(grp: P, info: P, ninfo: usize);
    fn PMIx_Group_destruct_nb(grp: P, info: P, ninfo: usize, cbfunc: P, cbdata: P);
    // ---- fabrics, topology, device distances, cpusets
    fn PMIx_Fabric_register(fabric: P, dirs: P, ndirs: usize);
    fn PMIx_Fabric_register_nb(fabric: P, dirs: P, ndirs: usize, cbfunc: P, cbdata: P);
    fn PMIx_Fabric_update(fabric: P);
    fn PMIx_Fabric_update_nb(fabric: P, cbfunc: P, cbdata: P);
    fn PMIx_Fabric_deregister(fabric: P);
    fn PMIx_Fabric_deregister_nb(fabric: P, cbfunc: P, cbdata: P);
    fn PMIx_Compute_distances(topo: P, cpuset: P, info: P, ninfo: usize, distances: P,
                              ndist: P);
    fn PMIx_Compute_distances_nb(topo: P, cpuset: P, info: P, ninfo: usize, cbfunc: P,
                                 cbdata: P);
    fn PMIx_Load_topology(topo: P);
    fn PMIx_Parse_cpuset_string(cpuset_string: P, cpuset: P);
    fn PMIx_Get_cpuset(cpuset: P, reference: u8);
    fn PMIx_Get_relative_locality(locality1: P, locality2: P, locality: P);
    // ---- data packing (pmix_data_buffer_t)
    fn PMIx_Data_pack(target: P, buffer: P, src: P, num_vals: i32, data_type: u16);
    fn PMIx_Data_unpack(source: P, buffer: P, dest: P, max_num_values: P, data_type: u16);
    fn PMIx_Data_copy(dest: P, src: P, data_type: u16);
    fn PMIx_Data_copy_payload(dest: P, src: P);
    fn PMIx_Data_unload(buffer: P, payload: P);
    fn PMIx_Data_load(buffer: P, payload: P);
    fn PMIx_Data_embed(buffer: P, payload: P);
    // ---- server (pmix_server.h)
    fn PMIx_server_IOF_deliver(source: P, channel: u16, bo: P, info: P, ninfo: usize,
                               cbfunc: P, cbdata: P);
    fn PMIx_server_collect_inventory(dirs: P, ndirs: usize, cbfunc: P, cbdata: P);
    fn PMIx_server_deliver_inventory(info: P, ninfo: usize, dirs: P, ndirs: usize, cbfunc: P,
                                     cbdata: P);
    fn PMIx_Register_attributes(function: P, attrs: P);
    fn PMIx_server_generate_locality_string(cpuset: P, locality: P);
    fn PMIx_server_generate_cpuset_string(cpuset: P, cpuset_string: P);
    fn PMIx_server_define_process_set(members: P, nmembers: usize, pset_name: P);
    fn PMIx_server_delete_process_set(pset_name: P);
    fn PMIx_server_register_resources(info: P, ninfo: usize, cbfunc: P, cbdata: P);
    fn PMIx_server_deregister_resources(info: P, ninfo: usize, cbfunc: P, cbdata: P);
    // ---- tools and forwarded I/O (pmix_tool.h)
    fn PMIx_tool_init(proc_: P, info: P, ninfo: usize);
    fn PMIx_tool_finalize();
    fn PMIx_tool_disconnect(server: P);
    fn PMIx_tool_attach_to_server(myproc: P, server: P, info: P, ninfo: usize);
    fn PMIx_tool_get_servers(servers: P, nservers: P);
    fn PMIx_tool_set_server(server: P, info: P, ninfo: usize);
    fn PMIx_tool_connect_to_server(proc_: P, info: P, ninfo: usize);
    fn PMIx_IOF_pull(procs: P, nprocs: usize, dirs: P, ndirs: usize, channel: u16, cbfunc: P,
                     regcbfunc: P, regcbdata: P);
    fn PMIx_IOF_deregister(iofhdlr: usize, dirs: P, ndirs: usize, cbfunc: P, cbdata: P);
    fn PMIx_IOF_push(targets: P, ntargets: usize, bo: P, dirs: P, ndirs: usize, cbfunc: P,
                     cbdata: P);
}

/// `PMIx_Data_compress`: not supported; `false` (nothing written).
#[no_mangle]
pub extern "C" fn PMIx_Data_compress(inbytes: P, size: usize, outbytes: P, nbytes: P) -> bool {
    guard(false, || {
        let _ = (inbytes, size, outbytes, nbytes);
        false
    })
}

/// `PMIx_Data_decompress`: not supported; `false` (nothing written).
#[no_mangle]
pub extern "C" fn PMIx_Data_decompress(inbytes: P, size: usize, outbytes: P, nbytes: P) -> bool {
    guard(false, || {
        let _ = (inbytes, size, outbytes, nbytes);
        false
    })
}

/// `PMIx_Topology_destruct`: fastpmix never fills a `pmix_topology_t`
/// (`PMIx_Load_topology` is not supported), so there is nothing to free.
#[no_mangle]
pub extern "C" fn PMIx_Topology_destruct(topo: P) {
    guard((), || {
        let _ = topo;
    })
}

/// `PMIx_Cpuset_destruct`: fastpmix never fills a `pmix_cpuset_t`
/// (`PMIx_Get_cpuset` and `PMIx_Parse_cpuset_string` are not supported),
/// so there is nothing to free.
#[no_mangle]
pub extern "C" fn PMIx_Cpuset_destruct(cpuset: P) {
    guard((), || {
        let _ = cpuset;
    })
}

/// Every name of this file, for tests and docs: the status stubs, then the
/// four with other return types.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    NOT_SUPPORTED.iter().copied().chain([
        "PMIx_Data_compress",
        "PMIx_Data_decompress",
        "PMIx_Topology_destruct",
        "PMIx_Cpuset_destruct",
    ])
}
