/*
 * pmix-compare: the parent's process management. The shared memfd, the
 * PMIx server with one namespace and one registered client per child,
 * fork + exec of the children with PMIx_server_setup_fork's environment,
 * commands to the children, and cleanup (children, server, temporary
 * directory) on every exit path.
 */
#include <sched.h>
#include "parent.h"

#include <errno.h>
#include <ftw.h>
#include <pmix_server.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct shared *S;
static int shm_fd;
pid_t kids[MAXCH];
static int kid_status[MAXCH]; /* wait status once reaped, else -1 */
static uint32_t nkids;
static char tmpdir[64];
static char nspace[PMIX_MAX_NSLEN + 1];
static int pmix_up;
const char *lib = LIB; /* the floor row says "futex" */
const char *job_local_cpusets;

struct opts opt = {"s2c", 1, 2000, 128, 20, NULL, NULL};

/* ---------- setup ---------- */

void shared_create(uint32_t nslots, uint32_t niter) {
    size_t sz = shared_size(nslots, niter);
    shm_fd = memfd_create("pmix-compare", 0); /* inherited across exec */
    if (shm_fd < 0 || ftruncate(shm_fd, (off_t)sz))
        die("memfd: %s", strerror(errno));
    S = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
    if (S == MAP_FAILED)
        die("mmap: %s", strerror(errno));
    S->niter = niter;
    S->nslots = nslots;
    S->batch = opt.batch;
    S->ack_mode = ACK_FUTEX;
    S->range = PMIX_RANGE_LOCAL;
    for (size_t i = 0; i < (size_t)nslots * niter; i++)
        S->lat[i] = -1;
}

static char **env_copy(void) {
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 1, sizeof *e);
    for (size_t i = 0; i < n; i++)
        e[i] = strdup(environ[i]);
    return e;
}

void spawn(const char *role, char **env) {
    char self[4096], fd[16], idx[16];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l < 0)
        die("readlink /proc/self/exe");
    self[l] = 0;
    snprintf(fd, sizeof fd, "%d", shm_fd);
    snprintf(idx, sizeof idx, "%u", nkids);
    pid_t p = fork();
    if (p < 0)
        die("fork: %s", strerror(errno));
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* BENCH_CHILD_CPU=N binds every child to CPU N, as a launcher binds
         * a rank (tools/bench-compare's placement scenario). */
        const char *cpu = getenv("BENCH_CHILD_CPU");
        if (cpu && *cpu) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(atoi(cpu), &set);
            if (sched_setaffinity(0, sizeof set, &set))
                _exit(126);
        }
        char *argv[] = {self, "--child", (char *)role, "--fd", fd, "--idx", idx, NULL};
        execve(self, argv, env);
        _exit(127);
    }
    kid_status[nkids] = -1;
    kids[nkids++] = p;
}

/* A child that died (crashed, or failed and exited non-zero) fails the
 * run instead of leaving the parent waiting for its acks. */
static void check_kids(struct shared *s) {
    for (uint32_t i = 0; i < nkids; i++) {
        int st;
        if (kid_status[i] == -1 && waitpid(kids[i], &st, WNOHANG) == kids[i]) {
            kid_status[i] = st;
            if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
                fprintf(stderr, "bench: child %u (pid %d) ended early, status %#x\n", i,
                        (int)kids[i], st);
                atomic_store(&s->failed, 1);
            }
        }
    }
}

/* What the first failing child said (child_fail), or NULL: a report's
 * "n/a (...)" is the parent's last line, so it names the cause. */
static const char *child_why(void) {
    for (int i = 0; i < 100 && atomic_load(&S->why_set) && !atomic_load(&S->why_done); i++)
        usleep(10000); /* the child is still writing it */
    return atomic_load(&S->why_done) ? S->why : NULL;
}

void wait_ready(uint32_t n) {
    if (wait_count(S, &S->ready, n, now_ns() + 60000000000LL)) {
        const char *why = child_why();
        if (why)
            die("%s: %s", opt.scenario, why);
        die("%s: children not ready (%u of %u)", opt.scenario, atomic_load(&S->ready), n);
    }
}

void check(const char *what, int rc) {
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        die("%s failed: %s (%d)", what, PMIx_Error_string(rc), rc);
}

static void info_u32(pmix_info_t *i, const char *k, uint32_t v) { PMIX_INFO_LOAD(i, k, &v, PMIX_UINT32); }

/* Start the server and `n` PMIx children with the given roles. */
void start_pmix(uint32_t n, const char *const roles[]) {
    strcpy(tmpdir, "/tmp/pmix-compare.XXXXXX");
    if (!mkdtemp(tmpdir))
        die("mkdtemp: %s", strerror(errno));
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_info_t sinfo[2];
    size_t ns = 0;
    PMIX_INFO_LOAD(&sinfo[ns++], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
#ifdef PMIX_SYSTEM_TMPDIR
    PMIX_INFO_LOAD(&sinfo[ns++], PMIX_SYSTEM_TMPDIR, tmpdir, PMIX_STRING);
#endif
    check("PMIx_server_init", PMIx_server_init(&module, sinfo, ns));
    pmix_up = 1;
    for (size_t i = 0; i < ns; i++)
        PMIX_INFO_DESTRUCT(&sinfo[i]);
    S->nchild = n;

    snprintf(nspace, sizeof nspace, "bench-%d", (int)getpid());
    char peers[MAXCH * 4] = "";
    for (uint32_t i = 0; i < n; i++)
        snprintf(peers + strlen(peers), sizeof peers - strlen(peers), "%s%u", i ? "," : "", i);
    /* OpenPMIx's job-data store refuses a namespace without node and
     * process maps (gds_hash: NOT-FOUND); fastpmix accepts them too. */
    char host[256] = "localhost", *nodemap = NULL, *procmap = NULL;
    gethostname(host, sizeof host - 1);
    check("PMIx_generate_regex", PMIx_generate_regex(host, &nodemap));
    check("PMIx_generate_ppn", PMIx_generate_ppn(peers, &procmap));
    pmix_info_t jinfo[8];
    info_u32(&jinfo[0], PMIX_UNIV_SIZE, n);
    info_u32(&jinfo[1], PMIX_JOB_SIZE, n);
    info_u32(&jinfo[2], PMIX_LOCAL_SIZE, n);
    PMIX_INFO_LOAD(&jinfo[3], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&jinfo[4], PMIX_NODE_MAP, nodemap, PMIX_STRING);
    PMIX_INFO_LOAD(&jinfo[5], PMIX_PROC_MAP, procmap, PMIX_STRING);
    info_u32(&jinfo[6], PMIX_MAX_PROCS, n);
    size_t nj = 7;
    if (job_local_cpusets) /* the ranks' bindings, as a launcher that binds them registers */
        PMIX_INFO_LOAD(&jinfo[nj++], PMIX_LOCAL_CPUSETS, job_local_cpusets, PMIX_STRING);
    struct waiter w = {0};
    pmix_status_t rc = PMIx_server_register_nspace(nspace, (int)n, jinfo, nj, op_cb, &w);
    check("PMIx_server_register_nspace", rc == PMIX_SUCCESS ? wait_op(&w) : rc);
    for (size_t i = 0; i < nj; i++)
        PMIX_INFO_DESTRUCT(&jinfo[i]);
    free(nodemap);
    free(procmap);

    /* Every client registered before the first is forked: on fastpmix a
     * fence entered while a rank below the job's size is not registered
     * yet goes to the host (which has no fence_nb here). */
    pmix_proc_t procs[MAXCH];
    for (uint32_t i = 0; i < n; i++) {
        pmix_proc_t *p = &procs[i];
        memset(p, 0, sizeof *p);
        snprintf(p->nspace, sizeof p->nspace, "%s", nspace);
        p->rank = i;
        struct waiter wc = {0};
        rc = PMIx_server_register_client(p, getuid(), getgid(), NULL, op_cb, &wc);
        check("PMIx_server_register_client", rc == PMIX_SUCCESS ? wait_op(&wc) : rc);
    }
    for (uint32_t i = 0; i < n; i++) {
        pmix_proc_t p = procs[i];
        char **env = env_copy();
        check("PMIx_server_setup_fork", PMIx_server_setup_fork(&p, &env));
        spawn(roles[i], env);
        for (char **e = env; *e; e++)
            free(*e);
        free(env);
    }
    wait_ready(n);
}

void command(uint32_t op, uint32_t arg, uint32_t n) {
    atomic_store(&S->cmd_done, 0);
    atomic_store(&S->cmd_op, op);
    atomic_store(&S->cmd_arg, arg);
    atomic_fetch_add(&S->cmd, 1);
    futex_wake(&S->cmd, 1 << 30);
    int64_t deadline = now_ns() + (op == OP_RUN ? 1800 : 60) * 1000000000LL;
    if (wait_count(S, &S->cmd_done, n, deadline)) {
        const char *why = child_why();
        if (why)
            die("%s: %s", opt.scenario, why);
        die("%s: children did not finish command %u", opt.scenario, op);
    }
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

static int finalized;
void (*exit_hook)(void);

const char *server_tmpdir(void) {
    return tmpdir;
}

/* After die(): kill the children (by pid), release the server (its shared
 * memory segments) and the temporary directory. alarm() is the hang guard. */
static void cleanup_on_exit(void) {
    if (finalized)
        return;
    for (uint32_t i = 0; i < nkids; i++)
        if (kid_status[i] == -1)
            kill(kids[i], SIGKILL);
    alarm(10);
    signal(SIGPIPE, SIG_IGN); /* OpenPMIx writes to the dead clients' sockets */
    if (pmix_up)
        PMIx_server_finalize();
    if (tmpdir[0])
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (exit_hook)
        exit_hook();
}

/* SIGTERM (the launcher's hang guard) / SIGINT: the waits see
 * `stop_requested` and fail, the run dies and cleans up from normal
 * context (never from the handler: it may interrupt a library call
 * holding a lock that PMIx_server_finalize needs). */
static void on_signal(int sig) {
    stop_requested = sig;
}

void stop_all(void) {
    if (pmix_up)
        command(OP_EXIT, 0, nkids);
    for (uint32_t i = 0; i < nkids; i++) {
        int st = kid_status[i];
        if (st == -1 && waitpid(kids[i], &st, 0) != kids[i])
            continue;
        kid_status[i] = st;
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
            die("%s: child %u exited abnormally (status %#x)", opt.scenario, i, st);
    }
    finalized = 1;
    if (pmix_up)
        check("PMIx_server_finalize", PMIx_server_finalize());
    if (tmpdir[0])
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void parent_init(void) {
    liveness_check = check_kids;
    atexit(cleanup_on_exit);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: futex waits return EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}
