/* Helpers both trials use (trial.h). */
#define _GNU_SOURCE
#include "trial.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

void die(const char *what) {
    fprintf(stderr, "earlyoom-trial: %s: %s\n", what, strerror(errno));
    exit(1);
}

uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

void sleep_micros(long long micros) {
    struct timespec pause = {(time_t)(micros / 1000000), (long)(micros % 1000000) * 1000};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
}

long long number(const char *text, const char *name) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || !*text || *end || v < 0) {
        fprintf(stderr, "earlyoom-trial: %s must be a whole number, not \"%s\"\n", name, text);
        exit(1);
    }
    return v;
}

long long mem_available_kib(void) {
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

void parse_plan(const char *text, struct grow_plan *plan) {
    char why[160];
    if (grow_parse(text, plan, why, sizeof why)) {
        fprintf(stderr, "earlyoom-trial: PLAN: %s\n", why);
        exit(1);
    }
}

struct grow_log *open_log(const char *path) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) die(path);
    struct grow_log *log = grow_map_log(fd);
    if (!log) die("the log is not a grow log");
    return log;
}

pid_t fork_member(const char *name) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid > 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, name);
    int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj < 0 || write(adj, "1000", 4) != 4) _exit(3);
    close(adj);
    return 0;
}

static int meminfo_fd = -1;

void open_meminfo(void) {
    meminfo_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (meminfo_fd < 0) _exit(3);
}

void note_available(struct grow_step *step) {
    char text[4096];
    ssize_t n = pread(meminfo_fd, text, sizeof text - 1, 0);
    if (n <= 0) return;
    text[n] = 0;
    const char *at = strstr(text, "MemAvailable:");
    if (at) step->available_kib = strtoull(at + 13, NULL, 10);
}
