/*
 * What Open MPI 4.1's runtime (mpirun/orted, through its pmix/ext3x
 * component) asks of the server library besides a resource manager's
 * usual calls, checked without Open MPI: run directly, it is the daemon.
 * tests/c_server.rs reads its lines ("ok <fact>" / "FAIL <fact> (<why>)").
 *
 *   - PMIx_Store_internal and PMIx_Get in the server process: the daemon
 *     keeps its own and its peers' contact URIs this way; a NULL key gets
 *     every key of a process as one PMIX_DATA_ARRAY of infos;
 *   - PMIx_server_register_client before PMIx_server_register_nspace (the
 *     order the runtime uses), then a client of that namespace starts
 *     (setup_fork + fork/exec of this program with --child) and connects;
 *   - a PMIX_STRING info whose string is NULL in the job info (a rank
 *     bound nowhere has no PMIX_LOCALITY_STRING) is accepted;
 *   - PMIx_server_setup_application calls back after returning with
 *     PMIX_SUCCESS and no info; PMIx_server_setup_local_support completes
 *     with PMIX_SUCCESS (callback, or the call's result without one).
 */
#define _GNU_SOURCE
#include <pmix_server.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static int failed;

#define CHECK(cond, fact, ...)                                                                    \
    do {                                                                                          \
        if (cond) {                                                                               \
            printf("ok %s\n", fact);                                                              \
        } else {                                                                                  \
            printf("FAIL %s (", fact);                                                            \
            printf(__VA_ARGS__);                                                                  \
            printf(")\n");                                                                        \
            failed = 1;                                                                           \
        }                                                                                         \
    } while (0)

static atomic_int returned, app_done, app_status = 99, app_after_return, local_done,
                                      local_status = 99;
static atomic_size_t app_ninfo = 99;

static void app_cb(pmix_status_t s, pmix_info_t info[], size_t ninfo, void *provided,
                   pmix_op_cbfunc_t release, void *release_cbdata)
{
    (void) info;
    (void) provided;
    atomic_store(&app_status, s);
    atomic_store(&app_ninfo, ninfo);
    atomic_store(&app_after_return, atomic_load(&returned));
    if (NULL != release) {
        release(PMIX_SUCCESS, release_cbdata);
    }
    atomic_store(&app_done, 1);
}

static void local_cb(pmix_status_t s, void *cbdata)
{
    (void) cbdata;
    atomic_store(&local_status, s);
    atomic_store(&local_done, 1);
}

static int wait_flag(atomic_int *f)
{
    for (int i = 0; i < 5000 && !atomic_load(f); i++) {
        usleep(1000);
    }
    return atomic_load(f);
}

static atomic_int connected;
static pmix_status_t on_connected(const pmix_proc_t *p, void *obj, pmix_op_cbfunc_t cb, void *cbd)
{
    (void) p;
    (void) obj;
    (void) cb;
    (void) cbd;
    atomic_store(&connected, 1);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_finalized(const pmix_proc_t *p, void *obj, pmix_op_cbfunc_t cb, void *cbd)
{
    (void) p;
    (void) obj;
    (void) cb;
    (void) cbd;
    return PMIX_OPERATION_SUCCEEDED;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && 0 == strcmp(argv[1], "--child")) {
        /* The early client: connects, reads its job size, finalizes. */
        pmix_proc_t self;
        if (PMIX_SUCCESS != PMIx_Init(&self, NULL, 0)) {
            return 3;
        }
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, self.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t *size = NULL;
        int ok = PMIX_SUCCESS == PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &size) &&
                 PMIX_UINT32 == size->type && 1 == size->data.uint32;
        if (NULL != size) {
            PMIX_VALUE_RELEASE(size);
        }
        return PMIX_SUCCESS == PMIx_Finalize(NULL, 0) && ok ? 0 : 4;
    }
    char tmpdir[] = "/tmp/fastpmix-rtcalls.XXXXXX";
    if (NULL == mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    static pmix_server_module_t module;
    module.client_connected = on_connected;
    module.client_finalized = on_finalized;
    pmix_info_t sinfo[1];
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&module, sinfo, 1);
    CHECK(PMIX_SUCCESS == rc, "init", "%s", PMIx_Error_string(rc));

    /* ---- the daemon's own data ---- */
    pmix_proc_t me, peer, other;
    PMIX_LOAD_PROCID(&me, "daemons", 0);
    PMIX_LOAD_PROCID(&peer, "daemons", 1);
    PMIX_LOAD_PROCID(&other, "daemons", 7);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, "tcp://127.0.0.1:5000", PMIX_STRING);
    rc = PMIx_Store_internal(&me, PMIX_PROC_URI, &v);
    PMIX_VALUE_DESTRUCT(&v);
    CHECK(PMIX_SUCCESS == rc, "store_internal: the daemon stores its own URI", "%s",
          PMIx_Error_string(rc));
    PMIX_VALUE_LOAD(&v, "tcp://127.0.0.1:6000", PMIX_STRING);
    PMIx_Store_internal(&peer, PMIX_PROC_URI, &v);
    PMIX_VALUE_DESTRUCT(&v);
    uint32_t hop = 3;
    PMIX_VALUE_LOAD(&v, &hop, PMIX_UINT32);
    PMIx_Store_internal(&me, "ompi.hops", &v);
    PMIX_VALUE_DESTRUCT(&v);
    /* a second store of a key replaces the first */
    PMIX_VALUE_LOAD(&v, "tcp://127.0.0.1:5001", PMIX_STRING);
    PMIx_Store_internal(&me, PMIX_PROC_URI, &v);
    PMIX_VALUE_DESTRUCT(&v);

    pmix_value_t *got = NULL;
    rc = PMIx_Get(&me, PMIX_PROC_URI, NULL, 0, &got);
    CHECK(PMIX_SUCCESS == rc && NULL != got && PMIX_STRING == got->type &&
              0 == strcmp(got->data.string, "tcp://127.0.0.1:5001"),
          "get: the daemon reads back its own URI, the latest stored", "%s",
          PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(got);
    got = NULL;
    rc = PMIx_Get(&peer, PMIX_PROC_URI, NULL, 0, &got);
    CHECK(PMIX_SUCCESS == rc && NULL != got && 0 == strcmp(got->data.string, "tcp://127.0.0.1:6000"),
          "get: a peer's URI stored by the daemon", "%s", PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(got);
    got = NULL;
    rc = PMIx_Get(&me, NULL, NULL, 0, &got);
    int all_ok = PMIX_SUCCESS == rc && NULL != got && PMIX_DATA_ARRAY == got->type &&
                 PMIX_INFO == got->data.darray->type && 2 == got->data.darray->size;
    if (all_ok) {
        pmix_info_t *in = got->data.darray->array;
        all_ok = 0 == strcmp(in[0].key, PMIX_PROC_URI) &&
                 0 == strcmp(in[0].value.data.string, "tcp://127.0.0.1:5001") &&
                 0 == strcmp(in[1].key, "ompi.hops") && 3 == in[1].value.data.uint32;
    }
    CHECK(all_ok, "get: a NULL key gives every key of the process as an info array", "%s",
          PMIx_Error_string(rc));
    if (NULL != got) {
        PMIX_VALUE_RELEASE(got);
    }
    got = NULL;
    rc = PMIx_Get(&other, PMIX_PROC_URI, NULL, 0, &got);
    CHECK(PMIX_ERR_NOT_FOUND == rc && NULL == got, "get: nothing stored is PMIX_ERR_NOT_FOUND",
          "%s", PMIx_Error_string(rc));

    /* ---- application setup ---- */
    rc = PMIx_server_setup_application("job.1", NULL, 0, app_cb, NULL);
    atomic_store(&returned, 1);
    CHECK(PMIX_SUCCESS == rc, "setup_application: accepted", "%s", PMIx_Error_string(rc));
    CHECK(wait_flag(&app_done) && PMIX_SUCCESS == atomic_load(&app_status) &&
              0 == atomic_load(&app_ninfo) && 1 == atomic_load(&app_after_return),
          "setup_application: calls back after returning with success and no info",
          "done=%d status=%d ninfo=%zu after_return=%d", atomic_load(&app_done),
          atomic_load(&app_status), atomic_load(&app_ninfo), atomic_load(&app_after_return));
    rc = PMIx_server_setup_application(NULL, NULL, 0, app_cb, NULL);
    CHECK(PMIX_ERR_BAD_PARAM == rc, "setup_application: a NULL namespace is refused", "%s",
          PMIx_Error_string(rc));
    rc = PMIx_server_setup_application("job.1", NULL, 0, NULL, NULL);
    CHECK(PMIX_ERR_BAD_PARAM == rc, "setup_application: a NULL callback is refused", "%s",
          PMIx_Error_string(rc));

    /* ---- a client registered before its namespace ---- */
    pmix_proc_t child;
    PMIX_LOAD_PROCID(&child, "job.1", 0);
    rc = PMIx_server_register_client(&child, getuid(), getgid(), NULL, NULL, NULL);
    CHECK(PMIX_SUCCESS == rc, "register_client: before its namespace, accepted", "%s",
          PMIx_Error_string(rc));
    pmix_info_t jinfo[4];
    uint32_t one = 1;
    PMIX_INFO_LOAD(&jinfo[0], PMIX_JOB_SIZE, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&jinfo[1], PMIX_LOCAL_SIZE, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&jinfo[2], PMIX_LOCAL_PEERS, "0", PMIX_STRING);
    /* a string attribute with no string, as the runtime registers it */
    PMIX_INFO_CONSTRUCT(&jinfo[3]);
    strncpy(jinfo[3].key, PMIX_LOCALITY_STRING, PMIX_MAX_KEYLEN);
    jinfo[3].value.type = PMIX_STRING;
    jinfo[3].value.data.string = NULL;
    rc = PMIx_server_register_nspace("job.1", 1, jinfo, 4, NULL, NULL);
    CHECK(PMIX_SUCCESS == rc, "register_nspace: after its client, with a NULL string info", "%s",
          PMIx_Error_string(rc));

    rc = PMIx_server_setup_local_support("job.1", NULL, 0, local_cb, NULL);
    CHECK(PMIX_SUCCESS == rc && wait_flag(&local_done) && PMIX_SUCCESS == atomic_load(&local_status),
          "setup_local_support: completes with success through its callback", "rc=%s status=%d",
          PMIx_Error_string(rc), atomic_load(&local_status));
    rc = PMIx_server_setup_local_support("job.1", NULL, 0, NULL, NULL);
    CHECK(PMIX_SUCCESS == rc, "setup_local_support: without a callback, the call's result", "%s",
          PMIx_Error_string(rc));

    char **env = NULL;
    for (char **e = environ; NULL != *e; e++) {
        PMIx_Argv_append_nosize(&env, *e);
    }
    rc = PMIx_server_setup_fork(&child, &env);
    CHECK(PMIX_SUCCESS == rc, "setup_fork", "%s", PMIx_Error_string(rc));
    pid_t pid = fork();
    if (0 == pid) {
        char *args[] = {argv[0], (char *) "--child", NULL};
        execve("/proc/self/exe", args, env);
        _exit(127);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && 0 == WEXITSTATUS(st) && atomic_load(&connected),
          "register_client: the early client connects and finalizes", "status=%d connected=%d", st,
          atomic_load(&connected));
    PMIx_Argv_free(env);

    PMIx_server_deregister_client(&child, NULL, NULL);
    PMIx_server_deregister_nspace("job.1", NULL, NULL);
    rc = PMIx_server_finalize();
    CHECK(PMIX_SUCCESS == rc, "finalize", "%s", PMIx_Error_string(rc));
    rmdir(tmpdir);
    printf("done\n");
    return failed;
}
