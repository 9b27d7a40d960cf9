/*
 * ABI probe: prints the sizes and offsets of the Standard's structures, and
 * the value of every constant fastpmix's header defines, one "kind name
 * value" line each. tests/c_abi_probe.rs compiles it once against
 * fastpmix's include/ and once against OpenPMIx's installed headers and
 * compares the two outputs.
 *
 * probe_names.h is written by the test: one PROBE(NAME) line per constant
 * of include/pmix_constants.h, guarded so a name the other header lacks
 * prints "absent NAME".
 *
 * Compiled with -DPROBE_PROTOTYPES -fsyntax-only -Werror it instead checks
 * that each function has the Standard's signature (an incompatible pointer
 * assignment is an error).
 */
/* OpenPMIx 4.2's header calls strdup/setenv in inline functions. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>

#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

static void pnum(const char *name, long long v) { printf("const %s %lld\n", name, v); }
static void pstr(const char *name, const char *v) { printf("key %s \"%s\"\n", name, v); }

#define PROBE(n) _Generic((n), char *: pstr, const char *: pstr, default: pnum)(#n, n)
#define ABSENT(n) printf("absent %s\n", #n)

#define SIZE(t) printf("size %s %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offset %s.%s %zu\n", #t, #f, offsetof(t, f))

#ifdef PROBE_PROTOTYPES
/* Each line fails to compile unless the header declares the Standard's
 * signature (parameter array types adjust to pointers, as in the Standard). */
void prototypes(void);
void prototypes(void)
{
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t *, size_t) = PMIx_Init;
    pmix_status_t (*fin)(const pmix_info_t *, size_t) = PMIx_Finalize;
    int (*initialized)(void) = PMIx_Initialized;
    const char *(*version)(void) = PMIx_Get_version;
    const char *(*errstr)(pmix_status_t) = PMIx_Error_string;
    pmix_status_t (*abrt)(int, const char *, pmix_proc_t *, size_t) = PMIx_Abort;
    pmix_status_t (*get)(const pmix_proc_t *, const char *, const pmix_info_t *, size_t,
                         pmix_value_t **) = PMIx_Get;
    pmix_status_t (*get_nb)(const pmix_proc_t *, const char *, const pmix_info_t *, size_t,
                            pmix_value_cbfunc_t, void *) = PMIx_Get_nb;
    pmix_status_t (*fence)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t) = PMIx_Fence;
    pmix_status_t (*fence_nb)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                              pmix_op_cbfunc_t, void *) = PMIx_Fence_nb;
    pmix_status_t (*reg)(pmix_status_t *, size_t, pmix_info_t *, size_t, pmix_notification_fn_t,
                         pmix_hdlr_reg_cbfunc_t, void *) = PMIx_Register_event_handler;
    pmix_status_t (*dereg)(size_t, pmix_op_cbfunc_t, void *) = PMIx_Deregister_event_handler;
    pmix_status_t (*notify)(pmix_status_t, const pmix_proc_t *, pmix_data_range_t,
                            const pmix_info_t *, size_t, pmix_op_cbfunc_t, void *) = PMIx_Notify_event;
    pmix_status_t (*alloc)(pmix_alloc_directive_t, pmix_info_t *, size_t, pmix_info_t **,
                           size_t *) = PMIx_Allocation_request;
    pmix_status_t (*alloc_nb)(pmix_alloc_directive_t, pmix_info_t *, size_t, pmix_info_cbfunc_t,
                              void *) = PMIx_Allocation_request_nb;
    pmix_status_t (*jctl)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t, pmix_info_t **,
                          size_t *) = PMIx_Job_control;
    pmix_status_t (*jctl_nb)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                             pmix_info_cbfunc_t, void *) = PMIx_Job_control_nb;
    pmix_status_t (*mon)(const pmix_info_t *, pmix_status_t, const pmix_info_t *, size_t,
                         pmix_info_t **, size_t *) = PMIx_Process_monitor;
    pmix_status_t (*mon_nb)(const pmix_info_t *, pmix_status_t, const pmix_info_t *, size_t,
                            pmix_info_cbfunc_t, void *) = PMIx_Process_monitor_nb;
    pmix_status_t (*log)(const pmix_info_t *, size_t, const pmix_info_t *, size_t) = PMIx_Log;
    pmix_status_t (*log_nb)(const pmix_info_t *, size_t, const pmix_info_t *, size_t,
                            pmix_op_cbfunc_t, void *) = PMIx_Log_nb;
    pmix_status_t (*query)(pmix_query_t *, size_t, pmix_info_t **, size_t *) = PMIx_Query_info;
    pmix_status_t (*query_nb)(pmix_query_t *, size_t, pmix_info_cbfunc_t,
                              void *) = PMIx_Query_info_nb;
    pmix_status_t (*sinit)(pmix_server_module_t *, pmix_info_t *, size_t) = PMIx_server_init;
    pmix_status_t (*sfin)(void) = PMIx_server_finalize;
    pmix_status_t (*regex)(const char *, char **) = PMIx_generate_regex;
    pmix_status_t (*ppn)(const char *, char **) = PMIx_generate_ppn;
    pmix_status_t (*regns)(const char *, int, pmix_info_t *, size_t, pmix_op_cbfunc_t,
                           void *) = PMIx_server_register_nspace;
    void (*deregns)(const char *, pmix_op_cbfunc_t, void *) = PMIx_server_deregister_nspace;
    pmix_status_t (*regcl)(const pmix_proc_t *, uid_t, gid_t, void *, pmix_op_cbfunc_t,
                           void *) = PMIx_server_register_client;
    void (*deregcl)(const pmix_proc_t *, pmix_op_cbfunc_t, void *) = PMIx_server_deregister_client;
    pmix_status_t (*fork)(const pmix_proc_t *, char ***) = PMIx_server_setup_fork;
    pmix_status_t (*iload)(pmix_info_t *, const char *, const void *, pmix_data_type_t) = PMIx_Info_load;
    pmix_status_t (*vload)(pmix_value_t *, const void *, pmix_data_type_t) = PMIx_Value_load;
    void (*vdestruct)(pmix_value_t *) = PMIx_Value_destruct;
    void *(*lstart)(void) = PMIx_Info_list_start;
    pmix_status_t (*ladd)(void *, const char *, const void *, pmix_data_type_t) = PMIx_Info_list_add;
    pmix_status_t (*lconv)(void *, pmix_data_array_t *) = PMIx_Info_list_convert;
    void (*lrel)(void *) = PMIx_Info_list_release;
    (void) init; (void) fin; (void) initialized; (void) version; (void) errstr; (void) abrt;
    (void) get; (void) get_nb; (void) fence; (void) fence_nb; (void) reg; (void) dereg;
    (void) notify; (void) alloc; (void) alloc_nb; (void) jctl; (void) jctl_nb; (void) mon;
    (void) mon_nb; (void) log; (void) log_nb; (void) query; (void) query_nb; (void) sinit; (void) sfin; (void) regex; (void) ppn;
    (void) regns; (void) deregns; (void) regcl; (void) deregcl; (void) fork; (void) iload;
    (void) vload; (void) vdestruct; (void) lstart; (void) ladd; (void) lconv; (void) lrel;
#ifdef FASTPMIX
    /* A function in the current Standard (OpenPMIx 4.2: a macro). */
    void (*heartbeat)(void) = PMIx_Heartbeat;
    (void) heartbeat;
#endif
}
#endif

int main(void)
{
    SIZE(pmix_proc_t);
    OFF(pmix_proc_t, nspace);
    OFF(pmix_proc_t, rank);
    SIZE(pmix_value_t);
    OFF(pmix_value_t, type);
    OFF(pmix_value_t, data);
    OFF(pmix_value_t, data.string);
    OFF(pmix_value_t, data.uint64);
    OFF(pmix_value_t, data.bo.size);
    OFF(pmix_value_t, data.envar.separator);
    SIZE(pmix_info_t);
    OFF(pmix_info_t, key);
    OFF(pmix_info_t, flags);
    OFF(pmix_info_t, value);
    SIZE(pmix_data_array_t);
    OFF(pmix_data_array_t, type);
    OFF(pmix_data_array_t, size);
    OFF(pmix_data_array_t, array);
    SIZE(pmix_byte_object_t);
    SIZE(pmix_envar_t);
    SIZE(pmix_pdata_t);
    OFF(pmix_pdata_t, key);
    OFF(pmix_pdata_t, value);
    SIZE(pmix_proc_info_t);
    SIZE(pmix_app_t);
    OFF(pmix_app_t, maxprocs);
    OFF(pmix_app_t, ninfo);
    SIZE(pmix_query_t);
    /* The structures of the chapters fastpmix declares only. */
    SIZE(pmix_coord_t);
    OFF(pmix_coord_t, coord);
    OFF(pmix_coord_t, dims);
    SIZE(pmix_cpuset_t);
    OFF(pmix_cpuset_t, bitmap);
    SIZE(pmix_topology_t);
    OFF(pmix_topology_t, topology);
    SIZE(pmix_geometry_t);
    OFF(pmix_geometry_t, uuid);
    OFF(pmix_geometry_t, osname);
    OFF(pmix_geometry_t, coordinates);
    OFF(pmix_geometry_t, ncoords);
    SIZE(pmix_device_distance_t);
    OFF(pmix_device_distance_t, type);
    OFF(pmix_device_distance_t, mindist);
    OFF(pmix_device_distance_t, maxdist);
    SIZE(pmix_endpoint_t);
    OFF(pmix_endpoint_t, endpt);
    SIZE(pmix_data_buffer_t);
    OFF(pmix_data_buffer_t, pack_ptr);
    OFF(pmix_data_buffer_t, unpack_ptr);
    OFF(pmix_data_buffer_t, bytes_allocated);
    OFF(pmix_data_buffer_t, bytes_used);
    SIZE(pmix_proc_stats_t);
    OFF(pmix_proc_stats_t, proc);
    OFF(pmix_proc_stats_t, pid);
    OFF(pmix_proc_stats_t, cmd);
    OFF(pmix_proc_stats_t, state);
    OFF(pmix_proc_stats_t, time);
    OFF(pmix_proc_stats_t, percent_cpu);
    OFF(pmix_proc_stats_t, priority);
    OFF(pmix_proc_stats_t, num_threads);
    OFF(pmix_proc_stats_t, pss);
    OFF(pmix_proc_stats_t, peak_vsize);
    OFF(pmix_proc_stats_t, processor);
    OFF(pmix_proc_stats_t, sample_time);
    SIZE(pmix_disk_stats_t);
    OFF(pmix_disk_stats_t, weighted_milliseconds_io);
    SIZE(pmix_net_stats_t);
    OFF(pmix_net_stats_t, num_send_errs);
    SIZE(pmix_node_stats_t);
    OFF(pmix_node_stats_t, la);
    OFF(pmix_node_stats_t, mapped);
    OFF(pmix_node_stats_t, sample_time);
    OFF(pmix_node_stats_t, diskstats);
    OFF(pmix_node_stats_t, ndiskstats);
    OFF(pmix_node_stats_t, netstats);
    OFF(pmix_node_stats_t, nnetstats);
    SIZE(pmix_regattr_t);
    OFF(pmix_regattr_t, string);
    OFF(pmix_regattr_t, type);
    OFF(pmix_regattr_t, description);
    SIZE(pmix_fabric_t);
    OFF(pmix_fabric_t, index);
    OFF(pmix_fabric_t, info);
    OFF(pmix_fabric_t, ninfo);
    OFF(pmix_fabric_t, module);
    SIZE(pmix_coord_view_t);
    SIZE(pmix_link_state_t);
    SIZE(pmix_bind_envelope_t);
    SIZE(pmix_locality_t);
    SIZE(pmix_device_type_t);
    SIZE(pmix_storage_medium_t);
    SIZE(pmix_storage_accessibility_t);
    SIZE(pmix_storage_persistence_t);
    SIZE(pmix_storage_access_type_t);
    SIZE(pmix_value_cmp_t);
    SIZE(pmix_group_opt_t);
    SIZE(pmix_boolean_t);
    SIZE(pmix_proc_state_t);
    SIZE(pmix_job_state_t);
    SIZE(pmix_iof_channel_t);
    SIZE(pmix_scope_t);
    SIZE(pmix_persistence_t);
    /* Enumeration constants (not macros, so not in probe_names.h). */
    PROBE(PMIX_EQUAL);
    PROBE(PMIX_VALUE1_GREATER);
    PROBE(PMIX_VALUE2_GREATER);
    PROBE(PMIX_VALUE_TYPE_DIFFERENT);
    PROBE(PMIX_VALUE_INCOMPATIBLE_OBJECTS);
    PROBE(PMIX_VALUE_COMPARISON_NOT_AVAIL);
    PROBE(PMIX_GROUP_DECLINE);
    PROBE(PMIX_GROUP_ACCEPT);
    PROBE(PMIX_GROUP_CONSTRUCT);
    PROBE(PMIX_GROUP_DESTRUCT);
    PROBE(PMIX_FABRIC_REQUEST_INFO);
    PROBE(PMIX_FABRIC_UPDATE_INFO);
    PROBE(PMIX_BOOL_TRUE);
    PROBE(PMIX_BOOL_FALSE);
    PROBE(PMIX_NON_BOOL);
    SIZE(pmix_status_t);
    SIZE(pmix_rank_t);
    SIZE(pmix_data_type_t);
    SIZE(pmix_data_range_t);
    SIZE(pmix_alloc_directive_t);
    SIZE(pmix_info_directives_t);
    SIZE(pmix_nspace_t);
    SIZE(pmix_key_t);
    SIZE(pmix_server_module_t);
    OFF(pmix_server_module_t, client_connected);
    OFF(pmix_server_module_t, client_finalized);
    OFF(pmix_server_module_t, abort);
    OFF(pmix_server_module_t, fence_nb);
    OFF(pmix_server_module_t, direct_modex);
    OFF(pmix_server_module_t, publish);
    OFF(pmix_server_module_t, lookup);
    OFF(pmix_server_module_t, unpublish);
    OFF(pmix_server_module_t, spawn);
    OFF(pmix_server_module_t, connect);
    OFF(pmix_server_module_t, disconnect);
    OFF(pmix_server_module_t, register_events);
    OFF(pmix_server_module_t, deregister_events);
    OFF(pmix_server_module_t, listener);
    OFF(pmix_server_module_t, notify_event);
    OFF(pmix_server_module_t, query);
    OFF(pmix_server_module_t, tool_connected);
    OFF(pmix_server_module_t, log);
    OFF(pmix_server_module_t, allocate);
    OFF(pmix_server_module_t, job_control);
    OFF(pmix_server_module_t, monitor);
    OFF(pmix_server_module_t, get_credential);
    OFF(pmix_server_module_t, validate_credential);
    OFF(pmix_server_module_t, iof_pull);
    OFF(pmix_server_module_t, push_stdin);
    OFF(pmix_server_module_t, group);
    OFF(pmix_server_module_t, fabric);
    OFF(pmix_server_module_t, client_connected2);
#include "probe_names.h"
    return 0;
}
