/*
 * fastpmix: the PMIx Standard's tool interface.
 *
 * Written for fastpmix from the Standard's definitions. fastpmix does not
 * implement tools or forwarded I/O: every function here returns
 * PMIX_ERR_NOT_SUPPORTED and never calls its callback (docs/abi.md). The
 * header exists so that code written for OpenPMIx 4.2 compiles unchanged.
 */
#ifndef FASTPMIX_PMIX_TOOL_H
#define FASTPMIX_PMIX_TOOL_H

#include "pmix.h"
#include "pmix_server.h"

#ifdef __cplusplus
extern "C" {
#endif

pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_tool_finalize(void);
pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server);
pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                         pmix_info_t info[], size_t ninfo);
pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers);
pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[], size_t ninfo);
/* Deprecated in favour of PMIx_tool_attach_to_server. */
pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);

pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                            const pmix_info_t directives[], size_t ndirs,
                            pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                            pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata);
pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[], size_t ndirs,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets, pmix_byte_object_t *bo,
                            const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                            void *cbdata);

#ifdef __cplusplus
}
#endif

#endif /* FASTPMIX_PMIX_TOOL_H */
