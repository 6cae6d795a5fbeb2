/* earlyoom, run and read by the trial's init (trial.h). */
#define _GNU_SOURCE
#include "trial.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char pending[8192];
static size_t pending_length;

int watcher_drain(struct watcher *w, const char *mark) {
    int seen = 0;
    for (;;) {
        ssize_t n = read(w->out, pending + pending_length, sizeof pending - 1 - pending_length);
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
        if (pending_length == sizeof pending - 1) pending_length = 0; /* a line too long: dropped */
    }
}

void watcher_start(struct watcher *w, const char *earlyoom, long long cross_kib, const char *prefer) {
    w->available_kib = mem_available_kib();
    w->threshold_kib = w->available_kib - cross_kib;
    if (w->threshold_kib <= 0) {
        errno = ERANGE;
        die("MemAvailable is below the growth asked for");
    }
    int out[2];
    if (pipe2(out, O_CLOEXEC)) die("pipe");
    char m[32];
    snprintf(m, sizeof m, "%lld", w->threshold_kib);
    w->pid = fork();
    if (w->pid < 0) die("fork");
    if (w->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(out[1], 1);
        dup2(out[1], 2);
        if (prefer)
            execl(earlyoom, "earlyoom", "-M", m, "-s", "100", "-r", "0", "--prefer", prefer, (char *)NULL);
        else
            execl(earlyoom, "earlyoom", "-M", m, "-s", "100", "-r", "0", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    w->out = out[0];
    fcntl(w->out, F_SETFL, O_NONBLOCK);

    struct pollfd start = {w->out, POLLIN, 0};
    uint64_t give_up = monotonic_ns() + 5000000000ULL;
    int started = 0;
    while (!started) {
        int left = (int)((give_up - monotonic_ns()) / 1000000);
        if (monotonic_ns() >= give_up || poll(&start, 1, left) <= 0) {
            kill(w->pid, SIGKILL);
            errno = ETIMEDOUT;
            die("earlyoom did not print its configuration");
        }
        started = watcher_drain(w, "SIGKILL when");
        if (started < 0) {
            errno = ECHILD;
            die("earlyoom exited at start");
        }
    }
}

void watcher_stop(struct watcher *w) {
    kill(w->pid, SIGKILL);
    waitpid(w->pid, NULL, 0);
}
