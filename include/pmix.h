/*
 * fastpmix: the PMIx Standard's client interface.
 *
 * Written for fastpmix from the Standard's definitions. docs/abi.md lists
 * every function with its status in fastpmix (full, partial, not supported).
 * Link with -lfastpmix (pkg-config fastpmix).
 */
#ifndef FASTPMIX_PMIX_H
#define FASTPMIX_PMIX_H

#include "pmix_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- initialisation ---- */
pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo);
int PMIx_Initialized(void);
const char *PMIx_Get_version(void);
const char *PMIx_Error_string(pmix_status_t status);
pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[], size_t nprocs);

/* ---- job information and synchronisation ---- */
pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val);
pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
                          const pmix_info_t info[], size_t ninfo, pmix_value_cbfunc_t cbfunc,
                          void *cbdata);
pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo);
pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
/* The processes of a namespace on a node (NULL: this node), and the nodes
 * of a namespace (comma-separated), from the job's node and process maps. */
pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                 pmix_proc_t **procs, size_t *nprocs);
pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist);

/* ---- data exchange: what a process puts is visible to its peers after
 * PMIx_Commit (on this node at once, on others after a fence that collects
 * data or through the host's direct modex) ---- */
/* The key is declared `const char key[]` (the Standard: a `const pmix_key_t`,
 * a 512-byte array type), as for PMIx_Get: the same pointer at the ABI, but
 * a short string literal does not trip -Wstringop-overread. */
pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val);
pmix_status_t PMIx_Commit(void);
pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[], pmix_value_t *val);

/* ---- events ---- */
pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                          pmix_info_t info[], size_t ninfo,
                                          pmix_notification_fn_t evhdlr,
                                          pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                            void *cbdata);
pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);

/* ---- job management ---- */
pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive, pmix_info_t *info,
                                      size_t ninfo, pmix_info_t **results, size_t *nresults);
pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive, pmix_info_t *info,
                                         size_t ninfo, pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                               const pmix_info_t directives[], size_t ndirs,
                               pmix_info_t **results, size_t *nresults);
pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor, pmix_status_t error,
                                   const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_t **results, size_t *nresults);
pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor, pmix_status_t error,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_info_cbfunc_t cbfunc, void *cbdata);
/* A function, as in the current Standard (4.2 headers had a macro). */
void PMIx_Heartbeat(void);
pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                       size_t ndirs);
pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                          const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                          void *cbdata);

/* ---- publish/lookup (the host's data server), spawn and connect/disconnect
 * (the host's dynamic process management): forwarded through the node's
 * server to the host's upcalls (docs/abi.md). ---- */
pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void *cbdata);
pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                          size_t ninfo);
pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                             pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                         size_t napps, pmix_nspace_t nspace);
pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                            size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                           size_t ninfo);
pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo);
pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata);

/* ---- the rest of the Standard's client interface. fastpmix does not
 * implement these: each returns PMIX_ERR_NOT_SUPPORTED and never calls its
 * callback (docs/abi.md, "Functions fastpmix does not implement"). ---- */
pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                  pmix_byte_object_t *credential);
pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                     pmix_credential_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred, const pmix_info_t info[],
                                       size_t ninfo, pmix_info_t **results, size_t *nresults);
pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_validation_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_t **results, size_t *nresults);
pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                                size_t *nresult);
pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader, pmix_group_opt_t opt,
                              const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                              size_t *nresult);
pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                 pmix_group_opt_t opt, const pmix_info_t info[], size_t ninfo,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                   size_t ndirs);
pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                      size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric);
pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric);
pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc,
                                        void *cbdata);
pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                     pmix_info_t info[], size_t ninfo,
                                     pmix_device_distance_t *distances[], size_t *ndist);
pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                        pmix_info_t info[], size_t ninfo,
                                        pmix_device_dist_cbfunc_t cbfunc, void *cbdata);

/* A no-op: fastpmix's progress thread always runs. */
void PMIx_Progress(void);

/* ---- query (results: one info per answered key, PMIX_INFO_FREE) ---- */
pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                              size_t *nresults);
pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata);

#ifdef __cplusplus
}
#endif

#endif /* FASTPMIX_PMIX_H */
