/*
 * fastpmix: the PMIx Standard's common types, structures and helper macros.
 *
 * Written for fastpmix from the Standard's definitions (names, values and
 * layouts as listed in docs/abi.md); layouts are identical to the Standard's
 * x86_64 ABI, so code written against the Standard compiles unchanged.
 * Every macro that allocates or releases memory calls a function of
 * libfastpmix or malloc/calloc/free directly, so memory always comes from,
 * and returns to, malloc/free.
 *
 * The second half declares the rest of the Standard's C namespace (the
 * structures, macros and functions of chapters fastpmix does not implement:
 * fabric, topology, storage, statistics, data packing, ...), so that code
 * written for OpenPMIx 4.2 compiles unchanged; the functions behind them
 * return PMIX_ERR_NOT_SUPPORTED (docs/abi.md lists them).
 */
#ifndef FASTPMIX_PMIX_COMMON_H
#define FASTPMIX_PMIX_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#include "pmix_constants.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This header is fastpmix's (OpenPMIx's does not define it). */
#define FASTPMIX 1

/* The Standard version whose interfaces this header provides. */
#define PMIX_VERSION_MAJOR 4L
#define PMIX_VERSION_MINOR 2L
#define PMIX_VERSION_RELEASE 0L
#define PMIX_NUMERIC_VERSION 0x00040200

/* ---- scalar types ---- */
typedef int pmix_status_t;
typedef uint32_t pmix_rank_t;
typedef uint16_t pmix_data_type_t;
typedef uint8_t pmix_data_range_t;
typedef uint8_t pmix_persistence_t;
typedef uint8_t pmix_scope_t;
typedef uint8_t pmix_alloc_directive_t;
typedef uint32_t pmix_info_directives_t;
typedef uint8_t pmix_proc_state_t;
typedef uint8_t pmix_job_state_t;
typedef uint16_t pmix_iof_channel_t;
typedef uint8_t pmix_coord_view_t;
typedef uint8_t pmix_link_state_t;
typedef uint8_t pmix_bind_envelope_t;
typedef uint16_t pmix_locality_t;
typedef uint64_t pmix_device_type_t;
typedef uint64_t pmix_storage_medium_t;
typedef uint64_t pmix_storage_accessibility_t;
typedef uint64_t pmix_storage_persistence_t;
typedef uint16_t pmix_storage_access_type_t;
typedef char pmix_nspace_t[PMIX_MAX_NSLEN + 1];
typedef char pmix_key_t[PMIX_MAX_KEYLEN + 1];

/* ---- structures (x86_64 sizes in comments) ---- */
typedef struct pmix_byte_object {
    char *bytes;
    size_t size;
} pmix_byte_object_t; /* 16 */

typedef struct pmix_envar {
    char *envar;
    char *value;
    char separator;
} pmix_envar_t; /* 24 */

typedef struct pmix_data_array {
    pmix_data_type_t type;
    size_t size;
    void *array;
} pmix_data_array_t; /* 24 */

typedef struct pmix_proc {
    pmix_nspace_t nspace;
    pmix_rank_t rank;
} pmix_proc_t; /* 260 */

typedef struct pmix_proc_info {
    pmix_proc_t proc;
    char *hostname;
    char *executable_name;
    pid_t pid;
    int exit_code;
    pmix_proc_state_t state;
} pmix_proc_info_t; /* 296 */

struct pmix_info;

typedef struct pmix_value {
    pmix_data_type_t type;
    union {
        bool flag;
        uint8_t byte;
        char *string;
        size_t size;
        pid_t pid;
        int integer;
        int8_t int8;
        int16_t int16;
        int32_t int32;
        int64_t int64;
        unsigned int uint;
        uint8_t uint8;
        uint16_t uint16;
        uint32_t uint32;
        uint64_t uint64;
        float fval;
        double dval;
        struct timeval tv;
        time_t time;
        pmix_status_t status;
        pmix_rank_t rank;
        pmix_nspace_t *nspace;
        pmix_proc_t *proc;
        pmix_byte_object_t bo;
        pmix_persistence_t persist;
        pmix_scope_t scope;
        pmix_data_range_t range;
        pmix_proc_state_t state;
        pmix_proc_info_t *pinfo;
        pmix_data_array_t *darray;
        void *ptr;
        pmix_alloc_directive_t adir;
        pmix_envar_t envar;
        pmix_job_state_t jstate;
    } data;
} pmix_value_t; /* 32 */

typedef struct pmix_info {
    pmix_key_t key;
    pmix_info_directives_t flags;
    pmix_value_t value;
} pmix_info_t; /* 552, value at 520 */

typedef struct pmix_pdata {
    pmix_proc_t proc;
    pmix_key_t key;
    pmix_value_t value;
} pmix_pdata_t; /* 808 */

typedef struct pmix_app {
    char *cmd;
    char **argv;
    char **env;
    char *cwd;
    int maxprocs;
    pmix_info_t *info;
    size_t ninfo;
} pmix_app_t; /* 56 */

typedef struct pmix_query {
    char **keys;
    pmix_info_t *qualifiers;
    size_t nqual;
} pmix_query_t; /* 24 */

/* Results of PMIx_Value_compare. */
typedef enum {
    PMIX_EQUAL,
    PMIX_VALUE1_GREATER,
    PMIX_VALUE2_GREATER,
    PMIX_VALUE_TYPE_DIFFERENT,
    PMIX_VALUE_INCOMPATIBLE_OBJECTS,
    PMIX_VALUE_COMPARISON_NOT_AVAIL
} pmix_value_cmp_t;

/* PMIx_Group_join's answer. */
typedef enum { PMIX_GROUP_DECLINE, PMIX_GROUP_ACCEPT } pmix_group_opt_t;

/* What PMIX_CHECK_TRUE / PMIX_CHECK_BOOL make of a value. */
typedef enum { PMIX_BOOL_TRUE, PMIX_BOOL_FALSE, PMIX_NON_BOOL } pmix_boolean_t;

/* ---- structures of the chapters fastpmix declares only (x86_64 sizes) ---- */
typedef struct pmix_coord {
    pmix_coord_view_t view;
    uint32_t *coord;
    size_t dims;
} pmix_coord_t; /* 24 */

typedef struct {
    char *source;
    void *bitmap;
} pmix_cpuset_t; /* 16 */

typedef struct {
    char *source;
    void *topology;
} pmix_topology_t; /* 16 */

typedef struct pmix_geometry {
    size_t fabric;
    char *uuid;
    char *osname;
    pmix_coord_t *coordinates;
    size_t ncoords;
} pmix_geometry_t; /* 40 */

typedef struct pmix_device_distance {
    char *uuid;
    char *osname;
    pmix_device_type_t type;
    uint16_t mindist;
    uint16_t maxdist;
} pmix_device_distance_t; /* 32 */

typedef struct pmix_endpoint {
    char *uuid;
    char *osname;
    pmix_byte_object_t endpt;
} pmix_endpoint_t; /* 32 */

typedef struct pmix_data_buffer {
    char *base_ptr;
    char *pack_ptr;
    char *unpack_ptr;
    size_t bytes_allocated;
    size_t bytes_used;
} pmix_data_buffer_t; /* 40 */

typedef struct pmix_proc_stats {
    char *node;
    pmix_proc_t proc;
    pid_t pid;
    char *cmd;
    char state;
    struct timeval time;
    float percent_cpu;
    int32_t priority;
    uint16_t num_threads;
    float pss;
    float vsize;
    float rss;
    float peak_vsize;
    uint16_t processor;
    struct timeval sample_time;
} pmix_proc_stats_t;

typedef struct {
    char *disk;
    uint64_t num_reads_completed;
    uint64_t num_reads_merged;
    uint64_t num_sectors_read;
    uint64_t milliseconds_reading;
    uint64_t num_writes_completed;
    uint64_t num_writes_merged;
    uint64_t num_sectors_written;
    uint64_t milliseconds_writing;
    uint64_t num_ios_in_progress;
    uint64_t milliseconds_io;
    uint64_t weighted_milliseconds_io;
} pmix_disk_stats_t; /* 96 */

typedef struct {
    char *net_interface;
    uint64_t num_bytes_recvd;
    uint64_t num_packets_recvd;
    uint64_t num_recv_errs;
    uint64_t num_bytes_sent;
    uint64_t num_packets_sent;
    uint64_t num_send_errs;
} pmix_net_stats_t; /* 56 */

typedef struct {
    char *node;
    float la;
    float la5;
    float la15;
    float total_mem;
    float free_mem;
    float buffers;
    float cached;
    float swap_cached;
    float swap_total;
    float swap_free;
    float mapped;
    struct timeval sample_time;
    pmix_disk_stats_t *diskstats;
    size_t ndiskstats;
    pmix_net_stats_t *netstats;
    size_t nnetstats;
} pmix_node_stats_t;

typedef struct pmix_regattr_t {
    char *name;
    pmix_key_t string;
    pmix_data_type_t type;
    char **description;
} pmix_regattr_t;

typedef struct pmix_fabric_s {
    char *name;
    size_t index;
    pmix_info_t *info;
    size_t ninfo;
    void *module;
} pmix_fabric_t; /* 40 */

/* ---- callback types ---- */
typedef void (*pmix_release_cbfunc_t)(void *cbdata);
typedef void (*pmix_op_cbfunc_t)(pmix_status_t status, void *cbdata);
typedef void (*pmix_info_cbfunc_t)(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                                   void *cbdata, pmix_release_cbfunc_t release_fn,
                                   void *release_cbdata);
typedef void (*pmix_value_cbfunc_t)(pmix_status_t status, pmix_value_t *kv, void *cbdata);
typedef void (*pmix_hdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid, void *cbdata);
typedef void (*pmix_event_notification_cbfunc_fn_t)(pmix_status_t status, pmix_info_t *results,
                                                    size_t nresults, pmix_op_cbfunc_t cbfunc,
                                                    void *thiscbdata, void *notification_cbdata);
typedef void (*pmix_notification_fn_t)(size_t evhdlr_registration_id, pmix_status_t status,
                                       const pmix_proc_t *source, pmix_info_t info[],
                                       size_t ninfo, pmix_info_t *results, size_t nresults,
                                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata);
typedef void (*pmix_modex_cbfunc_t)(pmix_status_t status, const char *data, size_t ndata,
                                    void *cbdata, pmix_release_cbfunc_t release_fn,
                                    void *release_cbdata);

typedef void (*pmix_evhdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid, void *cbdata);
typedef void (*pmix_lookup_cbfunc_t)(pmix_status_t status, pmix_pdata_t data[], size_t ndata,
                                     void *cbdata);
typedef void (*pmix_spawn_cbfunc_t)(pmix_status_t status, pmix_nspace_t nspace, void *cbdata);
typedef void (*pmix_credential_cbfunc_t)(pmix_status_t status, pmix_byte_object_t *credential,
                                         pmix_info_t info[], size_t ninfo, void *cbdata);
typedef void (*pmix_validation_cbfunc_t)(pmix_status_t status, pmix_info_t info[], size_t ninfo,
                                         void *cbdata);
typedef void (*pmix_device_dist_cbfunc_t)(pmix_status_t status, pmix_device_distance_t *dist,
                                          size_t ndist, void *cbdata,
                                          pmix_release_cbfunc_t release_fn, void *release_cbdata);
typedef void (*pmix_iof_cbfunc_t)(size_t iofhdlr, pmix_iof_channel_t channel,
                                  pmix_proc_t *source, pmix_byte_object_t *payload,
                                  pmix_info_t info[], size_t ninfo);

/* ---- functions behind the helper macros (libfastpmix) ---- */
pmix_info_t *PMIx_Info_create(size_t n);
void PMIx_Info_construct(pmix_info_t *p);
void PMIx_Info_destruct(pmix_info_t *p);
void PMIx_Info_free(pmix_info_t *p, size_t n);
pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                             pmix_data_type_t type);
pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src);
void PMIx_Info_required(pmix_info_t *p);
void PMIx_Info_optional(pmix_info_t *p);
bool PMIx_Info_is_required(const pmix_info_t *p);
bool PMIx_Info_true(const pmix_info_t *p);

pmix_value_t *PMIx_Value_create(size_t n);
void PMIx_Value_construct(pmix_value_t *v);
void PMIx_Value_destruct(pmix_value_t *v);
void PMIx_Value_free(pmix_value_t *v, size_t n);
pmix_status_t PMIx_Value_load(pmix_value_t *v, const void *data, pmix_data_type_t type);
pmix_status_t PMIx_Value_unload(pmix_value_t *v, void **data, size_t *sz);
pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src);

pmix_proc_t *PMIx_Proc_create(size_t n);
void PMIx_Proc_free(pmix_proc_t *p, size_t n);

pmix_data_array_t *PMIx_Data_array_create(size_t n, pmix_data_type_t type);
void PMIx_Data_array_init(pmix_data_array_t *p, pmix_data_type_t type);
void PMIx_Data_array_construct(pmix_data_array_t *p, size_t n, pmix_data_type_t type);
void PMIx_Data_array_destruct(pmix_data_array_t *p);
void PMIx_Data_array_free(pmix_data_array_t *p);

void *PMIx_Info_list_start(void);
pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                 pmix_data_type_t type);
pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info);
pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par);
void PMIx_Info_list_release(void *ptr);

/* ---- keys, namespaces, procs ---- */
#define PMIX_LOAD_KEY(a, b)                                                                     \
    do {                                                                                        \
        memset((a), 0, PMIX_MAX_KEYLEN + 1);                                                    \
        if (NULL != (b)) {                                                                      \
            strncpy((char *) (a), (const char *) (b), PMIX_MAX_KEYLEN);                         \
        }                                                                                       \
    } while (0)
#define PMIX_LOAD_NSPACE(a, b)                                                                  \
    do {                                                                                        \
        memset((a), 0, PMIX_MAX_NSLEN + 1);                                                     \
        if (NULL != (b)) {                                                                      \
            strncpy((char *) (a), (const char *) (b), PMIX_MAX_NSLEN);                          \
        }                                                                                       \
    } while (0)
#define PMIX_LOAD_PROCID(a, b, c)                                                               \
    do {                                                                                        \
        PMIX_LOAD_NSPACE((a)->nspace, (b));                                                     \
        (a)->rank = (c);                                                                        \
    } while (0)
#define PMIX_CHECK_KEY(a, b) (0 == strncmp((a)->key, (b), PMIX_MAX_KEYLEN))
/* Functions, not bare comparisons: a NULL test on a pmix_nspace_t array
 * member would draw -Waddress warnings in the caller's build. */
static inline bool fastpmix_nspace_invalid(const char *a)
{
    return NULL == a || 0 == a[0];
}
static inline bool fastpmix_check_nspace(const char *a, const char *b)
{
    return fastpmix_nspace_invalid(a) || fastpmix_nspace_invalid(b) ||
           0 == strncmp(a, b, PMIX_MAX_NSLEN);
}
#define PMIX_NSPACE_INVALID(a) fastpmix_nspace_invalid((a))
#define PMIX_CHECK_NSPACE(a, b) fastpmix_check_nspace((a), (b))
#define PMIX_CHECK_RANK(a, b)                                                                   \
    ((a) == (b) || PMIX_RANK_WILDCARD == (a) || PMIX_RANK_WILDCARD == (b))
#define PMIX_CHECK_PROCID(a, b)                                                                 \
    (PMIX_CHECK_NSPACE((a)->nspace, (b)->nspace) && PMIX_CHECK_RANK((a)->rank, (b)->rank))
#define PMIX_PROCID_INVALID(a) (PMIX_NSPACE_INVALID((a)->nspace) || PMIX_RANK_INVALID == (a)->rank)
#define PMIX_RANK_IS_VALID(r) ((r) < PMIX_RANK_VALID)
/* Is this code one of the system (environment) events? */
#define PMIX_SYSTEM_EVENT(a) ((a) <= PMIX_EVENT_SYS_BASE && PMIX_EVENT_SYS_OTHER <= (a))

#define PMIX_PROC_CREATE(m, n) ((m) = PMIx_Proc_create((n)))
#define PMIX_PROC_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_t))
#define PMIX_PROC_DESTRUCT(m) ((void) (m))
#define PMIX_PROC_LOAD(m, n, r) PMIX_LOAD_PROCID((m), (n), (r))
#define PMIX_PROC_FREE(m, n)                                                                    \
    do {                                                                                        \
        PMIx_Proc_free((m), (n));                                                               \
        (m) = NULL;                                                                             \
    } while (0)
#define PMIX_PROC_RELEASE(m) PMIX_PROC_FREE((m), 1)

/* ---- pmix_value_t ---- */
#define PMIX_VALUE_CREATE(m, n) ((m) = PMIx_Value_create((n)))
#define PMIX_VALUE_CONSTRUCT(m) PMIx_Value_construct((m))
#define PMIX_VALUE_DESTRUCT(m) PMIx_Value_destruct((m))
#define PMIX_VALUE_FREE(m, n)                                                                   \
    do {                                                                                        \
        PMIx_Value_free((m), (n));                                                              \
        (m) = NULL;                                                                             \
    } while (0)
#define PMIX_VALUE_RELEASE(m) PMIX_VALUE_FREE((m), 1)
#define PMIX_VALUE_LOAD(v, d, t) ((void) PMIx_Value_load((v), (d), (t)))
#define PMIX_VALUE_UNLOAD(r, k, d, s) ((r) = PMIx_Value_unload((k), (d), (s)))
/* The Standard's XFER allocates the destination when it is NULL. */
#define PMIX_VALUE_XFER(r, v, s)                                          \
    do {                                                                  \
        if (NULL == (v)) {                                                \
            (v) = PMIx_Value_create(1);                                   \
        }                                                                 \
        (r) = (NULL == (v)) ? PMIX_ERR_NOMEM : PMIx_Value_xfer((v), (s)); \
    } while (0)

/* ---- pmix_info_t ---- */
#define PMIX_INFO_CREATE(m, n) ((m) = PMIx_Info_create((n)))
#define PMIX_INFO_CONSTRUCT(m) PMIx_Info_construct((m))
#define PMIX_INFO_DESTRUCT(m) PMIx_Info_destruct((m))
#define PMIX_INFO_FREE(m, n)                                                                    \
    do {                                                                                        \
        PMIx_Info_free((m), (n));                                                               \
        (m) = NULL;                                                                             \
    } while (0)
#define PMIX_INFO_LOAD(i, k, d, t) ((void) PMIx_Info_load((i), (k), (d), (t)))
#define PMIX_INFO_XFER(d, s) ((void) PMIx_Info_xfer((d), (s)))
#define PMIX_INFO_REQUIRED(m) PMIx_Info_required((m))
#define PMIX_INFO_OPTIONAL(m) PMIx_Info_optional((m))
#define PMIX_INFO_IS_REQUIRED(m) PMIx_Info_is_required((m))
#define PMIX_INFO_IS_OPTIONAL(m) (!PMIx_Info_is_required((m)))
#define PMIX_INFO_TRUE(m) PMIx_Info_true((m))

/* ---- pmix_data_array_t ---- */
#define PMIX_DATA_ARRAY_CREATE(m, n, t) ((m) = PMIx_Data_array_create((n), (t)))
#define PMIX_DATA_ARRAY_INIT(m, t) PMIx_Data_array_init((m), (t))
#define PMIX_DATA_ARRAY_CONSTRUCT(m, n, t) PMIx_Data_array_construct((m), (n), (t))
#define PMIX_DATA_ARRAY_DESTRUCT(m) PMIx_Data_array_destruct((m))
#define PMIX_DATA_ARRAY_FREE(m)                                                                 \
    do {                                                                                        \
        PMIx_Data_array_free((m));                                                              \
        (m) = NULL;                                                                             \
    } while (0)
#define PMIX_DATA_ARRAY_RELEASE(m) PMIX_DATA_ARRAY_FREE((m))

/* ---- info lists ---- */
#define PMIX_INFO_LIST_START(p) ((p) = PMIx_Info_list_start())
#define PMIX_INFO_LIST_ADD(r, p, k, v, t) ((r) = PMIx_Info_list_add((p), (k), (v), (t)))
#define PMIX_INFO_LIST_XFER(r, p, a) ((r) = PMIx_Info_list_xfer((p), (a)))
#define PMIX_INFO_LIST_CONVERT(r, p, m) ((r) = PMIx_Info_list_convert((p), (m)))
#define PMIX_INFO_LIST_RELEASE(p) PMIx_Info_list_release((p))

/* ==== the rest of the Standard's C namespace ==== */

/* ---- strings for values (libfastpmix; never NULL, unknown values give a
 * "...UNKNOWN..." string). Value_string, Info_string and
 * Info_directives_string return malloc'd strings the caller frees. ---- */
const char *PMIx_Proc_state_string(pmix_proc_state_t state);
const char *PMIx_Scope_string(pmix_scope_t scope);
const char *PMIx_Persistence_string(pmix_persistence_t persist);
const char *PMIx_Data_range_string(pmix_data_range_t range);
const char *PMIx_Data_type_string(pmix_data_type_t type);
const char *PMIx_Alloc_directive_string(pmix_alloc_directive_t directive);
const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel);
const char *PMIx_Job_state_string(pmix_job_state_t state);
const char *PMIx_Get_attribute_string(const char *attribute);
const char *PMIx_Get_attribute_name(const char *attrstring);
const char *PMIx_Link_state_string(pmix_link_state_t state);
const char *PMIx_Device_type_string(pmix_device_type_t type);
const char *PMIx_Value_comparison_string(pmix_value_cmp_t cmp);
char *PMIx_Info_string(const pmix_info_t *info);
char *PMIx_Value_string(const pmix_value_t *value);
char *PMIx_Info_directives_string(pmix_info_directives_t directives);
pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src, pmix_data_type_t type);
pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2);
pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info);

/* ---- argv and environment helpers (libfastpmix, malloc'd) ---- */
pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg);
pmix_status_t PMIx_Argv_prepend_nosize(char ***argv, const char *arg);
pmix_status_t PMIx_Argv_append_unique_nosize(char ***argv, const char *arg);
void PMIx_Argv_free(char **argv);
char **PMIx_Argv_split(const char *src_string, int delimiter);
char **PMIx_Argv_split_with_empty(const char *src_string, int delimiter);
int PMIx_Argv_count(char **argv);
char *PMIx_Argv_join(char **argv, int delimiter);
char **PMIx_Argv_copy(char **argv);
pmix_status_t PMIx_Setenv(const char *name, const char *value, bool overwrite, char ***env);

/* ---- data packing, topology, cpusets (PMIX_ERR_NOT_SUPPORTED) ---- */
pmix_status_t PMIx_Data_pack(const pmix_proc_t *target, pmix_data_buffer_t *buffer, void *src,
                             int32_t num_vals, pmix_data_type_t type);
pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source, pmix_data_buffer_t *buffer,
                               void *dest, int32_t *max_num_values, pmix_data_type_t type);
pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type);
pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest, pmix_data_buffer_t *src);
pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload);
pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload);
pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer, const pmix_byte_object_t *payload);
bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes);
bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                          size_t *nbytes);
pmix_status_t PMIx_Load_topology(pmix_topology_t *topo);
void PMIx_Topology_destruct(pmix_topology_t *topo);
pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string, pmix_cpuset_t *cpuset);
pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref);
void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset);
pmix_status_t PMIx_Get_relative_locality(const char *locality1, const char *locality2,
                                         pmix_locality_t *locality);

/* ---- static initialisers ---- */
#define PMIX_PROC_STATIC_INIT {{0}, PMIX_RANK_UNDEF}
#define PMIX_VALUE_STATIC_INIT {PMIX_UNDEF, {false}}
#define PMIX_INFO_STATIC_INIT {{0}, 0, PMIX_VALUE_STATIC_INIT}
#define PMIX_LOOKUP_STATIC_INIT {PMIX_PROC_STATIC_INIT, {0}, PMIX_VALUE_STATIC_INIT}
#define PMIX_DATA_ARRAY_STATIC_INIT {PMIX_UNDEF, 0, NULL}
#define PMIX_BYTE_OBJECT_STATIC_INIT {NULL, 0}
#define PMIX_ENVAR_STATIC_INIT {NULL, NULL, '\0'}
#define PMIX_PROC_INFO_STATIC_INIT {PMIX_PROC_STATIC_INIT, NULL, NULL, 0, 0, PMIX_PROC_STATE_UNDEF}
#define PMIX_APP_STATIC_INIT {NULL, NULL, NULL, NULL, 0, NULL, 0}
#define PMIX_QUERY_STATIC_INIT {NULL, NULL, 0}
#define PMIX_COORD_STATIC_INIT {PMIX_COORD_VIEW_UNDEF, NULL, 0}
#define PMIX_CPUSET_STATIC_INIT {NULL, NULL}
#define PMIX_TOPOLOGY_STATIC_INIT {NULL, NULL}
#define PMIX_GEOMETRY_STATIC_INIT {0, NULL, NULL, NULL, 0}
#define PMIX_DEVICE_DIST_STATIC_INIT {NULL, NULL, PMIX_DEVTYPE_UNKNOWN, 0, 0}
#define PMIX_ENDPOINT_STATIC_INIT {NULL, NULL, PMIX_BYTE_OBJECT_STATIC_INIT}
#define PMIX_DATA_BUFFER_STATIC_INIT {NULL, NULL, NULL, 0, 0}
#define PMIX_PROC_STATS_STATIC_INIT {0}
#define PMIX_DISK_STATS_STATIC_INIT {NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
#define PMIX_NET_STATS_STATIC_INIT {NULL, 0, 0, 0, 0, 0, 0}
#define PMIX_NODE_STATS_STATIC_INIT {0}
#define PMIX_REGATTR_STATIC_INIT {NULL, {0}, PMIX_UNDEF, NULL}
#define PMIX_FABRIC_STATIC_INIT {NULL, 0, NULL, 0, NULL}

/* ---- small inline helpers behind the macros below ---- */
/* n zeroed elements of `size` bytes, or NULL for n == 0. */
static inline void *fastpmix_calloc(size_t n, size_t size)
{
    return 0 == n ? NULL : calloc(n, size);
}
static inline char *fastpmix_strdup(const char *s)
{
    char *d;
    size_t n;
    if (NULL == s) {
        return NULL;
    }
    n = strlen(s) + 1;
    d = (char *) malloc(n);
    if (NULL != d) {
        memcpy(d, s, n);
    }
    return d;
}
/* Frees *p and sets it to NULL. */
static inline void fastpmix_free_str(char **p)
{
    free(*p);
    *p = NULL;
}
/* The Standard's truth test of a value: PMIX_UNDEF, a true bool, a NULL or
 * empty string, "yes"/"true" or a non-zero number are true; "no"/"false"
 * or 0 false; anything else is not a boolean. */
static inline pmix_boolean_t fastpmix_check_true(const pmix_value_t *v)
{
    const char *s;
    if (PMIX_UNDEF == v->type) {
        return PMIX_BOOL_TRUE;
    }
    if (PMIX_BOOL == v->type) {
        return v->data.flag ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    }
    if (PMIX_STRING != v->type) {
        return PMIX_NON_BOOL;
    }
    s = v->data.string;
    if (NULL == s) {
        return PMIX_BOOL_TRUE;
    }
    while (' ' == *s || '\t' == *s || '\n' == *s) {
        s++;
    }
    if ('\0' == *s) {
        return PMIX_BOOL_TRUE;
    }
    if ('0' <= *s && *s <= '9') {
        return 0 == atoi(s) ? PMIX_BOOL_FALSE : PMIX_BOOL_TRUE;
    }
    if (0 == strncmp(s, "yes", 3) || 0 == strncmp(s, "YES", 3) || 0 == strncmp(s, "true", 4) ||
        0 == strncmp(s, "TRUE", 4)) {
        return PMIX_BOOL_TRUE;
    }
    if (0 == strncmp(s, "no", 2) || 0 == strncmp(s, "NO", 2) || 0 == strncmp(s, "false", 5) ||
        0 == strncmp(s, "FALSE", 5)) {
        return PMIX_BOOL_FALSE;
    }
    return PMIX_NON_BOOL;
}
static inline void fastpmix_app_destruct(pmix_app_t *m)
{
    fastpmix_free_str(&m->cmd);
    PMIx_Argv_free(m->argv);
    m->argv = NULL;
    PMIx_Argv_free(m->env);
    m->env = NULL;
    fastpmix_free_str(&m->cwd);
    PMIx_Info_free(m->info, m->ninfo);
    m->info = NULL;
    m->ninfo = 0;
}
static inline void fastpmix_query_destruct(pmix_query_t *m)
{
    PMIx_Argv_free(m->keys);
    m->keys = NULL;
    PMIx_Info_free(m->qualifiers, m->nqual);
    m->qualifiers = NULL;
    m->nqual = 0;
}
static inline void fastpmix_proc_info_destruct(pmix_proc_info_t *m)
{
    fastpmix_free_str(&m->hostname);
    fastpmix_free_str(&m->executable_name);
}
static inline void fastpmix_coord_destruct(pmix_coord_t *m)
{
    m->view = PMIX_COORD_VIEW_UNDEF;
    free(m->coord);
    m->coord = NULL;
    m->dims = 0;
}
static inline pmix_coord_t *fastpmix_coord_create(size_t n, size_t dims)
{
    size_t i;
    pmix_coord_t *m = (pmix_coord_t *) fastpmix_calloc(n, sizeof(pmix_coord_t));
    for (i = 0; NULL != m && i < n; i++) {
        m[i].dims = dims;
        m[i].coord = (uint32_t *) fastpmix_calloc(dims, sizeof(uint32_t));
    }
    return m;
}
static inline void fastpmix_geometry_destruct(pmix_geometry_t *m)
{
    size_t i;
    fastpmix_free_str(&m->uuid);
    fastpmix_free_str(&m->osname);
    for (i = 0; NULL != m->coordinates && i < m->ncoords; i++) {
        fastpmix_coord_destruct(&m->coordinates[i]);
    }
    free(m->coordinates);
    m->coordinates = NULL;
    m->ncoords = 0;
}
static inline pmix_device_distance_t *fastpmix_device_dist_create(size_t n)
{
    size_t i;
    pmix_device_distance_t *m =
        (pmix_device_distance_t *) fastpmix_calloc(n, sizeof(pmix_device_distance_t));
    for (i = 0; NULL != m && i < n; i++) {
        m[i].mindist = UINT16_MAX;
        m[i].maxdist = UINT16_MAX;
    }
    return m;
}
static inline void fastpmix_device_dist_destruct(pmix_device_distance_t *m)
{
    fastpmix_free_str(&m->uuid);
    fastpmix_free_str(&m->osname);
}
static inline void fastpmix_endpoint_destruct(pmix_endpoint_t *m)
{
    fastpmix_free_str(&m->uuid);
    fastpmix_free_str(&m->osname);
    fastpmix_free_str(&m->endpt.bytes);
    m->endpt.size = 0;
}
static inline void fastpmix_proc_stats_destruct(pmix_proc_stats_t *m)
{
    fastpmix_free_str(&m->node);
    fastpmix_free_str(&m->cmd);
}
static inline void fastpmix_disk_stats_destruct(pmix_disk_stats_t *m)
{
    fastpmix_free_str(&m->disk);
}
static inline void fastpmix_net_stats_destruct(pmix_net_stats_t *m)
{
    fastpmix_free_str(&m->net_interface);
}
static inline void fastpmix_node_stats_destruct(pmix_node_stats_t *m)
{
    size_t i;
    fastpmix_free_str(&m->node);
    for (i = 0; NULL != m->diskstats && i < m->ndiskstats; i++) {
        fastpmix_disk_stats_destruct(&m->diskstats[i]);
    }
    free(m->diskstats);
    m->diskstats = NULL;
    m->ndiskstats = 0;
    for (i = 0; NULL != m->netstats && i < m->nnetstats; i++) {
        fastpmix_net_stats_destruct(&m->netstats[i]);
    }
    free(m->netstats);
    m->netstats = NULL;
    m->nnetstats = 0;
}
static inline void fastpmix_regattr_destruct(pmix_regattr_t *m)
{
    if (NULL != m) {
        fastpmix_free_str(&m->name);
        PMIx_Argv_free(m->description);
        m->description = NULL;
    }
}

/* An array of n elements destructed one by one, then freed; m set NULL. */
#define FASTPMIX_ARRAY_FREE(m, n, destruct)                                                     \
    do {                                                                                        \
        size_t fastpmix_i_;                                                                     \
        if (NULL != (m)) {                                                                      \
            for (fastpmix_i_ = 0; fastpmix_i_ < (size_t) (n); fastpmix_i_++) {                  \
                destruct(&(m)[fastpmix_i_]);                                                    \
            }                                                                                   \
            free((m));                                                                          \
            (m) = NULL;                                                                         \
        }                                                                                       \
    } while (0)

/* ---- keys, procs, info flags, values ---- */
#define PMIX_CHECK_RESERVED_KEY(a) (0 == strncmp((a), "pmix", 4))
#define PMIX_XFER_PROCID(a, b) memcpy((a), (b), sizeof(pmix_proc_t))
#define PMIX_PROCID_XFER(a, b) PMIX_XFER_PROCID((a), (b))
#define PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, c, n)                                             \
    do {                                                                                        \
        size_t fastpmix_lc_ = strlen((c)), fastpmix_ln_ = strlen((n));                          \
        memset((t), 0, PMIX_MAX_NSLEN + 1);                                                     \
        if (fastpmix_lc_ + fastpmix_ln_ < PMIX_MAX_NSLEN) {                                     \
            memcpy((t), (c), fastpmix_lc_);                                                     \
            (t)[fastpmix_lc_] = ':';                                                            \
            memcpy(&(t)[fastpmix_lc_ + 1], (n), fastpmix_ln_);                                  \
        }                                                                                       \
    } while (0)
#define PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, n)                                                 \
    do {                                                                                        \
        size_t fastpmix_i_ = 0, fastpmix_j_ = 0;                                                \
        for (; fastpmix_i_ <= PMIX_MAX_NSLEN && '\0' != (t)[fastpmix_i_] &&                     \
               ':' != (t)[fastpmix_i_];                                                         \
             fastpmix_i_++) {                                                                   \
            (c)[fastpmix_i_] = (t)[fastpmix_i_];                                                \
        }                                                                                       \
        for (fastpmix_i_++; fastpmix_i_ <= PMIX_MAX_NSLEN && '\0' != (t)[fastpmix_i_];          \
             fastpmix_i_++, fastpmix_j_++) {                                                    \
            (n)[fastpmix_j_] = (t)[fastpmix_i_];                                                \
        }                                                                                       \
    } while (0)
#define PMIX_INFO_PROCESSED(m) ((m)->flags |= PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_WAS_PROCESSED(m) ((m)->flags & PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_SET_END(m) ((m)->flags |= PMIX_INFO_ARRAY_END)
#define PMIX_INFO_IS_END(m) ((m)->flags & PMIX_INFO_ARRAY_END)
#define PMIX_INFO_SET_QUALIFIER(m) ((m)->flags |= PMIX_INFO_QUALIFIER)
#define PMIX_INFO_IS_QUALIFIER(m) ((m)->flags & PMIX_INFO_QUALIFIER)
#define PMIX_INFO_SET_PERSISTENT(m) ((m)->flags |= PMIX_INFO_PERSISTENT)
#define PMIX_INFO_IS_PERSISTENT(m) ((m)->flags & PMIX_INFO_PERSISTENT)
#define PMIX_CHECK_TRUE(a) (PMIX_BOOL_TRUE == fastpmix_check_true((a)))
#define PMIX_CHECK_BOOL(a) (PMIX_NON_BOOL != fastpmix_check_true((a)))
#define PMIX_INFO_LIST_INSERT(r, p, i) ((r) = PMIx_Info_list_insert((p), (i)))
/* Deprecated: XFER into an existing value. */
#define PMIX_VALUE_XFER_DIRECT(r, v, s) ((r) = PMIx_Value_xfer((v), (s)))
/* A number of any integer or floating type (s: PMIX_SUCCESS or
 * PMIX_ERR_BAD_PARAM), converted to type t. */
#define PMIX_VALUE_GET_NUMBER(s, m, n, t)                                                       \
    do {                                                                                        \
        (s) = PMIX_SUCCESS;                                                                     \
        switch ((m)->type) {                                                                    \
        case PMIX_SIZE: (n) = (t) ((m)->data.size); break;                                      \
        case PMIX_INT: (n) = (t) ((m)->data.integer); break;                                    \
        case PMIX_INT8: (n) = (t) ((m)->data.int8); break;                                      \
        case PMIX_INT16: (n) = (t) ((m)->data.int16); break;                                    \
        case PMIX_INT32: (n) = (t) ((m)->data.int32); break;                                    \
        case PMIX_INT64: (n) = (t) ((m)->data.int64); break;                                    \
        case PMIX_UINT: (n) = (t) ((m)->data.uint); break;                                      \
        case PMIX_UINT8: (n) = (t) ((m)->data.uint8); break;                                    \
        case PMIX_UINT16: (n) = (t) ((m)->data.uint16); break;                                  \
        case PMIX_UINT32: (n) = (t) ((m)->data.uint32); break;                                  \
        case PMIX_UINT64: (n) = (t) ((m)->data.uint64); break;                                  \
        case PMIX_FLOAT: (n) = (t) ((m)->data.fval); break;                                     \
        case PMIX_DOUBLE: (n) = (t) ((m)->data.dval); break;                                    \
        case PMIX_PID: (n) = (t) ((m)->data.pid); break;                                        \
        case PMIX_PROC_RANK: (n) = (t) ((m)->data.rank); break;                                 \
        default: (s) = PMIX_ERR_BAD_PARAM; break;                                               \
        }                                                                                       \
    } while (0)

/* ---- argv and environment ---- */
#define PMIX_ARGV_COUNT(r, a) ((r) = PMIx_Argv_count((a)))
#define PMIX_ARGV_APPEND(r, a, b) ((r) = PMIx_Argv_append_nosize(&(a), (b)))
#define PMIX_ARGV_PREPEND(r, a, b) ((r) = PMIx_Argv_prepend_nosize(&(a), (b)))
/* As in OpenPMIx 4.2, `a` is the address of the array here. */
#define PMIX_ARGV_APPEND_UNIQUE(r, a, b) ((r) = PMIx_Argv_append_unique_nosize((a), (b)))
#define PMIX_ARGV_FREE(a) PMIx_Argv_free((a))
#define PMIX_ARGV_SPLIT(a, b, c) ((a) = PMIx_Argv_split((b), (c)))
#define PMIX_ARGV_JOIN(a, b, c) ((a) = PMIx_Argv_join((b), (c)))
#define PMIX_ARGV_COPY(a, b) ((a) = PMIx_Argv_copy((b)))
#define PMIX_SETENV(r, a, b, c) ((r) = PMIx_Setenv((a), (b), true, (c)))

/* ---- pmix_byte_object_t, pmix_envar_t, pmix_data_buffer_t ---- */
#define PMIX_BYTE_OBJECT_CREATE(m, n)                                                           \
    ((m) = (pmix_byte_object_t *) fastpmix_calloc((n), sizeof(pmix_byte_object_t)))
#define PMIX_BYTE_OBJECT_CONSTRUCT(m) memset((m), 0, sizeof(pmix_byte_object_t))
#define PMIX_BYTE_OBJECT_DESTRUCT(m)                                                            \
    do {                                                                                        \
        fastpmix_free_str(&(m)->bytes);                                                         \
        (m)->size = 0;                                                                          \
    } while (0)
#define FASTPMIX_BO_DESTRUCT_(m) PMIX_BYTE_OBJECT_DESTRUCT(m)
#define PMIX_BYTE_OBJECT_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), FASTPMIX_BO_DESTRUCT_)
/* Moves d (malloc'd, s bytes) into the byte object; d and s are zeroed. */
#define PMIX_BYTE_OBJECT_LOAD(b, d, s)                                                          \
    do {                                                                                        \
        (b)->bytes = (char *) (d);                                                              \
        (d) = NULL;                                                                             \
        (b)->size = (s);                                                                        \
        (s) = 0;                                                                                \
    } while (0)
#define PMIX_ENVAR_CREATE(m, n) ((m) = (pmix_envar_t *) fastpmix_calloc((n), sizeof(pmix_envar_t)))
#define PMIX_ENVAR_CONSTRUCT(m) memset((m), 0, sizeof(pmix_envar_t))
#define PMIX_ENVAR_DESTRUCT(m)                                                                  \
    do {                                                                                        \
        fastpmix_free_str(&(m)->envar);                                                         \
        fastpmix_free_str(&(m)->value);                                                         \
    } while (0)
#define FASTPMIX_ENVAR_DESTRUCT_(m) PMIX_ENVAR_DESTRUCT(m)
#define PMIX_ENVAR_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), FASTPMIX_ENVAR_DESTRUCT_)
#define PMIX_ENVAR_LOAD(m, e, v, s)                                                             \
    do {                                                                                        \
        (m)->envar = fastpmix_strdup((e));                                                      \
        (m)->value = fastpmix_strdup((v));                                                      \
        (m)->separator = (s);                                                                   \
    } while (0)
#define PMIX_DATA_BUFFER_CREATE(m)                                                              \
    ((m) = (pmix_data_buffer_t *) calloc(1, sizeof(pmix_data_buffer_t)))
#define PMIX_DATA_BUFFER_CONSTRUCT(m) memset((m), 0, sizeof(pmix_data_buffer_t))
#define PMIX_DATA_BUFFER_DESTRUCT(m)                                                            \
    do {                                                                                        \
        fastpmix_free_str(&(m)->base_ptr);                                                      \
        memset((m), 0, sizeof(pmix_data_buffer_t));                                             \
    } while (0)
#define PMIX_DATA_BUFFER_RELEASE(m)                                                             \
    do {                                                                                        \
        PMIX_DATA_BUFFER_DESTRUCT((m));                                                         \
        free((m));                                                                              \
        (m) = NULL;                                                                             \
    } while (0)
#define PMIX_DATA_BUFFER_LOAD(b, d, s)                                                          \
    do {                                                                                        \
        pmix_byte_object_t fastpmix_bo_;                                                        \
        fastpmix_bo_.bytes = (char *) (d);                                                      \
        fastpmix_bo_.size = (s);                                                                \
        (void) PMIx_Data_load((b), &fastpmix_bo_);                                              \
    } while (0)
#define PMIX_DATA_BUFFER_UNLOAD(b, d, s)                                                        \
    do {                                                                                        \
        pmix_byte_object_t fastpmix_bo_ = {NULL, 0};                                            \
        if (PMIX_SUCCESS == PMIx_Data_unload((b), &fastpmix_bo_)) {                             \
            (d) = fastpmix_bo_.bytes;                                                           \
            (s) = fastpmix_bo_.size;                                                            \
        } else {                                                                                \
            (d) = NULL;                                                                         \
            (s) = 0;                                                                            \
        }                                                                                       \
    } while (0)

/* ---- pmix_proc_info_t, pmix_pdata_t, pmix_app_t, pmix_query_t ---- */
#define PMIX_PROC_INFO_CREATE(m, n)                                                             \
    ((m) = (pmix_proc_info_t *) fastpmix_calloc((n), sizeof(pmix_proc_info_t)))
#define PMIX_PROC_INFO_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_info_t))
#define PMIX_PROC_INFO_DESTRUCT(m) fastpmix_proc_info_destruct((m))
#define PMIX_PROC_INFO_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_proc_info_destruct)
#define PMIX_PROC_INFO_RELEASE(m) PMIX_PROC_INFO_FREE((m), 1)
#define PMIX_PDATA_CREATE(m, n) ((m) = (pmix_pdata_t *) fastpmix_calloc((n), sizeof(pmix_pdata_t)))
#define PMIX_PDATA_CONSTRUCT(m) memset((m), 0, sizeof(pmix_pdata_t))
#define PMIX_PDATA_DESTRUCT(m) PMIx_Value_destruct(&(m)->value)
#define FASTPMIX_PDATA_DESTRUCT_(m) PMIX_PDATA_DESTRUCT(m)
#define PMIX_PDATA_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), FASTPMIX_PDATA_DESTRUCT_)
#define PMIX_PDATA_RELEASE(m) PMIX_PDATA_FREE((m), 1)
#define PMIX_PDATA_LOAD(m, p, k, v, t)                                                          \
    do {                                                                                        \
        if (NULL != (m)) {                                                                      \
            memset((m), 0, sizeof(pmix_pdata_t));                                               \
            PMIX_LOAD_PROCID(&(m)->proc, (p)->nspace, (p)->rank);                               \
            PMIX_LOAD_KEY((m)->key, (k));                                                       \
            (void) PMIx_Value_load(&(m)->value, (v), (t));                                      \
        }                                                                                       \
    } while (0)
#define PMIX_PDATA_XFER(d, s)                                                                   \
    do {                                                                                        \
        if (NULL != (d)) {                                                                      \
            memset((d), 0, sizeof(pmix_pdata_t));                                               \
            PMIX_LOAD_PROCID(&(d)->proc, (s)->proc.nspace, (s)->proc.rank);                     \
            PMIX_LOAD_KEY((d)->key, (s)->key);                                                  \
            (void) PMIx_Value_xfer(&(d)->value, &(s)->value);                                   \
        }                                                                                       \
    } while (0)
#define PMIX_APP_CREATE(m, n) ((m) = (pmix_app_t *) fastpmix_calloc((n), sizeof(pmix_app_t)))
#define PMIX_APP_CONSTRUCT(m) memset((m), 0, sizeof(pmix_app_t))
#define PMIX_APP_DESTRUCT(m) fastpmix_app_destruct((m))
#define PMIX_APP_INFO_CREATE(m, n)                                                              \
    do {                                                                                        \
        (m)->ninfo = (n);                                                                       \
        (m)->info = PMIx_Info_create((n));                                                      \
    } while (0)
#define PMIX_APP_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_app_destruct)
#define PMIX_APP_RELEASE(m) PMIX_APP_FREE((m), 1)
#define PMIX_QUERY_CREATE(m, n) ((m) = (pmix_query_t *) fastpmix_calloc((n), sizeof(pmix_query_t)))
#define PMIX_QUERY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_query_t))
#define PMIX_QUERY_DESTRUCT(m) fastpmix_query_destruct((m))
#define PMIX_QUERY_QUALIFIERS_CREATE(m, n)                                                      \
    do {                                                                                        \
        (m)->nqual = (n);                                                                       \
        (m)->qualifiers = PMIx_Info_create((n));                                                \
    } while (0)
#define PMIX_QUERY_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_query_destruct)
#define PMIX_QUERY_RELEASE(m) PMIX_QUERY_FREE((m), 1)

/* ---- coordinates, cpusets, topologies, geometry, distances, endpoints ---- */
#define PMIX_COORD_CREATE(m, n, d) ((m) = fastpmix_coord_create((n), (d)))
#define PMIX_COORD_CONSTRUCT(m) memset((m), 0, sizeof(pmix_coord_t))
#define PMIX_COORD_DESTRUCT(m) fastpmix_coord_destruct((m))
#define PMIX_COORD_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_coord_destruct)
#define PMIX_CPUSET_CONSTRUCT(m) memset((m), 0, sizeof(pmix_cpuset_t))
#define PMIX_CPUSET_CREATE(m, n) ((m) = (pmix_cpuset_t *) fastpmix_calloc((n), sizeof(pmix_cpuset_t)))
#define PMIX_TOPOLOGY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_topology_t))
#define PMIX_TOPOLOGY_CREATE(m, n)                                                              \
    ((m) = (pmix_topology_t *) fastpmix_calloc((n), sizeof(pmix_topology_t)))
#define PMIX_TOPOLOGY_DESTRUCT(m) PMIx_Topology_destruct((m))
#define PMIX_GEOMETRY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_geometry_t))
#define PMIX_GEOMETRY_DESTRUCT(m) fastpmix_geometry_destruct((m))
#define PMIX_GEOMETRY_CREATE(m, n)                                                              \
    ((m) = (pmix_geometry_t *) fastpmix_calloc((n), sizeof(pmix_geometry_t)))
#define PMIX_GEOMETRY_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_geometry_destruct)
#define PMIX_DEVICE_DIST_CONSTRUCT(m)                                                           \
    do {                                                                                        \
        memset((m), 0, sizeof(pmix_device_distance_t));                                        \
        (m)->mindist = UINT16_MAX;                                                              \
        (m)->maxdist = UINT16_MAX;                                                              \
    } while (0)
#define PMIX_DEVICE_DIST_DESTRUCT(m) fastpmix_device_dist_destruct((m))
#define PMIX_DEVICE_DIST_CREATE(m, n) ((m) = fastpmix_device_dist_create((n)))
#define PMIX_DEVICE_DIST_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_device_dist_destruct)
#define PMIX_ENDPOINT_CONSTRUCT(m) memset((m), 0, sizeof(pmix_endpoint_t))
#define PMIX_ENDPOINT_DESTRUCT(m) fastpmix_endpoint_destruct((m))
#define PMIX_ENDPOINT_CREATE(m, n)                                                              \
    ((m) = (pmix_endpoint_t *) fastpmix_calloc((n), sizeof(pmix_endpoint_t)))
#define PMIX_ENDPOINT_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_endpoint_destruct)

/* ---- statistics ---- */
#define PMIX_PROC_STATS_CREATE(m, n)                                                            \
    ((m) = (pmix_proc_stats_t *) fastpmix_calloc((n), sizeof(pmix_proc_stats_t)))
#define PMIX_PROC_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_stats_t))
#define PMIX_PROC_STATS_DESTRUCT(m) fastpmix_proc_stats_destruct((m))
#define PMIX_PROC_STATS_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_proc_stats_destruct)
#define PMIX_PROC_STATS_RELEASE(m) PMIX_PROC_STATS_FREE((m), 1)
#define PMIX_DISK_STATS_CREATE(m, n)                                                            \
    ((m) = (pmix_disk_stats_t *) fastpmix_calloc((n), sizeof(pmix_disk_stats_t)))
#define PMIX_DISK_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_disk_stats_t))
#define PMIX_DISK_STATS_DESTRUCT(m) fastpmix_disk_stats_destruct((m))
#define PMIX_DISK_STATS_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_disk_stats_destruct)
#define PMIX_DISK_STATS_RELEASE(m) PMIX_DISK_STATS_FREE((m), 1)
#define PMIX_NET_STATS_CREATE(m, n)                                                             \
    ((m) = (pmix_net_stats_t *) fastpmix_calloc((n), sizeof(pmix_net_stats_t)))
#define PMIX_NET_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_net_stats_t))
#define PMIX_NET_STATS_DESTRUCT(m) fastpmix_net_stats_destruct((m))
#define PMIX_NET_STATS_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_net_stats_destruct)
#define PMIX_NET_STATS_RELEASE(m) PMIX_NET_STATS_FREE((m), 1)
#define PMIX_NODE_STATS_CREATE(m, n)                                                            \
    ((m) = (pmix_node_stats_t *) fastpmix_calloc((n), sizeof(pmix_node_stats_t)))
#define PMIX_NODE_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_node_stats_t))
#define PMIX_NODE_STATS_DESTRUCT(m) fastpmix_node_stats_destruct((m))
#define PMIX_NODE_STATS_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_node_stats_destruct)
#define PMIX_NODE_STATS_RELEASE(m) PMIX_NODE_STATS_FREE((m), 1)

/* ---- attribute registration, fabrics ---- */
#define PMIX_REGATTR_CONSTRUCT(a) memset((a), 0, sizeof(pmix_regattr_t))
#define PMIX_REGATTR_LOAD(a, n, k, t, v)                                                        \
    do {                                                                                        \
        (a)->name = fastpmix_strdup((n));                                                       \
        PMIX_LOAD_KEY((a)->string, (k));                                                        \
        (a)->type = (t);                                                                        \
        if (NULL != (v)) {                                                                      \
            (void) PMIx_Argv_append_nosize(&(a)->description, (v));                             \
        }                                                                                       \
    } while (0)
#define PMIX_REGATTR_DESTRUCT(a) fastpmix_regattr_destruct((a))
#define PMIX_REGATTR_CREATE(m, n)                                                               \
    ((m) = (pmix_regattr_t *) fastpmix_calloc((n), sizeof(pmix_regattr_t)))
#define PMIX_REGATTR_FREE(m, n) FASTPMIX_ARRAY_FREE((m), (n), fastpmix_regattr_destruct)
#define PMIX_REGATTR_XFER(a, b)                                                                 \
    do {                                                                                        \
        memset((a), 0, sizeof(pmix_regattr_t));                                                 \
        (a)->name = fastpmix_strdup((b)->name);                                                 \
        PMIX_LOAD_KEY((a)->string, (b)->string);                                                \
        (a)->type = (b)->type;                                                                  \
        (a)->description = PMIx_Argv_copy((b)->description);                                    \
    } while (0)
#define PMIX_FABRIC_CONSTRUCT(x) memset((x), 0, sizeof(pmix_fabric_t))

#ifdef __cplusplus
}
#endif

#endif /* FASTPMIX_PMIX_COMMON_H */
