/*
 * Publish/lookup/unpublish, spawn and connect/disconnect from C, as Open
 * MPI's MPI_Publish_name / MPI_Lookup_name / MPI_Comm_spawn /
 * MPI_Comm_connect use them: the two ranks of tests/c/pubsub_server.c's job
 * (argv[1]: "host", or "nohost" for a module without these upcalls).
 * Prints "rank N: ok FACT" or "rank N: FAIL FACT (details)" per fact, then
 * "rank N: done failures=K"; exits 1 if a fact failed.
 */
#define _GNU_SOURCE
#include "client_common.h"
#include "facts.h"

static pmix_proc_t me;

typedef struct {
    ret_gate_t gate;
    atomic_int done;
    pmix_status_t status;
    int after_return;
    size_t n;
    char key[PMIX_MAX_KEYLEN + 1];
    char value[64];
    pmix_rank_t rank;
    char ns[PMIX_MAX_NSLEN + 1];
} wait_t;

static atomic_int stray; /* callbacks of refused calls */

static void op_cb(pmix_status_t s, void *cbdata)
{
    wait_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = s;
    atomic_store(&w->done, 1);
}

static void stray_op(pmix_status_t s, void *cbdata)
{
    (void) s, (void) cbdata;
    atomic_fetch_add(&stray, 1);
}

static void stray_lookup(pmix_status_t s, pmix_pdata_t d[], size_t n, void *cbdata)
{
    (void) s, (void) d, (void) n, (void) cbdata;
    atomic_fetch_add(&stray, 1);
}

static void stray_spawn(pmix_status_t s, pmix_nspace_t ns, void *cbdata)
{
    (void) s, (void) ns, (void) cbdata;
    atomic_fetch_add(&stray, 1);
}

static void lookup_cb(pmix_status_t s, pmix_pdata_t d[], size_t n, void *cbdata)
{
    wait_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = s;
    w->n = n;
    if (n > 0) {
        snprintf(w->key, sizeof w->key, "%s", d[0].key);
        w->rank = d[0].proc.rank;
        if (PMIX_STRING == d[0].value.type) {
            snprintf(w->value, sizeof w->value, "%s", d[0].value.data.string);
        }
    }
    atomic_store(&w->done, 1);
}

static void spawn_cb(pmix_status_t s, pmix_nspace_t ns, void *cbdata)
{
    wait_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = s;
    snprintf(w->ns, sizeof w->ns, "%s", NULL == ns ? "(null)" : ns);
    atomic_store(&w->done, 1);
}

/* Waits for a non-blocking call's callback; checks it came after return. */
static bool waited(wait_t *w, const char *fact)
{
    bool ok = wait_at_least(&w->done, 1);
    check(ok && w->after_return, fact, "done=%d after_return=%d", ok, w->after_return);
    return ok;
}

static void barrier(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        check(false, "fence", "%s", err(rc));
    }
}

static pmix_status_t lookup1(const char *key, pmix_pdata_t *pd)
{
    PMIX_PDATA_CONSTRUCT(pd);
    PMIX_LOAD_KEY(pd->key, key);
    return PMIx_Lookup(pd, 1, NULL, 0);
}

static void bad_params(void)
{
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    char *keys[] = {"k", NULL};
    char *none[] = {NULL};
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    pmix_nspace_t ns = "untouched";
    pmix_proc_t procs[1];
    PMIX_LOAD_PROCID(&procs[0], me.nspace, me.rank);
    pmix_status_t rc[13] = {
        PMIx_Publish(NULL, 0),
        PMIx_Publish_nb(NULL, 0, stray_op, NULL),
        PMIx_Lookup(NULL, 0, NULL, 0),
        PMIx_Lookup(&pd, 1, NULL, 0), /* an empty key */
        PMIx_Lookup_nb(NULL, NULL, 0, stray_lookup, NULL),
        PMIx_Lookup_nb(none, NULL, 0, stray_lookup, NULL),
        PMIx_Lookup_nb(keys, NULL, 0, NULL, NULL),
        PMIx_Spawn(NULL, 0, NULL, 0, ns),
        PMIx_Spawn(NULL, 0, &app, 1, ns), /* NULL cmd */
        PMIx_Spawn_nb(NULL, 0, &app, 1, stray_spawn, NULL),
        PMIx_Connect(NULL, 0, NULL, 0),
        PMIx_Connect_nb(NULL, 1, NULL, 0, stray_op, NULL),
        PMIx_Disconnect_nb(procs, 0, NULL, 0, stray_op, NULL),
    };
    bool all = true;
    int first = -1;
    for (int i = 0; i < 13; i++) {
        if (PMIX_ERR_BAD_PARAM != rc[i] && all) {
            all = false;
            first = i;
        }
    }
    check(all, "bad arguments are PMIX_ERR_BAD_PARAM", "call %d: %s", first,
          first >= 0 ? err(rc[first]) : "");
    check(0 == strcmp(ns, "untouched"), "a refused spawn leaves the namespace as it was", "%s",
          ns);
}

static void nohost(void)
{
    pmix_info_t i;
    PMIX_INFO_LOAD(&i, "svc", "x", PMIX_STRING);
    pmix_pdata_t pd;
    char *keys[] = {"svc", NULL};
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup("/bin/true");
    app.maxprocs = 1;
    pmix_nspace_t ns;
    pmix_status_t rc[6] = {
        PMIx_Publish(&i, 1), lookup1("svc", &pd), PMIx_Unpublish(keys, NULL, 0),
        PMIx_Spawn(NULL, 0, &app, 1, ns), PMIx_Connect(&me, 1, NULL, 0),
        PMIx_Disconnect(&me, 1, NULL, 0),
    };
    bool all = true;
    for (int k = 0; k < 6; k++) {
        all &= PMIX_ERR_NOT_SUPPORTED == rc[k];
    }
    check(all, "a host without the upcalls: every call is PMIX_ERR_NOT_SUPPORTED",
          "%d %d %d %d %d %d", rc[0], rc[1], rc[2], rc[3], rc[4], rc[5]);
    PMIX_INFO_DESTRUCT(&i);
    PMIX_APP_DESTRUCT(&app);
}

int main(int argc, char **argv)
{
    setup_output();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    snprintf(fact_prefix, sizeof fact_prefix, "rank %u: ", me.rank);
    if (PMIX_SUCCESS != rc) {
        check(false, "PMIx_Init", "%s", err(rc));
        return 1;
    }
    bad_params();
    if (argc > 1 && 0 == strcmp(argv[1], "nohost")) {
        nohost();
        goto end;
    }
    static wait_t late, pub_nb, unpub_nb, spawn_w, disc_w, conn_w;
    if (1 == me.rank) {
        /* Waits in the host until rank 0 publishes "late". */
        pmix_info_t wait;
        int all = 0;
        PMIX_INFO_LOAD(&wait, PMIX_WAIT, &all, PMIX_INT);
        char *keys[] = {"late", NULL};
        gate_arm(&late.gate);
        rc = PMIx_Lookup_nb(keys, &wait, 1, lookup_cb, &late);
        gate_open(&late.gate);
        check(PMIX_SUCCESS == rc, "PMIx_Lookup_nb with PMIX_WAIT", "%s", err(rc));
        PMIX_INFO_DESTRUCT(&wait);
    }
    barrier();
    if (0 == me.rank) {
        pmix_info_t *info;
        PMIX_INFO_CREATE(info, 3);
        pmix_data_range_t range = PMIX_RANGE_SESSION;
        pmix_persistence_t persist = PMIX_PERSIST_APP;
        PMIX_INFO_LOAD(&info[0], "svc", "port-0", PMIX_STRING);
        PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &range, PMIX_DATA_RANGE);
        PMIX_INFO_LOAD(&info[2], PMIX_PERSISTENCE, &persist, PMIX_PERSIST);
        rc = PMIx_Publish(info, 3);
        check(PMIX_SUCCESS == rc, "PMIx_Publish with PMIX_RANGE and PMIX_PERSISTENCE", "%s",
              err(rc));
        PMIX_INFO_FREE(info, 3);
        pmix_info_t i;
        PMIX_INFO_LOAD(&i, "late", "v-late", PMIX_STRING);
        gate_arm(&pub_nb.gate);
        rc = PMIx_Publish_nb(&i, 1, op_cb, &pub_nb);
        gate_open(&pub_nb.gate);
        PMIX_INFO_DESTRUCT(&i);
        if (PMIX_SUCCESS == rc && waited(&pub_nb, "PMIx_Publish_nb calls back after returning")) {
            check(PMIX_SUCCESS == pub_nb.status, "PMIx_Publish_nb succeeds", "%s",
                  err(pub_nb.status));
        }
    }
    barrier();
    if (1 == me.rank) {
        pmix_pdata_t pd;
        rc = lookup1("svc", &pd);
        check(PMIX_SUCCESS == rc && PMIX_STRING == pd.value.type &&
                  0 == strcmp(pd.value.data.string, "port-0") && 0 == pd.proc.rank &&
                  PMIX_CHECK_NSPACE(pd.proc.nspace, me.nspace),
              "PMIx_Lookup fills the value and the publisher", "%s type %d rank %u", err(rc),
              pd.value.type, pd.proc.rank);
        PMIX_PDATA_DESTRUCT(&pd);
        if (waited(&late, "a waiting PMIx_Lookup_nb calls back after returning")) {
            check(PMIX_SUCCESS == late.status && 1 == late.n && 0 == strcmp(late.key, "late") &&
                      0 == strcmp(late.value, "v-late") && 0 == late.rank,
                  "a waiting lookup completes when the key is published",
                  "%s n=%zu key=%s value=%s rank=%u", err(late.status), late.n, late.key,
                  late.value, late.rank);
        }
    }
    pmix_pdata_t nf;
    rc = lookup1("no-such-key", &nf);
    check(PMIX_ERR_NOT_FOUND == rc, "an unknown key is PMIX_ERR_NOT_FOUND", "%s", err(rc));
    barrier();
    if (0 == me.rank) {
        char *keys[] = {"svc", NULL};
        rc = PMIx_Unpublish(keys, NULL, 0);
        check(PMIX_SUCCESS == rc, "PMIx_Unpublish of one key", "%s", err(rc));
        gate_arm(&unpub_nb.gate);
        rc = PMIx_Unpublish_nb(NULL, NULL, 0, op_cb, &unpub_nb);
        gate_open(&unpub_nb.gate);
        if (PMIX_SUCCESS == rc && waited(&unpub_nb, "PMIx_Unpublish_nb calls back")) {
            check(PMIX_SUCCESS == unpub_nb.status, "PMIx_Unpublish_nb of everything", "%s",
                  err(unpub_nb.status));
        }
    }
    barrier();
    if (1 == me.rank) {
        pmix_pdata_t pd;
        rc = lookup1("svc", &pd);
        check(PMIX_ERR_NOT_FOUND == rc, "an unpublished key is not found", "%s", err(rc));
    } else {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup("/bin/true");
        PMIX_ARGV_APPEND(rc, app.argv, "/bin/true");
        PMIX_ARGV_APPEND(rc, app.argv, "-x");
        app.maxprocs = 2;
        pmix_nspace_t ns = "";
        rc = PMIx_Spawn(NULL, 0, &app, 1, ns);
        check(PMIX_SUCCESS == rc && 0 == strcmp(ns, "spawned-1"),
              "PMIx_Spawn returns the host's namespace", "%s %s", err(rc), ns);
        gate_arm(&spawn_w.gate);
        rc = PMIx_Spawn_nb(NULL, 0, &app, 1, spawn_cb, &spawn_w);
        gate_open(&spawn_w.gate);
        if (PMIX_SUCCESS == rc && waited(&spawn_w, "PMIx_Spawn_nb calls back after returning")) {
            check(PMIX_SUCCESS == spawn_w.status && 0 == strcmp(spawn_w.ns, "spawned-2"),
                  "PMIx_Spawn_nb hands the namespace to its callback", "%s %s",
                  err(spawn_w.status), spawn_w.ns);
        }
        PMIX_APP_DESTRUCT(&app);
    }
    pmix_proc_t both[2];
    PMIX_LOAD_PROCID(&both[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&both[1], me.nspace, 1);
    rc = PMIx_Connect(both, 2, NULL, 0);
    check(PMIX_SUCCESS == rc, "PMIx_Connect completes for both", "%s", err(rc));
    gate_arm(&disc_w.gate);
    rc = PMIx_Disconnect_nb(both, 2, NULL, 0, op_cb, &disc_w);
    gate_open(&disc_w.gate);
    if (PMIX_SUCCESS == rc && waited(&disc_w, "PMIx_Disconnect_nb calls back after returning")) {
        check(PMIX_SUCCESS == disc_w.status, "PMIx_Disconnect_nb completes for both", "%s",
              err(disc_w.status));
    }
    gate_arm(&conn_w.gate);
    rc = PMIx_Connect_nb(both, 2, NULL, 0, op_cb, &conn_w);
    gate_open(&conn_w.gate);
    if (PMIX_SUCCESS == rc && waited(&conn_w, "PMIx_Connect_nb calls back after returning")) {
        check(PMIX_SUCCESS == conn_w.status, "PMIx_Connect_nb completes for both", "%s",
              err(conn_w.status));
    }
    rc = PMIx_Disconnect(both, 2, NULL, 0);
    check(PMIX_SUCCESS == rc, "PMIx_Disconnect completes for both", "%s", err(rc));
end:
    sleep_ms(50);
    check(0 == atomic_load(&stray), "no callback of a refused call ran", "%d",
          atomic_load(&stray));
    rc = PMIx_Finalize(NULL, 0);
    check(PMIX_SUCCESS == rc, "PMIx_Finalize", "%s", err(rc));
    printf("%sdone failures=%d\n", fact_prefix, fact_failed);
    return fact_failed ? 1 : 0;
}
