/*
 * One event through 20,000 C handlers registered for one code (the chain
 * used to convert every earlier result for every handler: 13 s for one
 * event, and 100,000 handlers did not finish in a minute).
 *
 * Handler i is named "h<i>" and appended, so it runs i-th: it checks that
 * its own name is in its info array, that it sees exactly the i status
 * entries of the handlers before it, and that the last of them is h<i-1>'s
 * PMIX_SUCCESS. The LAST handler checks every one of the 20,000 entries
 * (keys in order, each a PMIX_STATUS of PMIX_SUCCESS) and prints
 *   chain <handlers run> bad=<handlers whose view was wrong> results=<n> <ok|first mismatch>
 * A hang is a chain where no handler ran for HANG_SECS.
 */
#define _GNU_SOURCE
#include "client_common.h"

#define NHANDLERS 20000
static const pmix_status_t code = -8300; /* user-defined, below PMIX_EXTERNAL_ERR_BASE */

static pmix_proc_t me;
static atomic_int ran;  /* chain handlers run so far (not LAST) */
static atomic_int bad;  /* of them, those whose view was wrong */
static atomic_int done; /* the LAST handler ran */

static const char *name_of(const pmix_info_t *info, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_HDLR_NAME) && PMIX_STRING == info[i].value.type) {
            return info[i].value.data.string;
        }
    }
    return "";
}

/* Is r the status entry PMIX_SUCCESS of handler h<j>? */
static int is_status_of(const pmix_info_t *r, int j)
{
    char key[32];
    snprintf(key, sizeof key, "h%d", j);
    return PMIX_CHECK_KEY(r, key) && PMIX_STATUS == r->value.type
           && PMIX_SUCCESS == r->value.data.status;
}

static void step(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                 size_t ninfo, pmix_info_t results[], size_t nresults,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) status;
    (void) source;
    int i = atomic_fetch_add(&ran, 1);
    char want[32];
    snprintf(want, sizeof want, "h%d", i);
    int ok = 0 == strcmp(name_of(info, ninfo), want) && nresults == (size_t) i
             && (0 == i || is_status_of(&results[i - 1], i - 1));
    if (!ok) {
        atomic_fetch_add(&bad, 1);
    }
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void last(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                 size_t ninfo, pmix_info_t results[], size_t nresults,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) status;
    (void) source;
    (void) info;
    (void) ninfo;
    char verdict[64] = "ok";
    for (size_t j = 0; j < nresults; j++) {
        if (!is_status_of(&results[j], (int) j)) {
            snprintf(verdict, sizeof verdict, "mismatch-at-%zu", j);
            break;
        }
    }
    out("chain %d bad=%d results=%zu %s", atomic_load(&ran), atomic_load(&bad), nresults, verdict);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    atomic_store(&done, 1);
}

static void reg(const char *name, const char *directive, pmix_notification_fn_t fn)
{
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 2);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], directive, NULL, PMIX_BOOL);
    pmix_status_t c = code;
    int rc = PMIx_Register_event_handler(&c, 1, info, 2, fn, NULL, NULL);
    PMIX_INFO_FREE(info, 2);
    EXPECT(rc >= 1, "registering %s: %d (%s)", name, rc, PMIx_Error_string(rc));
}

int main(void)
{
    setup_output();
    int rc = PMIx_Init(&me, NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Init: %d", rc);
    reg("last", PMIX_EVENT_HDLR_LAST, last);
    for (int i = 0; i < NHANDLERS; i++) {
        char name[32];
        snprintf(name, sizeof name, "h%d", i);
        reg(name, PMIX_EVENT_HDLR_APPEND, step);
    }
    rc = PMIx_Notify_event(code, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    EXPECT(PMIX_SUCCESS == rc, "notify: %d", rc);
    /* A hang is no progress for HANG_SECS, however long the chain takes. */
    int seen = -1;
    while (!atomic_load(&done)) {
        int now = atomic_load(&ran);
        if (now == seen) {
            EXPECT(0, "no handler ran for %d s; %d of %d ran", HANG_SECS, now, NHANDLERS);
        }
        seen = now;
        for (int k = 0; k < HANG_SECS * 50 && !atomic_load(&done) && atomic_load(&ran) == seen; k++) {
            sleep_ms(20);
        }
    }
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(PMIX_SUCCESS == rc, "PMIx_Finalize: %d", rc);
    out("done");
    return 0;
}
