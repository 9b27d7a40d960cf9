/*
 * PMIx_Log from C, one rank (`fastpmix run -n 1 client_log`): the stdout and
 * stderr channels, with a generated time stamp (PMIX_LOG_GENERATE_TIMESTAMP
 * loaded the Standard's way, as a NULL PMIX_BOOL), blocking and _nb. The
 * server writes the messages on the launcher's own stdout/stderr.
 *
 * Prints: log_stdout rc= | log_stderr rc= | log_nb rc= cb_status= after_return= |
 *         log_plain rc= | log_two rc= | log_once rc= | done
 * and logs: "c-log blocking stdout", "c-log blocking stderr", "c-log nb stdout"
 * (each after a time stamp), "c-log plain" (as is), "c-log two out" / "c-log two err",
 * "c-log once err" (PMIX_LOG_ONCE: stderr first, so not "c-log once out").
 */
#define _GNU_SOURCE
#include "client_common.h"

typedef struct {
    ret_gate_t gate;
    atomic_int done;
    int status;
    int after_return;
} opwait_t;

static void op_cb(pmix_status_t status, void *cbdata)
{
    opwait_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = status;
    atomic_store(&w->done, 1);
}

static int log_one(const char *channel, const char *msg, int stamp)
{
    pmix_info_t data, dir;
    PMIX_INFO_CONSTRUCT(&data);
    PMIX_INFO_CONSTRUCT(&dir);
    PMIX_INFO_LOAD(&data, channel, msg, PMIX_STRING);
    PMIX_INFO_LOAD(&dir, PMIX_LOG_GENERATE_TIMESTAMP, NULL, PMIX_BOOL);
    int rc = PMIx_Log(&data, 1, stamp ? &dir : NULL, stamp ? 1 : 0);
    PMIX_INFO_DESTRUCT(&data);
    PMIX_INFO_DESTRUCT(&dir);
    return rc;
}

int main(void)
{
    setup_output();
    pmix_proc_t me;
    init_or_fail(&me);

    out("log_stdout rc=%d", log_one(PMIX_LOG_STDOUT, "c-log blocking stdout", 1));
    out("log_stderr rc=%d", log_one(PMIX_LOG_STDERR, "c-log blocking stderr", 1));

    pmix_info_t *data, *dirs;
    PMIX_INFO_CREATE(data, 1);
    PMIX_INFO_CREATE(dirs, 1);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDOUT, "c-log nb stdout", PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_GENERATE_TIMESTAMP, NULL, PMIX_BOOL);
    static opwait_t w;
    gate_arm(&w.gate);
    int rc = PMIx_Log_nb(data, 1, dirs, 1, op_cb, &w);
    gate_open(&w.gate);
    PMIX_INFO_FREE(data, 1);
    PMIX_INFO_FREE(dirs, 1);
    if (PMIX_SUCCESS == rc) {
        EXPECT(wait_at_least(&w.done, 1), "log callback never ran");
    }
    out("log_nb rc=%d cb_status=%d after_return=%d", rc, w.status, w.after_return);

    out("log_plain rc=%d", log_one(PMIX_LOG_STDOUT, "c-log plain", 0));

    PMIX_INFO_CREATE(data, 2);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDOUT, "c-log two out", PMIX_STRING);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDERR, "c-log two err", PMIX_STRING);
    rc = PMIx_Log(data, 2, NULL, 0);
    PMIX_INFO_FREE(data, 2);
    out("log_two rc=%d", rc);

    /* PMIX_LOG_ONCE: the first channel that succeeds, in the caller's order. */
    PMIX_INFO_CREATE(data, 2);
    PMIX_INFO_CREATE(dirs, 1);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDERR, "c-log once err", PMIX_STRING);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDOUT, "c-log once out", PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_ONCE, NULL, PMIX_BOOL);
    rc = PMIx_Log(data, 2, dirs, 1);
    PMIX_INFO_FREE(data, 2);
    PMIX_INFO_FREE(dirs, 1);
    out("log_once rc=%d", rc);

    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
