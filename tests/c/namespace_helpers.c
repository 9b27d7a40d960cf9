/*
 * The Standard's string helpers, argv/environment helpers, value
 * comparison and the structure macros of the chapters fastpmix declares
 * only, as C code written for OpenPMIx 4.2 uses them. No server needed.
 * Unknown values give an "UNKNOWN"-style string (never NULL), NULL
 * pointers a clear result. Prints "ok WHAT" per check, then "done"; run
 * under valgrind by tests/c_header_namespace.rs (every malloc'd string is
 * freed here, so a leak is the library's).
 */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>

static int failed;

static char *dupstr(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (NULL != d) {
        strcpy(d, s);
    }
    return d;
}

#define CHECK(what, cond)                                                                       \
    do {                                                                                        \
        if (cond) {                                                                             \
            printf("ok %s\n", what);                                                            \
        } else {                                                                                \
            printf("FAIL %s (line %d)\n", what, __LINE__);                                      \
            failed++;                                                                           \
        }                                                                                       \
    } while (0)
#define SAME(what, got, want) CHECK(what, NULL != (got) && 0 == strcmp((got), (want)))

/* A malloc'd string is as expected; frees it. */
static void owned(const char *what, char *got, const char *want)
{
    SAME(what, got, want);
    if (NULL != got && 0 != strcmp(got, want)) {
        printf("  got: %s\n", got);
    }
    free(got);
}

static void enum_strings(void)
{
    SAME("type string", PMIx_Data_type_string(PMIX_STRING), "PMIX_STRING");
    SAME("type info", PMIx_Data_type_string(PMIX_INFO), "PMIX_INFO");
    SAME("type undef", PMIx_Data_type_string(PMIX_UNDEF), "PMIX_UNDEF");
    SAME("type data buffer", PMIx_Data_type_string(PMIX_DATA_BUFFER), "PMIX_DATA_BUFFER");
    SAME("type pre-v4 info array", PMIx_Data_type_string(44), "PMIX_INFO_ARRAY");
    SAME("type hole", PMIx_Data_type_string(29), "UNKNOWN");
    SAME("type unknown", PMIx_Data_type_string(9999), "UNKNOWN");
    SAME("range local", PMIx_Data_range_string(PMIX_RANGE_LOCAL), "AVAIL ON LOCAL NODE ONLY");
    SAME("range invalid", PMIx_Data_range_string(PMIX_RANGE_INVALID), "INVALID");
    SAME("range unknown", PMIx_Data_range_string(77), "UNKNOWN");
    SAME("proc state", PMIx_Proc_state_string(PMIX_PROC_STATE_RUNNING), "PROC EXECUTING");
    SAME("proc state abort", PMIx_Proc_state_string(PMIX_PROC_STATE_CALLED_ABORT),
         "PROC CALLED PMIx_Abort");
    SAME("proc state unknown", PMIx_Proc_state_string(200), "UNKNOWN STATE");
    SAME("job state", PMIx_Job_state_string(PMIX_JOB_STATE_RUNNING), "RUNNING");
    SAME("job state unknown", PMIx_Job_state_string(99), "UNKNOWN");
    SAME("alloc new", PMIx_Alloc_directive_string(PMIX_ALLOC_NEW), "NEW");
    SAME("alloc reacquire", PMIx_Alloc_directive_string(PMIX_ALLOC_REAQUIRE), "REACQUIRE");
    SAME("alloc unknown", PMIx_Alloc_directive_string(77), "UNSPECIFIED");
    SAME("scope", PMIx_Scope_string(PMIX_GLOBAL), "SHARE ACROSS ALL NODES");
    SAME("scope unknown", PMIx_Scope_string(99), "UNKNOWN SCOPE");
    SAME("persistence", PMIx_Persistence_string(PMIX_PERSIST_FIRST_READ),
         "DELETE ON FIRST ACCESS");
    SAME("persistence unknown", PMIx_Persistence_string(99), "UNKNOWN PERSISTENCE");
    SAME("iof", PMIx_IOF_channel_string(PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL),
         "STDOUT STDERR ");
    SAME("iof none", PMIx_IOF_channel_string(0), "NONE");
    SAME("link", PMIx_Link_state_string(PMIX_LINK_UP), "ACTIVE");
    SAME("link unknown", PMIx_Link_state_string(9), "UNKNOWN");
    SAME("device", PMIx_Device_type_string(PMIX_DEVTYPE_GPU), "GPU");
    SAME("device unknown", PMIx_Device_type_string(0x1000), "UNKNOWN");
    SAME("comparison", PMIx_Value_comparison_string(PMIX_VALUE1_GREATER), "VALUE1 GREATER");
    SAME("comparison unknown", PMIx_Value_comparison_string((pmix_value_cmp_t) 42),
         "UNKNOWN VALUE");
    SAME("attribute key", PMIx_Get_attribute_string("PMIX_NODE_LIST"), "pmix.nlist");
    SAME("attribute key acted on", PMIx_Get_attribute_string("PMIX_EVENT_HDLR_NAME"),
         "pmix.evname");
    SAME("attribute name", PMIx_Get_attribute_name("pmix.nlist"), "PMIX_NODE_LIST");
    SAME("attribute unknown gives the name back",
         PMIx_Get_attribute_string("PMIX_NO_SUCH_THING"), "PMIX_NO_SUCH_THING");
    SAME("attribute name unknown gives the key back", PMIx_Get_attribute_name("no.such"),
         "no.such");
    CHECK("attribute NULL", NULL == PMIx_Get_attribute_string(NULL));
    CHECK("attribute name NULL", NULL == PMIx_Get_attribute_name(NULL));
    SAME("error string alias keeps canonical name", PMIx_Error_string(PMIX_ERR_NODE_DOWN),
         "PMIX_EVENT_NODE_DOWN");
    SAME("deprecated error string", PMIx_Error_string(PMIX_ERR_PROC_ABORTING),
         "PMIX_ERR_PROC_ABORTING");
    owned("directives optional", PMIx_Info_directives_string(0), "OPTIONAL");
    owned("directives required end", PMIx_Info_directives_string(PMIX_INFO_REQD | PMIX_INFO_ARRAY_END),
          "REQUIRED:END");
    owned("directives qualifier", PMIx_Info_directives_string(PMIX_INFO_QUALIFIER), "QUALIFIER");
    PMIx_Progress();
    CHECK("progress returns", 1);
}

static void value_strings(void)
{
    pmix_value_t v;
    pmix_info_t info;
    pmix_proc_t p;
    uint32_t u = 42;
    char *out = NULL;
    int i = -5;
    bool flag = true;
    double dbl = 1.5;

    PMIX_VALUE_CONSTRUCT(&v);
    PMIX_VALUE_LOAD(&v, "hello", PMIX_STRING);
    owned("value string", PMIx_Value_string(&v), " PMIX_VALUE:  Data type: PMIX_STRING\tValue: hello");
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, &u, PMIX_UINT32);
    owned("value uint32", PMIx_Value_string(&v), " PMIX_VALUE:  Data type: PMIX_UINT32\tValue: 42");
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_LOAD_PROCID(&p, "ns", PMIX_RANK_WILDCARD);
    PMIX_VALUE_LOAD(&v, &p, PMIX_PROC);
    owned("value proc", PMIx_Value_string(&v), " PMIX_VALUE:  PROC: ns:PMIX_RANK_WILDCARD");
    PMIX_VALUE_DESTRUCT(&v);
    owned("value NULL", PMIx_Value_string(NULL), "NULL");
    v.type = 9999;
    owned("value unknown type", PMIx_Value_string(&v),
          " PMIX_VALUE:  Data type: UNKNOWN\tValue: UNPRINTABLE");
    v.type = PMIX_UNDEF;

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_NODE_LIST, "n1,n2", PMIX_STRING);
    PMIX_INFO_REQUIRED(&info);
    owned("info string", PMIx_Info_string(&info),
          " KEY: PMIX_NODE_LIST\n \t Data type: PMIX_INFO_DIRECTIVES\tValue: REQUIRED\n"
          " \t PMIX_VALUE:  Data type: PMIX_STRING\tValue: n1,n2");
    PMIX_INFO_DESTRUCT(&info);
    owned("info NULL", PMIx_Info_string(NULL), "NULL");

    CHECK("print int", PMIX_SUCCESS == PMIx_Data_print(&out, "pre: ", &i, PMIX_INT));
    owned("print int text", out, "pre: Data type: PMIX_INT\tValue: -5");
    out = NULL;
    CHECK("print string", PMIX_SUCCESS == PMIx_Data_print(&out, NULL, "text", PMIX_STRING));
    owned("print string text", out, "Data type: PMIX_STRING\tValue: text");
    out = NULL;
    CHECK("print bool", PMIX_SUCCESS == PMIx_Data_print(&out, NULL, &flag, PMIX_BOOL));
    owned("print bool text", out, "Data type: PMIX_BOOL\tValue: TRUE");
    out = NULL;
    CHECK("print double", PMIX_SUCCESS == PMIx_Data_print(&out, "> ", &dbl, PMIX_DOUBLE));
    owned("print double text", out, "> Data type: PMIX_DOUBLE\tValue: 1.500000");
    out = NULL;
    CHECK("print proc", PMIX_SUCCESS == PMIx_Data_print(&out, "", &p, PMIX_PROC));
    owned("print proc text", out, "PROC: ns:PMIX_RANK_WILDCARD");
    out = NULL;
    CHECK("print NULL output", PMIX_ERR_BAD_PARAM == PMIx_Data_print(NULL, NULL, &i, PMIX_INT));
    CHECK("print NULL source", PMIX_ERR_BAD_PARAM == PMIx_Data_print(&out, NULL, NULL, PMIX_INT));
    CHECK("print unknown type", PMIX_ERR_NOT_SUPPORTED == PMIx_Data_print(&out, NULL, &i, 9999));
    CHECK("print output untouched", NULL == out);
}

static void compare(void)
{
    pmix_value_t a, b;
    int x = 1, y = 2;
    PMIX_VALUE_CONSTRUCT(&a);
    PMIX_VALUE_CONSTRUCT(&b);
    PMIX_VALUE_LOAD(&a, &x, PMIX_INT);
    PMIX_VALUE_LOAD(&b, &y, PMIX_INT);
    CHECK("compare less", PMIX_VALUE2_GREATER == PMIx_Value_compare(&a, &b));
    CHECK("compare greater", PMIX_VALUE1_GREATER == PMIx_Value_compare(&b, &a));
    CHECK("compare equal", PMIX_EQUAL == PMIx_Value_compare(&a, &a));
    PMIX_VALUE_DESTRUCT(&b);
    PMIX_VALUE_LOAD(&b, "s", PMIX_STRING);
    CHECK("compare types", PMIX_VALUE_TYPE_DIFFERENT == PMIx_Value_compare(&a, &b));
    CHECK("compare NULL", PMIX_VALUE_COMPARISON_NOT_AVAIL == PMIx_Value_compare(NULL, &b));
    PMIX_VALUE_DESTRUCT(&a);
    PMIX_VALUE_DESTRUCT(&b);
}

static void argv_and_env(void)
{
    char **argv = NULL, **copy = NULL, **parts = NULL, **env = NULL;
    char *joined = NULL;
    pmix_status_t rc;
    int n = -1;

    PMIX_ARGV_APPEND(rc, argv, "b");
    CHECK("argv append", PMIX_SUCCESS == rc);
    PMIX_ARGV_PREPEND(rc, argv, "a");
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "b");
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "c");
    PMIX_ARGV_COUNT(n, argv);
    CHECK("argv count", 3 == n);
    PMIX_ARGV_JOIN(joined, argv, ',');
    owned("argv join", joined, "a,b,c");
    PMIX_ARGV_COPY(copy, argv);
    CHECK("argv copy", NULL != copy && 0 == strcmp(copy[2], "c") && NULL == copy[3]);
    PMIX_ARGV_SPLIT(parts, "x::y:", ':');
    CHECK("argv split", 2 == PMIx_Argv_count(parts) && 0 == strcmp(parts[1], "y"));
    PMIX_ARGV_FREE(parts);
    parts = PMIx_Argv_split_with_empty("x::y", ':');
    CHECK("argv split with empty", 3 == PMIx_Argv_count(parts));
    PMIX_ARGV_FREE(parts);
    CHECK("argv NULL count", 0 == PMIx_Argv_count(NULL));
    CHECK("argv NULL split", NULL == PMIx_Argv_split(NULL, ','));
    CHECK("argv append NULL", PMIX_ERR_BAD_PARAM == PMIx_Argv_append_nosize(&argv, NULL));
    PMIX_ARGV_FREE(argv);
    PMIX_ARGV_FREE(copy);
    PMIX_ARGV_FREE(NULL);

    PMIX_SETENV(rc, "A", "1", &env);
    CHECK("setenv", PMIX_SUCCESS == rc && 0 == strcmp(env[0], "A=1"));
    PMIX_SETENV(rc, "A", "2", &env);
    CHECK("setenv overwrite", PMIX_SUCCESS == rc && 0 == strcmp(env[0], "A=2") && NULL == env[1]);
    CHECK("setenv keep", PMIX_ERR_EXISTS == PMIx_Setenv("A", "3", false, &env));
    CHECK("setenv NULL", PMIX_ERR_BAD_PARAM == PMIx_Setenv(NULL, "3", true, &env));
    PMIX_ARGV_FREE(env);
}

static void structure_macros(void)
{
    pmix_query_t *q;
    pmix_app_t *app;
    pmix_pdata_t *pd;
    pmix_proc_info_t *pi;
    pmix_coord_t *c;
    pmix_geometry_t *g;
    pmix_device_distance_t *d;
    pmix_endpoint_t *e;
    pmix_regattr_t *ra, rb;
    pmix_node_stats_t *ns;
    pmix_envar_t *ev;
    pmix_byte_object_t *bo;
    pmix_data_buffer_t *db;
    pmix_proc_t me, other;
    pmix_info_t info = PMIX_INFO_STATIC_INIT, *arr;
    pmix_value_t num = PMIX_VALUE_STATIC_INIT;
    pmix_data_array_t da;
    void *list;
    pmix_status_t rc;
    pmix_nspace_t full, cl, nm;
    double dv = 0;
    int three = 3;

    PMIX_QUERY_CREATE(q, 2);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, "ns", PMIX_STRING);
    PMIX_QUERY_FREE(q, 2);
    CHECK("query macros", NULL == q);
    PMIX_APP_CREATE(app, 1);
    app->cmd = dupstr("/bin/true");
    PMIX_ARGV_APPEND(rc, app->argv, "true");
    PMIX_APP_INFO_CREATE(app, 1);
    PMIX_INFO_LOAD(&app->info[0], PMIX_WDIR, "/tmp", PMIX_STRING);
    PMIX_APP_RELEASE(app);
    CHECK("app macros", NULL == app);
    PMIX_PROC_LOAD(&me, "ns", 3);
    PMIX_PDATA_CREATE(pd, 1);
    PMIX_PDATA_LOAD(&pd[0], &me, "key", "value", PMIX_STRING);
    CHECK("pdata load", 3 == pd[0].proc.rank && 0 == strcmp(pd[0].value.data.string, "value"));
    PMIX_PDATA_RELEASE(pd);
    PMIX_PROC_INFO_CREATE(pi, 2);
    pi[1].hostname = dupstr("host");
    PMIX_PROC_INFO_FREE(pi, 2);
    PMIX_COORD_CREATE(c, 2, 3);
    CHECK("coord create", 3 == c[1].dims && NULL != c[1].coord);
    PMIX_COORD_FREE(c, 2);
    PMIX_GEOMETRY_CREATE(g, 1);
    g->uuid = dupstr("u");
    PMIX_COORD_CREATE(g->coordinates, 1, 2);
    g->ncoords = 1;
    PMIX_GEOMETRY_FREE(g, 1);
    PMIX_DEVICE_DIST_CREATE(d, 2);
    CHECK("distance create", UINT16_MAX == d[1].mindist);
    PMIX_DEVICE_DIST_FREE(d, 2);
    PMIX_ENDPOINT_CREATE(e, 1);
    e->osname = dupstr("eth0");
    PMIX_ENDPOINT_FREE(e, 1);
    PMIX_REGATTR_CREATE(ra, 1);
    PMIX_REGATTR_LOAD(&ra[0], "PMIX_NODE_LIST", PMIX_NODE_LIST, PMIX_STRING, "the nodes");
    PMIX_REGATTR_XFER(&rb, &ra[0]);
    CHECK("regattr xfer", 0 == strcmp(rb.description[0], "the nodes"));
    PMIX_REGATTR_DESTRUCT(&rb);
    PMIX_REGATTR_FREE(ra, 1);
    PMIX_NODE_STATS_CREATE(ns, 1);
    PMIX_DISK_STATS_CREATE(ns->diskstats, 1);
    ns->ndiskstats = 1;
    ns->diskstats[0].disk = dupstr("sda");
    PMIX_NODE_STATS_RELEASE(ns);
    PMIX_ENVAR_CREATE(ev, 1);
    PMIX_ENVAR_LOAD(&ev[0], "PATH", "/bin", ':');
    PMIX_ENVAR_FREE(ev, 1);
    PMIX_BYTE_OBJECT_CREATE(bo, 1);
    bo->bytes = malloc(4);
    bo->size = 4;
    PMIX_BYTE_OBJECT_FREE(bo, 1);
    PMIX_DATA_BUFFER_CREATE(db);
    PMIX_DATA_BUFFER_RELEASE(db);
    CHECK("structure macros release", NULL == bo && NULL == db && NULL == ns);

    PMIX_XFER_PROCID(&other, &me);
    CHECK("xfer procid", 3 == other.rank && PMIX_CHECK_NSPACE(other.nspace, "ns"));
    CHECK("reserved key", PMIX_CHECK_RESERVED_KEY(PMIX_NODE_LIST) && !PMIX_CHECK_RESERVED_KEY("my.key"));
    PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(full, "cluster", "job");
    CHECK("multicluster construct", 0 == strcmp(full, "cluster:job"));
    memset(cl, 0, sizeof(cl));
    memset(nm, 0, sizeof(nm));
    PMIX_MULTICLUSTER_NSPACE_PARSE(full, cl, nm);
    CHECK("multicluster parse", 0 == strcmp(cl, "cluster") && 0 == strcmp(nm, "job"));
    PMIX_INFO_SET_END(&info);
    PMIX_INFO_SET_QUALIFIER(&info);
    CHECK("info flags", PMIX_INFO_IS_END(&info) && PMIX_INFO_IS_QUALIFIER(&info) &&
                            !PMIX_INFO_IS_PERSISTENT(&info) && !PMIX_INFO_WAS_PROCESSED(&info));
    PMIX_VALUE_LOAD(&num, &three, PMIX_INT);
    PMIX_VALUE_GET_NUMBER(rc, &num, dv, double);
    CHECK("value get number", PMIX_SUCCESS == rc && 3.0 == dv);
    PMIX_VALUE_LOAD(&num, "yes", PMIX_STRING);
    CHECK("check true", PMIX_CHECK_TRUE(&num) && PMIX_CHECK_BOOL(&num));
    PMIX_VALUE_GET_NUMBER(rc, &num, dv, double);
    CHECK("value get number of a string", PMIX_ERR_BAD_PARAM == rc);
    PMIX_VALUE_DESTRUCT(&num);

    /* PMIX_INFO_LIST_INSERT moves the value into the list. */
    PMIX_INFO_LIST_START(list);
    PMIX_INFO_LOAD(&info, PMIX_HOSTNAME, "node1", PMIX_STRING);
    PMIX_INFO_LIST_INSERT(rc, list, &info);
    CHECK("list insert", PMIX_SUCCESS == rc && PMIX_UNDEF == info.value.type);
    PMIX_INFO_DESTRUCT(&info);
    PMIX_INFO_LIST_CONVERT(rc, list, &da);
    arr = (pmix_info_t *) da.array;
    CHECK("list insert converts", PMIX_SUCCESS == rc && 1 == da.size &&
                                      0 == strcmp(arr[0].value.data.string, "node1"));
    PMIX_DATA_ARRAY_DESTRUCT(&da);
    PMIX_INFO_LIST_RELEASE(list);
    CHECK("list insert NULL", PMIX_ERR_BAD_PARAM == PMIx_Info_list_insert(NULL, &info));
}

int main(void)
{
    enum_strings();
    value_strings();
    compare();
    argv_and_env();
    structure_macros();
    if (0 == failed) {
        printf("done\n");
    }
    return 0 == failed ? 0 : 1;
}
