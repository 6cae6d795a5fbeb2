/* Stepwise memory growth with a timed log (grow.h). */
#define _GNU_SOURCE
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

static uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t ns) {
    struct timespec t = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {}
}

/* One field of the plan: a whole number in [min, max] ending at `end` (',' or NUL). */
static int field(const char **at, char end, unsigned long long min, unsigned long long max, unsigned long long *value) {
    char *stop;
    if (**at < '0' || **at > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(*at, &stop, 10);
    if (errno || *stop != end || v < min || v > max) return -1;
    *value = v;
    *at = end ? stop + 1 : stop;
    return 0;
}

int grow_parse(const char *text, struct grow_plan *plan, char *why, size_t why_size) {
    unsigned long long step_kib, interval_us, cap_mib, hold_ms;
    const char *at = text;
    if (field(&at, ',', 4, 1 << 20, &step_kib) || field(&at, ',', 0, 10000000, &interval_us) ||
        field(&at, ',', 1, 1 << 16, &cap_mib) || field(&at, 0, 0, 3600000, &hold_ms)) {
        snprintf(why, why_size, "STEP_KIB,INTERVAL_US,CAP_MIB,HOLD_MS (4..1048576, 0..10000000, 1..65536, 0..3600000)");
        return -1;
    }
    if (step_kib * 1024 > cap_mib << 20) {
        snprintf(why, why_size, "a step of %llu KiB is over the cap of %llu MiB", step_kib, cap_mib);
        return -1;
    }
    plan->step_bytes = step_kib * 1024;
    plan->interval_ns = interval_us * 1000;
    plan->cap_bytes = cap_mib << 20;
    plan->hold_ns = hold_ms * 1000000;
    return 0;
}

struct grow_log *grow_map_log(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return NULL;
    if ((size_t)st.st_size < sizeof(struct grow_log)) {
        errno = EINVAL;
        return NULL;
    }
    struct grow_log *log = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (log == MAP_FAILED) return NULL;
    if (log->magic != GROW_MAGIC ||
        sizeof(struct grow_log) + log->capacity * sizeof(struct grow_step) > (size_t)st.st_size) {
        munmap(log, (size_t)st.st_size);
        errno = EINVAL;
        return NULL;
    }
    return log;
}

long long grow_run(const struct grow_plan *plan, struct grow_log *log, void (*after_step)(struct grow_step *step)) {
    /* Reserved at once, charged page by page as it is touched. */
    uint8_t *region =
        mmap(NULL, plan->cap_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return -1;
    /* 4 KiB pages whatever the THP setting, so each step charges what it says, as it goes. */
    madvise(region, plan->cap_bytes, MADV_NOHUGEPAGE);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t grown = 0, first = monotonic_ns(), start = first;
    for (uint64_t k = 0; grown < plan->cap_bytes; k++) {
        if (k > 0) {
            sleep_until(first + k * plan->interval_ns);
            start = monotonic_ns();
        }
        uint64_t next = grown + plan->step_bytes > plan->cap_bytes ? plan->cap_bytes : grown + plan->step_bytes;
        struct grow_step *s = log && k < log->capacity ? &log->steps[k] : NULL;
        if (s) {
            s->end_ns = 0;
            s->available_kib = 0;
            s->bytes = next;
            s->start_ns = start;
            __atomic_store_n(&log->count, k + 1, __ATOMIC_RELEASE);
        }
        for (uint64_t at = grown; at < next; at += page) ((volatile uint8_t *)region)[at] = 1;
        grown = next;
        if (s) {
            __atomic_store_n(&s->end_ns, monotonic_ns(), __ATOMIC_RELEASE);
            if (after_step) after_step(s);
        }
    }
    sleep_until(monotonic_ns() + plan->hold_ns);
    return (long long)grown;
}
