/* pmix-compare: clocks, futexes, acknowledgements, statistics. No PMIx here. */
#include "common.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int verbose;
void (*liveness_check)(struct shared *s);
volatile sig_atomic_t stop_requested;

size_t shared_size(uint32_t nslots, uint32_t niter) {
    return sizeof(struct shared) + (size_t)nslots * niter * (sizeof(int64_t) + 1);
}

void mark_from_cpu(struct shared *s) {
    atomic_store_explicit(&s->from_cpu, sched_getcpu(), memory_order_relaxed);
}

void mark_where(struct shared *s, uint32_t receiver, uint32_t seq) {
    int cpu = sched_getcpu();
    /* Relaxed is enough: the notifier stored it before the event or the
     * wake that made this handler run. */
    int from = atomic_load_explicit(&s->from_cpu, memory_order_relaxed);
    where_slot(s, receiver)[seq] = cpu < 0 || from < 0 ? WHERE_UNKNOWN
                                   : cpu == from       ? WHERE_SAME_CPU
                                                       : WHERE_OTHER_CPU;
}

int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru); /* every thread of the process */
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* Shared (not private) futexes: the words live in a MAP_SHARED memfd. */
long futex_wait(_Atomic uint32_t *w, uint32_t val, int64_t timeout_ns) {
    struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
    return syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, timeout_ns > 0 ? &ts : NULL,
                   NULL, 0);
}

long futex_wake(_Atomic uint32_t *w, int n) {
    return syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, n, NULL, NULL, 0);
}

void ack_one(struct shared *s) {
    uint32_t a = atomic_fetch_add(&s->ack, 1) + 1;
    /* seq_cst pairs with the waiter's store to ack_sleep then load of ack:
     * either we see it asleep, or it sees our increment. Only the ack that
     * completes the waiter's target wakes it: in a fan-out to N, a waiter
     * woken by every ack would compete for the CPUs with the receivers not
     * yet run, N - 1 times per event (the ack_target store precedes the
     * ack_sleep store, so a waiter seen asleep has its target visible). */
    if (s->ack_mode == ACK_FUTEX && atomic_load(&s->ack_sleep) &&
        (int32_t)(a - atomic_load(&s->ack_target)) >= 0)
        futex_wake(&s->ack, 1);
}

int wait_ack(struct shared *s, uint32_t target, int64_t deadline_ns) {
    for (uint32_t spins = 1;; spins++) {
        uint32_t a = atomic_load(&s->ack);
        if ((int32_t)(a - target) >= 0)
            return 0;
        if (atomic_load(&s->failed) || stop_requested)
            return -1;
        if (s->ack_mode == ACK_SPIN) {
            for (int i = 0; i < 64; i++)
                __builtin_ia32_pause();
            if ((spins & 0xffff) == 0) { /* ~0.1 s: rare enough to add no syscall per event */
                if (liveness_check)
                    liveness_check(s);
                if (now_ns() > deadline_ns)
                    return -1;
            }
            continue;
        }
        atomic_store(&s->ack_target, target);
        atomic_store(&s->ack_sleep, 1);
        a = atomic_load(&s->ack);
        if ((int32_t)(a - target) < 0 && futex_wait(&s->ack, a, 100000000) && errno == ETIMEDOUT &&
            liveness_check)
            liveness_check(s);
        atomic_store(&s->ack_sleep, 0);
        if (now_ns() > deadline_ns && (int32_t)(atomic_load(&s->ack) - target) < 0)
            return -1;
    }
}

int wait_count(struct shared *s, _Atomic uint32_t *w, uint32_t target, int64_t deadline_ns) {
    for (;;) {
        uint32_t a = atomic_load(w);
        if ((int32_t)(a - target) >= 0)
            return 0;
        if (atomic_load(&s->failed) || stop_requested || now_ns() > deadline_ns)
            return -1;
        if (futex_wait(w, a, 100000000) && errno == ETIMEDOUT && liveness_check)
            liveness_check(s);
    }
}

uint64_t min_recv(struct shared *s, uint32_t first, uint32_t n) {
    uint64_t m = UINT64_MAX;
    for (uint32_t r = first; r < first + n; r++) {
        uint64_t x = atomic_load(&s->recv[r]);
        if (x < m)
            m = x;
    }
    return m;
}

/* Wait until every receiver has at least `target` events; 0 = done,
 * -1 = no progress for 10 s (events lost). */
static int wait_recv(struct shared *s, uint32_t first, uint32_t n, uint64_t target) {
    uint64_t last = min_recv(s, first, n);
    int64_t stall = now_ns() + 10000000000LL;
    for (;;) {
        uint64_t m = min_recv(s, first, n);
        if (m >= target)
            return 0;
        if (m != last) {
            last = m;
            stall = now_ns() + 10000000000LL;
        }
        if (atomic_load(&s->failed) || stop_requested || now_ns() > stall)
            return -1;
        /* seq_cst: pairs with the receivers' increment then load of
         * prog_sleep, so either we see their count or they see us asleep. */
        atomic_store(&s->prog_at, target);
        uint32_t p = atomic_load(&s->prog);
        atomic_store(&s->prog_sleep, 1);
        if (min_recv(s, first, n) < target && futex_wait(&s->prog, p, 100000000) &&
            errno == ETIMEDOUT && liveness_check)
            liveness_check(s);
        atomic_store(&s->prog_sleep, 0);
    }
}

/* A full window waits until the slowest is half a window behind, so the
 * flow control costs two syscalls per half window, not per event. */
int send_windowed(struct shared *s, uint32_t first, uint32_t n, uint32_t k, uint32_t window,
                  void (*notify)(uint32_t i, void *arg), void *arg) {
    for (uint32_t i = 0; i < k; i++) {
        if (stop_requested)
            return -1;
        if (i >= window && min_recv(s, first, n) < i - window + 1 &&
            wait_recv(s, first, n, i - window / 2))
            return -1;
        notify(i, arg);
    }
    return wait_recv(s, first, n, k);
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double pct(const int64_t *v, size_t n, double p) {
    if (n == 0)
        return -1;
    double r = p * (double)(n - 1);
    size_t i = (size_t)r;
    if (i + 1 >= n)
        return (double)v[n - 1];
    return (double)v[i] + (r - (double)i) * (double)(v[i + 1] - v[i]);
}

void percentiles(int64_t *v, size_t n, double *p50, double *p90, double *p99) {
    qsort(v, n, sizeof *v, cmp64);
    *p50 = pct(v, n, 0.50);
    *p90 = pct(v, n, 0.90);
    *p99 = pct(v, n, 0.99);
}

double refloop_ms(void) {
    int64_t t = now_ns();
    volatile uint64_t sink;
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < 50u * 1000 * 1000; i++) { /* xorshift: ~3 ops per step */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    sink = x;
    (void)sink;
    return (double)(now_ns() - t) / 1e6;
}
