/*
 * What a job needs from the PMIx server a real host embeds, one mode per
 * check; run under `srun --mpi=pmix` by tools/slurm-test (any launcher
 * works). Compiles against fastpmix's pmix.h and against OpenPMIx's, so
 * the same checks measure both libraries under the same host.
 *
 *   host_checks init         PMIx_Init, the rank and job size, PMIx_Finalize
 *   host_checks abort        rank 0 calls PMIx_Abort(7): the launcher's exit
 *                            status must be 7
 *   host_checks fence        the last rank enters PMIx_Fence 1.5 s late: every
 *                            other rank must wait for it
 *   host_checks putget       Put/Commit, a fence that collects the data, then
 *                            a Get of every rank's value
 *   host_checks dmodex       Put/Commit, a barrier through files (no fence),
 *                            then a Get of every rank's value: a rank on
 *                            another node is fetched by direct modex
 *   host_checks events       rank 0 notifies one code per range; its local
 *                            peers must get every range that reaches them,
 *                            and the job must live on
 *   host_checks death        rank 1 is killed (SIGKILL) after every rank
 *                            registered: its local peers must be told
 *   host_checks jobctl       rank 0 signals rank 1 (SIGUSR1) with
 *                            PMIx_Job_control: rank 1 must get it
 *   host_checks heartbeat    rank 0 asks for a heartbeat monitor and never
 *                            beats: it must get the alert, and live on
 *   host_checks usage        rank 0 asks for its own resource usage
 *   host_checks honest [rm|custom|alloc|log]
 *                            rank 0 asks for what a host without the upcall
 *                            cannot do (RM range, a custom range naming a
 *                            rank on another node, an allocation, stdout
 *                            logging in a server without a terminal; one
 *                            of them, or all): each must be refused, not
 *                            answered PMIX_SUCCESS
 *
 * HOSTCHK_DIR names a directory every rank can write (file barriers).
 * Each rank prints "result <check> pass|fail|skip <detail>" lines; the
 * harness reads them (a check passes when no rank failed it and some rank
 * passed it).
 */
#define _GNU_SOURCE
#include "client_common.h"

#include <signal.h>

static pmix_proc_t me;
static unsigned size;
static const char *dir;
static int local[64]; /* 1: that rank is on this node */

__attribute__((format(printf, 3, 4))) static void result(const char *check, int ok,
                                                         const char *fmt, ...)
{
    char why[512] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    out("result %s %s rank %u: %s", check, ok ? "pass" : "fail", me.rank, why);
}

static void job_facts(void)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    long long n = 0;
    EXPECT(PMIX_SUCCESS == PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) && value_int(v, &n)
               && n > 0 && n <= 64,
           "no job size");
    size = (unsigned) n;
    PMIX_VALUE_RELEASE(v);
    v = NULL;
    EXPECT(PMIX_SUCCESS == PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &v)
               && PMIX_STRING == v->type,
           "no local peers");
    for (char *p = v->data.string; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        EXPECT(end != p && r >= 0 && r < 64, "bad local peers %s", v->data.string);
        local[r] = 1;
        p = ',' == *end ? end + 1 : end;
    }
    PMIX_VALUE_RELEASE(v);
}

/* A rank on another node, or -1. */
static int remote_rank(void)
{
    for (unsigned r = 0; r < size; r++) {
        if (!local[r]) {
            return (int) r;
        }
    }
    return -1;
}

static void mode_abort(void)
{
    if (0 == me.rank) {
        pmix_status_t rc = PMIx_Abort(7, "host_checks: a deliberate abort", NULL, 0);
        result("abort", 0, "PMIx_Abort returned %s", PMIx_Error_string(rc));
        exit(1);
    }
    /* The host ends the job; a rank still here after that is a failure. */
    sleep_ms(HANG_SECS * 1000);
    exit(3);
}

static void mode_fence(void)
{
    unsigned last = size - 1;
    if (me.rank == last) {
        sleep_ms(1500);
    }
    double t0 = now_s();
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    double dt = now_s() - t0;
    if (me.rank == last) {
        result("fence_waits", PMIX_SUCCESS == rc, "the late rank: %s", PMIx_Error_string(rc));
    } else {
        result("fence_waits", PMIX_SUCCESS == rc && dt >= 1.0,
               "%s after %.2f s waiting for rank %u (%s)", PMIx_Error_string(rc), dt, last,
               local[last] ? "this node" : "another node");
    }
}

#define TESTKEY "hostchk.value"

static int put_commit(void)
{
    char buf[64];
    snprintf(buf, sizeof buf, "value-of-%u", me.rank);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, buf, PMIX_STRING);
    pmix_key_t key;
    PMIX_LOAD_KEY(key, TESTKEY);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    return PMIx_Commit();
}

/* Gets every rank's value; passes when all match. */
static void get_all(const char *check, const pmix_info_t *info, size_t ninfo)
{
    int bad = 0, remote = 0;
    char why[512] = "";
    pmix_key_t key;
    PMIX_LOAD_KEY(key, TESTKEY);
    for (unsigned r = 0; r < size; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, key, info, ninfo, &v);
        char want[64];
        snprintf(want, sizeof want, "value-of-%u", r);
        int ok = PMIX_SUCCESS == rc && NULL != v && PMIX_STRING == v->type
                 && 0 == strcmp(v->data.string, want);
        remote += !local[r];
        if (!ok && !bad) {
            snprintf(why, sizeof why, "rank %u (%s): %s", r, local[r] ? "this node" : "another node",
                     PMIx_Error_string(rc));
        }
        bad += !ok;
        if (NULL != v) {
            PMIX_VALUE_RELEASE(v);
        }
    }
    if (bad) {
        result(check, 0, "%d of %u values wrong, first %s", bad, size, why);
    } else {
        result(check, 1, "%u values, %d from another node", size, remote);
    }
}

static void mode_putget(void)
{
    pmix_status_t rc = put_commit();
    if (PMIX_SUCCESS != rc) {
        result("put_fence_get", 0, "Put/Commit: %s", PMIx_Error_string(rc));
        return;
    }
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (PMIX_SUCCESS != rc) {
        result("put_fence_get", 0, "PMIx_Fence(PMIX_COLLECT_DATA): %s", PMIx_Error_string(rc));
        return;
    }
    get_all("put_fence_get", NULL, 0);
}

static void mode_dmodex(void)
{
    pmix_status_t rc = put_commit();
    if (PMIX_SUCCESS != rc) {
        result("direct_modex", 0, "Put/Commit: %s", PMIx_Error_string(rc));
        file_barrier(dir, "committed", me.rank, size);
        return;
    }
    /* No fence: every value is committed, none collected. */
    file_barrier(dir, "committed", me.rank, size);
    /* A bounded wait: a Get the host never answers fails instead of hanging. */
    pmix_info_t t;
    int secs = 10;
    PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &secs, PMIX_INT);
    get_all("direct_modex", &t, 1);
    PMIX_INFO_DESTRUCT(&t);
    /* Nobody leaves while another rank may still fetch its value. */
    file_barrier(dir, "fetched", me.rank, size);
}

/* ---- events ---- */
#define BASE 7100
static const struct {
    const char *name;
    pmix_data_range_t range;
    int reaches_local_peers;
} ranges[] = {
    {"local", PMIX_RANGE_LOCAL, 1},       {"namespace", PMIX_RANGE_NAMESPACE, 1},
    {"session", PMIX_RANGE_SESSION, 1},   {"global", PMIX_RANGE_GLOBAL, 1},
    {"undef", PMIX_RANGE_UNDEF, 1},       {"custom", PMIX_RANGE_CUSTOM, 1},
    {"proc_local", PMIX_RANGE_PROC_LOCAL, 0},
};
#define NRANGES (sizeof ranges / sizeof ranges[0])
static atomic_int got[NRANGES];

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) info, (void) ninfo, (void) results, (void) nresults;
    int k = status - BASE;
    if (k >= 0 && (size_t) k < NRANGES && NULL != source && 0 == source->rank) {
        atomic_fetch_add(&got[k], 1);
    }
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void mode_events(void)
{
    pmix_status_t codes[NRANGES];
    for (size_t k = 0; k < NRANGES; k++) {
        codes[k] = BASE + (int) k;
    }
    pmix_status_t rc = PMIx_Register_event_handler(codes, NRANGES, NULL, 0, on_event, NULL, NULL);
    EXPECT(rc >= 0, "register: %s", PMIx_Error_string(rc));
    file_barrier(dir, "registered", me.rank, size);
    if (0 == me.rank) {
        /* The custom range: every other rank of this node. */
        pmix_proc_t targets[64];
        size_t nt = 0;
        for (unsigned r = 1; r < size; r++) {
            if (local[r]) {
                PMIX_LOAD_PROCID(&targets[nt], me.nspace, r);
                nt++;
            }
        }
        for (size_t k = 0; k < NRANGES; k++) {
            pmix_info_t custom;
            pmix_data_array_t arr = {.type = PMIX_PROC, .size = nt, .array = targets};
            size_t ni = 0;
            if (PMIX_RANGE_CUSTOM == ranges[k].range) {
                PMIX_INFO_LOAD(&custom, PMIX_EVENT_CUSTOM_RANGE, &arr, PMIX_DATA_ARRAY);
                ni = 1;
            }
            rc = PMIx_Notify_event(codes[k], &me, ranges[k].range, ni ? &custom : NULL, ni, NULL,
                                   NULL);
            if (ni) {
                PMIX_INFO_DESTRUCT(&custom);
            }
            char check[64];
            snprintf(check, sizeof check, "events_%s", ranges[k].name);
            if (PMIX_SUCCESS != rc) {
                result(check, 0, "PMIx_Notify_event: %s", PMIx_Error_string(rc));
            }
        }
    } else if (local[0]) {
        /* Every range that reaches this node's other ranks must arrive. */
        double end = now_s() + 10;
        for (;;) {
            int all = 1;
            for (size_t k = 0; k < NRANGES; k++) {
                all &= !ranges[k].reaches_local_peers || atomic_load(&got[k]) > 0;
            }
            if (all || now_s() > end) {
                break;
            }
            sleep_ms(5);
        }
        /* One that must not arrive has had time to. */
        sleep_ms(200);
        for (size_t k = 0; k < NRANGES; k++) {
            char check[64];
            snprintf(check, sizeof check, "events_%s", ranges[k].name);
            int n = atomic_load(&got[k]);
            result(check, ranges[k].reaches_local_peers ? 1 == n : 0 == n,
                   "got it %d times from rank 0 on this node (want %d)", n,
                   ranges[k].reaches_local_peers);
        }
    }
    file_barrier(dir, "delivered", me.rank, size);
}

/* ---- a rank's death ---- */
static atomic_int death_code, death_seen;

static void on_death(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) results, (void) nresults;
    const pmix_proc_t *aff = info_proc(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    if (((NULL != aff && 1 == aff->rank) || (NULL != source && 1 == source->rank))
        && 0 == atomic_exchange(&death_seen, 1)) {
        atomic_store(&death_code, status);
        /* Said at once: the host may end the step right after (Slurm's
         * handler kills it on the server's own lost-connection event). */
        if (local[1]) {
            result("death_event_local_peers", 1, "%s from rank %u", PMIx_Error_string(status),
                   NULL != source ? source->rank : 9999);
        }
    }
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

static void mode_death(void)
{
    pmix_status_t rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, on_death, NULL, NULL);
    EXPECT(rc >= 0, "register: %s", PMIx_Error_string(rc));
    file_barrier(dir, "armed", me.rank, size);
    if (1 == me.rank) {
        raise(SIGKILL);
    }
    double end = now_s() + (local[1] ? 10 : 2);
    while (!atomic_load(&death_seen) && now_s() < end) {
        sleep_ms(5);
    }
    int seen = atomic_load(&death_seen);
    if (local[1]) {
        if (!seen) {
            result("death_event_local_peers", 0, "no event naming rank 1 in 10 s");
        }
    } else {
        out("note rank %u on another node %s", me.rank,
            seen ? "was told of rank 1's death" : "was not told of rank 1's death");
    }
    PMIx_Finalize(NULL, 0);
    exit(0);
}

/* ---- job control, monitoring and resource usage on this node ---- */
static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
    (void) sig;
    got_usr1 = 1;
}

/* Rank 0 signals rank 1 (on its node in every layout) with
 * PMIX_JOB_CTRL_SIGNAL: rank 1 must get SIGUSR1. */
static void mode_jobctl(void)
{
    if (1 == me.rank) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
    }
    file_barrier(dir, "armed", me.rank, size);
    if (0 == me.rank) {
        pmix_proc_t target;
        PMIX_LOAD_PROCID(&target, me.nspace, 1);
        pmix_info_t sig;
        int usr1 = SIGUSR1;
        PMIX_INFO_LOAD(&sig, PMIX_JOB_CTRL_SIGNAL, &usr1, PMIX_INT);
        pmix_info_t *res = NULL;
        size_t nres = 0;
        pmix_status_t rc = PMIx_Job_control(&target, 1, &sig, 1, &res, &nres);
        PMIX_INFO_DESTRUCT(&sig);
        if (NULL != res) {
            PMIX_INFO_FREE(res, nres);
        }
        result("job_control_signal", PMIX_SUCCESS == rc, "PMIx_Job_control(SIGNAL) of rank 1: %s",
               PMIx_Error_string(rc));
    } else if (1 == me.rank) {
        double end = now_s() + 10;
        while (!got_usr1 && now_s() < end) {
            sleep_ms(5);
        }
        result("job_control_signal", got_usr1, "%s",
               got_usr1 ? "SIGUSR1 arrived" : "no SIGUSR1 in 10 s");
    }
    file_barrier(dir, "done", me.rank, size);
}

static atomic_int alerts;

static void on_alert(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) info, (void) ninfo, (void) results;
    (void) nresults;
    atomic_fetch_add(&alerts, 1);
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/* Rank 0 asks for a heartbeat monitor (1 s, 1 missed beat, the
 * application handles the alert) and never beats: it must get
 * PMIX_MONITOR_HEARTBEAT_ALERT, and live on. */
static void mode_heartbeat(void)
{
    if (0 == me.rank) {
        pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT;
        pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_alert, NULL, NULL);
        EXPECT(rc >= 0, "register: %s", PMIx_Error_string(rc));
        pmix_info_t mon, d[3];
        uint32_t one = 1;
        bool yes = true;
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &one, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_HEARTBEAT_DROPS, &one, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[2], PMIX_MONITOR_APP_CONTROL, &yes, PMIX_BOOL);
        pmix_info_t *res = NULL;
        size_t nres = 0;
        rc = PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, d, 3, &res, &nres);
        PMIX_INFO_DESTRUCT(&mon);
        for (int i = 0; i < 3; i++) {
            PMIX_INFO_DESTRUCT(&d[i]);
        }
        if (NULL != res) {
            PMIX_INFO_FREE(res, nres);
        }
        if (PMIX_SUCCESS != rc) {
            result("heartbeat_alert", 0, "PMIx_Process_monitor(HEARTBEAT): %s",
                   PMIx_Error_string(rc));
        } else {
            double end = now_s() + 10;
            while (0 == atomic_load(&alerts) && now_s() < end) {
                sleep_ms(10);
            }
            result("heartbeat_alert", atomic_load(&alerts) > 0, "%d alerts in %.1f s",
                   atomic_load(&alerts), 10 - (end - now_s()));
        }
    }
    file_barrier(dir, "done", me.rank, size);
}

/* Rank 0 asks for its own resource usage (PMIX_MONITOR_PROC_RESOURCE_USAGE,
 * pid and thread count): one report naming it. */
static void mode_usage(void)
{
    if (0 != me.rank) {
        return;
    }
    pmix_info_t mon, target;
    pmix_data_array_t *fields, *procs;
    PMIX_DATA_ARRAY_CREATE(fields, 2, PMIX_INFO);
    pmix_info_t *fa = fields->array;
    PMIX_INFO_LOAD(&fa[0], PMIX_PROC_PID, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&fa[1], PMIX_PROC_NUM_THREADS, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_PROC_RESOURCE_USAGE, fields, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(fields);
    PMIX_DATA_ARRAY_CREATE(procs, 1, PMIX_PROC);
    memcpy(procs->array, &me, sizeof me);
    PMIX_INFO_LOAD(&target, PMIX_MONITOR_TARGET_PROCS, procs, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(procs);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, &target, 1, &res, &nres);
    PMIX_INFO_DESTRUCT(&mon);
    PMIX_INFO_DESTRUCT(&target);
    result("resource_usage", PMIX_SUCCESS == rc && nres > 0, "%s, %zu reports",
           PMIx_Error_string(rc), nres);
    if (NULL != res) {
        PMIX_INFO_FREE(res, nres);
    }
}

/* ---- what the host cannot do must not be answered PMIX_SUCCESS ---- */
static void honest_alloc(void);
static void honest_log(void);

static void mode_honest(const char *item)
{
    if (0 != me.rank) {
        return;
    }
    pmix_status_t rc;
    int all = NULL == item;
    if (all || 0 == strcmp(item, "rm")) {
        rc = PMIx_Notify_event(BASE + 50, &me, PMIX_RANGE_RM, NULL, 0, NULL, NULL);
        result("notify_rm_refused", PMIX_ERR_NOT_SUPPORTED == rc, "%s", PMIx_Error_string(rc));
    }
    int far = remote_rank();
    if (!all && 0 != strcmp(item, "custom")) {
        /* not this item */
    } else if (far < 0) {
        out("result notify_custom_remote_refused skip rank 0: no rank on another node");
    } else {
        pmix_proc_t target;
        PMIX_LOAD_PROCID(&target, me.nspace, (pmix_rank_t) far);
        pmix_info_t custom;
        PMIX_INFO_LOAD(&custom, PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
        rc = PMIx_Notify_event(BASE + 51, &me, PMIX_RANGE_CUSTOM, &custom, 1, NULL, NULL);
        PMIX_INFO_DESTRUCT(&custom);
        result("notify_custom_remote_refused", PMIX_ERR_NOT_SUPPORTED == rc,
               "target rank %d: %s", far, PMIx_Error_string(rc));
    }

    if (all || 0 == strcmp(item, "alloc")) {
        honest_alloc();
    }
    if (all || 0 == strcmp(item, "log")) {
        honest_log();
    }
}

static void honest_alloc(void)
{
    pmix_info_t ask;
    uint64_t ncpus = 1;
    PMIX_INFO_LOAD(&ask, PMIX_ALLOC_NUM_CPUS, &ncpus, PMIX_UINT64);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, &ask, 1, &res, &nres);
    PMIX_INFO_DESTRUCT(&ask);
    result("allocation_refused", PMIX_ERR_NOT_SUPPORTED == rc, "%s", PMIx_Error_string(rc));
    if (NULL != res) {
        PMIX_INFO_FREE(res, nres);
    }
}

static void honest_log(void)
{
    pmix_info_t line;
    PMIX_INFO_LOAD(&line, PMIX_LOG_STDOUT, "host_checks: a line for the host's stdout\n",
                   PMIX_STRING);
    pmix_status_t rc = PMIx_Log(&line, 1, NULL, 0);
    PMIX_INFO_DESTRUCT(&line);
    result("log_stdout_not_lost", PMIX_SUCCESS != rc, "%s", PMIx_Error_string(rc));
}

int main(int argc, char **argv)
{
    setup_output();
    const char *mode = argc > 1 ? argv[1] : "init";
    dir = getenv("HOSTCHK_DIR");
    if (NULL == dir) {
        dir = "/tmp";
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        out("result %s fail rank ?: PMIx_Init: %s", 0 == strcmp(mode, "init") ? "init" : mode,
            PMIx_Error_string(rc));
        return 1;
    }
    job_facts();
    if (0 == strcmp(mode, "init")) {
        result("init", 1, "rank %u of %u in %s", me.rank, size, me.nspace);
    } else if (0 == strcmp(mode, "abort")) {
        mode_abort();
    } else if (0 == strcmp(mode, "fence")) {
        mode_fence();
    } else if (0 == strcmp(mode, "putget")) {
        mode_putget();
    } else if (0 == strcmp(mode, "dmodex")) {
        mode_dmodex();
    } else if (0 == strcmp(mode, "events")) {
        mode_events();
    } else if (0 == strcmp(mode, "death")) {
        mode_death();
    } else if (0 == strcmp(mode, "jobctl")) {
        mode_jobctl();
    } else if (0 == strcmp(mode, "heartbeat")) {
        mode_heartbeat();
    } else if (0 == strcmp(mode, "usage")) {
        mode_usage();
    } else if (0 == strcmp(mode, "honest")) {
        mode_honest(argc > 2 ? argv[2] : NULL);
    } else {
        out("FAIL unknown mode %s", mode);
        return 2;
    }
    rc = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != rc) {
        out("result finalize fail rank %u: %s", me.rank, PMIx_Error_string(rc));
        return 1;
    }
    return 0;
}
