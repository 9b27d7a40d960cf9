/*
 * PROC_LOCAL events kept for handlers registered later in the process
 * (run under `fastpmix run -n 1`). No handler exists when the events are
 * notified; each registration made afterwards is offered, once, those that
 * match it: an environment event, and a job event no handler took. A
 * PMIX_EVENT_DO_NOT_CACHE one is not kept.
 *
 * Prints:
 *   kept <handler> <code>:<seq>,...      (what each new handler was offered)
 *   source_ok <0|1>                      (every offered event names this process)
 *   done
 */
#define _GNU_SOURCE
#include "client_common.h"

enum {
    C_JOB = -6201,
    C_SENT = -6202,
};

static pmix_proc_t me;
static atomic_int sentinels, bad_source;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char seen[2][256];

static void record(int h, pmix_status_t status, const pmix_proc_t *source,
                   const pmix_info_t *info, size_t ninfo)
{
    long long seq = -1;
    const pmix_info_t *s = find_info(info, ninfo, "test.seq");
    if (NULL != s) {
        value_int(&s->value, &seq);
    }
    if (NULL == source || !PMIX_CHECK_PROCID(source, &me)) {
        atomic_fetch_add(&bad_source, 1);
    }
    pthread_mutex_lock(&lock);
    char item[64];
    snprintf(item, sizeof item, "%s%d:%lld", seen[h][0] ? "," : "", status, seq);
    strncat(seen[h], item, sizeof seen[h] - strlen(seen[h]) - 1);
    pthread_mutex_unlock(&lock);
}

#define HANDLER(name, h)                                                                      \
    static void name(size_t id, pmix_status_t status, const pmix_proc_t *source,              \
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults, \
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)                \
    {                                                                                         \
        (void) id;                                                                            \
        (void) results;                                                                       \
        (void) nresults;                                                                      \
        record(h, status, source, info, ninfo);                                               \
        if (NULL != cbfunc) {                                                                 \
            cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);                  \
        }                                                                                     \
    }
HANDLER(job_handler, 0)
HANDLER(env_handler, 1)

static void sentinel(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) info, (void) ninfo;
    (void) results, (void) nresults;
    atomic_fetch_add(&sentinels, 1);
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void notify(pmix_status_t code, int seq, int keep)
{
    pmix_info_t info[2];
    uint64_t s = (uint64_t) seq;
    bool no = true;
    PMIX_INFO_LOAD(&info[0], "test.seq", &s, PMIX_UINT64);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_DO_NOT_CACHE, &no, PMIX_BOOL);
    int rc = PMIx_Notify_event(code, &me, PMIX_RANGE_PROC_LOCAL, info, keep ? 1 : 2, NULL, NULL);
    EXPECT(PMIX_SUCCESS == rc, "notify %d: %d", code, rc);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

static int reg(pmix_status_t code, pmix_notification_fn_t fn)
{
    pmix_status_t c = code;
    int rc = PMIx_Register_event_handler(&c, 1, NULL, 0, fn, NULL, NULL);
    EXPECT(rc >= 1, "registering for %d: %d", code, rc);
    return rc;
}

/* Once the sentinel's handler ran, everything queued before it has run
 * (one progress thread, FIFO): the replays of earlier registrations too. */
static void sync_sentinel(void)
{
    static int expected;
    int rc = PMIx_Notify_event(C_SENT, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    EXPECT(PMIX_SUCCESS == rc, "sentinel: %d", rc);
    EXPECT(wait_at_least(&sentinels, ++expected), "sentinel %d never arrived", expected);
}

int main(void)
{
    setup_output();
    init_or_fail(&me);
    reg(C_SENT, sentinel);
    notify(PMIX_EVENT_NODE_DOWN, 1, 1);
    notify(C_JOB, 2, 1);
    notify(C_JOB, 3, 0); /* PMIX_EVENT_DO_NOT_CACHE */
    sync_sentinel();
    reg(C_JOB, job_handler);
    reg(PMIX_EVENT_NODE_DOWN, env_handler);
    sync_sentinel();
    out("kept job %s", seen[0][0] ? seen[0] : "-");
    out("kept env %s", seen[1][0] ? seen[1] : "-");
    out("source_ok %d", 0 == atomic_load(&bad_source));
    int rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
