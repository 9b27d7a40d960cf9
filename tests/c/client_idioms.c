/*
 * What real PMIx clients do that the Standard's examples don't show: run
 * as `fastpmix run -n 2 client_idioms`.
 *
 *   untyped      a hand-built info array (calloc, key copied in, the value's
 *                type never set) in PMIx_Job_control: the untyped entry is
 *                ignored as if absent and the signal still arrives; the
 *                same entry marked PMIX_INFO_REQD is refused with
 *                PMIX_ERR_BAD_PARAM at the call, callback never run;
 *   from_handler a handler calls blocking PMIx_Get, PMIx_Job_control,
 *                PMIx_Notify_event and PMIx_Register_event_handler before
 *                completing;
 *   large        requests too large for the control channel (2 MiB of
 *                log text, of job-control info, of fence info) are refused
 *                with PMIX_ERR_BAD_PARAM at the call, and the connection
 *                stays in step: a fence of both ranks then succeeds;
 *   in_flight    rank 1 streams NAMESPACE events while rank 0 finalizes
 *                right after the first: both finalize with PMIX_SUCCESS.
 *   fork         a child forked after PMIx_Init gets PMIX_ERR_INIT from every
 *                call at once; the parent's connection stays in step;
 * With the argument "abort", rank 0 aborts with a 2 MiB message instead:
 * the job ends with the abort's status.
 */
#define _GNU_SOURCE
#include "client_common.h"

#include <signal.h>
#include <sys/wait.h>

static pmix_proc_t me;
static atomic_int usr1, usr2;

static void on_usr1(int s)
{
    (void) s;
    atomic_fetch_add(&usr1, 1);
}

static void on_usr2(int s)
{
    (void) s;
    atomic_fetch_add(&usr2, 1);
}

/* ---- untyped: a hand-built array whose second entry has no type ---- */
typedef struct {
    atomic_int done;
    int status;
} opwait_t;

static void info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void) info;
    (void) ninfo;
    opwait_t *w = cbdata;
    w->status = status;
    atomic_store(&w->done, 1);
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
}

static pmix_info_t *hand_built(int sig, bool required)
{
    pmix_info_t *d = calloc(2, sizeof *d);
    EXPECT(NULL != d, "calloc");
    strncpy(d[0].key, PMIX_JOB_CTRL_SIGNAL, PMIX_MAX_KEYLEN);
    d[0].value.type = PMIX_INT;
    d[0].value.data.integer = sig;
    /* The entry a hurried programmer left half done: key, no type. */
    strncpy(d[1].key, PMIX_JOB_CTRL_ID, PMIX_MAX_KEYLEN);
    if (required) {
        d[1].flags = PMIX_INFO_REQD;
    }
    return d;
}

static void mode_untyped(void)
{
    pmix_info_t *d = hand_built(SIGUSR1, false);
    opwait_t w = {0};
    int rc = PMIx_Job_control_nb(&me, 1, d, 2, info_cb, &w);
    EXPECT(wait_at_least(&w.done, 1), "the job-control callback never ran");
    EXPECT(wait_at_least(&usr1, 1), "SIGUSR1 never arrived");
    out("untyped rc=%s cb=%s signals=%d", PMIx_Error_string(rc), PMIx_Error_string(w.status),
        atomic_load(&usr1));
    free(d);

    d = hand_built(SIGUSR1, true);
    opwait_t w2 = {0};
    rc = PMIx_Job_control_nb(&me, 1, d, 2, info_cb, &w2);
    sleep_ms(200);
    out("untyped_required rc=%s callback_ran=%d signals=%d", PMIx_Error_string(rc),
        atomic_load(&w2.done), atomic_load(&usr1));
    free(d);
}

/* ---- from_handler: blocking calls inside a handler ---- */
#define C_CALLS (PMIX_EXTERNAL_ERR_BASE - 61)
#define C_INNER (PMIX_EXTERNAL_ERR_BASE - 62)
static atomic_int inner_seen, calls_done;

/* Counts the events of C_INNER and C_STREAM, and completes. */
static atomic_int streamed;

static void counting(size_t id, pmix_status_t code, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    atomic_fetch_add(C_INNER == code ? &inner_seen : &streamed, 1);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* Blocking PMIx_Job_control: signal `sig` to this process. */
static int signal_self(int sig)
{
    pmix_info_t *d;
    PMIX_INFO_CREATE(d, 1);
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    int rc = PMIx_Job_control(&me, 1, d, 1, &res, &nres);
    PMIX_INFO_FREE(d, 1);
    PMIX_INFO_FREE(res, nres);
    return rc;
}

static void calls(size_t id, pmix_status_t code, const pmix_proc_t *source, pmix_info_t info[],
                  size_t ninfo, pmix_info_t results[], size_t nresults,
                  pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) code;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    pmix_value_t *v = NULL;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    int get = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
    uint32_t size = (PMIX_SUCCESS == get && NULL != v) ? v->data.uint32 : 0;
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
    int jc = signal_self(SIGUSR2);
    pmix_status_t ic = C_INNER;
    int reg = PMIx_Register_event_handler(&ic, 1, NULL, 0, counting, NULL, NULL);
    int note = PMIx_Notify_event(C_INNER, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    out("from_handler get=%s size=%u job_control=%s register=%s notify=%s",
        PMIx_Error_string(get), size, PMIx_Error_string(jc), reg >= 1 ? "ref" : PMIx_Error_string(reg),
        PMIx_Error_string(note));
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    atomic_store(&calls_done, 1);
}

static void mode_from_handler(void)
{
    pmix_status_t c = C_CALLS;
    int rc = PMIx_Register_event_handler(&c, 1, NULL, 0, calls, NULL, NULL);
    EXPECT(rc >= 1, "register: %d", rc);
    rc = PMIx_Notify_event(C_CALLS, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    EXPECT(PMIX_SUCCESS == rc, "notify: %d", rc);
    EXPECT(wait_at_least(&calls_done, 1), "the handler's blocking calls never returned");
    EXPECT(wait_at_least(&inner_seen, 1), "the event notified from the handler never arrived");
    EXPECT(wait_at_least(&usr2, 1), "SIGUSR2 never arrived");
    out("from_handler_done inner=%d signals=%d", atomic_load(&inner_seen), atomic_load(&usr2));
}

/* ---- large: requests over the control channel's frame ---- */
#define BIG (2u << 20)

static char *big_text(void)
{
    char *t = malloc(BIG + 1);
    EXPECT(NULL != t, "malloc");
    memset(t, 'x', BIG);
    t[BIG] = '\0';
    return t;
}

static void op_cb(pmix_status_t status, void *cbdata)
{
    opwait_t *w = cbdata;
    w->status = status;
    atomic_store(&w->done, 1);
}

static void mode_large(void)
{
    char *t = big_text();
    pmix_info_t *d;
    PMIX_INFO_CREATE(d, 1);
    PMIX_INFO_LOAD(&d[0], PMIX_LOG_STDERR, t, PMIX_STRING);
    int log = PMIx_Log(d, 1, NULL, 0);
    opwait_t w = {0};
    int log_nb = PMIx_Log_nb(d, 1, NULL, 0, op_cb, &w);
    PMIX_INFO_FREE(d, 1);
    PMIX_INFO_CREATE(d, 2);
    int sig = 0;
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    PMIX_INFO_LOAD(&d[1], "fastpmix.test.big", t, PMIX_STRING);
    opwait_t jw = {0};
    int jc = PMIx_Job_control_nb(&me, 1, d, 2, info_cb, &jw);
    PMIX_INFO_FREE(d, 2);
    PMIX_INFO_CREATE(d, 1);
    PMIX_INFO_LOAD(&d[0], "fastpmix.test.big", t, PMIX_STRING);
    /* Over this process alone: a request to the server, too large. Over
     * the whole job (which runs on this node): through the fence barrier,
     * where nothing is sent, so no size limit applies. */
    int fence_big = PMIx_Fence(&me, 1, d, 1);
    int fence_big_all = PMIx_Fence(NULL, 0, d, 1);
    PMIX_INFO_FREE(d, 1);
    free(t);
    int fence = PMIx_Fence(NULL, 0, NULL, 0);
    sleep_ms(100);
    out("large log=%s log_nb=%s job_control_nb=%s fence_big=%s fence_big_all=%s callbacks=%d fence=%s",
        PMIx_Error_string(log), PMIx_Error_string(log_nb), PMIx_Error_string(jc),
        PMIx_Error_string(fence_big), PMIx_Error_string(fence_big_all),
        atomic_load(&w.done) + atomic_load(&jw.done),
        PMIx_Error_string(fence));
}

static void mode_abort(void)
{
    if (0 == me.rank) {
        char *t = big_text();
        PMIx_Abort(7, t, NULL, 0);
        free(t);
        FAIL("PMIx_Abort returned");
    }
    sleep_ms(HANG_SECS * 1000);
}

#define C_STREAM (PMIX_EXTERNAL_ERR_BASE - 63)

/* ---- fork: a child forked after PMIx_Init ---- */
static void mode_fork(void)
{
    fflush(stdout);
    pid_t pid = fork();
    EXPECT(pid >= 0, "fork: %s", strerror(errno));
    if (0 == pid) {
        /* Every call fails at once with PMIX_ERR_INIT; none touches the
         * parent's connection. The exit status carries the verdict. */
        pmix_proc_t job;
        PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t *v = NULL;
        int bad = 0;
        bad |= (0 != PMIx_Initialized()) << 0;
        bad |= (PMIX_ERR_INIT != PMIx_Fence(NULL, 0, NULL, 0)) << 1;
        bad |= (PMIX_ERR_INIT != PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v)) << 2;
        bad |= (PMIX_ERR_INIT
                != PMIx_Notify_event(C_STREAM, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL))
               << 3;
        bad |= (PMIX_ERR_INIT != PMIx_Init(NULL, NULL, 0)) << 4;
        bad |= (PMIX_ERR_INIT != PMIx_Finalize(NULL, 0)) << 5;
        _exit(bad);
    }
    int status = 0;
    EXPECT(pid == waitpid(pid, &status, 0), "waitpid: %s", strerror(errno));
    /* The parent's connection is in step: a fence of both ranks and a
     * server round trip. */
    int fence = PMIx_Fence(NULL, 0, NULL, 0);
    int jc = signal_self(SIGUSR2);
    out("fork child=%d fence=%s job_control=%s initialized=%d",
        WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
        PMIx_Error_string(fence), PMIx_Error_string(jc), PMIx_Initialized());
}

/* ---- in_flight: finalize while events stream in ---- */
#define STREAM 2000
static int mode_in_flight(void)
{
    pmix_status_t c = C_STREAM;
    int rc = PMIx_Register_event_handler(&c, 1, NULL, 0, counting, NULL, NULL);
    EXPECT(rc >= 1, "register: %d", rc);
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "fence: %d", rc);
    if (1 == me.rank) {
        for (int i = 0; i < STREAM; i++) {
            rc = PMIx_Notify_event(C_STREAM, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
            EXPECT(PMIX_SUCCESS == rc, "notify %d: %d", i, rc);
        }
    } else {
        EXPECT(wait_at_least(&streamed, 1), "no streamed event arrived");
    }
    return PMIx_Finalize(NULL, 0);
}

int main(int argc, char **argv)
{
    setup_output();
    signal(SIGUSR1, on_usr1);
    signal(SIGUSR2, on_usr2);
    int rc = PMIx_Init(&me, NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Init: %d", rc);
    if (argc > 1 && 0 == strcmp(argv[1], "abort")) {
        mode_abort();
    }
    mode_untyped();
    mode_from_handler();
    mode_large();
    mode_fork();
    rc = mode_in_flight();
    out("finalize rc=%s", PMIx_Error_string(rc));
    out("done");
    return PMIX_SUCCESS == rc ? 0 : 1;
}
