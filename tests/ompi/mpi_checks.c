/*
 * An MPI + OpenMP program that also uses PMIx itself through fastpmix's
 * header (include/pmix.h, not OpenPMIx's): the hybrid code tools/ompi-test
 * runs under Open MPI 4.1's mpirun with fastpmix as libpmix.so.2. Built
 * with `mpicc -fopenmp -I include`. Each mode prints
 * "result <check> pass|fail|skip <detail>" lines (one per rank, or rank 0
 * only where said); the script judges them and mpirun's exit status.
 *
 *   basic     MPI_Init_thread(MPI_THREAD_MULTIPLE) provides it; an OpenMP
 *             parallel region per rank runs OMP_NUM_THREADS threads, each
 *             of which does an MPI_Allreduce on its own duplicated
 *             communicator (MPI_THREAD_MULTIPLE in use); sums checked
 *             (sum of ranks, sum of thread counts); MPI_Barrier. Names the
 *             node it ran on (MPI_Get_processor_name).
 *   abort     rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) while the others
 *             wait in a barrier: mpirun's status is 7.
 *   signal    rank 1 SIGKILLs itself while the others wait in an
 *             allreduce: mpirun ends the job with a nonzero status.
 *   events    every rank registers a PMIx event handler for one code; rank
 *             0 notifies it with PMIX_RANGE_NAMESPACE; every other rank
 *             gets it exactly once (counted for a while after it came).
 *   events_nodes  the same on two nodes (check events_across_nodes): each
 *             other rank names its node, how often the event came, and its
 *             source and info as its handler saw them (a wrong source is
 *             reported, not failed: the runtime relays the event).
 *   spawn     MPI_Comm_spawn of 2 children (this program, mode "child"),
 *             which report their ranks to the parents (sum checked).
 *             Skipped when the PMIx library refuses PMIx_Spawn (probe).
 *   publish   rank 0 MPI_Publish_name of a port, rank 1 MPI_Lookup_name
 *             finds it, rank 0 unpublishes. Skipped when the PMIx library
 *             refuses PMIx_Publish (probe).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static void result(const char *check, int ok, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    printf("result %s %s rank %d: %s\n", check, ok ? "pass" : "fail", rank, detail);
    fflush(stdout);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static void mode_basic(int provided)
{
    int ok = MPI_THREAD_MULTIPLE == provided;
    int want_threads = omp_get_max_threads();
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank_sum_ok = sum == size * (size - 1) / 2;

    /* Each thread: its own communicator (a duplicate per thread, made in
     * order), an allreduce of its thread number on it. */
    MPI_Comm comms[64];
    int nt = want_threads < 64 ? want_threads : 64;
    for (int t = 0; t < nt; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    }
    int thread_sums[64] = {0};
    atomic_int ran = 0;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        atomic_fetch_add(&ran, 1);
        int mine = t + 1, total = 0;
        MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, comms[t]);
        thread_sums[t] = total;
    }
    int threads_ok = atomic_load(&ran) == nt;
    for (int t = 0; t < nt; t++) {
        threads_ok &= thread_sums[t] == size * (t + 1);
        MPI_Comm_free(&comms[t]);
    }
    /* Every rank's thread count, summed. */
    int all_threads = 0;
    int mine = atomic_load(&ran);
    MPI_Allreduce(&mine, &all_threads, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    threads_ok &= all_threads == size * nt;
    int barrier = MPI_Barrier(MPI_COMM_WORLD);
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_Get_processor_name(host, &len);
    result("mpi_openmp", ok && rank_sum_ok && threads_ok && MPI_SUCCESS == barrier,
           "provided=%d (MULTIPLE=%d) rank_sum=%d threads=%d/%d all_threads=%d barrier=%d node=%s",
           provided, MPI_THREAD_MULTIPLE, sum, atomic_load(&ran), nt, all_threads, barrier, host);
}

/* ---- events ---- */
#define EVENT_CODE (PMIX_EXTERNAL_ERR_BASE - 4242)
static atomic_int got_event, bad_source;
/* What the first event brought (mode events_nodes): its source, and its
 * info keys with the range and proxy among them spelled out. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char seen[768];

static void describe_event(const pmix_proc_t *source, const pmix_info_t info[], size_t ninfo)
{
    char buf[sizeof seen];
    int n = snprintf(buf, sizeof buf, "source %s:%d, info [", NULL == source ? "(null)" : source->nspace,
                     NULL == source ? -1 : (int) source->rank);
    for (size_t i = 0; i < ninfo && n > 0 && (size_t) n < sizeof buf; i++) {
        const pmix_info_t *x = &info[i];
        if (PMIX_DATA_RANGE == x->value.type) {
            n += snprintf(buf + n, sizeof buf - (size_t) n, "%s%s=%s", i ? " " : "", x->key,
                          PMIx_Data_range_string(x->value.data.range));
        } else if (PMIX_PROC == x->value.type && NULL != x->value.data.proc) {
            n += snprintf(buf + n, sizeof buf - (size_t) n, "%s%s=%s:%d", i ? " " : "", x->key,
                          x->value.data.proc->nspace, (int) x->value.data.proc->rank);
        } else {
            n += snprintf(buf + n, sizeof buf - (size_t) n, "%s%s", i ? " " : "", x->key);
        }
    }
    if (n > 0 && (size_t) n < sizeof buf) {
        snprintf(buf + n, sizeof buf - (size_t) n, "]");
    }
    pthread_mutex_lock(&seen_lock);
    memcpy(seen, buf, sizeof seen);
    pthread_mutex_unlock(&seen_lock);
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) info, (void) ninfo, (void) results, (void) nresults;
    if (EVENT_CODE == status) {
        if (0 == atomic_fetch_add(&got_event, 1)) {
            describe_event(source, info, ninfo);
        }
        if (NULL == source || 0 != source->rank) {
            atomic_fetch_add(&bad_source, 1);
        }
    }
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/* nodes: the two-node layout, where rank 0's event reaches the other
 * node only through the runtime's relay. Then the result also names the
 * node and what came (source, range, proxy), and a lost source does not
 * fail it: the script reports what came. */
static void mode_events(int nodes)
{
    const char *check = nodes ? "events_across_nodes" : "events_namespace_once";
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        result(check, 0, "PMIx_Init: %s", PMIx_Error_string(rc));
        return;
    }
    pmix_status_t code = EVENT_CODE;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) {
        result(check, 0, "register: %s", PMIx_Error_string(rc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        rc = PMIx_Notify_event(EVENT_CODE, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        if (PMIX_SUCCESS != rc) {
            result(check, 0, "PMIx_Notify_event: %s", PMIx_Error_string(rc));
        }
    } else {
        double end = now_s() + 10;
        while (0 == atomic_load(&got_event) && now_s() < end) {
            usleep(2000);
        }
        /* A duplicate has had time to come. */
        usleep(300000);
        if (nodes) {
            char host[MPI_MAX_PROCESSOR_NAME] = "";
            int len = 0;
            MPI_Get_processor_name(host, &len);
            pthread_mutex_lock(&seen_lock);
            result(check, 1 == atomic_load(&got_event), "on %s received %d time(s), %s", host,
                   atomic_load(&got_event), seen);
            pthread_mutex_unlock(&seen_lock);
        } else {
            result(check, 1 == atomic_load(&got_event) && 0 == atomic_load(&bad_source),
                   "received %d time(s), %d from a wrong source (namespace %s)",
                   atomic_load(&got_event), atomic_load(&bad_source), me.nspace);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PMIx_Finalize(NULL, 0);
}

/* ---- spawn and publish: probes of the PMIx library ---- */

/* Whether the library implements PMIx_Spawn: fastpmix's stub refuses every
 * call with NOT_SUPPORTED; an implementation refuses no apps otherwise. */
static int spawn_supported(void)
{
    char ns[PMIX_MAX_NSLEN + 1] = {0};
    return PMIX_ERR_NOT_SUPPORTED != PMIx_Spawn(NULL, 0, NULL, 0, ns);
}

static int publish_supported(void)
{
    /* Nothing to publish: an implementation refuses or accepts the empty
     * call; only the stub answers NOT_SUPPORTED. */
    return PMIX_ERR_NOT_SUPPORTED != PMIx_Publish(NULL, 0);
}

static void mode_spawn(char *self)
{
    if (!spawn_supported()) {
        if (0 == rank) {
            printf("result mpi_comm_spawn skip rank 0: needs PMIx_Spawn (the library returns "
                   "PMIX_ERR_NOT_SUPPORTED)\n");
        }
        return;
    }
    MPI_Comm inter;
    int errs[2] = {-1, -1};
    char *args[] = {(char *) "child", NULL};
    int rc = MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    int remote = 0;
    if (MPI_SUCCESS == rc) {
        MPI_Comm_remote_size(inter, &remote);
    }
    int sum = -1, zero = 0;
    /* Children contribute their ranks + 1; parents 0. */
    if (MPI_SUCCESS == rc) {
        MPI_Allreduce(&zero, &sum, 1, MPI_INT, MPI_SUM, inter);
        MPI_Comm_disconnect(&inter);
    }
    result("mpi_comm_spawn", MPI_SUCCESS == rc && 2 == remote && 3 == sum,
           "rc=%d remote=%d children's sum=%d (want 3) errcodes=%d,%d", rc, remote, sum, errs[0],
           errs[1]);
}

static void mode_child(void)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL == parent) {
        return;
    }
    int mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
}

static void mode_publish(void)
{
    if (!publish_supported()) {
        if (0 == rank) {
            printf("result mpi_publish_lookup skip rank 0: needs PMIx_Publish/PMIx_Lookup (the "
                   "library returns PMIX_ERR_NOT_SUPPORTED)\n");
        }
        return;
    }
    char port[MPI_MAX_PORT_NAME] = {0};
    const char *service = "fastpmix-ompi-test";
    int rc = MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (0 == rank) {
        MPI_Open_port(MPI_INFO_NULL, port);
        rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (1 == rank) {
        char found[MPI_MAX_PORT_NAME] = {0};
        int lrc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
        result("mpi_publish_lookup", MPI_SUCCESS == rc && MPI_SUCCESS == lrc && 0 == strcmp(found, port),
               "publish=%d lookup=%d found '%s' want '%s'", rc, lrc, found, port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "basic";
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (0 == strcmp(mode, "basic")) {
        mode_basic(provided);
    } else if (0 == strcmp(mode, "abort")) {
        if (1 == rank) {
            MPI_Abort(MPI_COMM_WORLD, 7);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        sleep(30); /* never reached when the abort works */
    } else if (0 == strcmp(mode, "signal")) {
        int x = 0, y = 0;
        if (1 == rank) {
            raise(SIGKILL);
        }
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        sleep(30);
    } else if (0 == strcmp(mode, "events")) {
        mode_events(0);
    } else if (0 == strcmp(mode, "events_nodes")) {
        mode_events(1);
    } else if (0 == strcmp(mode, "spawn")) {
        mode_spawn(argv[0]);
    } else if (0 == strcmp(mode, "child")) {
        mode_child();
    } else if (0 == strcmp(mode, "publish")) {
        mode_publish();
    }
    MPI_Finalize();
    return 0;
}
