/* death_watch.h: pidfd_open and one poll. */
#define _GNU_SOURCE
#include "death_watch.h"

#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int death_watch_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

uint64_t death_watch_wait(int pidfd, int timeout_ms) {
    struct timespec until, now;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    struct pollfd p = {pidfd, POLLIN, 0};
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long left = (long long)(until.tv_sec - now.tv_sec) * 1000 + (until.tv_nsec - now.tv_nsec) / 1000000;
        if (left < 0) return 0;
        int n = poll(&p, 1, (int)left + 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) continue; /* rounding: the loop decides when time is up */
            return 0;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
    }
}
