/*
 * pmix-compare: data exchange. PMIx_Put, PMIx_Commit, PMIx_Fence with and
 * without PMIX_COLLECT_DATA, PMIx_Get of a peer's committed key. The
 * parent's scenarios (rows get, fence-N, fence-collect-N, wireup-N) and
 * the children's part of them (roles dget, dput, dfence, dwire).
 *
 * Every rank puts the same four keys a wire-up typically does (an id, an
 * address string, a 64-byte address blob, a flag), each of scope
 * PMIX_GLOBAL, and every Get checks the value it got (a wrong, missing
 * or stale one counts as bad). Timestamps go into the shared memory; nothing the
 * harness needs travels through PMIx.
 */
#include "parent.h"

#include <stdlib.h>
#include <string.h>

#define NKEYS 4
#define BLOB 64

/* ---------- the keys and their values (both sides) ---------- */

/* The same keys in every iteration, their values changing: a later
 * iteration replaces what the earlier one put instead of adding to it, so
 * the data a fence collects does not grow from one to the next (OpenPMIx
 * collects everything a rank committed, each time). */
static void key_of(char *key, size_t len, uint32_t j) {
    snprintf(key, len, "bench.d%u", j);
}

/* The value rank `rank` puts under key j in iteration `iter`; `str` and
 * `blob` hold the bytes a string or byte object points to. */
static void value_of(pmix_value_t *v, uint32_t rank, uint32_t iter, uint32_t j, char str[48],
                     uint8_t blob[BLOB]) {
    memset(v, 0, sizeof *v);
    switch (j) {
    case 0:
        v->type = PMIX_UINT64;
        v->data.uint64 = (uint64_t)rank << 32 | iter;
        break;
    case 1:
        snprintf(str, 48, "ep:%u:%u:bench-endpoint-address", rank, iter);
        v->type = PMIX_STRING;
        v->data.string = str;
        break;
    case 2:
        for (int i = 0; i < BLOB; i++)
            blob[i] = (uint8_t)(rank * 31 + iter + (uint32_t)i);
        v->type = PMIX_BYTE_OBJECT;
        v->data.bo.bytes = (char *)blob;
        v->data.bo.size = BLOB;
        break;
    default:
        v->type = PMIX_UINT32;
        v->data.uint32 = rank ^ iter;
    }
}

static int value_ok(const pmix_value_t *v, uint32_t rank, uint32_t iter, uint32_t j) {
    char str[48];
    uint8_t blob[BLOB];
    pmix_value_t want;
    value_of(&want, rank, iter, j, str, blob);
    if (!v || v->type != want.type)
        return 0;
    switch (want.type) {
    case PMIX_UINT64:
        return v->data.uint64 == want.data.uint64;
    case PMIX_STRING:
        return v->data.string && !strcmp(v->data.string, str);
    case PMIX_BYTE_OBJECT:
        return v->data.bo.size == BLOB && !memcmp(v->data.bo.bytes, blob, BLOB);
    default:
        return v->data.uint32 == want.data.uint32;
    }
}

/* ---------- the children's part ---------- */

static void put_keys(const pmix_proc_t *me, uint32_t iter) {
    for (uint32_t j = 0; j < NKEYS; j++) {
        char str[48];
        pmix_key_t key;
        uint8_t blob[BLOB];
        pmix_value_t v;
        key_of(key, sizeof key, j);
        value_of(&v, me->rank, iter, j, str, blob);
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        if (rc != PMIX_SUCCESS)
            child_fail("PMIx_Put", rc);
    }
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        child_fail("PMIx_Commit", rc);
}

static void fence(int collect) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    if (rc != PMIX_SUCCESS)
        child_fail(collect ? "PMIx_Fence with PMIX_COLLECT_DATA" : "PMIx_Fence", rc);
}

/* One Get of `rank`'s key j of iteration `iter`; a wrong value counts as
 * bad. Returns the ns the call took. */
static int64_t get_one(struct shared *s, uint32_t idx, const pmix_proc_t *me, uint32_t rank,
                       uint32_t iter, uint32_t j) {
    pmix_key_t key;
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    key_of(key, sizeof key, j);
    memset(&p, 0, sizeof p);
    memcpy(p.nspace, me->nspace, sizeof p.nspace);
    p.rank = rank;
    int64_t t = now_ns();
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    t = now_ns() - t;
    if (rc != PMIX_SUCCESS)
        child_fail("PMIx_Get of a peer's key", rc);
    if (!value_ok(v, rank, iter, j))
        s->bad[idx]++;
    if (v)
        PMIX_VALUE_RELEASE(v);
    return t;
}

/* get: rank 1 puts and commits, both fence with collection, then rank 0
 * times niter Gets of rank 1's first key, one at a time. */
static void run_get(struct shared *s, const char *role, uint32_t idx, const pmix_proc_t *me) {
    if (!strcmp(role, "dput")) {
        put_keys(me, 0);
        fence(1);
        return;
    }
    fence(1);
    for (uint32_t i = 0; i < s->niter; i++)
        slot(s, 0)[i] = get_one(s, idx, me, 1, 0, 0);
}

/* fence: niter fences back to back, each rank's entry and exit times in
 * its slots idx and nchild + idx. With collection, every rank committed
 * its keys before (so each fence collects them again), and after the
 * last fence gets one key of each peer (bad when wrong). */
static void run_fence(struct shared *s, uint32_t idx, const pmix_proc_t *me) {
    uint32_t n = s->nchild;
    if (s->collect)
        put_keys(me, 0);
    fence(0); /* every rank at the start line, untimed */
    for (uint32_t j = 0; j < s->niter; j++) {
        slot(s, idx)[j] = now_ns();
        fence((int)s->collect);
        slot(s, n + idx)[j] = now_ns();
    }
    if (s->collect)
        for (uint32_t r = 0; r < n; r++)
            if (r != me->rank)
                get_one(s, idx, me, r, 0, (r + me->rank) % NKEYS);
}

/* wireup, iteration `iter`: put 4 keys, commit, fence with collection,
 * get every peer's 4 keys; the start and end in slots idx and n + idx. */
static void run_wireup(struct shared *s, uint32_t idx, const pmix_proc_t *me, uint32_t iter) {
    uint32_t n = s->nchild;
    int64_t t0 = now_ns();
    put_keys(me, iter);
    fence(1);
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t j = 0; r != me->rank && j < NKEYS; j++)
            get_one(s, idx, me, r, iter, j);
    slot(s, n + idx)[iter] = now_ns();
    slot(s, idx)[iter] = t0;
}

int data_role(const char *role) {
    return !strcmp(role, "dget") || !strcmp(role, "dput") || !strcmp(role, "dfence") ||
           !strcmp(role, "dwire");
}

void data_run(struct shared *s, const char *role, uint32_t idx, const pmix_proc_t *me,
              uint32_t arg) {
    if (!strcmp(role, "dfence"))
        run_fence(s, idx, me);
    else if (!strcmp(role, "dwire"))
        run_wireup(s, idx, me, arg);
    else
        run_get(s, role, idx, me);
}

/* ---------- the parent's scenarios ---------- */

static void start(uint32_t n, const char *role) {
    const char *roles[MAXCH];
    for (uint32_t i = 0; i < n; i++)
        roles[i] = role;
    start_pmix(n, roles);
}

void sc_get(void) {
    const char *roles[] = {"dget", "dput"};
    shared_create(1, opt.iters);
    start_pmix(2, roles);
    command(OP_RUN, 0, 2);
    report_last("get", 1, 0);
    stop_all();
}

/* Per fence: from the last rank's entry to the last rank's exit (a
 * barrier lets nobody out before everyone is in), into slot 2n. */
void sc_fence(uint32_t n, int collect) {
    shared_create(2 * n + 1, opt.iters);
    S->collect = (uint32_t)collect;
    start(n, "dfence");
    command(OP_RUN, 0, n);
    int64_t *out = slot(S, 2 * n);
    for (uint32_t j = 0; j < opt.iters; j++) {
        int64_t in = -1, ex = -1;
        int miss = 0;
        for (uint32_t r = 0; r < n; r++) {
            int64_t a = slot(S, r)[j], b = slot(S, n + r)[j];
            miss |= a < 0 || b < 0;
            in = a > in ? a : in;
            ex = b > ex ? b : ex;
        }
        out[j] = miss ? -1 : ex - in;
    }
    char row[32];
    snprintf(row, sizeof row, collect ? "fence-collect-%u" : "fence-%u", n);
    report_last(row, 1, 2 * n);
    stop_all();
}

/* Per iteration: from the first rank's start to the last rank's end. The
 * ranks start when the parent's command wakes them (one FUTEX_WAKE for
 * all, as floor-fanout-N), so the spread of their wake-ups is in it, the
 * same for both libraries. The row's measure is the first iteration
 * (first=): a job's wire-up, on a fresh namespace. The later ones put the
 * same keys again (again=: their p50) and say what a repeated exchange
 * costs (OpenPMIx's grew from one to the next in our runs). */
void sc_wireup(uint32_t n) {
    uint32_t k = opt.iters;
    shared_create(2 * n, k);
    start(n, "dwire");
    for (uint32_t it = 0; it < k; it++)
        command(OP_RUN, it, n);
    int64_t *v = malloc(sizeof *v * k);
    uint64_t bad = 0;
    for (uint32_t r = 0; r < n; r++)
        bad += S->bad[r];
    for (uint32_t it = 0; it < k; it++) {
        int64_t t0 = INT64_MAX, t1 = -1;
        for (uint32_t r = 0; r < n; r++) {
            int64_t a = slot(S, r)[it], b = slot(S, n + r)[it];
            t0 = a >= 0 && a < t0 ? a : t0;
            t1 = b > t1 ? b : t1;
        }
        v[it] = t1 - t0;
    }
    char row[32];
    snprintf(row, sizeof row, "wireup-%u", n);
    if (opt.csv) {
        FILE *f = fopen(opt.csv, "a");
        if (!f)
            die("%s: cannot open", opt.csv);
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0)
            fprintf(f, "row,lib,iteration,rank,start_ns,end_ns\n");
        for (uint32_t it = 0; it < k; it++)
            for (uint32_t r = 0; r < n; r++)
                fprintf(f, "%s,%s,%u,%u,%lld,%lld\n", row, LIB, it, r,
                        (long long)slot(S, r)[it], (long long)slot(S, n + r)[it]);
        fclose(f);
    }
    int64_t first = v[0];
    double p50, p90, p99;
    percentiles(v + 1, k - 1, &p50, &p90, &p99);
    printf("RESULT\t%s\t%s\tfirst=%lld\tagain=%.0f\tagain_p99=%.0f\tn=%u\tbad=%llu\n", row,
           LIB, (long long)first, p50, p99, k, (unsigned long long)bad);
    free(v);
    stop_all();
}
