/* pmix-compare: strace, or perf's syscall tracepoint, attached to a
 * running process, for the syscall counts (scenarios sys, sysgap,
 * sysown). No PMIx here. */
#include "common.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int all_traced(pid_t pid) {
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
    DIR *d = opendir(p);
    if (!d)
        return 0;
    int ok = 1;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sp[600], line[256];
        snprintf(sp, sizeof sp, "%s/%s/status", p, e->d_name);
        FILE *f = fopen(sp, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "TracerPid:", 10))
                ok = atoi(line + 10) != 0;
        fclose(f);
    }
    closedir(d);
    return ok;
}

pid_t strace_attach(pid_t target, const char *out) {
    char tp[16];
    snprintf(tp, sizeof tp, "%d", (int)target);
    pid_t p = fork();
    if (p == 0) {
        /* If the bench dies, strace detaches and ends (SIGTERM). */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        execlp("strace", "strace", "-c", "-f", "-p", tp, "-o", out, (char *)NULL);
        _exit(127);
    }
    return p;
}

/* Counts the syscalls of every thread `target` has now, system-wide with
 * a filter on their thread ids: no ptrace stop at each syscall (which
 * makes a spinning receiver's machine look oversubscribed, see sysown),
 * and counted even on a thread that never leaves its CPU (a per-task
 * counter attached to it would not start until it did). Root only. */
pid_t perf_attach(pid_t target, const char *out) {
    char p[64], filter[4096] = "";
    snprintf(p, sizeof p, "/proc/%d/task", (int)target);
    DIR *d = opendir(p);
    if (!d)
        return -1;
    struct dirent *e;
    size_t len = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        int n = snprintf(filter + len, sizeof filter - len, "%scommon_pid == %s",
                         len ? " || " : "", e->d_name);
        if (n < 0 || (size_t)n >= sizeof filter - len) {
            closedir(d);
            return -1;
        }
        len += (size_t)n;
    }
    closedir(d);
    pid_t c = fork();
    if (c == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        execlp("perf", "perf", "stat", "-a", "-e", "raw_syscalls:sys_enter", "--filter", filter,
               "-x", ",", "-o", out, (char *)NULL);
        _exit(127);
    }
    return c;
}

/* The last count `count_of` finds in a line of `path` (>= 0), -1 if none. */
static long scan_counts(const char *path, long (*count_of)(char *line)) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    long calls = -1;
    while (fgets(line, sizeof line, f)) {
        long v = count_of(line);
        if (v >= 0)
            calls = v;
    }
    fclose(f);
    return calls;
}

/* perf stat -x, : "COUNT,,raw_syscalls:sys_enter,..." ("<not counted>"
 * when the counter never ran: no count). */
static long perf_line(char *line) {
    if (strstr(line, ",raw_syscalls:sys_enter,") && line[0] >= '0' && line[0] <= '9')
        return atol(line);
    return -1;
}

/* The count perf_attach's output file holds, -1 if none. */
long perf_total(const char *path) { return scan_counts(path, perf_line); }

/* Stop an attached strace or perf (SIGINT: it detaches and writes its
 * summary); SIGKILL after 30 s. */
void strace_stop(pid_t p) {
    kill(p, SIGINT);
    for (int i = 0; i < 3000; i++) {
        if (waitpid(p, NULL, WNOHANG) == p)
            return;
        usleep(10000);
    }
    fprintf(stderr, "bench: strace %d did not stop; killed\n", (int)p);
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
}

/* strace -c's summary: the calls column of the "total" line. */
static long strace_line(char *line) {
    char *tok[8];
    int n = 0;
    for (char *t = strtok(line, " \t\n"); t && n < 8; t = strtok(NULL, " \t\n"))
        tok[n++] = t;
    if (n >= 5 && !strcmp(tok[n - 1], "total"))
        return atol(tok[3]);
    return -1;
}

long strace_total(const char *path) { return scan_counts(path, strace_line); }
