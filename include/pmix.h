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

/* ---- query (results: one info per answered key, PMIX_INFO_FREE) ---- */
pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                              size_t *nresults);
pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata);

#ifdef __cplusplus
}
#endif

#endif /* FASTPMIX_PMIX_H */
