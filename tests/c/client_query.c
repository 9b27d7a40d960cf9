/*
 * PMIx_Query_info and PMIx_Query_info_nb from C, under `fastpmix run -n 2`:
 * every key a node server answers, partial and empty answers, bad input.
 *
 * Prints "ok <fact>" per fact that held, "FAIL <fact> (<why>)" otherwise,
 * then "done: <ok> ok, <failed> failed"; exits 1 if any fact failed.
 */
#define _GNU_SOURCE
#include "client_common.h"

static pmix_proc_t me;
static int nok, nfail;

__attribute__((format(printf, 2, 3))) static void check(int cond, const char *fact, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fact);
    vsnprintf(text, sizeof text, fact, ap);
    va_end(ap);
    if (cond) {
        nok++;
        out("ok %s", text);
    } else {
        nfail++;
        out("FAIL %s", text);
    }
}

static const pmix_info_t *find(const pmix_info_t *r, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (0 == strcmp(r[i].key, key)) {
            return &r[i];
        }
    }
    return NULL;
}

/* One query of `keys` (NULL-terminated), with a PMIX_NSPACE qualifier of
 * this job when `qualified`. */
static pmix_status_t query(char **keys, int qualified, pmix_info_t **res, size_t *nres)
{
    pmix_info_t qual;
    PMIX_INFO_CONSTRUCT(&qual);
    PMIX_INFO_LOAD(&qual, PMIX_NSPACE, me.nspace, PMIX_STRING);
    pmix_query_t q = {.keys = keys, .qualifiers = qualified ? &qual : NULL,
                      .nqual = qualified ? 1 : 0};
    pmix_status_t rc = PMIx_Query_info(&q, 1, res, nres);
    PMIX_INFO_DESTRUCT(&qual);
    return rc;
}

static void namespaces_and_job_size(void)
{
    pmix_info_t *r = NULL;
    size_t n = 0;
    char *k1[] = {PMIX_QUERY_NAMESPACES, NULL};
    pmix_status_t rc = query(k1, 0, &r, &n);
    const pmix_info_t *v = find(r, n, PMIX_QUERY_NAMESPACES);
    check(PMIX_SUCCESS == rc && 1 == n && NULL != v && PMIX_STRING == v->value.type
              && NULL != strstr(v->value.data.string, me.nspace),
          "namespaces: a string listing this job's namespace (rc %d, n %zu)", rc, n);
    PMIX_INFO_FREE(r, n);

    char *k2[] = {PMIX_JOB_SIZE, NULL};
    rc = query(k2, 1, &r, &n);
    v = find(r, n, PMIX_JOB_SIZE);
    check(PMIX_SUCCESS == rc && NULL != v && PMIX_UINT32 == v->value.type
              && 2 == v->value.data.uint32,
          "job size: uint32 2 for this namespace (rc %d)", rc);
    PMIX_INFO_FREE(r, n);

    char *k3[] = {PMIX_QUERY_NAMESPACE_INFO, NULL};
    rc = query(k3, 0, &r, &n);
    v = find(r, n, PMIX_QUERY_NAMESPACE_INFO);
    check(PMIX_SUCCESS == rc && NULL != v && PMIX_DATA_ARRAY == v->value.type
              && PMIX_INFO == v->value.data.darray->type && v->value.data.darray->size >= 1,
          "namespace info: an info array, one element per namespace (rc %d)", rc);
    PMIX_INFO_FREE(r, n);
}

static void proc_tables(void)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *keys[] = {PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE};
    for (int t = 0; t < 2; t++) {
        pmix_info_t *r = NULL;
        size_t n = 0;
        char *k[] = {(char *) keys[t], NULL};
        pmix_status_t rc = query(k, 1, &r, &n);
        const pmix_info_t *v = find(r, n, keys[t]);
        int ok = PMIX_SUCCESS == rc && NULL != v && PMIX_DATA_ARRAY == v->value.type
                 && PMIX_PROC_INFO == v->value.data.darray->type
                 && 2 == v->value.data.darray->size;
        int mine = 0;
        if (ok) {
            pmix_proc_info_t *pi = v->value.data.darray->array;
            for (size_t i = 0; i < 2; i++) {
                ok = ok && pi[i].proc.rank == i && PMIX_CHECK_NSPACE(pi[i].proc.nspace, me.nspace)
                     && NULL != pi[i].hostname && 0 == strcmp(pi[i].hostname, host);
                if (pi[i].proc.rank == me.rank) {
                    mine = pi[i].pid == getpid() && PMIX_PROC_STATE_CONNECTED == pi[i].state
                           && NULL != pi[i].executable_name
                           && '\0' != pi[i].executable_name[0];
                }
            }
        }
        check(ok && mine,
              "%s: a pmix_proc_info_t per rank with this node's hostname; mine has my pid, "
              "executable and the connected state (rc %d)",
              keys[t], rc);
        PMIX_INFO_FREE(r, n);
    }
}

static void psets_usage_support(void)
{
    pmix_info_t *r = NULL;
    size_t n = 0;
    char *k[] = {PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, NULL};
    pmix_status_t rc = query(k, 0, &r, &n);
    const pmix_info_t *num = find(r, n, PMIX_QUERY_NUM_PSETS);
    const pmix_info_t *names = find(r, n, PMIX_QUERY_PSET_NAMES);
    check(PMIX_SUCCESS == rc && 2 == n && NULL != num && PMIX_SIZE == num->value.type
              && 0 == num->value.data.size && NULL != names && PMIX_STRING == names->value.type
              && '\0' == names->value.data.string[0],
          "process sets: size_t 0 and an empty name list (rc %d)", rc);
    PMIX_INFO_FREE(r, n);

    char *k2[] = {PMIX_QUERY_MEMORY_USAGE, NULL};
    rc = query(k2, 0, &r, &n);
    const pmix_info_t *v = find(r, n, PMIX_QUERY_MEMORY_USAGE);
    check(PMIX_SUCCESS == rc && NULL != v && PMIX_DATA_ARRAY == v->value.type
              && 1 == v->value.data.darray->size,
          "memory usage: one resource-usage entry for the caller (rc %d)", rc);
    PMIX_INFO_FREE(r, n);

    char *k3[] = {PMIX_QUERY_ATTRIBUTE_SUPPORT, NULL};
    pmix_info_t qual;
    PMIX_INFO_CONSTRUCT(&qual);
    PMIX_INFO_LOAD(&qual, PMIX_CLIENT_ATTRIBUTES, "PMIx_Get", PMIX_STRING);
    pmix_query_t q = {.keys = k3, .qualifiers = &qual, .nqual = 1};
    rc = PMIx_Query_info(&q, 1, &r, &n);
    v = find(r, n, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    int ok = PMIX_SUCCESS == rc && NULL != v && PMIX_DATA_ARRAY == v->value.type
             && PMIX_INFO == v->value.data.darray->type && 1 == v->value.data.darray->size;
    if (ok) {
        pmix_info_t *f = v->value.data.darray->array;
        ok = 0 == strcmp(f[0].key, "PMIx_Get") && PMIX_DATA_ARRAY == f[0].value.type
             && PMIX_STRING == f[0].value.data.darray->type;
    }
    check(ok, "attribute support: PMIx_Get's attribute keys (rc %d)", rc);
    PMIX_INFO_DESTRUCT(&qual);
    PMIX_INFO_FREE(r, n);

    /* A refresh request is accepted. */
    pmix_info_t rf;
    bool yes = true;
    PMIX_INFO_CONSTRUCT(&rf);
    PMIX_INFO_LOAD(&rf, PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
    char *k4[] = {PMIX_QUERY_NAMESPACES, NULL};
    pmix_query_t q4 = {.keys = k4, .qualifiers = &rf, .nqual = 1};
    rc = PMIx_Query_info(&q4, 1, &r, &n);
    check(PMIX_SUCCESS == rc && 1 == n, "refresh cache: accepted as a qualifier (rc %d)", rc);
    PMIX_INFO_DESTRUCT(&rf);
    PMIX_INFO_FREE(r, n);
}

static void partial_and_none(void)
{
    pmix_info_t *r = NULL;
    size_t n = 0;
    /* Two queries in one call; one key of the second is unknown. */
    char *k1[] = {PMIX_QUERY_NAMESPACES, NULL};
    char *k2[] = {"vendor.no.such.key", PMIX_QUERY_NUM_PSETS, NULL};
    pmix_query_t qs[2] = {{.keys = k1}, {.keys = k2}};
    pmix_status_t rc = PMIx_Query_info(qs, 2, &r, &n);
    check(PMIX_ERR_PARTIAL_SUCCESS == rc && 2 == n && NULL != r
              && 0 == strcmp(r[0].key, PMIX_QUERY_NAMESPACES)
              && 0 == strcmp(r[1].key, PMIX_QUERY_NUM_PSETS),
          "partial: PMIX_ERR_PARTIAL_SUCCESS with the answered keys in order (rc %d, n %zu)", rc,
          n);
    PMIX_INFO_FREE(r, n);

    char *k3[] = {"vendor.no.such.key", PMIX_QUERY_ALLOC_STATUS, NULL};
    r = (pmix_info_t *) 1;
    rc = query(k3, 0, &r, &n);
    check(PMIX_ERR_NOT_FOUND == rc && 0 == n && NULL == r,
          "none: PMIX_ERR_NOT_FOUND, no results (rc %d, n %zu)", rc, n);
}

static void bad_input(void)
{
    pmix_info_t *r = NULL;
    size_t n = 0;
    char *k[] = {PMIX_QUERY_NAMESPACES, NULL};
    char *none[] = {NULL};
    char *empty[] = {"", NULL};
    pmix_query_t q = {.keys = k};
    pmix_query_t qnull = {.keys = NULL};
    pmix_query_t qnone = {.keys = none};
    pmix_query_t qempty = {.keys = empty};
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info(NULL, 1, &r, &n), "bad: NULL queries");
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info(&q, 0, &r, &n), "bad: nqueries 0");
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info(&qnull, 1, &r, &n), "bad: NULL keys");
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info(&qnone, 1, &r, &n), "bad: no keys");
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info(&qempty, 1, &r, &n), "bad: an empty key");
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info(&q, 1, NULL, &n), "bad: NULL results");
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info_nb(NULL, 1, NULL, NULL), "bad: _nb NULL queries");
    check(PMIX_ERR_BAD_PARAM == PMIx_Query_info_nb(&q, 0, NULL, NULL), "bad: _nb nqueries 0");
}

typedef struct {
    ret_gate_t gate;
    atomic_int done;
    int after_return;
    pmix_status_t status;
    size_t n;
    int key_ok;
} nbwait_t;

static void on_answer(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    nbwait_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = status;
    w->n = ninfo;
    w->key_ok = 1 == ninfo && 0 == strcmp(info[0].key, PMIX_QUERY_NAMESPACES);
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
    atomic_store(&w->done, 1);
}

static void non_blocking(void)
{
    nbwait_t w;
    memset(&w, 0, sizeof w);
    gate_arm(&w.gate);
    char *k[] = {PMIX_QUERY_NAMESPACES, "vendor.no.such.key", NULL};
    pmix_query_t q = {.keys = k};
    pmix_status_t rc = PMIx_Query_info_nb(&q, 1, on_answer, &w);
    gate_open(&w.gate);
    int done = PMIX_SUCCESS == rc && wait_at_least(&w.done, 1);
    check(done && w.after_return && PMIX_ERR_PARTIAL_SUCCESS == w.status && w.key_ok,
          "_nb: the callback runs after the call returned, with the partial answer and a "
          "release function (rc %d, status %d, n %zu)",
          rc, w.status, w.n);
}

int main(void)
{
    setup_output();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        out("FAIL PMIx_Init: %d", rc);
        return 1;
    }
    namespaces_and_job_size();
    proc_tables();
    psets_usage_support();
    partial_and_none();
    bad_input();
    non_blocking();
    PMIx_Finalize(NULL, 0);
    out("done: %d ok, %d failed", nok, nfail);
    return 0 == nfail ? 0 : 1;
}
