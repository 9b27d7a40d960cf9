/* Event latency between MPI ranks under Open MPI's mpirun: the program
 * tools/bench-mpi runs (scenarios mpi-c2c-local, mpi-c2c-ns,
 * mpi-proclocal, mpi-proclocal-inline), once with OpenPMIx and once with
 * fastpmix as libpmix.so.2. One binary for both: built with mpicc against
 * include/pmix.h (whose layouts and constants are OpenPMIx 4.2's,
 * docs/abi.md) and linked to NEEDED libpmix.so.2 with no run path, so the
 * library first on LD_LIBRARY_PATH is the one Open MPI's pmix component
 * loads too: one loaded library, one connection to the server.
 *
 *   events --mode c2c-local|c2c-ns|proclocal [--events K]   (2 ranks)
 *
 * After MPI_Init every rank calls PMIx_Init (Open MPI's component already
 * did: the second call gets the same client) and registers a handler for
 * BENCH_CODE only. The events carry PMIX_EVENT_NON_DEFAULT, so the
 * handlers Open MPI registers for every code (its error handler) never
 * see them.
 *   c2c-*      rank 0 notifies (source itself, range LOCAL or NAMESPACE);
 *              rank 1's handler gets it through the node's PMIx server
 *              (mpirun's: one node, no orted).
 *   proclocal  rank 0 notifies PMIX_RANGE_PROC_LOCAL; its own handler gets
 *              it (the library's thread, or the notifying one with
 *              fastpmix's FASTPMIX_PROC_LOCAL_INLINE=1; OpenPMIx's always
 *              the notifying one). Rank 1 only sleeps.
 * Method (tools/pmix-compare/README.md): t0 = CLOCK_MONOTONIC, in the
 * event as bench.t0 (PMIX_UINT64) with bench.seq (PMIX_UINT32); the
 * handler takes now - t0 on entry, completes the chain, then acks. The
 * ack goes through shared memory, never PMIx or MPI: a file in the job's
 * /dev/shm mapped by both ranks, a counter and a FUTEX_WAKE when the
 * notifier sleeps on it. The next event goes only after the ack. While
 * the events run no rank is in MPI (Open MPI's progress polls a core):
 * the waiting main threads sleep on futexes. The first min(600, K/3)
 * events are warm-up, left out of the percentiles.
 * Every event must arrive: no ack within 5 s is a lost event, which ends
 * the run as a failure.
 *
 * Output lines (the tool reads them):
 *   MPIEV_RANK rank=R threads=T cpus=C server_threads=S   every rank, after
 *       set-up: its threads, the CPUs it may run on, its parent's threads
 *       (mpirun, the server)
 *   MPIEV mode=M events=K received=N dup=D bad=B warmup=W p50_ns= p90_ns=
 *       p99_ns= same_cpu=P inthread=I   the receiving rank: P = events
 *       (after warm-up) whose handler ran on the notifier's CPU, I = events
 *       whose handler ran in the notifying thread
 *   MPIEV_SEND sent=K lost=L   rank 0
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <mpi.h>
#include <pmix.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A user-defined code, below PMIx's external error base: nothing of Open
 * MPI's registers for it. */
#define BENCH_CODE (PMIX_EXTERNAL_ERR_BASE - 417)
#define KEY_T0 "bench.t0"
#define KEY_SEQ "bench.seq"
#define LOST_AFTER_NS 5000000000LL

/* The shared page: written by both ranks (proclocal: by two threads of
 * rank 0). */
struct shared {
    _Atomic uint32_t ack;       /* seq + 1 of the last event handled */
    _Atomic uint32_t ack_sleep; /* the notifier sleeps on ack */
    _Atomic uint32_t done;      /* rank 0 finished sending (the idle rank sleeps on it) */
    _Atomic int32_t from_cpu;   /* the notifier's CPU at t0 */
    _Atomic int32_t from_tid;   /* the notifier's thread */
};

static struct shared *S;
static int64_t *samples; /* the receiver's, one per seq */
static unsigned char *seen;
static uint32_t nevents, warmup;
static _Atomic uint32_t received, dups, bad, same_cpu, inthread;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Shared (not private) futexes: the words are in a MAP_SHARED file. */
static long futex_wait(_Atomic uint32_t *w, uint32_t val, int64_t timeout_ns) {
    struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
    return syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static long futex_wake(_Atomic uint32_t *w) {
    return syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    int64_t now = now_ns();
    int64_t t0 = -1, seq = -1;
    (void)id, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++) {
        if (!strncmp(info[i].key, KEY_T0, PMIX_MAX_KEYLEN) && info[i].value.type == PMIX_UINT64)
            t0 = (int64_t)info[i].value.data.uint64;
        else if (!strncmp(info[i].key, KEY_SEQ, PMIX_MAX_KEYLEN) &&
                 info[i].value.type == PMIX_UINT32)
            seq = info[i].value.data.uint32;
    }
    int first = 0;
    if (status != BENCH_CODE || t0 < 0 || seq < 0 || seq >= nevents) {
        atomic_fetch_add(&bad, 1);
    } else if (seen[seq]) {
        atomic_fetch_add(&dups, 1);
    } else {
        first = 1;
        seen[seq] = 1;
        samples[seq] = now - t0;
        if ((uint32_t)seq >= warmup && sched_getcpu() == atomic_load(&S->from_cpu))
            atomic_fetch_add(&same_cpu, 1);
        if (gettid() == atomic_load(&S->from_tid))
            atomic_fetch_add(&inthread, 1);
        atomic_fetch_add(&received, 1);
    }
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    if (first) {
        /* seq_cst: pairs with the notifier's store to ack_sleep then load
         * of ack: either it sees this ack, or this sees it asleep. A
         * duplicate acks nothing (the notifier would go on early). */
        atomic_store(&S->ack, (uint32_t)seq + 1);
        if (atomic_load(&S->ack_sleep))
            futex_wake(&S->ack);
    }
}

/* 0 = acked, -1 = lost (no ack within LOST_AFTER_NS). */
static int wait_ack(uint32_t target) {
    int64_t deadline = now_ns() + LOST_AFTER_NS;
    for (;;) {
        uint32_t a = atomic_load(&S->ack);
        if (a >= target)
            return 0;
        if (now_ns() > deadline)
            return -1;
        atomic_store(&S->ack_sleep, 1);
        a = atomic_load(&S->ack);
        if (a < target)
            futex_wait(&S->ack, a, 100000000);
        atomic_store(&S->ack_sleep, 0);
    }
}

/* Returns the number of events acked (nevents unless one was lost). */
static uint32_t send_events(const pmix_proc_t *me, pmix_data_range_t range) {
    bool nondefault = true;
    pmix_info_t info[3];
    PMIX_INFO_LOAD(&info[2], PMIX_EVENT_NON_DEFAULT, &nondefault, PMIX_BOOL);
    atomic_store(&S->from_tid, gettid());
    for (uint32_t i = 0; i < nevents; i++) {
        atomic_store(&S->from_cpu, sched_getcpu());
        uint64_t t0 = (uint64_t)now_ns();
        PMIX_INFO_LOAD(&info[0], KEY_T0, &t0, PMIX_UINT64);
        PMIX_INFO_LOAD(&info[1], KEY_SEQ, &i, PMIX_UINT32);
        pmix_status_t rc = PMIx_Notify_event(BENCH_CODE, me, range, info, 3, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
            fprintf(stderr, "events: PMIx_Notify_event #%u: %s (%d)\n", i, PMIx_Error_string(rc), rc);
            return i;
        }
        if (wait_ack(i + 1)) {
            fprintf(stderr, "events: event #%u lost (no handler within %lld s)\n", i,
                    LOST_AFTER_NS / 1000000000);
            return i;
        }
    }
    return nevents;
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between closest ranks, as tools/pmix-compare. */
static double pct(const int64_t *v, size_t n, double p) {
    double r = p * (double)(n - 1);
    size_t i = (size_t)r;
    if (i + 1 >= n)
        return (double)v[n - 1];
    return (double)v[i] + (r - (double)i) * (double)(v[i + 1] - v[i]);
}

static void report(const char *mode) {
    size_t n = nevents - warmup;
    int64_t *v = samples + warmup;
    qsort(v, n, sizeof *v, cmp64);
    printf("MPIEV mode=%s events=%u received=%u dup=%u bad=%u warmup=%u p50_ns=%.0f p90_ns=%.0f "
           "p99_ns=%.0f same_cpu=%u inthread=%u\n",
           mode, nevents, atomic_load(&received), atomic_load(&dups), atomic_load(&bad), warmup,
           pct(v, n, 0.50), pct(v, n, 0.90), pct(v, n, 0.99), atomic_load(&same_cpu),
           atomic_load(&inthread));
}

static int count_threads(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The shared page, a file in the job's /dev/shm named after the
 * namespace: rank 0 makes it before the barrier, rank 1 opens it after. */
static struct shared *map_shared(const pmix_proc_t *me, int rank) {
    char name[64 + PMIX_MAX_NSLEN];
    snprintf(name, sizeof name, "/fastpmix-mpiev-");
    size_t off = strlen(name);
    for (size_t i = 0; me->nspace[i] && off + 1 < sizeof name; i++)
        name[off++] = (me->nspace[i] == '/') ? '_' : me->nspace[i];
    name[off] = 0;
    int fd = -1;
    if (rank == 0) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && ftruncate(fd, sizeof(struct shared))) {
            close(fd);
            fd = -1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        fprintf(stderr, "events: rank %d: shm_open %s: %s\n", rank, name, strerror(errno));
        return NULL;
    }
    void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        shm_unlink(name);
    return p == MAP_FAILED ? NULL : p;
}

static void usage(void) {
    fprintf(stderr, "usage: events --mode c2c-local|c2c-ns|proclocal [--events K]\n");
}

int main(int argc, char **argv) {
    const char *mode = NULL;
    nevents = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else if (!strcmp(argv[i], "--events"))
            nevents = (uint32_t)atoi(argv[i + 1]);
    }
    pmix_data_range_t range;
    if (!mode || nevents < 3) {
        usage();
        return 2;
    } else if (!strcmp(mode, "c2c-local")) {
        range = PMIX_RANGE_LOCAL;
    } else if (!strcmp(mode, "c2c-ns")) {
        range = PMIX_RANGE_NAMESPACE;
    } else if (!strcmp(mode, "proclocal")) {
        range = PMIX_RANGE_PROC_LOCAL;
    } else {
        usage();
        return 2;
    }
    warmup = nevents / 3 < 600 ? nevents / 3 : 600;
    int proclocal = range == PMIX_RANGE_PROC_LOCAL;

    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "events: needs 2 ranks, has %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "events: rank %d: PMIx_Init: %s (%d)\n", rank, PMIx_Error_string(rc), rc);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    S = map_shared(&me, rank);
    if (!S)
        MPI_Abort(MPI_COMM_WORLD, 3);
    int receiver = proclocal ? rank == 0 : rank == 1;
    if (receiver) {
        samples = calloc(nevents, sizeof *samples);
        seen = calloc(nevents, 1);
        pmix_status_t code = BENCH_CODE;
        rc = PMIx_Register_event_handler(&code, 1, NULL, 0, handler, NULL, NULL);
        if (rc < 0) {
            fprintf(stderr, "events: rank %d: PMIx_Register_event_handler: %s (%d)\n", rank,
                    PMIx_Error_string(rc), rc);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    sched_getaffinity(0, sizeof cpus, &cpus);
    printf("MPIEV_RANK rank=%d threads=%d cpus=%d server_threads=%d\n", rank,
           count_threads(getpid()), CPU_COUNT(&cpus), count_threads(getppid()));
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD); /* every handler registered */

    if (rank == 0) {
        uint32_t sent = send_events(&me, range);
        printf("MPIEV_SEND sent=%u lost=%u\n", sent, nevents - sent);
        atomic_store(&S->done, 1);
        futex_wake(&S->done);
    } else {
        while (!atomic_load(&S->done))
            futex_wait(&S->done, 0, 100000000);
    }
    if (receiver) {
        /* A late duplicate has time to come. */
        usleep(100000);
        report(mode);
    }
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        fprintf(stderr, "events: rank %d: PMIx_Finalize: %s (%d)\n", rank, PMIx_Error_string(rc), rc);
    MPI_Finalize();
    return 0;
}
