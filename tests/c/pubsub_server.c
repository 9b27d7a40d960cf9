/*
 * A node daemon embedding the fastpmix server (pmix_server.h) whose module
 * implements publish, lookup, unpublish, spawn, connect and disconnect the
 * way Open MPI's runtime does: a data server in the daemon, most upcalls
 * completed inside the upcall, before it returns. It starts the two ranks
 * of tests/c/pubsub_client.c. Not run under `fastpmix run`:
 * tests/c_pubsub.rs runs it.
 *
 *   pubsub_server CHILD            the module with the six upcalls
 *   pubsub_server CHILD --nohost   every upcall NULL (children: "nohost")
 *
 * How each upcall completes:
 *   publish     stores, calls back inside the upcall, returns PMIX_SUCCESS;
 *               then calls back the lookups waiting for what it stored;
 *   lookup      found: calls back inside the upcall with the items; not
 *               found with PMIX_WAIT: waits for a publish; else returns
 *               PMIX_ERR_NOT_FOUND without calling back;
 *   unpublish   removes, returns PMIX_OPERATION_SUCCEEDED (no callback);
 *   spawn       calls back later, from a thread of its own, with
 *               "spawned-N";
 *   connect,    call back inside the upcall.
 *   disconnect
 * Prints "daemon: ok FACT" / "daemon: FAIL FACT (details)"; the children
 * print their own; exits 1 if a fact failed.
 */
#define _GNU_SOURCE
#include <pmix_server.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "facts.h"

extern char **environ;

#define NS "ps-job"
#define MAXK 16

static const char *child_path, *child_mode = "host";
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static struct {
    char key[PMIX_MAX_KEYLEN + 1];
    char value[64];
    pmix_proc_t proc;
} items[MAXK];
static int nitems;

static struct {
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_lookup_cbfunc_t cb;
    void *cbdata;
} waiting[MAXK];
static int nwaiting;

static struct {
    int publish, lookup, unpublish, spawn, connect, disconnect;
    bool publish_ok, unpublish_all, spawn_ok, procs_ok;
} seen = {.procs_ok = true};

static int find(const char *key)
{
    for (int i = 0; i < nitems; i++) {
        if (0 == strcmp(items[i].key, key)) {
            return i;
        }
    }
    return -1;
}

/* Calls `cb` with item `i` (m held by the caller, released around it). */
static void answer(int i, pmix_lookup_cbfunc_t cb, void *cbdata)
{
    pmix_pdata_t pd;
    PMIX_PDATA_LOAD(&pd, &items[i].proc, items[i].key, items[i].value, PMIX_STRING);
    pthread_mutex_unlock(&m);
    cb(PMIX_SUCCESS, &pd, 1, cbdata);
    pthread_mutex_lock(&m);
    PMIX_PDATA_DESTRUCT(&pd);
}

static pmix_status_t up_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    bool uid = false, range = false, persist = false;
    pthread_mutex_lock(&m);
    seen.publish++;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_USERID)) {
            uid = PMIX_UINT32 == info[i].value.type && getuid() == info[i].value.data.uint32;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_RANGE)) {
            range = PMIX_RANGE_SESSION == info[i].value.data.range;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE)) {
            persist = PMIX_PERSIST_APP == info[i].value.data.uint8;
        } else if (PMIX_STRING == info[i].value.type && nitems < MAXK &&
                   0 != strncmp(info[i].key, "pmix.", 5)) {
            int k = find(info[i].key);
            k = k < 0 ? nitems++ : k;
            snprintf(items[k].key, sizeof items[k].key, "%s", info[i].key);
            snprintf(items[k].value, sizeof items[k].value, "%s", info[i].value.data.string);
            PMIX_XFER_PROCID(&items[k].proc, proc);
        }
    }
    if (1 == seen.publish) {
        seen.publish_ok = uid && range && persist && 0 == proc->rank &&
                          PMIX_CHECK_NSPACE(proc->nspace, NS);
    }
    pthread_mutex_unlock(&m);
    cbfunc(PMIX_SUCCESS, cbdata); /* inside the upcall */
    pthread_mutex_lock(&m);
    for (int w = 0; w < nwaiting;) {
        int i = find(waiting[w].key);
        if (i < 0) {
            w++;
            continue;
        }
        pmix_lookup_cbfunc_t cb = waiting[w].cb;
        void *d = waiting[w].cbdata;
        waiting[w] = waiting[--nwaiting];
        answer(i, cb, d);
    }
    pthread_mutex_unlock(&m);
    return PMIX_SUCCESS;
}

static pmix_status_t up_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    (void) proc;
    bool wait = false;
    for (size_t i = 0; i < ninfo; i++) {
        wait |= PMIX_CHECK_KEY(&info[i], PMIX_WAIT);
    }
    pthread_mutex_lock(&m);
    seen.lookup++;
    int i = NULL == keys || NULL == keys[0] ? -1 : find(keys[0]);
    if (i >= 0) {
        answer(i, cbfunc, cbdata); /* inside the upcall */
        pthread_mutex_unlock(&m);
        return PMIX_SUCCESS;
    }
    if (wait && NULL != keys && NULL != keys[0] && nwaiting < MAXK) {
        snprintf(waiting[nwaiting].key, sizeof waiting[nwaiting].key, "%s", keys[0]);
        waiting[nwaiting].cb = cbfunc;
        waiting[nwaiting].cbdata = cbdata;
        nwaiting++;
        pthread_mutex_unlock(&m);
        return PMIX_SUCCESS;
    }
    pthread_mutex_unlock(&m);
    return PMIX_ERR_NOT_FOUND; /* no callback */
}

static pmix_status_t up_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) info, (void) ninfo, (void) cbfunc, (void) cbdata;
    pthread_mutex_lock(&m);
    seen.unpublish++;
    seen.unpublish_all |= NULL == keys;
    for (int i = 0; i < nitems;) {
        bool named = NULL == keys;
        for (size_t k = 0; NULL != keys && NULL != keys[k]; k++) {
            named |= 0 == strcmp(keys[k], items[i].key);
        }
        if (named && PMIX_CHECK_PROCID(&items[i].proc, proc)) {
            items[i] = items[--nitems];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&m);
    return PMIX_OPERATION_SUCCEEDED;
}

typedef struct {
    pmix_spawn_cbfunc_t cb;
    void *cbdata;
    int n;
} later_t;

static void *spawn_later(void *arg)
{
    later_t *l = arg;
    struct timespec ts = {0, 20000000L};
    nanosleep(&ts, NULL);
    pmix_nspace_t ns;
    snprintf(ns, sizeof ns, "spawned-%d", l->n);
    l->cb(PMIX_SUCCESS, ns, l->cbdata);
    free(l);
    return NULL;
}

static pmix_status_t up_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata)
{
    (void) job_info, (void) ninfo;
    later_t *l = malloc(sizeof *l);
    pthread_mutex_lock(&m);
    l->n = ++seen.spawn;
    if (1 == l->n) {
        seen.spawn_ok = 1 == napps && 0 == proc->rank && 0 == strcmp(apps[0].cmd, "/bin/true") &&
                        2 == apps[0].maxprocs && NULL != apps[0].argv &&
                        2 == PMIx_Argv_count(apps[0].argv) &&
                        0 == strcmp(apps[0].argv[1], "-x");
    }
    pthread_mutex_unlock(&m);
    l->cb = cbfunc;
    l->cbdata = cbdata;
    pthread_t t;
    pthread_create(&t, NULL, spawn_later, l);
    pthread_detach(t);
    return PMIX_SUCCESS;
}

static pmix_status_t up_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) info, (void) ninfo;
    pthread_mutex_lock(&m);
    seen.connect++;
    seen.procs_ok &= 2 == nprocs && 0 == procs[0].rank && 1 == procs[1].rank;
    pthread_mutex_unlock(&m);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t up_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void) info, (void) ninfo;
    pthread_mutex_lock(&m);
    seen.disconnect++;
    seen.procs_ok &= 2 == nprocs && 0 == procs[0].rank && 1 == procs[1].rank;
    pthread_mutex_unlock(&m);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pid_t start(pmix_rank_t rank)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, NS, rank);
    pmix_status_t rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
    size_t n = 0;
    while (NULL != environ[n]) {
        n++;
    }
    char **env = calloc(n + 1, sizeof *env);
    for (size_t i = 0; i < n; i++) {
        env[i] = strdup(environ[i]);
    }
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_server_setup_fork(&p, &env);
    }
    pid_t pid = -1;
    if (PMIX_SUCCESS == rc) {
        char *argv[] = {(char *) child_path, (char *) child_mode, NULL};
        fflush(stdout);
        pid = fork();
        if (0 == pid) {
            execve(child_path, argv, env);
            _exit(127);
        }
    }
    PMIx_Argv_free(env);
    check(pid > 0, "a client registered and started", "%s", err(rc));
    return pid;
}

static bool exits_0(pid_t pid)
{
    int status = -1;
    for (int i = 0; i < 60 * 200; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            return WIFEXITED(status) && 0 == WEXITSTATUS(status);
        }
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return false;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    snprintf(fact_prefix, sizeof fact_prefix, "daemon: ");
    if (argc < 2) {
        fprintf(stderr, "usage: pubsub_server CHILD [--nohost]\n");
        return 2;
    }
    child_path = argv[1];
    bool host = !(argc > 2 && 0 == strcmp(argv[2], "--nohost"));
    static pmix_server_module_t module;
    if (host) {
        module.publish = up_publish;
        module.lookup = up_lookup;
        module.unpublish = up_unpublish;
        module.spawn = up_spawn;
        module.connect = up_connect;
        module.disconnect = up_disconnect;
    } else {
        child_mode = "nohost";
    }
    char tmpdir[] = "/tmp/pubsub_server.XXXXXX";
    if (NULL == mkdtemp(tmpdir)) {
        check(false, "mkdtemp", "%s", strerror(errno));
        return 1;
    }
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&module, info, 1);
    PMIX_INFO_FREE(info, 1);
    if (PMIX_SUCCESS == rc) {
        uint32_t size = 2;
        PMIX_INFO_CREATE(info, 2);
        PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
        PMIX_INFO_LOAD(&info[1], PMIX_LOCAL_PEERS, "0,1", PMIX_STRING);
        pmix_nspace_t ns;
        PMIX_LOAD_NSPACE(ns, NS);
        rc = PMIx_server_register_nspace(ns, 2, info, 2, NULL, NULL);
        PMIX_INFO_FREE(info, 2);
    }
    check(PMIX_SUCCESS == rc, "PMIx_server_init and the job registered", "%s", err(rc));
    if (PMIX_SUCCESS != rc) {
        return 1;
    }
    pid_t a = start(0), b = start(1);
    check(a > 0 && exits_0(a), "rank 0 exits 0", "pid %d", a);
    check(b > 0 && exits_0(b), "rank 1 exits 0", "pid %d", b);
    if (host) {
        pthread_mutex_lock(&m);
        check(seen.publish_ok,
              "publish gets the publisher, PMIX_USERID, PMIX_RANGE and PMIX_PERSISTENCE", "%d",
              seen.publish);
        check(2 == seen.publish && seen.lookup >= 5, "every publish and lookup reached the host",
              "publish %d lookup %d", seen.publish, seen.lookup);
        check(2 == seen.unpublish && seen.unpublish_all,
              "unpublish reached the host, NULL keys for everything", "%d", seen.unpublish);
        check(2 == seen.spawn && seen.spawn_ok, "spawn gets the caller and its application",
              "%d", seen.spawn);
        check(2 == seen.connect && 2 == seen.disconnect && seen.procs_ok,
              "connect and disconnect reach the host once per collective with both procs",
              "connect %d disconnect %d", seen.connect, seen.disconnect);
        check(0 == nwaiting, "no lookup left waiting", "%d", nwaiting);
        pthread_mutex_unlock(&m);
    }
    rc = PMIx_server_finalize();
    check(PMIX_SUCCESS == rc && 0 == rmdir(tmpdir), "PMIx_server_finalize", "%s", err(rc));
    return fact_failed ? 1 : 0;
}
