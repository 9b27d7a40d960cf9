/* MPI start-up, measured inside the job: the program tools/bench-mpi runs
 * under Open MPI's mpirun, once with OpenPMIx and once with fastpmix as
 * libpmix.so.2. The same binary for both: it calls MPI only, never PMIx.
 *
 *   startup --launch CMD ARG...   the launcher: reads CLOCK_MONOTONIC (t0),
 *                                 exports it as MPIBENCH_T0_NS, runs CMD
 *                                 (mpirun ...), waits, prints
 *                                 "MPIBENCH_WALL wall_ns=W status=S cpu_ns=C"
 *                                 (C: the CPU time of mpirun and of every
 *                                 process it waited for: its daemon's and
 *                                 the ranks', every thread) and exits with
 *                                 CMD's status
 *   startup [--barriers N]        a rank (what mpirun starts)
 *
 * Rank 0 prints, after MPI_Init, one line with the slowest rank's numbers
 * (MPI_Reduce, MPI_MAX):
 *   MPIBENCH ranks=R init_ns=  MPI_Init's own time
 *            main_ns=          t0 -> main entered (mpirun, its daemon, exec
 *                              and the loader)
 *            ready_ns=         t0 -> MPI_Init returned
 *            barriers=N barrier_ns=  N MPI_Barrier after one unmeasured
 *            init_cpu_sum_ns=  every rank's CPU time in MPI_Init (every
 *                              thread, the PMIx library's too), summed
 * After MPI_Finalize there is no MPI to reduce with, so every rank prints
 *   MPIBENCH_FIN rank=I finalize_ns=F end_ns=E   (E: t0 -> Finalize returned)
 * and the tool takes the largest. Every process of the job reads the same
 * CLOCK_MONOTONIC (one node, no time namespace), so t0 from the launcher is
 * comparable with the ranks' clocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long ru_ns(const struct rusage *ru) {
    return ((long long)ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000LL +
           ((long long)ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000LL;
}

static long long cpu_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru); /* every thread of the rank */
    return ru_ns(&ru);
}

static int launch(char **cmd) {
    char t0s[32];
    long long t0 = now_ns();
    snprintf(t0s, sizeof t0s, "%lld", t0);
    setenv("MPIBENCH_T0_NS", t0s, 1);
    pid_t pid = fork();
    if (pid < 0) {
        perror("startup: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(cmd[0], cmd);
        fprintf(stderr, "startup: exec %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
    }
    long long wall = now_ns() - t0;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    printf("MPIBENCH_WALL wall_ns=%lld status=%d cpu_ns=%lld\n", wall, rc, ru_ns(&ru));
    return rc;
}

int main(int argc, char **argv) {
    long long t_main = now_ns();
    if (argc > 2 && !strcmp(argv[1], "--launch"))
        return launch(argv + 2);
    int barriers = 0;
    if (argc > 2 && !strcmp(argv[1], "--barriers"))
        barriers = atoi(argv[2]);
    const char *t0s = getenv("MPIBENCH_T0_NS");
    long long t0 = t0s ? atoll(t0s) : t_main;

    long long pre = now_ns(), cpu0 = cpu_now();
    MPI_Init(&argc, &argv);
    long long post = now_ns(), cpu_init = cpu_now() - cpu0;
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long long bar = 0;
    if (barriers > 0) {
        MPI_Barrier(MPI_COMM_WORLD); /* the first one sets up the transport */
        long long b0 = now_ns();
        for (int i = 0; i < barriers; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        bar = now_ns() - b0;
    }
    long long mine[4] = {post - pre, t_main - t0, post - t0, bar}, max[4];
    long long cpu_sum = 0;
    MPI_Reduce(mine, max, 4, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu_init, &cpu_sum, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("MPIBENCH ranks=%d init_ns=%lld main_ns=%lld ready_ns=%lld barriers=%d barrier_ns=%lld "
               "init_cpu_sum_ns=%lld\n",
               size, max[0], max[1], max[2], barriers, max[3], cpu_sum);
    fflush(stdout);

    long long f0 = now_ns();
    MPI_Finalize();
    long long f1 = now_ns();
    printf("MPIBENCH_FIN rank=%d finalize_ns=%lld end_ns=%lld\n", rank, f1 - f0, f1 - t0);
    fflush(stdout);
    return 0;
}
