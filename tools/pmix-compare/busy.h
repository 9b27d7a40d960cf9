/*
 * pmix-compare: the busy node (busy.c). Ranks bound one per CPU compute
 * without sleeping while events arrive (rows busy-*), and the CPU time the
 * runtime's threads take from them (rows steal-*). No PMIx type here:
 * common.h includes this header for the shared memory's part below.
 */
#ifndef PMIX_COMPARE_BUSY_H
#define PMIX_COMPARE_BUSY_H

#include <stdatomic.h>
#include <stdint.h>

struct shared;
struct pmix_proc; /* pmix_proc_t, in both libraries' headers */

/* What a rank's compute loop ran for: before PMIx_Init (no PMIx at all),
 * with no events, at 1,000 events/s from the host, during a busy-* row. */
enum busy_phase { PH_REF, PH_IDLE, PH_1K, PH_BUSY, PH_N };

#define BUSY_MAXR 64

/* One rank's compute loop over one phase. */
struct busy_rank {
    int64_t iters;    /* compute steps of the main thread */
    int64_t wall_ns;  /* the phase's wall time, as the rank saw it */
    int64_t main_ns;  /* the main thread's CPU time */
    int64_t other_ns; /* every other thread's CPU time (the libraries') */
    int32_t threads;  /* threads other than the main one */
    int32_t cpu;      /* the CPU the rank is bound to */
};

struct busy_shm {
    _Atomic uint32_t stop;   /* parent -> computing ranks: end the phase */
    _Atomic uint32_t ref_in; /* steal: ranks at the reference phase's start line */
    uint32_t window_ms;      /* steal: each phase's wall time */
    uint32_t nrecv;          /* busy-c2c-*: the sending rank's receivers */
    struct busy_rank r[BUSY_MAXR][PH_N];
};

/* The parent: whether `s` is one of ours (busy-s2c, busy-c2c-local,
 * busy-c2c-ns, busy-fanout, steal), and its run over opt.n ranks. */
int busy_scenario(const char *s);
void busy_main(const char *s);

/* The children: whether `role` is one of ours (busy, bcomp, bsend,
 * steal); whether it registers the event handler; its setup before
 * PMIx_Init (the binding, and steal's reference phase); its OP_RUN. */
int busy_role(const char *role);
int busy_receiver(const char *role);
void busy_setup(struct shared *s, const char *role, uint32_t idx);
void busy_run(struct shared *s, const char *role, uint32_t idx, const struct pmix_proc *me,
              uint32_t phase);

#endif
