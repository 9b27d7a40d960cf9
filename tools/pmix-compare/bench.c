/*
 * pmix-compare: the parent. It is its own PMIx server (PMIx_server_init,
 * one namespace, one registered client per child), forks and execs itself
 * in a child role with the environment PMIx_server_setup_fork gave, runs
 * one scenario, and prints RESULT lines (tab separated) for
 * tools/bench-compare; raw per-event samples go to --csv.
 *
 *   bench --scenario floor|floor-same|floor-other|floor-fanout|s2c|c2c-local|c2c-ns|proclocal|proclocal-inline|fanout|tput|tput-relay
 *                    |reg|sys|sysgap|sysown|get|fence|fence-collect|wireup|scale
 *                    |busy-s2c|busy-c2c-local|busy-c2c-ns|busy-fanout|steal (busy.c)
 *         [--n N] [--iters K] [--window W] [--batch B] [--csv FILE] [--strace DIR] [-v]
 *   bench --refloop            CPU reference loop, prints milliseconds
 *   bench --child ROLE ...     (internal)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "parent.h"
#include "scale.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* ---------- output ---------- */

static FILE *csv_open(void) {
    if (!opt.csv)
        return NULL;
    FILE *f = fopen(opt.csv, "a");
    if (!f)
        die("%s: %s", opt.csv, strerror(errno));
    fseek(f, 0, SEEK_END); /* ftell 0 = new file: write the header */
    return f;
}

/* The p50 of v[0..n) as a RESULT field (sorts them), none for a kind of
 * wake-up that is rare in the run (under 5 % of its `total` events, or
 * under 10): the p50 of a few stray events would be noise. */
static void p50_field(const char *name, int64_t *v, size_t n, size_t total) {
    double p50, p90, p99;
    if (n < 10 || n * 20 < total)
        return;
    percentiles(v, n, &p50, &p90, &p99);
    printf("\t%s=%.0f", name, p50);
}

/* Server CPU ns per event of the run, when it measures it (c2c), else -1. */
static double srv_cpu_per_event = -1;

/* One latency row from samples v[0..n) (sorts them); w[i] says where
 * v[i]'s handler ran (enum where). */
static void report(const char *row, int64_t *v, const uint8_t *w, size_t n, uint64_t bad) {
    int64_t *same = malloc(sizeof *same * (n ? n : 1)), *other = malloc(sizeof *other * (n ? n : 1));
    size_t ns = 0, no = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i] == WHERE_SAME_CPU)
            same[ns++] = v[i];
        else if (w[i] == WHERE_OTHER_CPU)
            other[no++] = v[i];
    }
    double p50, p90, p99;
    percentiles(v, n, &p50, &p90, &p99);
    printf("RESULT\t%s\t%s\tp50=%.0f\tp90=%.0f\tp99=%.0f\tn=%zu\tbad=%llu", row, lib, p50, p90,
           p99, n, (unsigned long long)bad);
    if (srv_cpu_per_event >= 0)
        printf("\tsrv_cpu=%.1f", srv_cpu_per_event);
    if (ns + no) {
        printf("\tsame=%.3f", (double)ns / (double)(ns + no));
        p50_field("p50same", same, ns, ns + no);
        p50_field("p50other", other, no, ns + no);
    }
    printf("\n");
    free(same);
    free(other);
}

/* Warm-up events left out of the percentiles (they are in the CSV):
 * min(600, K/3), at least 10. Both libraries keep a 512-event cache, and
 * OpenPMIx's PROC_LOCAL path is ~3x slower once its cache is full, so the
 * steady state starts after ~512 events. */
static uint32_t warmup(void) {
    uint32_t w = opt.iters / 3 < 600 ? opt.iters / 3 : 600;
    return w < 10 ? 10 : w;
}

static uint64_t total_bad(void) {
    uint64_t b = 0;
    for (uint32_t i = 0; i < MAXCH; i++)
        b += S->bad[i];
    return b;
}

/* Per event: the latest receiver (fan-out: "last handler ran"). A missing
 * sample (-1) counts as bad. */
void report_last(const char *row, uint32_t nrecv, uint32_t first) {
    size_t n = 0;
    uint64_t bad = total_bad();
    int64_t *v = malloc(sizeof *v * opt.iters);
    uint8_t *w = malloc(opt.iters);
    FILE *f = csv_open();
    if (f) { /* raw: every event (warm-up included) of every receiver */
        if (ftell(f) == 0)
            fprintf(f, "row,lib,event,receiver,latency_ns\n");
        for (uint32_t e = 0; e < opt.iters; e++)
            for (uint32_t r = first; r < first + nrecv; r++)
                fprintf(f, "%s,%s,%u,%u,%lld\n", row, lib, e, r - first,
                        (long long)slot(S, r)[e]);
        fclose(f);
    }
    for (uint32_t e = warmup(); e < opt.iters; e++) {
        int64_t m = -1;
        uint8_t mw = WHERE_UNKNOWN;
        int miss = 0;
        for (uint32_t r = first; r < first + nrecv; r++) {
            int64_t x = slot(S, r)[e];
            if (x < 0) {
                miss = 1;
            } else if (x > m) {
                m = x;
                mw = where_slot(S, r)[e];
            }
        }
        if (miss) {
            bad++;
        } else {
            w[n] = mw;
            v[n++] = m;
        }
    }
    report(row, v, w, n, bad);
    free(v);
    free(w);
}

/* ---------- scenarios ---------- */

static void load_event(pmix_info_t info[2], int64_t t0, uint32_t seq) {
    uint64_t t = (uint64_t)t0;
    PMIX_INFO_LOAD(&info[0], KEY_T0, &t, PMIX_UINT64);
    PMIX_INFO_LOAD(&info[1], KEY_SEQ, &seq, PMIX_UINT32);
}

static void host_notify(int64_t t0, uint32_t seq) {
    pmix_info_t info[2];
    load_event(info, t0, seq);
    pmix_status_t rc =
        PMIx_Notify_event(BENCH_CODE, NULL, (pmix_data_range_t)S->range, info, 2, NULL, NULL);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        die("PMIx_Notify_event (host): %s (%d)", PMIx_Error_string(rc), rc);
}

/* Binds this process to `cpu`, and its children from now on to `child`
 * (BENCH_CHILD_CPU, read by spawn). */
static void bind_cpus(int cpu, int child) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    char c[16];
    snprintf(c, sizeof c, "%d", child);
    if (sched_setaffinity(0, sizeof set, &set) || setenv("BENCH_CHILD_CPU", c, 1))
        die("binding to CPU %d: %s", cpu, strerror(errno));
}

/* The first two CPUs this process may run on (-1: none). */
static void first_cpus(int *a, int *b) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        die("sched_getaffinity: %s", strerror(errno));
    *a = *b = -1;
    for (int c = 0; c < CPU_SETSIZE && *b < 0; c++)
        if (CPU_ISSET(c, &set)) {
            if (*a < 0)
                *a = c;
            else
                *b = c;
        }
}

/* The raw futex floor: `n` plain processes asleep on one word, one
 * FUTEX_WAKE for all of them per event; row = the last one to run. */
static void floor_rounds(const char *row, uint32_t n) {
    lib = "futex";
    shared_create(n, opt.iters);
    for (uint32_t i = 0; i < n; i++)
        spawn("floor", environ);
    wait_ready(n);
    int64_t deadline = now_ns() + 600000000000LL;
    for (uint32_t i = 0; i < opt.iters; i++) {
        mark_from_cpu(S);
        atomic_store(&S->t0, now_ns());
        atomic_store(&S->go, i + 1);
        futex_wake(&S->go, 1 << 30);
        if (wait_ack(S, (i + 1) * n, deadline))
            die("%s: no ack", row);
    }
    report_last(row, n, 0);
    stop_all();
}

/* The raw futex wake between two processes. `where`: NULL = both free
 * (the row "floor"), "same" = both on one CPU, "other" = on two CPUs: the
 * floor of each kind of wake that the "Where" section of the report tells
 * apart. */
static void sc_floor(const char *where) {
    if (where) {
        int a, b;
        first_cpus(&a, &b);
        if (!strcmp(where, "same"))
            bind_cpus(a, a);
        else if (b < 0)
            die("floor-other needs two CPUs, this process may run on one");
        else
            bind_cpus(a, b);
    }
    floor_rounds(!where ? "floor" : !strcmp(where, "same") ? "floor-same" : "floor-other", 1);
}

/* The floor of a fan-out to N (see floor_rounds). */
static void sc_floor_fanout(uint32_t n) {
    char row[32];
    snprintf(row, sizeof row, "floor-fanout-%u", n);
    floor_rounds(row, n);
}

/* Server -> N clients, one event at a time; row = per-event last handler. */
static void run_fanout(const char *row, uint32_t n) {
    const char *roles[MAXCH];
    for (uint32_t i = 0; i < n; i++)
        roles[i] = "recv";
    shared_create(n, opt.iters);
    start_pmix(n, roles);
    int64_t deadline = now_ns() + 1800000000000LL;
    for (uint32_t i = 0; i < opt.iters; i++) {
        mark_from_cpu(S);
        host_notify(now_ns(), i);
        if (wait_ack(S, (i + 1) * n, deadline))
            die("%s: no ack for event %u (%u of %u acks)%s", row, i, atomic_load(&S->ack),
                (i + 1) * n, stop_requested ? ", stopped by a signal" : "");
    }
    report_last(row, n, 0);
    stop_all();
}

/* Client 0 notifies, the server relays to client 1, one event at a time.
 * The row also gives the server's CPU time per relayed event (srv_cpu=,
 * ns): this process's over the run, whose main thread only sleeps on the
 * command word meanwhile, so it is the library's server threads' work
 * (warm-up events included). */
static void sc_c2c(pmix_data_range_t range) {
    const char *roles[] = {"send", "recv"};
    shared_create(2, opt.iters);
    S->range = range;
    start_pmix(2, roles);
    int64_t c0 = cpu_ns();
    command(OP_RUN, 0, 2);
    srv_cpu_per_event = (double)(cpu_ns() - c0) / opt.iters;
    report_last(range == PMIX_RANGE_LOCAL ? "c2c-local" : "c2c-ns", 1, 1);
    stop_all();
}

static void sc_proclocal(const char *row) {
    const char *roles[] = {"proclocal"};
    shared_create(1, opt.iters);
    start_pmix(1, roles);
    command(OP_RUN, 0, 1);
    report_last(row, 1, 0);
    stop_all();
}

static void sc_reg(void) {
    const char *roles[] = {"reg"};
    shared_create(4, opt.iters);
    start_pmix(1, roles);
    command(OP_RUN, 0, 1);
    report_last("reg-new", 1, 0);
    report_last("reg-active", 1, 1);
    report_last("regdereg-active", 1, 2);
    report_last("regdereg-active-10k", 1, 3);
    stop_all();
}

static void host_notify_seq(uint32_t i, void *arg) {
    (void)arg;
    host_notify(now_ns(), i);
}

/* A throughput row (tput-N, tput-relay-N): receivers first..first+n-1
 * got opt.iters events each (unless `lost`) in `elapsed` ns, the server
 * spent `srv` ns of CPU; `extra`: more RESULT fields. */
static void report_tput(const char *row, uint32_t first, uint32_t n, int lost, int64_t elapsed,
                        int64_t srv, const char *extra) {
    uint32_t k = opt.iters;
    uint64_t got = 0;
    int64_t ccpu = 0;
    for (uint32_t r = first; r < first + n; r++) {
        got += atomic_load(&S->recv[r]);
        ccpu += S->cpu_ns[r][1] - S->cpu_ns[r][0];
    }
    if (lost) {
        printf("RESULT\t%s\t%s\tlost=%llu\tdelivered=%llu\n", row, LIB,
               (unsigned long long)((uint64_t)n * k - got), (unsigned long long)got);
    } else {
        double secs = (double)elapsed / 1e9;
        printf("RESULT\t%s\t%s\tevps=%.0f\tsrv_cpu=%.1f\tcli_cpu=%.1f%s\tk=%u\tbad=%llu\n",
               row, LIB, (double)k / secs, (double)srv / k, (double)ccpu / ((double)k * n), extra,
               k, (unsigned long long)total_bad());
    }
    FILE *f = csv_open();
    if (f) {
        if (ftell(f) == 0)
            fprintf(f, "row,lib,events,receivers,window,elapsed_ns,server_cpu_ns,"
                       "clients_cpu_ns,delivered\n");
        fprintf(f, "%s,%s,%u,%u,%u,%lld,%lld,%lld,%llu\n", row, LIB, k, n, opt.window,
                (long long)elapsed, (long long)srv, (long long)ccpu, (unsigned long long)got);
        fclose(f);
    }
}

/* Sustained throughput to N clients: K events back to back, never more
 * than `window` ahead of the slowest receiver. A full window waits until
 * the slowest is half a window behind, so the flow control costs two
 * syscalls per half window, not per event. */
static void sc_tput(uint32_t n) {
    const char *roles[MAXCH];
    for (uint32_t i = 0; i < n; i++)
        roles[i] = "recv";
    shared_create(n, 1);
    S->tput = 1;
    start_pmix(n, roles);
    uint32_t k = opt.iters;
    command(OP_SNAP, 0, n);
    int64_t c0 = cpu_ns(), t0 = now_ns();
    int lost = send_windowed(S, 0, n, k, opt.window, host_notify_seq, NULL) != 0;
    if (stop_requested)
        die("%s: stopped by signal %d", opt.scenario, (int)stop_requested);
    int64_t t1 = atomic_load(&S->last_ns), c1 = cpu_ns();
    command(OP_SNAP, 1, n);
    char row[32];
    snprintf(row, sizeof row, "tput-%u", n);
    report_tput(row, 0, n, lost, t1 - t0, c1 - c0, "");
    stop_all();
}

/* Sustained throughput of the relay: client 0 notifies K events back to
 * back (range LOCAL, at most `window` ahead of the slowest receiver, as
 * tput-N), the server relays each to the N receiving clients 1..N. The
 * server's CPU time is this process's between the sender's start and the
 * last handler: its main thread only sleeps on the command word then
 * (a futex wait, woken every 100 ms to check the children), so nearly all
 * of it is the library's server threads relaying. */
static void sc_tput_relay(uint32_t n) {
    const char *roles[MAXCH];
    if (n + 1 > MAXCH)
        die("tput-relay: --n at most %d", MAXCH - 1);
    roles[0] = "tsend";
    for (uint32_t i = 1; i <= n; i++)
        roles[i] = "recv";
    shared_create(n + 1, 1);
    S->tput = 1;
    S->window = opt.window;
    start_pmix(n + 1, roles);
    uint32_t k = opt.iters;
    command(OP_SNAP, 0, n + 1);
    int64_t c0 = cpu_ns();
    command(OP_RUN, k, n + 1); /* returns when every receiver has all k, or lost */
    int64_t c1 = cpu_ns();
    int64_t t0 = atomic_load(&S->first_ns), t1 = atomic_load(&S->last_ns);
    command(OP_SNAP, 1, n + 1);
    char row[32], snd[48];
    snprintf(row, sizeof row, "tput-relay-%u", n);
    snprintf(snd, sizeof snd, "\tsnd_cpu=%.1f",
             (double)(S->cpu_ns[0][1] - S->cpu_ns[0][0]) / (double)k);
    report_tput(row, 1, n, atomic_load(&S->lost) != 0, t1 - t0, c1 - c0, snd);
    stop_all();
}

/* ---------- syscalls: s2c with strace attached to each process ---------- */

/* Binds this process and the children to the first CPU this process may
 * use (spawn reads BENCH_CHILD_CPU) and, unless the caller chose, lets
 * fastpmix place the client's progress thread by its auto rule. */
static void own_core_binding(void) {
    int a, b;
    first_cpus(&a, &b);
    if (b < 0)
        die("sysown needs two CPUs, this process may run on one");
    if (setenv("FASTPMIX_BIND_PROGRESS", "auto", 0))
        die("setenv: %s", strerror(errno));
    /* The notifier (and the server it starts) on that CPU too, beside
     * the rank's sleeping main thread: left unbound, the scheduler may
     * run it beside the receiver's progress thread, and two threads
     * spinning on one CPU make both wait. */
    bind_cpus(a, a);
}

/* Events not counted apart in sysown's runs (see sc_sys). */
#define SYSOWN_WARM 2000u

/* Events from..to-1 of a syscall count, `gap_us` apart (see sc_sys). */
static void run_sys_events(const char *family, uint32_t gap_us, uint32_t from, uint32_t to) {
    int64_t deadline = now_ns() + 600000000000LL;
    for (uint32_t i = from; i < to; i++) {
        host_notify(now_ns(), i);
        if (wait_ack(S, i + 1, deadline))
            die("%s: no ack for event %u", family, i);
        for (int64_t until = now_ns() + gap_us * 1000LL; now_ns() < until;)
            __builtin_ia32_pause();
    }
}

/* `gap_us` 0: the next event goes as soon as the ack is seen (the
 * receiver may still be awake); otherwise the server spins that long
 * between events (no syscall), so the receiver has gone to sleep. */
static void sc_sys(const char *family, uint32_t gap_us) {
    if (!opt.strace)
        die("%s: --strace DIR required", family);
    const char *roles[] = {"recv"};
    int perf = !strcmp(family, "sysown");
    shared_create(1, opt.iters + (perf ? SYSOWN_WARM : 0));
    S->ack_mode = ACK_SPIN; /* the harness itself makes no syscall per event */
    start_pmix(1, roles);
    char fs[512], fc[512];
    snprintf(fs, sizeof fs, "%s/%s-%s-%u-server.txt", opt.strace, family, LIB, opt.iters);
    snprintf(fc, sizeof fc, "%s/%s-%s-%u-client.txt", opt.strace, family, LIB, opt.iters);
    /* sysown: perf, not strace. A ptrace stop at every syscall leaves
     * strace runnable beside the two spinning threads, and a receiver
     * that spins only when runnable threads do not outnumber the cores
     * then never spins. */
    pid_t tc, ts;
    uint32_t from = 0;
    if (perf) {
        tc = perf_attach(kids[0], fc);
        ts = perf_attach(getpid(), fs);
        if (tc < 0 || ts < 0)
            die("%s: perf did not start", family);
        usleep(500000); /* perf stat -a gives no sign when it counts */
        /* The receiver's spin policy decides from the load it reads, at
         * most every 50 ms: 2000 events first (in both K runs alike), so
         * that the counted ones meet the decision of a steady stream, not
         * the one of perf starting up. */
        run_sys_events(family, gap_us, 0, SYSOWN_WARM);
        from = SYSOWN_WARM;
    } else {
        /* The client's strace first, the server's last: a strace attached
         * with -f to this process would follow (and trace) a later fork,
         * and a traced strace cannot trace. */
        tc = strace_attach(kids[0], fc);
        int64_t deadline = now_ns() + 20000000000LL;
        while (!all_traced(kids[0])) {
            if (now_ns() > deadline)
                die("%s: strace did not attach to the client", family);
            usleep(10000);
        }
        ts = strace_attach(getpid(), fs);
        while (!all_traced(getpid())) {
            if (now_ns() > deadline)
                die("%s: strace did not attach to the server", family);
            usleep(10000);
        }
        usleep(200000);
    }
    run_sys_events(family, gap_us, from, from + opt.iters);
    strace_stop(ts);
    strace_stop(tc);
    long (*total)(const char *) = perf ? perf_total : strace_total;
    printf("RESULT\t%s-%u\t%s\tserver=%ld\tclient=%ld\n", family, opt.iters, LIB, total(fs),
           total(fc));
    stop_all();
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--child"))
            return child_main(argc, argv);
    parent_init();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--refloop")) {
            printf("%.1f\n", refloop_ms());
            return 0;
        } else if (!strcmp(a, "-v")) { /* children print every event they handle */
            verbose = 1;
            setenv("BENCH_DEBUG", "1", 1);
            continue;
        }
        if (!v)
            die("%s needs a value", a);
        i++;
        if (!strcmp(a, "--scenario"))
            opt.scenario = v;
        else if (!strcmp(a, "--n"))
            opt.n = (uint32_t)atoi(v);
        else if (!strcmp(a, "--iters"))
            opt.iters = (uint32_t)atoi(v);
        else if (!strcmp(a, "--window"))
            opt.window = (uint32_t)atoi(v);
        else if (!strcmp(a, "--batch"))
            opt.batch = (uint32_t)atoi(v);
        else if (!strcmp(a, "--csv"))
            opt.csv = v;
        else if (!strcmp(a, "--strace"))
            opt.strace = v;
        else
            die("unknown option %s", a);
    }
    /* wireup: --iters counts whole phases (at least 2: the first is cold) */
    uint32_t min_iters = !strcmp(opt.scenario, "wireup") ? 2 : 20;
    if (opt.n < 1 || opt.n > MAXCH || opt.iters < min_iters || opt.window < 1 || opt.batch < 1)
        die("bad --n/--iters/--window/--batch");
    const char *s = opt.scenario;
    if (!strcmp(s, "floor"))
        sc_floor(NULL);
    else if (!strcmp(s, "floor-same"))
        sc_floor("same");
    else if (!strcmp(s, "floor-other"))
        sc_floor("other");
    else if (!strcmp(s, "floor-fanout"))
        sc_floor_fanout(opt.n);
    else if (!strcmp(s, "s2c"))
        run_fanout("s2c", 1);
    else if (!strcmp(s, "fanout")) {
        char row[32];
        snprintf(row, sizeof row, "fanout-%u", opt.n);
        run_fanout(row, opt.n);
    } else if (!strcmp(s, "c2c-local"))
        sc_c2c(PMIX_RANGE_LOCAL);
    else if (!strcmp(s, "c2c-ns"))
        sc_c2c(PMIX_RANGE_NAMESPACE);
    else if (!strcmp(s, "proclocal"))
        sc_proclocal("proclocal");
    else if (!strcmp(s, "proclocal-inline")) {
        /* fastpmix runs the handler in the notifying thread with it (as
         * OpenPMIx always does); OpenPMIx ignores it. Set before the
         * children are forked: they inherit it. */
        setenv("FASTPMIX_PROC_LOCAL_INLINE", "1", 1);
        sc_proclocal("proclocal-inline");
    }
    else if (!strcmp(s, "reg"))
        sc_reg();
    else if (!strcmp(s, "tput"))
        sc_tput(opt.n);
    else if (!strcmp(s, "tput-relay"))
        sc_tput_relay(opt.n);
    else if (!strcmp(s, "sys"))
        sc_sys("sys", 0);
    else if (!strcmp(s, "sysgap"))
        sc_sys("sysgap", 1000);
    else if (!strcmp(s, "sysown")) {
        /* Back to back, the receiving rank bound to one CPU (as a
         * launcher binds it) and its library free to place its progress
         * thread: fastpmix's auto rule gives that thread the other CPU,
         * which it owns, so it may spin and take events awake. */
        own_core_binding();
        sc_sys("sysown", 0);
    } else if (!strcmp(s, "get"))
        sc_get();
    else if (!strcmp(s, "fence"))
        sc_fence(opt.n, 0);
    else if (!strcmp(s, "fence-collect"))
        sc_fence(opt.n, 1);
    else if (!strcmp(s, "wireup"))
        sc_wireup(opt.n);
    else if (!strcmp(s, "scale"))
        sc_scale(opt.n);
    else if (busy_scenario(s))
        busy_main(s);
    else
        die("unknown scenario %s", s);
    return 0;
}
