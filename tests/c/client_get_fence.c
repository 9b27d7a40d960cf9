/*
 * PMIx_Get of the job information a launcher provides, and PMIx_Fence,
 * 3 ranks: `fastpmix run -n 3 client_get_fence DIR` (DIR: empty scratch).
 *
 * Prints:
 *   get <self|other|wildcard> <key> rc=<rc> value=<value>   (ints in decimal)
 *   get_nb rc= cb_status= after_return= value=
 *   get_missing rc=                                          (an unknown key)
 *   fence rc= files=<n>       each rank wrote DIR/f1.<rank> before the fence;
 *                             after it, all 3 files must exist
 *   fence_nb rc= cb_status= after_return= files=<n>
 *   fence_collect rc=         (PMIX_COLLECT_DATA true: a fence that collects what
 *                             was committed, nothing here)
 *   done
 */
#define _GNU_SOURCE
#include "client_common.h"

static pmix_proc_t me;

static void value_text(const pmix_value_t *v, char *buf, size_t n)
{
    long long i;
    if (PMIX_STRING == v->type) {
        snprintf(buf, n, "%s", v->data.string);
    } else if (value_int(v, &i)) {
        snprintf(buf, n, "%lld", i);
    } else {
        snprintf(buf, n, "type%u", (unsigned) v->type);
    }
}

/* The type name a Get returned, for the keys whose types the Standard fixes. */
static const char *type_name(pmix_data_type_t t)
{
    switch (t) {
    case PMIX_STRING: return "string";
    case PMIX_UINT32: return "uint32";
    case PMIX_UINT16: return "uint16";
    case PMIX_PROC_RANK: return "rank";
    default: return "other";
    }
}

static void get(const char *who, const pmix_proc_t *p, const char *key_name)
{
    pmix_value_t *v = NULL;
    pmix_key_t key;
    PMIX_LOAD_KEY(key, key_name);
    int rc = PMIx_Get(p, key, NULL, 0, &v);
    char buf[512] = "-";
    const char *t = "-";
    if (PMIX_SUCCESS == rc && NULL != v) {
        value_text(v, buf, sizeof buf);
        t = type_name(v->type);
        PMIX_VALUE_RELEASE(v);
    }
    out("get %s %s rc=%d type=%s value=%s", who, key_name, rc, t, buf);
}

typedef struct {
    ret_gate_t gate;
    atomic_int done;
    int status;
    int after_return;
    char value[64];
} getcb_t;

static void value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    getcb_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = status;
    if (NULL != kv) {
        value_text(kv, w->value, sizeof w->value);
    }
    atomic_store(&w->done, 1);
}

static void op_cb(pmix_status_t status, void *cbdata)
{
    getcb_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = status;
    atomic_store(&w->done, 1);
}

int main(int argc, char **argv)
{
    setup_output();
    EXPECT(argc == 2, "usage: client_get_fence DIR");
    const char *dir = argv[1];
    init_or_fail(&me);

    const char *keys[] = {PMIX_RANK,       PMIX_NSPACE,      PMIX_JOB_SIZE, PMIX_UNIV_SIZE,
                          PMIX_LOCAL_SIZE, PMIX_LOCAL_RANK,  PMIX_NODE_RANK, PMIX_LOCAL_PEERS,
                          PMIX_HOSTNAME,   PMIX_NODEID,      PMIX_APPNUM};
    pmix_proc_t self, other, wild;
    PMIX_LOAD_PROCID(&self, me.nspace, me.rank);
    PMIX_LOAD_PROCID(&other, me.nspace, (me.rank + 1) % 3);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        get("self", &self, keys[k]);
        get("other", &other, keys[k]);
        get("wildcard", &wild, keys[k]);
    }
    /* NULL proc: this namespace, wildcard rank (job-level). */
    get("null", NULL, PMIX_JOB_SIZE);
    get("missing", &self, "test.no.such.key");

    static getcb_t g;
    /* The key in a pmix_key_t: a literal passed straight to PMIx_Get[_nb] is
     * client_literal_key.c's test. */
    pmix_key_t job_size;
    PMIX_LOAD_KEY(job_size, PMIX_JOB_SIZE);
    gate_arm(&g.gate);
    int rc = PMIx_Get_nb(&wild, job_size, NULL, 0, value_cb, &g);
    gate_open(&g.gate);
    if (PMIX_SUCCESS == rc) {
        EXPECT(wait_at_least(&g.done, 1), "Get_nb callback never ran");
    }
    out("get_nb rc=%d cb_status=%d after_return=%d value=%s", rc, g.status, g.after_return,
        g.value[0] ? g.value : "-");

    /* Fence: what each rank did before it is visible to all after it. The
     * last rank is late, so the others really wait. */
    if (2 == me.rank) {
        sleep_ms(300);
    }
    touch(dir, "f1", me.rank);
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    out("fence rc=%d files=%d", rc, count_files(dir, "f1", 3));

    /* Fence_nb over the explicit list of every rank; rank 0 is late. */
    if (0 == me.rank) {
        sleep_ms(300);
    }
    touch(dir, "f2", me.rank);
    pmix_proc_t *all;
    PMIX_PROC_CREATE(all, 3);
    for (unsigned r = 0; r < 3; r++) {
        PMIX_PROC_LOAD(&all[r], me.nspace, r);
    }
    static getcb_t f;
    gate_arm(&f.gate);
    rc = PMIx_Fence_nb(all, 3, NULL, 0, op_cb, &f);
    gate_open(&f.gate);
    PMIX_PROC_FREE(all, 3);
    if (PMIX_SUCCESS == rc) {
        EXPECT(wait_at_least(&f.done, 1), "Fence_nb callback never ran");
    }
    out("fence_nb rc=%d cb_status=%d after_return=%d files=%d", rc, f.status, f.after_return,
        count_files(dir, "f2", 3));

    pmix_info_t collect;
    PMIX_INFO_CONSTRUCT(&collect);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    out("fence_collect rc=%d", rc);

    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
