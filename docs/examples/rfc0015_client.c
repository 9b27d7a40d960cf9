/*
 * rfc0015_client.c: a PMIx client that takes part in its own job
 * management, the way RFC0015 ("Job Control and Monitoring APIs") and the
 * PMIx Standard's "Job Management and Reporting" chapter describe it.
 *
 * It uses only the Standard's names, so it builds against any PMIx
 * implementation's pmix.h: fastpmix's, or OpenPMIx's. Every call below is
 * the blocking form; each one also has a non-blocking `_nb` form that
 * takes a callback.
 *
 * What every process of the job does:
 *
 *   1. PMIx_Init: connect to the local PMIx server (the launcher started
 *      us and told us how to reach it through the environment).
 *   2. PMIx_Get: the job's size, and our local rank on this node.
 *   3. PMIx_Register_event_handler, twice:
 *        - PMIX_JCTRL_CHECKPOINT: the server asks us to checkpoint. We
 *          "save our state" and answer PMIX_JCTRL_CHECKPOINT_COMPLETE;
 *        - PMIX_MONITOR_HEARTBEAT_ALERT and PMIX_ERR_PROC_ABORTED: trouble
 *          in the job. We only report it (on stderr).
 *   4. PMIx_Job_control, informational (no target): we can be pre-empted,
 *      and we can be checkpointed by event (PMIX_JOB_CTRL_CHECKPOINT_METHOD).
 *   5. PMIx_Process_monitor: the server watches us for heartbeats (one
 *      every 5 s at least, 2 may be missed). PMIX_MONITOR_APP_CONTROL: a
 *      missed heartbeat is reported to us (step 3) instead of the system
 *      ending the process. PMIx_Heartbeat() then says "still alive".
 *   6. PMIx_Fence: wait until every process got this far, so that all of
 *      them declared their checkpoint method.
 *   7. Rank 0 only: PMIx_Job_control(PMIX_JOB_CTRL_CHECKPOINT) on the
 *      whole job (itself included). The call returns when every process
 *      reported its checkpoint complete. Rank 0 then writes a line to
 *      the job's stdout with PMIx_Log(PMIX_LOG_STDOUT).
 *   8. PMIx_Fence again: nobody leaves while the checkpoint is running.
 *   9. PMIx_Process_monitor(PMIX_MONITOR_CANCEL): stop the heartbeat
 *      monitor, then PMIx_Finalize.
 *
 * Any failure after PMIx_Init calls PMIx_Abort, which ends the whole job
 * with a non-zero status.
 *
 * Build and run: see README.md beside this file.
 */
#define _GNU_SOURCE /* OpenPMIx's headers need it; harmless elsewhere */
#include <pmix.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The current Standard names this attribute; PMIx 4.2 headers lack it. */
#ifndef PMIX_MONITOR_APP_CONTROL
#define PMIX_MONITOR_APP_CONTROL "pmix.monitor.appctrl"
#endif

/* Our identity (namespace and rank), filled in by PMIx_Init. */
static pmix_proc_t myproc;

/* The name of the heartbeat monitor, so that we can cancel it later. */
#define MONITOR_ID "rfc0015-heartbeat"
/* The name rank 0 gives the checkpoint it requests. */
#define CHECKPOINT_ID "ckpt-1"

/* Report a failed call and end the whole job. */
static _Noreturn void fail(const char *what, pmix_status_t rc)
{
    char msg[256];
    snprintf(msg, sizeof msg, "rfc0015_client rank %u: %s failed: %s", myproc.rank, what,
             PMIx_Error_string(rc));
    fprintf(stderr, "%s\n", msg);
    /* NULL procs: every process of our namespace. Does not return. */
    PMIx_Abort(1, msg, NULL, 0);
    exit(1);
}

/* The value of `key` in an event's info array, if it is a string. */
static const char *info_string(const pmix_info_t info[], size_t ninfo, const char *key)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], key) && PMIX_STRING == info[i].value.type) {
            return info[i].value.data.string;
        }
    }
    return NULL;
}

/* The value of `key` in an event's info array, if it is a process. */
static const pmix_proc_t *info_proc(const pmix_info_t info[], size_t ninfo, const char *key)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], key) && PMIX_PROC == info[i].value.type) {
            return info[i].value.data.proc;
        }
    }
    return NULL;
}

/*
 * PMIX_JCTRL_CHECKPOINT: the server asks us to checkpoint, naming the
 * checkpoint in PMIX_JOB_CTRL_CHECKPOINT. Event handlers run on the PMIx
 * library's own thread, while our main thread may be blocked in a call
 * (here: in PMIx_Fence), so they must not wait for the main thread.
 */
static void checkpoint_handler(size_t handler_id, pmix_status_t status,
                               const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                               pmix_info_t results[], size_t nresults,
                               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) handler_id;
    (void) status;
    (void) source;
    (void) results;
    (void) nresults;
    const char *id = info_string(info, ninfo, PMIX_JOB_CTRL_CHECKPOINT);
    printf("checkpointing as '%s'\n", NULL != id ? id : "(unnamed)");

    /* ... a real application saves its state here ... */

    /* Tell the server the checkpoint is done: range PMIX_RANGE_RM, only
     * the resource manager (our server, which tells the requester) hears
     * it. The checkpoint's name says which request this completes. */
    pmix_info_t done;
    PMIX_INFO_CONSTRUCT(&done);
    PMIX_INFO_LOAD(&done, PMIX_JOB_CTRL_CHECKPOINT, id, PMIX_STRING);
    pmix_status_t rc = PMIx_Notify_event(PMIX_JCTRL_CHECKPOINT_COMPLETE, &myproc,
                                         PMIX_RANGE_RM, &done, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&done);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "rank %u: reporting the checkpoint failed: %s\n", myproc.rank,
                PMIx_Error_string(rc));
    }
    /* Every handler must complete the event. ACTION_COMPLETE: we dealt
     * with it, handlers after us in the chain need not run. */
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/*
 * Trouble in the job: a process stopped sending heartbeats (we asked for
 * PMIX_MONITOR_APP_CONTROL, so nobody acts on it but us), or a process
 * aborted. We report it; an application could also decide to checkpoint,
 * restart or abort through PMIx_Job_control here.
 */
static void trouble_handler(size_t handler_id, pmix_status_t status, const pmix_proc_t *source,
                            pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                            size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata)
{
    (void) handler_id;
    (void) source;
    (void) results;
    (void) nresults;
    const pmix_proc_t *who = info_proc(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    fprintf(stderr, "rank %u: %s about rank %d\n", myproc.rank, PMIx_Error_string(status),
            NULL != who ? (int) who->rank : -1);
    if (NULL != cbfunc) {
        /* SUCCESS: we saw it; later handlers in the chain may run too. */
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

/* A 32-bit unsigned value of the job (PMIX_RANK_WILDCARD) or of a process. */
static uint32_t get_u32(pmix_rank_t rank, const char *key)
{
    pmix_proc_t who;
    PMIX_LOAD_PROCID(&who, myproc.nspace, rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&who, key, NULL, 0, &val);
    if (PMIX_SUCCESS != rc) {
        fail(key, rc);
    }
    uint32_t v = 0;
    switch (val->type) { /* the Standard gives the type; be lenient anyway */
    case PMIX_UINT32: v = val->data.uint32; break;
    case PMIX_UINT16: v = val->data.uint16; break;
    default: fail(key, PMIX_ERR_TYPE_MISMATCH);
    }
    PMIX_VALUE_RELEASE(val);
    return v;
}

/* Step 4: we can be pre-empted, and checkpointed by event. */
static void declare_checkpoint_method(void)
{
    /* PMIX_JOB_CTRL_CHECKPOINT_METHOD is an array of pmix_info_t, one per
     * method we support: here only "by event" (PMIX_JCTRL_CHECKPOINT). */
    pmix_data_array_t *methods;
    PMIX_DATA_ARRAY_CREATE(methods, 1, PMIX_INFO);
    pmix_info_t *m = methods->array;
    bool yes = true;
    PMIX_INFO_LOAD(&m[0], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &yes, PMIX_BOOL);

    pmix_info_t *dirs;
    PMIX_INFO_CREATE(dirs, 2);
    PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[1], PMIX_JOB_CTRL_CHECKPOINT_METHOD, methods, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(methods); /* LOAD copied it */

    /* Informational: no targets. */
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Job_control(NULL, 0, dirs, 2, &results, &nresults);
    PMIX_INFO_FREE(dirs, 2);
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
    if (PMIX_SUCCESS != rc) {
        fail("declaring the checkpoint method", rc);
    }
    printf("checkpoint method declared\n");
}

/* Step 5: the server expects a heartbeat from us at least every 5 s. */
static void monitor_heartbeats(void)
{
    pmix_info_t monitor;
    PMIX_INFO_CONSTRUCT(&monitor);
    /* The monitor's value carries nothing: a NULL pointer. */
    PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);

    uint32_t period = 5, drops = 2;
    bool yes = true;
    pmix_info_t *dirs;
    PMIX_INFO_CREATE(dirs, 4);
    PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_ID, MONITOR_ID, PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[1], PMIX_MONITOR_HEARTBEAT_TIME, &period, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[2], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[3], PMIX_MONITOR_APP_CONTROL, &yes, PMIX_BOOL);

    pmix_info_t *results = NULL;
    size_t nresults = 0;
    /* The alert, if it comes, is a PMIX_MONITOR_HEARTBEAT_ALERT event. */
    pmix_status_t rc = PMIx_Process_monitor(&monitor, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 4,
                                            &results, &nresults);
    PMIX_INFO_DESTRUCT(&monitor);
    PMIX_INFO_FREE(dirs, 4);
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Process_monitor(PMIX_MONITOR_HEARTBEAT)", rc);
    }
    printf("heartbeat monitor '%s' started\n", MONITOR_ID);
}

/* Step 9: stop the heartbeat monitor named MONITOR_ID. */
static void cancel_monitor(void)
{
    pmix_info_t cancel;
    PMIX_INFO_CONSTRUCT(&cancel);
    PMIX_INFO_LOAD(&cancel, PMIX_MONITOR_CANCEL, MONITOR_ID, PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Process_monitor(&cancel, PMIX_SUCCESS, NULL, 0, &results, &nresults);
    PMIX_INFO_DESTRUCT(&cancel);
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Process_monitor(PMIX_MONITOR_CANCEL)", rc);
    }
    printf("heartbeat monitor '%s' cancelled\n", MONITOR_ID);
}

/* Step 7 (rank 0): checkpoint every process of the job. */
static void checkpoint_job(uint32_t size)
{
    /* One target naming the whole namespace: PMIX_RANK_WILDCARD. */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, myproc.nspace, PMIX_RANK_WILDCARD);

    pmix_info_t *dirs;
    PMIX_INFO_CREATE(dirs, 2);
    PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_ID, "rfc0015-checkpoint-request", PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[1], PMIX_JOB_CTRL_CHECKPOINT, CHECKPOINT_ID, PMIX_STRING);

    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Job_control(&all, 1, dirs, 2, &results, &nresults);
    PMIX_INFO_FREE(dirs, 2);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Job_control(PMIX_JOB_CTRL_CHECKPOINT)", rc);
    }
    /* The results name the checkpoint that completed. */
    const char *id = info_string(results, nresults, PMIX_JOB_CTRL_CHECKPOINT);
    printf("checkpoint '%s' of all %u processes complete\n", NULL != id ? id : "(unnamed)",
           size);
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }

    /* Tell whoever watches the job's output (PMIX_LOG_STDOUT: the
     * launcher's stdout, not ours). */
    char line[128];
    snprintf(line, sizeof line, "rfc0015_client: job checkpointed as '%s'", CHECKPOINT_ID);
    pmix_info_t data;
    PMIX_INFO_CONSTRUCT(&data);
    PMIX_INFO_LOAD(&data, PMIX_LOG_STDOUT, line, PMIX_STRING);
    rc = PMIx_Log(&data, 1, NULL, 0);
    PMIX_INFO_DESTRUCT(&data);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Log", rc);
    }
}

/* Wait for every process of our namespace (the wildcard rank) to get
 * here. PMIX_COLLECT_DATA false: we have no data to exchange. */
static void fence(void)
{
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, myproc.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t nocollect;
    bool no = false;
    PMIX_INFO_CONSTRUCT(&nocollect);
    PMIX_INFO_LOAD(&nocollect, PMIX_COLLECT_DATA, &no, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(&all, 1, &nocollect, 1);
    PMIX_INFO_DESTRUCT(&nocollect);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Fence", rc);
    }
}

int main(void)
{
    /* Our stdout is a pipe to the launcher: flush whole lines. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* 1. Connect. */
    pmix_status_t rc = PMIx_Init(&myproc, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_Init failed: %s (run me under a PMIx launcher)\n",
                PMIx_Error_string(rc));
        return 1;
    }

    /* 2. Who and where we are. Job-level values belong to the wildcard
     * rank; process-level ones to our own rank. */
    uint32_t size = get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    uint32_t local_rank = get_u32(myproc.rank, PMIX_LOCAL_RANK);
    printf("rank %u of %u (local rank %u)\n", myproc.rank, size, local_rank);

    /* 3. Event handlers. The blocking registration (no callback) returns
     * the handler's reference (>= 1) or an error (< 0). */
    pmix_status_t ckpt = PMIX_JCTRL_CHECKPOINT;
    int ref = PMIx_Register_event_handler(&ckpt, 1, NULL, 0, checkpoint_handler, NULL, NULL);
    if (ref < 0) {
        fail("registering the checkpoint handler", ref);
    }
    pmix_status_t trouble[2] = {PMIX_MONITOR_HEARTBEAT_ALERT, PMIX_ERR_PROC_ABORTED};
    ref = PMIx_Register_event_handler(trouble, 2, NULL, 0, trouble_handler, NULL, NULL);
    if (ref < 0) {
        fail("registering the trouble handler", ref);
    }

    /* 4. How we can be checkpointed. */
    declare_checkpoint_method();

    /* 5. Heartbeats. */
    monitor_heartbeats();
    PMIx_Heartbeat();

    /* 6. Everyone is ready to be checkpointed. */
    fence();
    PMIx_Heartbeat();

    /* 7. Rank 0 checkpoints the job. */
    if (0 == myproc.rank) {
        checkpoint_job(size);
    }

    /* 8. Nobody leaves before the checkpoint is over. */
    fence();
    PMIx_Heartbeat();

    /* 9. Done. */
    cancel_monitor();
    rc = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_Finalize failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("finalized\n");
    return 0;
}
