/* The latency trial: threshold crossed → victim dead (main.c has its arguments and output).
 * A bloater grows by PLAN, logging its steps with MemAvailable read after each; earlyoom
 * prefers it by name. The init SIGKILLs earlyoom the moment the bloater's pidfd says it is
 * gone, or at the timeout before the bloater is killed. */
#define _GNU_SOURCE
#include "trial.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void latency_trial(char **argv) {
    const char *earlyoom = argv[0], *log_path = argv[1];
    struct grow_plan plan;
    parse_plan(argv[2], &plan);
    long long cross_kib = number(argv[3], "CROSS_KIB"), delay_us = number(argv[4], "DELAY_US");
    long long timeout_ms = number(argv[5], "TIMEOUT_MS");

    struct grow_log *log = open_log(log_path);

    int go[2], ready[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) die("pipe");
    pid_t bloater = fork_member("jetsam-bloater");
    if (bloater == 0) {
        close(go[1]);
        open_meminfo();
        if (write(ready[1], "r", 1) != 1) _exit(3);
        char c;
        if (read(go[0], &c, 1) != 1) _exit(0);
        grow_run(&plan, log, note_available);
        _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) die("the bloater did not start");
    int pidfd = (int)syscall(SYS_pidfd_open, bloater, 0);
    if (pidfd < 0) die("pidfd_open");

    struct watcher watcher;
    watcher_start(&watcher, earlyoom, cross_kib, "^jetsam-bloater$");
    long long available = watcher.available_kib, threshold = watcher.threshold_kib;
    sleep_micros(delay_us);

    uint64_t go_ns = monotonic_ns(), death_ns = 0;
    if (write(go[1], "g", 1) != 1) die("starting the bloater");
    uint64_t deadline = go_ns + (uint64_t)timeout_ms * 1000000ULL;
    struct pollfd fds[2] = {{pidfd, POLLIN, 0}, {watcher.out, POLLIN, 0}};
    while (!death_ns) {
        uint64_t now = monotonic_ns();
        if (now >= deadline) break;
        int n = poll(fds, fds[1].fd >= 0 ? 2 : 1, (int)((deadline - now) / 1000000) + 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("poll");
        if (fds[0].revents & POLLIN) {
            death_ns = monotonic_ns();
            kill(watcher.pid, SIGKILL); /* before anything else: nothing left it may kill */
        }
        if (fds[1].revents && watcher_drain(&watcher, NULL) < 0) fds[1].fd = -1;
    }
    watcher_stop(&watcher);
    if (!death_ns) kill(bloater, SIGKILL);
    int status = 0;
    waitpid(bloater, &status, 0);
    watcher_drain(&watcher, NULL);
    printf("available_kib=%lld threshold_kib=%lld go_ns=%llu death_ns=%llu signal=%d outcome=%s\n", available,
           threshold, (unsigned long long)go_ns, (unsigned long long)death_ns,
           WIFSIGNALED(status) ? WTERMSIG(status) : 0, death_ns ? "killed" : "timeout");
    fflush(stdout);
    exit(0);
}
