/*
 * A handler that completes first and reads its arguments afterwards, as
 * widely copied example code does ("complete, then print the affected
 * process"). Every array a handler is handed (source, info, results) must
 * stay valid until the later of its return and its completion.
 *
 * Each scenario is a PROC_LOCAL event of its own code, carrying a payload
 * string and this process as PMIX_EVENT_AFFECTED_PROC, through a chain of
 * two handlers: a prepended one that completes at once with one result, and a
 * LAST reader that reads the source, the payload, the affected process and
 * that result, appended, at the scenario's moment:
 *   before  completes, then reads everything, then returns;
 *   inside  reads the source, completes, reads the rest, returns;
 *   after   returns at once; the main thread reads, then completes;
 *   thread  another thread completes while the handler is still running,
 *           and the handler reads after that completion;
 *   later   returns at once; another thread reads, then completes.
 * Each prints "read <scenario> <source> <payload> <affected> <result>".
 * Run under valgrind too (tests/c_client.rs): no invalid read anywhere.
 */
#define _GNU_SOURCE
#include "client_common.h"

#define PAYLOAD_KEY "fastpmix.test.payload"
#define RESULT_KEY "fastpmix.test.result"

enum { BEFORE, INSIDE, AFTER, THREAD, LATER, NSCEN };
static const char *names[NSCEN] = {"before", "inside", "after", "thread", "later"};
static const pmix_status_t base_code = -8200; /* user-defined codes, below PMIX_EXTERNAL_ERR_BASE */

static pmix_proc_t me;

/* What one reader call was handed, kept for a reader that runs later. */
typedef struct {
    int scen;
    const pmix_proc_t *source;
    const pmix_info_t *info;
    size_t ninfo;
    const pmix_info_t *results;
    size_t nresults;
    pmix_event_notification_cbfunc_fn_t cbfunc;
    void *cbdata;
    atomic_int returned;  /* the handler function returned */
    atomic_int completed; /* the completion was called */
    atomic_int read;      /* the arguments were read */
} call_t;

static call_t calls[NSCEN];

static int scenario_of(pmix_status_t code)
{
    int s = base_code - code;
    EXPECT(s >= 0 && s < NSCEN, "unexpected code %d", code);
    return s;
}

/* Freed memory is reused at once: a read of a freed array then sees junk
 * even without valgrind. */
static void churn_heap(void)
{
    for (int i = 0; i < 64; i++) {
        size_t n = 32 + (size_t) i * 48;
        char *p = malloc(n);
        EXPECT(p != NULL, "malloc");
        memset(p, 0xA5, n);
        free(p);
    }
}

static const char *string_of(const pmix_info_t *info, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (0 == strncmp(info[i].key, key, PMIX_MAX_KEYLEN) && PMIX_STRING == info[i].value.type) {
            return info[i].value.data.string;
        }
    }
    return "(none)";
}

static const char *affected_of(const pmix_info_t *info, size_t n, char *buf, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && PMIX_PROC == info[i].value.type) {
            return proc_str(info[i].value.data.proc, buf, len);
        }
    }
    return "(none)";
}

/* Reads everything the reader was handed and prints it. */
static void read_call(call_t *c)
{
    char src[300], aff[300];
    churn_heap();
    out("read %s %s %s %s %s", names[c->scen], proc_str(c->source, src, sizeof src),
        string_of(c->info, c->ninfo, PAYLOAD_KEY), affected_of(c->info, c->ninfo, aff, sizeof aff),
        string_of(c->results, c->nresults, RESULT_KEY));
    atomic_store(&c->read, 1);
}

static void complete(call_t *c)
{
    c->cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, c->cbdata);
    atomic_store(&c->completed, 1);
}

static void *complete_now(void *arg)
{
    complete(arg);
    return NULL;
}

static void *read_then_complete(void *arg)
{
    call_t *c = arg;
    EXPECT(wait_at_least(&c->returned, 1), "later: the handler never returned");
    sleep_ms(20);
    read_call(c);
    complete(c);
    return NULL;
}

/* ---- the prepended handler: completes at once with one result ---- */
static atomic_int released;

static void release_result(pmix_status_t st, void *cbdata)
{
    (void) st;
    pmix_info_t *r = cbdata;
    PMIX_INFO_FREE(r, 1);
    atomic_fetch_add(&released, 1);
}

static void producer(size_t id, pmix_status_t code, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    char value[64];
    snprintf(value, sizeof value, "result-%s", names[scenario_of(code)]);
    pmix_info_t *r;
    PMIX_INFO_CREATE(r, 1);
    PMIX_INFO_LOAD(&r[0], RESULT_KEY, value, PMIX_STRING);
    cbfunc(PMIX_SUCCESS, r, 1, release_result, r, cbdata);
}

/* ---- the appended handler: the reader ---- */
static void reader(size_t id, pmix_status_t code, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    int s = scenario_of(code);
    call_t *c = &calls[s];
    c->scen = s;
    c->source = source;
    c->info = info;
    c->ninfo = ninfo;
    c->results = results;
    c->nresults = nresults;
    c->cbfunc = cbfunc;
    c->cbdata = cbdata;
    pthread_t t;
    switch (s) {
    case BEFORE:
        complete(c);
        read_call(c);
        break;
    case INSIDE: {
        char src[300];
        churn_heap();
        out("source %s %s", names[s], proc_str(source, src, sizeof src));
        complete(c);
        read_call(c);
        break;
    }
    case AFTER:
        break; /* the main thread reads, then completes */
    case THREAD:
        EXPECT(0 == pthread_create(&t, NULL, complete_now, c), "pthread_create");
        EXPECT(0 == pthread_join(t, NULL), "pthread_join");
        read_call(c);
        break;
    case LATER:
        EXPECT(0 == pthread_create(&t, NULL, read_then_complete, c), "pthread_create");
        EXPECT(0 == pthread_detach(t), "pthread_detach");
        break;
    }
    atomic_store(&c->returned, 1);
}

static void reg(pmix_status_t code, const char *directive, pmix_notification_fn_t fn)
{
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], directive, NULL, PMIX_BOOL);
    int rc = PMIx_Register_event_handler(&code, 1, info, 1, fn, NULL, NULL);
    PMIX_INFO_FREE(info, 1);
    EXPECT(rc >= 1, "registering for %d: %d (%s)", code, rc, PMIx_Error_string(rc));
}

static void notify(int s)
{
    char payload[64];
    snprintf(payload, sizeof payload, "payload-%s", names[s]);
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 2);
    PMIX_INFO_LOAD(&info[0], PAYLOAD_KEY, payload, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_AFFECTED_PROC, &me, PMIX_PROC);
    int rc = PMIx_Notify_event(base_code - s, &me, PMIX_RANGE_PROC_LOCAL, info, 2, NULL, NULL);
    PMIX_INFO_FREE(info, 2);
    EXPECT(PMIX_SUCCESS == rc, "notify %s: %d", names[s], rc);
}

int main(void)
{
    setup_output();
    int rc = PMIx_Init(&me, NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Init: %d", rc);
    for (int s = 0; s < NSCEN; s++) {
        reg(base_code - s, PMIX_EVENT_HDLR_PREPEND, producer);
        reg(base_code - s, PMIX_EVENT_HDLR_APPEND, reader);
    }
    for (int s = 0; s < NSCEN; s++) {
        call_t *c = &calls[s];
        notify(s);
        EXPECT(wait_at_least(&c->returned, 1), "%s: the reader never ran", names[s]);
        if (AFTER == s) {
            sleep_ms(20);
            read_call(c);
            complete(c);
        }
        EXPECT(wait_at_least(&c->completed, 1), "%s: never completed", names[s]);
        EXPECT(wait_at_least(&c->read, 1), "%s: never read", names[s]);
    }
    EXPECT(wait_at_least(&released, NSCEN), "the producers' results were not all released");
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
