/*
 * The functions fastpmix does not implement refuse cleanly (publish/lookup,
 * spawn and connect/disconnect are implemented: pubsub_client.c): a sample of
 * every callback family, blocking and non-blocking, with and without
 * PMIx_Init (no server needed: they refuse before looking at anything),
 * returns PMIX_ERR_NOT_SUPPORTED, never runs its callback (checked after a
 * pause long enough for a library thread to have run it), and leaves
 * output parameters as they were. Prints "ok N" per check and "done".
 */
/* nanosleep */
#define _POSIX_C_SOURCE 199309L
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int called;
static int checks;
static int failed;

#define CHECK(what, cond)                                                                       \
    do {                                                                                        \
        checks++;                                                                               \
        if (cond) {                                                                             \
            printf("ok %s\n", what);                                                            \
        } else {                                                                                \
            printf("FAIL %s\n", what);                                                          \
            failed++;                                                                           \
        }                                                                                       \
    } while (0)
#define REFUSED(call) CHECK(#call, PMIX_ERR_NOT_SUPPORTED == (call))

static void op_cb(pmix_status_t s, void *cbdata)
{
    (void) s;
    (void) cbdata;
    called++;
}
static void info_cb(pmix_status_t s, pmix_info_t *info, size_t n, void *cbdata,
                    pmix_release_cbfunc_t rel, void *relcb)
{
    (void) s, (void) info, (void) n, (void) cbdata, (void) rel, (void) relcb;
    called++;
}
static void cred_cb(pmix_status_t s, pmix_byte_object_t *c, pmix_info_t i[], size_t n, void *cb)
{
    (void) s, (void) c, (void) i, (void) n, (void) cb;
    called++;
}
static void valid_cb(pmix_status_t s, pmix_info_t i[], size_t n, void *cb)
{
    (void) s, (void) i, (void) n, (void) cb;
    called++;
}
static void dist_cb(pmix_status_t s, pmix_device_distance_t *d, size_t n, void *cb,
                    pmix_release_cbfunc_t rel, void *relcb)
{
    (void) s, (void) d, (void) n, (void) cb, (void) rel, (void) relcb;
    called++;
}
static void iof_cb(size_t h, pmix_iof_channel_t c, pmix_proc_t *src, pmix_byte_object_t *p,
                   pmix_info_t i[], size_t n)
{
    (void) h, (void) c, (void) src, (void) p, (void) i, (void) n;
    called++;
}
static void reg_cb(pmix_status_t s, size_t ref, void *cb)
{
    (void) s, (void) ref, (void) cb;
    called++;
}

static void sample(const char *phase)
{
    pmix_proc_t procs[2];
    pmix_info_t *results = (pmix_info_t *) 0x1;
    size_t nresults = 7;
    pmix_byte_object_t bo = {NULL, 0};
    pmix_fabric_t fabric;
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_cpuset_t cpuset = PMIX_CPUSET_STATIC_INIT;
    pmix_device_distance_t *dist = NULL;
    pmix_data_buffer_t buf;
    pmix_proc_t *servers = NULL;
    size_t nservers = 3;
    char *keys[] = {"k", NULL};
    char *str = (char *) "untouched";
    uint8_t *out = NULL;
    size_t nout = 5;
    int v = 1;

    printf("phase %s\n", phase);
    PMIX_LOAD_PROCID(&procs[0], "ns", 0);
    PMIX_LOAD_PROCID(&procs[1], "ns", 1);
    PMIX_FABRIC_CONSTRUCT(&fabric);
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);

    /* op callbacks */
    REFUSED(PMIx_Group_leave_nb("grp", NULL, 0, op_cb, NULL));
    REFUSED(PMIx_Group_destruct_nb("grp", NULL, 0, op_cb, NULL));
    REFUSED(PMIx_Fabric_register_nb(&fabric, NULL, 0, op_cb, NULL));
    REFUSED(PMIx_Fabric_update_nb(&fabric, op_cb, NULL));
    REFUSED(PMIx_Fabric_deregister_nb(&fabric, op_cb, NULL));
    REFUSED(PMIx_IOF_deregister(1, NULL, 0, op_cb, NULL));
    REFUSED(PMIx_IOF_push(procs, 1, &bo, NULL, 0, op_cb, NULL));
    REFUSED(PMIx_server_IOF_deliver(procs, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0, op_cb, NULL));
    REFUSED(PMIx_server_deliver_inventory(NULL, 0, NULL, 0, op_cb, NULL));
    REFUSED(PMIx_server_register_resources(NULL, 0, op_cb, NULL));
    REFUSED(PMIx_server_deregister_resources(NULL, 0, op_cb, NULL));
    /* info callbacks */
    REFUSED(PMIx_Group_construct_nb("grp", procs, 2, NULL, 0, info_cb, NULL));
    REFUSED(PMIx_Group_invite_nb("grp", procs, 2, NULL, 0, info_cb, NULL));
    REFUSED(PMIx_Group_join_nb("grp", procs, PMIX_GROUP_ACCEPT, NULL, 0, info_cb, NULL));
    REFUSED(PMIx_server_collect_inventory(NULL, 0, info_cb, NULL));
    /* the other callback types */
    REFUSED(PMIx_Get_credential_nb(NULL, 0, cred_cb, NULL));
    REFUSED(PMIx_Validate_credential_nb(&bo, NULL, 0, valid_cb, NULL));
    REFUSED(PMIx_Compute_distances_nb(&topo, &cpuset, NULL, 0, dist_cb, NULL));
    REFUSED(PMIx_IOF_pull(procs, 1, NULL, 0, PMIX_FWD_ALL_CHANNELS, iof_cb, reg_cb, NULL));
    /* blocking forms; outputs untouched */
    REFUSED(PMIx_Get_credential(NULL, 0, &bo));
    CHECK("credential untouched", NULL == bo.bytes && 0 == bo.size);
    REFUSED(PMIx_Validate_credential(&bo, NULL, 0, &results, &nresults));
    REFUSED(PMIx_Group_construct("grp", procs, 2, NULL, 0, &results, &nresults));
    REFUSED(PMIx_Group_invite("grp", procs, 2, NULL, 0, &results, &nresults));
    REFUSED(PMIx_Group_join("grp", procs, PMIX_GROUP_DECLINE, NULL, 0, &results, &nresults));
    CHECK("results untouched", (pmix_info_t *) 0x1 == results && 7 == nresults);
    REFUSED(PMIx_Group_leave("grp", NULL, 0));
    REFUSED(PMIx_Group_destruct("grp", NULL, 0));
    REFUSED(PMIx_Fabric_register(&fabric, NULL, 0));
    REFUSED(PMIx_Fabric_update(&fabric));
    REFUSED(PMIx_Fabric_deregister(&fabric));
    REFUSED(PMIx_Compute_distances(&topo, &cpuset, NULL, 0, &dist, &nresults));
    CHECK("distances untouched", NULL == dist);
    REFUSED(PMIx_Load_topology(&topo));
    REFUSED(PMIx_Parse_cpuset_string("0-3", &cpuset));
    REFUSED(PMIx_Get_cpuset(&cpuset, PMIX_CPUBIND_PROCESS));
    REFUSED(PMIx_Get_relative_locality("a", "b", NULL));
    REFUSED(PMIx_Data_pack(NULL, &buf, &v, 1, PMIX_INT));
    REFUSED(PMIx_Data_unpack(NULL, &buf, &v, NULL, PMIX_INT));
    REFUSED(PMIx_Data_copy(NULL, &v, PMIX_INT));
    REFUSED(PMIx_Data_copy_payload(&buf, &buf));
    REFUSED(PMIx_Data_unload(&buf, &bo));
    REFUSED(PMIx_Data_load(&buf, &bo));
    REFUSED(PMIx_Data_embed(&buf, &bo));
    REFUSED(PMIx_Register_attributes("PMIx_Get", keys));
    REFUSED(PMIx_server_generate_locality_string(&cpuset, &str));
    REFUSED(PMIx_server_generate_cpuset_string(&cpuset, &str));
    CHECK("string output untouched", 0 == strcmp(str, "untouched"));
    REFUSED(PMIx_server_define_process_set(procs, 2, "pset"));
    REFUSED(PMIx_server_delete_process_set("pset"));
    REFUSED(PMIx_tool_init(procs, NULL, 0));
    REFUSED(PMIx_tool_finalize());
    REFUSED(PMIx_tool_disconnect(procs));
    REFUSED(PMIx_tool_attach_to_server(procs, &procs[1], NULL, 0));
    REFUSED(PMIx_tool_get_servers(&servers, &nservers));
    CHECK("servers untouched", NULL == servers && 3 == nservers);
    REFUSED(PMIx_tool_set_server(procs, NULL, 0));
    REFUSED(PMIx_tool_connect_to_server(procs, NULL, 0));
    /* NULL everywhere: still a clean refusal */
    REFUSED(PMIx_Group_construct(NULL, NULL, 0, NULL, 0, NULL, NULL));
    /* other return types */
    CHECK("compress false", !PMIx_Data_compress((const uint8_t *) "abc", 3, &out, &nout));
    CHECK("decompress false", !PMIx_Data_decompress((const uint8_t *) "abc", 3, &out, &nout));
    CHECK("compress outputs untouched", NULL == out && 5 == nout);
    PMIx_Topology_destruct(&topo);
    PMIx_Cpuset_destruct(&cpuset);
    PMIx_Topology_destruct(NULL);
    PMIx_Cpuset_destruct(NULL);
    CHECK("destructors return", 1);
}

int main(int argc, char **argv)
{
    struct timespec pause = {0, 200 * 1000 * 1000};
    pmix_proc_t me;
    int with_init = argc > 1 && 0 == strcmp(argv[1], "init");

    if (with_init) {
        pmix_status_t rc = PMIx_Init(&me, NULL, 0);
        CHECK("init", PMIX_SUCCESS == rc);
    }
    sample(with_init ? "after PMIx_Init" : "without PMIx_Init");
    nanosleep(&pause, NULL);
    CHECK("no callback ran", 0 == called);
    if (with_init) {
        CHECK("finalize", PMIX_SUCCESS == PMIx_Finalize(NULL, 0));
    }
    printf("checks %d failed %d\n", checks, failed);
    if (0 == failed) {
        printf("done\n");
    }
    return 0 == failed ? 0 : 1;
}
