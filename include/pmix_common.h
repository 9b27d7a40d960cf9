/*
 * fastpmix: the PMIx Standard's common types, structures and helper macros.
 *
 * Written for fastpmix from the Standard's definitions (names, values and
 * layouts as listed in docs/abi.md); layouts are identical to the Standard's
 * x86_64 ABI, so code written against the Standard compiles unchanged.
 * Every macro that allocates or releases memory calls a function of
 * libfastpmix, so memory always comes from, and returns to, malloc/free.
 */
#ifndef FASTPMIX_PMIX_COMMON_H
#define FASTPMIX_PMIX_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

#ifdef __cplusplus
}
#endif

#endif /* FASTPMIX_PMIX_COMMON_H */
