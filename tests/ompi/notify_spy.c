/*
 * Preloaded (LD_PRELOAD) into Open MPI's daemons by tools/ompi-test's
 * two-node events check: logs every PMIx_Notify_event call a process
 * makes — the orted relaying a client's event to its server included —
 * then makes it. The handlers of the ranks never see the range an event
 * came with, so this is where the range the runtime hands the other
 * node's server is seen. One line per call, appended to the file named by
 * FASTPMIX_NOTIFY_SPY:
 *   notify host=<hostname> comm=<process name> code=<n> range=<name>
 *          source=<nspace>:<rank> info=<keys>
 * Built with `cc -shared -fPIC` against fastpmix's pmix.h (the signature
 * and the range values are the Standard's); it calls nothing else of the
 * library.
 */
#define _GNU_SOURCE
#include <pmix.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef pmix_status_t (*notify_fn)(pmix_status_t, const pmix_proc_t *, pmix_data_range_t,
                                   const pmix_info_t[], size_t, pmix_op_cbfunc_t, void *);

/* The range's name without calling into the PMIx library (the daemon may
 * have loaded it where this library's lookups do not reach). */
static const char *range_name(pmix_data_range_t r)
{
    static const char *names[] = {"UNDEF", "RM", "LOCAL", "NAMESPACE", "SESSION",
                                  "GLOBAL", "CUSTOM", "PROC_LOCAL"};
    if (r < sizeof names / sizeof names[0]) {
        return names[r];
    }
    return PMIX_RANGE_INVALID == r ? "INVALID" : "?";
}

/* The real PMIx_Notify_event: next in the global scope, else in the
 * loaded library itself (Open MPI loads it as a dependency of a component
 * it may open with local scope). */
static notify_fn real_notify(void)
{
    notify_fn f = (notify_fn) dlsym(RTLD_NEXT, "PMIx_Notify_event");
    const char *names[] = {"libpmix.so.2", "libfastpmix.so.0"};
    for (size_t i = 0; NULL == f && i < 2; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (NULL != h) {
            f = (notify_fn) dlsym(h, "PMIx_Notify_event");
        }
    }
    return f;
}

static void log_call(pmix_status_t status, const pmix_proc_t *source, pmix_data_range_t range,
                     const pmix_info_t info[], size_t ninfo)
{
    const char *path = getenv("FASTPMIX_NOTIFY_SPY");
    if (NULL == path) {
        return;
    }
    char host[256] = "", comm[64] = "";
    gethostname(host, sizeof host - 1);
    FILE *f = fopen("/proc/self/comm", "r");
    if (NULL != f) {
        if (NULL != fgets(comm, sizeof comm, f)) {
            comm[strcspn(comm, "\n")] = 0;
        }
        fclose(f);
    }
    char keys[512] = "";
    size_t n = 0;
    for (size_t i = 0; i < ninfo && n < sizeof keys; i++) {
        int k = snprintf(keys + n, sizeof keys - n, "%s%s", i ? "," : "", info[i].key);
        n += k > 0 ? (size_t) k : 0;
    }
    f = fopen(path, "a");
    if (NULL == f) {
        return;
    }
    fprintf(f, "notify host=%s comm=%s code=%d range=%s source=%s:%d info=%s\n", host, comm,
            (int) status, range_name(range), NULL == source ? "(null)" : source->nspace,
            NULL == source ? -1 : (int) source->rank, keys);
    fclose(f);
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    log_call(status, source, range, info, ninfo);
    notify_fn next = real_notify();
    if (NULL == next) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    return next(status, source, range, info, ninfo, cbfunc, cbdata);
}
