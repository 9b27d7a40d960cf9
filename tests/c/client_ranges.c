/*
 * Cross-process notification in every range, 3 ranks (`fastpmix run -n 3
 * client_ranges DIR`; DIR is an empty scratch directory for the barrier).
 *
 * Rank 1 notifies one event per range (codes below); every rank reports
 * what it received, up to a LOCAL sentinel that rank 1 sends last (each
 * source's events reach a receiver in order, so an event that has not
 * arrived before the sentinel never will).
 *
 * Prints:
 *   notify <code> rc=<rc>                       (rank 1)
 *   got <code> src=<rank> srcns_ok=<0|1> info_ok=<0|1> [why]
 *   filtered <handler> <count>                  (receiver-side range filters)
 *   summary <code>,<code>,...                   (codes received, sorted)
 *   done
 */
#define _GNU_SOURCE
#include "client_common.h"

enum {
    C_PROC_LOCAL = -6201,
    C_LOCAL = -6202,
    C_NAMESPACE = -6203,
    C_SESSION = -6204,
    C_GLOBAL = -6205,
    C_CUSTOM_2 = -6206,
    C_CUSTOM_01 = -6207,
    C_CUSTOM_ALL = -6208,
    C_RM = -6209,
    C_SENTINEL = -6299,
};
static pmix_status_t codes[] = {C_PROC_LOCAL, C_LOCAL,      C_NAMESPACE,
                                C_SESSION,    C_GLOBAL,     C_CUSTOM_2,
                                C_CUSTOM_01,  C_CUSTOM_ALL, C_RM,
                                C_SENTINEL};
#define NC (sizeof codes / sizeof codes[0])

static pmix_proc_t me;
static atomic_int got[NC];
static atomic_int sentinel;
static atomic_int filtered_pl, filtered_ns;

/* ---- the payload every event carries ---- */
static const unsigned char bytes[] = {0, 1, 2, 255};

static size_t payload(pmix_info_t **out_)
{
    size_t n = 11;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, n);
    int i42 = 42;
    uint64_t big = (uint64_t) 1 << 40;
    double d = 2.5;
    bool t = true;
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, 2);
    PMIX_INFO_LOAD(&info[0], "test.str", "hello world", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], "test.int", &i42, PMIX_INT);
    PMIX_INFO_LOAD(&info[2], "test.u64", &big, PMIX_UINT64);
    PMIX_INFO_LOAD(&info[3], "test.proc", &p, PMIX_PROC);
    /* A data array of infos. */
    pmix_data_array_t *inner;
    PMIX_DATA_ARRAY_CREATE(inner, 2, PMIX_INFO);
    pmix_info_t *ia = inner->array;
    uint32_t seven = 7;
    PMIX_INFO_LOAD(&ia[0], "inner.str", "x y", PMIX_STRING);
    PMIX_INFO_LOAD(&ia[1], "inner.u32", &seven, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[4], "test.infos", inner, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(inner);
    /* Of procs. */
    pmix_data_array_t *procs;
    PMIX_DATA_ARRAY_CREATE(procs, 2, PMIX_PROC);
    pmix_proc_t *pa = procs->array;
    PMIX_LOAD_PROCID(&pa[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&pa[1], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info[5], "test.procs", procs, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(procs);
    /* Of strings. */
    pmix_data_array_t *strs;
    PMIX_DATA_ARRAY_CREATE(strs, 2, PMIX_STRING);
    char **sa = strs->array;
    sa[0] = strdup("a");
    sa[1] = strdup("b c");
    PMIX_INFO_LOAD(&info[6], "test.strs", strs, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(strs);
    /* Of uint32. */
    pmix_data_array_t *u32s;
    PMIX_DATA_ARRAY_CREATE(u32s, 3, PMIX_UINT32);
    uint32_t *ua = u32s->array;
    ua[0] = 1;
    ua[1] = 2;
    ua[2] = 4000000000u;
    PMIX_INFO_LOAD(&info[7], "test.u32s", u32s, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(u32s);
    pmix_byte_object_t bo = {(char *) bytes, sizeof bytes};
    PMIX_INFO_LOAD(&info[8], "test.bytes", &bo, PMIX_BYTE_OBJECT);
    PMIX_INFO_LOAD(&info[9], "test.double", &d, PMIX_DOUBLE);
    PMIX_INFO_LOAD(&info[10], "test.bool", &t, PMIX_BOOL);
    *out_ = info;
    return n;
}

/* Why the received info differs from the payload ("" = intact). */
static const char *check_payload(const pmix_info_t *info, size_t n)
{
    const pmix_info_t *i;
    const char *s = info_string(info, n, "test.str");
    if (NULL == s || strcmp(s, "hello world")) return "test.str";
    i = find_info(info, n, "test.int");
    if (NULL == i || PMIX_INT != i->value.type || 42 != i->value.data.integer) return "test.int";
    i = find_info(info, n, "test.u64");
    if (NULL == i || PMIX_UINT64 != i->value.type || ((uint64_t) 1 << 40) != i->value.data.uint64)
        return "test.u64";
    const pmix_proc_t *p = info_proc(info, n, "test.proc");
    if (NULL == p || !PMIX_CHECK_NSPACE(p->nspace, me.nspace) || 2 != p->rank) return "test.proc";
    i = find_info(info, n, "test.infos");
    if (NULL == i || PMIX_DATA_ARRAY != i->value.type || NULL == i->value.data.darray
        || PMIX_INFO != i->value.data.darray->type || 2 != i->value.data.darray->size)
        return "test.infos shape";
    const pmix_info_t *ia = i->value.data.darray->array;
    s = info_string(ia, 2, "inner.str");
    if (NULL == s || strcmp(s, "x y")) return "inner.str";
    const pmix_info_t *u = find_info(ia, 2, "inner.u32");
    if (NULL == u || PMIX_UINT32 != u->value.type || 7 != u->value.data.uint32) return "inner.u32";
    i = find_info(info, n, "test.procs");
    if (NULL == i || PMIX_DATA_ARRAY != i->value.type || PMIX_PROC != i->value.data.darray->type
        || 2 != i->value.data.darray->size)
        return "test.procs shape";
    const pmix_proc_t *pa = i->value.data.darray->array;
    if (0 != strcmp(pa[0].nspace, me.nspace) || 0 != pa[0].rank
        || 0 != strcmp(pa[1].nspace, me.nspace) || PMIX_RANK_WILDCARD != pa[1].rank)
        return "test.procs";
    i = find_info(info, n, "test.strs");
    if (NULL == i || PMIX_DATA_ARRAY != i->value.type || PMIX_STRING != i->value.data.darray->type
        || 2 != i->value.data.darray->size)
        return "test.strs shape";
    char **sa = i->value.data.darray->array;
    if (strcmp(sa[0], "a") || strcmp(sa[1], "b c")) return "test.strs";
    i = find_info(info, n, "test.u32s");
    if (NULL == i || PMIX_DATA_ARRAY != i->value.type || PMIX_UINT32 != i->value.data.darray->type
        || 3 != i->value.data.darray->size)
        return "test.u32s shape";
    uint32_t *ua = i->value.data.darray->array;
    if (1 != ua[0] || 2 != ua[1] || 4000000000u != ua[2]) return "test.u32s";
    i = find_info(info, n, "test.bytes");
    if (NULL == i || PMIX_BYTE_OBJECT != i->value.type || sizeof bytes != i->value.data.bo.size
        || memcmp(i->value.data.bo.bytes, bytes, sizeof bytes))
        return "test.bytes";
    i = find_info(info, n, "test.double");
    if (NULL == i || PMIX_DOUBLE != i->value.type || 2.5 != i->value.data.dval) return "test.double";
    i = find_info(info, n, "test.bool");
    if (NULL == i || PMIX_BOOL != i->value.type || !i->value.data.flag) return "test.bool";
    return "";
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) results;
    (void) nresults;
    if (C_SENTINEL == status) {
        atomic_fetch_add(&sentinel, 1);
    } else {
        for (size_t c = 0; c < NC; c++) {
            if (codes[c] == status) {
                atomic_fetch_add(&got[c], 1);
            }
        }
        const char *why = check_payload(info, ninfo);
        out("got %d src=%u srcns_ok=%d info_ok=%d %s", status, NULL != source ? source->rank : 9999,
            NULL != source && 0 == strncmp(source->nspace, me.nspace, PMIX_MAX_NSLEN),
            0 == why[0], why);
    }
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* Receiver-side source-range filters (PMIX_RANGE at registration). */
static void filter_pl(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) info, (void) ninfo, (void) results,
        (void) nresults;
    atomic_fetch_add(&filtered_pl, 1);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void filter_ns(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) info, (void) ninfo, (void) results,
        (void) nresults;
    atomic_fetch_add(&filtered_ns, 1);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void register_filter(pmix_notification_fn_t fn, const char *name, pmix_data_range_t r)
{
    pmix_status_t c[] = {C_LOCAL};
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    int rc = PMIx_Register_event_handler(c, 1, info, 2, fn, NULL, NULL);
    EXPECT(rc >= 1, "register %s: %d", name, rc);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* Rank 1: one event per range. */
static void notify_all(void)
{
    pmix_info_t *base;
    size_t nbase = payload(&base);
    pmix_proc_t forged;
    PMIX_LOAD_PROCID(&forged, me.nspace, 0);
    struct {
        pmix_status_t code;
        pmix_data_range_t range;
        int custom; /* 0: none, 1: rank 2 (a single proc), 2: ranks 0 and 1, 3: ns:* */
        const pmix_proc_t *source;
    } plan[] = {
        {C_PROC_LOCAL, PMIX_RANGE_PROC_LOCAL, 0, &me},
        {C_LOCAL, PMIX_RANGE_LOCAL, 0, &me},
        /* A client cannot claim another source: the server stamps it. */
        {C_NAMESPACE, PMIX_RANGE_NAMESPACE, 0, &forged},
        {C_SESSION, PMIX_RANGE_SESSION, 0, &me},
        {C_GLOBAL, PMIX_RANGE_GLOBAL, 0, &me},
        {C_CUSTOM_2, PMIX_RANGE_CUSTOM, 1, &me},
        {C_CUSTOM_01, PMIX_RANGE_CUSTOM, 2, &me},
        {C_CUSTOM_ALL, PMIX_RANGE_CUSTOM, 3, &me},
        {C_RM, PMIX_RANGE_RM, 0, &me},
    };
    for (size_t k = 0; k < sizeof plan / sizeof plan[0]; k++) {
        size_t n = nbase + (plan[k].custom ? 1 : 0);
        pmix_info_t *info;
        PMIX_INFO_CREATE(info, n);
        for (size_t i = 0; i < nbase; i++) {
            PMIX_INFO_XFER(&info[i], &base[i]);
        }
        if (1 == plan[k].custom) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, me.nspace, 2);
            PMIX_INFO_LOAD(&info[nbase], PMIX_EVENT_CUSTOM_RANGE, &p, PMIX_PROC);
        } else if (plan[k].custom) {
            pmix_data_array_t *da;
            size_t np = 2 == plan[k].custom ? 2 : 1;
            PMIX_DATA_ARRAY_CREATE(da, np, PMIX_PROC);
            pmix_proc_t *pa = da->array;
            if (2 == plan[k].custom) {
                PMIX_LOAD_PROCID(&pa[0], me.nspace, 0);
                PMIX_LOAD_PROCID(&pa[1], me.nspace, 1);
            } else {
                PMIX_LOAD_PROCID(&pa[0], me.nspace, PMIX_RANK_WILDCARD);
            }
            PMIX_INFO_LOAD(&info[nbase], PMIX_EVENT_CUSTOM_RANGE, da, PMIX_DATA_ARRAY);
            PMIX_DATA_ARRAY_FREE(da);
        }
        int rc = PMIx_Notify_event(plan[k].code, plan[k].source, plan[k].range, info, n, NULL,
                                   NULL);
        out("notify %d rc=%d", plan[k].code, rc);
        PMIX_INFO_FREE(info, n);
    }
    PMIX_INFO_FREE(base, nbase);
    int rc = PMIx_Notify_event(C_SENTINEL, &me, PMIX_RANGE_LOCAL, NULL, 0, NULL, NULL);
    EXPECT(PMIX_SUCCESS == rc, "sentinel: %d", rc);
}

int main(int argc, char **argv)
{
    setup_output();
    EXPECT(argc == 2, "usage: client_ranges DIR");
    const char *dir = argv[1];
    init_or_fail(&me);

    pmix_info_t name;
    PMIX_INFO_CONSTRUCT(&name);
    PMIX_INFO_LOAD(&name, PMIX_EVENT_HDLR_NAME, "ranges", PMIX_STRING);
    int rc = PMIx_Register_event_handler(codes, NC, &name, 1, handler, NULL, NULL);
    EXPECT(rc >= 1, "register: %d", rc);
    PMIX_INFO_DESTRUCT(&name);
    if (2 == me.rank) {
        register_filter(filter_pl, "filter_pl", PMIX_RANGE_PROC_LOCAL);
    } else if (0 == me.rank) {
        register_filter(filter_ns, "filter_ns", PMIX_RANGE_NAMESPACE);
    }

    file_barrier(dir, "ready", me.rank, 3);
    if (1 == me.rank) {
        notify_all();
    }
    EXPECT(wait_at_least(&sentinel, 1), "the sentinel never arrived");
    char line[512] = "";
    for (size_t c = 0; c < NC - 1; c++) {
        for (int k = 0; k < atomic_load(&got[c]); k++) {
            char b[16];
            snprintf(b, sizeof b, "%s%d", line[0] ? "," : "", codes[c]);
            strcat(line, b);
        }
    }
    out("summary %s", line[0] ? line : "-");
    if (2 == me.rank) {
        out("filtered filter_pl %d", atomic_load(&filtered_pl));
    } else if (0 == me.rank) {
        out("filtered filter_ns %d", atomic_load(&filtered_ns));
    }
    /* Nobody leaves before everyone has its summary. */
    file_barrier(dir, "done", me.rank, 3);
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
