/* pmix-compare: the parent's state and process management (parent.c). */
#ifndef PMIX_COMPARE_PARENT_H
#define PMIX_COMPARE_PARENT_H

#include "common.h"
#include "data.h" /* pmix.h and LIB */

struct opts {
    const char *scenario;
    uint32_t n, iters, window, batch;
    const char *csv, *strace;
};
extern struct opts opt;
extern struct shared *S;
extern pid_t kids[MAXCH];
extern const char *lib; /* the RESULT lines' lib column */
/* PMIX_LOCAL_CPUSETS of the next start_pmix's namespace, when set (busy.c) */
extern const char *job_local_cpusets;

/* Child liveness checks, cleanup at exit, SIGTERM/SIGINT handling. */
void parent_init(void);
/* The memfd every child maps: `nslots` receivers x `niter` samples. */
void shared_create(uint32_t nslots, uint32_t niter);
/* fork + exec of this binary as `--child role` with `env`. */
void spawn(const char *role, char **env);
void wait_ready(uint32_t n);
/* die() unless rc is PMIX_SUCCESS or PMIX_OPERATION_SUCCEEDED. */
void check(const char *what, int rc);
/* PMIx server, one namespace, `n` PMIx children with these roles; returns
 * when every child registered its handler. */
void start_pmix(uint32_t n, const char *const roles[]);
/* Run a command in the children's main threads; wait for `n` of them. */
void command(uint32_t op, uint32_t arg, uint32_t n);
/* Children finalize and exit; the server finalizes; cleanup. */
void stop_all(void);
/* A latency row from the samples of receivers first..first+nrecv-1 (per
 * event the latest; warm-up left out), with its raw samples in --csv
 * (bench.c). */
void report_last(const char *row, uint32_t nrecv, uint32_t first);
/* The server's PMIX_SERVER_TMPDIR ("" before start_pmix). */
const char *server_tmpdir(void);
/* Run last at exit after a failure, once the children are killed, the
 * server finalized and its tmpdir removed: a scenario's own cleanup
 * (scale.c reaps every child and removes the server's /dev/shm objects). */
extern void (*exit_hook)(void);

#endif
