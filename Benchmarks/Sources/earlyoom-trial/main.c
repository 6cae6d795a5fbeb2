/* earlyoom-trial: one trial of the jetsam benchmark's earlyoom side (jetsam-bench).
 *
 *   earlyoom-trial EARLYOOM LOG PLAN CROSS_KIB DELAY_US TIMEOUT_MS
 *
 * A bloater (a plain forked process named jetsam-bloater, oom_score_adj 1000) grows by PLAN
 * (grow.h: the same code as the probe extension's `grow` action, a symlink), logging its steps
 * to the file LOG, each with MemAvailable read right after it. earlyoom watches with its
 * SIGTERM line at MemAvailable − CROSS_KIB, read just before it starts, so that the bloater's
 * own growth crosses the line after CROSS_KIB if nothing else on the machine moves (the logged
 * MemAvailable tells when it really did); it prefers the bloater's name. The bloater starts growing DELAY_US after earlyoom has printed its
 * configuration (the harness picks the delay at random, so the crossing falls anywhere in
 * earlyoom's polling period).
 *
 * earlyoom can kill nothing else: the trial runs in its own PID namespace with its own /proc
 * (earlyoom sees and can signal only the bloater and this init), and this init, the namespace's
 * PID 1, SIGKILLs earlyoom the moment the bloater's pidfd says it is gone, or at the timeout
 * before the bloater is killed. When the init exits, or the process that started it dies, the
 * kernel kills whatever is left in the namespace.
 *
 * Prints earlyoom's output as `earlyoom: <line>`, then one line:
 *   available_kib=A threshold_kib=M go_ns=T death_ns=T signal=S outcome=killed|timeout
 * Exit status 0 when that line was printed, 1 on a failure (said on stderr). Needs root. */
#define _GNU_SOURCE
#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "earlyoom-trial: %s: %s\n", what, strerror(errno));
    exit(1);
}

static uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static long long number(const char *text, const char *name) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || !*text || *end || v < 0) {
        fprintf(stderr, "earlyoom-trial: %s must be a whole number, not \"%s\"\n", name, text);
        exit(1);
    }
    return v;
}

static long long mem_available_kib(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) die("/proc/meminfo");
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    fclose(f);
    if (kib < 0) die("no MemAvailable in /proc/meminfo");
    return kib;
}

/* The bloater's hook after each step: MemAvailable as earlyoom reads it, so that the harness
 * can tell when earlyoom's own input crossed its line, whatever else the machine was doing. */
static int meminfo_fd = -1;
static void note_available(struct grow_step *step) {
    char text[4096];
    ssize_t n = pread(meminfo_fd, text, sizeof text - 1, 0);
    if (n <= 0) return;
    text[n] = 0;
    const char *at = strstr(text, "MemAvailable:");
    if (at) step->available_kib = strtoull(at + 13, NULL, 10);
}

/* earlyoom's output, a line at a time, echoed as `earlyoom: <line>`. Returns 1 once a line
 * containing `mark` has been seen (mark may be NULL), -1 at end of file. */
static char pending[8192];
static size_t pending_length;
static int drain(int fd, const char *mark) {
    int seen = 0;
    for (;;) {
        ssize_t n = read(fd, pending + pending_length, sizeof pending - 1 - pending_length);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return seen;
        if (n <= 0) return seen ? seen : -1;
        pending_length += (size_t)n;
        pending[pending_length] = 0;
        char *line = pending, *newline;
        while ((newline = strchr(line, '\n'))) {
            *newline = 0;
            if (*line) printf("earlyoom: %s\n", line);
            if (mark && strstr(line, mark)) seen = 1;
            line = newline + 1;
        }
        pending_length = strlen(line);
        memmove(pending, line, pending_length);
        if (pending_length == sizeof pending - 1) pending_length = 0;   /* a line too long: dropped */
    }
}

static void run_init(char **argv, int outer_alive) {
    /* Dies with the process that started it, taking the namespace with it. (getppid says 0
     * here, the parent being outside the namespace: whether it already died shows as the end
     * of the pipe only it writes to.) */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) exit(1);
    struct pollfd alive = { outer_alive, POLLIN, 0 };
    if (poll(&alive, 1, 0) != 0) exit(1);
    close(outer_alive);
    const char *earlyoom = argv[1], *log_path = argv[2];
    struct grow_plan plan;
    char why[160];
    if (grow_parse(argv[3], &plan, why, sizeof why)) {
        fprintf(stderr, "earlyoom-trial: PLAN: %s\n", why);
        exit(1);
    }
    long long cross_kib = number(argv[4], "CROSS_KIB"), delay_us = number(argv[5], "DELAY_US");
    long long timeout_ms = number(argv[6], "TIMEOUT_MS");

    /* This namespace's own /proc, so that earlyoom sees only the processes in it. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("making / private");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mounting /proc");

    int log_fd = open(log_path, O_RDWR | O_CLOEXEC);
    if (log_fd < 0) die(log_path);
    struct grow_log *log = grow_map_log(log_fd);
    if (!log) die("the log is not a grow log");

    int go[2], ready[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) die("pipe");
    pid_t bloater = fork();
    if (bloater < 0) die("fork");
    if (bloater == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        prctl(PR_SET_NAME, "jetsam-bloater");
        int adj = open("/proc/self/oom_score_adj", O_WRONLY);
        if (adj < 0 || write(adj, "1000", 4) != 4) _exit(3);
        close(adj);
        close(go[1]);
        meminfo_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
        if (meminfo_fd < 0 || write(ready[1], "r", 1) != 1) _exit(3);
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

    long long available = mem_available_kib();
    long long threshold = available - cross_kib;
    if (threshold <= 0) {
        errno = ERANGE;
        die("MemAvailable is below the growth asked for");
    }
    int out[2];
    if (pipe2(out, O_CLOEXEC)) die("pipe");
    pid_t watcher = fork();
    if (watcher < 0) die("fork");
    if (watcher == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(out[1], 1);
        dup2(out[1], 2);
        char m[32];
        snprintf(m, sizeof m, "%lld", threshold);
        /* -s 100: free swap never holds it back (a machine without swap passes anyway);
         * -r 0: no periodic reports. */
        execl(earlyoom, "earlyoom", "-M", m, "-s", "100", "-r", "0", "--prefer", "^jetsam-bloater$", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);

    /* Ready when it has printed its thresholds: its poll loop starts right after. */
    struct pollfd start = { out[0], POLLIN, 0 };
    uint64_t give_up = monotonic_ns() + 5000000000ULL;
    int started = 0;
    while (!started) {
        int left = (int)((give_up - monotonic_ns()) / 1000000);
        if (monotonic_ns() >= give_up || poll(&start, 1, left) <= 0) {
            kill(watcher, SIGKILL);
            errno = ETIMEDOUT;
            die("earlyoom did not print its configuration");
        }
        started = drain(out[0], "SIGKILL when");
        if (started < 0) {
            errno = ECHILD;
            die("earlyoom exited at start");
        }
    }
    struct timespec pause = { (time_t)(delay_us / 1000000), (long)(delay_us % 1000000) * 1000 };
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}

    uint64_t go_ns = monotonic_ns(), death_ns = 0;
    if (write(go[1], "g", 1) != 1) die("starting the bloater");
    uint64_t deadline = go_ns + (uint64_t)timeout_ms * 1000000ULL;
    struct pollfd fds[2] = { { pidfd, POLLIN, 0 }, { out[0], POLLIN, 0 } };
    while (!death_ns) {
        uint64_t now = monotonic_ns();
        if (now >= deadline) break;
        int n = poll(fds, fds[1].fd >= 0 ? 2 : 1, (int)((deadline - now) / 1000000) + 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("poll");
        if (fds[0].revents & POLLIN) {
            death_ns = monotonic_ns();
            kill(watcher, SIGKILL);   /* before anything else: nothing left it may kill */
        }
        if (fds[1].revents && drain(out[0], NULL) < 0) fds[1].fd = -1;
    }
    if (!death_ns) kill(watcher, SIGKILL);
    waitpid(watcher, NULL, 0);
    if (!death_ns) kill(bloater, SIGKILL);
    int status = 0;
    waitpid(bloater, &status, 0);
    drain(out[0], NULL);
    printf("available_kib=%lld threshold_kib=%lld go_ns=%llu death_ns=%llu signal=%d outcome=%s\n", available, threshold,
           (unsigned long long)go_ns, (unsigned long long)death_ns, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
           death_ns ? "killed" : "timeout");
    fflush(stdout);
    exit(0);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: earlyoom-trial EARLYOOM LOG PLAN CROSS_KIB DELAY_US TIMEOUT_MS\n");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A plain process: whatever its starter ignored or blocked (jetsam-bench ignores SIGINT and
     * SIGTERM to handle them itself, and exec keeps ignored signals ignored) must not spare the
     * bloater earlyoom's SIGTERM, nor reach earlyoom. */
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int alive[2];
    if (pipe2(alive, O_CLOEXEC)) die("pipe");
    if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) die("unshare (needs root)");
    pid_t init = fork();
    if (init < 0) die("fork");
    if (init == 0) {
        close(alive[1]);
        run_init(argv, alive[0]);
    }
    close(alive[0]);
    int status;
    while (waitpid(init, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
