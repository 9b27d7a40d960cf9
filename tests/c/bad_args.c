/*
 * Every exported client function and helper, called with bad arguments
 * (`fastpmix run -n 1 bad_args`): NULL where a value is required, keys and
 * namespaces without a terminator or too long, unknown data types, wrongly
 * typed attributes; and every client call before PMIx_Init and after
 * PMIx_Finalize. Each row prints "row <name> <status>" (for non-blocking
 * calls that accepted the request: the status their callback got, or
 * "nocb" if it never came); tests/c_bad_args.rs holds the expected status
 * of each row. The process must survive them all and print "end".
 */
#define _GNU_SOURCE
#include "client_common.h"

#define ROW(name, expr)                                                                    \
    do {                                                                                   \
        long long row_rc_ = (long long) (expr);                                            \
        out("row %s %lld", name, row_rc_);                                                 \
    } while (0)

static pmix_proc_t me;

/* ---- callbacks ---- */
typedef struct {
    atomic_int done;
    int status;
} cbwait_t;

static cbwait_t cbw;

static void op_cb(pmix_status_t status, void *cbdata)
{
    cbwait_t *w = cbdata;
    w->status = status;
    atomic_store(&w->done, 1);
}

static void info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void) info;
    (void) ninfo;
    cbwait_t *w = cbdata;
    w->status = status;
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
    atomic_store(&w->done, 1);
}

static void value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    (void) kv;
    cbwait_t *w = cbdata;
    w->status = status;
    atomic_store(&w->done, 1);
}

static void reg_cb(pmix_status_t status, size_t refid, void *cbdata)
{
    (void) refid;
    cbwait_t *w = cbdata;
    w->status = status;
    atomic_store(&w->done, 1);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) info, (void) ninfo, (void) results,
        (void) nresults;
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* A non-blocking call: its return status if it refused the request, else
 * what its callback reported (5 s at most; "nocb" = -100000). */
static long long nb_outcome(int rc)
{
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    double end = now_s() + 5;
    while (!atomic_load(&cbw.done) && now_s() < end) {
        sleep_ms(2);
    }
    return atomic_load(&cbw.done) ? cbw.status : -100000;
}

static cbwait_t *fresh(void)
{
    atomic_store(&cbw.done, 0);
    cbw.status = 12345;
    return &cbw;
}

#define NB_ROW(name, call) out("row %s %lld", name, nb_outcome(call))

/* A blocking call that hands back results (a refusal carries its reason):
 * they are released after each row, so the program leaks nothing. */
#define RES_ROW(name, expr)                                                                \
    do {                                                                                   \
        res = NULL;                                                                        \
        nres = 0;                                                                          \
        ROW(name, expr);                                                                   \
        PMIX_INFO_FREE(res, nres);                                                         \
    } while (0)

/* ---- bad inputs ---- */
static char longkey[600];      /* 600 non-NUL bytes: no terminator within a key */
static pmix_proc_t bad_proc;   /* nspace without a terminator */
static pmix_proc_t good_proc;  /* this process (after init) */
static pmix_info_t bad_type;   /* an info of type 9999 */
static pmix_info_t bad_key;    /* an info whose key has no terminator */
static pmix_info_t ok_info;    /* a harmless info */
/* Keys for PMIx_Get in pmix_key_t buffers (see client_literal_key.c). */
static pmix_key_t job_size, no_such_key, empty_key;

static void make_bad_inputs(void)
{
    memset(longkey, 'k', sizeof longkey);
    PMIX_LOAD_KEY(job_size, PMIX_JOB_SIZE);
    PMIX_LOAD_KEY(no_such_key, "test.no.such.key");
    memset(empty_key, 0, sizeof empty_key);
    memset(bad_proc.nspace, 'n', sizeof bad_proc.nspace);
    bad_proc.rank = 0;
    PMIX_INFO_CONSTRUCT(&bad_type);
    PMIX_LOAD_KEY(bad_type.key, "test.bad.type");
    bad_type.value.type = 9999;
    PMIX_INFO_CONSTRUCT(&bad_key);
    memset(bad_key.key, 'k', sizeof bad_key.key);
    bad_key.value.type = PMIX_BOOL;
    bad_key.value.data.flag = true;
    PMIX_INFO_CONSTRUCT(&ok_info);
    PMIX_INFO_LOAD(&ok_info, "test.harmless", NULL, PMIX_BOOL);
}

/* One info (key, value), to be destructed by the caller. */
static pmix_info_t one(const char *key, const void *data, pmix_data_type_t t)
{
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    PMIX_INFO_LOAD(&i, key, data, t);
    return i;
}

static pmix_info_t required_unknown(void)
{
    pmix_info_t i = one("vendor.unknown.attribute", NULL, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&i);
    return i;
}

/* ---- every client call with valid arguments: before init and after finalize ---- */
static void client_calls(const char *when)
{
    char name[128];
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "test-ns", 0);
    pmix_value_t *val = NULL;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t code = -6400;
    pmix_info_t pause = one(PMIX_JOB_CTRL_PAUSE, NULL, PMIX_BOOL);
    pmix_info_t beat = one(PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    pmix_info_t logd = one(PMIX_LOG_STDOUT, "never", PMIX_STRING);
#define W(s) (snprintf(name, sizeof name, "%s_%s", s, when), name)
    ROW(W("initialized"), PMIx_Initialized());
    ROW(W("finalize"), PMIx_Finalize(NULL, 0));
    ROW(W("get"), PMIx_Get(&p, job_size, NULL, 0, &val));
    ROW(W("get_nb"), PMIx_Get_nb(&p, job_size, NULL, 0, value_cb, fresh()));
    ROW(W("fence"), PMIx_Fence(NULL, 0, NULL, 0));
    ROW(W("fence_nb"), PMIx_Fence_nb(NULL, 0, NULL, 0, op_cb, fresh()));
    ROW(W("register"), PMIx_Register_event_handler(&code, 1, NULL, 0, handler, NULL, NULL));
    ROW(W("register_nb"),
        PMIx_Register_event_handler(&code, 1, NULL, 0, handler, reg_cb, fresh()));
    ROW(W("deregister"), PMIx_Deregister_event_handler(1, NULL, NULL));
    ROW(W("deregister_nb"), PMIx_Deregister_event_handler(1, op_cb, fresh()));
    ROW(W("notify"), PMIx_Notify_event(code, NULL, PMIX_RANGE_LOCAL, NULL, 0, NULL, NULL));
    ROW(W("notify_nb"), PMIx_Notify_event(code, NULL, PMIX_RANGE_LOCAL, NULL, 0, op_cb, fresh()));
    RES_ROW(W("alloc"), PMIx_Allocation_request(PMIX_ALLOC_NEW, NULL, 0, &res, &nres));
    ROW(W("alloc_nb"), PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, NULL, 0, info_cb, fresh()));
    RES_ROW(W("job_control"), PMIx_Job_control(&p, 1, &pause, 1, &res, &nres));
    ROW(W("job_control_nb"), PMIx_Job_control_nb(&p, 1, &pause, 1, info_cb, fresh()));
    RES_ROW(W("monitor"), PMIx_Process_monitor(&beat, PMIX_SUCCESS, NULL, 0, &res, &nres));
    ROW(W("monitor_nb"), PMIx_Process_monitor_nb(&beat, PMIX_SUCCESS, NULL, 0, info_cb, fresh()));
    ROW(W("log"), PMIx_Log(&logd, 1, NULL, 0));
    ROW(W("log_nb"), PMIx_Log_nb(&logd, 1, NULL, 0, op_cb, fresh()));
    char *qkeys[] = {PMIX_QUERY_NAMESPACES, NULL};
    pmix_query_t query = {.keys = qkeys, .qualifiers = NULL, .nqual = 0};
    RES_ROW(W("query"), PMIx_Query_info(&query, 1, &res, &nres));
    ROW(W("query_nb"), PMIx_Query_info_nb(&query, 1, info_cb, fresh()));
    pmix_value_t one_int = {.type = PMIX_INT, .data.integer = 1};
    ROW(W("put"), PMIx_Put(PMIX_GLOBAL, "test.k", &one_int));
    ROW(W("commit"), PMIx_Commit());
    ROW(W("store_internal"), PMIx_Store_internal(&p, "test.k", &one_int));
    ROW(W("abort"), PMIx_Abort(1, "not initialised", NULL, 0));
    PMIx_Heartbeat();
    ROW(W("heartbeat"), 0);
#undef W
    PMIX_INFO_DESTRUCT(&pause);
    PMIX_INFO_DESTRUCT(&beat);
    PMIX_INFO_DESTRUCT(&logd);
}

static void get_rows(void)
{
    pmix_value_t *val = NULL;
    pmix_proc_t other_ns;
    PMIX_LOAD_PROCID(&other_ns, "test-no-such-ns", 0);
    ROW("get_null_val", PMIx_Get(&good_proc, job_size, NULL, 0, NULL));
    ROW("get_null_key", PMIx_Get(&good_proc, NULL, NULL, 0, &val));
    ROW("get_long_key", PMIx_Get(&good_proc, longkey, NULL, 0, &val));
    ROW("get_empty_key", PMIx_Get(&good_proc, empty_key, NULL, 0, &val));
    ROW("get_unterminated_nspace", PMIx_Get(&bad_proc, job_size, NULL, 0, &val));
    ROW("get_null_info_n1", PMIx_Get(&good_proc, job_size, NULL, 1, &val));
    ROW("get_info_bad_type", PMIx_Get(&good_proc, job_size, &bad_type, 1, &val));
    ROW("get_info_unterminated_key", PMIx_Get(&good_proc, job_size, &bad_key, 1, &val));
    ROW("get_unknown_key", PMIx_Get(&good_proc, no_such_key, NULL, 0, &val));
    ROW("get_other_nspace", PMIx_Get(&other_ns, job_size, NULL, 0, &val));
    ROW("get_val_left_null", NULL == val);
    pmix_info_t timeout_str = one(PMIX_TIMEOUT, "ten", PMIX_STRING);
    ROW("get_timeout_as_string", PMIx_Get(&good_proc, job_size, &timeout_str, 1, &val));
    ROW("get_val_still_null", NULL == val);
    NB_ROW("get_nb_timeout_as_string",
           PMIx_Get_nb(&good_proc, job_size, &timeout_str, 1, value_cb, fresh()));
    PMIX_INFO_DESTRUCT(&timeout_str);
    ROW("get_nb_null_cb", PMIx_Get_nb(&good_proc, job_size, NULL, 0, NULL, NULL));
    NB_ROW("get_nb_null_key", PMIx_Get_nb(&good_proc, NULL, NULL, 0, value_cb, fresh()));
    NB_ROW("get_nb_long_key", PMIx_Get_nb(&good_proc, longkey, NULL, 0, value_cb, fresh()));
}

/* PMIx_Put / PMIx_Commit / PMIx_Store_internal, and a Get of a rank the
 * job does not have. */
static void data_rows(void)
{
    pmix_value_t one_int = {.type = PMIX_INT, .data.integer = 1};
    pmix_value_t bad_value = {.type = 9999};
    pmix_value_t *val = NULL;
    pmix_proc_t outside;
    PMIX_LOAD_PROCID(&outside, me.nspace, 7);
    ROW("put_null_key", PMIx_Put(PMIX_GLOBAL, NULL, &one_int));
    ROW("put_long_key", PMIx_Put(PMIX_GLOBAL, longkey, &one_int));
    ROW("put_empty_key", PMIx_Put(PMIX_GLOBAL, empty_key, &one_int));
    ROW("put_null_val", PMIx_Put(PMIX_GLOBAL, "test.k", NULL));
    ROW("put_invalid_scope", PMIx_Put(9, "test.k", &one_int));
    ROW("put_val_bad_type", PMIx_Put(PMIX_GLOBAL, "test.k", &bad_value));
    ROW("store_internal_null_proc", PMIx_Store_internal(NULL, "test.k", &one_int));
    ROW("store_internal_null_key", PMIx_Store_internal(&good_proc, NULL, &one_int));
    ROW("store_internal_long_key", PMIx_Store_internal(&good_proc, longkey, &one_int));
    ROW("store_internal_null_val", PMIx_Store_internal(&good_proc, "test.k", NULL));
    ROW("store_internal_unterminated_nspace",
        PMIx_Store_internal(&bad_proc, "test.k", &one_int));
    ROW("commit_nothing_put", PMIx_Commit());
    ROW("get_rank_outside_job", PMIx_Get(&outside, "test.k", NULL, 0, &val));
    ROW("get_outside_val_left_null", NULL == val);
}

static void fence_rows(void)
{
    pmix_info_t collect = one(PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    pmix_info_t timeout_str = one(PMIX_TIMEOUT, "ten", PMIX_STRING);
    pmix_info_t reqd = required_unknown();
    pmix_proc_t unknown_ns, special;
    PMIX_LOAD_PROCID(&unknown_ns, "test-no-such-ns", PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&special, me.nspace, PMIX_RANK_LOCAL_NODE);
    ROW("fence_null_procs_n2", PMIx_Fence(NULL, 2, NULL, 0));
    ROW("fence_unterminated_nspace", PMIx_Fence(&bad_proc, 1, NULL, 0));
    ROW("fence_null_info_n1", PMIx_Fence(NULL, 0, NULL, 1));
    ROW("fence_info_bad_type", PMIx_Fence(NULL, 0, &bad_type, 1));
    ROW("fence_info_unterminated_key", PMIx_Fence(NULL, 0, &bad_key, 1));
    ROW("fence_collect_data", PMIx_Fence(NULL, 0, &collect, 1));
    ROW("fence_timeout_as_string", PMIx_Fence(NULL, 0, &timeout_str, 1));
    ROW("fence_required_unknown", PMIx_Fence(NULL, 0, &reqd, 1));
    ROW("fence_unknown_nspace", PMIx_Fence(&unknown_ns, 1, NULL, 0));
    ROW("fence_special_rank", PMIx_Fence(&special, 1, NULL, 0));
    NB_ROW("fence_nb_collect_data", PMIx_Fence_nb(NULL, 0, &collect, 1, op_cb, fresh()));
    NB_ROW("fence_nb_null_procs_n2", PMIx_Fence_nb(NULL, 2, NULL, 0, op_cb, fresh()));
    PMIX_INFO_DESTRUCT(&collect);
    PMIX_INFO_DESTRUCT(&timeout_str);
    PMIX_INFO_DESTRUCT(&reqd);
}

static void register_rows(void)
{
    pmix_status_t code = -6401;
    int fortytwo = 42;
    pmix_data_range_t bad_range = 100, custom = PMIX_RANGE_CUSTOM;
    pmix_info_t first_str = one(PMIX_EVENT_HDLR_FIRST, "yes", PMIX_STRING);
    pmix_info_t range_str = one(PMIX_RANGE, "namespace", PMIX_STRING);
    pmix_info_t name_int = one(PMIX_EVENT_HDLR_NAME, &fortytwo, PMIX_INT);
    pmix_info_t range_bad = one(PMIX_RANGE, &bad_range, PMIX_DATA_RANGE);
    pmix_info_t range_custom = one(PMIX_RANGE, &custom, PMIX_DATA_RANGE);
    pmix_info_t before = one(PMIX_EVENT_HDLR_BEFORE, "test-no-such-handler", PMIX_STRING);
    pmix_info_t reqd = required_unknown();
    pmix_info_t two[2];
    two[0] = one(PMIX_EVENT_HDLR_FIRST, NULL, PMIX_BOOL);
    two[1] = one(PMIX_EVENT_HDLR_LAST, NULL, PMIX_BOOL);
    ROW("register_null_handler",
        PMIx_Register_event_handler(&code, 1, NULL, 0, NULL, NULL, NULL));
    ROW("register_null_codes_n2",
        PMIx_Register_event_handler(NULL, 2, NULL, 0, handler, NULL, NULL));
    ROW("register_null_info_n1",
        PMIx_Register_event_handler(&code, 1, NULL, 1, handler, NULL, NULL));
    ROW("register_info_bad_type",
        PMIx_Register_event_handler(&code, 1, &bad_type, 1, handler, NULL, NULL));
    ROW("register_info_unterminated_key",
        PMIx_Register_event_handler(&code, 1, &bad_key, 1, handler, NULL, NULL));
    ROW("register_first_as_string",
        PMIx_Register_event_handler(&code, 1, &first_str, 1, handler, NULL, NULL));
    ROW("register_range_as_string",
        PMIx_Register_event_handler(&code, 1, &range_str, 1, handler, NULL, NULL));
    ROW("register_name_as_int",
        PMIx_Register_event_handler(&code, 1, &name_int, 1, handler, NULL, NULL));
    ROW("register_invalid_range",
        PMIx_Register_event_handler(&code, 1, &range_bad, 1, handler, NULL, NULL));
    ROW("register_custom_range_without_list",
        PMIx_Register_event_handler(&code, 1, &range_custom, 1, handler, NULL, NULL));
    ROW("register_required_unknown",
        PMIx_Register_event_handler(&code, 1, &reqd, 1, handler, NULL, NULL));
    ROW("register_before_unknown_name",
        PMIx_Register_event_handler(&code, 1, &before, 1, handler, NULL, NULL));
    ROW("register_two_placements",
        PMIx_Register_event_handler(&code, 1, two, 2, handler, NULL, NULL));
    NB_ROW("register_nb_null_handler",
           PMIx_Register_event_handler(&code, 1, NULL, 0, NULL, reg_cb, fresh()));
    NB_ROW("register_nb_info_bad_type",
           PMIx_Register_event_handler(&code, 1, &bad_type, 1, handler, reg_cb, fresh()));
    NB_ROW("register_nb_first_as_string",
           PMIx_Register_event_handler(&code, 1, &first_str, 1, handler, reg_cb, fresh()));
    NB_ROW("register_nb_required_unknown",
           PMIx_Register_event_handler(&code, 1, &reqd, 1, handler, reg_cb, fresh()));
    NB_ROW("register_nb_before_unknown_name",
           PMIx_Register_event_handler(&code, 1, &before, 1, handler, reg_cb, fresh()));
    ROW("deregister_unknown_ref", PMIx_Deregister_event_handler(987654, NULL, NULL));
    ROW("deregister_ref_0", PMIx_Deregister_event_handler(0, NULL, NULL));
    NB_ROW("deregister_nb_unknown_ref", PMIx_Deregister_event_handler(987654, op_cb, fresh()));
    PMIX_INFO_DESTRUCT(&first_str);
    PMIX_INFO_DESTRUCT(&range_str);
    PMIX_INFO_DESTRUCT(&name_int);
    PMIX_INFO_DESTRUCT(&range_bad);
    PMIX_INFO_DESTRUCT(&range_custom);
    PMIX_INFO_DESTRUCT(&before);
    PMIX_INFO_DESTRUCT(&reqd);
    PMIX_INFO_DESTRUCT(&two[0]);
    PMIX_INFO_DESTRUCT(&two[1]);
}

/* An info whose value nests `depth` data arrays of infos, each holding one
 * info (the innermost an int). Freed with free_nested. */
static pmix_info_t nested(size_t depth)
{
    pmix_info_t cur;
    int v = 7;
    PMIX_INFO_CONSTRUCT(&cur);
    PMIx_Info_load(&cur, "test.leaf", &v, PMIX_INT);
    for (size_t d = 0; d < depth; d++) {
        pmix_info_t *one_info = calloc(1, sizeof *one_info);
        pmix_data_array_t *a = calloc(1, sizeof *a);
        if (NULL == one_info || NULL == a) {
            abort();
        }
        *one_info = cur;
        a->type = PMIX_INFO;
        a->size = 1;
        a->array = one_info;
        PMIX_INFO_CONSTRUCT(&cur);
        PMIX_LOAD_KEY(cur.key, "test.nest");
        cur.value.type = PMIX_DATA_ARRAY;
        cur.value.data.darray = a;
    }
    return cur;
}

/* Frees what nested() built, without recursion. */
static void free_nested(pmix_info_t *i)
{
    pmix_data_array_t *a = PMIX_DATA_ARRAY == i->value.type ? i->value.data.darray : NULL;
    while (NULL != a) {
        pmix_info_t *inner = a->array;
        pmix_data_array_t *next =
            PMIX_DATA_ARRAY == inner->value.type ? inner->value.data.darray : NULL;
        free(inner);
        free(a);
        a = next;
    }
}

static void nesting_rows(void)
{
    pmix_status_t code = -6403;
    pmix_info_t deep = nested(5000), limit = nested(32), over = nested(33);
    ROW("notify_info_nested_5000_deep",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, &deep, 1, NULL, NULL));
    ROW("notify_info_nested_33_deep",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, &over, 1, NULL, NULL));
    ROW("notify_info_nested_32_deep",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, &limit, 1, NULL, NULL));
    pmix_info_t *res = NULL;
    size_t nres = 0;
    ROW("job_control_info_nested_5000_deep", PMIx_Job_control(NULL, 0, &deep, 1, &res, &nres));
    pmix_info_t dst;
    PMIX_INFO_CONSTRUCT(&dst);
    ROW("info_xfer_nested_5000_deep", PMIx_Info_xfer(&dst, &deep));
    ROW("info_xfer_nested_left_undef", PMIX_UNDEF == dst.value.type);
    PMIX_INFO_DESTRUCT(&dst);
    free_nested(&deep);
    free_nested(&limit);
    free_nested(&over);
}

static void notify_rows(void)
{
    pmix_status_t code = -6402;
    int fortytwo = 42;
    pmix_info_t custom_str = one(PMIX_EVENT_CUSTOM_RANGE, "rank 0", PMIX_STRING);
    pmix_info_t affected_int = one(PMIX_EVENT_AFFECTED_PROC, &fortytwo, PMIX_INT);
    pmix_info_t custom_list = one(PMIX_EVENT_CUSTOM_RANGE, &good_proc, PMIX_PROC);
    /* A custom range as a data array of strings, and as a NULL array. */
    pmix_data_array_t *strs;
    PMIX_DATA_ARRAY_CREATE(strs, 1, PMIX_STRING);
    ((char **) strs->array)[0] = strdup("rank 0");
    pmix_info_t custom_strs = one(PMIX_EVENT_CUSTOM_RANGE, strs, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(strs);
    pmix_info_t custom_null = one(PMIX_EVENT_CUSTOM_RANGE, NULL, PMIX_DATA_ARRAY);
    /* An info holding a data array whose element type is unknown. */
    pmix_data_array_t bad_elems = {.type = 9999, .size = 1, .array = &fortytwo};
    pmix_info_t darray_bad;
    PMIX_INFO_CONSTRUCT(&darray_bad);
    PMIX_LOAD_KEY(darray_bad.key, "test.bad.array");
    darray_bad.value.type = PMIX_DATA_ARRAY;
    darray_bad.value.data.darray = &bad_elems;
    ROW("notify_invalid_range", PMIx_Notify_event(code, NULL, 100, NULL, 0, NULL, NULL));
    ROW("notify_range_invalid_255",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_INVALID, NULL, 0, NULL, NULL));
    ROW("notify_null_info_n1",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_LOCAL, NULL, 1, NULL, NULL));
    ROW("notify_info_bad_type",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_LOCAL, &bad_type, 1, NULL, NULL));
    ROW("notify_info_unterminated_key",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_LOCAL, &bad_key, 1, NULL, NULL));
    ROW("notify_custom_without_list",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_CUSTOM, NULL, 0, NULL, NULL));
    ROW("notify_custom_list_as_string",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_CUSTOM, &custom_str, 1, NULL, NULL));
    ROW("notify_affected_proc_as_int",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_LOCAL, &affected_int, 1, NULL, NULL));
    ROW("notify_list_with_namespace_range",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_NAMESPACE, &custom_list, 1, NULL, NULL));
    ROW("notify_custom_list_of_strings",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_CUSTOM, &custom_strs, 1, NULL, NULL));
    ROW("notify_custom_list_null_array",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_CUSTOM, &custom_null, 1, NULL, NULL));
    ROW("notify_info_darray_bad_type",
        PMIx_Notify_event(code, NULL, PMIX_RANGE_LOCAL, &darray_bad, 1, NULL, NULL));
    NB_ROW("notify_nb_invalid_range", PMIx_Notify_event(code, NULL, 100, NULL, 0, op_cb, fresh()));
    PMIX_INFO_DESTRUCT(&custom_strs);
    PMIX_INFO_DESTRUCT(&custom_null);
    PMIX_INFO_DESTRUCT(&custom_str);
    PMIX_INFO_DESTRUCT(&affected_int);
    PMIX_INFO_DESTRUCT(&custom_list);
}

static void job_rows(void)
{
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_info_t pause = one(PMIX_JOB_CTRL_PAUSE, NULL, PMIX_BOOL);
    pmix_info_t pause_str = one(PMIX_JOB_CTRL_PAUSE, "yes", PMIX_STRING);
    /* A harmless action with it (a declaration), in case it were not refused. */
    pmix_info_t reqd[2] = {required_unknown(), one(PMIX_JOB_CTRL_PREEMPTIBLE, NULL, PMIX_BOOL)};
    pmix_proc_t nobody;
    PMIX_LOAD_PROCID(&nobody, me.nspace, 7);
    RES_ROW("job_control_null_targets_n1", PMIx_Job_control(NULL, 1, &pause, 1, &res, &nres));
    RES_ROW("job_control_unterminated_nspace",
        PMIx_Job_control(&bad_proc, 1, &pause, 1, &res, &nres));
    RES_ROW("job_control_null_directives_n1", PMIx_Job_control(NULL, 0, NULL, 1, &res, &nres));
    RES_ROW("job_control_no_directive", PMIx_Job_control(NULL, 0, NULL, 0, &res, &nres));
    RES_ROW("job_control_directive_bad_type", PMIx_Job_control(NULL, 0, &bad_type, 1, &res, &nres));
    RES_ROW("job_control_pause_as_string", PMIx_Job_control(NULL, 0, &pause_str, 1, &res, &nres));
    RES_ROW("job_control_required_unknown", PMIx_Job_control(NULL, 0, reqd, 2, &res, &nres));
    RES_ROW("job_control_unknown_rank", PMIx_Job_control(&nobody, 1, &pause, 1, &res, &nres));
    NB_ROW("job_control_nb_pause_as_string",
           PMIx_Job_control_nb(NULL, 0, &pause_str, 1, info_cb, fresh()));
    NB_ROW("job_control_nb_null_targets_n1",
           PMIx_Job_control_nb(NULL, 1, &pause, 1, info_cb, fresh()));

    pmix_info_t beat = one(PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    static int fortytwo_m = 42;
    pmix_info_t unknown_mon = one("test.no.such.monitor", NULL, PMIX_BOOL);
    pmix_info_t time_str = one(PMIX_MONITOR_HEARTBEAT_TIME, "one", PMIX_STRING);
    pmix_info_t mreqd = required_unknown();
    RES_ROW("monitor_null", PMIx_Process_monitor(NULL, PMIX_SUCCESS, NULL, 0, &res, &nres));
    RES_ROW("monitor_bad_type", PMIx_Process_monitor(&bad_type, PMIX_SUCCESS, NULL, 0, &res, &nres));
    RES_ROW("monitor_unterminated_key",
        PMIx_Process_monitor(&bad_key, PMIX_SUCCESS, NULL, 0, &res, &nres));
    RES_ROW("monitor_null_directives_n1",
        PMIx_Process_monitor(&beat, PMIX_SUCCESS, NULL, 1, &res, &nres));
    RES_ROW("monitor_heartbeat_without_time",
        PMIx_Process_monitor(&beat, PMIX_SUCCESS, NULL, 0, &res, &nres));
    RES_ROW("monitor_time_as_string",
        PMIx_Process_monitor(&beat, PMIX_SUCCESS, &time_str, 1, &res, &nres));
    RES_ROW("monitor_required_unknown",
        PMIx_Process_monitor(&beat, PMIX_SUCCESS, &mreqd, 1, &res, &nres));
    RES_ROW("monitor_unknown_kind",
        PMIx_Process_monitor(&unknown_mon, PMIX_SUCCESS, NULL, 0, &res, &nres));
    /* A NULL monitor value is "every field"; any other non-array is not. */
    pmix_info_t usage_str = one(PMIX_MONITOR_PROC_RESOURCE_USAGE, "all", PMIX_STRING);
    pmix_info_t usage_ptr = one(PMIX_MONITOR_PROC_RESOURCE_USAGE, &fortytwo_m, PMIX_POINTER);
    RES_ROW("monitor_usage_as_string",
        PMIx_Process_monitor(&usage_str, PMIX_SUCCESS, NULL, 0, &res, &nres));
    RES_ROW("monitor_usage_as_non_null_pointer",
        PMIx_Process_monitor(&usage_ptr, PMIX_SUCCESS, NULL, 0, &res, &nres));
    PMIX_INFO_DESTRUCT(&usage_str);
    PMIX_INFO_DESTRUCT(&usage_ptr);
    ROW("monitor_nb_null", PMIx_Process_monitor_nb(NULL, PMIX_SUCCESS, NULL, 0, info_cb, fresh()));
    NB_ROW("monitor_nb_time_as_string",
           PMIx_Process_monitor_nb(&beat, PMIX_SUCCESS, &time_str, 1, info_cb, fresh()));

    int fortytwo = 42;
    pmix_info_t out_int = one(PMIX_LOG_STDOUT, &fortytwo, PMIX_INT);
    pmix_info_t logd = one(PMIX_LOG_STDOUT, "bad_args: never printed", PMIX_STRING);
    pmix_info_t lreqd = required_unknown();
    ROW("log_no_data", PMIx_Log(NULL, 0, NULL, 0));
    ROW("log_null_data_n1", PMIx_Log(NULL, 1, NULL, 0));
    ROW("log_data_bad_type", PMIx_Log(&bad_type, 1, NULL, 0));
    ROW("log_stdout_as_int", PMIx_Log(&out_int, 1, NULL, 0));
    ROW("log_no_channel", PMIx_Log(&ok_info, 1, NULL, 0));
    ROW("log_required_unknown_directive", PMIx_Log(&logd, 1, &lreqd, 1));
    ROW("log_null_directives_n1", PMIx_Log(&logd, 1, NULL, 1));
    NB_ROW("log_nb_no_data", PMIx_Log_nb(NULL, 0, NULL, 0, op_cb, fresh()));
    NB_ROW("log_nb_stdout_as_int", PMIx_Log_nb(&out_int, 1, NULL, 0, op_cb, fresh()));

    pmix_info_t cpus_str = one(PMIX_ALLOC_NUM_CPUS, "two", PMIX_STRING);
    RES_ROW("alloc_null_info_n1", PMIx_Allocation_request(PMIX_ALLOC_NEW, NULL, 1, &res, &nres));
    RES_ROW("alloc_info_bad_type",
        PMIx_Allocation_request(PMIX_ALLOC_NEW, &bad_type, 1, &res, &nres));
    RES_ROW("alloc_cpus_as_string",
        PMIx_Allocation_request(PMIX_ALLOC_NEW, &cpus_str, 1, &res, &nres));
    NB_ROW("alloc_nb_cpus_as_string",
           PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, &cpus_str, 1, info_cb, fresh()));

    ROW("abort_null_procs_n1", PMIx_Abort(1, "bad", NULL, 1));
    ROW("abort_unterminated_nspace", PMIx_Abort(1, "bad", &bad_proc, 1));

    PMIX_INFO_DESTRUCT(&pause);
    PMIX_INFO_DESTRUCT(&pause_str);
    PMIX_INFO_DESTRUCT(&reqd[0]);
    PMIX_INFO_DESTRUCT(&reqd[1]);
    PMIX_INFO_DESTRUCT(&beat);
    PMIX_INFO_DESTRUCT(&unknown_mon);
    PMIX_INFO_DESTRUCT(&time_str);
    PMIX_INFO_DESTRUCT(&mreqd);
    PMIX_INFO_DESTRUCT(&out_int);
    PMIX_INFO_DESTRUCT(&logd);
    PMIX_INFO_DESTRUCT(&lreqd);
    PMIX_INFO_DESTRUCT(&cpus_str);
}

static void helper_rows(void)
{
    pmix_info_t i, dst;
    PMIX_INFO_CONSTRUCT(&i);
    PMIX_INFO_CONSTRUCT(&dst);
    int v = 1;
    ROW("info_load_null_info", PMIx_Info_load(NULL, "test.k", &v, PMIX_INT));
    ROW("info_load_null_key", PMIx_Info_load(&i, NULL, &v, PMIX_INT));
    ROW("info_load_long_key", PMIx_Info_load(&i, longkey, &v, PMIX_INT));
    ROW("info_load_empty_key", PMIx_Info_load(&i, "", &v, PMIX_INT));
    ROW("info_load_bad_type", PMIx_Info_load(&i, "test.k", &v, 9999));
    ROW("info_load_null_int", PMIx_Info_load(&i, "test.k", NULL, PMIX_INT));
    ROW("info_load_left_undef", PMIX_UNDEF == i.value.type);
    ROW("info_xfer_null_dest", PMIx_Info_xfer(NULL, &ok_info));
    ROW("info_xfer_null_src", PMIx_Info_xfer(&dst, NULL));
    ROW("info_xfer_bad_type", PMIx_Info_xfer(&dst, &bad_type));
    PMIX_INFO_DESTRUCT(&dst);
    PMIX_INFO_DESTRUCT(&i);

    pmix_value_t val, bad_val, dstv;
    PMIX_VALUE_CONSTRUCT(&val);
    PMIX_VALUE_CONSTRUCT(&bad_val);
    PMIX_VALUE_CONSTRUCT(&dstv);
    bad_val.type = 9999;
    void *data = NULL;
    size_t sz = 0;
    ROW("value_load_null_value", PMIx_Value_load(NULL, &v, PMIX_INT));
    ROW("value_load_bad_type", PMIx_Value_load(&val, &v, 9999));
    ROW("value_load_null_int", PMIx_Value_load(&val, NULL, PMIX_INT));
    ROW("value_unload_null_value", PMIx_Value_unload(NULL, &data, &sz));
    ROW("value_unload_null_data", PMIx_Value_unload(&val, NULL, &sz));
    ROW("value_unload_null_size", PMIx_Value_unload(&val, &data, NULL));
    ROW("value_xfer_null_dest", PMIx_Value_xfer(NULL, &val));
    ROW("value_xfer_null_src", PMIx_Value_xfer(&dstv, NULL));
    ROW("value_xfer_bad_type", PMIx_Value_xfer(&dstv, &bad_val));
    PMIX_VALUE_DESTRUCT(&dstv);
    PMIX_VALUE_DESTRUCT(&val);

    void *list;
    PMIX_INFO_LIST_START(list);
    ROW("info_list_add_null_list", PMIx_Info_list_add(NULL, "test.k", &v, PMIX_INT));
    ROW("info_list_add_null_key", PMIx_Info_list_add(list, NULL, &v, PMIX_INT));
    ROW("info_list_add_long_key", PMIx_Info_list_add(list, longkey, &v, PMIX_INT));
    ROW("info_list_add_bad_type", PMIx_Info_list_add(list, "test.k", &v, 9999));
    ROW("info_list_xfer_null_info", PMIx_Info_list_xfer(list, NULL));
    ROW("info_list_xfer_bad_type", PMIx_Info_list_xfer(list, &bad_type));
    ROW("info_list_xfer_null_list", PMIx_Info_list_xfer(NULL, &ok_info));
    ROW("info_list_convert_null_array", PMIx_Info_list_convert(list, NULL));
    pmix_data_array_t conv;
    ROW("info_list_convert_null_list", PMIx_Info_list_convert(NULL, &conv));
    PMIx_Info_list_convert(list, &conv);
    ROW("info_list_refused_entries_left_out", conv.size);
    PMIX_DATA_ARRAY_DESTRUCT(&conv);
    PMIX_INFO_LIST_RELEASE(list);
    PMIx_Info_list_release(NULL);
    ROW("info_list_release_null", 0);

    /* Keys and namespaces longer than their arrays: the Standard's load
     * macros cut them to PMIX_MAX_KEYLEN / PMIX_MAX_NSLEN, terminated. */
    char longstr[700];
    memset(longstr, 'x', sizeof longstr - 1);
    longstr[sizeof longstr - 1] = '\0';
    pmix_key_t k;
    PMIX_LOAD_KEY(k, longstr);
    ROW("load_key_long_cut_to_max", (long long) strnlen(k, sizeof k) == PMIX_MAX_KEYLEN);
    pmix_proc_t lp;
    PMIX_LOAD_PROCID(&lp, longstr, 0);
    ROW("load_procid_long_nspace_cut_to_max",
        (long long) strnlen(lp.nspace, sizeof lp.nspace) == PMIX_MAX_NSLEN);

    ROW("info_true_bad_type", PMIX_INFO_TRUE(&bad_type));
    const char *s = PMIx_Error_string(-987654);
    ROW("error_string_unknown_not_null", NULL != s);
#ifdef FASTPMIX
    /* The functions behind fastpmix's macros (OpenPMIx's macros inline
     * them), with NULL and an unknown type. */
    PMIx_Info_free(NULL, 5);
    ROW("info_free_null", 0);
    PMIx_Info_destruct(NULL);
    PMIx_Info_construct(NULL);
    ROW("info_destruct_null", 0);
    PMIx_Value_free(NULL, 5);
    PMIx_Value_destruct(NULL);
    ROW("value_free_null", 0);
    PMIx_Proc_free(NULL, 3);
    ROW("proc_free_null", 0);
    pmix_data_array_t *da = PMIx_Data_array_create(4, 9999);
    ROW("data_array_create_bad_type_size", NULL == da ? 0 : (long long) da->size);
    PMIx_Data_array_free(da);
    PMIx_Data_array_free(NULL);
    PMIx_Data_array_destruct(NULL);
    ROW("data_array_free_null", 0);
    ROW("info_true_null", PMIx_Info_true(NULL));
    ROW("info_is_required_null", PMIx_Info_is_required(NULL));
    ROW("info_create_0_is_null", NULL == PMIx_Info_create(0));
#endif
}

int main(void)
{
    setup_output();
    make_bad_inputs();

    /* Before PMIx_Init. */
    client_calls("before_init");
    pmix_info_t tmp;
    PMIX_INFO_CONSTRUCT(&tmp);
    ROW("info_load_before_init", PMIx_Info_load(&tmp, "test.k", "v", PMIX_STRING));
    PMIX_INFO_DESTRUCT(&tmp);
    ROW("init_null_info_n1", PMIx_Init(&me, NULL, 1));
    ROW("init_info_bad_type", PMIx_Init(&me, &bad_type, 1));
    ROW("initialized_after_refused_init", PMIx_Initialized());

    /* Initialised. */
    ROW("init", PMIx_Init(&me, NULL, 0));
    ROW("initialized", PMIx_Initialized());
    PMIX_LOAD_PROCID(&good_proc, me.nspace, me.rank);
    ROW("init_again", PMIx_Init(NULL, NULL, 0));
    ROW("finalize_inner", PMIx_Finalize(NULL, 0));
    ROW("still_initialized", PMIx_Initialized());
    ROW("finalize_null_info_n1", PMIx_Finalize(NULL, 1));
    get_rows();
    data_rows();
    fence_rows();
    register_rows();
    notify_rows();
    nesting_rows();
    job_rows();
    helper_rows();

    /* Finalized. */
    ROW("finalize", PMIx_Finalize(NULL, 0));
    client_calls("after_finalize");

    PMIX_INFO_DESTRUCT(&ok_info);
    out("end");
    return 0;
}
