/*
 * Helpers shared by the C client test programs (tests/c/client_*.c).
 * Header-only; include it first, after defining _GNU_SOURCE.
 *
 * Everything here is plain C11 + POSIX and the PMIx Standard's names, so the
 * programs also compile against OpenPMIx's pmix.h. Attribute names that the
 * current Standard defines but OpenPMIx 4.2's header lacks get their
 * Standard key strings below.
 */
#ifndef CLIENT_COMMON_H
#define CLIENT_COMMON_H

#include <pmix.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- names of the current Standard missing from OpenPMIx 4.2 ---- */
#ifndef PMIX_MONITOR_FILE_CHANGES
#define PMIX_MONITOR_FILE_CHANGES "pmix.monitor.fchg"
#endif
#ifndef PMIX_MONITOR_PROC_RESOURCE_USAGE
#define PMIX_MONITOR_PROC_RESOURCE_USAGE "pmix.monitor.presuse"
#endif
#ifndef PMIX_MONITOR_TARGET_PROCS
#define PMIX_MONITOR_TARGET_PROCS "pmix.monitor.tgtproc"
#endif
#ifndef PMIX_PROC_RESOURCE_USAGE
#define PMIX_PROC_RESOURCE_USAGE "pmix.proc.res"
#endif
#ifndef PMIX_PROC_NUM_THREADS
#define PMIX_PROC_NUM_THREADS "pmix.proc.nthr"
#endif
#ifndef PMIX_PROC_SAMPLE_TIME
#define PMIX_PROC_SAMPLE_TIME "pmix.proc.samptime"
#endif
#ifndef PMIX_MONITOR_APP_CONTROL
#define PMIX_MONITOR_APP_CONTROL "pmix.monitor.appctrl"
#endif

/* How long any wait in these programs may take before it counts as a hang. */
#define HANG_SECS 30

/* ---- output: one whole line at a time, flushed (stdout is a pipe) ---- */
static pthread_mutex_t cc_out_lock = PTHREAD_MUTEX_INITIALIZER;

static inline void setup_output(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
}

__attribute__((format(printf, 1, 2))) static inline void out(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&cc_out_lock);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&cc_out_lock);
}

/* A failed expectation: say so and end the process with status 1. */
#define FAIL(...)                                                                          \
    do {                                                                                   \
        out("FAIL %s:%d", __FILE__, __LINE__);                                             \
        out(__VA_ARGS__);                                                                  \
        exit(1);                                                                           \
    } while (0)

#define EXPECT(cond, ...)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            FAIL(__VA_ARGS__);                                                             \
        }                                                                                  \
    } while (0)

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Waits until *v >= want (1) or HANG_SECS pass (0). */
static inline int wait_at_least(atomic_int *v, int want)
{
    double end = now_s() + HANG_SECS;
    while (atomic_load(v) < want) {
        if (now_s() > end) {
            return 0;
        }
        sleep_ms(2);
    }
    return 1;
}

/* ---- "the callback runs after the call returned" ----
 * Arm before a non-blocking call, open right after it returned. From the
 * callback, after_return() is 0 if the callback runs on the caller's thread
 * (then it necessarily runs inside the call) or if the call does not return
 * while the callback waits for it (the call waited for its callback); 1
 * otherwise. No timing assumption: a callback that legitimately starts
 * before the caller resumed simply waits for it. */
typedef struct {
    atomic_int returned;
    pthread_t caller;
} ret_gate_t;

static inline void gate_arm(ret_gate_t *g)
{
    atomic_store(&g->returned, 0);
    g->caller = pthread_self();
}

static inline void gate_open(ret_gate_t *g)
{
    atomic_store(&g->returned, 1);
}

static inline int after_return(ret_gate_t *g)
{
    if (pthread_equal(pthread_self(), g->caller)) {
        return 0;
    }
    double end = now_s() + HANG_SECS;
    while (!atomic_load(&g->returned)) {
        if (now_s() > end) {
            return 0;
        }
        sleep_ms(1);
    }
    return 1;
}

/* ---- a barrier between the ranks of a job, through files in `dir` ---- */
static inline void touch(const char *dir, const char *tag, unsigned rank)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.%u", dir, tag, rank);
    FILE *f = fopen(p, "w");
    EXPECT(f != NULL, "cannot create %s: %s", p, strerror(errno));
    fclose(f);
}

static inline int exists(const char *path)
{
    struct stat st;
    return 0 == stat(path, &st);
}

static inline int count_files(const char *dir, const char *tag, unsigned n)
{
    int c = 0;
    char p[4096];
    for (unsigned r = 0; r < n; r++) {
        snprintf(p, sizeof p, "%s/%s.%u", dir, tag, r);
        c += exists(p);
    }
    return c;
}

/* Marks `rank` as having reached `tag` and waits for all `n` ranks. */
static inline void file_barrier(const char *dir, const char *tag, unsigned rank, unsigned n)
{
    touch(dir, tag, rank);
    double end = now_s() + HANG_SECS;
    while (count_files(dir, tag, n) < (int) n) {
        EXPECT(now_s() < end, "barrier %s: timed out", tag);
        sleep_ms(5);
    }
}

/* ---- procs and infos ---- */
static inline const char *proc_str(const pmix_proc_t *p, char *buf, size_t n)
{
    if (NULL == p) {
        snprintf(buf, n, "-");
    } else if (PMIX_RANK_WILDCARD == p->rank) {
        snprintf(buf, n, "%.255s:*", p->nspace);
    } else {
        snprintf(buf, n, "%.255s:%u", p->nspace, p->rank);
    }
    return buf;
}

static inline const pmix_info_t *find_info(const pmix_info_t *info, size_t n, const char *key)
{
    for (size_t i = 0; NULL != info && i < n; i++) {
        if (PMIX_CHECK_KEY(&info[i], key)) {
            return &info[i];
        }
    }
    return NULL;
}

/* The string value of `key`, or NULL. */
static inline const char *info_string(const pmix_info_t *info, size_t n, const char *key)
{
    const pmix_info_t *i = find_info(info, n, key);
    return (NULL != i && PMIX_STRING == i->value.type) ? i->value.data.string : NULL;
}

/* The proc value of `key`, or NULL. */
static inline const pmix_proc_t *info_proc(const pmix_info_t *info, size_t n, const char *key)
{
    const pmix_info_t *i = find_info(info, n, key);
    return (NULL != i && PMIX_PROC == i->value.type) ? i->value.data.proc : NULL;
}

/* Any integer value as long long (1: found). */
static inline int value_int(const pmix_value_t *v, long long *out_)
{
    switch (v->type) {
    case PMIX_INT: *out_ = v->data.integer; return 1;
    case PMIX_INT8: *out_ = v->data.int8; return 1;
    case PMIX_INT16: *out_ = v->data.int16; return 1;
    case PMIX_INT32: *out_ = v->data.int32; return 1;
    case PMIX_INT64: *out_ = v->data.int64; return 1;
    case PMIX_UINT: *out_ = v->data.uint; return 1;
    case PMIX_UINT8: *out_ = v->data.uint8; return 1;
    case PMIX_UINT16: *out_ = v->data.uint16; return 1;
    case PMIX_UINT32: *out_ = v->data.uint32; return 1;
    case PMIX_UINT64: *out_ = (long long) v->data.uint64; return 1;
    case PMIX_SIZE: *out_ = (long long) v->data.size; return 1;
    case PMIX_PID: *out_ = v->data.pid; return 1;
    case PMIX_PROC_RANK: *out_ = v->data.rank; return 1;
    case PMIX_STATUS: *out_ = v->data.status; return 1;
    case PMIX_TIME: *out_ = (long long) v->data.time; return 1;
    default: return 0;
    }
}

/* The process state letter from /proc/PID/stat ('?' if unreadable). */
static inline char proc_state(pid_t pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int) pid);
    FILE *f = fopen(p, "r");
    if (NULL == f) {
        return '?';
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *paren = strrchr(buf, ')');
    return (NULL != paren && paren[1] == ' ') ? paren[2] : '?';
}

/* Polls pid's state until it is (want_eq) or is not (!want_eq) `c`. */
static inline char wait_state(pid_t pid, char c, int want_eq)
{
    double end = now_s() + HANG_SECS;
    char s;
    for (;;) {
        s = proc_state(pid);
        if ((s == c) == (want_eq != 0) || now_s() > end) {
            return s;
        }
        sleep_ms(5);
    }
}

/* Reads an integer written by another rank to dir/tag.rank (waits for it). */
static inline long read_number(const char *dir, const char *tag, unsigned rank)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.%u", dir, tag, rank);
    double end = now_s() + HANG_SECS;
    for (;;) {
        FILE *f = fopen(p, "r");
        if (NULL != f) {
            long v = -1;
            int ok = fscanf(f, "%ld", &v);
            fclose(f);
            if (1 == ok) {
                return v;
            }
        }
        EXPECT(now_s() < end, "no number in %s", p);
        sleep_ms(5);
    }
}

static inline void write_number(const char *dir, const char *tag, unsigned rank, long v)
{
    char p[4096], tmp[4200];
    snprintf(p, sizeof p, "%s/%s.%u", dir, tag, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    EXPECT(f != NULL, "cannot create %s", tmp);
    fprintf(f, "%ld\n", v);
    fclose(f);
    EXPECT(0 == rename(tmp, p), "rename %s", tmp);
}

/* PMIx_Init or fail. */
static inline void init_or_fail(pmix_proc_t *me)
{
    pmix_status_t rc = PMIx_Init(me, NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Init: %s", PMIx_Error_string(rc));
}

#endif /* CLIENT_COMMON_H */
