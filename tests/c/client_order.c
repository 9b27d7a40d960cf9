/*
 * Event handler registration, ordering, results and deregistration, in one
 * process (run under `fastpmix run -n 1`).
 *
 * Prints:
 *   refs blocking <n> min=<ref> distinct=<0|1>
 *   nbreg <name> status=<st> ref=<ref> after_return=<0|1>
 *   notify_cb status=<st> after_return=<0|1>
 *   chain <code> <name>,<name>,...        (the order handlers ran in)
 *   retobj ok=<0|1> name=<own name>       (PMIX_EVENT_RETURN_OBJECT, PMIX_EVENT_HDLR_NAME)
 *   source_ok <0|1>
 *   results r2 ...  / results r3 ...      (what the chain passed down)
 *   released r1=<n> r2=<n>                (the handlers' result release callbacks)
 *   dereg blocking rc=<rc> calls_after=<n>
 *   dereg nb rc=<rc> cb_status=<st> after_return=<0|1> calls_after=<n>
 *   nb_slot rc=<rc> chain=<names>         (a registration right behind a pending _nb one)
 *   done
 */
#define _GNU_SOURCE
#include "client_common.h"

enum {
    C_ORDER = -6101,
    C_MULTI = -6102,
    C_RES = -6103,
    C_SENT = -6104,
    C_DEREG = -6105,
    C_DEREG_NB = -6106,
    C_SLOT = -6107,
};

static pmix_proc_t me;
static int retobj; /* its address is the handler's return object */

/* ---- what ran, per recorded code ---- */
#define NCODES 4
#define MAXREC 64
static const pmix_status_t recorded[NCODES] = {C_ORDER, C_MULTI, C_RES, C_SLOT};
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static char rec[NCODES][MAXREC][64];
static int nrec[NCODES];
static atomic_int bad_source;
static atomic_int retobj_ok = -1;

static void record(pmix_status_t code, const char *name)
{
    pthread_mutex_lock(&rec_lock);
    for (int c = 0; c < NCODES; c++) {
        if (recorded[c] == code && nrec[c] < MAXREC) {
            snprintf(rec[c][nrec[c]++], 64, "%s", name);
        }
    }
    pthread_mutex_unlock(&rec_lock);
}

static void print_chain(int c)
{
    char line[MAXREC * 64] = "";
    pthread_mutex_lock(&rec_lock);
    for (int i = 0; i < nrec[c]; i++) {
        if (i > 0) {
            strcat(line, ",");
        }
        strcat(line, rec[c][i]);
    }
    pthread_mutex_unlock(&rec_lock);
    out("chain %d %s", recorded[c], line[0] ? line : "-");
}

static atomic_int sentinels;
static atomic_int dereg_calls;
static atomic_int dereg_nb_calls;

/* Every ordering handler: records itself and lets the chain go on. */
static void generic(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) results;
    (void) nresults;
    const char *name = info_string(info, ninfo, PMIX_EVENT_HDLR_NAME);
    record(status, NULL != name ? name : "UNNAMED");
    if (C_ORDER == status && (NULL == source || !PMIX_CHECK_PROCID(source, &me)
                              || source->rank != me.rank)) {
        atomic_fetch_add(&bad_source, 1);
    }
    if (NULL != name && 0 == strcmp(name, "s_a") && C_ORDER == status) {
        const pmix_info_t *ro = find_info(info, ninfo, PMIX_EVENT_RETURN_OBJECT);
        atomic_store(&retobj_ok, NULL != ro && PMIX_POINTER == ro->value.type
                                     && ro->value.data.ptr == (void *) &retobj);
    }
    /* Default handlers see these codes too: count the named handler only. */
    if (NULL != name && 0 == strcmp(name, "sentinel")) {
        atomic_fetch_add(&sentinels, 1);
    } else if (NULL != name && 0 == strcmp(name, "dereg_b")) {
        atomic_fetch_add(&dereg_calls, 1);
    } else if (NULL != name && 0 == strcmp(name, "dereg_nb")) {
        atomic_fetch_add(&dereg_nb_calls, 1);
    }
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* ---- registration helpers ---- */
typedef struct {
    ret_gate_t gate;
    atomic_int done;
    int status;
    size_t ref;
    int after_return;
} nbreg_t;

static void reg_cb(pmix_status_t status, size_t refid, void *cbdata)
{
    nbreg_t *r = cbdata;
    r->after_return = after_return(&r->gate);
    r->status = status;
    r->ref = refid;
    atomic_store(&r->done, 1);
}

/* Builds the registration's info: its name, an optional directive (a flag,
 * or BEFORE/AFTER with a name), an optional return object. */
static size_t reg_info(pmix_info_t **info, const char *name, const char *directive,
                       const char *rel, void *ro)
{
    size_t n = 1 + (NULL != directive) + (NULL != ro), k = 0;
    PMIX_INFO_CREATE(*info, n);
    PMIX_INFO_LOAD(&(*info)[k++], PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    if (NULL != directive) {
        if (NULL != rel) {
            PMIX_INFO_LOAD(&(*info)[k++], directive, rel, PMIX_STRING);
        } else {
            /* A NULL bool is true (the Standard's idiom). */
            PMIX_INFO_LOAD(&(*info)[k++], directive, NULL, PMIX_BOOL);
        }
    }
    if (NULL != ro) {
        PMIX_INFO_LOAD(&(*info)[k++], PMIX_EVENT_RETURN_OBJECT, ro, PMIX_POINTER);
    }
    return n;
}

static int nrefs;
static int refs[64];

/* Blocking registration: returns the reference (fails the test on error). */
static int reg(const char *name, pmix_status_t *codes, size_t ncodes, const char *directive,
               const char *rel, pmix_notification_fn_t fn)
{
    pmix_info_t *info;
    size_t n = reg_info(&info, name, directive, rel,
                        0 == strcmp(name, "s_a") ? (void *) &retobj : NULL);
    int rc = PMIx_Register_event_handler(codes, ncodes, info, n, fn, NULL, NULL);
    PMIX_INFO_FREE(info, n);
    EXPECT(rc >= 1, "registering %s: %d (%s)", name, rc, PMIx_Error_string(rc));
    refs[nrefs++] = rc;
    return rc;
}

/* Non-blocking registration, waited for. */
static size_t reg_nb(const char *name, pmix_status_t *codes, size_t ncodes,
                     const char *directive, pmix_notification_fn_t fn)
{
    static nbreg_t r; /* one at a time */
    memset(&r, 0, sizeof r);
    pmix_info_t *info;
    size_t n = reg_info(&info, name, directive, NULL, NULL);
    gate_arm(&r.gate);
    int rc = PMIx_Register_event_handler(codes, ncodes, info, n, fn, reg_cb, &r);
    gate_open(&r.gate);
    PMIX_INFO_FREE(info, n);
    EXPECT(PMIX_SUCCESS == rc, "registering %s (nb): %d", name, rc);
    EXPECT(wait_at_least(&r.done, 1), "registration callback of %s never ran", name);
    out("nbreg %s status=%d ref=%zu after_return=%d", name, r.status, r.ref, r.after_return);
    return r.ref;
}

/* ---- notify ---- */
typedef struct {
    ret_gate_t gate;
    atomic_int done;
    int status;
    int after_return;
} opwait_t;

static void op_cb(pmix_status_t status, void *cbdata)
{
    opwait_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = status;
    atomic_store(&w->done, 1);
}

/* A notify callback that holds on until the main thread releases it. */
static atomic_int hold_release;

static void hold_cb(pmix_status_t status, void *cbdata)
{
    (void) status;
    (void) cbdata;
    double end = now_s() + HANG_SECS;
    while (!atomic_load(&hold_release) && now_s() < end) {
        sleep_ms(1);
    }
}

static void notify(pmix_status_t code)
{
    int rc = PMIx_Notify_event(code, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    EXPECT(PMIX_SUCCESS == rc, "notify %d: %d", code, rc);
}

static int sent_expected;

/* A PROC_LOCAL sentinel: once its handler ran, every event notified before
 * it has started its chain (one progress thread, FIFO). */
static void sync_sentinel(void)
{
    notify(C_SENT);
    sent_expected++;
    EXPECT(wait_at_least(&sentinels, sent_expected), "sentinel %d never arrived", sent_expected);
}

/* ---- the results chain (code C_RES): r1 -> r2 (async) -> r3 (ACTION_COMPLETE) -> r4 ---- */
static atomic_int released_r1, released_r2, r3_ran;

static void release_r1(pmix_status_t st, void *cbdata)
{
    (void) st;
    pmix_info_t *a = cbdata;
    PMIX_INFO_FREE(a, 2);
    atomic_fetch_add(&released_r1, 1);
}

static void release_r2(pmix_status_t st, void *cbdata)
{
    (void) st;
    pmix_info_t *a = cbdata;
    PMIX_INFO_FREE(a, 1);
    atomic_fetch_add(&released_r2, 1);
}

static void r1(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t *results, size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    record(status, "r1");
    pmix_info_t *res;
    int seven = 7;
    PMIX_INFO_CREATE(res, 2);
    PMIX_INFO_LOAD(&res[0], "test.r1.data", "alpha", PMIX_STRING);
    PMIX_INFO_LOAD(&res[1], "test.r1.num", &seven, PMIX_INT);
    cbfunc(PMIX_SUCCESS, res, 2, release_r1, res, cbdata);
}

typedef struct {
    pmix_info_t *info;
    size_t ninfo;
    pmix_info_t *results;
    size_t nresults;
    pmix_event_notification_cbfunc_fn_t cbfunc;
    void *cbdata;
} later_t;

static const char *status_entry(const pmix_info_t *r, size_t n, const char *name, char *buf)
{
    const pmix_info_t *i = find_info(r, n, name);
    if (NULL == i) {
        return "absent";
    }
    if (PMIX_STATUS != i->value.type) {
        sprintf(buf, "type%u", (unsigned) i->value.type);
        return buf;
    }
    sprintf(buf, "%d", i->value.data.status);
    return buf;
}

static const char *int_entry(const pmix_info_t *r, size_t n, const char *key, char *buf)
{
    const pmix_info_t *i = find_info(r, n, key);
    long long v;
    if (NULL == i) {
        return "absent";
    }
    if (!value_int(&i->value, &v)) {
        return "nonint";
    }
    sprintf(buf, "%lld", v);
    return buf;
}

static const char *str_entry(const pmix_info_t *r, size_t n, const char *key)
{
    const pmix_info_t *i = find_info(r, n, key);
    if (NULL == i) {
        return "absent";
    }
    return PMIX_STRING == i->value.type && NULL != i->value.data.string ? i->value.data.string
                                                                      : "nonstring";
}

/* r2 completes 50 ms later, from its own thread: the info and the results
 * it was given must still be valid until then. */
static void *r2_later(void *arg)
{
    later_t *l = arg;
    char b1[32], b2[32];
    sleep_ms(50);
    out("results r2 name=%s r1=%s r1.data=%s r1.num=%s",
        str_entry(l->info, l->ninfo, PMIX_EVENT_HDLR_NAME),
        status_entry(l->results, l->nresults, "r1", b1), str_entry(l->results, l->nresults,
                                                                   "test.r1.data"),
        int_entry(l->results, l->nresults, "test.r1.num", b2));
    /* RFC0018: an entry whose key the handler clears is removed. */
    for (size_t i = 0; i < l->nresults; i++) {
        if (PMIX_CHECK_KEY(&l->results[i], "test.r1.num")) {
            memset(l->results[i].key, 0, sizeof l->results[i].key);
        }
    }
    pmix_info_t *res;
    PMIX_INFO_CREATE(res, 1);
    PMIX_INFO_LOAD(&res[0], "test.r2.data", "beta", PMIX_STRING);
    l->cbfunc(PMIX_SUCCESS, res, 1, release_r2, res, l->cbdata);
    free(l);
    return NULL;
}

static void r2(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t *results, size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) source;
    record(status, "r2");
    later_t *l = malloc(sizeof *l);
    *l = (later_t){info, ninfo, results, nresults, cbfunc, cbdata};
    pthread_t t;
    EXPECT(0 == pthread_create(&t, NULL, r2_later, l), "pthread_create");
    pthread_detach(t);
}

static void r3(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t *results, size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) source;
    (void) info;
    (void) ninfo;
    char b1[32], b2[32], b3[32];
    record(status, "r3");
    out("results r3 r1=%s r1.data=%s r1.num=%s r2=%s r2.data=%s",
        status_entry(results, nresults, "r1", b1), str_entry(results, nresults, "test.r1.data"),
        int_entry(results, nresults, "test.r1.num", b2), status_entry(results, nresults, "r2", b3),
        str_entry(results, nresults, "test.r2.data"));
    atomic_store(&r3_ran, 1);
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void r4(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t *results, size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    record(status, "r4");
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

int main(void)
{
    setup_output();
    init_or_fail(&me);

    pmix_status_t order[] = {C_ORDER};
    pmix_status_t multi[] = {C_ORDER, C_MULTI};
    pmix_status_t other[] = {C_MULTI};

    /* Global slots. */
    reg("first", order, 1, PMIX_EVENT_HDLR_FIRST, NULL, generic);
    reg("last", NULL, 0, PMIX_EVENT_HDLR_LAST, NULL, generic);

    /* Single-code category, for C_ORDER. */
    reg("s_a", order, 1, NULL, NULL, generic);
    reg("s_b", order, 1, NULL, NULL, generic);                         /* prepended */
    reg("s_first", order, 1, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, NULL, generic);
    reg("s_last", order, 1, PMIX_EVENT_HDLR_LAST_IN_CATEGORY, NULL, generic);
    reg("s_prepend", order, 1, PMIX_EVENT_HDLR_PREPEND, NULL, generic); /* behind s_first */
    reg("s_append", order, 1, PMIX_EVENT_HDLR_APPEND, NULL, generic);   /* before s_last */
    reg("s_before_a", order, 1, PMIX_EVENT_HDLR_BEFORE, "s_a", generic);
    reg("s_after_b", order, 1, PMIX_EVENT_HDLR_AFTER, "s_b", generic);
    reg("s_plain", order, 1, NULL, NULL, generic); /* prepended, behind s_first */
    reg("s_other", other, 1, NULL, NULL, generic); /* single-code, for C_MULTI only */

    /* Multi-code category. */
    reg("m_a", multi, 2, NULL, NULL, generic);
    reg("m_first", multi, 2, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, NULL, generic);
    reg("m_last", multi, 2, PMIX_EVENT_HDLR_LAST_IN_CATEGORY, NULL, generic);
    reg("m_after_a", multi, 2, PMIX_EVENT_HDLR_AFTER, "m_a", generic);
    reg_nb("m_b", multi, 2, PMIX_EVENT_HDLR_APPEND, generic); /* before m_last */

    /* Default category. */
    reg("d_a", NULL, 0, NULL, NULL, generic);
    reg("d_first", NULL, 0, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, NULL, generic);
    reg("d_last", NULL, 0, PMIX_EVENT_HDLR_LAST_IN_CATEGORY, NULL, generic);
    reg("d_before_a", NULL, 0, PMIX_EVENT_HDLR_BEFORE, "d_a", generic);
    reg_nb("d_b", NULL, 0, NULL, generic); /* prepended, behind d_first */

    /* The results chain. */
    pmix_status_t res[] = {C_RES};
    reg("r1", res, 1, PMIX_EVENT_HDLR_APPEND, NULL, r1);
    reg("r2", res, 1, PMIX_EVENT_HDLR_APPEND, NULL, r2);
    reg("r3", res, 1, PMIX_EVENT_HDLR_APPEND, NULL, r3);
    reg_nb("r4", res, 1, PMIX_EVENT_HDLR_APPEND, r4);

    /* An environment code: the server is told of it before the callback. */
    pmix_status_t env[] = {PMIX_EVENT_NODE_DOWN};
    reg_nb("env_nb", env, 1, NULL, generic);

    pmix_status_t sent[] = {C_SENT};
    reg("sentinel", sent, 1, NULL, NULL, generic);

    int min = refs[0], distinct = 1;
    for (int i = 0; i < nrefs; i++) {
        min = refs[i] < min ? refs[i] : min;
        for (int j = 0; j < i; j++) {
            distinct &= refs[i] != refs[j];
        }
    }
    out("refs blocking %d min=%d distinct=%d", nrefs, min, distinct);

    /* C_ORDER with a callback: it runs after the call returned. */
    {
        static opwait_t w;
        gate_arm(&w.gate);
        int rc = PMIx_Notify_event(C_ORDER, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, op_cb, &w);
        gate_open(&w.gate);
        EXPECT(PMIX_SUCCESS == rc, "notify with callback: %d", rc);
        EXPECT(wait_at_least(&w.done, 1), "notify callback never ran");
        out("notify_cb status=%d after_return=%d", w.status, w.after_return);
    }
    notify(C_MULTI);
    notify(C_RES);
    EXPECT(wait_at_least(&r3_ran, 1), "r3 never ran");
    sync_sentinel();
    for (int c = 0; c < 3; c++) {
        print_chain(c);
    }
    out("retobj ok=%d", atomic_load(&retobj_ok));
    out("source_ok %d", 0 == atomic_load(&bad_source));
    out("released r1=%d r2=%d", atomic_load(&released_r1), atomic_load(&released_r2));

    /* Deregistration, blocking: no call after it returned. */
    {
        pmix_status_t c[] = {C_DEREG};
        int ref = reg("dereg_b", c, 1, NULL, NULL, generic);
        notify(C_DEREG);
        sync_sentinel();
        EXPECT(1 == atomic_load(&dereg_calls), "dereg_b before deregistration: %d",
               atomic_load(&dereg_calls));
        int rc = PMIx_Deregister_event_handler((size_t) ref, NULL, NULL);
        notify(C_DEREG);
        notify(C_DEREG);
        sync_sentinel();
        out("dereg blocking rc=%d calls_after=%d", rc, atomic_load(&dereg_calls) - 1);
    }
    /* Deregistration, non-blocking: no call after its callback ran. */
    {
        pmix_status_t c[] = {C_DEREG_NB};
        int ref = reg("dereg_nb", c, 1, NULL, NULL, generic);
        static opwait_t w;
        gate_arm(&w.gate);
        int rc = PMIx_Deregister_event_handler((size_t) ref, op_cb, &w);
        gate_open(&w.gate);
        EXPECT(wait_at_least(&w.done, 1), "deregistration callback never ran");
        notify(C_DEREG_NB);
        sync_sentinel();
        out("dereg nb rc=%d cb_status=%d after_return=%d calls_after=%d", rc, w.status,
            w.after_return, atomic_load(&dereg_nb_calls));
    }
    /* A registration made right behind a pending non-blocking one: the
     * pending one already holds its place (and its name). To make "pending"
     * certain, an earlier callback of this process (a notify's) is still
     * running: it returns only once slot_b's registration returned. */
    {
        pmix_status_t c[] = {C_SLOT};
        static nbreg_t r;
        int rc0 = PMIx_Notify_event(C_SENT, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, hold_cb, NULL);
        EXPECT(PMIX_SUCCESS == rc0, "notify with a holding callback: %d", rc0);
        sent_expected++;
        pmix_info_t *info;
        size_t n = reg_info(&info, "slot_a", NULL, NULL, NULL);
        gate_arm(&r.gate);
        int rc = PMIx_Register_event_handler(c, 1, info, n, generic, reg_cb, &r);
        gate_open(&r.gate);
        PMIX_INFO_FREE(info, n);
        EXPECT(PMIX_SUCCESS == rc, "slot_a: %d", rc);
        n = reg_info(&info, "slot_b", PMIX_EVENT_HDLR_BEFORE, "slot_a", NULL);
        int rc2 = PMIx_Register_event_handler(c, 1, info, n, generic, NULL, NULL);
        atomic_store(&hold_release, 1);
        PMIX_INFO_FREE(info, n);
        EXPECT(wait_at_least(&r.done, 1), "slot_a callback never ran");
        notify(C_SLOT);
        sync_sentinel();
        char line[256] = "";
        pthread_mutex_lock(&rec_lock);
        for (int i = 0; i < nrec[3]; i++) {
            strcat(line, i ? "," : "");
            strcat(line, rec[3][i]);
        }
        pthread_mutex_unlock(&rec_lock);
        out("nb_slot rc=%d chain=%s", rc2 >= 1 ? 1 : rc2, line[0] ? line : "-");
    }

    int rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
