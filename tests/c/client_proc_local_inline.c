/*
 * Where a blocking PROC_LOCAL notify runs this process's handler: on the
 * library's thread by default; in the notifying thread itself, before the
 * notify returns (as OpenPMIx 4.2 always does), when the process runs with
 * FASTPMIX_PROC_LOCAL_INLINE=1.
 * Prints "proc_local same_thread=<0|1> before_return=<0|1> calls=<n>":
 * the handler ran on the main thread, had run when PMIx_Notify_event
 * returned, and how often it ran over 100 notifies (each must run once).
 */
#define _GNU_SOURCE
#include "client_common.h"
#include <pthread.h>

static const pmix_status_t code = -8300; /* user-defined, below PMIX_EXTERNAL_ERR_BASE */
static pthread_t main_thread;
static atomic_int calls, on_main;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (pthread_equal(pthread_self(), main_thread))
        atomic_fetch_add(&on_main, 1);
    atomic_fetch_add(&calls, 1);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

int main(void)
{
    pmix_proc_t me;
    setup_output();
    main_thread = pthread_self();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "PMIx_Init: %d", rc);
    pmix_status_t codes[] = {code};
    rc = PMIx_Register_event_handler(codes, 1, NULL, 0, handler, NULL, NULL);
    EXPECT(rc > 0, "PMIx_Register_event_handler: %d", rc);
    rc = PMIx_Notify_event(code, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    EXPECT(rc == PMIX_SUCCESS, "PMIx_Notify_event: %d", rc);
    int before_return = atomic_load(&calls) == 1;
    for (int i = 1; i < 100; i++) {
        rc = PMIx_Notify_event(code, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
        EXPECT(rc == PMIX_SUCCESS, "PMIx_Notify_event: %d", rc);
    }
    EXPECT(wait_at_least(&calls, 100), "the handler ran %d times of 100", atomic_load(&calls));
    out("proc_local same_thread=%d before_return=%d calls=%d\n", atomic_load(&on_main) == 100,
        before_return, atomic_load(&calls));
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "PMIx_Finalize: %d", rc);
    out("done\n");
    return 0;
}
