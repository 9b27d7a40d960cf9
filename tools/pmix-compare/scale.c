/*
 * pmix-compare: the scale scenario. One job of N local ranks (N = 64 128
 * 256 from tools/bench-compare: many more processes than cores), measured
 * in five phases of the same job:
 *
 *   startup-N  every rank forked, exec'd and waiting on the start word
 *              before the parent stores it (one FUTEX_WAKE for all); each
 *              rank then calls PMIx_Init. From the parent's store to the
 *              last rank's return, and the p50 of the per-rank Init time.
 *   reg-N      on one command every rank registers one handler (blocking
 *              PMIx_Register_event_handler): p50 per call, and from the
 *              command to the last rank's return.
 *   mem-N      then each rank's VmRSS (/proc/self/status) and its shared
 *              and private parts (/proc/self/smaps_rollup), the server's
 *              VmRSS, and the shared memory the library made for the job:
 *              the files under the server's PMIX_SERVER_TMPDIR (OpenPMIx's
 *              dstore) and the /dev/shm objects named after this server
 *              (fastpmix: "fastpmix-UID-PID-..."), apparent size and
 *              allocated blocks, divided by N.
 *   relay-N    rank 0 notifies rank 1 alone (PMIX_RANGE_CUSTOM), one
 *              event at a time, through the server, while the other N - 2
 *              ranks stay attached and idle: rank 1's latency per event,
 *              and (row relaycpu-N) the server library's CPU per event, its
 *              process's CPU time minus its main thread's (which only
 *              sleeps meanwhile). A server that visits every attached
 *              client per event pays for N here.
 *   fanout-N   host notify -> every rank's handler, one event at a time;
 *              per event the last handler's latency (as the fanout rows).
 *
 * Per-rank values live in NMEAS extra sample slots after the N receivers'
 * (slot n + j holds measure j of every rank): the memfd is sized for
 * max(K, N) samples per slot. Every shared-memory object left after the
 * server's finalize, or after a failure, is removed and counted (left=).
 */
#include "scale.h"
#include "parent.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Per-rank measures: times in ns (CLOCK_MONOTONIC), memory in KiB. */
enum {
    M_START, M_END,   /* PMIx_Init's call and return */
    M_CPU0, M_CPU1,   /* the rank's CPU time (every thread) then */
    M_REG0, M_REG1,   /* the registration's call and return */
    M_RSS0,           /* VmRSS before PMIx_Init */
    M_RSS, M_PSS, M_SHR, M_PRIV, /* after PMIx_Init and one registration */
    NMEAS
};
/* The commands' phases (OP_RUN's argument). */
enum { PH_REG = 1, PH_MEM = 2, PH_RELAY = 3 };

static int64_t *meas(struct shared *s, uint32_t j) {
    return slot(s, s->nslots - NMEAS + j);
}

struct mem {
    int64_t rss, pss, shr, priv; /* KiB; -1 when the kernel does not say */
};

/* This process's VmRSS and, from smaps_rollup (Linux 4.14), its Pss and
 * the shared and private parts of its Rss. */
static void read_mem(struct mem *m) {
    char line[256];
    long long v;
    m->rss = m->pss = m->shr = m->priv = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmRSS: %lld", &v) == 1)
                m->rss = v;
        fclose(f);
    }
    f = fopen("/proc/self/smaps_rollup", "r");
    if (!f)
        return;
    int64_t shr = 0, priv = 0;
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "Pss: %lld", &v) == 1)
            m->pss = v;
        else if (sscanf(line, "Shared_Clean: %lld", &v) == 1 ||
                 sscanf(line, "Shared_Dirty: %lld", &v) == 1)
            shr += v, seen |= 1;
        else if (sscanf(line, "Private_Clean: %lld", &v) == 1 ||
                 sscanf(line, "Private_Dirty: %lld", &v) == 1)
            priv += v, seen |= 2;
    }
    fclose(f);
    if (seen & 1)
        m->shr = shr;
    if (seen & 2)
        m->priv = priv;
}

/* ---------- the children's part ---------- */

int scale_role(const char *role) {
    return !strcmp(role, "scale");
}

void scale_before_init(struct shared *s, uint32_t idx) {
    struct mem m;
    read_mem(&m);
    meas(s, M_RSS0)[idx] = m.rss;
    atomic_fetch_add(&s->ready, 1);
    futex_wake(&s->ready, 1);
    /* The parent stores the start word once all N are here; a parent
     * that died takes this process with it (PR_SET_PDEATHSIG). */
    while (!atomic_load(&s->go)) {
        if (atomic_load(&s->failed))
            _exit(3);
        futex_wait(&s->go, 0, 100000000);
    }
    meas(s, M_CPU0)[idx] = cpu_ns();
    meas(s, M_START)[idx] = now_ns();
}

void scale_after_init(struct shared *s, uint32_t idx) {
    meas(s, M_END)[idx] = now_ns();
    meas(s, M_CPU1)[idx] = cpu_ns();
}

/* relay-N, rank 0's part: `s->niter` events to rank 1 alone, the next
 * when rank 1 acked. */
static void relay_to_rank1(struct shared *s, const pmix_proc_t *me) {
    pmix_proc_t to;
    memset(&to, 0, sizeof to);
    snprintf(to.nspace, sizeof to.nspace, "%s", me->nspace);
    to.rank = 1;
    pmix_data_array_t range = {.type = PMIX_PROC, .size = 1, .array = &to};
    int64_t deadline = now_ns() + 600000000000LL;
    for (uint32_t i = 0; i < s->niter; i++) {
        pmix_info_t info[3];
        uint64_t t = (uint64_t)now_ns();
        mark_from_cpu(s);
        PMIX_INFO_LOAD(&info[0], KEY_T0, &t, PMIX_UINT64);
        PMIX_INFO_LOAD(&info[1], KEY_SEQ, &i, PMIX_UINT32);
        /* Not PMIX_INFO_LOAD: that would copy the array, and the
         * destructor would free `to`, which is on this stack. */
        PMIX_INFO_LOAD(&info[2], PMIX_EVENT_CUSTOM_RANGE, NULL, PMIX_UNDEF);
        info[2].value.type = PMIX_DATA_ARRAY;
        info[2].value.data.darray = &range;
        pmix_status_t rc =
            PMIx_Notify_event(BENCH_CODE, me, PMIX_RANGE_CUSTOM, info, 3, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            child_fail("PMIx_Notify_event (custom range)", rc);
        if (wait_ack(s, i + 1, deadline))
            child_fail("waiting for rank 1's ack", PMIX_ERR_TIMEOUT);
    }
}

void scale_run(struct shared *s, uint32_t idx, const pmix_proc_t *me, uint32_t arg) {
    if (arg == PH_RELAY) {
        if (idx == 0)
            relay_to_rank1(s, me);
    } else if (arg == PH_REG) {
        int64_t t = now_ns();
        child_register(BENCH_CODE);
        meas(s, M_REG1)[idx] = now_ns();
        meas(s, M_REG0)[idx] = t;
    } else if (arg == PH_MEM) {
        struct mem m;
        read_mem(&m);
        meas(s, M_RSS)[idx] = m.rss;
        meas(s, M_PSS)[idx] = m.pss;
        meas(s, M_SHR)[idx] = m.shr;
        meas(s, M_PRIV)[idx] = m.priv;
    }
}

/* ---------- the library's shared memory ---------- */

struct shm_use {
    uint64_t size, alloc; /* bytes: apparent, allocated blocks */
    uint32_t objs;
};
static struct shm_use *walk_use; /* nftw has no context argument */

static int add_file(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    (void)p, (void)f;
    if (flag == FTW_F && S_ISREG(sb->st_mode)) {
        walk_use->size += (uint64_t)sb->st_size;
        walk_use->alloc += (uint64_t)sb->st_blocks * 512;
        walk_use->objs++;
    }
    return 0;
}

/* fastpmix names every object of a server after its uid and pid
 * (src/ring/mapped/segment.rs, NAME_PREFIX); OpenPMIx 4.2.2 made none in
 * /dev/shm in our runs (its dstore files are in the server's tmpdir). */
static void shm_prefix(char *p, size_t len) {
    snprintf(p, len, "fastpmix-%u-%d-", (unsigned)getuid(), (int)getpid());
}

/* This server's /dev/shm objects (removed when `unlink_them`), and with
 * `tmp` the regular files under the server's tmpdir. */
static void shm_scan(struct shm_use *u, int tmp, int unlink_them) {
    char pre[64], path[512];
    memset(u, 0, sizeof *u);
    shm_prefix(pre, sizeof pre);
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));) {
        struct stat st;
        if (strncmp(e->d_name, pre, strlen(pre)))
            continue;
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (stat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        u->size += (uint64_t)st.st_size;
        u->alloc += (uint64_t)st.st_blocks * 512;
        u->objs++;
        if (unlink_them && unlink(path))
            fprintf(stderr, "bench: scale: cannot remove %s: %s\n", path, strerror(errno));
    }
    if (d)
        closedir(d);
    const char *t = server_tmpdir();
    if (tmp && t && *t) {
        walk_use = u;
        nftw(t, add_file, 16, FTW_PHYS);
    }
}

/* At exit after a failure (parent.c's cleanup has killed the children,
 * finalized the server and removed its tmpdir): reap every child and
 * remove what the server left in /dev/shm. */
static void scale_exit(void) {
    for (uint32_t i = 0; i < S->nchild; i++)
        while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    struct shm_use u;
    shm_scan(&u, 0, 1);
    if (u.objs)
        fprintf(stderr, "bench: scale: removed %u shared-memory object(s) the server left\n",
                u.objs);
}

/* ---------- the parent's scenario ---------- */

static void notify(int64_t t0, uint32_t seq) {
    pmix_info_t info[2];
    uint64_t t = (uint64_t)t0;
    PMIX_INFO_LOAD(&info[0], KEY_T0, &t, PMIX_UINT64);
    PMIX_INFO_LOAD(&info[1], KEY_SEQ, &seq, PMIX_UINT32);
    pmix_status_t rc = PMIx_Notify_event(BENCH_CODE, NULL, PMIX_RANGE_LOCAL, info, 2, NULL, NULL);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        die("scale: PMIx_Notify_event (host): %s (%d)", PMIx_Error_string(rc), rc);
}

/* The p50 of measure `a` - measure `b` over the ranks (b < 0: `a`
 * alone), every rank having both; -1 if one misses. Also the max. */
static double p50_of(uint32_t n, int a, int b, double *max) {
    int64_t *v = malloc(sizeof *v * n);
    double p50 = -1, p90, p99;
    *max = -1;
    uint32_t k = 0;
    for (uint32_t r = 0; r < n; r++) {
        int64_t x = meas(S, (uint32_t)a)[r], y = b < 0 ? 0 : meas(S, (uint32_t)b)[r];
        if (x < 0 || y < 0)
            break;
        v[k++] = x - y;
    }
    if (k == n && n) {
        percentiles(v, n, &p50, &p90, &p99);
        *max = (double)v[n - 1];
    }
    free(v);
    return p50;
}

static int64_t max_of(uint32_t n, int j) {
    int64_t m = -1;
    for (uint32_t r = 0; r < n; r++)
        m = meas(S, (uint32_t)j)[r] > m ? meas(S, (uint32_t)j)[r] : m;
    return m;
}

static void ranks_csv(uint32_t n, int64_t t_go) {
    if (!opt.csv)
        return;
    char p[1024];
    size_t l = strlen(opt.csv);
    snprintf(p, sizeof p, "%.*s-ranks.csv", (int)(l > 4 && !strcmp(opt.csv + l - 4, ".csv") ? l - 4 : l),
             opt.csv);
    FILE *f = fopen(p, "w");
    if (!f)
        die("%s: %s", p, strerror(errno));
    fprintf(f, "n,lib,rank,init_start_ns,init_end_ns,init_cpu_ns,reg_ns,rss0_kib,rss_kib,pss_kib,"
               "shared_kib,private_kib\n");
    for (uint32_t r = 0; r < n; r++)
        fprintf(f, "%u,%s,%u,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", n, LIB, r,
                (long long)(meas(S, M_START)[r] - t_go), (long long)(meas(S, M_END)[r] - t_go),
                (long long)(meas(S, M_CPU1)[r] - meas(S, M_CPU0)[r]),
                (long long)(meas(S, M_REG1)[r] - meas(S, M_REG0)[r]),
                (long long)meas(S, M_RSS0)[r], (long long)meas(S, M_RSS)[r],
                (long long)meas(S, M_PSS)[r], (long long)meas(S, M_SHR)[r],
                (long long)meas(S, M_PRIV)[r]);
    fclose(f);
}

static int cpus(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) ? 0 : CPU_COUNT(&set);
}

void sc_scale(uint32_t n) {
    uint32_t k = opt.iters;
    const char *roles[MAXCH];
    for (uint32_t i = 0; i < n; i++)
        roles[i] = "scale";
    shared_create(n + NMEAS, k > n ? k : n);
    exit_hook = scale_exit;
    struct mem srv0, srv1;
    read_mem(&srv0);

    /* start-up: every rank forked, exec'd and waiting (start_pmix returns
     * when all N said so), then one store and one wake for all. */
    start_pmix(n, roles);
    int64_t t_go = now_ns(), c_go = cpu_ns();
    atomic_store(&S->go, 1);
    futex_wake(&S->go, 1 << 30);
    if (wait_count(S, &S->ready, 2 * n, now_ns() + 240000000000LL)) {
        if (atomic_load(&S->why_done))
            die("scale: %s", S->why);
        die("scale: %u of %u ranks returned from PMIx_Init in 240 s%s", atomic_load(&S->ready) - n,
            n, stop_requested ? ", stopped by a signal" : "");
    }
    int64_t t_up = max_of(n, M_END), c_up = cpu_ns();

    /* registration, then every rank's memory and the server's */
    int64_t t_reg = now_ns();
    command(OP_RUN, PH_REG, n);
    int64_t t_regd = max_of(n, M_REG1);
    command(OP_RUN, PH_MEM, n);
    read_mem(&srv1);
    struct shm_use use, use_end;
    shm_scan(&use, 1, 0);

    /* relay: rank 0 -> rank 1 with N - 2 idle ranks attached (acks count
     * from 0 again for the fan-out, whose samples then replace rank 1's) */
    int64_t r_cpu0 = cpu_ns(), r_main0 = thread_cpu_ns();
    command(OP_RUN, PH_RELAY, n);
    int64_t r_lib = (cpu_ns() - r_cpu0) - (thread_cpu_ns() - r_main0);
    char row[32];
    snprintf(row, sizeof row, "relay-%u", n);
    report_last(row, 1, 1);
    printf("RESULT\trelaycpu-%u\t%s\tsrv_cpu=%.0f\tn=%u\n", n, LIB, (double)r_lib / k, n);
    atomic_store(&S->ack, 0);

    /* fan-out: one event at a time, the next when all N acked */
    int64_t deadline = now_ns() + 600000000000LL;
    for (uint32_t i = 0; i < k; i++) {
        mark_from_cpu(S);
        notify(now_ns(), i);
        if (wait_ack(S, (i + 1) * n, deadline))
            die("scale: fanout-%u: no ack for event %u (%u of %u acks)%s", n, i,
                atomic_load(&S->ack), (i + 1) * n, stop_requested ? ", stopped by a signal" : "");
    }
    shm_scan(&use_end, 1, 0);
    ranks_csv(n, t_go);

    stop_all();
    struct shm_use left;
    shm_scan(&left, 0, 1); /* what the finalized server left behind */

    double imax, rmax, wmax, x;
    double init = p50_of(n, M_END, M_START, &imax), reg = p50_of(n, M_REG1, M_REG0, &rmax);
    double icpu = p50_of(n, M_CPU1, M_CPU0, &x);
    p50_of(n, M_START, -1, &x);
    wmax = x - (double)t_go; /* the last rank's wake-up after the start word */
    printf("RESULT\tstartup-%u\t%s\ttotal=%lld\tinit_p50=%.0f\tinit_max=%.0f\twake_max=%.0f"
           "\tinit_cpu=%.0f\tsrv_cpu=%lld\tn=%u\tcores=%d\n",
           n, LIB, (long long)(t_up - t_go), init, imax, wmax, icpu, (long long)(c_up - c_go), n,
           cpus());
    printf("RESULT\treg-%u\t%s\tp50=%.0f\tmax=%.0f\tall=%lld\tn=%u\n", n, LIB, reg, rmax,
           (long long)(t_regd - t_reg), n);
    double rss = p50_of(n, M_RSS, -1, &x), pss = p50_of(n, M_PSS, -1, &x),
           shr = p50_of(n, M_SHR, -1, &x), priv = p50_of(n, M_PRIV, -1, &x),
           rss0 = p50_of(n, M_RSS0, -1, &x);
    printf("RESULT\tmem-%u\t%s\trss=%.0f\tpss=%.0f\tshared=%.0f\tprivate=%.0f\trss0=%.0f"
           "\tshm_alloc=%.1f\tshm_size=%.1f\tshm_end=%.1f\tshm_objs=%u\tleft=%u"
           "\tsrv_rss=%lld\tsrv_rss0=%lld\tn=%u\n",
           n, LIB, rss, pss, shr, priv, rss0, (double)use.alloc / 1024 / n,
           (double)use.size / 1024 / n, (double)use_end.alloc / 1024 / n, use.objs, left.objs,
           (long long)srv1.rss, (long long)srv0.rss, n);
    snprintf(row, sizeof row, "fanout-%u", n);
    report_last(row, n, 0);
}
