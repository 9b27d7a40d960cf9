/*
 * The most common PMIx idiom: a key macro (a string literal) passed straight
 * to PMIx_Get / PMIx_Get_nb, NULL info. This must compile without a warning
 * (the harness builds with -Wall -Wextra -Werror) and run
 * (`fastpmix run -n 1 client_literal_key`).
 *
 * Prints: literal get rc= value= | literal get_nb rc= cb_status= value= | done
 */
#define _GNU_SOURCE
#include "client_common.h"

static atomic_int done;
static int cb_status = 12345;
static uint32_t cb_value;

static void value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    (void) cbdata;
    cb_status = status;
    if (NULL != kv && PMIX_UINT32 == kv->type) {
        cb_value = kv->data.uint32;
    }
    atomic_store(&done, 1);
}

int main(void)
{
    setup_output();
    pmix_proc_t me, wild;
    init_or_fail(&me);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    int rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    out("literal get rc=%d value=%u", rc,
        (PMIX_SUCCESS == rc && NULL != v && PMIX_UINT32 == v->type) ? v->data.uint32 : 0u);
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
    rc = PMIx_Get_nb(&wild, PMIX_JOB_SIZE, NULL, 0, value_cb, NULL);
    if (PMIX_SUCCESS == rc) {
        EXPECT(wait_at_least(&done, 1), "Get_nb callback never ran");
    }
    out("literal get_nb rc=%d cb_status=%d value=%u", rc, cb_status, cb_value);
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
