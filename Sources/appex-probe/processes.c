// Process and resource actions: memory, processes, threads, time. Each cleans up after
// itself (children are killed and reaped) so an uncontained run leaves nothing behind.
#include "probe.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int count(const char *s, unsigned long max, unsigned long *out) {
    return probe_number(s, out) < 0 || *out > max ? -1 : 0;
}

static int alloc(int argc, char **argv) {
    (void)argc;
    unsigned long mib;
    if (count(argv[1], 1UL << 20, &mib) < 0) return probe_usage();
    for (unsigned long i = 0; i < mib; i++) {
        char *p = malloc(1 << 20);
        if (!p) return probe_result(-1);
        memset(p, 0xa5, 1 << 20); // touched, so it counts against the memory limit
    }
    return probe_ok("allocated=%lu", mib);
}

static int fork_bomb(int argc, char **argv) {
    (void)argc;
    // Bounded: N children that pause, then all are killed and reaped.
    unsigned long n;
    if (count(argv[1], 100000, &n) < 0) return probe_usage();
    unsigned long forked = 0;
    int err = 0;
    pid_t *pids = calloc(n + 1, sizeof(pid_t));
    for (unsigned long i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            pause();
            _exit(0);
        }
        if (p < 0) {
            err = errno;
            break;
        }
        pids[forked++] = p;
    }
    for (unsigned long i = 0; i < forked; i++) kill(pids[i], SIGKILL);
    for (unsigned long i = 0; i < forked; i++) waitpid(pids[i], NULL, 0);
    if (err) return probe_fail(err, "forked=%lu", forked);
    return probe_ok("forked=%lu", forked);
}

// The parent's side of a process-creating call: a child (which _exited at once) is reaped
// and the call reported; a failure is reported by errno.
static int reap(long pid) {
    if (pid < 0) return probe_result(-1);
    int status = 0;
    if (waitpid((pid_t)pid, &status, 0) < 0) return probe_result(-1);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return probe_fail(0, NULL);
    return probe_ok(NULL);
}

static int fork_once(int argc, char **argv) {
    (void)argc, (void)argv;
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    return reap(pid);
}

static int clone_newuser(int argc, char **argv) {
    (void)argc, (void)argv;
    // No stack given: the child runs on a copy of this one, like fork, and leaves.
    long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) _exit(0);
    return reap(pid);
}

static int clone3_newuser(int argc, char **argv) {
    (void)argc, (void)argv;
    uint64_t ca[8] = {0}; // struct clone_args, first version (64 bytes)
    ca[0] = CLONE_NEWUSER;
    ca[4] = SIGCHLD;
    long pid = syscall(SYS_clone3, ca, sizeof(ca));
    if (pid == 0) _exit(0);
    return reap(pid);
}

static void *thread_main(void *arg) { return arg; }

static int thread(int argc, char **argv) {
    (void)argc, (void)argv;
    // glibc tries clone3 first and falls back to clone on ENOSYS.
    pthread_t t;
    int err = pthread_create(&t, NULL, thread_main, NULL);
    if (err) return probe_fail(err, NULL);
    pthread_join(t, NULL);
    return probe_ok(NULL);
}

static int sleep_seconds(int argc, char **argv) {
    (void)argc;
    unsigned long s;
    if (count(argv[1], 86400, &s) < 0) return probe_usage();
    sleep((unsigned)s);
    return probe_ok(NULL);
}

static int spin(int argc, char **argv) {
    // Busy on one thread: forever, or for SECONDS of wall time.
    unsigned long s = 0;
    if (argc > 1 && count(argv[1], 86400, &s) < 0) return probe_usage();
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (volatile unsigned long i = 0;; i++) {
        if (!s || (i & 0xfffff)) continue;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((unsigned long)(now.tv_sec - start.tv_sec) >= s) break;
    }
    return probe_ok(NULL);
}

static int exec_setuid(int argc, char **argv) {
    (void)argc;
    // PATH is meant to be a setuid copy of appex-probe: it runs `ids` and so reports whether
    // the exec raised its privileges. Any other program gets the one argument "ids".
    char *args[] = {argv[1], "ids", NULL};
    execv(argv[1], args);
    return probe_fail(errno, "at=execve");
}

const struct probe_action probe_process_actions[] = {
    {"alloc", 1, 1, alloc, "MIB"},
    {"fork-bomb", 1, 1, fork_bomb, "N"},
    {"fork", 0, 0, fork_once, ""},
    {"clone-newuser", 0, 0, clone_newuser, ""},
    {"clone3-newuser", 0, 0, clone3_newuser, ""},
    {"thread", 0, 0, thread, ""},
    {"sleep", 1, 1, sleep_seconds, "SECONDS"},
    {"spin", 0, 1, spin, "[SECONDS]"},
    {"exec-setuid", 1, 1, exec_setuid, "PATH"},
    {0, 0, 0, 0, 0},
};
