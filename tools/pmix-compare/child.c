/*
 * pmix-compare: the child roles. A child maps the parent's memfd, sets
 * itself up (PMIx_Init, handler registration), says it is ready, then its
 * main thread sleeps on the command word while the library's threads
 * deliver events to the handler.
 */
#include "data.h" /* common.h, pmix.h, LIB */
#include "scale.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static struct shared *S;
static uint32_t IDX;
static pmix_proc_t ME;
static const char *ROLE;

static void fail(const char *what, pmix_status_t rc) {
    /* The first failure says why, for the parent's last line (the others
     * say nothing: with 64 children failing alike, one line is enough). */
    if (!atomic_exchange(&S->why_set, 1)) {
        if (rc == PMIX_ERR_NOT_SUPPORTED)
            snprintf(S->why, sizeof S->why, "%s not supported by %s (PMIX_ERR_NOT_SUPPORTED)",
                     what, LIB);
        else
            snprintf(S->why, sizeof S->why, "%s failed in child %u: %s (%d)", what, IDX,
                     PMIx_Error_string(rc), rc);
        atomic_store(&S->why_done, 1);
        fprintf(stderr, "bench child %s/%u: %s failed: %s (%d)\n", ROLE, IDX, what,
                PMIx_Error_string(rc), rc);
    }
    atomic_store(&S->failed, 1);
    futex_wake(&S->ready, 1 << 30);
    futex_wake(&S->cmd_done, 1 << 30);
    futex_wake(&S->ack, 1 << 30);
    _exit(3);
}

void child_fail(const char *what, pmix_status_t rc) {
    fail(what, rc);
}

/* The event handler of every receiving role. */
static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    int64_t now = now_ns();
    int64_t t0 = -1, seq = -1;
    (void)id, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++) {
        if (strncmp(info[i].key, KEY_T0, PMIX_MAX_KEYLEN) == 0 &&
            info[i].value.type == PMIX_UINT64)
            t0 = (int64_t)info[i].value.data.uint64;
        else if (strncmp(info[i].key, KEY_SEQ, PMIX_MAX_KEYLEN) == 0 &&
                 info[i].value.type == PMIX_UINT32)
            seq = info[i].value.data.uint32;
    }
    if (verbose) {
        fprintf(stderr, "child %u: event %d from %s:%u, %zu info:", IDX, status,
                source ? source->nspace : "-", source ? source->rank : 0, ninfo);
        for (size_t i = 0; i < ninfo; i++)
            fprintf(stderr, " %s(type %d)", info[i].key, info[i].value.type);
        fprintf(stderr, " seq %lld\n", (long long)seq);
    }
    if (status != BENCH_CODE || t0 < 0 || seq < 0 || (!S->tput && seq >= S->niter)) {
        S->bad[IDX]++;
    } else if (!S->tput) {
        slot(S, IDX)[seq] = now - t0;
        mark_where(S, IDX, (uint32_t)seq);
    }
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    if (S->tput) {
        uint64_t got = atomic_fetch_add(&S->recv[IDX], 1) + 1;
        atomic_store(&S->last_ns, now);
        /* Wake the sleeping sender once, when this receiver reaches the
         * count it waits for (it sleeps again if a slower one has not):
         * flow control must not cost a syscall per event. */
        if (atomic_load(&S->prog_sleep) && got >= atomic_load(&S->prog_at) &&
            atomic_exchange(&S->prog_sleep, 0)) {
            atomic_fetch_add(&S->prog, 1);
            futex_wake(&S->prog, 1);
        }
    } else {
        ack_one(S);
    }
}

static void load_event(pmix_info_t info[2], int64_t t0, uint32_t seq) {
    uint64_t t = (uint64_t)t0;
    PMIX_INFO_LOAD(&info[0], KEY_T0, &t, PMIX_UINT64);
    PMIX_INFO_LOAD(&info[1], KEY_SEQ, &seq, PMIX_UINT32);
}

void op_cb(int status, void *cbdata) {
    struct waiter *w = cbdata;
    w->status = status;
    atomic_store(&w->done, 1);
    futex_wake(&w->done, 1);
}

int wait_op(struct waiter *w) {
    int64_t deadline = now_ns() + 30000000000LL;
    while (!atomic_load(&w->done)) {
        if (now_ns() > deadline)
            return PMIX_ERR_TIMEOUT;
        futex_wait(&w->done, 0, 100000000);
    }
    return w->status;
}

static int reg_blocking(pmix_status_t code) {
    pmix_status_t c = code;
    pmix_status_t rc = PMIx_Register_event_handler(&c, 1, NULL, 0, handler, NULL, NULL);
    if (rc < 0)
        fail("PMIx_Register_event_handler", rc);
    return rc;
}

int child_register(pmix_status_t code) {
    return reg_blocking(code);
}

static void dereg(size_t ref) {
    struct waiter w = {0};
    pmix_status_t rc = PMIx_Deregister_event_handler(ref, op_cb, &w);
    if (rc == PMIX_SUCCESS)
        rc = wait_op(&w);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        fail("PMIx_Deregister_event_handler", rc);
}

/* c2c sender and PROC_LOCAL: notify niter events, one at a time. */
static void run_sender(pmix_data_range_t range, uint32_t nrecv) {
    pmix_info_t info[2];
    int64_t deadline = now_ns() + 600000000000LL;
    for (uint32_t i = 0; i < S->niter; i++) {
        mark_from_cpu(S);
        int64_t t0 = now_ns();
        load_event(info, t0, i);
        pmix_status_t rc = PMIx_Notify_event(BENCH_CODE, &ME, range, info, 2, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            fail("PMIx_Notify_event", rc);
        if (wait_ack(S, (i + 1) * nrecv, deadline))
            fail("waiting for the receivers' ack", PMIX_ERR_TIMEOUT);
    }
}

static void relay_notify(uint32_t i, void *arg) {
    pmix_info_t info[2];
    (void)arg;
    load_event(info, now_ns(), i);
    pmix_status_t rc = PMIx_Notify_event(BENCH_CODE, &ME, PMIX_RANGE_LOCAL, info, 2, NULL, NULL);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        fail("PMIx_Notify_event", rc);
}

/* tput-relay sender: `k` events back to back through the server to the
 * receivers 1..nchild-1 (flow control as the host's tput-N). */
static void run_relay_sender(uint32_t k) {
    atomic_store(&S->first_ns, now_ns());
    if (send_windowed(S, 1, S->nchild - 1, k, S->window, relay_notify, NULL))
        atomic_store(&S->lost, 1);
}

/* Registration latency: slot 0 = a code nobody registered yet, slot 1 =
 * the code this process already has a handler for. Registrations come in
 * batches of S->batch, deregistered after each batch (untimed), so the
 * number of live handlers stays small. A pause follows each batch's
 * deregistrations: on OpenPMIx a deregistration message right before a
 * registration would hold the registration's write back by Nagle until
 * the server's delayed ACK (~40 ms; 4.2.2 never sets TCP_NODELAY). */
static void reg_loop(int64_t *out, int new_codes) {
    int *refs = calloc(S->batch, sizeof *refs);
    for (uint32_t i = 0; i < S->niter;) {
        uint32_t b = 0;
        for (; b < S->batch && i < S->niter; b++, i++) {
            int64_t t = now_ns();
            refs[b] = reg_blocking(new_codes ? BENCH_CODE_NEW_BASE - (int)i : BENCH_CODE);
            out[i] = now_ns() - t;
        }
        while (b > 0)
            dereg((size_t)refs[--b]);
        usleep(60000);
    }
    free(refs);
}

/* Blocking register + blocking deregister of a handler for BENCH_CODE,
 * which another handler keeps active, niter pairs back to back, each pair
 * timed: after registering `extra` more handlers for the same code (kept
 * until the end). */
static void regdereg_loop(int64_t *out, uint32_t extra) {
    int *held = calloc(extra ? extra : 1, sizeof *held);
    for (uint32_t i = 0; i < extra; i++)
        held[i] = reg_blocking(BENCH_CODE);
    for (uint32_t i = 0; i < S->niter; i++) {
        int64_t t = now_ns();
        int r = reg_blocking(BENCH_CODE);
        pmix_status_t rc = PMIx_Deregister_event_handler((size_t)r, NULL, NULL);
        out[i] = now_ns() - t;
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Deregister_event_handler (blocking)", rc);
    }
    for (uint32_t i = 0; i < extra; i++)
        dereg((size_t)held[i]);
    free(held);
}

static void run_reg(void) {
    reg_loop(slot(S, 0), 1);
    reg_loop(slot(S, 1), 0);
    /* reg_loop left no handler: one keeps the code active from here. */
    int keep = reg_blocking(BENCH_CODE);
    regdereg_loop(slot(S, 2), 0);
    regdereg_loop(slot(S, 3), REG_MANY);
    dereg((size_t)keep);
}

static void run_floor(void) {
    for (uint32_t i = 0; i < S->niter; i++) {
        uint32_t g;
        while ((g = atomic_load(&S->go)) != i + 1)
            futex_wait(&S->go, g, 100000000);
        slot(S, IDX)[i] = now_ns() - atomic_load(&S->t0);
        mark_where(S, IDX, i);
        ack_one(S);
    }
}

int child_main(int argc, char **argv) {
    int fd = -1;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--child"))
            ROLE = argv[++i];
        else if (!strcmp(argv[i], "--fd"))
            fd = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--idx"))
            IDX = (uint32_t)atoi(argv[++i]);
    }
    verbose = getenv("BENCH_DEBUG") != NULL;
    struct stat st;
    if (!ROLE || fd < 0 || fstat(fd, &st))
        die("child: bad arguments");
    S = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (S == MAP_FAILED)
        die("child: mmap");
    close(fd);

    if (!strcmp(ROLE, "floor")) {
        atomic_fetch_add(&S->ready, 1);
        futex_wake(&S->ready, 1);
        run_floor();
        return 0;
    }

    if (busy_role(ROLE)) /* bound to a CPU before PMIx_Init, as a launcher binds a rank */
        busy_setup(S, ROLE, IDX);
    int scale = scale_role(ROLE); /* times its PMIx_Init (scale.c) */
    if (scale)
        scale_before_init(S, IDX);
    pmix_status_t rc = PMIx_Init(&ME, NULL, 0);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Init", rc);
    if (scale)
        scale_after_init(S, IDX);
    int receiver = !strcmp(ROLE, "recv") || !strcmp(ROLE, "proclocal") || busy_receiver(ROLE);
    if (receiver || !strcmp(ROLE, "reg"))
        reg_blocking(BENCH_CODE);
    atomic_fetch_add(&S->ready, 1);
    futex_wake(&S->ready, 1);

    uint32_t seen = 0;
    for (;;) {
        uint32_t c = atomic_load(&S->cmd);
        if (c == seen) {
            futex_wait(&S->cmd, c, 0);
            continue;
        }
        seen = c;
        uint32_t op = atomic_load(&S->cmd_op);
        if (op == OP_SNAP) {
            S->cpu_ns[IDX][atomic_load(&S->cmd_arg) & 1] = cpu_ns();
        } else if (op == OP_RUN) {
            if (!strcmp(ROLE, "send"))
                run_sender(S->range, S->nchild - 1);
            else if (!strcmp(ROLE, "tsend"))
                run_relay_sender(atomic_load(&S->cmd_arg));
            else if (!strcmp(ROLE, "proclocal"))
                run_sender(PMIX_RANGE_PROC_LOCAL, 1);
            else if (!strcmp(ROLE, "reg"))
                run_reg();
            else if (data_role(ROLE))
                data_run(S, ROLE, IDX, &ME, atomic_load(&S->cmd_arg));
            else if (scale)
                scale_run(S, IDX, &ME, atomic_load(&S->cmd_arg));
            else if (busy_role(ROLE))
                busy_run(S, ROLE, IDX, &ME, atomic_load(&S->cmd_arg));
        } else if (op == OP_EXIT) {
            rc = PMIx_Finalize(NULL, 0);
            if (rc != PMIX_SUCCESS)
                fail("PMIx_Finalize", rc);
            atomic_fetch_add(&S->cmd_done, 1);
            futex_wake(&S->cmd_done, 1);
            return 0;
        }
        atomic_fetch_add(&S->cmd_done, 1);
        futex_wake(&S->cmd_done, 1);
    }
}
