/* pmix-compare: the scale scenario (scale.c), rows startup-N, reg-N,
 * mem-N, relay-N, relaycpu-N and fanout-N for N = 64 128 256 local
 * clients. */
#ifndef PMIX_COMPARE_SCALE_H
#define PMIX_COMPARE_SCALE_H

#include "data.h" /* common.h, pmix.h, LIB */

/* The parent's scenario: one job of `n` ranks, measured in five phases. */
void sc_scale(uint32_t n);

/* The children's part (child.c calls them): whether `role` is scale.c's;
 * before PMIx_Init (say "forked", wait for the start word, take
 * t_start); after it (t_end); a command's run (OP_RUN with `arg`). */
int scale_role(const char *role);
void scale_before_init(struct shared *s, uint32_t idx);
void scale_after_init(struct shared *s, uint32_t idx);
void scale_run(struct shared *s, uint32_t idx, const pmix_proc_t *me, uint32_t arg);

/* child.c: registers the receivers' handler (samples, acks) for `code`,
 * blocking; fails the child on an error. */
int child_register(pmix_status_t code);

#endif
