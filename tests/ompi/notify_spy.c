/*
 * Preloaded (LD_PRELOAD) into Open MPI's daemons, and so into their ranks,
 * by tools/ompi-test's two-node checks: logs two calls into the PMIx
 * library, then makes them.
 *   PMIx_Notify_event: what a process notifies, the orted relaying a
 *     client's event to its server included. The ranks' handlers never
 *     see the range an event came with: this is where the range the
 *     runtime hands the other node's server is seen.
 *   PMIx_server_dmodex_request: an orted asking its server for a local
 *     rank's data on behalf of another node (the other end of that node's
 *     direct_modex upcall).
 * One line per call, appended to the file named by FASTPMIX_NOTIFY_SPY:
 *   notify host=<hostname> comm=<process> code=<n> range=<name>
 *          source=<nspace>:<rank> info=<keys>
 *   dmodex host=<hostname> comm=<process> proc=<nspace>:<rank>
 * Built with `cc -shared -fPIC` against fastpmix's headers (the
 * signatures and range values are the Standard's); it calls nothing else
 * of the library.
 */
#define _GNU_SOURCE
#include <pmix_server.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef pmix_status_t (*notify_fn)(pmix_status_t, const pmix_proc_t *, pmix_data_range_t,
                                   const pmix_info_t[], size_t, pmix_op_cbfunc_t, void *);
typedef pmix_status_t (*dmodex_fn)(const pmix_proc_t *, pmix_dmodex_response_fn_t, void *);

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

/* The real function: next in the global scope, else in the loaded library
 * itself (Open MPI loads it as a dependency of a component it may open
 * with local scope). */
static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    const char *libs[] = {"libpmix.so.2", "libfastpmix.so.0"};
    for (size_t i = 0; NULL == f && i < 2; i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
        if (NULL != h) {
            f = dlsym(h, name);
        }
    }
    return f;
}

__attribute__((format(printf, 2, 3))) static void log_line(const char *kind, const char *fmt, ...)
{
    const char *path = getenv("FASTPMIX_NOTIFY_SPY");
    if (NULL == path) {
        return;
    }
    char host[256] = "", comm[64] = "", rest[768] = "";
    gethostname(host, sizeof host - 1);
    FILE *f = fopen("/proc/self/comm", "r");
    if (NULL != f) {
        if (NULL != fgets(comm, sizeof comm, f)) {
            comm[strcspn(comm, "\n")] = 0;
        }
        fclose(f);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rest, sizeof rest, fmt, ap);
    va_end(ap);
    f = fopen(path, "a");
    if (NULL == f) {
        return;
    }
    fprintf(f, "%s host=%s comm=%s %s\n", kind, host, comm, rest);
    fclose(f);
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    char keys[512] = "";
    size_t n = 0;
    for (size_t i = 0; i < ninfo && n < sizeof keys; i++) {
        int k = snprintf(keys + n, sizeof keys - n, "%s%s", i ? "," : "", info[i].key);
        n += k > 0 ? (size_t) k : 0;
    }
    log_line("notify", "code=%d range=%s source=%s:%d info=%s", (int) status, range_name(range),
             NULL == source ? "(null)" : source->nspace, NULL == source ? -1 : (int) source->rank,
             keys);
    notify_fn next = (notify_fn) real("PMIx_Notify_event");
    if (NULL == next) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    return next(status, source, range, info, ninfo, cbfunc, cbdata);
}

pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc,
                                         void *cbdata)
{
    log_line("dmodex", "proc=%s:%d", NULL == proc ? "(null)" : proc->nspace,
             NULL == proc ? -1 : (int) proc->rank);
    dmodex_fn next = (dmodex_fn) real("PMIx_server_dmodex_request");
    if (NULL == next) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    return next(proc, cbfunc, cbdata);
}
