/*
 * pmix-compare: one benchmark source built twice, against OpenPMIx
 * (pkg-config pmix) and against fastpmix (include/, libfastpmix.so).
 *
 * The parent process is its own PMIx server; it forks and execs itself
 * in a child role. Everything the benchmark measures flows through PMIx;
 * everything it needs to coordinate (start, acks, results) flows through
 * one MAP_SHARED memfd set up before the first fork, so no result and no
 * acknowledgement ever passes through PMIx (OpenPMIx 4.2.2 never sets
 * TCP_NODELAY: a reply on the same socket could cost ~44 ms).
 */
#ifndef PMIX_COMPARE_COMMON_H
#define PMIX_COMPARE_COMMON_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

#include "busy.h"

#define MAXCH 256 /* scale-N: N up to 256 (the per-child arrays below: 32 B each) */

/* Event codes: user-defined, below PMIx's external error base (-3000). */
#define BENCH_CODE (-3000 - 417)
#define BENCH_CODE_NEW_BASE (-3000 - 5000) /* registration: one fresh code per try */
#define REG_MANY 10000 /* regdereg-active-10k: handlers registered beside */
#define KEY_T0 "bench.t0"
#define KEY_SEQ "bench.seq"

enum cmd_op { OP_NONE, OP_SNAP, OP_RUN, OP_EXIT };

/* Which way a receiver acknowledges: futex (latency scenarios) or a
 * plain store the waiter spins on (strace runs: no harness syscalls). */
enum ack_mode { ACK_FUTEX, ACK_SPIN };

struct shared {
    /* setup */
    _Atomic uint32_t ready;   /* children set up (handlers registered) */
    _Atomic uint32_t failed;  /* a child hit an error (it prints why) */
    /* per-event acknowledgement (receivers -> waiter) */
    _Atomic uint32_t ack;
    _Atomic uint32_t ack_sleep; /* the waiter sleeps on `ack` */
    _Atomic uint32_t ack_target; /* ... until it reaches this: only that ack wakes it */
    /* commands (parent -> children's main threads) */
    _Atomic uint32_t cmd;      /* sequence; children futex-wait on it */
    _Atomic uint32_t cmd_op;
    _Atomic uint32_t cmd_arg;
    _Atomic uint32_t cmd_done; /* children that finished the command */
    /* floor: the trigger word and its t0 */
    _Atomic uint32_t go;
    _Atomic int64_t t0;
    /* the CPU the notifier ran on when it took t0 (latency scenarios) */
    _Atomic int32_t from_cpu;
    /* throughput: per-receiver counts and the sender's doorbell */
    _Atomic uint64_t recv[MAXCH];
    _Atomic uint32_t prog;       /* bumped by receivers when the sender sleeps */
    _Atomic uint32_t prog_sleep; /* the sender sleeps until every count reaches prog_at */
    _Atomic uint64_t prog_at;
    _Atomic int64_t last_ns;     /* time the last event was handled */
    _Atomic int64_t first_ns;    /* tput-relay: time of the sender's first notify */
    _Atomic uint32_t lost;       /* tput-relay: the sender saw no progress for 10 s */
    /* parameters, set by the parent before forking */
    uint32_t niter;    /* events per run (per receiver sample slots) */
    uint32_t nslots;   /* sample slots (receivers) */
    uint32_t nchild;
    uint32_t ack_mode;
    uint32_t range;    /* range of the notifications */
    uint32_t tput;     /* receivers count instead of sampling */
    uint32_t batch;    /* registrations live at once (reg) */
    uint32_t window;   /* tput-relay: the sending client's --window */
    /* results written by children */
    int64_t cpu_ns[MAXCH][2]; /* CPU time at the two snapshots */
    uint64_t bad[MAXCH];      /* events with missing t0 / out-of-range seq */
    /* data exchange (data.c): fences with PMIX_COLLECT_DATA */
    uint32_t collect;
    /* the first child failure, for the parent's message, so that a report
     * says why a row is n/a ("PMIx_Put not supported by fastpmix"):
     * claimed by why_set, readable once why_done */
    _Atomic uint32_t why_set, why_done;
    char why[160];
    /* the busy node (busy.c): stop word, phases, per-rank compute */
    struct busy_shm busy;
    /* samples: nslots * niter int64 nanoseconds follow, then as many
     * bytes saying where each sample's handler ran (enum where) */
    int64_t lat[];
};

static inline int64_t *slot(struct shared *s, uint32_t receiver) {
    return s->lat + (size_t)receiver * s->niter;
}

/* Where a handler ran, against the CPU its notifier was on at t0. A
 * thread woken on the CPU its waker runs on starts when the waker sleeps
 * or is preempted; one woken on another CPU may first wait for that CPU
 * to leave a halt, which on a virtual machine can take ~20 us. */
enum where { WHERE_UNKNOWN, WHERE_SAME_CPU, WHERE_OTHER_CPU };

static inline uint8_t *where_slot(struct shared *s, uint32_t receiver) {
    return (uint8_t *)(s->lat + (size_t)s->nslots * s->niter) + (size_t)receiver * s->niter;
}

/* The notifier's side: call right before taking t0. */
void mark_from_cpu(struct shared *s);
/* The handler's side: where sample `seq` of `receiver` ran. */
void mark_where(struct shared *s, uint32_t receiver, uint32_t seq);

size_t shared_size(uint32_t nslots, uint32_t niter);

int64_t now_ns(void);
int64_t cpu_ns(void);
int64_t thread_cpu_ns(void); /* the calling thread's CPU time */
long futex_wait(_Atomic uint32_t *w, uint32_t val, int64_t timeout_ns);
long futex_wake(_Atomic uint32_t *w, int n);

/* Called by the waits below when they wake up without progress (at most
 * every 100 ms): the parent checks that its children are alive and sets
 * `failed` when one died. NULL in children. */
extern void (*liveness_check)(struct shared *s);
/* Set by the parent's SIGTERM/SIGINT handler: every wait fails. */
extern volatile sig_atomic_t stop_requested;

/* The receiver's side of an acknowledgement. */
void ack_one(struct shared *s);
/* Wait until `ack` reaches `target`; returns -1 after `deadline_ns` or
 * when a child failed. */
int wait_ack(struct shared *s, uint32_t target, int64_t deadline_ns);
/* Wait until `*w` reaches `target` (futex on `w`), -1 on deadline/failure. */
int wait_count(struct shared *s, _Atomic uint32_t *w, uint32_t target, int64_t deadline_ns);

/* Throughput (tput-N, tput-relay-N): the sender's side. `k` events, each
 * sent by notify(i, arg), never more than `window` ahead of the slowest of
 * the receivers first..first+n-1 (their counts in `recv`); returns when
 * every receiver has all `k`: 0, or -1 when they made no progress for 10 s
 * (events lost), a child failed or a signal stopped the run. */
int send_windowed(struct shared *s, uint32_t first, uint32_t n, uint32_t k, uint32_t window,
                  void (*notify)(uint32_t i, void *arg), void *arg);
uint64_t min_recv(struct shared *s, uint32_t first, uint32_t n);

/* Percentiles of v[0..n) (sorts in place). */
void percentiles(int64_t *v, size_t n, double *p50, double *p90, double *p99);

/* A fixed integer loop; returns its duration in ms (CPU speed reference). */
double refloop_ms(void);

/* A blocking wait for a PMIx operation callback (pmix_op_cbfunc_t). */
struct waiter {
    _Atomic uint32_t done;
    int status;
};
void op_cb(int status, void *cbdata);
int wait_op(struct waiter *w); /* PMIX_ERR_TIMEOUT after 30 s */

/* strace (sys.c): attach `strace -c -f` to every thread of `target`,
 * writing its summary to `out`; stop it; whether every thread is traced; the
 * total call count of a summary file (-1 if none). */
pid_t strace_attach(pid_t target, const char *out);
void strace_stop(pid_t strace_pid);
int all_traced(pid_t pid);
long strace_total(const char *path);
/* perf (sys.c): count the syscalls of the threads `target` has now with
 * perf's raw_syscalls tracepoint (no ptrace; root); stop with
 * strace_stop; the count, or -1. */
pid_t perf_attach(pid_t target, const char *out);
long perf_total(const char *path);

/* Child entry point (child.c). */
int child_main(int argc, char **argv);

extern int verbose;
#define die(...) do { fprintf(stderr, "bench: " __VA_ARGS__); fputc('\n', stderr); exit(2); } while (0)
#define note(...) do { if (verbose) { fprintf(stderr, "bench: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

#endif
