/*
 * Job control from C, 2 ranks: `fastpmix run -n 2 client_jobctl MODE DIR`.
 * DIR is an empty scratch directory (handshakes and cleanup targets).
 *
 * pause       rank 0 pauses rank 1 (PMIX_JOB_CTRL_PAUSE, blocking), sees
 *             its /proc state 'T', resumes it (PMIX_JOB_CTRL_RESUME, _nb).
 *             Prints: pause rc= nresults= | paused state= |
 *                     resume_nb rc= cb_status= after_return= | resumed state=
 * kill        (with --keep-going) rank 0 kills rank 1 (PMIX_JOB_CTRL_KILL).
 *             Prints: kill rc= | killed aborted_seen= state=
 * cleanup     rank 1 registers DIR/cdir (recursive, blocking) and DIR/cfile
 *             (_nb) for cleanup, then exits; rank 0 watches them go.
 *             Prints: cleanup_dir rc= | cleanup_file rc= cb_status= after_return= |
 *                     before dir= file= | after dir= file=
 * checkpoint  rank 1 declares checkpoint-by-event and answers
 *             PMIX_JCTRL_CHECKPOINT with PMIX_JCTRL_CHECKPOINT_COMPLETE;
 *             rank 0 requests checkpoints "snap1" (blocking) and "snap2" (_nb).
 *             Prints: declare rc= | checkpointing <id> (rank 1) |
 *                     checkpoint rc= ckpt= | checkpoint_nb rc= cb_status= after_return= ckpt= |
 *                     complete affected= ckpt= (rank 0, each)
 * All modes end with "done" on every surviving rank.
 */
#define _GNU_SOURCE
#include "client_common.h"

#include <signal.h>

static pmix_proc_t me;
static const char *dir;

/* ---- non-blocking job-control results ---- */
typedef struct {
    ret_gate_t gate;
    atomic_int done;
    int status;
    int after_return;
    char ckpt[64];
} infocb_t;

static void info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    infocb_t *w = cbdata;
    w->after_return = after_return(&w->gate);
    w->status = status;
    const char *c = info_string(info, ninfo, PMIX_JOB_CTRL_CHECKPOINT);
    snprintf(w->ckpt, sizeof w->ckpt, "%s", NULL != c ? c : "-");
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
    atomic_store(&w->done, 1);
}

/* One directive, blocking; the results are released with PMIX_INFO_FREE. */
static int jobctl(const pmix_proc_t *target, const char *key, const void *val,
                  pmix_data_type_t t, size_t *nres, char *ckpt, size_t ckptlen)
{
    pmix_info_t *dirs;
    PMIX_INFO_CREATE(dirs, 1);
    PMIX_INFO_LOAD(&dirs[0], key, val, t);
    pmix_info_t *results = NULL;
    size_t n = 0;
    int rc = PMIx_Job_control(target, NULL != target, dirs, 1, &results, &n);
    PMIX_INFO_FREE(dirs, 1);
    if (NULL != ckpt) {
        const char *c = info_string(results, n, PMIX_JOB_CTRL_CHECKPOINT);
        snprintf(ckpt, ckptlen, "%s", NULL != c ? c : "-");
    }
    if (NULL != nres) {
        *nres = n;
    }
    if (NULL != results) {
        PMIX_INFO_FREE(results, n);
    }
    return rc;
}

static int jobctl_nb(const pmix_proc_t *target, const char *key, const void *val,
                     pmix_data_type_t t, infocb_t *w)
{
    pmix_info_t *dirs;
    PMIX_INFO_CREATE(dirs, 1);
    PMIX_INFO_LOAD(&dirs[0], key, val, t);
    memset(w, 0, sizeof *w);
    gate_arm(&w->gate);
    int rc = PMIx_Job_control_nb(target, NULL != target, dirs, 1, info_cb, w);
    gate_open(&w->gate);
    PMIX_INFO_FREE(dirs, 1);
    if (PMIX_SUCCESS == rc) {
        EXPECT(wait_at_least(&w->done, 1), "job-control callback never ran");
    }
    return rc;
}

/* ---- event handlers ---- */
static atomic_int aborted_1, terminated_1, completes, checkpoints;

static void watcher(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) source;
    (void) results;
    (void) nresults;
    const pmix_proc_t *aff = info_proc(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    int about_1 = NULL != aff && 1 == aff->rank;
    if (PMIX_ERR_PROC_ABORTED == status && about_1) {
        atomic_store(&aborted_1, 1);
    } else if (PMIX_EVENT_PROC_TERMINATED == status && about_1) {
        atomic_store(&terminated_1, 1);
    } else if (PMIX_JCTRL_CHECKPOINT_COMPLETE == status) {
        const char *c = info_string(info, ninfo, PMIX_JOB_CTRL_CHECKPOINT);
        out("complete affected=%d ckpt=%s", NULL != aff ? (int) aff->rank : -1,
            NULL != c ? c : "-");
        atomic_fetch_add(&completes, 1);
    }
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void watch(pmix_status_t code)
{
    int rc = PMIx_Register_event_handler(&code, 1, NULL, 0, watcher, NULL, NULL);
    EXPECT(rc >= 1, "register %d: %d", code, rc);
}

/* Rank 1's checkpoint: report completion (range RM: only the server hears
 * it, and relays it to the requester), then end the chain. */
static void checkpointer(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                         size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                         void *cbdata)
{
    (void) id;
    (void) status;
    (void) source;
    (void) results;
    (void) nresults;
    const char *c = info_string(info, ninfo, PMIX_JOB_CTRL_CHECKPOINT);
    out("checkpointing %s", NULL != c ? c : "-");
    pmix_info_t done;
    PMIX_INFO_CONSTRUCT(&done);
    PMIX_INFO_LOAD(&done, PMIX_JOB_CTRL_CHECKPOINT, c, PMIX_STRING);
    int rc = PMIx_Notify_event(PMIX_JCTRL_CHECKPOINT_COMPLETE, &me, PMIX_RANGE_RM, &done, 1,
                               NULL, NULL);
    PMIX_INFO_DESTRUCT(&done);
    if (PMIX_SUCCESS != rc) {
        out("checkpoint report failed: %d", rc);
    }
    atomic_fetch_add(&checkpoints, 1);
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void wait_file(const char *tag, unsigned rank)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.%u", dir, tag, rank);
    double end = now_s() + HANG_SECS;
    while (!exists(p)) {
        EXPECT(now_s() < end, "%s never appeared", p);
        sleep_ms(5);
    }
}

static void mode_pause(void)
{
    if (1 == me.rank) {
        write_number(dir, "pid", 1, (long) getpid());
        wait_file("resumed", 0);
        return;
    }
    pid_t pid = (pid_t) read_number(dir, "pid", 1);
    pmix_proc_t t;
    PMIX_LOAD_PROCID(&t, me.nspace, 1);
    bool yes = true;
    size_t n = 0;
    int rc = jobctl(&t, PMIX_JOB_CTRL_PAUSE, &yes, PMIX_BOOL, &n, NULL, 0);
    out("pause rc=%d nresults=%zu", rc, n);
    out("paused state=%c", wait_state(pid, 'T', 1));
    infocb_t w;
    rc = jobctl_nb(&t, PMIX_JOB_CTRL_RESUME, &yes, PMIX_BOOL, &w);
    out("resume_nb rc=%d cb_status=%d after_return=%d", rc, w.status, w.after_return);
    out("resumed state=%c", wait_state(pid, 'T', 0));
    touch(dir, "resumed", 0);
}

static void mode_kill(void)
{
    if (1 == me.rank) {
        write_number(dir, "pid", 1, (long) getpid());
        sleep_ms(HANG_SECS * 1000L);
        FAIL("rank 1 was never killed");
    }
    watch(PMIX_ERR_PROC_ABORTED);
    pid_t pid = (pid_t) read_number(dir, "pid", 1);
    pmix_proc_t t;
    PMIX_LOAD_PROCID(&t, me.nspace, 1);
    int rc = jobctl(&t, PMIX_JOB_CTRL_KILL, NULL, PMIX_BOOL, NULL, NULL, 0);
    out("kill rc=%d", rc);
    int seen = wait_at_least(&aborted_1, 1);
    char st = proc_state(pid);
    out("killed aborted_seen=%d state=%c", seen, st == 'Z' ? '?' : st);
}

static void mode_cleanup(void)
{
    char cdir[4096], csub[4200], cfile_in[4300], cfile[4096];
    snprintf(cdir, sizeof cdir, "%s/cdir", dir);
    snprintf(csub, sizeof csub, "%s/sub", cdir);
    snprintf(cfile_in, sizeof cfile_in, "%s/f", csub);
    snprintf(cfile, sizeof cfile, "%s/cfile", dir);
    if (1 == me.rank) {
        EXPECT(0 == mkdir(cdir, 0700) && 0 == mkdir(csub, 0700), "mkdir: %s", strerror(errno));
        FILE *f = fopen(cfile_in, "w");
        EXPECT(NULL != f, "create %s", cfile_in);
        fclose(f);
        f = fopen(cfile, "w");
        EXPECT(NULL != f, "create %s", cfile);
        fclose(f);
        /* A directory, recursively (blocking, two directives). */
        pmix_info_t *d;
        PMIX_INFO_CREATE(d, 2);
        PMIX_INFO_LOAD(&d[0], PMIX_REGISTER_CLEANUP_DIR, cdir, PMIX_STRING);
        PMIX_INFO_LOAD(&d[1], PMIX_CLEANUP_RECURSIVE, NULL, PMIX_BOOL);
        pmix_info_t *results = NULL;
        size_t n = 0;
        int rc = PMIx_Job_control(NULL, 0, d, 2, &results, &n);
        PMIX_INFO_FREE(d, 2);
        PMIX_INFO_FREE(results, n);
        out("cleanup_dir rc=%d", rc);
        /* A file (non-blocking). */
        infocb_t w;
        rc = jobctl_nb(NULL, PMIX_REGISTER_CLEANUP, cfile, PMIX_STRING, &w);
        out("cleanup_file rc=%d cb_status=%d after_return=%d", rc, w.status, w.after_return);
        touch(dir, "registered", 1);
        /* Stay until rank 0 saw the paths, so "before" is not a race with
         * the cleanup that follows this process's exit. */
        wait_file("looked", 0);
        return;
    }
    watch(PMIX_EVENT_PROC_TERMINATED);
    wait_file("registered", 1);
    out("before dir=%d file=%d", exists(cdir), exists(cfile));
    touch(dir, "looked", 0);
    EXPECT(wait_at_least(&terminated_1, 1), "rank 1 never ended");
    double end = now_s() + HANG_SECS;
    while ((exists(cdir) || exists(cfile)) && now_s() < end) {
        sleep_ms(10);
    }
    out("after dir=%d file=%d", exists(cdir), exists(cfile));
}

static void mode_checkpoint(void)
{
    if (1 == me.rank) {
        pmix_status_t c = PMIX_JCTRL_CHECKPOINT;
        int rc = PMIx_Register_event_handler(&c, 1, NULL, 0, checkpointer, NULL, NULL);
        EXPECT(rc >= 1, "register checkpoint handler: %d", rc);
        /* RFC0015: preemptible, checkpoint by event. */
        pmix_data_array_t *m;
        PMIX_DATA_ARRAY_CREATE(m, 1, PMIX_INFO);
        PMIX_INFO_LOAD((pmix_info_t *) m->array, PMIX_JOB_CTRL_CHECKPOINT_EVENT, NULL,
                       PMIX_BOOL);
        pmix_info_t *d;
        PMIX_INFO_CREATE(d, 2);
        PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_PREEMPTIBLE, NULL, PMIX_BOOL);
        PMIX_INFO_LOAD(&d[1], PMIX_JOB_CTRL_CHECKPOINT_METHOD, m, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(m);
        pmix_info_t *results = NULL;
        size_t n = 0;
        rc = PMIx_Job_control(NULL, 0, d, 2, &results, &n);
        PMIX_INFO_FREE(d, 2);
        PMIX_INFO_FREE(results, n);
        out("declare rc=%d", rc);
        touch(dir, "declared", 1);
        wait_file("finished", 0);
        out("checkpoints %d", atomic_load(&checkpoints));
        return;
    }
    watch(PMIX_JCTRL_CHECKPOINT_COMPLETE);
    wait_file("declared", 1);
    pmix_proc_t t;
    PMIX_LOAD_PROCID(&t, me.nspace, 1);
    char ckpt[64];
    int rc = jobctl(&t, PMIX_JOB_CTRL_CHECKPOINT, "snap1", PMIX_STRING, NULL, ckpt, sizeof ckpt);
    out("checkpoint rc=%d ckpt=%s", rc, ckpt);
    infocb_t w;
    rc = jobctl_nb(&t, PMIX_JOB_CTRL_CHECKPOINT, "snap2", PMIX_STRING, &w);
    out("checkpoint_nb rc=%d cb_status=%d after_return=%d ckpt=%s", rc, w.status,
        w.after_return, w.ckpt);
    EXPECT(wait_at_least(&completes, 2), "only %d completions arrived", atomic_load(&completes));
    touch(dir, "finished", 0);
}

int main(int argc, char **argv)
{
    setup_output();
    EXPECT(argc == 3, "usage: client_jobctl pause|kill|cleanup|checkpoint DIR");
    dir = argv[2];
    init_or_fail(&me);
    if (0 == strcmp(argv[1], "pause")) {
        mode_pause();
    } else if (0 == strcmp(argv[1], "kill")) {
        mode_kill();
    } else if (0 == strcmp(argv[1], "cleanup")) {
        mode_cleanup();
    } else if (0 == strcmp(argv[1], "checkpoint")) {
        mode_checkpoint();
    } else {
        FAIL("unknown mode %s", argv[1]);
    }
    int rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
