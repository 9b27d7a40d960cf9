/*
 * What an MPI library reads at start, for itself and for every peer, and
 * what the values must be.
 *
 *   client_job_keys                    under `fastpmix run -n N`: one node
 *                                      (this host), ranks 0..N-1
 *   client_job_keys twonode NMAP PMAP  started by tests/c/rm_server.c
 *                                      --twonode: nodes nodeA (ranks 0,1,
 *                                      this node) and nodeB (ranks 2,3),
 *                                      registered as Slurm registers a job
 *   client_job_keys nodes N1=R,R N2=R,R under a real host (tools/slurm-test):
 *                                      the named nodes with the listed
 *                                      ranks each, in node-id order
 *
 * Prints "key <self|peer N|job> <key> rc=<rc> type=<type> value=<value>"
 * for every read, "ok <fact>" for every fact that held and "FAIL <fact>
 * (<why>)" otherwise, then "done: <ok> ok, <failed> failed"; exits 1 if any
 * fact failed.
 */
#define _GNU_SOURCE
#include "client_common.h"

#ifndef PMIX_NODE_LIST
#define PMIX_NODE_LIST "pmix.nlist"
#endif

static pmix_proc_t me;
static int nok, nfail;

__attribute__((format(printf, 3, 4))) static void check(int cond, const char *fact,
                                                        const char *fmt, ...)
{
    char why[512] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (cond) {
        nok++;
        out("ok [%u] %s", me.rank, fact);
    } else {
        nfail++;
        out("FAIL [%u] %s (%s)", me.rank, fact, why);
    }
}

/* The layout the job must have. */
#define MAXN 64
static int nnodes;
static char node_names[4][256];
static int node_of[MAXN];  /* rank -> node */
static int lrank_of[MAXN]; /* rank -> position on its node */
static int node_size[4], node_ldr[4];
static int jobsize;
static int my_node;
static int want_dirs; /* fastpmix run registers PMIX_NSDIR and PMIX_PROCDIR */

static void layout_one_node(int n)
{
    nnodes = 1;
    gethostname(node_names[0], sizeof node_names[0] - 1);
    jobsize = n;
    for (int r = 0; r < n; r++) {
        node_of[r] = 0;
        lrank_of[r] = r;
    }
}

/* "nodes N1=0,1 N2=2,3": node names and their ranks, in node-id order. */
static int layout_named(int argc, char **argv)
{
    nnodes = 0;
    jobsize = 0;
    for (int a = 0; a < argc && nnodes < 4; a++) {
        char *eq = strchr(argv[a], '=');
        if (NULL == eq || (size_t) (eq - argv[a]) >= sizeof node_names[0]) {
            return 0;
        }
        snprintf(node_names[nnodes], sizeof node_names[0], "%.*s", (int) (eq - argv[a]), argv[a]);
        int pos = 0;
        for (char *r = eq + 1; *r;) {
            char *end;
            long rank = strtol(r, &end, 10);
            if (end == r || rank < 0 || rank >= MAXN) {
                return 0;
            }
            node_of[rank] = nnodes;
            lrank_of[rank] = pos++;
            jobsize++;
            r = ',' == *end ? end + 1 : end;
        }
        nnodes++;
    }
    return nnodes > 0;
}

static void layout_two_nodes(void)
{
    nnodes = 2;
    strcpy(node_names[0], "nodeA");
    strcpy(node_names[1], "nodeB");
    jobsize = 4;
    for (int r = 0; r < 4; r++) {
        node_of[r] = r / 2;
        lrank_of[r] = r % 2;
    }
}

/* One PMIx_Get; the value (caller releases) or NULL, printed either way. */
static pmix_value_t *get(const char *who, const pmix_proc_t *p, const char *key_name)
{
    pmix_value_t *v = NULL;
    pmix_key_t key;
    PMIX_LOAD_KEY(key, key_name);
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    char buf[300] = "-";
    long long i;
    if (PMIX_SUCCESS == rc && NULL != v) {
        if (PMIX_STRING == v->type) {
            snprintf(buf, sizeof buf, "%s", v->data.string);
        } else if (value_int(v, &i)) {
            snprintf(buf, sizeof buf, "%lld", i);
        }
    } else {
        v = NULL;
    }
    out("key %s %s rc=%d type=%u value=%s", who, key_name, rc, NULL != v ? v->type : 0, buf);
    return v;
}

/* `key` of `p` must be an integer of type `type` equal to `want`. */
static void want_int(const char *who, const pmix_proc_t *p, const char *key,
                     pmix_data_type_t type, long long want)
{
    pmix_value_t *v = get(who, p, key);
    long long got = -1;
    int ok = NULL != v && v->type == type && value_int(v, &got) && got == want;
    char fact[128];
    snprintf(fact, sizeof fact, "%s %s", who, key);
    check(ok, fact, "want %lld of type %u, got %s %lld of type %u", want, type,
          NULL == v ? "nothing" : "", got, NULL == v ? 0 : v->type);
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
}

static void want_str(const char *who, const pmix_proc_t *p, const char *key, const char *want)
{
    pmix_value_t *v = get(who, p, key);
    int ok = NULL != v && PMIX_STRING == v->type && 0 == strcmp(v->data.string, want);
    char fact[128];
    snprintf(fact, sizeof fact, "%s %s", who, key);
    check(ok, fact, "want \"%s\", got \"%s\"", want,
          NULL != v && PMIX_STRING == v->type ? v->data.string : "(none)");
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
}

/* A string if the host gave one (cpusets, directories, locality). */
static void optional_str(const char *who, const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = get(who, p, key);
    char fact[128];
    snprintf(fact, sizeof fact, "%s %s is a string or not found", who, key);
    check(NULL == v || PMIX_STRING == v->type, fact, "type %u", NULL == v ? 0 : v->type);
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
}

/* `key` of `p` must not be found: no value of another meaning. */
static void want_none(const char *who, const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = get(who, p, key);
    char fact[128];
    snprintf(fact, sizeof fact, "%s %s is not found", who, key);
    check(NULL == v, fact, "got a value of type %u", NULL == v ? 0 : v->type);
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
}

static void csv_of_node(int n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int r = 0; r < jobsize; r++) {
        if (node_of[r] == n) {
            size_t at = strlen(buf);
            snprintf(buf + at, len - at, "%s%d", at ? "," : "", r);
        }
    }
}

/* What every rank reads about itself and the job (Open MPI's and MPICH's
 * start: ompi_rte_init, MPIR_pmi_init). */
static void self_and_job(void)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    char peers[256], nlist[600] = "";
    csv_of_node(my_node, peers, sizeof peers);
    for (int n = 0; n < nnodes; n++) {
        size_t at = strlen(nlist);
        snprintf(nlist + at, sizeof nlist - at, "%s%s", n ? "," : "", node_names[n]);
    }
    int r = (int) me.rank;
    want_int("self", &me, PMIX_RANK, PMIX_PROC_RANK, r);
    want_str("self", &me, PMIX_NSPACE, me.nspace);
    want_int("self", &me, PMIX_LOCAL_RANK, PMIX_UINT16, lrank_of[r]);
    want_int("self", &me, PMIX_NODE_RANK, PMIX_UINT16, lrank_of[r]);
    want_int("self", &me, PMIX_APPNUM, PMIX_UINT32, 0);
    want_int("self", &me, PMIX_APP_RANK, PMIX_PROC_RANK, r);
    want_int("self", &me, PMIX_GLOBAL_RANK, PMIX_PROC_RANK, r);
    want_int("self", &me, PMIX_APPLDR, PMIX_PROC_RANK, 0);
    want_str("self", &me, PMIX_HOSTNAME, node_names[my_node]);
    want_int("self", &me, PMIX_NODEID, PMIX_UINT32, my_node);
    optional_str("self", &me, PMIX_CPUSET);
    optional_str("self", &me, PMIX_LOCALITY_STRING);
    if (want_dirs) {
        /* Directories this process may write in, the rank's inside the
         * namespace's. */
        pmix_value_t *ns = get("job", &wild, PMIX_NSDIR);
        pmix_value_t *pd = get("self", &me, PMIX_PROCDIR);
        int ok = NULL != ns && NULL != pd && PMIX_STRING == ns->type && PMIX_STRING == pd->type
                 && 0 == strncmp(pd->data.string, ns->data.string, strlen(ns->data.string))
                 && 0 == access(ns->data.string, W_OK) && 0 == access(pd->data.string, W_OK);
        check(ok, "self pmix.pdir is a writable directory inside the job's pmix.nsdir",
              "nsdir %s, procdir %s", NULL != ns ? ns->data.string : "-",
              NULL != pd ? pd->data.string : "-");
        if (NULL != ns) {
            PMIX_VALUE_RELEASE(ns);
        }
        if (NULL != pd) {
            PMIX_VALUE_RELEASE(pd);
        }
    } else {
        optional_str("self", &me, PMIX_PROCDIR);
    }
    pmix_value_t *jobid = get("job", &wild, PMIX_JOBID);
    check(NULL != jobid && PMIX_STRING == jobid->type && '\0' != jobid->data.string[0],
          "job pmix.jobid is a string", "type %u", NULL == jobid ? 0 : jobid->type);
    if (NULL != jobid) {
        PMIX_VALUE_RELEASE(jobid);
    }
    want_int("job", &wild, PMIX_JOB_SIZE, PMIX_UINT32, jobsize);
    want_int("job", &wild, PMIX_UNIV_SIZE, PMIX_UINT32, jobsize);
    want_int("job", &wild, PMIX_MAX_PROCS, PMIX_UINT32, jobsize);
    want_int("job", &wild, PMIX_APP_SIZE, PMIX_UINT32, jobsize);
    want_int("job", &wild, PMIX_JOB_NUM_APPS, PMIX_UINT32, 1);
    want_int("job", &wild, PMIX_NUM_NODES, PMIX_UINT32, nnodes);
    want_str("job", &wild, PMIX_NODE_LIST, nlist);
    want_int("job", &wild, PMIX_LOCAL_SIZE, PMIX_UINT32, node_size[my_node]);
    want_str("job", &wild, PMIX_LOCAL_PEERS, peers);
    want_int("job", &wild, PMIX_LOCALLDR, PMIX_PROC_RANK, node_ldr[my_node]);
    want_str("job", &wild, PMIX_HOSTNAME, node_names[my_node]);
    want_int("job", &wild, PMIX_NODEID, PMIX_UINT32, my_node);
    optional_str("job", &wild, PMIX_TMPDIR);
    if (!want_dirs) {
        optional_str("job", &wild, PMIX_NSDIR);
    }
    optional_str("job", &wild, PMIX_LOCAL_CPUSETS);
    /* The job-level PMIX_RANK of nobody. */
    want_none("job", &wild, PMIX_RANK);
}

/* What a library reads about each peer (its hostname for the modex and
 * error messages, its node for shared-memory transports, its local rank). */
static void peer(int p)
{
    pmix_proc_t q;
    PMIX_LOAD_PROCID(&q, me.nspace, (pmix_rank_t) p);
    char who[32], peers[256];
    snprintf(who, sizeof who, "peer %d", p);
    int n = node_of[p];
    csv_of_node(n, peers, sizeof peers);
    want_str(who, &q, PMIX_HOSTNAME, node_names[n]);
    want_int(who, &q, PMIX_NODEID, PMIX_UINT32, n);
    want_int(who, &q, PMIX_LOCAL_RANK, PMIX_UINT16, lrank_of[p]);
    want_int(who, &q, PMIX_NODE_RANK, PMIX_UINT16, lrank_of[p]);
    want_int(who, &q, PMIX_APPNUM, PMIX_UINT32, 0);
    want_int(who, &q, PMIX_LOCAL_SIZE, PMIX_UINT32, node_size[n]);
    want_str(who, &q, PMIX_LOCAL_PEERS, peers);
    want_int(who, &q, PMIX_LOCALLDR, PMIX_PROC_RANK, node_ldr[n]);
    want_int(who, &q, PMIX_JOB_SIZE, PMIX_UINT32, jobsize);
    optional_str(who, &q, PMIX_LOCALITY_STRING);
    if (n != my_node) {
        /* Nothing registered for it: never this node's value. */
        want_none(who, &q, PMIX_CPUSET);
    }
}

/* PMIx_Resolve_peers / PMIx_Resolve_nodes agree with the layout (Open MPI
 * resolves its peers this way). */
static void resolve(void)
{
    char want[1024], got[1024];
    for (int n = 0; n < nnodes; n++) {
        pmix_proc_t *procs = NULL;
        size_t np = 0;
        /* NULL: this node; otherwise by name. */
        const char *name = n == my_node ? NULL : node_names[n];
        pmix_status_t rc = PMIx_Resolve_peers(name, me.nspace, &procs, &np);
        csv_of_node(n, want, sizeof want);
        got[0] = '\0';
        for (size_t k = 0; k < np; k++) {
            size_t at = strlen(got);
            snprintf(got + at, sizeof got - at, "%s%u", at ? "," : "", procs[k].rank);
        }
        check(PMIX_SUCCESS == rc && 0 == strcmp(got, want), "PMIx_Resolve_peers of every node",
              "node %s: %s, ranks %s, want %s", name ? name : "(this)", PMIx_Error_string(rc),
              got, want);
        PMIX_PROC_FREE(procs, np);
    }
    pmix_proc_t *procs = NULL;
    size_t np = 0;
    pmix_status_t rc = PMIx_Resolve_peers("no-such-node", NULL, &procs, &np);
    check(PMIX_ERR_NOT_FOUND == rc && NULL == procs && 0 == np,
          "PMIx_Resolve_peers of an unknown node is PMIX_ERR_NOT_FOUND", "%s",
          PMIx_Error_string(rc));
    pmix_nspace_t other;
    PMIX_LOAD_NSPACE(other, "another-namespace");
    rc = PMIx_Resolve_peers(NULL, other, &procs, &np);
    check(PMIX_ERR_NOT_FOUND == rc, "PMIx_Resolve_peers of another namespace is PMIX_ERR_NOT_FOUND",
          "%s", PMIx_Error_string(rc));
    rc = PMIx_Resolve_peers(NULL, NULL, NULL, &np);
    check(PMIX_ERR_BAD_PARAM == rc, "PMIx_Resolve_peers with NULL procs is PMIX_ERR_BAD_PARAM",
          "%s", PMIx_Error_string(rc));
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    want[0] = '\0';
    for (int n = 0; n < nnodes; n++) {
        size_t at = strlen(want);
        snprintf(want + at, sizeof want - at, "%s%s", at ? "," : "", node_names[n]);
    }
    check(PMIX_SUCCESS == rc && NULL != nodes && 0 == strcmp(nodes, want),
          "PMIx_Resolve_nodes lists the job's nodes", "%s: %s, want %s", PMIx_Error_string(rc),
          nodes ? nodes : "(null)", want);
    free(nodes);
}

int main(int argc, char **argv)
{
    setup_output();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        out("FAIL PMIx_Init: %d", rc);
        return 1;
    }
    if (argc > 1 && 0 == strcmp(argv[1], "twonode")) {
        layout_two_nodes();
    } else if (argc > 2 && 0 == strcmp(argv[1], "nodes")) {
        /* Every rank of each node listed in ascending order: its local rank
         * is its position there. */
        if (!layout_named(argc - 2, argv + 2)) {
            out("FAIL bad layout arguments");
            return 1;
        }
    } else {
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t *v = get("job", &wild, PMIX_JOB_SIZE);
        long long n = 0;
        if (NULL == v || !value_int(v, &n) || n < 1 || n > MAXN) {
            out("FAIL job size");
            return 1;
        }
        PMIX_VALUE_RELEASE(v);
        layout_one_node((int) n);
        want_dirs = 1;
    }
    for (int n = 0; n < nnodes; n++) {
        node_ldr[n] = -1;
    }
    for (int r = jobsize - 1; r >= 0; r--) {
        node_size[node_of[r]]++;
        node_ldr[node_of[r]] = r;
    }
    my_node = node_of[me.rank];
    self_and_job();
    resolve();
    for (int p = 0; p < jobsize; p++) {
        if ((pmix_rank_t) p != me.rank) {
            peer(p);
        }
    }
    PMIx_Finalize(NULL, 0);
    out("done: %d ok, %d failed", nok, nfail);
    return 0 == nfail ? 0 : 1;
}
