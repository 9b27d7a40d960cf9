/*
 * pmix-compare: the busy node, as HPC codes run it. N ranks (N = --n, the
 * CPUs this process may use; bench-compare passes the online CPUs) are
 * each bound to a CPU of their own before PMIx_Init, as a launcher binds
 * them before exec, and their main threads compute a floating-point loop
 * that never sleeps. The host (this parent, its own PMIx server) is then
 * one more runnable thread on a node whose every core is taken, and so is
 * each client's progress thread, on which the handler runs.
 *
 * busy-s2c, busy-c2c-local, busy-c2c-ns, busy-fanout: event latency,
 * notify -> handler entry, while the ranks compute; the method of s2c,
 * c2c-*, fanout-N (t0 in the event, acks through the shared memory,
 * warm-up left out), except that events come 250-750 us apart instead of
 * right after the ack: back to back, a receiver's library thread could
 * find the next event before it went back to sleep, and that is not an
 * event reaching a node that computes.
 *
 * steal: the CPU the runtime takes from compute. Per rank, the CPU time of
 * every thread but the main one (/proc/self/task/TID/schedstat), with no
 * events and at 1,000 events/s from the host, and the main thread's
 * compute steps per second against the same rank's before PMIx_Init.
 */
#include "parent.h" /* common.h, busy.h, pmix.h, LIB */

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The gap between two events of a busy-* row, uniform in [MIN, MAX] us. */
#define GAP_MIN_US 250
#define GAP_MAX_US 750
/* steal: the host's pace (events per second) in the PH_1K phase */
#define STEAL_RATE 1000

static const char *const phase_name[PH_N] = {"no-pmix", "idle", "1k", "busy"};

/* ---------- both sides ---------- */

/* The idx-th CPU this process may run on, or -1. */
static int nth_cpu(uint32_t idx) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set) && idx-- == 0)
            return c;
    return -1;
}

static uint32_t next_gap_us(uint64_t *x) {
    *x ^= *x << 13; /* xorshift: the same sequence of gaps in every run */
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return GAP_MIN_US + (uint32_t)(*x % (GAP_MAX_US - GAP_MIN_US + 1));
}

static void load_event(pmix_info_t info[2], int64_t t0, uint32_t seq) {
    uint64_t t = (uint64_t)t0;
    PMIX_INFO_LOAD(&info[0], KEY_T0, &t, PMIX_UINT64);
    PMIX_INFO_LOAD(&info[1], KEY_SEQ, &seq, PMIX_UINT32);
}

/* ---------- the children: the compute loop ---------- */

/* One compute step: 16,384 multiply-adds on 64 doubles (~2 us here),
 * in the cache, never a syscall. The values converge to 1, so they stay
 * finite however long the loop runs. */
static double vec[64];
static volatile double sink;

static void compute_step(void) {
    for (int r = 0; r < 256; r++)
        for (int i = 0; i < 64; i++)
            vec[i] = vec[i] * 0.9999999 + 1e-7;
    sink = vec[63];
}

/* The CPU time of this process's threads, one snapshot. */
#define MAXT 128
struct tsnap {
    int n;
    int tid[MAXT];
    int64_t ns[MAXT];
    int64_t runs[MAXT]; /* times the thread got a CPU (schedstat), for the log */
};

/* A thread's CPU time in ns: the first field of its schedstat (ns, the
 * scheduler's own count; the third: how many times it got a CPU), else
 * utime + stime of its stat (clock ticks). */
static int64_t thread_ns(int tid, int64_t *runs) {
    char p[64], buf[512];
    snprintf(p, sizeof p, "/proc/self/task/%d/schedstat", tid);
    FILE *f = fopen(p, "r");
    long long ns, wait, n;
    *runs = 0;
    if (f) {
        int ok = fscanf(f, "%lld %lld %lld", &ns, &wait, &n) == 3;
        fclose(f);
        if (ok) {
            *runs = n;
            return ns;
        }
    }
    snprintf(p, sizeof p, "/proc/self/task/%d/stat", tid);
    if (!(f = fopen(p, "r")))
        return 0; /* the thread has gone */
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *q = strrchr(buf, ')'); /* the name may hold blanks and parentheses */
    unsigned long long ut, st;
    if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (int64_t)(ut + st) * (1000000000 / sysconf(_SC_CLK_TCK));
}

static void snap(struct tsnap *t) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    t->n = 0;
    while (d && (e = readdir(d)) && t->n < MAXT) {
        int tid = atoi(e->d_name);
        if (tid <= 0)
            continue;
        t->tid[t->n] = tid;
        t->ns[t->n] = thread_ns(tid, &t->runs[t->n]);
        t->n++;
    }
    if (d)
        closedir(d);
}

static int64_t snap_of(const struct tsnap *t, int tid) {
    for (int i = 0; i < t->n; i++)
        if (t->tid[i] == tid)
            return t->ns[i];
    return 0; /* born during the phase */
}

static int64_t runs_of(const struct tsnap *t, int tid) {
    for (int i = 0; i < t->n; i++)
        if (t->tid[i] == tid)
            return t->runs[i];
    return 0;
}

/* The phase's CPU time per thread into `r`, and one line on stderr (the
 * run's log) naming each library thread, its CPU time and the CPUs it may
 * run on: where each library put its threads. A thread that ended during
 * the phase is not counted (the libraries start theirs at PMIx_Init). */
static void account(const char *role, uint32_t idx, int phase, const struct tsnap *a,
                    const struct tsnap *b, struct busy_rank *r) {
    int me = getpid();
    char line[1024];
    int len = snprintf(line, sizeof line, "bench %s/%u %s: main %.1f ms", role, idx,
                       phase_name[phase], (double)(snap_of(b, me) - snap_of(a, me)) / 1e6);
    r->main_ns = snap_of(b, me) - snap_of(a, me);
    r->other_ns = 0;
    r->threads = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->tid[i] == me)
            continue;
        int64_t d = b->ns[i] - snap_of(a, b->tid[i]);
        r->other_ns += d;
        r->threads++;
        char p[64], comm[32] = "?", cpus[64] = "";
        snprintf(p, sizeof p, "/proc/self/task/%d/comm", b->tid[i]);
        FILE *f = fopen(p, "r");
        if (f) {
            if (fgets(comm, sizeof comm, f))
                comm[strcspn(comm, "\n")] = 0;
            fclose(f);
        }
        cpu_set_t set;
        if (!sched_getaffinity(b->tid[i], sizeof set, &set))
            for (int c = 0, n = 0; c < CPU_SETSIZE && n < 60; c++)
                if (CPU_ISSET(c, &set))
                    n += snprintf(cpus + n, sizeof cpus - (size_t)n, "%s%d", n ? "," : "", c);
        if (len < (int)sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, "; %s %.3f ms %lld runs cpus %s",
                            comm, (double)d / 1e6,
                            (long long)(b->runs[i] - runs_of(a, b->tid[i])), cpus);
    }
    fprintf(stderr, "%s\n", line);
}

/* busy-c2c-*: rank 0's main thread notifies between its compute steps,
 * the next event a gap after the previous one's ack, never waiting. */
struct sender {
    const pmix_proc_t *me;
    pmix_data_range_t range;
    uint32_t k, nrecv, sent, waiting;
    int64_t next;
    uint64_t x;
};

static void sender_step(struct shared *s, struct sender *q, int64_t now) {
    if (q->sent >= q->k)
        return;
    if (q->waiting) {
        if ((int32_t)(atomic_load(&s->ack) - q->sent * q->nrecv) < 0)
            return;
        q->waiting = 0;
        q->next = now + (int64_t)next_gap_us(&q->x) * 1000;
    }
    if (now < q->next)
        return;
    pmix_info_t info[2];
    mark_from_cpu(s);
    load_event(info, now_ns(), q->sent);
    pmix_status_t rc = PMIx_Notify_event(BENCH_CODE, q->me, q->range, info, 2, NULL, NULL);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        child_fail("PMIx_Notify_event", rc);
    q->sent++;
    q->waiting = 1;
}

/* Compute until `until` (CLOCK_MONOTONIC ns; 0: until the parent says
 * stop), recording the phase in s->busy.r[idx][phase]. */
static void compute_phase(struct shared *s, const char *role, uint32_t idx, int phase,
                          int64_t until, struct sender *q) {
    struct tsnap a, b;
    struct busy_rank *r = &s->busy.r[idx][phase];
    snap(&a);
    int64_t t0 = now_ns(), t = t0, n = 0;
    for (;;) {
        compute_step();
        n++;
        t = now_ns();
        if (q)
            sender_step(s, q, t);
        if (until ? t >= until : atomic_load_explicit(&s->busy.stop, memory_order_relaxed) != 0)
            break;
        if (atomic_load_explicit(&s->failed, memory_order_relaxed))
            break;
    }
    snap(&b);
    r->iters = n;
    r->wall_ns = t - t0;
    r->cpu = sched_getcpu();
    account(role, idx, phase, &a, &b, r);
}

/* ---------- the children ---------- */

int busy_role(const char *role) {
    return !strcmp(role, "busy") || !strcmp(role, "bcomp") || !strcmp(role, "bsend") ||
           !strcmp(role, "steal");
}

/* busy: computes and handles events; bcomp: computes only (busy-s2c's
 * and busy-c2c-*'s other ranks); bsend: computes and notifies
 * (busy-c2c-*'s rank 0); steal: computes and counts events. */
int busy_receiver(const char *role) {
    return !strcmp(role, "busy") || !strcmp(role, "steal");
}

/* Before PMIx_Init: bound to a CPU of its own, as a launcher binds a rank
 * before exec (fastpmix's client decides where its progress thread goes
 * from this binding and the peers' the host registered); steal first
 * computes with no PMIx at all, every rank at once: the reference. */
void busy_setup(struct shared *s, const char *role, uint32_t idx) {
    int cpu = nth_cpu(idx);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0)
        CPU_SET(cpu, &set);
    if (cpu < 0 || sched_setaffinity(0, sizeof set, &set))
        child_fail("binding the rank to a CPU of its own", PMIX_ERR_NOT_AVAILABLE);
    if (strcmp(role, "steal"))
        return;
    uint32_t in = atomic_fetch_add(&s->busy.ref_in, 1) + 1;
    if (in >= s->nchild)
        futex_wake(&s->busy.ref_in, 1 << 30);
    while ((in = atomic_load(&s->busy.ref_in)) < s->nchild && !atomic_load(&s->failed))
        futex_wait(&s->busy.ref_in, in, 100000000);
    compute_phase(s, role, idx, PH_REF, now_ns() + (int64_t)s->busy.window_ms * 1000000, NULL);
}

void busy_run(struct shared *s, const char *role, uint32_t idx, const struct pmix_proc *me,
              uint32_t phase) {
    if (phase >= PH_N)
        child_fail("busy_run: no such phase", PMIX_ERR_BAD_PARAM);
    if (strcmp(role, "bsend")) {
        compute_phase(s, role, idx, (int)phase, 0, NULL);
        return;
    }
    struct sender q = {me, (pmix_data_range_t)s->range, s->niter, s->busy.nrecv, 0, 0, 0,
                       88172645463325252ull + idx};
    q.next = now_ns() + (int64_t)next_gap_us(&q.x) * 1000;
    compute_phase(s, role, idx, (int)phase, 0, &q);
}

/* ---------- the parent ---------- */

/* PMIX_LOCAL_CPUSETS of the namespace: each rank's CPU, as a launcher
 * that binds a rank per core registers them (fastpmix run --bind-to core
 * does); with them fastpmix's client sees no free core beside its rank
 * and leaves its progress thread on the rank's binding, where OpenPMIx's
 * is too (a thread inherits its process's binding). */
static char cpusets[BUSY_MAXR * 5];

static void bind_plan(uint32_t n) {
    if (n > BUSY_MAXR)
        die("%s: --n at most %d", opt.scenario, BUSY_MAXR);
    cpusets[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        int c = nth_cpu(i);
        if (c < 0)
            die("%s: %u ranks, one per CPU, but this process may run on fewer CPUs", opt.scenario, n);
        snprintf(cpusets + strlen(cpusets), sizeof cpusets - strlen(cpusets), "%s%d", i ? ":" : "",
                 c);
    }
    job_local_cpusets = cpusets;
}

/* command() without its wait: the ranks compute until `stop`. */
static void command_start(uint32_t op, uint32_t arg) {
    atomic_store(&S->busy.stop, 0);
    atomic_store(&S->cmd_done, 0);
    atomic_store(&S->cmd_op, op);
    atomic_store(&S->cmd_arg, arg);
    atomic_fetch_add(&S->cmd, 1);
    futex_wake(&S->cmd, 1 << 30);
}

static void command_stop(uint32_t n) {
    atomic_store(&S->busy.stop, 1);
    if (wait_count(S, &S->cmd_done, n, now_ns() + 60000000000LL))
        die("%s: the ranks did not stop computing", opt.scenario);
}

static void sleep_until(int64_t t) {
    struct timespec ts = {t / 1000000000, t % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop_requested)
        ;
}

static void notify_host(int64_t t0, uint32_t seq) {
    pmix_info_t info[2];
    load_event(info, t0, seq);
    check("PMIx_Notify_event (host)",
          PMIx_Notify_event(BENCH_CODE, NULL, (pmix_data_range_t)S->range, info, 2, NULL, NULL));
}

/* The mean over ranks 0..n-1 of the main thread's CPU share in `phase`. */
static double main_share(uint32_t n, int phase) {
    double m = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct busy_rank *r = &S->busy.r[i][phase];
        m += r->wall_ns > 0 ? (double)r->main_ns / (double)r->wall_ns : 0;
    }
    return m / n;
}

/* CPU ns over `wall` ns as ms per minute. */
static double per_min(int64_t ns, int64_t wall) {
    return (double)ns / 1e6 * 60e9 / (double)(wall > 0 ? wall : 1);
}

/* The mean over ranks first..first+n-1 of the library threads' CPU in
 * `phase`, ms per minute of the rank's wall time; -1 when n is 0. */
static double lib_cpu(uint32_t first, uint32_t n, int phase) {
    double m = 0;
    for (uint32_t i = first; i < first + n; i++)
        m += per_min(S->busy.r[i][phase].other_ns, S->busy.r[i][phase].wall_ns);
    return n ? m / n : -1;
}

/* busy-s2c: the host -> rank 1; busy-c2c-*: rank 0 -> rank 1 through the
 * server; busy-fanout: the host -> every rank (the last handler). Every
 * rank computes meanwhile; only the receivers register the handler. */
static void sc_busy(const char *row, uint32_t n) {
    int fan = !strcmp(row, "busy-fanout"), c2c = !strncmp(row, "busy-c2c", 8);
    const char *roles[BUSY_MAXR];
    if (n < 2)
        die("%s: needs two ranks on two CPUs (--n 2 or more)", row);
    for (uint32_t i = 0; i < n; i++)
        roles[i] = fan ? "busy" : i == 1 ? "busy" : i == 0 && c2c ? "bsend" : "bcomp";
    uint32_t first = fan ? 0 : 1, nrecv = fan ? n : 1, k = opt.iters;
    bind_plan(n);
    shared_create(n, k);
    S->range = !strcmp(row, "busy-c2c-ns") ? PMIX_RANGE_NAMESPACE : PMIX_RANGE_LOCAL;
    S->busy.nrecv = nrecv;
    start_pmix(n, roles);
    struct tsnap a, b; /* the server's threads, for the log */
    struct busy_rank srv_threads;
    snap(&a);
    int64_t c0 = cpu_ns(), t0 = now_ns();
    command_start(OP_RUN, PH_BUSY);
    int64_t deadline = now_ns() + 600000000000LL;
    sleep_until(now_ns() + 20000000); /* every rank computing before the first event */
    if (c2c) { /* rank 0 sends, between its compute steps */
        if (wait_ack(S, k * nrecv, deadline))
            die("%s: %u of %u acks", row, atomic_load(&S->ack), k * nrecv);
    } else {
        uint64_t x = 88172645463325252ull;
        for (uint32_t i = 0; i < k; i++) {
            mark_from_cpu(S);
            notify_host(now_ns(), i);
            if (wait_ack(S, (i + 1) * nrecv, deadline))
                die("%s: no ack for event %u (%u of %u acks)%s", row, i, atomic_load(&S->ack),
                    (i + 1) * nrecv, stop_requested ? ", stopped by a signal" : "");
            /* asleep, not spinning: every CPU has a rank to run */
            sleep_until(now_ns() + (int64_t)next_gap_us(&x) * 1000);
        }
    }
    command_stop(n);
    int64_t srv = cpu_ns() - c0, wall = now_ns() - t0;
    snap(&b);
    account("server", 0, PH_BUSY, &a, &b, &srv_threads);
    report_last(row, nrecv, first);
    /* The same row: how many ranks; the CPU time (ms per minute) of the
     * receivers' library threads, of the other ranks' (a rank with no
     * handler for the event, or busy-c2c's sender), of the server (this
     * process, every thread); the share of the wall time the ranks' main
     * threads computed. */
    printf("RESULT\t%s\t%s\tranks=%u\tcpus=%d\trx_cpu=%.3f\tother_cpu=%.3f\tsrv=%.3f\tmain=%.4f\n",
           row, LIB, n, (int)sysconf(_SC_NPROCESSORS_ONLN), lib_cpu(first, nrecv, PH_BUSY),
           n > nrecv ? (lib_cpu(0, n, PH_BUSY) * n - lib_cpu(first, nrecv, PH_BUSY) * nrecv) /
                           (n - nrecv)
                     : -1,
           per_min(srv, wall), main_share(n, PH_BUSY));
    stop_all();
}

/* One steal phase: the ranks compute; after 10 ms the host sends
 * `events` 1 ms apart (clock_nanosleep to absolute deadlines, so a late
 * wake-up does not shift the later events), or sleeps the window; the
 * ranks stop once every one has every event. The server's CPU time (this
 * process, every thread) over the phase into *srv, its wall into *wall,
 * the pace achieved into *evps. */
static void steal_phase(uint32_t n, int phase, uint32_t events, int64_t *srv, int64_t *wall,
                        double *evps) {
    struct tsnap a, b; /* the server's threads, for the log */
    struct busy_rank srv_threads;
    snap(&a);
    int64_t c0 = cpu_ns(), t0 = now_ns(), first = 0, last = 0;
    uint64_t base = min_recv(S, 0, n);
    command_start(OP_RUN, (uint32_t)phase);
    int64_t start = t0 + 10000000;
    if (!events) {
        sleep_until(start + (int64_t)S->busy.window_ms * 1000000);
    } else {
        for (uint32_t i = 0; i < events && !stop_requested; i++) {
            sleep_until(start + (int64_t)i * (1000000000 / STEAL_RATE));
            last = now_ns();
            if (!i)
                first = last;
            notify_host(last, i);
        }
        for (int64_t d = now_ns() + 5000000000LL; min_recv(S, 0, n) < base + events && now_ns() < d;)
            sleep_until(now_ns() + 1000000);
    }
    command_stop(n);
    *srv = cpu_ns() - c0;
    *wall = now_ns() - t0;
    snap(&b);
    account("server", 0, phase, &a, &b, &srv_threads);
    *evps = events > 1 && last > first ? (double)(events - 1) * 1e9 / (double)(last - first) : 0;
}

/* The share of the ranks' CPUs that went to neither the ranks' threads
 * nor the server (`srv` ns of CPU over the parent's `wall`) in `phase`:
 * other work on the machine, and the kernel's own. */
static double foreign(uint32_t n, int phase, int64_t srv, int64_t wall) {
    double cap = 0, ours = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct busy_rank *r = &S->busy.r[i][phase];
        cap += (double)r->wall_ns;
        ours += (double)(r->main_ns + r->other_ns);
    }
    if (wall > 0)
        ours += (double)srv * cap / n / (double)wall;
    double f = cap > 0 ? 1 - ours / cap : 1;
    return f < 0 ? 0 : f;
}

/* Other work above this share of the ranks' CPUs, in the phase or in the
 * reference, and the run's compute ratio says more about that work than
 * about the libraries: it is not reported (ratio_disturbed= instead). */
#define FOREIGN_MAX 0.05

/* A steal row: per rank, the library threads' CPU ms per minute of wall
 * time (mean and max over ranks), the compute steps per second against
 * the same rank's with no PMIx (mean and min; per second of wall time, and
 * per second of the main thread's CPU time), the main thread's CPU share,
 * the server's CPU ms per minute, and the share other work took. */
static void steal_report(const char *row, uint32_t n, int phase, int64_t srv, int64_t wall,
                         double evps, uint32_t events, uint64_t got) {
    double cpu = 0, cpu_max = 0, ratio = 0, ratio_min = 1e9, ratio_cpu = 0;
    int threads = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct busy_rank *r = &S->busy.r[i][phase], *ref = &S->busy.r[i][PH_REF];
        double m = per_min(r->other_ns, r->wall_ns);
        double q = (double)r->iters / (double)(r->wall_ns ? r->wall_ns : 1) /
                   ((double)ref->iters / (double)(ref->wall_ns ? ref->wall_ns : 1));
        cpu += m / n;
        cpu_max = m > cpu_max ? m : cpu_max;
        ratio += q / n;
        ratio_min = q < ratio_min ? q : ratio_min;
        ratio_cpu += (double)r->iters / (double)(r->main_ns ? r->main_ns : 1) /
                     ((double)ref->iters / (double)(ref->main_ns ? ref->main_ns : 1)) / n;
        threads = r->threads > threads ? r->threads : threads;
    }
    double f = foreign(n, phase, srv, wall), fref = foreign(n, PH_REF, 0, 0);
    int clean = f <= FOREIGN_MAX && fref <= FOREIGN_MAX;
    printf("RESULT\t%s\t%s\tcpu=%.3f\tcpu_max=%.3f\t%s=%.4f\tratio_min=%.4f\tratio_cpu=%.4f"
           "\tmain=%.4f\tmain_ref=%.4f\tforeign=%.4f\tforeign_ref=%.4f\tforeign_max=%.4f"
           "\tclean=%d\tsrv=%.3f\tthreads=%d\tranks=%u\tcpus=%d\twin_ms=%.0f",
           row, LIB, cpu, cpu_max, clean ? "ratio" : "ratio_disturbed", ratio, ratio_min,
           ratio_cpu, main_share(n, phase), main_share(n, PH_REF), f, fref, f > fref ? f : fref,
           clean, per_min(srv, wall), threads, n, (int)sysconf(_SC_NPROCESSORS_ONLN),
           (double)wall / 1e6);
    if (events)
        printf("\tevents=%u\tdelivered=%llu\tevps=%.0f", events, (unsigned long long)got, evps);
    printf("\tbad=%llu\n", (unsigned long long)(events && got < events ? events - got : 0));
}

static void sc_steal(uint32_t n) {
    const char *roles[BUSY_MAXR];
    for (uint32_t i = 0; i < n; i++)
        roles[i] = "steal";
    bind_plan(n);
    shared_create(n, 1);
    S->tput = 1; /* the handler counts the events (recv[]), no samples */
    S->busy.window_ms = opt.iters;
    start_pmix(n, roles); /* the ranks' reference phase (no PMIx) runs in it */
    int64_t srv[PH_N], wall[PH_N];
    double evps[PH_N];
    steal_phase(n, PH_IDLE, 0, &srv[PH_IDLE], &wall[PH_IDLE], &evps[PH_IDLE]);
    steal_phase(n, PH_1K, opt.iters, &srv[PH_1K], &wall[PH_1K], &evps[PH_1K]);
    uint64_t got = min_recv(S, 0, n);
    steal_report("steal-idle", n, PH_IDLE, srv[PH_IDLE], wall[PH_IDLE], 0, 0, 0);
    steal_report("steal-1k", n, PH_1K, srv[PH_1K], wall[PH_1K], evps[PH_1K], opt.iters, got);
    FILE *f = opt.csv ? fopen(opt.csv, "a") : NULL;
    if (f) { /* raw: every rank's every phase */
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0)
            fprintf(f, "row,lib,rank,phase,cpu,iterations,wall_ns,main_cpu_ns,threads_cpu_ns,"
                       "threads\n");
        for (uint32_t i = 0; i < n; i++)
            for (int p = PH_REF; p <= PH_1K; p++) {
                const struct busy_rank *r = &S->busy.r[i][p];
                fprintf(f, "steal,%s,%u,%s,%d,%lld,%lld,%lld,%lld,%d\n", LIB, i, phase_name[p],
                        r->cpu, (long long)r->iters, (long long)r->wall_ns,
                        (long long)r->main_ns, (long long)r->other_ns, r->threads);
            }
        fclose(f);
    }
    stop_all();
}

int busy_scenario(const char *s) {
    return !strcmp(s, "busy-s2c") || !strcmp(s, "busy-c2c-local") || !strcmp(s, "busy-c2c-ns") ||
           !strcmp(s, "busy-fanout") || !strcmp(s, "steal");
}

void busy_main(const char *s) {
    if (!strcmp(s, "steal"))
        sc_steal(opt.n);
    else
        sc_busy(s, opt.n);
}
