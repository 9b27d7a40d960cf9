/*
 * Data exchange from C (tests/c_data.rs): PMIx_Put, PMIx_Commit, PMIx_Fence
 * with and without PMIX_COLLECT_DATA, PMIx_Get[_nb] of every peer's keys,
 * PMIx_Store_internal and the Get directives.
 *
 *   client_data DIR wireup     fastpmix run -n 4: every rank puts a 100-byte
 *                              endpoint, a string and a value of every type,
 *                              commits, fences with PMIX_COLLECT_DATA and gets
 *                              every peer's keys (as MPI wire-up does); scopes
 *   client_data DIR nocollect  fastpmix run -n 4: a Get of a peer that has not
 *                              committed waits for its commit (rank 0
 *                              non-blocking, rank 2 blocking); then put,
 *                              commit, a fence without data, Gets from the
 *                              node's shared store
 *   client_data DIR misc       fastpmix run -n 2: PMIX_OPTIONAL,
 *                              PMIX_IMMEDIATE, PMIX_TIMEOUT, PMIX_DATA_SCOPE
 *                              (a PMIX_SCOPE value), PMIx_Store_internal,
 *                              PMIx_Get_nb, a NULL proc, the key length
 *                              limit, calls after PMIx_Finalize
 *   client_data DIR twonode    a child of tests/c/dx_server.c: ranks 0 and 1
 *                              on one daemon, 2 and 3 on another; see
 *                              twonode() for the phases
 *   client_data DIR nohost     a child of dx_server --nohost: ranks 0 and 1
 *                              of a job whose ranks 2 and 3 are on a node
 *                              the host cannot reach (no fence_nb, no
 *                              direct_modex)
 *
 * DIR: a directory shared by the ranks (file barriers). Prints "ok <fact>"
 * or "FAIL <fact> (<details>)" per checked fact ("rank N: " in front under
 * dx_server, whose children share its stdout), then "done"; exits 1 if any
 * fact failed.
 */
#define _GNU_SOURCE
#include "client_common.h"

#include <stdbool.h>
#include <stdint.h>

static pmix_proc_t me;
static const char *dir;
static char prefix[32];
static int nfail;

__attribute__((format(printf, 3, 4))) static void check(bool cond, const char *fact,
                                                        const char *fmt, ...)
{
    char why[1024] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (cond) {
        out("%sok %s", prefix, fact);
    } else {
        nfail++;
        out("%sFAIL %s (%s)", prefix, fact, why);
    }
}

static const char *err(pmix_status_t rc)
{
    return PMIx_Error_string(rc);
}

static pmix_proc_t peer(pmix_rank_t r)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, r);
    return p;
}

static pmix_info_t flag_info(const char *key)
{
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    PMIX_INFO_LOAD(&i, key, NULL, PMIX_BOOL);
    return i;
}

/* ---- endpoints: 100 bytes that differ per rank and per salt ---- */
#define EP_LEN 100

static void endpoint(pmix_rank_t r, int salt, char *buf)
{
    for (int i = 0; i < EP_LEN; i++) {
        buf[i] = (char) (uint8_t) (r * 37 + i * 11 + salt * 5 + 1);
    }
}

static pmix_status_t put_endpoint(const char *key, int salt)
{
    char buf[EP_LEN];
    endpoint(me.rank, salt, buf);
    pmix_value_t v = {.type = PMIX_BYTE_OBJECT};
    v.data.bo.bytes = buf;
    v.data.bo.size = EP_LEN;
    return PMIx_Put(PMIX_GLOBAL, key, &v);
}

static bool is_endpoint(const pmix_value_t *v, pmix_rank_t r, int salt)
{
    char want[EP_LEN];
    endpoint(r, salt, want);
    return NULL != v && PMIX_BYTE_OBJECT == v->type && EP_LEN == v->data.bo.size &&
           0 == memcmp(v->data.bo.bytes, want, EP_LEN);
}

static void name_of(pmix_rank_t r, char *buf, size_t n)
{
    snprintf(buf, n, "rank-%u-of-%.200s", r, me.nspace);
}

static pmix_status_t put_name(void)
{
    char name[256];
    name_of(me.rank, name, sizeof name);
    pmix_value_t v = {.type = PMIX_STRING};
    v.data.string = name;
    return PMIx_Put(PMIX_GLOBAL, "test.name", &v);
}

/* Gets every rank's endpoint (`key`, `salt`) and name, with `info`. */
static void get_all(const char *fact, const char *key, int salt, unsigned n,
                    const pmix_info_t *info, size_t ninfo)
{
    int good = 0;
    char bad[512] = "";
    for (pmix_rank_t r = 0; r < n; r++) {
        pmix_proc_t p = peer(r);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, key, info, ninfo, &v);
        if (PMIX_SUCCESS == rc && is_endpoint(v, r, salt)) {
            good++;
        } else {
            size_t l = strlen(bad);
            snprintf(bad + l, sizeof bad - l, " ep%u:%s/%d", r, err(rc), v ? v->type : -1);
        }
        if (NULL != v) {
            PMIX_VALUE_RELEASE(v);
        }
        char want[256];
        name_of(r, want, sizeof want);
        v = NULL;
        rc = PMIx_Get(&p, "test.name", info, ninfo, &v);
        if (PMIX_SUCCESS == rc && NULL != v && PMIX_STRING == v->type &&
            0 == strcmp(v->data.string, want)) {
            good++;
        } else {
            size_t l = strlen(bad);
            snprintf(bad + l, sizeof bad - l, " name%u:%s", r, err(rc));
        }
        if (NULL != v) {
            PMIX_VALUE_RELEASE(v);
        }
    }
    check(good == (int) (2 * n), fact, "%d of %u right:%s", good, 2 * n, bad);
}

/* An int `key` of rank r: its status, and the value in *got. */
static pmix_status_t get_int(pmix_rank_t r, const char *key, const pmix_info_t *info,
                             size_t ninfo, long long *got)
{
    pmix_proc_t p = peer(r);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, info, ninfo, &v);
    *got = -1;
    if (PMIX_SUCCESS == rc && NULL != v) {
        value_int(v, got);
    }
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
    return rc;
}

static pmix_status_t put_int(pmix_scope_t scope, const char *key, int x)
{
    pmix_value_t v = {.type = PMIX_INT, .data.integer = x};
    return PMIx_Put(scope, key, &v);
}

/* ---- a value of every type fastpmix carries ---- */
#define NTYPES 31
static char *strs[] = {"alpha", "beta", "gamma"};
static uint32_t u32s[] = {7, 8, 4000000000u};
static pmix_proc_t procs3[3];
static pmix_info_t infos2[2];
static pmix_data_array_t da_str = {.type = PMIX_STRING, .size = 3, .array = strs};
static pmix_data_array_t da_u32 = {.type = PMIX_UINT32, .size = 3, .array = u32s};
static pmix_data_array_t da_proc = {.type = PMIX_PROC, .size = 3, .array = procs3};
static pmix_data_array_t da_info = {.type = PMIX_INFO, .size = 2, .array = infos2};
static pmix_proc_t one_proc;
static char bytes3[] = {0, 1, (char) 0xff};

/* The values rank r puts: values[k] under "test.t.<k>" (bool, byte, string, size, pid,
 * the signed and unsigned integers, float, double, timeval, time, status, proc, rank,
 * data range, alloc directive, scope (comes back a PMIX_UINT8: fastpmix keeps no
 * scope type), byte object, pointer, and data arrays of strings, uint32, procs and
 * infos). */
static void make_values(pmix_rank_t r, pmix_value_t *v)
{
    for (int i = 0; i < 3; i++) {
        PMIX_LOAD_PROCID(&procs3[i], "test-some-ns", (pmix_rank_t) (i + r));
    }
    PMIX_INFO_CONSTRUCT(&infos2[0]);
    PMIX_INFO_CONSTRUCT(&infos2[1]);
    PMIX_LOAD_KEY(infos2[0].key, "test.inner.int");
    infos2[0].value.type = PMIX_INT;
    infos2[0].value.data.integer = -9 - (int) r;
    PMIX_LOAD_KEY(infos2[1].key, "test.inner.str");
    infos2[1].value.type = PMIX_STRING;
    infos2[1].value.data.string = "inner";
    PMIX_LOAD_PROCID(&one_proc, me.nspace, r);
    memset(v, 0, NTYPES * sizeof *v);
    int k = 0;
    v[k].type = PMIX_BOOL, v[k++].data.flag = true;
    v[k].type = PMIX_BYTE, v[k++].data.byte = (uint8_t) (0xa0 + r);
    v[k].type = PMIX_STRING, v[k++].data.string = "hello";
    v[k].type = PMIX_SIZE, v[k++].data.size = (size_t) 123456789012ull + r;
    v[k].type = PMIX_PID, v[k++].data.pid = 4321;
    v[k].type = PMIX_INT, v[k++].data.integer = -5;
    v[k].type = PMIX_INT8, v[k++].data.int8 = -8;
    v[k].type = PMIX_INT16, v[k++].data.int16 = -1600;
    v[k].type = PMIX_INT32, v[k++].data.int32 = -320000;
    v[k].type = PMIX_INT64, v[k++].data.int64 = -6400000000ll;
    v[k].type = PMIX_UINT, v[k++].data.uint = 5;
    v[k].type = PMIX_UINT8, v[k++].data.uint8 = 200;
    v[k].type = PMIX_UINT16, v[k++].data.uint16 = 60000;
    v[k].type = PMIX_UINT32, v[k++].data.uint32 = 4000000000u;
    v[k].type = PMIX_UINT64, v[k++].data.uint64 = 18000000000000000000ull;
    v[k].type = PMIX_FLOAT, v[k++].data.fval = 1.5f;
    v[k].type = PMIX_DOUBLE, v[k++].data.dval = 2.25;
    v[k].type = PMIX_TIMEVAL, v[k].data.tv.tv_sec = 3, v[k++].data.tv.tv_usec = 4;
    v[k].type = PMIX_TIME, v[k++].data.time = 1700000000;
    v[k].type = PMIX_STATUS, v[k++].data.status = PMIX_ERR_NOT_FOUND;
    v[k].type = PMIX_PROC, v[k++].data.proc = &one_proc;
    v[k].type = PMIX_PROC_RANK, v[k++].data.rank = r;
    v[k].type = PMIX_DATA_RANGE, v[k++].data.range = PMIX_RANGE_SESSION;
    v[k].type = PMIX_ALLOC_DIRECTIVE, v[k++].data.adir = PMIX_ALLOC_EXTEND;
    v[k].type = PMIX_SCOPE, v[k++].data.scope = PMIX_REMOTE;
    v[k].type = PMIX_BYTE_OBJECT, v[k].data.bo.bytes = bytes3, v[k++].data.bo.size = 3;
    v[k].type = PMIX_POINTER, v[k++].data.ptr = (void *) (uintptr_t) 0x1234;
    v[k].type = PMIX_DATA_ARRAY, v[k++].data.darray = &da_str;
    v[k].type = PMIX_DATA_ARRAY, v[k++].data.darray = &da_u32;
    v[k].type = PMIX_DATA_ARRAY, v[k++].data.darray = &da_proc;
    v[k].type = PMIX_DATA_ARRAY, v[k++].data.darray = &da_info;
    EXPECT(NTYPES == k, "NTYPES is %d, %d values", NTYPES, k);
}

static bool same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return NULL != a && NULL != b && a->rank == b->rank && 0 == strcmp(a->nspace, b->nspace);
}

static bool same_value(const pmix_value_t *want, const pmix_value_t *got);

static bool same_darray(const pmix_data_array_t *a, const pmix_data_array_t *b)
{
    if (NULL == a || NULL == b || a->type != b->type || a->size != b->size) {
        return false;
    }
    for (size_t i = 0; i < a->size; i++) {
        bool ok = false;
        switch (a->type) {
        case PMIX_STRING:
            ok = 0 == strcmp(((char **) a->array)[i], ((char **) b->array)[i]);
            break;
        case PMIX_UINT32:
            ok = ((uint32_t *) a->array)[i] == ((uint32_t *) b->array)[i];
            break;
        case PMIX_PROC:
            ok = same_proc(&((pmix_proc_t *) a->array)[i], &((pmix_proc_t *) b->array)[i]);
            break;
        case PMIX_INFO: {
            pmix_info_t *x = &((pmix_info_t *) a->array)[i], *y = &((pmix_info_t *) b->array)[i];
            ok = 0 == strcmp(x->key, y->key) && same_value(&x->value, &y->value);
            break;
        }
        default:
            break;
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

static bool same_value(const pmix_value_t *want, const pmix_value_t *got)
{
    if (NULL == got) {
        return false;
    }
    if (PMIX_SCOPE == want->type) {
        return PMIX_UINT8 == got->type && got->data.uint8 == want->data.scope;
    }
    if (want->type != got->type) {
        return false;
    }
    const __typeof__(want->data) *a = &want->data, *b = &got->data;
    switch (want->type) {
    case PMIX_BOOL: return a->flag == b->flag;
    case PMIX_BYTE: return a->byte == b->byte;
    case PMIX_STRING: return 0 == strcmp(a->string, b->string);
    case PMIX_SIZE: return a->size == b->size;
    case PMIX_PID: return a->pid == b->pid;
    case PMIX_INT: return a->integer == b->integer;
    case PMIX_INT8: return a->int8 == b->int8;
    case PMIX_INT16: return a->int16 == b->int16;
    case PMIX_INT32: return a->int32 == b->int32;
    case PMIX_INT64: return a->int64 == b->int64;
    case PMIX_UINT: return a->uint == b->uint;
    case PMIX_UINT8: return a->uint8 == b->uint8;
    case PMIX_UINT16: return a->uint16 == b->uint16;
    case PMIX_UINT32: return a->uint32 == b->uint32;
    case PMIX_UINT64: return a->uint64 == b->uint64;
    case PMIX_FLOAT: return a->fval == b->fval;
    case PMIX_DOUBLE: return a->dval == b->dval;
    case PMIX_TIMEVAL: return a->tv.tv_sec == b->tv.tv_sec && a->tv.tv_usec == b->tv.tv_usec;
    case PMIX_TIME: return a->time == b->time;
    case PMIX_STATUS: return a->status == b->status;
    case PMIX_PROC: return same_proc(a->proc, b->proc);
    case PMIX_PROC_RANK: return a->rank == b->rank;
    case PMIX_DATA_RANGE: return a->range == b->range;
    case PMIX_ALLOC_DIRECTIVE: return a->adir == b->adir;
    case PMIX_BYTE_OBJECT:
        return a->bo.size == b->bo.size && 0 == memcmp(a->bo.bytes, b->bo.bytes, a->bo.size);
    case PMIX_POINTER: return a->ptr == b->ptr;
    case PMIX_DATA_ARRAY: return same_darray(a->darray, b->darray);
    default: return false;
    }
}

static pmix_status_t put_values(void)
{
    pmix_value_t v[NTYPES];
    make_values(me.rank, v);
    for (int k = 0; k < NTYPES; k++) {
        char key[64];
        snprintf(key, sizeof key, "test.t.%d", k);
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v[k]);
        if (PMIX_SUCCESS != rc) {
            out("put of value %d (type %d): %s", k, v[k].type, err(rc));
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

/* Gets rank r's values; the ones that did not come back equal, in `bad`. */
static int get_values(pmix_rank_t r, char *bad, size_t n)
{
    pmix_value_t want[NTYPES];
    make_values(r, want);
    pmix_proc_t p = peer(r);
    int good = 0;
    bad[0] = 0;
    for (int k = 0; k < NTYPES; k++) {
        char key[64];
        snprintf(key, sizeof key, "test.t.%d", k);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
        if (PMIX_SUCCESS == rc && same_value(&want[k], v)) {
            good++;
        } else {
            size_t l = strlen(bad);
            snprintf(bad + l, n - l, " type%d:%s/%d", want[k].type, err(rc), v ? v->type : -1);
        }
        if (NULL != v) {
            PMIX_VALUE_RELEASE(v);
        }
    }
    return good;
}

/* ---- non-blocking Gets ---- */
typedef struct {
    atomic_int calls;
    pmix_status_t status;
    ret_gate_t gate;
    int after_return;
    bool matched;   /* the value was what was expected */
    bool committed; /* the peer's "committing" file existed at the callback */
    pmix_rank_t rank;
    int salt;
    const char *string;
} getcb_t;

static void get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    getcb_t *g = cbdata;
    g->status = status;
    g->after_return = after_return(&g->gate);
    if (NULL != g->string) {
        g->matched = NULL != kv && PMIX_STRING == kv->type && 0 == strcmp(kv->data.string, g->string);
    } else {
        g->matched = is_endpoint(kv, g->rank, g->salt);
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/committing.%u", dir, g->rank);
    g->committed = exists(p);
    atomic_fetch_add(&g->calls, 1);
}

static pmix_status_t get_nb(getcb_t *g, pmix_rank_t r, const char *key, const pmix_info_t *info,
                            size_t ninfo)
{
    pmix_proc_t p = peer(r);
    g->rank = r;
    gate_arm(&g->gate);
    pmix_status_t rc = PMIx_Get_nb(&p, key, info, ninfo, get_cb, g);
    gate_open(&g->gate);
    return rc;
}

/* Waits for a file another rank (or the daemon) creates. */
static void wait_file(const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    double end = now_s() + HANG_SECS;
    while (!exists(p)) {
        EXPECT(now_s() < end, "no %s", p);
        sleep_ms(5);
    }
}

/* The "late" key of rank me: put and committed after the file committing.<me>. */
static void put_late(void)
{
    touch(dir, "committing", me.rank);
    char s[64];
    snprintf(s, sizeof s, "late-%u", me.rank);
    pmix_value_t v = {.type = PMIX_STRING};
    v.data.string = s;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "test.late", &v);
    pmix_status_t rc2 = PMIx_Commit();
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2, "nocollect: late Put and Commit", "%s %s",
          err(rc), err(rc2));
}

/* ---- the scenarios ---- */
static void wireup(void)
{
    pmix_status_t rc = put_endpoint("test.ep", 0);
    pmix_status_t rc2 = put_name();
    pmix_status_t rc3 = put_values();
    pmix_status_t rc4 = put_int(PMIX_LOCAL, "test.local", 100 + (int) me.rank);
    pmix_status_t rc5 = put_int(PMIX_REMOTE, "test.remote", 200 + (int) me.rank);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && PMIX_SUCCESS == rc3 &&
              PMIX_SUCCESS == rc4 && PMIX_SUCCESS == rc5,
          "wireup: PMIx_Put of an endpoint, a string, a value of every type, a local and a "
          "remote item",
          "%s %s %s %s %s", err(rc), err(rc2), err(rc3), err(rc4), err(rc5));
    rc = PMIx_Commit();
    check(PMIX_SUCCESS == rc, "wireup: PMIx_Commit", "%s", err(rc));
    pmix_info_t collect = flag_info(PMIX_COLLECT_DATA);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    check(PMIX_SUCCESS == rc, "wireup: PMIx_Fence with PMIX_COLLECT_DATA", "%s", err(rc));
    get_all("wireup: every rank's 100-byte endpoint and name, exact", "test.ep", 0, 4, NULL, 0);

    int local_ok = 0, remote_hidden = 0;
    for (pmix_rank_t r = 0; r < 4; r++) {
        long long x;
        if (PMIX_SUCCESS == get_int(r, "test.local", NULL, 0, &x) && x == 100 + r) {
            local_ok++;
        }
        rc = get_int(r, "test.remote", NULL, 0, &x);
        if (r == me.rank ? (PMIX_SUCCESS == rc && x == 200 + r) : PMIX_ERR_EXISTS_OUTSIDE_SCOPE == rc) {
            remote_hidden++;
        }
    }
    check(4 == local_ok && 4 == remote_hidden,
          "wireup: a PMIX_LOCAL item is seen on its node, a PMIX_REMOTE one only by its putter",
          "local %d/4, remote %d/4", local_ok, remote_hidden);
    char bad[2048];
    pmix_rank_t other = (me.rank + 1) % 4;
    int good = get_values(other, bad, sizeof bad);
    check(NTYPES == good, "wireup: a value of every type round trips through Put and Get",
          "%d of %d:%s", good, NTYPES, bad);
    good = get_values(me.rank, bad, sizeof bad);
    check(NTYPES == good, "wireup: the putter reads back every type it put", "%d of %d:%s", good,
          NTYPES, bad);
}

static void nocollect(void)
{
    static getcb_t g;
    if (0 == me.rank) {
        /* Rank 1 commits only after this Get was made. */
        g.string = "late-1";
        pmix_status_t rc = get_nb(&g, 1, "test.late", NULL, 0);
        touch(dir, "asked", me.rank);
        bool came = PMIX_SUCCESS == rc && wait_at_least(&g.calls, 1);
        check(came && PMIX_SUCCESS == g.status && g.matched && g.committed && g.after_return,
              "nocollect: PMIx_Get_nb of a peer that has not committed is answered by its "
              "commit",
              "rc %s, came %d, status %s, matched %d, after the commit %d, after return %d",
              err(rc), came, err(g.status), g.matched, g.committed, g.after_return);
    } else if (2 == me.rank) {
        touch(dir, "asked", me.rank);
        pmix_proc_t p = peer(3);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, "test.late", NULL, 0, &v);
        char c[4096];
        snprintf(c, sizeof c, "%s/committing.3", dir);
        check(PMIX_SUCCESS == rc && NULL != v && PMIX_STRING == v->type &&
                  0 == strcmp(v->data.string, "late-3") && exists(c),
              "nocollect: a blocking PMIx_Get of a peer that has not committed returns its "
              "value once it commits",
              "%s", err(rc));
        if (NULL != v) {
            PMIX_VALUE_RELEASE(v);
        }
    } else {
        char asked[64];
        snprintf(asked, sizeof asked, "asked.%u", me.rank - 1);
        wait_file(asked);
        sleep_ms(200); /* the Get is most likely waiting at the server by now */
        put_late();
    }
    pmix_status_t rc = put_endpoint("test.ep", 0);
    pmix_status_t rc2 = put_name();
    pmix_status_t rc3 = PMIx_Commit();
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && PMIX_SUCCESS == rc3,
          "nocollect: PMIx_Put and PMIx_Commit", "%s %s %s", err(rc), err(rc2), err(rc3));
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    check(PMIX_SUCCESS == rc, "nocollect: PMIx_Fence without data", "%s", err(rc));
    get_all("nocollect: every rank's endpoint and name, from the node's store", "test.ep", 0, 4,
            NULL, 0);
}

static void misc(void)
{
    pmix_rank_t other = 1 - me.rank;
    pmix_status_t rc;
    long long x;
    if (0 == me.rank) {
        /* Rank 1 commits nothing before directives.0 exists: a Get that
         * waited for its commit would never return (the hang guard ends
         * the job), so an answer here is an answer "at once". */
        pmix_info_t opt = flag_info(PMIX_OPTIONAL), imm = flag_info(PMIX_IMMEDIATE), tmo;
        int one = 1;
        PMIX_INFO_CONSTRUCT(&tmo);
        PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &one, PMIX_INT);
        double t0 = now_s();
        rc = get_int(1, "test.never", &opt, 1, &x);
        double t1 = now_s();
        check(PMIX_ERR_NOT_FOUND == rc,
              "misc: PMIX_OPTIONAL: PMIX_ERR_NOT_FOUND at once for a peer that has not "
              "committed",
              "%s after %.2f s", err(rc), t1 - t0);
        rc = get_int(1, "test.never", &imm, 1, &x);
        double t2 = now_s();
        check(PMIX_ERR_NOT_FOUND == rc,
              "misc: PMIX_IMMEDIATE: PMIX_ERR_NOT_FOUND at once for a peer that has not "
              "committed",
              "%s after %.2f s", err(rc), t2 - t1);
        rc = get_int(1, "test.never", &tmo, 1, &x);
        double t3 = now_s();
        /* A lower bound only: the timeout cannot pass early. */
        check(PMIX_ERR_TIMEOUT == rc && t3 - t2 >= 0.9,
              "misc: PMIX_TIMEOUT 1: PMIX_ERR_TIMEOUT after a second for a peer that has not "
              "committed",
              "%s after %.2f s", err(rc), t3 - t2);
        PMIX_INFO_DESTRUCT(&opt);
        PMIX_INFO_DESTRUCT(&imm);
        PMIX_INFO_DESTRUCT(&tmo);
        /* A reserved key is the host's to register: never waited for. */
        rc = get_int(1, "pmix.test.unregistered", NULL, 0, &x);
        double t4 = now_s();
        check(PMIX_ERR_NOT_FOUND == rc,
              "misc: a reserved key the host did not register is PMIX_ERR_NOT_FOUND at once, "
              "even for a peer that has not committed",
              "%s after %.2f s", err(rc), t4 - t3);
        touch(dir, "directives", 0);

        /* PMIx_Store_internal: for rank 1, in this process only. */
        pmix_value_t v77 = {.type = PMIX_INT, .data.integer = 77};
        pmix_proc_t p1 = peer(1);
        rc = PMIx_Store_internal(&p1, "test.stored", &v77);
        pmix_status_t rc2 = get_int(1, "test.stored", NULL, 0, &x);
        check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && 77 == x,
              "misc: PMIx_Store_internal answers this process's Get of that process's key",
              "%s %s %lld", err(rc), err(rc2), x);
    } else {
        wait_file("directives.0");
    }

    /* Its own puts, before any commit: PMIx_Get_nb of itself, and a NULL proc. */
    static getcb_t own;
    char s[64];
    snprintf(s, sizeof s, "own-%u", me.rank);
    pmix_value_t sv = {.type = PMIX_STRING};
    sv.data.string = s;
    rc = PMIx_Put(PMIX_LOCAL, "test.own", &sv);
    own.string = s;
    pmix_status_t rc2 = get_nb(&own, me.rank, "test.own", NULL, 0);
    bool came = PMIX_SUCCESS == rc2 && wait_at_least(&own.calls, 1);
    check(PMIX_SUCCESS == rc && came && PMIX_SUCCESS == own.status && own.matched &&
              own.after_return,
          "misc: PMIx_Get_nb of its own uncommitted key calls back after returning, with the "
          "value",
          "put %s, get_nb %s, status %s, matched %d, after return %d", err(rc), err(rc2),
          err(own.status), own.matched, own.after_return);
    char ukey[64];
    snprintf(ukey, sizeof ukey, "test.unique.%u", me.rank);
    rc = put_int(PMIX_GLOBAL, ukey, 300 + (int) me.rank);
    pmix_value_t *v = NULL;
    rc2 = PMIx_Get(NULL, ukey, NULL, 0, &v);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && NULL != v && PMIX_INT == v->type &&
              v->data.integer == 300 + (int) me.rank,
          "misc: a NULL proc finds the caller's own uncommitted key", "%s %s", err(rc), err(rc2));
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }

    /* Scopes, and the key length limit. */
    rc = put_int(PMIX_LOCAL, "test.scoped.l", 1);
    rc2 = put_int(PMIX_REMOTE, "test.scoped.r", 2);
    pmix_status_t rc3 = put_int(PMIX_GLOBAL, "test.scoped.g", 3);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && PMIX_SUCCESS == rc3,
          "misc: PMIx_Put in each scope", "%s %s %s", err(rc), err(rc2), err(rc3));
    char key511[512], key512[513];
    memset(key511, 'k', 511);
    key511[511] = 0;
    memset(key512, 'k', 512);
    key512[512] = 0;
    rc3 = put_endpoint("test.ep", 0);
    check(PMIX_SUCCESS == rc3, "misc: PMIx_Put of an endpoint", "%s", err(rc3));
    rc = put_int(PMIX_GLOBAL, key511, 511);
    rc2 = put_int(PMIX_GLOBAL, key512, 512);
    check(PMIX_SUCCESS == rc && PMIX_ERR_BAD_PARAM == rc2,
          "misc: a key of PMIX_MAX_KEYLEN bytes is taken, one byte more is PMIX_ERR_BAD_PARAM",
          "%s %s", err(rc), err(rc2));
    rc = PMIx_Commit();
    rc2 = PMIx_Fence(NULL, 0, NULL, 0);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2, "misc: PMIx_Commit and PMIx_Fence", "%s %s",
          err(rc), err(rc2));

    pmix_info_t sc;
    pmix_scope_t local = PMIX_LOCAL, global = PMIX_GLOBAL;
    PMIX_INFO_CONSTRUCT(&sc);
    PMIX_INFO_LOAD(&sc, PMIX_DATA_SCOPE, &local, PMIX_SCOPE);
    long long l = -1, g = -1, r = -1;
    rc = get_int(other, "test.scoped.l", &sc, 1, &l);
    rc2 = get_int(other, "test.scoped.g", &sc, 1, &g);
    PMIX_INFO_DESTRUCT(&sc);
    PMIX_INFO_LOAD(&sc, PMIX_DATA_SCOPE, &global, PMIX_SCOPE);
    rc3 = get_int(other, "test.scoped.g", &sc, 1, &g);
    pmix_status_t rc4 = get_int(other, "test.scoped.l", &sc, 1, &r);
    PMIX_INFO_DESTRUCT(&sc);
    check(PMIX_SUCCESS == rc && 1 == l && PMIX_ERR_NOT_FOUND == rc2 && PMIX_SUCCESS == rc3 &&
              3 == g && PMIX_ERR_NOT_FOUND == rc4,
          "misc: PMIX_DATA_SCOPE given as a pmix_scope_t (PMIX_SCOPE) takes only items put "
          "in that scope",
          "local: %s %lld, global under local: %s, global: %s %lld, local under global: %s",
          err(rc), l, err(rc2), err(rc3), g, err(rc4));
    rc = get_int(other, "test.scoped.r", NULL, 0, &r);
    check(PMIX_ERR_EXISTS_OUTSIDE_SCOPE == rc,
          "misc: a peer on the node does not see a PMIX_REMOTE item (EXISTS_OUTSIDE_SCOPE)",
          "%s", err(rc));

    snprintf(ukey, sizeof ukey, "test.unique.%u", other);
    v = NULL;
    rc = PMIx_Get(NULL, ukey, NULL, 0, &v);
    check(PMIX_SUCCESS == rc && NULL != v && PMIX_INT == v->type &&
              v->data.integer == 300 + (int) other,
          "misc: a NULL proc finds a key a peer of the namespace committed", "%s", err(rc));
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
    rc = get_int(other, key511, NULL, 0, &x);
    check(PMIX_SUCCESS == rc && 511 == x, "misc: a peer gets a key of PMIX_MAX_KEYLEN bytes",
          "%s %lld", err(rc), x);
    rc = get_int(me.rank, "test.stored", NULL, 0, &x);
    if (1 == me.rank) {
        check(PMIX_ERR_NOT_FOUND == rc,
              "misc: what another process stored internally for this one is not seen here",
              "%s", err(rc));
    }

    static getcb_t nb, none;
    nb.string = NULL;
    nb.salt = 0;
    rc = get_nb(&nb, other, "test.ep", NULL, 0);
    came = PMIX_SUCCESS == rc && wait_at_least(&nb.calls, 1);
    check(came && PMIX_SUCCESS == nb.status && nb.matched && nb.after_return,
          "misc: PMIx_Get_nb of a peer's committed key calls back after returning, with the "
          "value",
          "rc %s, status %s, matched %d, after return %d", err(rc), err(nb.status), nb.matched,
          nb.after_return);
    pmix_info_t imm = flag_info(PMIX_IMMEDIATE);
    rc = get_nb(&none, other, "test.none", &imm, 1);
    PMIX_INFO_DESTRUCT(&imm);
    came = PMIX_SUCCESS == rc && wait_at_least(&none.calls, 1);
    check(came && PMIX_ERR_NOT_FOUND == none.status && none.after_return,
          "misc: PMIx_Get_nb of a key the peer did not commit calls back with "
          "PMIX_ERR_NOT_FOUND",
          "rc %s, status %s, after return %d", err(rc), err(none.status), none.after_return);
    /* Rank 9 never commits: an answer is an answer at once. */
    rc = get_int(9, "test.ep", NULL, 0, &x);
    check(PMIX_ERR_NOT_FOUND == rc,
          "misc: a Get of a rank outside the job is PMIX_ERR_NOT_FOUND at once", "%s", err(rc));

    rc = PMIx_Fence(NULL, 0, NULL, 0);
    rc2 = PMIx_Finalize(NULL, 0);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2, "misc: PMIx_Fence and PMIx_Finalize",
          "%s %s", err(rc), err(rc2));
    rc = put_int(PMIX_GLOBAL, "test.after", 1);
    rc2 = PMIx_Commit();
    v = NULL;
    rc3 = PMIx_Get(NULL, ukey, NULL, 0, &v);
    check(PMIX_ERR_INIT == rc && PMIX_ERR_INIT == rc2 && PMIX_ERR_INIT == rc3 && NULL == v,
          "misc: PMIx_Put, PMIx_Commit and PMIx_Get after PMIx_Finalize are PMIX_ERR_INIT",
          "%s %s %s", err(rc), err(rc2), err(rc3));
}

/* Fence_nb callbacks, counted. */
typedef struct {
    atomic_int calls;
    pmix_status_t status;
} fencecb_t;

static void fence_cb(pmix_status_t status, void *cbdata)
{
    fencecb_t *f = cbdata;
    f->status = status;
    atomic_fetch_add(&f->calls, 1);
}

/* Under tests/c/dx_server.c: ranks 0 and 1 on node A, 2 and 3 on node B
 * (two daemons, each with its own server, joined by a socket).
 *   1. rank 0's PMIx_Get_nb of rank 2 goes to node B through the hosts'
 *      direct modex; node B's daemon creates dmodex_asked.2 once it called
 *      PMIx_server_dmodex_request, and only then does rank 2 commit;
 *   2. everyone puts and commits, fences without data (the hosts' fence_nb:
 *      node A completes it later, node B inside the upcall), and gets every
 *      endpoint: the other node's through direct modex;
 *   3. a second endpoint, a fence with PMIX_COLLECT_DATA, and Gets with
 *      PMIX_IMMEDIATE: the other node's data came with the fence;
 *   4. a fence both hosts fail as Slurm does (callback and error return),
 *      then an ordinary fence: the failed one completed once;
 *   5. rank 0's Get that node A's direct_modex fails the same way. */
static void twonode(void)
{
    static getcb_t early, failed;
    if (0 == me.rank) {
        early.salt = 0;
        pmix_status_t rc = get_nb(&early, 2, "test.ep", NULL, 0);
        bool came = PMIX_SUCCESS == rc && wait_at_least(&early.calls, 1);
        check(came && PMIX_SUCCESS == early.status && early.matched && early.committed &&
                  early.after_return,
              "twonode: a Get of another node's process that has not committed is answered "
              "once it commits",
              "rc %s, came %d, status %s, matched %d, after the commit %d, after return %d",
              err(rc), came, err(early.status), early.matched, early.committed,
              early.after_return);
    }
    if (2 == me.rank) {
        wait_file("dmodex_asked.2");
        touch(dir, "committing", me.rank);
    }
    pmix_status_t rc = put_endpoint("test.ep", 0);
    pmix_status_t rc2 = put_name();
    pmix_status_t rc3 = PMIx_Commit();
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && PMIX_SUCCESS == rc3,
          "twonode: PMIx_Put and PMIx_Commit", "%s %s %s", err(rc), err(rc2), err(rc3));
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    check(PMIX_SUCCESS == rc, "twonode: a fence without data across the two nodes", "%s",
          err(rc));
    get_all("twonode: every rank's endpoint and name, the other node's by direct modex",
            "test.ep", 0, 4, NULL, 0);
    /* Nobody enters the next fence while another rank still fetches: node
     * B's daemon completes a fence inside the upcall by waiting there for
     * node A's data, which holds its server's progress thread, and node A's
     * fetches from node B need that thread (without this, 2 runs in 15 hung
     * until the daemon's timeout). */
    file_barrier(dir, "fetched", me.rank, 4);

    rc = put_endpoint("test.ep2", 1);
    rc2 = PMIx_Commit();
    pmix_info_t collect = flag_info(PMIX_COLLECT_DATA);
    rc3 = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && PMIX_SUCCESS == rc3,
          "twonode: a fence with PMIX_COLLECT_DATA across the two nodes", "%s %s %s", err(rc),
          err(rc2), err(rc3));
    pmix_info_t imm = flag_info(PMIX_IMMEDIATE);
    get_all("twonode: after the collecting fence every endpoint is here (PMIX_IMMEDIATE)",
            "test.ep2", 1, 4, &imm, 1);
    PMIX_INFO_DESTRUCT(&imm);

    static fencecb_t bad, good;
    rc = PMIx_Fence_nb(NULL, 0, NULL, 0, fence_cb, &bad);
    bool came = PMIX_SUCCESS == rc && wait_at_least(&bad.calls, 1);
    rc2 = PMIx_Fence_nb(NULL, 0, NULL, 0, fence_cb, &good);
    bool came2 = PMIX_SUCCESS == rc2 && wait_at_least(&good.calls, 1);
    check(came && PMIX_ERR_UNREACH == bad.status && 1 == atomic_load(&bad.calls) && came2 &&
              PMIX_SUCCESS == good.status && 1 == atomic_load(&good.calls),
          "twonode: a fence the host fails by calling back and returning an error completes "
          "once, with the callback's status; the next fence succeeds",
          "rc %s: %d calls, %s; next: rc %s, %d calls, %s", err(rc), atomic_load(&bad.calls),
          err(bad.status), err(rc2), atomic_load(&good.calls), err(good.status));

    if (0 == me.rank) {
        pmix_info_t dirs[2];
        dirs[0] = flag_info(PMIX_GET_REFRESH_CACHE);
        dirs[1] = flag_info("dx.fail");
        rc = get_nb(&failed, 3, "test.ep", dirs, 2);
        PMIX_INFO_DESTRUCT(&dirs[0]);
        PMIX_INFO_DESTRUCT(&dirs[1]);
        came = PMIX_SUCCESS == rc && wait_at_least(&failed.calls, 1);
        rc2 = PMIx_Fence(NULL, 0, NULL, 0);
        check(came && PMIX_ERR_UNREACH == failed.status && 1 == atomic_load(&failed.calls) &&
                  PMIX_SUCCESS == rc2,
              "twonode: a Get whose direct modex the host fails by calling back and "
              "returning an error completes once, with the callback's status",
              "rc %s, %d calls, %s; fence %s", err(rc), atomic_load(&failed.calls),
              err(failed.status), err(rc2));
    } else {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        check(PMIX_SUCCESS == rc, "twonode: the last fence", "%s", err(rc));
    }
}

/* Under dx_server --nohost: the job's other node is out of reach. */
static void nohost(void)
{
    pmix_status_t rc = put_endpoint("test.ep", 0);
    pmix_status_t rc2 = PMIx_Commit();
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2, "nohost: PMIx_Put and PMIx_Commit",
          "%s %s", err(rc), err(rc2));
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    check(PMIX_ERR_NOT_SUPPORTED == rc,
          "nohost: a fence across nodes without the host's fence_nb fails with "
          "PMIX_ERR_NOT_SUPPORTED",
          "%s", err(rc));
    long long x;
    rc = get_int(2, "test.ep", NULL, 0, &x);
    check(PMIX_ERR_NOT_FOUND == rc,
          "nohost: a Get of another node's process without the host's direct_modex is "
          "PMIX_ERR_NOT_FOUND",
          "%s", err(rc));
    pmix_proc_t here[2] = {peer(0), peer(1)};
    rc = PMIx_Fence(here, 2, NULL, 0);
    pmix_proc_t p = peer(1 - me.rank);
    pmix_value_t *v = NULL;
    rc2 = PMIx_Get(&p, "test.ep", NULL, 0, &v);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && is_endpoint(v, 1 - me.rank, 0),
          "nohost: a fence of this node's ranks, and a Get of a local peer, still work",
          "%s %s", err(rc), err(rc2));
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
}

int main(int argc, char **argv)
{
    setup_output();
    EXPECT(3 == argc, "usage: client_data DIR wireup|nocollect|misc|twonode|nohost");
    dir = argv[1];
    const char *mode = argv[2];
    init_or_fail(&me);
    if (0 == strcmp(mode, "twonode") || 0 == strcmp(mode, "nohost")) {
        snprintf(prefix, sizeof prefix, "rank %u: ", me.rank);
    }
    if (0 == strcmp(mode, "wireup")) {
        wireup();
    } else if (0 == strcmp(mode, "nocollect")) {
        nocollect();
    } else if (0 == strcmp(mode, "misc")) {
        misc();
    } else if (0 == strcmp(mode, "twonode")) {
        twonode();
    } else if (0 == strcmp(mode, "nohost")) {
        nohost();
    } else {
        FAIL("unknown mode %s", mode);
    }
    if (0 != strcmp(mode, "misc")) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        check(PMIX_SUCCESS == rc, "PMIx_Finalize", "%s", err(rc));
    }
    out("%sdone failures=%d", prefix, nfail);
    return nfail ? 1 : 0;
}
