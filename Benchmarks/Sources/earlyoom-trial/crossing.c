/* The crossing trial: kills per crossing and survivors, on the load jetsam-bench's
 * CrossingSide gives appexd (main.c has the arguments and output). BYSTANDERS idle processes
 * (jetsam-idle-N) hold HOLD_MIB each; then a foreground (jetsam-fg) grows by PLAN, logging its
 * steps with MemAvailable, and holds. earlyoom chooses as it does by default, the largest
 * oom_score: no --prefer, no --avoid (every member has oom_score_adj 1000, so RSS decides).
 * Its SIGTERM line is MemAvailable − CROSS_KIB, read once the bystanders hold their memory.
 * SETTLE_MS after the foreground's growth was planned to end, earlyoom is SIGKILLed and the
 * trial counts who died: everyone it can see is a member, so every death is its kill. */
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

enum { MAX_BYSTANDERS = 16 };

struct member {
    char name[16];
    pid_t pid;
    int pidfd;
    uint64_t death_ns; /* 0 while alive */
    int signal;
};

static void reap(struct member *m) {
    siginfo_t info = {0};
    if (m->death_ns || waitid(P_PID, (id_t)m->pid, &info, WEXITED | WNOHANG) != 0 || info.si_pid != m->pid) return;
    m->death_ns = monotonic_ns();
    m->signal = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED ? info.si_status : 0;
    close(m->pidfd);
    m->pidfd = -1;
}

static void watch(struct member *m, int ready_fd) {
    char c;
    if (read(ready_fd, &c, 1) != 1) die("a member of the load did not start");
    m->pidfd = (int)syscall(SYS_pidfd_open, m->pid, 0);
    if (m->pidfd < 0) die("pidfd_open");
}

void crossing_trial(char **argv) {
    const char *earlyoom = argv[0], *log_path = argv[1];
    struct grow_plan plan;
    parse_plan(argv[2], &plan);
    long long cross_kib = number(argv[3], "CROSS_KIB"), bystanders = number(argv[4], "BYSTANDERS");
    long long hold_mib = number(argv[5], "HOLD_MIB"), delay_us = number(argv[6], "DELAY_US");
    long long settle_ms = number(argv[7], "SETTLE_MS");
    if (bystanders > MAX_BYSTANDERS || hold_mib < 1 || hold_mib > 4096) {
        fprintf(stderr, "earlyoom-trial: BYSTANDERS is at most %d, HOLD_MIB 1..4096\n", MAX_BYSTANDERS);
        exit(1);
    }
    /* The bystanders' memory, touched at once and held (the same code, no pacing, no log). */
    struct grow_plan held = {1 << 20, 0, (uint64_t)hold_mib << 20, 0};

    struct grow_log *log = open_log(log_path);

    struct member members[MAX_BYSTANDERS + 1] = {0};
    int count = (int)bystanders + 1, go[2], ready[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) die("pipe");
    for (int i = 0; i < count; i++) {
        struct member *m = &members[i];
        int foreground = i == count - 1;
        if (foreground)
            snprintf(m->name, sizeof m->name, "jetsam-fg");
        else
            snprintf(m->name, sizeof m->name, "jetsam-idle-%d", i);
        m->pid = fork_member(m->name);
        if (m->pid == 0) {
            close(go[1]);
            close(ready[0]);
            char c;
            if (foreground) {
                open_meminfo();
                if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1) _exit(3);
                if (grow_run(&plan, log, note_available) < 0) _exit(3);
            } else if (grow_run(&held, NULL, NULL) < 0 || write(ready[1], "r", 1) != 1) {
                _exit(3);
            }
            for (;;) pause(); /* holds its memory until it is killed */
        }
        watch(m, ready[0]);
    }
    close(go[0]);
    close(ready[1]);

    struct watcher watcher;
    watcher_start(&watcher, earlyoom, cross_kib, NULL);
    long long available = watcher.available_kib, threshold = watcher.threshold_kib;
    sleep_micros(delay_us);

    uint64_t go_ns = monotonic_ns();
    if (write(go[1], "g", 1) != 1) die("starting the foreground");
    uint64_t steps = (plan.cap_bytes + plan.step_bytes - 1) / plan.step_bytes;
    uint64_t deadline = go_ns + (steps - 1) * plan.interval_ns + (uint64_t)settle_ms * 1000000ULL;
    /* MemAvailable, also between the foreground's steps and after them: whether (and when)
     * earlyoom's input crossed its line, whatever moved it. */
    uint64_t crossed_ns = 0;
    long long lowest = available, last = available;
    struct pollfd fds[MAX_BYSTANDERS + 2];
    for (;;) {
        uint64_t now = monotonic_ns();
        long long reading = last = mem_available_kib();
        if (reading < lowest) lowest = reading;
        if (!crossed_ns && reading <= threshold) crossed_ns = now;
        if (now >= deadline) break;
        for (int i = 0; i < count; i++) fds[i] = (struct pollfd){members[i].pidfd, POLLIN, 0};
        fds[count] = (struct pollfd){watcher.out, POLLIN, 0};
        int n = poll(fds, (nfds_t)count + 1, 10);
        if (n < 0 && errno != EINTR) die("poll");
        for (int i = 0; i < count; i++) reap(&members[i]);
        if (n > 0 && fds[count].revents && watcher_drain(&watcher, NULL) < 0) watcher.out = -1;
    }
    watcher_stop(&watcher); /* first: nothing more dies of it */
    for (int i = 0; i < count; i++) reap(&members[i]);
    if (watcher.out >= 0) watcher_drain(&watcher, NULL);

    printf("available_kib=%lld threshold_kib=%lld lowest_kib=%lld last_kib=%lld go_ns=%llu crossed_ns=%llu", available,
           threshold, lowest, last, (unsigned long long)go_ns, (unsigned long long)crossed_ns);
    int survivors = 0;
    for (int i = 0; i < count; i++) {
        if (members[i].death_ns)
            printf(" %s=killed:%d@%llu", members[i].name, members[i].signal, (unsigned long long)members[i].death_ns);
        else
            survivors++;
    }
    printf(" survivors=%d\n", survivors);
    fflush(stdout);
    for (int i = 0; i < count; i++) {
        if (members[i].death_ns) continue;
        kill(members[i].pid, SIGKILL);
        waitpid(members[i].pid, NULL, 0);
    }
    exit(0);
}
