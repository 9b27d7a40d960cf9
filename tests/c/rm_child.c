/*
 * A client started by tests/c/rm_server.c (fork + execve with the
 * environment of PMIx_server_setup_fork), not by `fastpmix run`.
 *
 *   rm_child full NODEMAP PROCMAP       ranks 0..2 of the full scenario
 *   rm_child restarted NODEMAP PROCMAP  the rank 2 the host restarted
 *   rm_child null NODEMAP PROCMAP       the only rank under a NULL module
 *
 * NODEMAP/PROCMAP are what the daemon got from PMIx_generate_regex/_ppn and
 * registered as PMIX_NODE_MAP/PMIX_PROC_MAP. Prints "ok <fact>" lines; a
 * failed expectation prints "FAIL ..." and exits 1. See rm_server.c for the
 * scenario.
 */
#define _GNU_SOURCE
#include "client_common.h"

#include <pmix_server.h> /* PMIx_generate_regex/_ppn */

#include <signal.h>

/* Keep in sync with rm_server.c. */
#define RM_CODE (PMIX_EXTERNAL_ERR_BASE - 11)
#define HOST_CODE (PMIX_EXTERNAL_ERR_BASE - 12)
#define READY_CODE (PMIX_EXTERNAL_ERR_BASE - 13)
#define ENV_CODE PMIX_EVENT_NODE_DOWN
#define RESULT_KEY "rm.restart.pid"
#define RM_TEXT "rank 0 to the rm"
#define HOST_TEXT "from the rm"
#define NS "rm-job-1"
#define NULL_NS "rm-null-job"

static pmix_proc_t me;
static char who[64] = "child"; /* "rank N", "restarted rank 2", "null rank 0" */
static atomic_int host_seen, host_ok, rm_seen, ready_seen, rm_seen_at_host;
/* PMIX_ERR_PROC_ABORTED for rank 2, from rank 2 and about rank 2. */
static atomic_int death_seen, death_other;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) results;
    (void) nresults;
    if (HOST_CODE == status) {
        const char *text = info_string(info, ninfo, PMIX_EVENT_TEXT_MESSAGE);
        int ok = NULL != source && PMIX_CHECK_NSPACE(source->nspace, NS) && NULL != text
                 && 0 == strcmp(text, HOST_TEXT);
        atomic_store(&host_ok, ok);
        /* Anything of the RM range would have come before this (same ring,
         * published earlier). */
        atomic_store(&rm_seen_at_host, atomic_load(&rm_seen));
        atomic_fetch_add(&host_seen, 1);
    } else if (RM_CODE == status) {
        atomic_fetch_add(&rm_seen, 1);
    } else if (READY_CODE == status) {
        if (NULL != source && PMIX_CHECK_NSPACE(source->nspace, NS) && 2 == source->rank) {
            atomic_fetch_add(&ready_seen, 1);
        }
    } else if (PMIX_ERR_PROC_ABORTED == status) {
        const pmix_proc_t *affected = NULL;
        for (size_t i = 0; i < ninfo; i++) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)
                && PMIX_PROC == info[i].value.type) {
                affected = info[i].value.data.proc;
            }
        }
        if (NULL != source && PMIX_CHECK_NSPACE(source->nspace, NS) && 2 == source->rank
            && NULL != affected && PMIX_CHECK_PROCID(affected, source)) {
            atomic_fetch_add(&death_seen, 1);
        } else {
            atomic_fetch_add(&death_other, 1);
        }
    }
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void reg(pmix_status_t code)
{
    pmix_status_t codes[1] = {code};
    pmix_status_t rc = PMIx_Register_event_handler(codes, 1, NULL, 0, on_event, NULL, NULL);
    EXPECT(rc >= PMIX_SUCCESS, "rank %u: registering %d: %s", me.rank, code,
           PMIx_Error_string(rc));
}

static char *get_string(const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    EXPECT(PMIX_SUCCESS == rc && NULL != v && PMIX_STRING == v->type, "rank %u: PMIx_Get %s: %s",
           me.rank, key, PMIx_Error_string(rc));
    char *s = strdup(v->data.string);
    PMIX_VALUE_RELEASE(v);
    return s;
}

static long long get_number(const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = NULL;
    long long n = -1;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    EXPECT(PMIX_SUCCESS == rc && NULL != v && value_int(v, &n), "rank %u: PMIx_Get %s: %s",
           me.rank, key, PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(v);
    return n;
}

static void fence(void)
{
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Fence(&all, 1, NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "rank %u: PMIx_Fence: %s", me.rank, PMIx_Error_string(rc));
}

/* Job information, as every rank reads it. */
static void job_info(const char *node_map, const char *proc_map, unsigned size)
{
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    long long n = get_number(&job, PMIX_JOB_SIZE);
    EXPECT((unsigned long long) n == size, "rank %u: PMIX_JOB_SIZE %lld", me.rank, n);
    out("ok %s: PMIX_JOB_SIZE is %u", who, size);
    n = get_number(&me, PMIX_RANK);
    EXPECT(n == me.rank, "rank %u: PMIX_RANK %lld", me.rank, n);
    out("ok %s: PMIX_RANK is its rank", who);
    n = get_number(&me, PMIX_LOCAL_RANK);
    EXPECT(n == me.rank, "rank %u: PMIX_LOCAL_RANK %lld (from PMIX_PROC_DATA)", me.rank, n);
    out("ok %s: PMIX_LOCAL_RANK from the registered PMIX_PROC_DATA", who);
    char *host = get_string(&me, PMIX_HOSTNAME);
    EXPECT(0 == strcmp(host, "nodeA"), "rank %u: PMIX_HOSTNAME %s", me.rank, host);
    free(host);
    out("ok %s: PMIX_HOSTNAME is nodeA", who);
    const char *want_peers = size > 1 ? "0,1,2" : "0";
    char *peers = get_string(&job, PMIX_LOCAL_PEERS);
    EXPECT(0 == strcmp(peers, want_peers), "rank %u: PMIX_LOCAL_PEERS %s", me.rank, peers);
    free(peers);
    out("ok %s: PMIX_LOCAL_PEERS is %s", who, want_peers);
    char *nm = get_string(&job, PMIX_NODE_MAP);
    char *pm = get_string(&job, PMIX_PROC_MAP);
    EXPECT(0 == strcmp(nm, node_map) && 0 == strcmp(pm, proc_map),
           "rank %u: maps %s / %s, registered %s / %s", me.rank, nm, pm, node_map, proc_map);
    /* The maps are the library's own format: generating them here again
     * gives the same strings. */
    char *nm2 = NULL, *pm2 = NULL;
    pmix_status_t rc = PMIx_generate_regex("nodeA", &nm2);
    EXPECT(PMIX_SUCCESS == rc && 0 == strcmp(nm, nm2), "rank %u: regex %s", me.rank,
           nm2 ? nm2 : "-");
    rc = PMIx_generate_ppn(want_peers, &pm2);
    EXPECT(PMIX_SUCCESS == rc && 0 == strcmp(pm, pm2), "rank %u: ppn %s", me.rank,
           pm2 ? pm2 : "-");
    free(nm);
    free(pm);
    free(nm2);
    free(pm2);
    out("ok %s: PMIX_NODE_MAP and PMIX_PROC_MAP read back as registered", who);
}

/* Waits to be killed (the test fails if nobody does). */
static void await_kill(void)
{
    double end = now_s() + HANG_SECS;
    while (now_s() < end) {
        sleep_ms(10);
    }
    FAIL("rank %u: not killed within %d s", me.rank, HANG_SECS);
}

static int full(const char *node_map, const char *proc_map)
{
    init_or_fail(&me);
    snprintf(who, sizeof who, "rank %u", me.rank);
    EXPECT(PMIX_CHECK_NSPACE(me.nspace, NS) && me.rank < 3, "PMIx_Init as %s:%u", me.nspace,
           me.rank);
    out("ok rank %u: PMIx_Init connects with the setup_fork environment", me.rank);
    job_info(node_map, proc_map, 3);
    reg(HOST_CODE);
    reg(RM_CODE);
    reg(READY_CODE);
    reg(ENV_CODE);
    reg(PMIX_ERR_PROC_ABORTED);
    fence();
    out("ok rank %u: PMIx_Fence over the namespace", me.rank);
    if (0 == me.rank) {
        pmix_info_t *info;
        PMIX_INFO_CREATE(info, 1);
        PMIX_INFO_LOAD(&info[0], PMIX_EVENT_TEXT_MESSAGE, RM_TEXT, PMIX_STRING);
        pmix_status_t rc = PMIx_Notify_event(RM_CODE, &me, PMIX_RANGE_RM, info, 1, NULL, NULL);
        PMIX_INFO_FREE(info, 1);
        EXPECT(PMIX_SUCCESS == rc, "rank 0: RM-range notify: %s", PMIx_Error_string(rc));
        out("ok rank 0: PMIx_Notify_event with PMIX_RANGE_RM returns PMIX_SUCCESS");
    }
    EXPECT(wait_at_least(&host_seen, 1), "rank %u: the host's event never came", me.rank);
    EXPECT(atomic_load(&host_ok), "rank %u: the host's event lacks its source or text", me.rank);
    out("ok rank %u: the host's namespace event reaches the child's handler", me.rank);
    EXPECT(0 == atomic_load(&rm_seen_at_host), "rank %u: the RM-range event reached a child",
           me.rank);
    out("ok rank %u: the RM-range event never reaches a child", me.rank);
    fence();
    if (2 == me.rank) {
        await_kill(); /* by the host's restart */
    }
    if (1 == me.rank) {
        pmix_proc_t two;
        PMIX_LOAD_PROCID(&two, me.nspace, 2);
        pmix_info_t *dirs;
        PMIX_INFO_CREATE(dirs, 1);
        PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_RESTART, "rm-ckpt-1", PMIX_STRING);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        pmix_status_t rc = PMIx_Job_control(&two, 1, dirs, 1, &results, &nresults);
        PMIX_INFO_FREE(dirs, 1);
        EXPECT(PMIX_SUCCESS == rc, "rank 1: restart: %s", PMIx_Error_string(rc));
        const pmix_info_t *r = find_info(results, nresults, RESULT_KEY);
        EXPECT(NULL != r && PMIX_PID == r->value.type && r->value.data.pid > 0,
               "rank 1: restart: no %s among %zu results", RESULT_KEY, nresults);
        if (NULL != results) {
            PMIX_INFO_FREE(results, nresults);
        }
        out("ok rank 1: PMIx_Job_control(PMIX_JOB_CTRL_RESTART) returns the host's status "
            "and results");
        /* The restarted rank 2 says it is up; then kill it. */
        EXPECT(wait_at_least(&ready_seen, 1), "rank 1: the restarted rank 2 never said ready");
        bool yes = true;
        PMIX_INFO_CREATE(dirs, 1);
        PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
        results = NULL;
        nresults = 0;
        rc = PMIx_Job_control(&two, 1, dirs, 1, &results, &nresults);
        PMIX_INFO_FREE(dirs, 1);
        if (NULL != results) {
            PMIX_INFO_FREE(results, nresults);
        }
        EXPECT(PMIX_SUCCESS == rc, "rank 1: kill: %s", PMIx_Error_string(rc));
        out("ok rank 1: PMIx_Job_control(PMIX_JOB_CTRL_KILL) of rank 2 returns PMIX_SUCCESS");
    }
    if (0 == me.rank) {
        EXPECT(wait_at_least(&ready_seen, 1), "rank 0: the restarted rank 2 never said ready");
        out("ok rank 0: the restarted rank 2's event reaches the namespace");
        /* The host's SIGKILL of the first rank 2 (for the restart): the
         * server itself tells its peers. Rank 1 may already have killed the
         * restarted rank 2 too: one event per death, none for anyone else
         * (the daemon counts both deaths exactly). */
        EXPECT(wait_at_least(&death_seen, 1), "rank 0: the death of rank 2 never reached it");
        int deaths = atomic_load(&death_seen);
        EXPECT(deaths <= 2 && 0 == atomic_load(&death_other),
               "rank 0: %d deaths of rank 2 and %d others", deaths, atomic_load(&death_other));
        out("ok rank 0: the server reports rank 2's death to the namespace, once per death, "
            "rank 2 as source and affected process");
    }
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "rank %u: PMIx_Finalize: %s", me.rank, PMIx_Error_string(rc));
    out("ok rank %u: PMIx_Finalize", me.rank);
    return 0;
}

static int restarted(const char *node_map, const char *proc_map)
{
    init_or_fail(&me);
    snprintf(who, sizeof who, "restarted rank %u", me.rank);
    EXPECT(PMIX_CHECK_NSPACE(me.nspace, NS) && 2 == me.rank, "restarted: PMIx_Init as %s:%u",
           me.nspace, me.rank);
    out("ok restarted rank 2: PMIx_Init connects again as rm-job-1:2");
    job_info(node_map, proc_map, 3);
    reg(ENV_CODE);
    pmix_status_t rc = PMIx_Notify_event(READY_CODE, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
    EXPECT(PMIX_SUCCESS == rc, "restarted: notify: %s", PMIx_Error_string(rc));
    await_kill(); /* by rank 1's PMIX_JOB_CTRL_KILL */
    return 1;
}

/* Under a module whose upcalls are all NULL. */
static int null_module(const char *node_map, const char *proc_map)
{
    init_or_fail(&me);
    snprintf(who, sizeof who, "null rank %u", me.rank);
    EXPECT(PMIX_CHECK_NSPACE(me.nspace, NULL_NS) && 0 == me.rank, "null: PMIx_Init as %s:%u",
           me.nspace, me.rank);
    out("ok null: a child connects without client_connected");
    job_info(node_map, proc_map, 1);
    pmix_status_t codes[1] = {ENV_CODE};
    pmix_status_t rc = PMIx_Register_event_handler(codes, 1, NULL, 0, on_event, NULL, NULL);
    EXPECT(rc >= PMIX_SUCCESS, "null: register: %s", PMIx_Error_string(rc));
    out("ok null: registering an environment code succeeds without register_events");

    /* Restart: always the host's. */
    pmix_info_t *dirs;
    PMIX_INFO_CREATE(dirs, 1);
    PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_RESTART, "ckpt", PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Job_control(&me, 1, dirs, 1, &results, &nresults);
    PMIX_INFO_FREE(dirs, 1);
    EXPECT(PMIX_ERR_NOT_SUPPORTED == rc, "null: restart: %s", PMIx_Error_string(rc));
    out("ok null: PMIx_Job_control(PMIX_JOB_CTRL_RESTART) returns PMIX_ERR_NOT_SUPPORTED");
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }

    /* A target on another node: the host's. */
    pmix_proc_t far;
    PMIX_LOAD_PROCID(&far, "rm-other-node-job", 0);
    bool yes = true;
    PMIX_INFO_CREATE(dirs, 1);
    PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
    results = NULL;
    nresults = 0;
    rc = PMIx_Job_control(&far, 1, dirs, 1, &results, &nresults);
    PMIX_INFO_FREE(dirs, 1);
    EXPECT(PMIX_ERR_NOT_SUPPORTED == rc, "null: kill on another node: %s", PMIx_Error_string(rc));
    out("ok null: PMIx_Job_control(PMIX_JOB_CTRL_KILL) of another node's process returns "
        "PMIX_ERR_NOT_SUPPORTED");
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }

    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    uint64_t one = 1;
    PMIX_INFO_LOAD(&info[0], PMIX_ALLOC_NUM_CPUS, &one, PMIX_UINT64);
    results = NULL;
    nresults = 0;
    rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, info, 1, &results, &nresults);
    PMIX_INFO_FREE(info, 1);
    EXPECT(PMIX_ERR_NOT_SUPPORTED == rc, "null: allocate: %s", PMIx_Error_string(rc));
    out("ok null: PMIx_Allocation_request returns PMIX_ERR_NOT_SUPPORTED");
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }

    rc = PMIx_Abort(3, "rm_child: abort under a NULL module", NULL, 0);
    EXPECT(PMIX_ERR_NOT_SUPPORTED == rc, "null: abort: %s", PMIx_Error_string(rc));
    out("ok null: PMIx_Abort returns PMIX_ERR_NOT_SUPPORTED");

    /* The RM range is the host alone; a host without a notify_event
     * upcall cannot take it: refused, not a PMIX_SUCCESS for an event that
     * goes nowhere (a Slurm step's server is such a host). */
    rc = PMIx_Notify_event(RM_CODE, &me, PMIX_RANGE_RM, NULL, 0, NULL, NULL);
    EXPECT(PMIX_ERR_NOT_SUPPORTED == rc, "null: RM notify: %s", PMIx_Error_string(rc));
    out("ok null: PMIx_Notify_event with PMIX_RANGE_RM returns PMIX_ERR_NOT_SUPPORTED (no host "
        "takes it)");

    /* A custom range naming another node's process: the same; one naming
     * only this process needs no host. */
    pmix_info_t custom;
    PMIX_INFO_LOAD(&custom, PMIX_EVENT_CUSTOM_RANGE, &far, PMIX_PROC);
    rc = PMIx_Notify_event(RM_CODE, &me, PMIX_RANGE_CUSTOM, &custom, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&custom);
    EXPECT(PMIX_ERR_NOT_SUPPORTED == rc, "null: custom notify to another node: %s",
           PMIx_Error_string(rc));
    PMIX_INFO_LOAD(&custom, PMIX_EVENT_CUSTOM_RANGE, &me, PMIX_PROC);
    rc = PMIx_Notify_event(RM_CODE, &me, PMIX_RANGE_CUSTOM, &custom, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&custom);
    EXPECT(PMIX_SUCCESS == rc, "null: custom notify to itself: %s", PMIx_Error_string(rc));
    out("ok null: a custom range naming another node's process returns PMIX_ERR_NOT_SUPPORTED, "
        "one naming this process PMIX_SUCCESS");

    /* The server still serves. */
    fence();
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "null: PMIx_Finalize: %s", PMIx_Error_string(rc));
    out("ok null: the server keeps serving (fence, finalize) after refusing");
    return 0;
}

int main(int argc, char **argv)
{
    setup_output();
    alarm(3 * HANG_SECS); /* a hang guard: SIGALRM ends the process */
    if (argc < 4) {
        FAIL("usage: rm_child full|restarted|null NODEMAP PROCMAP");
    }
    if (0 == strcmp(argv[1], "full")) {
        return full(argv[2], argv[3]);
    }
    if (0 == strcmp(argv[1], "restarted")) {
        return restarted(argv[2], argv[3]);
    }
    if (0 == strcmp(argv[1], "null")) {
        return null_module(argv[2], argv[3]);
    }
    FAIL("unknown mode %s", argv[1]);
}
