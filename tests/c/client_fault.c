/*
 * With a third argument "abort": rank 1 calls PMIx_Abort(7, msg, NULL, 0)
 * instead; the launcher ends the whole job with status 7.
 *
 * A fault handled by peers, 3 ranks (`fastpmix run -n 3 --abort-timeout 60
 * client_fault DIR`). Every rank registers for the events a launcher
 * raises when a process ends; after a handshake, rank 1 kills itself with
 * SIGKILL. Ranks 0 and 2 print what they were told, then finalize and
 * exit normally, as a resilient application would.
 *
 * Prints (ranks 0 and 2):
 *   saw <status name> affected=<rank> src=<rank or *> srcns_ok=<0|1>
 *       exit=<pmix.exit.code> terminate_job=<0|1> timeout=<secs or ->
 *   handled
 *   fence_all rc=<status name>          (a fence over the whole job)
 *   fence_survivors rc=<status name>    (a fence over ranks 0 and 2)
 */
#define _GNU_SOURCE
#include "client_common.h"

#include <signal.h>

static pmix_proc_t me;
static atomic_int aborted_seen;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) results;
    (void) nresults;
    const pmix_proc_t *aff = info_proc(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    const pmix_info_t *ex = find_info(info, ninfo, PMIX_EXIT_CODE);
    const pmix_info_t *tj = find_info(info, ninfo, PMIX_EVENT_TERMINATE_JOB);
    const pmix_info_t *to = find_info(info, ninfo, PMIX_EVENT_ACTION_TIMEOUT);
    long long exit_code = -1, timeout = -1;
    if (NULL != ex) {
        value_int(&ex->value, &exit_code);
    }
    if (NULL != to) {
        value_int(&to->value, &timeout);
    }
    char src[300], aff_s[300];
    out("saw %s affected=%s src=%s srcns_ok=%d exit=%lld terminate_job=%d timeout=%lld",
        PMIx_Error_string(status),
        NULL == aff ? "-" : strrchr(proc_str(aff, aff_s, sizeof aff_s), ':') + 1,
        NULL == source ? "-" : strrchr(proc_str(source, src, sizeof src), ':') + 1,
        NULL != source && PMIX_CHECK_NSPACE(source->nspace, me.nspace), exit_code,
        NULL != tj && PMIX_INFO_TRUE(tj), timeout);
    if (PMIX_ERR_PROC_ABORTED == status && NULL != aff && 1 == aff->rank) {
        atomic_store(&aborted_seen, 1);
    }
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* `client_fault DIR abort`: rank 1 gives up with PMIx_Abort (the whole
 * namespace: NULL procs); the others wait to be ended by the launcher. */
static int abort_mode(const char *dir)
{
    file_barrier(dir, "ready", me.rank, 3);
    if (1 == me.rank) {
        int rc = PMIx_Abort(7, "c-abort: giving up", NULL, 0);
        FAIL("PMIx_Abort returned %d", rc);
    }
    sleep_ms(HANG_SECS * 1000L);
    FAIL("rank %u outlived the abort", me.rank);
}

int main(int argc, char **argv)
{
    setup_output();
    EXPECT(argc == 2 || argc == 3, "usage: client_fault DIR [abort]");
    init_or_fail(&me);
    if (3 == argc) {
        EXPECT(0 == strcmp(argv[2], "abort"), "unknown mode %s", argv[2]);
        return abort_mode(argv[1]);
    }
    pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED};
    int rc = PMIx_Register_event_handler(codes, 2, NULL, 0, handler, NULL, NULL);
    EXPECT(rc >= 1, "register: %d", rc);
    file_barrier(argv[1], "ready", me.rank, 3);
    if (1 == me.rank) {
        raise(SIGKILL);
        FAIL("still alive after SIGKILL");
    }
    EXPECT(wait_at_least(&aborted_seen, 1), "rank %u never heard of rank 1's death", me.rank);
    out("handled");
    /* Coping: a fence over the whole job cannot complete any more (the
     * participant that died fails it), a fence over the survivors can. */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Fence(&all, 1, NULL, 0);
    out("fence_all rc=%s", PMIx_Error_string(rc));
    pmix_proc_t survivors[2];
    PMIX_LOAD_PROCID(&survivors[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&survivors[1], me.nspace, 2);
    rc = PMIx_Fence(survivors, 2, NULL, 0);
    out("fence_survivors rc=%s", PMIx_Error_string(rc));
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    return 0;
}
