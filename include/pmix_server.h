/*
 * fastpmix: the PMIx Standard's server interface, for resource-manager
 * daemons that embed the node server.
 *
 * Written for fastpmix from the Standard's definitions. The module's 28
 * upcalls keep the Standard's order (224 bytes); fastpmix calls the ones
 * listed in docs/abi.md and treats a NULL entry as "not supported".
 */
#ifndef FASTPMIX_PMIX_SERVER_H
#define FASTPMIX_PMIX_SERVER_H

#include "pmix.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { PMIX_GROUP_CONSTRUCT, PMIX_GROUP_DESTRUCT } pmix_group_operation_t;
typedef enum { PMIX_FABRIC_REQUEST_INFO, PMIX_FABRIC_UPDATE_INFO } pmix_fabric_operation_t;

typedef void (*pmix_dmodex_response_fn_t)(pmix_status_t status, char *data, size_t sz,
                                          void *cbdata);
typedef void (*pmix_setup_application_cbfunc_t)(pmix_status_t status, pmix_info_t info[],
                                                size_t ninfo, void *provided_cbdata,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef void (*pmix_connection_cbfunc_t)(int incoming_sd, void *cbdata);
typedef void (*pmix_tool_connection_cbfunc_t)(pmix_status_t status, pmix_proc_t *proc,
                                              void *cbdata);

typedef pmix_status_t (*pmix_server_client_connected_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc,
                                                           void *cbdata);
typedef pmix_status_t (*pmix_server_client_finalized_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc,
                                                           void *cbdata);
typedef pmix_status_t (*pmix_server_abort_fn_t)(const pmix_proc_t *proc, void *server_object,
                                                int status, const char msg[],
                                                pmix_proc_t procs[], size_t nprocs,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_fencenb_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  char *data, size_t ndata,
                                                  pmix_modex_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_dmodex_req_fn_t)(const pmix_proc_t *proc,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_modex_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_publish_fn_t)(const pmix_proc_t *proc,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_lookup_fn_t)(const pmix_proc_t *proc, char **keys,
                                                 const pmix_info_t info[], size_t ninfo,
                                                 pmix_lookup_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_unpublish_fn_t)(const pmix_proc_t *proc, char **keys,
                                                    const pmix_info_t info[], size_t ninfo,
                                                    pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_spawn_fn_t)(const pmix_proc_t *proc,
                                                const pmix_info_t job_info[], size_t ninfo,
                                                const pmix_app_t apps[], size_t napps,
                                                pmix_spawn_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_connect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_disconnect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_register_events_fn_t)(pmix_status_t *codes, size_t ncodes,
                                                          const pmix_info_t info[],
                                                          size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                          void *cbdata);
typedef pmix_status_t (*pmix_server_deregister_events_fn_t)(pmix_status_t *codes,
                                                            size_t ncodes,
                                                            pmix_op_cbfunc_t cbfunc,
                                                            void *cbdata);
typedef pmix_status_t (*pmix_server_notify_event_fn_t)(pmix_status_t code,
                                                       const pmix_proc_t *source,
                                                       pmix_data_range_t range,
                                                       pmix_info_t info[], size_t ninfo,
                                                       pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_listener_fn_t)(int listening_sd,
                                                   pmix_connection_cbfunc_t cbfunc,
                                                   void *cbdata);
typedef pmix_status_t (*pmix_server_query_fn_t)(pmix_proc_t *proct, pmix_query_t *queries,
                                                size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                                void *cbdata);
typedef void (*pmix_server_tool_connection_fn_t)(pmix_info_t *info, size_t ninfo,
                                                 pmix_tool_connection_cbfunc_t cbfunc,
                                                 void *cbdata);
typedef void (*pmix_server_log_fn_t)(const pmix_proc_t *client, const pmix_info_t data[],
                                     size_t ndata, const pmix_info_t directives[], size_t ndirs,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_alloc_fn_t)(const pmix_proc_t *client,
                                                pmix_alloc_directive_t directive,
                                                const pmix_info_t data[], size_t ndata,
                                                pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_job_control_fn_t)(const pmix_proc_t *requestor,
                                                      const pmix_proc_t targets[],
                                                      size_t ntargets,
                                                      const pmix_info_t directives[],
                                                      size_t ndirs, pmix_info_cbfunc_t cbfunc,
                                                      void *cbdata);
typedef pmix_status_t (*pmix_server_monitor_fn_t)(const pmix_proc_t *requestor,
                                                  const pmix_info_t *monitor,
                                                  pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_get_cred_fn_t)(const pmix_proc_t *proc,
                                                   const pmix_info_t directives[], size_t ndirs,
                                                   pmix_credential_cbfunc_t cbfunc,
                                                   void *cbdata);
typedef pmix_status_t (*pmix_server_validate_cred_fn_t)(const pmix_proc_t *proc,
                                                        const pmix_byte_object_t *cred,
                                                        const pmix_info_t directives[],
                                                        size_t ndirs,
                                                        pmix_validation_cbfunc_t cbfunc,
                                                        void *cbdata);
typedef pmix_status_t (*pmix_server_iof_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_iof_channel_t channels,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_stdin_fn_t)(const pmix_proc_t *source,
                                                const pmix_proc_t targets[], size_t ntargets,
                                                const pmix_info_t directives[], size_t ndirs,
                                                const pmix_byte_object_t *bo,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_grp_fn_t)(pmix_group_operation_t op, char grp[],
                                              const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_fabric_fn_t)(const pmix_proc_t *requestor,
                                                 pmix_fabric_operation_t op,
                                                 const pmix_info_t directives[], size_t ndirs,
                                                 pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_client_connected2_fn_t)(const pmix_proc_t *proc,
                                                            void *server_object,
                                                            pmix_info_t info[], size_t ninfo,
                                                            pmix_op_cbfunc_t cbfunc,
                                                            void *cbdata);

typedef struct pmix_server_module_4_0_0_t {
    pmix_server_client_connected_fn_t client_connected;
    pmix_server_client_finalized_fn_t client_finalized;
    pmix_server_abort_fn_t abort;
    pmix_server_fencenb_fn_t fence_nb;
    pmix_server_dmodex_req_fn_t direct_modex;
    pmix_server_publish_fn_t publish;
    pmix_server_lookup_fn_t lookup;
    pmix_server_unpublish_fn_t unpublish;
    pmix_server_spawn_fn_t spawn;
    pmix_server_connect_fn_t connect;
    pmix_server_disconnect_fn_t disconnect;
    pmix_server_register_events_fn_t register_events;
    pmix_server_deregister_events_fn_t deregister_events;
    pmix_server_listener_fn_t listener;
    pmix_server_notify_event_fn_t notify_event;
    pmix_server_query_fn_t query;
    pmix_server_tool_connection_fn_t tool_connected;
    pmix_server_log_fn_t log;
    pmix_server_alloc_fn_t allocate;
    pmix_server_job_control_fn_t job_control;
    pmix_server_monitor_fn_t monitor;
    pmix_server_get_cred_fn_t get_credential;
    pmix_server_validate_cred_fn_t validate_credential;
    pmix_server_iof_fn_t iof_pull;
    pmix_server_stdin_fn_t push_stdin;
    pmix_server_grp_fn_t group;
    pmix_server_fabric_fn_t fabric;
    pmix_server_client_connected2_fn_t client_connected2;
} pmix_server_module_t; /* 224 */

pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_server_finalize(void);
pmix_status_t PMIx_generate_regex(const char *input, char **regex);
pmix_status_t PMIx_generate_ppn(const char *input, char **ppn);
/* The namespace is declared `const char nspace[]` (the Standard: a
 * `const pmix_nspace_t`, a 256-byte array type): the same pointer at the
 * ABI, but a string literal does not trip -Wstringop-overread. */
pmix_status_t PMIx_server_register_nspace(const char nspace[], int nlocalprocs,
                                          pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
void PMIx_server_deregister_nspace(const char nspace[], pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                          void *server_object, pmix_op_cbfunc_t cbfunc,
                                          void *cbdata);
void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata);
pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env);
/* Another node asks for what local process `proc` committed: `cbfunc` gets
 * it once the process has committed; `data` is valid only during the call. */
pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc,
                                         void *cbdata);

/* ---- the rest of the Standard's server interface. fastpmix does not
 * implement these: each returns PMIX_ERR_NOT_SUPPORTED and never calls its
 * callback (docs/abi.md). ---- */
pmix_status_t PMIx_server_setup_application(const char nspace[], pmix_info_t info[], size_t ninfo,
                                            pmix_setup_application_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_server_setup_local_support(const char nspace[], pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source, pmix_iof_channel_t channel,
                                      const pmix_byte_object_t *bo, const pmix_info_t info[],
                                      size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                            pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                            pmix_info_t directives[], size_t ndirs,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]);
pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset, char **locality);
pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                 char **cpuset_string);
pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members, size_t nmembers,
                                             const char *pset_name);
pmix_status_t PMIx_server_delete_process_set(char *pset_name);
pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                               pmix_op_cbfunc_t cbfunc, void *cbdata);

#ifdef __cplusplus
}
#endif

#endif /* FASTPMIX_PMIX_SERVER_H */
