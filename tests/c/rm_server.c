/*
 * A tiny resource-manager daemon that embeds the fastpmix server through the
 * C server interface (pmix_server.h). Not run under `fastpmix run`: it is the
 * launcher. tests/c_server.rs runs it and reads its lines.
 *
 *   rm_server CHILD          the full scenario: 3 ranks of tests/c/rm_child.c
 *   rm_server CHILD --null   a module whose upcalls are all NULL, 1 rank,
 *                            forked before it is registered
 *   rm_server CHILD --sync   the full scenario, every upcall completed inside
 *                            the upcall (its callback called before it
 *                            returns), as Open MPI's runtime does
 *   rm_server CHILD --fork   setup_fork in forked children while the
 *                            server is busy (see fork_storm)
 *   rm_server CHILD --twonode  a job on two nodes registered as Slurm does
 *                            (see two_nodes; CHILD: client_job_keys.c)
 *
 * The daemon prints one line per checked fact, "ok <fact>" or
 * "FAIL <fact> (<details>)", and exits 1 if any fact failed. The children
 * print their own "ok"/"FAIL" lines on the same stdout; the daemon also
 * checks how each child ended.
 *
 * Full scenario, in order:
 *   - before PMIx_server_init the server calls return PMIX_ERR_INIT;
 *   - PMIx_server_init with PMIX_SERVER_TMPDIR (a fresh mkdtemp directory)
 *     and a module implementing client_connected2, client_finalized, abort,
 *     notify_event, register_events, deregister_events and job_control;
 *   - PMIX_NODE_MAP / PMIX_PROC_MAP from PMIx_generate_regex/_ppn in the
 *     namespace's job info; 3 clients registered with getuid()/getgid() and a
 *     per-rank server_object; PMIx_server_setup_fork + fork/execve for each;
 *   - the children fence, rank 0 notifies RM_CODE in PMIX_RANGE_RM: the
 *     host's notify_event upcall gets it, and the host then notifies HOST_CODE
 *     to the namespace with PMIx_Notify_event (every child's handler sees it);
 *   - rank 1 asks for PMIX_JOB_CTRL_RESTART of rank 2: fastpmix hands restart
 *     to the host's job_control (local kill/terminate/signal... it carries out
 *     itself, docs/openpmix-differences.md), so the host acts: it SIGKILLs
 *     rank 2, waits until the server reported it gone (its own handler for
 *     PMIX_ERR_LOST_CONNECTION: client_finalized is for finalizing clients), and
 *     starts a new rank 2, then completes with the new pid as a result;
 *   - rank 1 then kills the restarted rank 2 with PMIX_JOB_CTRL_KILL, which
 *     the server carries out itself (the host's job_control is not called);
 *   - ranks 0 and 1 finalize; the daemon deregisters, finalizes, and checks
 *     that its temporary directory was left empty.
 *
 * Every upcall records what it saw under one mutex and completes
 * asynchronously from the daemon's worker thread (client_connected2,
 * notify_event, register_events, deregister_events), from a thread of its own
 * (job_control), or by returning PMIX_OPERATION_SUCCEEDED (client_finalized,
 * abort).
 */
#define _GNU_SOURCE
#include <pmix_server.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "facts.h"

extern char **environ;

/* Keep in sync with rm_child.c. */
#define RM_CODE (PMIX_EXTERNAL_ERR_BASE - 11)    /* rank 0 -> the host, PMIX_RANGE_RM */
#define HOST_CODE (PMIX_EXTERNAL_ERR_BASE - 12)  /* the host -> the namespace */
#define READY_CODE (PMIX_EXTERNAL_ERR_BASE - 13) /* restarted rank 2 -> the namespace */
#define ENV_CODE PMIX_EVENT_NODE_DOWN            /* an environment (system) code */
#define RESULT_KEY "rm.restart.pid"
#define RM_TEXT "rank 0 to the rm"
#define HOST_TEXT "from the rm"

#define NS "rm-job-1"
#define NULL_NS "rm-null-job"
#define NPROCS 3
#define HANG_SECS 60

/* ---- output (facts: facts.h) ---- */
__attribute__((format(printf, 1, 2))) static void out(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&facts_lock);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&facts_lock);
}

/* ---- what the upcalls saw ---- */
static struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    /* client_connected2 */
    int connected[NPROCS];
    int connected_bad_object;
    int connected_other;
    /* client_finalized */
    int finalized[NPROCS];
    int finalized_bad_object;
    int finalized_total;
    /* the server's own PMIX_ERR_LOST_CONNECTION handler, and deaths
     * (PMIX_ERR_PROC_ABORTED) at notify_event; each with the rank as
     * source and affected process */
    int lost[NPROCS];
    int lost_bad;
    int deaths[NPROCS];
    int deaths_bad;
    /* register_events / deregister_events */
    int reg_env;       /* calls naming ENV_CODE */
    int reg_nonsystem; /* codes outside the environment range */
    int reg_calls;
    int dereg_env;
    int dereg_calls;
    /* notify_event */
    int rm_events;
    bool rm_source_ok, rm_range_ok, rm_info_ok;
    char rm_source[300];
    int ready_events; /* READY_CODE from the restarted rank 2 (NAMESPACE range) */
    int host_echoes;  /* HOST_CODE coming back: must never happen */
    int other_events;
    /* job_control */
    int jc_calls;
    bool jc_requester_ok, jc_targets_ok, jc_restart_ok, jc_ids_ok;
    char jc_seen[700];
    bool restart_done;
    int restart_killed_by;  /* the signal that ended the first rank 2 */
    pid_t restarted_pid;
    /* abort */
    int aborts;
} st = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

/* The children. */
static const char *child_path;
static char *node_map, *proc_map;
static pid_t pids[NPROCS];
static int server_objects[NPROCS]; /* &server_objects[r] is rank r's object */

/* ---- a worker thread that completes upcalls later ---- */
typedef struct work {
    pmix_op_cbfunc_t cb;
    pmix_status_t status;
    void *cbdata;
    struct work *next;
} work_t;

static struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    work_t *head, *tail;
    bool stop;
    pthread_t thread;
} wq = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

static void *worker_main(void *arg)
{
    (void) arg;
    pthread_mutex_lock(&wq.m);
    for (;;) {
        while (NULL == wq.head && !wq.stop) {
            pthread_cond_wait(&wq.c, &wq.m);
        }
        work_t *w = wq.head;
        if (NULL == w) {
            break; /* stop, and nothing left */
        }
        wq.head = w->next;
        if (NULL == wq.head) {
            wq.tail = NULL;
        }
        pthread_mutex_unlock(&wq.m);
        w->cb(w->status, w->cbdata);
        free(w);
        pthread_mutex_lock(&wq.m);
    }
    pthread_mutex_unlock(&wq.m);
    return NULL;
}

/* --sync: every upcall calls its callback before it returns, as Open MPI's
 * runtime does (OpenPMIx 4.2 deadlocks its own progress thread on that). */
static bool sync_upcalls;

/* Completes an upcall from the worker thread, after the upcall returned;
 * with --sync, right here, inside the upcall. */
static pmix_status_t complete_later(pmix_op_cbfunc_t cb, void *cbdata, pmix_status_t status)
{
    if (NULL == cb) {
        return PMIX_OPERATION_SUCCEEDED;
    }
    if (sync_upcalls) {
        cb(status, cbdata);
        return PMIX_SUCCESS;
    }
    work_t *w = calloc(1, sizeof *w);
    if (NULL == w) {
        return PMIX_ERR_NOMEM;
    }
    w->cb = cb;
    w->status = status;
    w->cbdata = cbdata;
    pthread_mutex_lock(&wq.m);
    if (NULL == wq.tail) {
        wq.head = w;
    } else {
        wq.tail->next = w;
    }
    wq.tail = w;
    pthread_cond_signal(&wq.c);
    pthread_mutex_unlock(&wq.m);
    return PMIX_SUCCESS;
}

/* ---- helpers ---- */
static int rank_of(const pmix_proc_t *p)
{
    if (NULL == p || !PMIX_CHECK_NSPACE(p->nspace, NS) || p->rank >= NPROCS) {
        return -1;
    }
    return (int) p->rank;
}

static const pmix_info_t *find_info(const pmix_info_t *info, size_t n, const char *key)
{
    for (size_t i = 0; NULL != info && i < n; i++) {
        if (PMIX_CHECK_KEY(&info[i], key)) {
            return &info[i];
        }
    }
    return NULL;
}

static void proc_str(const pmix_proc_t *p, char *buf, size_t n)
{
    if (NULL == p) {
        snprintf(buf, n, "NULL");
    } else if (PMIX_RANK_WILDCARD == p->rank) {
        snprintf(buf, n, "%.255s:*", p->nspace);
    } else {
        snprintf(buf, n, "%.255s:%u", p->nspace, p->rank);
    }
}

/* A full-size namespace buffer: the server calls take a pmix_nspace_t, which
 * gcc reads as 256 bytes (-Wstringop-overread on a short literal). */
typedef struct {
    pmix_nspace_t ns;
} nsbuf_t;

static nsbuf_t nsbuf(const char *ns)
{
    nsbuf_t b;
    PMIX_LOAD_NSPACE(b.ns, ns);
    return b;
}

/* A malloc'd copy of this process's environment (setup_fork adds to it). */
static char **copy_environ(void)
{
    size_t n = 0;
    while (NULL != environ[n]) {
        n++;
    }
    char **env = calloc(n + 1, sizeof *env);
    if (NULL == env) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        env[i] = strdup(environ[i]);
    }
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; NULL != env && NULL != env[i]; i++) {
        free(env[i]);
    }
    free(env);
}

/* How many entries start with `prefix`, and the value of the last one. */
static int env_count(char **env, const char *name, const char **value)
{
    size_t len = strlen(name);
    int n = 0;
    for (size_t i = 0; NULL != env && NULL != env[i]; i++) {
        if (0 == strncmp(env[i], name, len) && '=' == env[i][len]) {
            n++;
            if (NULL != value) {
                *value = env[i] + len + 1;
            }
        }
    }
    return n;
}

/* fork + execve(child, [child, mode, nodemap, procmap], env). */
static pid_t spawn(char **env, const char *mode)
{
    char *argv[] = {(char *) child_path, (char *) mode, node_map, proc_map, NULL};
    fflush(stdout);
    pid_t pid = fork();
    if (0 == pid) {
        execve(child_path, argv, env);
        _exit(127);
    }
    return pid;
}

/* The environment of rank `rank` of `ns` (NULL on failure, rc in *rc). */
static char **child_env(const char *ns, int rank, pmix_status_t *rc)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, ns, (pmix_rank_t) rank);
    char **env = copy_environ();
    *rc = PMIx_server_setup_fork(&p, &env);
    if (PMIX_SUCCESS != *rc) {
        free_env(env);
        return NULL;
    }
    return env;
}

/* waitpid with a hang guard: the raw status, or -1 (then the pid is killed). */
static int wait_child_for(pid_t pid, int secs)
{
    int status;
    for (int i = 0; i < secs * 200; i++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            return status;
        }
        if (r < 0 && EINTR != errno) {
            return -1;
        }
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

static int wait_child(pid_t pid)
{
    return wait_child_for(pid, HANG_SECS);
}

static void describe_status(int status, char *buf, size_t n)
{
    if (status < 0) {
        snprintf(buf, n, "hung: killed after %d s", HANG_SECS);
    } else if (WIFEXITED(status)) {
        snprintf(buf, n, "exit %d", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        snprintf(buf, n, "signal %d", WTERMSIG(status));
    } else {
        snprintf(buf, n, "status %#x", status);
    }
}

/* ---- the module ---- */
static pmix_status_t up_connected2(const pmix_proc_t *proc, void *server_object,
                                   pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata)
{
    (void) info;
    (void) ninfo;
    int r = rank_of(proc);
    pthread_mutex_lock(&st.m);
    if (r < 0) {
        st.connected_other++;
    } else {
        st.connected[r]++;
        if (server_object != &server_objects[r]) {
            st.connected_bad_object++;
        }
    }
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    return complete_later(cbfunc, cbdata, PMIX_SUCCESS);
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) cbfunc;
    (void) cbdata;
    int r = rank_of(proc);
    pthread_mutex_lock(&st.m);
    st.finalized_total++;
    if (r >= 0) {
        st.finalized[r]++;
        if (server_object != &server_objects[r]) {
            st.finalized_bad_object++;
        }
    }
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    /* Done at once: the callback is not called. */
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) proc;
    (void) server_object;
    (void) status;
    (void) msg;
    (void) procs;
    (void) nprocs;
    (void) cbfunc;
    (void) cbdata;
    pthread_mutex_lock(&st.m);
    st.aborts++;
    pthread_mutex_unlock(&st.m);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_notify(pmix_status_t code, const pmix_proc_t *source,
                               pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pthread_mutex_lock(&st.m);
    if (RM_CODE == code) {
        st.rm_events++;
        proc_str(source, st.rm_source, sizeof st.rm_source);
        st.rm_source_ok = 0 == rank_of(source);
        st.rm_range_ok = PMIX_RANGE_RM == range;
        const pmix_info_t *t = find_info(info, ninfo, PMIX_EVENT_TEXT_MESSAGE);
        st.rm_info_ok = NULL != t && PMIX_STRING == t->value.type
                        && 0 == strcmp(t->value.data.string, RM_TEXT);
    } else if (READY_CODE == code) {
        if (2 == rank_of(source) && PMIX_RANGE_NAMESPACE == range) {
            st.ready_events++;
        } else {
            st.other_events++;
        }
    } else if (HOST_CODE == code) {
        st.host_echoes++;
    } else if (PMIX_ERR_PROC_ABORTED == code) {
        const pmix_info_t *a = find_info(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
        int r = rank_of(source);
        if (r >= 0 && PMIX_RANGE_NAMESPACE == range && NULL != a && PMIX_PROC == a->value.type
            && PMIX_CHECK_PROCID(a->value.data.proc, source)) {
            st.deaths[r]++;
        } else {
            st.deaths_bad++;
        }
    } else {
        st.other_events++;
    }
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    return complete_later(cbfunc, cbdata, PMIX_SUCCESS);
}

static pmix_status_t up_register_events(pmix_status_t *codes, size_t ncodes,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) info;
    (void) ninfo;
    pthread_mutex_lock(&st.m);
    st.reg_calls++;
    for (size_t i = 0; i < ncodes; i++) {
        if (ENV_CODE == codes[i]) {
            st.reg_env++;
        }
        if (!PMIX_SYSTEM_EVENT(codes[i])) {
            st.reg_nonsystem++;
        }
    }
    pthread_mutex_unlock(&st.m);
    return complete_later(cbfunc, cbdata, PMIX_SUCCESS);
}

static pmix_status_t up_deregister_events(pmix_status_t *codes, size_t ncodes,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pthread_mutex_lock(&st.m);
    st.dereg_calls++;
    for (size_t i = 0; i < ncodes; i++) {
        if (ENV_CODE == codes[i]) {
            st.dereg_env++;
        }
    }
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    return complete_later(cbfunc, cbdata, PMIX_SUCCESS);
}

/* A job-control request being carried out on its own thread. */
typedef struct {
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    pthread_t thread;
    bool started;
} restart_t;

static restart_t restart;

static void release_results(void *cbdata)
{
    pmix_info_t *r = cbdata;
    PMIX_INFO_FREE(r, 1);
}

/* The server process's own handler for PMIX_ERR_LOST_CONNECTION: a client
 * that ended without PMIx_Finalize (client_finalized is for finalizing
 * clients only). */
static void on_lost(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) status;
    (void) results;
    (void) nresults;
    const pmix_info_t *a = find_info(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    int r = rank_of(source);
    pthread_mutex_lock(&st.m);
    if (r >= 0 && NULL != a && PMIX_PROC == a->value.type
        && PMIX_CHECK_PROCID(a->value.data.proc, source)) {
        st.lost[r]++;
    } else {
        st.lost_bad++;
    }
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* The host's restart of rank 2: SIGKILL it, wait until the server reported
 * it gone, reap it, start a new rank 2, complete with the new pid. */
static void *restart_main(void *arg)
{
    restart_t *rq = arg;
    pmix_status_t rc = PMIX_SUCCESS;
    kill(pids[2], SIGKILL);
    pthread_mutex_lock(&st.m);
    struct timespec end = deadline(HANG_SECS);
    while (st.lost[2] < 1) {
        if (ETIMEDOUT == pthread_cond_timedwait(&st.c, &st.m, &end)) {
            rc = PMIX_ERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&st.m);
    int status = wait_child(pids[2]);
    pid_t fresh = -1;
    if (PMIX_SUCCESS == rc) {
        char **env = child_env(NS, 2, &rc);
        if (NULL != env) {
            fresh = spawn(env, "restarted");
            free_env(env);
            rc = fresh > 0 ? PMIX_SUCCESS : PMIX_ERROR;
        }
    }
    pthread_mutex_lock(&st.m);
    st.restart_killed_by = (status >= 0 && WIFSIGNALED(status)) ? WTERMSIG(status) : 0;
    st.restarted_pid = fresh;
    st.restart_done = true;
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    if (PMIX_SUCCESS == rc) {
        PMIX_INFO_CREATE(results, 1);
        PMIX_INFO_LOAD(&results[0], RESULT_KEY, &fresh, PMIX_PID);
        nresults = 1;
    }
    rq->cbfunc(rc, results, nresults, rq->cbdata, NULL == results ? NULL : release_results,
               results);
    return NULL;
}

static pmix_status_t up_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                    size_t ntargets, const pmix_info_t directives[],
                                    size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    char req[280], tgt[280] = "-";
    proc_str(requestor, req, sizeof req);
    if (ntargets > 0) {
        proc_str(&targets[0], tgt, sizeof tgt);
    }
    const pmix_info_t *restart_dir = find_info(directives, ndirs, PMIX_JOB_CTRL_RESTART);
    const pmix_info_t *uid = find_info(directives, ndirs, PMIX_USERID);
    const pmix_info_t *gid = find_info(directives, ndirs, PMIX_GRPID);
    bool is_restart = NULL != restart_dir && PMIX_STRING == restart_dir->value.type
                      && 0 == strcmp(restart_dir->value.data.string, "rm-ckpt-1");
    pthread_mutex_lock(&st.m);
    st.jc_calls++;
    snprintf(st.jc_seen, sizeof st.jc_seen, "requester %s, %zu target(s) first %s, %zu dirs",
             req, ntargets, tgt, ndirs);
    st.jc_requester_ok = 1 == rank_of(requestor);
    st.jc_targets_ok = 1 == ntargets && 2 == rank_of(&targets[0]);
    st.jc_restart_ok = is_restart;
    st.jc_ids_ok = NULL != uid && PMIX_UINT32 == uid->value.type
                   && getuid() == uid->value.data.uint32 && NULL != gid
                   && PMIX_UINT32 == gid->value.type && getgid() == gid->value.data.uint32;
    bool act = is_restart && st.jc_targets_ok && !restart.started && NULL != cbfunc;
    pthread_mutex_unlock(&st.m);
    if (!act) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    restart.cbfunc = cbfunc;
    restart.cbdata = cbdata;
    if (0 != pthread_create(&restart.thread, NULL, restart_main, &restart)) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    restart.started = true;
    return PMIX_SUCCESS;
}

/* ---- blocking forms of the void server calls ---- */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool done;
    pmix_status_t status;
} op_t;

static void op_cb(pmix_status_t status, void *cbdata)
{
    op_t *op = cbdata;
    pthread_mutex_lock(&op->m);
    op->status = status;
    op->done = true;
    pthread_cond_signal(&op->c);
    pthread_mutex_unlock(&op->m);
}

static void op_init(op_t *op)
{
    pthread_mutex_init(&op->m, NULL);
    pthread_cond_init(&op->c, NULL);
    op->done = false;
    op->status = PMIX_ERROR;
}

static void op_destroy(op_t *op)
{
    pthread_mutex_destroy(&op->m);
    pthread_cond_destroy(&op->c);
}

static pmix_status_t op_wait(op_t *op)
{
    struct timespec end = deadline(HANG_SECS);
    pthread_mutex_lock(&op->m);
    while (!op->done) {
        if (ETIMEDOUT == pthread_cond_timedwait(&op->c, &op->m, &end)) {
            break;
        }
    }
    pmix_status_t s = op->done ? op->status : PMIX_ERR_TIMEOUT;
    pthread_mutex_unlock(&op->m);
    op_destroy(op);
    return s;
}

/* ---- phases ---- */
static void before_init(void)
{
    pmix_status_t rc = PMIx_server_register_nspace(nsbuf(NS).ns, NPROCS, NULL, 0, NULL, NULL);
    check(PMIX_ERR_INIT == rc, "before init: PMIx_server_register_nspace returns PMIX_ERR_INIT",
          "%s", err(rc));
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, NS, 0);
    rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
    check(PMIX_ERR_INIT == rc, "before init: PMIx_server_register_client returns PMIX_ERR_INIT",
          "%s", err(rc));
    char **env = NULL;
    rc = PMIx_server_setup_fork(&p, &env);
    check(PMIX_ERR_INIT == rc && NULL == env,
          "before init: PMIx_server_setup_fork returns PMIX_ERR_INIT", "%s, env %p", err(rc),
          (void *) env);
    free_env(env);
    rc = PMIx_Notify_event(HOST_CODE, &p, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
    check(PMIX_ERR_INIT == rc, "before init: PMIx_Notify_event returns PMIX_ERR_INIT", "%s",
          err(rc));
}

/* PMIx_server_init with PMIX_SERVER_TMPDIR = a fresh directory. */
static bool server_up(pmix_server_module_t *module, char *tmpdir)
{
    if (NULL == mkdtemp(tmpdir)) {
        check(false, "init: mkdtemp", "%s", strerror(errno));
        return false;
    }
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 3);
    pmix_rank_t zero = 0;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_NSPACE, "rm-daemon", PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_RANK, &zero, PMIX_PROC_RANK);
    pmix_status_t rc = PMIx_server_init(module, info, 3);
    PMIX_INFO_FREE(info, 3);
    check(PMIX_SUCCESS == rc, "init: PMIx_server_init with PMIX_SERVER_TMPDIR succeeds", "%s",
          err(rc));
    return PMIX_SUCCESS == rc;
}

/* Stops the server and checks that the temporary directory was left empty
 * (rmdir fails on a non-empty directory). */
static void server_down(const char *tmpdir)
{
    pmix_status_t rc = PMIx_server_finalize();
    check(PMIX_SUCCESS == rc, "teardown: PMIx_server_finalize succeeds", "%s", err(rc));
    int gone = rmdir(tmpdir);
    check(0 == gone, "teardown: PMIx_server_finalize left PMIX_SERVER_TMPDIR empty", "rmdir: %s",
          strerror(errno));
    rc = PMIx_server_register_nspace(nsbuf(NS).ns, NPROCS, NULL, 0, NULL, NULL);
    check(PMIX_ERR_INIT == rc,
          "teardown: PMIx_server_register_nspace after finalize returns PMIX_ERR_INIT", "%s",
          err(rc));
}

static void stop_worker(void)
{
    pthread_mutex_lock(&wq.m);
    wq.stop = true;
    pthread_cond_signal(&wq.c);
    pthread_mutex_unlock(&wq.m);
    pthread_join(wq.thread, NULL);
}

/* Registers namespace `ns` of `nprocs` ranks on node "nodeA" (peers "0,..."):
 * job size, local size and peers, hostname, the node and proc maps from
 * PMIx_generate_regex/_ppn, and one PMIX_PROC_DATA array per rank. */
/* Registers namespace `ns`; `nb`: with a callback, as Slurm does, which
 * takes anything but PMIX_SUCCESS from the call for a failure (so
 * PMIX_OPERATION_SUCCEEDED is checked not to come back). */
static pmix_status_t register_job(const char *ns, int nprocs, const char *peers, bool nb)
{
    pmix_status_t rc = PMIx_generate_regex("nodeA", &node_map);
    pmix_status_t rc2 = PMIx_generate_ppn(peers, &proc_map);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2 && NULL != node_map && NULL != proc_map
              && '\0' != node_map[0] && '\0' != proc_map[0],
          "regex: PMIx_generate_regex and PMIx_generate_ppn return maps", "%s / %s", err(rc),
          err(rc2));
    if (PMIX_SUCCESS != rc || PMIX_SUCCESS != rc2) {
        return PMIX_ERROR;
    }
    size_t n = 8 + (size_t) nprocs;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, n);
    uint32_t size = (uint32_t) nprocs, nodes = 1, nodeid = 0;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_NUM_NODES, &nodes, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[4], PMIX_HOSTNAME, "nodeA", PMIX_STRING);
    PMIX_INFO_LOAD(&info[5], PMIX_NODE_MAP, node_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[6], PMIX_PROC_MAP, proc_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[7], PMIX_NODEID, &nodeid, PMIX_UINT32);
    for (int r = 0; r < nprocs; r++) {
        pmix_data_array_t *darray;
        PMIX_DATA_ARRAY_CREATE(darray, 2, PMIX_INFO);
        pmix_info_t *pi = darray->array;
        pmix_rank_t rank = (pmix_rank_t) r;
        uint16_t lrank = (uint16_t) r;
        PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&pi[1], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&info[8 + r], PMIX_PROC_DATA, darray, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(darray);
    }
    if (nb) {
        op_t op;
        op_init(&op);
        rc = PMIx_server_register_nspace(nsbuf(ns).ns, nprocs, info, n, op_cb, &op);
        check(PMIX_SUCCESS == rc,
              "register: PMIx_server_register_nspace with a callback returns PMIX_SUCCESS", "%s",
              err(rc));
        rc = PMIX_SUCCESS == rc ? op_wait(&op) : (op_destroy(&op), rc);
    } else {
        rc = PMIx_server_register_nspace(nsbuf(ns).ns, nprocs, info, n, NULL, NULL);
    }
    PMIX_INFO_FREE(info, n);
    check(PMIX_SUCCESS == rc,
          "regex: PMIx_server_register_nspace accepts the maps in PMIX_NODE_MAP and "
          "PMIX_PROC_MAP",
          "%s", err(rc));
    return rc;
}

/* Registers the clients and starts them; checks the setup_fork environment. */
static bool start_children(void)
{
    pmix_status_t reg = PMIX_SUCCESS;
    for (int r = 0; r < NPROCS && PMIX_SUCCESS == reg; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NS, (pmix_rank_t) r);
        op_t op;
        op_init(&op);
        reg = PMIx_server_register_client(&p, getuid(), getgid(), &server_objects[r], op_cb, &op);
        /* Non-blocking: the callback carries the result. */
        reg = PMIX_SUCCESS == reg ? op_wait(&op) : (op_destroy(&op), reg);
    }
    check(PMIX_SUCCESS == reg,
          "register: PMIx_server_register_client with getuid()/getgid() succeeds", "%s",
          err(reg));
    if (PMIX_SUCCESS != reg) {
        return false;
    }
    bool env_ok = true;
    char why[512] = "";
    for (int r = 0; r < NPROCS; r++) {
        pmix_status_t rc;
        char **env = child_env(NS, r, &rc);
        if (NULL == env) {
            check(false, "setup_fork: PMIx_server_setup_fork succeeds for each rank", "rank %d: %s",
                  r, err(rc));
            return false;
        }
        const char *ns = NULL, *rank = NULL, *addr = NULL, *path = NULL;
        int nns = env_count(env, "PMIX_NAMESPACE", &ns);
        int nrank = env_count(env, "PMIX_RANK", &rank);
        int naddr = env_count(env, "FASTPMIX_SERVER_ADDR", &addr);
        int npath = env_count(env, "PATH", &path);
        char want[16];
        snprintf(want, sizeof want, "%d", r);
        if (1 != nns || 0 != strcmp(ns, NS) || 1 != nrank || 0 != strcmp(rank, want)
            || 1 != naddr || '\0' == addr[0] || 1 != npath
            || 0 != strcmp(path, getenv("PATH"))) {
            env_ok = false;
            snprintf(why, sizeof why, "rank %d: %d PMIX_NAMESPACE (%s), %d PMIX_RANK (%s), %d addr, %d PATH",
                     r, nns, ns ? ns : "-", nrank, rank ? rank : "-", naddr, npath);
        }
        pids[r] = spawn(env, "full");
        free_env(env);
        if (pids[r] < 0) {
            check(false, "setup_fork: fork", "%s", strerror(errno));
            return false;
        }
    }
    check(env_ok,
          "setup_fork: the environment names the namespace, the rank (replacing an inherited "
          "PMIX_RANK) and the server, and keeps the rest",
          "%s", why);
    return true;
}

/* Waits (with a hang guard) until `cond` holds; the lock is held. */
#define WAIT_UNTIL(cond)                                                                   \
    do {                                                                                   \
        struct timespec end_ = deadline(HANG_SECS);                                        \
        while (!(cond)) {                                                                  \
            if (ETIMEDOUT == pthread_cond_timedwait(&st.c, &st.m, &end_)) {                \
                break;                                                             \
            }                                                                              \
        }                                                                                  \
    } while (0)

static int full(void)
{
    before_init();

    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.client_connected2 = up_connected2;
    module.client_finalized = up_finalized;
    module.abort = up_abort;
    module.notify_event = up_notify;
    module.register_events = up_register_events;
    module.deregister_events = up_deregister_events;
    module.job_control = up_job_control;

    char tmpdir[] = "/tmp/rm_server.XXXXXX";
    if (!server_up(&module, tmpdir)) {
        return 1;
    }
    pmix_status_t lost_code = PMIX_ERR_LOST_CONNECTION;
    int lost_ref = PMIx_Register_event_handler(&lost_code, 1, NULL, 0, on_lost, NULL, NULL);
    check(lost_ref >= 0, "events: the host registers a handler for PMIX_ERR_LOST_CONNECTION",
          "%s", err(lost_ref));
    if (PMIX_SUCCESS != register_job(NS, NPROCS, "0,1,2", true) || !start_children()) {
        for (int r = 0; r < NPROCS; r++) {
            if (pids[r] > 0) {
                kill(pids[r], SIGKILL);
                waitpid(pids[r], NULL, 0);
            }
        }
        PMIx_server_finalize();
        return 1;
    }

    /* Rank 0's RM-range event reaches notify_event (after every child
     * fenced); the host answers with an event to the whole namespace. */
    pthread_mutex_lock(&st.m);
    WAIT_UNTIL(st.rm_events > 0);
    int rm_events = st.rm_events;
    pthread_mutex_unlock(&st.m);
    check(rm_events > 0, "notify_event: the host's upcall receives a child's RM-range event",
          "no upcall within %d s", HANG_SECS);
    pmix_proc_t src;
    PMIX_LOAD_PROCID(&src, NS, PMIX_RANK_WILDCARD);
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 2);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_TEXT_MESSAGE, HOST_TEXT, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_AFFECTED_PROC, &src, PMIX_PROC);
    pmix_status_t rc = PMIx_Notify_event(HOST_CODE, &src, PMIX_RANGE_NAMESPACE, info, 2, NULL, NULL);
    PMIX_INFO_FREE(info, 2);
    check(PMIX_SUCCESS == rc,
          "host notify: PMIx_Notify_event from the host to the namespace returns PMIX_SUCCESS",
          "%s", err(rc));

    /* Ranks 0 and 1 end on their own; rank 2 is the restart's (reaped by
     * restart_main) and the restarted one is killed by rank 1's request. */
    int s0 = wait_child(pids[0]);
    int s1 = wait_child(pids[1]);
    char d0[64], d1[64];
    describe_status(s0, d0, sizeof d0);
    describe_status(s1, d1, sizeof d1);
    check(s0 >= 0 && WIFEXITED(s0) && 0 == WEXITSTATUS(s0), "children: rank 0 exits 0", "%s", d0);
    check(s1 >= 0 && WIFEXITED(s1) && 0 == WEXITSTATUS(s1), "children: rank 1 exits 0", "%s", d1);

    pthread_mutex_lock(&st.m);
    WAIT_UNTIL(st.restart_done);
    bool restarted = st.restart_done;
    pid_t fresh = st.restarted_pid;
    int killed_by = st.restart_killed_by;
    pthread_mutex_unlock(&st.m);
    if (restart.started) {
        pthread_join(restart.thread, NULL);
    }
    int s2 = fresh > 0 ? wait_child(fresh) : -1;
    char d2[64];
    describe_status(s2, d2, sizeof d2);

    /* Every client left: 0, 1, the first rank 2 (killed) and the restarted
     * one (killed). */
    pthread_mutex_lock(&st.m);
    WAIT_UNTIL(st.finalized_total >= 2 && st.lost[2] >= 2 && st.deaths[2] >= 2
               && st.dereg_calls > 0);
    pthread_mutex_unlock(&st.m);

    /* ---- what the upcalls saw ---- */
    pthread_mutex_lock(&st.m);
    check(1 == st.connected[0] && 1 == st.connected[1] && 2 == st.connected[2]
              && 0 == st.connected_other,
          "client_connected2: the upcall runs for each connecting child (rank 2 twice: "
          "restarted)",
          "connected %d %d %d, other %d", st.connected[0], st.connected[1], st.connected[2],
          st.connected_other);
    check(0 == st.connected_bad_object && 0 == st.finalized_bad_object,
          "server_object: the upcalls get back the object given to PMIx_server_register_client",
          "%d connected, %d finalized with another object", st.connected_bad_object,
          st.finalized_bad_object);
    check(1 == st.finalized[0], "client_finalized: the upcall runs once for rank 0",
          "%d times", st.finalized[0]);
    check(1 == st.finalized[1], "client_finalized: the upcall runs once for rank 1",
          "%d times", st.finalized[1]);
    check(0 == st.finalized[2],
          "client_finalized: the upcall never runs for a killed rank (it is for PMIx_Finalize)",
          "%d times", st.finalized[2]);
    check(2 == st.lost[2] && 0 == st.lost[0] && 0 == st.lost[1] && 0 == st.lost_bad,
          "lost connection: the server's own handler hears of each killed rank 2 (original and "
          "restarted), the rank as source and affected process",
          "lost %d %d %d, other %d", st.lost[0], st.lost[1], st.lost[2], st.lost_bad);
    check(2 == st.deaths[2] && 0 == st.deaths[0] && 0 == st.deaths[1] && 0 == st.deaths_bad,
          "death: each killed rank 2 reaches notify_event as PMIX_ERR_PROC_ABORTED to its "
          "namespace, the rank as source and affected process",
          "deaths %d %d %d, other %d", st.deaths[0], st.deaths[1], st.deaths[2], st.deaths_bad);
    check(1 == st.rm_events && st.rm_source_ok,
          "notify_event: the RM-range event's source is the notifying child (rm-job-1:0)",
          "%d events, source %s", st.rm_events, st.rm_source);
    check(st.rm_range_ok && st.rm_info_ok,
          "notify_event: the RM-range event keeps its range and its info",
          "range ok %d, info ok %d", st.rm_range_ok, st.rm_info_ok);
    check(0 == st.host_echoes,
          "notify_event: the host's own event is not echoed back to the host", "%d echoes",
          st.host_echoes);
    check(1 == st.ready_events,
          "notify_event: a child's namespace-range event also reaches the host",
          "%d events", st.ready_events);
    check(1 == st.reg_env,
          "register_events: the upcall names PMIX_EVENT_NODE_DOWN once for three registering "
          "children",
          "%d times in %d calls", st.reg_env, st.reg_calls);
    check(0 == st.reg_nonsystem,
          "register_events: codes outside the environment range never reach the host",
          "%d such codes", st.reg_nonsystem);
    check(1 == st.dereg_env,
          "deregister_events: the upcall names PMIX_EVENT_NODE_DOWN once after the last child "
          "left",
          "%d times in %d calls", st.dereg_env, st.dereg_calls);
    check(1 == st.jc_calls && st.jc_requester_ok && st.jc_targets_ok,
          "job_control: the host's upcall gets the requester (rank 1) and the target (rank 2)",
          "%d calls; last: %s", st.jc_calls, st.jc_seen);
    check(st.jc_restart_ok && st.jc_ids_ok,
          "job_control: the upcall gets PMIX_JOB_CTRL_RESTART with the requester's "
          "PMIX_USERID and PMIX_GRPID",
          "restart %d, ids %d", st.jc_restart_ok, st.jc_ids_ok);
    check(restarted && SIGKILL == killed_by && fresh > 0,
          "job_control: the host kills rank 2 with SIGKILL and starts it again",
          "done %d, killed by %d, new pid %d", restarted, killed_by, (int) fresh);
    check(s2 >= 0 && WIFSIGNALED(s2) && SIGKILL == WTERMSIG(s2) && 1 == st.jc_calls,
          "job_control: PMIX_JOB_CTRL_KILL of a local rank is carried out by the server "
          "(SIGKILL) without the host's upcall",
          "restarted rank 2: %s, %d job_control upcalls", d2, st.jc_calls);
    check(0 == st.aborts, "abort: no child aborted", "%d aborts", st.aborts);
    pthread_mutex_unlock(&st.m);

    /* ---- teardown ---- */
    bool dereg_ok = true;
    char why[128] = "";
    for (int r = 0; r < NPROCS; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NS, (pmix_rank_t) r);
        op_t op;
        op_init(&op);
        PMIx_server_deregister_client(&p, op_cb, &op);
        pmix_status_t s = op_wait(&op);
        if (PMIX_SUCCESS != s) {
            dereg_ok = false;
            snprintf(why, sizeof why, "rank %d: %s", r, err(s));
        }
    }
    check(dereg_ok, "teardown: PMIx_server_deregister_client completes with PMIX_SUCCESS", "%s",
          why);
    op_t op;
    op_init(&op);
    PMIx_server_deregister_nspace(nsbuf(NS).ns, op_cb, &op);
    rc = op_wait(&op);
    check(PMIX_SUCCESS == rc,
          "teardown: PMIx_server_deregister_nspace completes with PMIX_SUCCESS", "%s", err(rc));
    /* Slurm's step end: deregistrations with a callback it never waits
     * for, then PMIx_server_finalize at once. Reference 0 was never handed
     * out: refused by the call, and no callback ever. A real reference's
     * callback has run when finalize returns: nothing of the library runs
     * during the host's own teardown. */
    op_t zero, dereg;
    op_init(&zero);
    op_init(&dereg);
    pmix_status_t rc0 = PMIx_Deregister_event_handler(0, op_cb, &zero);
    rc = PMIx_Deregister_event_handler((size_t) lost_ref, op_cb, &dereg);
    server_down(tmpdir);
    pthread_mutex_lock(&zero.m);
    bool zero_called = zero.done;
    pthread_mutex_unlock(&zero.m);
    check(PMIX_ERR_BAD_PARAM == rc0 && !zero_called,
          "teardown: deregistering reference 0 (never handed out) is refused by the call, and "
          "its callback never runs",
          "%s, callback %s", err(rc0), zero_called ? "ran" : "did not run");
    pthread_mutex_lock(&dereg.m);
    bool dereg_called = dereg.done;
    pmix_status_t dereg_status = dereg.status;
    pthread_mutex_unlock(&dereg.m);
    check(PMIX_SUCCESS == rc && dereg_called && PMIX_SUCCESS == dereg_status,
          "teardown: a deregistration's callback has run, with PMIX_SUCCESS, when "
          "PMIx_server_finalize returns",
          "call %s, callback %s (%s)", err(rc), dereg_called ? "ran" : "had not run",
          err(dereg_status));
    op_destroy(&zero);
    op_destroy(&dereg);
    return 0;
}

/* A server whose upcalls are all NULL (the module is static: the server
 * may keep it) and a job of one rank, `ns`:0, registered. False if the
 * server did not start; the registration's status in *rc. */
/* A server with a module of NULL upcalls and a job of one rank, `*p`; the
 * client itself is registered only if `client` (else by the caller). */
static bool one_rank_job(const char *ns, char *tmpdir, pmix_proc_t *p, pmix_status_t *rc,
                         bool client)
{
    static pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    if (!server_up(&module, tmpdir)) {
        return false;
    }
    *rc = register_job(ns, 1, "0", false);
    PMIX_LOAD_PROCID(p, ns, 0);
    if (PMIX_SUCCESS == *rc && client) {
        *rc = PMIx_server_register_client(p, getuid(), getgid(), NULL, NULL, NULL);
    }
    return true;
}

static void one_rank_job_down(const pmix_proc_t *p, const char *tmpdir)
{
    PMIx_server_deregister_client(p, NULL, NULL);
    PMIx_server_deregister_nspace(p->nspace, NULL, NULL);
    server_down(tmpdir);
}

/* Every upcall NULL: what the children get is checked by the child itself
 * (rm_child null); the daemon checks that it ended well. */
static int null_module(void)
{
    char tmpdir[] = "/tmp/rm_server.XXXXXX";
    pmix_proc_t p;
    pmix_status_t rc;
    if (!one_rank_job(NULL_NS, tmpdir, &p, &rc, false)) {
        return 1;
    }
    /* setup_fork and the fork before register_client: an order resource
     * managers use. The child's PMIx_Init waits for the registration. */
    char **env = NULL;
    if (PMIX_SUCCESS == rc) {
        env = child_env(NULL_NS, 0, &rc);
        check(PMIX_SUCCESS == rc,
              "null: PMIx_server_setup_fork before PMIx_server_register_client succeeds", "%s",
              err(rc));
    }
    pid_t pid = PMIX_SUCCESS == rc ? spawn(env, "null") : -1;
    if (pid > 0) {
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
        rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
    }
    check(PMIX_SUCCESS == rc, "null: the server starts a job with a module of NULL upcalls",
          "%s", err(rc));
    if (pid > 0) {
        int s = wait_child(pid);
        char d[64];
        describe_status(s, d, sizeof d);
        check(s >= 0 && WIFEXITED(s) && 0 == WEXITSTATUS(s), "null: the child exits 0", "%s", d);
    }
    free_env(env);
    one_rank_job_down(&p, tmpdir);
    return 0;
}

/* --twonode: a job of 4 ranks on two nodes, registered as Slurm 22.05
 * registers one (docs: /work/shared/reference/hosts.md): this daemon is
 * "nodeA" with ranks 0 and 1; "nodeB" holds ranks 2 and 3. PMIX_NODE_MAP
 * and PMIX_PROC_MAP are strings from PMIx_generate_regex/_ppn; sizes and
 * the node id are uint32; no PMIX_NUM_NODES, no node list; one
 * PMIX_PROC_DATA array per rank built by hand, with PMIX_RANK and
 * PMIX_APPNUM as int, PMIX_HOSTNAME, local and node ranks (uint16) for the
 * local ranks only, and this node's id in every rank's PMIX_NODEID. The
 * child (CHILD twonode NODEMAP PROCMAP, tests/c/client_job_keys.c) reads
 * every key for itself and its peers and checks the values. */
#define KEYS_NS "rm-keys-job"
static int two_nodes(void)
{
    char tmpdir[] = "/tmp/rm_server.XXXXXX";
    static pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    if (!server_up(&module, tmpdir)) {
        return 1;
    }
    pmix_status_t rc = PMIx_generate_regex("nodeA,nodeB", &node_map);
    pmix_status_t rc2 = PMIx_generate_ppn("0,1;2,3", &proc_map);
    check(PMIX_SUCCESS == rc && PMIX_SUCCESS == rc2,
          "twonode: PMIx_generate_regex and PMIx_generate_ppn of two nodes", "%s / %s", err(rc),
          err(rc2));
    size_t n = 10 + 4, k = 0;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, n);
    uint32_t size = 4, lsize = 2, nodeid = 0;
    pmix_rank_t ldr = 0;
    bool spawned = false;
    PMIX_INFO_LOAD(&info[k++], PMIX_SPAWNED, &spawned, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[k++], PMIX_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOBID, "slurm.17.0", PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODEID, &nodeid, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_SIZE, &lsize, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODE_MAP, node_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_PROC_MAP, proc_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_PEERS, "0,1", PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCALLDR, &ldr, PMIX_PROC_RANK);
    for (int r = 0; r < 4; r++) {
        bool local = r < 2;
        size_t m = local ? 6 : 4;
        pmix_info_t *pi = malloc(m * sizeof *pi); /* by hand, as Slurm */
        memset(pi, 0, m * sizeof *pi);
        int rank = r, appnum = 0;
        uint16_t lr = (uint16_t) r;
        PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &rank, PMIX_INT);
        PMIX_INFO_LOAD(&pi[1], PMIX_APPNUM, &appnum, PMIX_INT);
        PMIX_INFO_LOAD(&pi[2], PMIX_HOSTNAME, local ? "nodeA" : "nodeB", PMIX_STRING);
        PMIX_INFO_LOAD(&pi[3], PMIX_NODEID, &nodeid, PMIX_UINT32);
        if (local) {
            PMIX_INFO_LOAD(&pi[4], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
            PMIX_INFO_LOAD(&pi[5], PMIX_NODE_RANK, &lr, PMIX_UINT16);
        }
        pmix_data_array_t d = {.type = PMIX_INFO, .size = m, .array = pi};
        PMIX_INFO_LOAD(&info[k++], PMIX_PROC_DATA, &d, PMIX_DATA_ARRAY);
        for (size_t j = 0; j < m; j++) {
            PMIX_INFO_DESTRUCT(&pi[j]);
        }
        free(pi);
    }
    rc = PMIx_server_register_nspace(nsbuf(KEYS_NS).ns, 2, info, k, NULL, NULL);
    PMIX_INFO_FREE(info, n);
    check(PMIX_SUCCESS == rc,
          "twonode: PMIx_server_register_nspace takes the job as Slurm registers it", "%s",
          err(rc));
    pid_t pids2[2] = {-1, -1};
    for (int r = 0; r < 2 && PMIX_SUCCESS == rc; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, KEYS_NS, (pmix_rank_t) r);
        rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
        char **env = PMIX_SUCCESS == rc ? child_env(KEYS_NS, r, &rc) : NULL;
        if (NULL != env) {
            pids2[r] = spawn(env, "twonode");
            free_env(env);
        }
    }
    for (int r = 0; r < 2; r++) {
        int s = pids2[r] > 0 ? wait_child(pids2[r]) : -1;
        char d[64];
        describe_status(s, d, sizeof d);
        check(s >= 0 && WIFEXITED(s) && 0 == WEXITSTATUS(s),
              r ? "twonode: rank 1 read every key right and exits 0"
                : "twonode: rank 0 read every key right and exits 0",
              "%s", d);
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, KEYS_NS, (pmix_rank_t) r);
        PMIx_server_deregister_client(&p, NULL, NULL);
    }
    PMIx_server_deregister_nspace(nsbuf(KEYS_NS).ns, NULL, NULL);
    server_down(tmpdir);
    return 0;
}

/* --fork: as Slurm and Open MPI's runtime do, PMIx_server_setup_fork is
 * called in the forked child, with *env NULL, while another thread of the
 * daemon keeps the server busy (host notifications, each routed under the
 * server's locks). A lock held by that thread at the fork stays held in the
 * child forever: setup_fork must not wait for it without bound. */
#define FORK_NS "rm-fork-job"
#define FORK_CHILDREN 50

static volatile int storm_stop;

static void *storm(void *arg)
{
    (void) arg;
    pmix_proc_t me;
    PMIX_LOAD_PROCID(&me, FORK_NS, PMIX_RANK_WILDCARD);
    while (!storm_stop) {
        PMIx_Notify_event(PMIX_EXTERNAL_ERR_BASE - 40, &me, PMIX_RANGE_LOCAL, NULL, 0, NULL, NULL);
    }
    return NULL;
}

/* The child: setup_fork into a NULL environment, then exit 0 only if it
 * holds this rank's namespace and rank. */
static void fork_child(const pmix_proc_t *p)
{
    char **env = NULL;
    pmix_status_t rc = PMIx_server_setup_fork(p, &env);
    const char *ns = NULL, *rank = NULL;
    bool good = PMIX_SUCCESS == rc && 1 == env_count(env, "PMIX_NAMESPACE", &ns) &&
                1 == env_count(env, "PMIX_RANK", &rank) && 0 == strcmp(ns, FORK_NS) &&
                0 == strcmp(rank, "0");
    _exit(good ? 0 : 3);
}

static int fork_storm(void)
{
    char tmpdir[] = "/tmp/rm_server.XXXXXX";
    pmix_proc_t p;
    pmix_status_t rc;
    if (!one_rank_job(FORK_NS, tmpdir, &p, &rc, true)) {
        return 1;
    }
    check(PMIX_SUCCESS == rc, "fork: a job of one rank is registered", "%s", err(rc));
    pthread_t t;
    bool storming = PMIX_SUCCESS == rc && 0 == pthread_create(&t, NULL, storm, NULL);
    int good = 0, hung = 0, bad = 0;
    for (int i = 0; storming && i < FORK_CHILDREN; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (0 == pid) {
            fork_child(&p);
        }
        /* A child that waits for a lock held at the fork never ends. */
        int s = pid > 0 ? wait_child_for(pid, 5) : -1;
        if (s < 0) {
            hung++;
            if (hung >= 3) {
                break;
            }
        } else if (WIFEXITED(s) && 0 == WEXITSTATUS(s)) {
            good++;
        } else {
            bad++;
        }
    }
    if (storming) {
        storm_stop = 1;
        pthread_join(t, NULL);
    }
    check(storming && FORK_CHILDREN == good,
          "fork: setup_fork in a forked child, *env NULL, while the server routes events",
          "%d of %d children got their environment, %d hung, %d failed", good, FORK_CHILDREN, hung,
          bad);
    one_rank_job_down(&p, tmpdir);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s CHILD [--null|--fork|--sync|--twonode]\n", argv[0]);
        return 2;
    }
    child_path = argv[1];
    bool null = argc > 2 && 0 == strcmp(argv[2], "--null");
    bool forks = argc > 2 && 0 == strcmp(argv[2], "--fork");
    sync_upcalls = argc > 2 && 0 == strcmp(argv[2], "--sync");
    bool twonode = argc > 2 && 0 == strcmp(argv[2], "--twonode");
    /* A daemon may itself run under PMIx: setup_fork must replace this. */
    setenv("PMIX_RANK", "99", 1);
    if (0 != pthread_create(&wq.thread, NULL, worker_main, NULL)) {
        fprintf(stderr, "pthread_create failed\n");
        return 2;
    }
    int rc = null ? null_module() : forks ? fork_storm() : twonode ? two_nodes() : full();
    stop_worker();
    free(node_map);
    free(proc_map);
    out("done: %d ok, %d failed", fact_ok, fact_failed);
    return (0 == rc && 0 == fact_failed) ? 0 : 1;
}
