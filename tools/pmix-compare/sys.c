/* pmix-compare: strace attached to a running process, for the syscall
 * counts (scenario sys). No PMIx here. */
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

/* Stop an attached strace (SIGINT: it detaches and writes its summary);
 * SIGKILL after 30 s. */
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

long strace_total(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    long calls = -1;
    while (fgets(line, sizeof line, f)) {
        char *tok[8];
        int n = 0;
        for (char *t = strtok(line, " \t\n"); t && n < 8; t = strtok(NULL, " \t\n"))
            tok[n++] = t;
        if (n >= 5 && !strcmp(tok[n - 1], "total"))
            calls = atol(tok[3]);
    }
    fclose(f);
    return calls;
}
