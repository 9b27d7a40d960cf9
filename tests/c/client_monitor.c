/*
 * PMIx_Process_monitor from C, one rank: `fastpmix run -n 1 client_monitor MODE DIR`.
 *
 * heartbeat  PMIX_MONITOR_HEARTBEAT (1 s, 1 drop, application control),
 *            beats with PMIx_Heartbeat() for 2 s, then stops.
 *            Prints: monitor rc= | send_heartbeat_nb rc= | beating alerts= |
 *                    alert <name> affected_me=<0|1> src_me=<0|1> srcns_ok=<0|1>
 * file       PMIX_MONITOR_FILE_CHANGES on DIR/watched (size and modification,
 *            1 s checks, 2 drops), _nb; the file grows for 2.5 s, then stops.
 *            Prints: file_monitor_nb rc= cb_status= after_return= | changing alerts= |
 *                    alert <name> affected_me= file_ok=
 * usage      PMIX_MONITOR_PROC_RESOURCE_USAGE of this process, blocking and _nb.
 *            Prints: usage rc= reports= procid_ok= pid_ok= nthreads_ok= |
 *                    usage_nb rc= cb_status= after_return= pid_ok= |
 *                    usage_all darray|pointer rc= pid_ok= nthreads_ok=
 *                    (every field: the monitor's value is a NULL data array,
 *                    or a NULL PMIX_POINTER)
 * Every mode ends with "done".
 */
#define _GNU_SOURCE
#include "client_common.h"

static pmix_proc_t me;
static const char *dir;
static char watched[4096];

static atomic_int alerts;

static void alert_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                          size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    (void) id;
    (void) results;
    (void) nresults;
    const pmix_proc_t *aff = info_proc(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    int aff_me = NULL != aff && PMIX_CHECK_NSPACE(aff->nspace, me.nspace) && aff->rank == me.rank;
    if (PMIX_MONITOR_FILE_ALERT == status) {
        const char *f = info_string(info, ninfo, PMIX_MONITOR_FILE);
        out("alert %s affected_me=%d file_ok=%d", PMIx_Error_string(status), aff_me,
            NULL != f && 0 == strcmp(f, watched));
    } else {
        out("alert %s affected_me=%d src_me=%d srcns_ok=%d", PMIx_Error_string(status), aff_me,
            NULL != source && PMIX_CHECK_NSPACE(source->nspace, me.nspace)
                && source->rank == me.rank,
            NULL != source && '\0' != source->nspace[0]);
    }
    atomic_fetch_add(&alerts, 1);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void watch(pmix_status_t code)
{
    int rc = PMIx_Register_event_handler(&code, 1, NULL, 0, alert_handler, NULL, NULL);
    EXPECT(rc >= 1, "register %d: %d", code, rc);
}

typedef struct {
    ret_gate_t gate;
    atomic_int done;
    int status;
    int after_return;
    int pid_ok;
} infocb_t;

/* Does a PMIX_PROC_RESOURCE_USAGE report name this process and its pid? */
static void check_report(const pmix_info_t *results, size_t n, int *procid_ok, int *pid_ok,
                         int *nthreads_ok)
{
    *procid_ok = *pid_ok = *nthreads_ok = 0;
    const pmix_info_t *r = find_info(results, n, PMIX_PROC_RESOURCE_USAGE);
    if (NULL == r || PMIX_DATA_ARRAY != r->value.type || NULL == r->value.data.darray
        || PMIX_INFO != r->value.data.darray->type) {
        return;
    }
    const pmix_info_t *u = r->value.data.darray->array;
    size_t un = r->value.data.darray->size;
    const pmix_proc_t *p = info_proc(u, un, PMIX_PROCID);
    *procid_ok = NULL != p && PMIX_CHECK_NSPACE(p->nspace, me.nspace) && p->rank == me.rank;
    const pmix_info_t *pid = find_info(u, un, PMIX_PROC_PID);
    long long v;
    *pid_ok = NULL != pid && value_int(&pid->value, &v) && v == (long long) getpid();
    const pmix_info_t *nt = find_info(u, un, PMIX_PROC_NUM_THREADS);
    *nthreads_ok = NULL != nt && value_int(&nt->value, &v) && v >= 1;
}

static void usage_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    infocb_t *w = cbdata;
    int a, b;
    w->after_return = after_return(&w->gate);
    w->status = status;
    check_report(info, ninfo, &a, &w->pid_ok, &b);
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
    atomic_store(&w->done, 1);
}

static void plain_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void) info;
    (void) ninfo;
    infocb_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = status;
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
    atomic_store(&w->done, 1);
}

static void mode_heartbeat(void)
{
    watch(PMIX_MONITOR_HEARTBEAT_ALERT);
    pmix_info_t mon;
    PMIX_INFO_CONSTRUCT(&mon);
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    pmix_info_t *d;
    uint32_t one = 1;
    PMIX_INFO_CREATE(d, 3);
    PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_HEARTBEAT_DROPS, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&d[2], PMIX_MONITOR_APP_CONTROL, NULL, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t n = 0;
    int rc = PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, d, 3, &results, &n);
    PMIX_INFO_FREE(d, 3);
    PMIX_INFO_DESTRUCT(&mon);
    PMIX_INFO_FREE(results, n);
    out("monitor rc=%d", rc);

    /* A beat as a monitor request, the way the 4.2 headers' macro sends it. */
    pmix_info_t beat;
    PMIX_INFO_CONSTRUCT(&beat);
    PMIX_INFO_LOAD(&beat, PMIX_SEND_HEARTBEAT, NULL, PMIX_POINTER);
    rc = PMIx_Process_monitor_nb(&beat, PMIX_SUCCESS, NULL, 0, NULL, NULL);
    PMIX_INFO_DESTRUCT(&beat);
    out("send_heartbeat_nb rc=%d", rc);
    for (int i = 0; i < 20; i++) {
        PMIx_Heartbeat();
        sleep_ms(100);
    }
    out("beating alerts=%d", atomic_load(&alerts));
    EXPECT(wait_at_least(&alerts, 1), "no heartbeat alert");
}

static void mode_file(void)
{
    snprintf(watched, sizeof watched, "%s/watched", dir);
    FILE *f = fopen(watched, "w");
    EXPECT(NULL != f, "create %s", watched);
    fputs("start\n", f);
    fclose(f);
    watch(PMIX_MONITOR_FILE_ALERT);

    pmix_data_array_t *spec;
    PMIX_DATA_ARRAY_CREATE(spec, 5, PMIX_INFO);
    pmix_info_t *s = spec->array;
    uint32_t one = 1, two = 2;
    PMIX_INFO_LOAD(&s[0], PMIX_MONITOR_FILE, watched, PMIX_STRING);
    PMIX_INFO_LOAD(&s[1], PMIX_MONITOR_FILE_SIZE, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&s[2], PMIX_MONITOR_FILE_MODIFY, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&s[3], PMIX_MONITOR_FILE_CHECK_TIME, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&s[4], PMIX_MONITOR_FILE_DROPS, &two, PMIX_UINT32);
    pmix_info_t mon;
    PMIX_INFO_CONSTRUCT(&mon);
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_FILE_CHANGES, spec, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(spec);
    pmix_info_t app;
    PMIX_INFO_CONSTRUCT(&app);
    PMIX_INFO_LOAD(&app, PMIX_MONITOR_APP_CONTROL, NULL, PMIX_BOOL);
    static infocb_t w;
    gate_arm(&w.gate);
    int rc = PMIx_Process_monitor_nb(&mon, PMIX_MONITOR_FILE_ALERT, &app, 1, plain_cb, &w);
    gate_open(&w.gate);
    PMIX_INFO_DESTRUCT(&mon);
    PMIX_INFO_DESTRUCT(&app);
    if (PMIX_SUCCESS == rc) {
        EXPECT(wait_at_least(&w.done, 1), "monitor callback never ran");
    }
    out("file_monitor_nb rc=%d cb_status=%d after_return=%d", rc, w.status, w.after_return);
    /* Grows for 2.5 s: every check sees a change. */
    double end = now_s() + 2.5;
    while (now_s() < end) {
        f = fopen(watched, "a");
        EXPECT(NULL != f, "append %s", watched);
        fputs("more\n", f);
        fclose(f);
        sleep_ms(200);
    }
    out("changing alerts=%d", atomic_load(&alerts));
    EXPECT(wait_at_least(&alerts, 1), "no file alert");
}

static size_t usage_request(pmix_info_t *mon, pmix_info_t **dirs, int all)
{
    PMIX_INFO_CONSTRUCT(mon);
    if (1 == all) {
        /* A NULL array (the Standard's type, pmix_data_array_t*): every field. */
        PMIX_INFO_LOAD(mon, PMIX_MONITOR_PROC_RESOURCE_USAGE, NULL, PMIX_DATA_ARRAY);
    } else if (2 == all) {
        /* The same NULL as a PMIX_POINTER (OpenPMIx passes any type through). */
        PMIX_INFO_LOAD(mon, PMIX_MONITOR_PROC_RESOURCE_USAGE, NULL, PMIX_POINTER);
    } else {
        pmix_data_array_t *fields;
        PMIX_DATA_ARRAY_CREATE(fields, 3, PMIX_INFO);
        pmix_info_t *fa = fields->array;
        PMIX_INFO_LOAD(&fa[0], PMIX_PROC_PID, NULL, PMIX_BOOL);
        PMIX_INFO_LOAD(&fa[1], PMIX_PROC_NUM_THREADS, NULL, PMIX_BOOL);
        PMIX_INFO_LOAD(&fa[2], PMIX_PROC_SAMPLE_TIME, NULL, PMIX_BOOL);
        PMIX_INFO_LOAD(mon, PMIX_MONITOR_PROC_RESOURCE_USAGE, fields, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(fields);
    }
    pmix_data_array_t *procs;
    PMIX_DATA_ARRAY_CREATE(procs, 1, PMIX_PROC);
    memcpy(procs->array, &me, sizeof me);
    PMIX_INFO_CREATE(*dirs, 1);
    PMIX_INFO_LOAD(&(*dirs)[0], PMIX_MONITOR_TARGET_PROCS, procs, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(procs);
    return 1;
}

static void mode_usage(void)
{
    pmix_info_t mon, *d;
    size_t nd = usage_request(&mon, &d, 0);
    pmix_info_t *results = NULL;
    size_t n = 0;
    int rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, d, nd, &results, &n);
    int procid_ok, pid_ok, nthreads_ok;
    check_report(results, n, &procid_ok, &pid_ok, &nthreads_ok);
    out("usage rc=%d reports=%zu procid_ok=%d pid_ok=%d nthreads_ok=%d", rc, n, procid_ok,
        pid_ok, nthreads_ok);
    PMIX_INFO_FREE(results, n);

    static infocb_t w;
    gate_arm(&w.gate);
    rc = PMIx_Process_monitor_nb(&mon, PMIX_SUCCESS, d, nd, usage_cb, &w);
    gate_open(&w.gate);
    if (PMIX_SUCCESS == rc) {
        EXPECT(wait_at_least(&w.done, 1), "usage callback never ran");
    }
    out("usage_nb rc=%d cb_status=%d after_return=%d pid_ok=%d", rc, w.status, w.after_return,
        w.pid_ok);
    PMIX_INFO_DESTRUCT(&mon);
    PMIX_INFO_FREE(d, nd);

    for (int all = 1; all <= 2; all++) {
        nd = usage_request(&mon, &d, all);
        results = NULL;
        n = 0;
        rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, d, nd, &results, &n);
        check_report(results, n, &procid_ok, &pid_ok, &nthreads_ok);
        out("usage_all %s rc=%d pid_ok=%d nthreads_ok=%d", 1 == all ? "darray" : "pointer", rc,
            pid_ok, nthreads_ok);
        PMIX_INFO_FREE(results, n);
        PMIX_INFO_DESTRUCT(&mon);
        PMIX_INFO_FREE(d, nd);
    }
}

int main(int argc, char **argv)
{
    setup_output();
    EXPECT(argc == 3, "usage: client_monitor heartbeat|file|usage DIR");
    dir = argv[2];
    init_or_fail(&me);
    if (0 == strcmp(argv[1], "heartbeat")) {
        mode_heartbeat();
    } else if (0 == strcmp(argv[1], "file")) {
        mode_file();
    } else if (0 == strcmp(argv[1], "usage")) {
        mode_usage();
    } else {
        FAIL("unknown mode %s", argv[1]);
    }
    int rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
