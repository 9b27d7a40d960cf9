/* pmix-compare: data exchange (data.c), and the name of the library this
 * binary is built against (LIB), which both sides of it need. */
#ifndef PMIX_COMPARE_DATA_H
#define PMIX_COMPARE_DATA_H

#include "common.h"

#include <pmix.h>

#if defined(BENCH_LIB) /* -DBENCH_LIB='"baseline"': an older fastpmix build */
#define LIB BENCH_LIB
#elif defined(FASTPMIX) /* defined by fastpmix's pmix_common.h */
#define LIB "fastpmix"
#else
#define LIB "openpmix"
#endif

/* The parent's scenarios (rows get, fence-N, fence-collect-N, wireup-N). */
void sc_get(void);
void sc_fence(uint32_t n, int collect);
void sc_wireup(uint32_t n);

/* The children's part: whether `role` is one of data.c's, and its run
 * (command OP_RUN with `arg`). */
int data_role(const char *role);
void data_run(struct shared *s, const char *role, uint32_t idx, const pmix_proc_t *me,
              uint32_t arg);

/* A child's failure (child.c): says why in the shared memory, exits. */
void child_fail(const char *what, pmix_status_t rc);

#endif
