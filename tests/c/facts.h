/* The C daemons' facts, one per line, for the Rust tests that read their
 * output: "<fact_prefix>ok FACT", or "<fact_prefix>FAIL FACT (details)",
 * from any thread; fact_ok and fact_failed count them. Include after
 * pmix.h (err names a status with PMIx_Error_string). */
#ifndef FASTPMIX_TEST_FACTS_H
#define FASTPMIX_TEST_FACTS_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t facts_lock = PTHREAD_MUTEX_INITIALIZER;
static char fact_prefix[32];
static int fact_ok, fact_failed;

__attribute__((format(printf, 3, 4))) static void check(bool cond, const char *fact,
                                                        const char *fmt, ...)
{
    char why[1024] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&facts_lock);
    if (cond) {
        fact_ok++;
        printf("%sok %s\n", fact_prefix, fact);
    } else {
        fact_failed++;
        printf("%sFAIL %s (%s)\n", fact_prefix, fact, why);
    }
    fflush(stdout);
    pthread_mutex_unlock(&facts_lock);
}

static inline const char *err(pmix_status_t rc)
{
    return PMIx_Error_string(rc);
}

/* An absolute CLOCK_REALTIME time `secs` from now (pthread_cond_timedwait). */
static inline struct timespec deadline(int secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += secs;
    return ts;
}

#endif
