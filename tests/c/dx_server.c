/*
 * Two node daemons that embed the fastpmix server (pmix_server.h), joined by
 * a socket, running one job of 4 ranks of tests/c/client_data.c (mode
 * twonode): ranks 0 and 1 on "nodeA" (this process), 2 and 3 on "nodeB" (a
 * copy of it forked before either server starts). Not run under
 * `fastpmix run`: tests/c_data.rs runs it.
 *
 *   dx_server CHILD DIR            the two nodes
 *   dx_server CHILD DIR --nohost   node A alone, with a module whose
 *                                  fence_nb and direct_modex are NULL (not
 *                                  supported): children in mode nohost
 *
 * The hosts carry the data exchange between the nodes: fence_nb sends this
 * node's bytes to the other daemon and completes with both nodes' bytes;
 * direct_modex asks the other daemon, whose reader thread calls
 * PMIx_server_dmodex_request and sends the answer back. The two hosts
 * behave as the real ones do:
 *   - node A completes its upcalls later, from a thread of its own;
 *   - node B completes them inside the upcall, before returning (as Open
 *     MPI's runtime does): PMIX_SUCCESS after the callback, or
 *     PMIX_OPERATION_SUCCEEDED for its 4th fence;
 *   - both fail their 3rd fence as Slurm does on error: the callback with
 *     PMIX_ERR_UNREACH, then -1 (PMIX_ERROR) returned;
 *   - node A fails a direct modex whose directives hold "dx.fail" the same
 *     way.
 * Every callback with data passes a release function; the daemon checks
 * the library called each one. Each daemon frees the data its fence_nb
 * got, as Open MPI's runtime does, after checking it was left intact. After the children ended, node A checks
 * PMIx_server_dmodex_request's arguments and answers.
 *
 * Each daemon prints "ok <fact>" or "FAIL <fact> (<details>)" with
 * "node A: " or "node B: " in front, the children their own lines with
 * "rank N: "; the process exits 1 if a fact of either node failed.
 */
#define _GNU_SOURCE
#include <pmix_server.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "facts.h"

extern char **environ;

#define NS "dx-job"
#define HANG_SECS 60
#define MAXF 16
#define MAXD 64

static int node; /* 0: node A, 1: node B */
static int sock; /* to the other daemon */
static const char *child_path, *dir, *child_mode = "twonode";

/* ---- what the upcalls, the reader thread and node A's completer share ---- */
typedef struct {
    char *data;
    size_t len;
} buf_t;

static struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    /* fence_nb upcalls, numbered from 1 */
    int fences;
    bool fence_procs_ok[MAXF], fence_collect[MAXF];
    size_t fence_ndata[MAXF];
    /* the data each fence_nb got (the host's to free), and a copy made
     * during the upcall */
    buf_t given[MAXF], given_copy[MAXF];
    buf_t peer[MAXF]; /* the other node's contribution to fence k */
    bool peer_in[MAXF];
    /* node A: a fence waiting for the other node */
    bool fwait[MAXF];
    buf_t mine[MAXF];
    pmix_modex_cbfunc_t fcb[MAXF];
    void *fcbdata[MAXF];
    /* direct_modex upcalls sent to the other node */
    struct {
        pmix_modex_cbfunc_t cb;
        void *cbdata;
        bool waiting; /* node A: the completer delivers it */
        bool answered;
        int status;
        buf_t data;
    } dm[MAXD];
    int ndm;
    int dmodex_upcalls, dmodex_bad_proc, dmodex_failed;
    int inside;      /* node B: completions made inside an upcall */
    int served;      /* answers of PMIx_server_dmodex_request sent back */
    int served_late; /* ... for rank 2 with data (asked before it committed) */
    int release_given, releases, released_inside;
    bool peer_ready, peer_end, stop;
} st = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

/* Waits on st.c (st.m held) until *flag or HANG_SECS pass; returns *flag. */
static bool wait_for(const bool *flag)
{
    struct timespec end = deadline(HANG_SECS);
    while (!*flag) {
        if (ETIMEDOUT == pthread_cond_timedwait(&st.c, &st.m, &end)) {
            break;
        }
    }
    return *flag;
}

/* ---- frames between the daemons ---- */
typedef struct {
    uint32_t kind; /* 'J' job registered, 'F' fence data, 'D' direct modex request,
                      'R' its answer, 'E' end */
    uint32_t id;   /* fence number, or request number */
    int32_t status; /* 'D': the rank asked for; 'R': the answer's status */
    uint32_t pad;
    uint64_t len;
} frame_t;

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

static bool io_all(bool rd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t k = rd ? read(sock, c, n) : write(sock, c, n);
        if (k < 0 && EINTR == errno) {
            continue;
        }
        if (k <= 0) {
            return false;
        }
        c += k;
        n -= (size_t) k;
    }
    return true;
}

static void send_frame(char kind, uint32_t id, int32_t status, const void *data, size_t len)
{
    frame_t f = {.kind = (uint32_t) kind, .id = id, .status = status, .len = len};
    pthread_mutex_lock(&write_lock);
    bool ok = io_all(false, &f, sizeof f) && (0 == len || io_all(false, (void *) data, len));
    pthread_mutex_unlock(&write_lock);
    if (!ok) {
        check(false, "frames reach the other daemon", "write: %s", strerror(errno));
    }
}

/* ---- calling the library back ---- */
/* Set while this thread is inside a modex callback `give` made: Slurm
 * calls it with its collective's lock held, and its release function takes
 * that lock, so a release from inside the callback deadlocks it. */
static _Thread_local bool in_callback;

static void release(void *cbdata)
{
    free(cbdata);
    pthread_mutex_lock(&st.m);
    st.releases++;
    st.released_inside += in_callback;
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
}

/* Calls a modex callback with a..b (a malloc'd copy, released through the
 * library's call of `release`). */
static void give(pmix_modex_cbfunc_t cb, void *cbdata, pmix_status_t status, const buf_t *a,
                 const buf_t *b)
{
    size_t n = a->len + b->len;
    char *copy = malloc(n ? n : 1);
    if (a->len) {
        memcpy(copy, a->data, a->len);
    }
    if (b->len) {
        memcpy(copy + a->len, b->data, b->len);
    }
    pthread_mutex_lock(&st.m);
    st.release_given++;
    pthread_mutex_unlock(&st.m);
    in_callback = true;
    cb(status, copy, n, cbdata, release, copy);
    in_callback = false;
}

/* ---- the module ---- */
static pmix_status_t up_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    bool collect = false;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA)) {
            collect = PMIX_INFO_TRUE(&info[i]);
        }
    }
    pthread_mutex_lock(&st.m);
    int k = ++st.fences;
    if (k >= MAXF) {
        pthread_mutex_unlock(&st.m);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    st.fence_procs_ok[k] = 1 == nprocs && PMIX_RANK_WILDCARD == procs[0].rank &&
                           0 == strcmp(procs[0].nspace, NS);
    st.fence_collect[k] = collect;
    st.fence_ndata[k] = ndata;
    st.given[k] = (buf_t){data, ndata};
    st.given_copy[k] = (buf_t){malloc(ndata ? ndata : 1), ndata};
    if (ndata) {
        memcpy(st.given_copy[k].data, data, ndata);
    }
    pthread_mutex_unlock(&st.m);
    if (3 == k) {
        /* Slurm 22.05 on error: the callback, then an error returned. */
        cbfunc(PMIX_ERR_UNREACH, NULL, 0, cbdata, NULL, NULL);
        return PMIX_ERROR;
    }
    send_frame('F', (uint32_t) k, 0, data, ndata);
    pthread_mutex_lock(&st.m);
    if (0 == node) {
        /* Later, from the completer thread. */
        st.mine[k].data = malloc(ndata ? ndata : 1);
        if (ndata) {
            memcpy(st.mine[k].data, data, ndata);
        }
        st.mine[k].len = ndata;
        st.fcb[k] = cbfunc;
        st.fcbdata[k] = cbdata;
        st.fwait[k] = true;
        pthread_cond_broadcast(&st.c);
        pthread_mutex_unlock(&st.m);
        return PMIX_SUCCESS;
    }
    /* Node B: inside the upcall, as Open MPI's runtime does. */
    bool in = wait_for(&st.peer_in[k]);
    buf_t theirs = st.peer[k];
    st.inside += in;
    pthread_mutex_unlock(&st.m);
    if (!in) {
        return PMIX_ERR_TIMEOUT;
    }
    buf_t mine = {data, ndata};
    give(cbfunc, cbdata, PMIX_SUCCESS, &mine, &theirs);
    return 4 == k ? PMIX_OPERATION_SUCCEEDED : PMIX_SUCCESS;
}

static pmix_status_t up_dmodex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    bool fail = false;
    for (size_t i = 0; i < ninfo; i++) {
        fail |= PMIX_CHECK_KEY(&info[i], "dx.fail");
    }
    bool theirs = 0 == strcmp(proc->nspace, NS) && proc->rank < 4 &&
                  (int) (proc->rank / 2) != node;
    pthread_mutex_lock(&st.m);
    st.dmodex_upcalls++;
    st.dmodex_bad_proc += !theirs;
    st.dmodex_failed += fail;
    int id = st.ndm++;
    pthread_mutex_unlock(&st.m);
    if (fail || !theirs || id >= MAXD) {
        /* As Slurm on error: the callback, then an error returned. */
        cbfunc(PMIX_ERR_UNREACH, NULL, 0, cbdata, NULL, NULL);
        return PMIX_ERROR;
    }
    pthread_mutex_lock(&st.m);
    st.dm[id].cb = cbfunc;
    st.dm[id].cbdata = cbdata;
    st.dm[id].waiting = 0 == node;
    pthread_mutex_unlock(&st.m);
    send_frame('D', (uint32_t) id, (int32_t) proc->rank, NULL, 0);
    if (0 == node) {
        return PMIX_SUCCESS;
    }
    /* Node B: wait for the answer and complete inside the upcall. */
    pthread_mutex_lock(&st.m);
    bool in = wait_for(&st.dm[id].answered);
    int status = st.dm[id].status;
    buf_t data = st.dm[id].data;
    st.inside += in;
    pthread_mutex_unlock(&st.m);
    if (!in) {
        return PMIX_ERR_TIMEOUT;
    }
    buf_t none = {NULL, 0};
    give(cbfunc, cbdata, status, &data, &none);
    return PMIX_SUCCESS;
}

/* ---- node A's completer thread ---- */
static void *completer(void *arg)
{
    (void) arg;
    pthread_mutex_lock(&st.m);
    while (!st.stop) {
        bool did = false;
        for (int k = 1; k < MAXF; k++) {
            if (st.fwait[k] && st.peer_in[k]) {
                st.fwait[k] = false;
                buf_t mine = st.mine[k], theirs = st.peer[k];
                pthread_mutex_unlock(&st.m);
                give(st.fcb[k], st.fcbdata[k], PMIX_SUCCESS, &mine, &theirs);
                free(mine.data);
                pthread_mutex_lock(&st.m);
                did = true;
            }
        }
        for (int id = 0; id < st.ndm && id < MAXD; id++) {
            if (st.dm[id].waiting && st.dm[id].answered) {
                st.dm[id].waiting = false;
                buf_t data = st.dm[id].data, none = {NULL, 0};
                pthread_mutex_unlock(&st.m);
                give(st.dm[id].cb, st.dm[id].cbdata, st.dm[id].status, &data, &none);
                pthread_mutex_lock(&st.m);
                did = true;
            }
        }
        if (!did) {
            pthread_cond_wait(&st.c, &st.m);
        }
    }
    pthread_mutex_unlock(&st.m);
    return NULL;
}

/* ---- the reader thread: what the other daemon sends ---- */
typedef struct {
    uint32_t id;
    pmix_rank_t rank;
} asked_t;

static void served(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    asked_t *q = cbdata;
    send_frame('R', q->id, status, data, sz);
    pthread_mutex_lock(&st.m);
    st.served++;
    st.served_late += 2 == q->rank && PMIX_SUCCESS == status && sz > 0;
    pthread_mutex_unlock(&st.m);
    free(q);
}

static void touch_file(const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (NULL != f) {
        fclose(f);
    }
}

static void *reader(void *arg)
{
    (void) arg;
    frame_t f;
    while (io_all(true, &f, sizeof f)) {
        char *data = NULL;
        if (f.len > 0) {
            data = malloc(f.len);
            if (NULL == data || !io_all(true, data, f.len)) {
                free(data);
                break;
            }
        }
        if ('F' == f.kind && f.id < MAXF) {
            pthread_mutex_lock(&st.m);
            st.peer[f.id] = (buf_t){data, f.len};
            st.peer_in[f.id] = true;
            data = NULL;
            pthread_cond_broadcast(&st.c);
            pthread_mutex_unlock(&st.m);
        } else if ('D' == f.kind) {
            asked_t *q = malloc(sizeof *q);
            q->id = f.id;
            q->rank = (pmix_rank_t) f.status;
            pmix_rank_t rank = q->rank;
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, NS, rank);
            pmix_status_t rc = PMIx_server_dmodex_request(&p, served, q);
            if (PMIX_SUCCESS != rc) {
                send_frame('R', f.id, rc, NULL, 0);
                free(q);
            }
            /* Rank 2 of client_data.c commits only once this exists. */
            char name[64];
            snprintf(name, sizeof name, "dmodex_asked.%u", rank);
            touch_file(name);
        } else if ('R' == f.kind && f.id < MAXD) {
            pthread_mutex_lock(&st.m);
            st.dm[f.id].status = f.status;
            st.dm[f.id].data = (buf_t){data, f.len};
            data = NULL;
            st.dm[f.id].answered = true;
            pthread_cond_broadcast(&st.c);
            pthread_mutex_unlock(&st.m);
        } else if ('J' == f.kind) {
            pthread_mutex_lock(&st.m);
            st.peer_ready = true;
            pthread_cond_broadcast(&st.c);
            pthread_mutex_unlock(&st.m);
        } else if ('E' == f.kind) {
            pthread_mutex_lock(&st.m);
            st.peer_end = true;
            pthread_cond_broadcast(&st.c);
            pthread_mutex_unlock(&st.m);
        }
        free(data);
    }
    pthread_mutex_lock(&st.m);
    st.peer_end = true;
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    return NULL;
}

/* ---- children ---- */
typedef struct {
    pmix_nspace_t ns;
} nsbuf_t;

static char **child_env(pmix_rank_t rank, pmix_status_t *rc)
{
    size_t n = 0;
    while (NULL != environ[n]) {
        n++;
    }
    char **env = calloc(n + 1, sizeof *env);
    for (size_t i = 0; i < n; i++) {
        env[i] = strdup(environ[i]);
    }
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, NS, rank);
    *rc = PMIx_server_setup_fork(&p, &env);
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; NULL != env && NULL != env[i]; i++) {
        free(env[i]);
    }
    free(env);
}

static pid_t spawn(char **env)
{
    char *argv[] = {(char *) child_path, (char *) dir, (char *) child_mode, NULL};
    fflush(stdout);
    pid_t pid = fork();
    if (0 == pid) {
        execve(child_path, argv, env);
        _exit(127);
    }
    return pid;
}

/* waitpid with a hang guard: the raw status, or -1 (the pid is killed). */
static int wait_child(pid_t pid)
{
    int status;
    for (int i = 0; i < HANG_SECS * 2 * 200; i++) {
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

static bool exited_0(int s)
{
    return s >= 0 && WIFEXITED(s) && 0 == WEXITSTATUS(s);
}

static pmix_status_t register_job(void)
{
    char *node_map = NULL, *proc_map = NULL;
    pmix_status_t rc = PMIx_generate_regex("nodeA,nodeB", &node_map);
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_generate_ppn("0,1;2,3", &proc_map);
    }
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    uint32_t size = 4, nodeid = (uint32_t) node;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 5);
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_NODE_MAP, node_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_PROC_MAP, proc_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[3], PMIX_LOCAL_PEERS, 0 == node ? "0,1" : "2,3", PMIX_STRING);
    PMIX_INFO_LOAD(&info[4], PMIX_NODEID, &nodeid, PMIX_UINT32);
    nsbuf_t ns;
    PMIX_LOAD_NSPACE(ns.ns, NS);
    rc = PMIx_server_register_nspace(ns.ns, 2, info, 5, NULL, NULL);
    PMIX_INFO_FREE(info, 5);
    free(node_map);
    free(proc_map);
    return rc;
}

/* ---- PMIx_server_dmodex_request from the host, after the children ended ---- */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    int calls;
    pmix_status_t status;
    size_t sz;
    bool returned; /* the request had returned when the answer came */
} answer_t;

static atomic_int in_request; /* a PMIx_server_dmodex_request has not returned */

static void answered(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    (void) data;
    answer_t *a = cbdata;
    /* The asker holds `m` from before its call until it waits for this
     * answer, after the call returned: taken here, the call is over (an
     * error-checking mutex says EDEADLK if this ran inside the call, on
     * the asker's own thread). */
    int e = pthread_mutex_lock(&a->m);
    bool returned = 0 == e && !atomic_load(&in_request);
    a->returned = returned;
    a->calls++;
    a->status = status;
    a->sz = sz;
    pthread_cond_broadcast(&a->c);
    if (0 == e) {
        pthread_mutex_unlock(&a->m);
    }
}

/* Asks for `rank`; waits for the answer. */
static pmix_status_t ask(pmix_rank_t rank, answer_t *a)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&a->m, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_cond_init(&a->c, NULL);
    a->calls = 0;
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, NS, rank);
    pthread_mutex_lock(&a->m);
    atomic_store(&in_request, 1);
    pmix_status_t rc = PMIx_server_dmodex_request(&p, answered, a);
    atomic_store(&in_request, 0);
    struct timespec end = deadline(HANG_SECS);
    while (PMIX_SUCCESS == rc && 0 == a->calls) {
        if (ETIMEDOUT == pthread_cond_timedwait(&a->c, &a->m, &end)) {
            break;
        }
    }
    pthread_mutex_unlock(&a->m);
    return rc;
}

static void dmodex_request_checks(void)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, NS, PMIX_RANK_WILDCARD);
    pmix_status_t r1 = PMIx_server_dmodex_request(NULL, answered, NULL);
    pmix_status_t r2 = PMIx_server_dmodex_request(&wild, NULL, NULL);
    pmix_status_t r3 = PMIx_server_dmodex_request(&wild, answered, NULL);
    check(PMIX_ERR_BAD_PARAM == r1 && PMIX_ERR_BAD_PARAM == r2 && PMIX_ERR_BAD_PARAM == r3,
          "PMIx_server_dmodex_request with a NULL proc, a NULL callback or the wildcard rank "
          "is PMIX_ERR_BAD_PARAM",
          "%s %s %s", err(r1), err(r2), err(r3));
    static answer_t mine, other;
    pmix_status_t rc = ask(0, &mine);
    check(PMIX_SUCCESS == rc && 1 == mine.calls && PMIX_SUCCESS == mine.status && mine.sz > 0 &&
              mine.returned,
          "PMIx_server_dmodex_request of a local rank that committed, then finalized, answers "
          "with its data after returning",
          "rc %s, %d calls, %s, %zu bytes, after return %d", err(rc), mine.calls,
          err(mine.status), mine.sz, mine.returned);
    rc = ask(2, &other);
    check(PMIX_SUCCESS == rc && 1 == other.calls && PMIX_ERR_NOT_FOUND == other.status &&
              0 == other.sz && other.returned,
          "PMIx_server_dmodex_request of a rank that is not a client here answers "
          "PMIX_ERR_NOT_FOUND",
          "rc %s, %d calls, %s, %zu bytes", err(rc), other.calls, err(other.status), other.sz);
}

static int node_main(void)
{
    snprintf(fact_prefix, sizeof fact_prefix, "node %c: ", 'A' + node);
    if (0 == node) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NS, 0);
        pmix_status_t rc = PMIx_server_dmodex_request(&p, answered, NULL);
        check(PMIX_ERR_INIT == rc,
              "PMIx_server_dmodex_request before PMIx_server_init is PMIX_ERR_INIT", "%s",
              err(rc));
    }
    char tmpdir[] = "/tmp/dx_server.XXXXXX";
    if (NULL == mkdtemp(tmpdir)) {
        check(false, "mkdtemp", "%s", strerror(errno));
        return 1;
    }
    static pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.fence_nb = up_fence;
    module.direct_modex = up_dmodex;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&module, info, 1);
    PMIX_INFO_FREE(info, 1);
    check(PMIX_SUCCESS == rc, "PMIx_server_init with fence_nb and direct_modex", "%s", err(rc));
    if (PMIX_SUCCESS != rc) {
        return 1;
    }
    rc = register_job();
    check(PMIX_SUCCESS == rc, "the job registered: 4 ranks, 2 on each node", "%s", err(rc));
    pthread_t rd, cp;
    pthread_create(&rd, NULL, reader, NULL);
    if (0 == node) {
        pthread_create(&cp, NULL, completer, NULL);
    }
    /* The other node's job must be registered before any child asks it. */
    send_frame('J', 0, 0, NULL, 0);
    pthread_mutex_lock(&st.m);
    bool ready = wait_for(&st.peer_ready);
    pthread_mutex_unlock(&st.m);
    check(ready, "the other daemon registered the job", "timed out");
    pid_t pids[2] = {-1, -1};
    for (int i = 0; i < 2 && PMIX_SUCCESS == rc; i++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NS, (pmix_rank_t) (2 * node + i));
        rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
        char **env = PMIX_SUCCESS == rc ? child_env(p.rank, &rc) : NULL;
        if (PMIX_SUCCESS == rc) {
            pids[i] = spawn(env);
        }
        free_env(env);
    }
    check(PMIX_SUCCESS == rc, "clients registered and started", "%s", err(rc));
    for (int i = 0; i < 2; i++) {
        int s = pids[i] > 0 ? wait_child(pids[i]) : -1;
        check(exited_0(s), i ? "the second child exits 0" : "the first child exits 0",
              "status %#x", s);
    }

    pthread_mutex_lock(&st.m);
    bool procs_ok = true, collect_ok = true;
    for (int k = 1; k <= st.fences && k < MAXF; k++) {
        procs_ok &= st.fence_procs_ok[k];
        collect_ok &= st.fence_collect[k] == (2 == k) && (st.fence_ndata[k] > 0) == (2 == k);
    }
    check(5 == st.fences && procs_ok && collect_ok,
          "fence_nb is called once per fence, with the job's wildcard, and with "
          "PMIX_COLLECT_DATA and this node's data only for the collecting one",
          "%d calls, procs %d, collect %d", st.fences, procs_ok, collect_ok);
    check(st.dmodex_upcalls >= 1 && 0 == st.dmodex_bad_proc &&
              st.dmodex_failed == (0 == node ? 1 : 0),
          "direct_modex is called for processes of the other node only, with the Get's "
          "directives",
          "%d calls, %d for a wrong process, %d failed", st.dmodex_upcalls, st.dmodex_bad_proc,
          st.dmodex_failed);
    if (1 == node) {
        check(st.inside >= 4,
              "completions inside the upcall (fences, direct modex) are taken", "%d",
              st.inside);
        check(1 == st.served_late,
              "PMIx_server_dmodex_request made before the rank committed is answered with its "
              "data once it commits",
              "%d answers for rank 2 with data", st.served_late);
    }
    /* Released after the callback returned, on the library's own thread:
     * wait for the last ones. */
    struct timespec rend = deadline(HANG_SECS);
    while (st.releases < st.release_given
           && ETIMEDOUT != pthread_cond_timedwait(&st.c, &st.m, &rend)) {
    }
    check(st.releases == st.release_given && st.release_given > 0,
          "the library calls the release function of every callback that passed one",
          "%d of %d", st.releases, st.release_given);
    check(0 == st.released_inside,
          "the library never calls a release function inside the callback that passed it "
          "(Slurm's collectives call it with a lock held that their release function takes)",
          "%d of %d released inside", st.released_inside, st.release_given);
    /* The fence data is the host's, as OpenPMIx hands it over and Open
     * MPI's runtime takes it (its collective buffer adopts and frees the
     * pointer): the library must not free it after the upcall. */
    int intact = 0, with_data = 0;
    for (int k = 1; k <= st.fences && k < MAXF; k++) {
        if (st.given[k].len > 0) {
            with_data++;
            intact += 0 == memcmp(st.given[k].data, st.given_copy[k].data, st.given[k].len);
        }
        free(st.given[k].data);
        free(st.given_copy[k].data);
    }
    check(with_data > 0 && intact == with_data,
          "the data fence_nb gets is the host's: intact after the fence completed, freed by the "
          "host",
          "%d of %d intact", intact, with_data);
    pthread_mutex_unlock(&st.m);

    if (0 == node) {
        dmodex_request_checks();
    }
    /* The other node's server may still be asked for this one's data. */
    send_frame('E', 0, 0, NULL, 0);
    pthread_mutex_lock(&st.m);
    bool ended = wait_for(&st.peer_end);
    st.stop = true;
    pthread_cond_broadcast(&st.c);
    pthread_mutex_unlock(&st.m);
    check(ended, "the other daemon finished", "timed out");
    if (0 == node) {
        pthread_join(cp, NULL);
    }
    for (int i = 0; i < 2; i++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NS, (pmix_rank_t) (2 * node + i));
        PMIx_server_deregister_client(&p, NULL, NULL);
    }
    nsbuf_t ns;
    PMIX_LOAD_NSPACE(ns.ns, NS);
    PMIx_server_deregister_nspace(ns.ns, NULL, NULL);
    rc = PMIx_server_finalize();
    check(PMIX_SUCCESS == rc && 0 == rmdir(tmpdir),
          "PMIx_server_finalize, leaving PMIX_SERVER_TMPDIR empty", "%s", err(rc));
    shutdown(sock, SHUT_RDWR);
    pthread_join(rd, NULL);
    for (int k = 0; k < MAXF; k++) {
        free(st.peer[k].data);
    }
    for (int id = 0; id < MAXD; id++) {
        free(st.dm[id].data.data);
    }
    return fact_failed ? 1 : 0;
}

/* --nohost: node A alone; the job still has ranks 2 and 3 on node B, so its
 * fences and Gets of them need a host the module does not provide. */
static int nohost_main(void)
{
    snprintf(fact_prefix, sizeof fact_prefix, "nohost: ");
    child_mode = "nohost";
    char tmpdir[] = "/tmp/dx_server.XXXXXX";
    if (NULL == mkdtemp(tmpdir)) {
        check(false, "mkdtemp", "%s", strerror(errno));
        return 1;
    }
    static pmix_server_module_t module; /* every upcall NULL */
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&module, info, 1);
    PMIX_INFO_FREE(info, 1);
    if (PMIX_SUCCESS == rc) {
        rc = register_job();
    }
    check(PMIX_SUCCESS == rc, "PMIx_server_init and the job registered", "%s", err(rc));
    pid_t pids[2] = {-1, -1};
    for (int i = 0; i < 2 && PMIX_SUCCESS == rc; i++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NS, (pmix_rank_t) i);
        rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
        char **env = PMIX_SUCCESS == rc ? child_env(p.rank, &rc) : NULL;
        if (PMIX_SUCCESS == rc) {
            pids[i] = spawn(env);
        }
        free_env(env);
    }
    for (int i = 0; i < 2; i++) {
        int s = pids[i] > 0 ? wait_child(pids[i]) : -1;
        check(exited_0(s), i ? "the second child exits 0" : "the first child exits 0",
              "status %#x", s);
    }
    rc = PMIx_server_finalize();
    check(PMIX_SUCCESS == rc && 0 == rmdir(tmpdir),
          "PMIx_server_finalize, leaving PMIX_SERVER_TMPDIR empty", "%s", err(rc));
    return fact_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (3 != argc && !(4 == argc && 0 == strcmp(argv[3], "--nohost"))) {
        fprintf(stderr, "usage: dx_server CHILD DIR [--nohost]\n");
        return 2;
    }
    child_path = argv[1];
    dir = argv[2];
    if (4 == argc) {
        return nohost_main();
    }
    int sv[2];
    if (0 != socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
        perror("socketpair");
        return 2;
    }
    fflush(stdout);
    pid_t b = fork();
    if (0 == b) {
        close(sv[0]);
        node = 1;
        sock = sv[1];
        exit(node_main());
    }
    close(sv[1]);
    node = 0;
    sock = sv[0];
    int rc = node_main();
    int s = wait_child(b);
    check(exited_0(s), "node B's daemon exits 0", "status %#x", s);
    return rc || fact_failed ? 1 : 0;
}
