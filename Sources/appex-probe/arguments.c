// Argument parsing and the low-memory arena the raw calls take their pointers from.
#include "probe.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int probe_number(const char *s, unsigned long *out) {
    if (!s || !*s) return -1;
    char *end = NULL;
    errno = 0;
    // strtoul wraps "-1" to all ones, which is what a register holds for -1.
    unsigned long v = strtoul(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

enum { ARENA_SIZE = 4 << 20, MAX_BUFFER = 1 << 20 };
static char *arena;
static size_t arena_used;

void *probe_low(size_t n) {
    if (!arena) {
        int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_32BIT
        // Below 2 GiB: int 0x80 passes only the low 32 bits of each register.
        void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, flags | MAP_32BIT, -1, 0);
        if (p == MAP_FAILED) p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, flags, -1, 0);
#else
        void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, flags, -1, 0);
#endif
        if (p == MAP_FAILED) abort();
        arena = p;
    }
    size_t start = (arena_used + 15) & ~(size_t)15;
    if (n > ARENA_SIZE - start) abort(); // the actions ask for a few KiB at most
    arena_used = start + n;
    return arena + start;
}

const char *probe_low_string(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(probe_low(n), s, n);
}

int probe_syscall_argument(const char *s, unsigned long *out) {
    if (!strcmp(s, "null")) {
        *out = 0;
        return 0;
    }
    if (!strncmp(s, "str:", 4)) {
        *out = (unsigned long)(uintptr_t)probe_low_string(s + 4);
        return 0;
    }
    if (!strncmp(s, "buf:", 4)) {
        unsigned long n;
        if (probe_number(s + 4, &n) < 0 || n > MAX_BUFFER) return -1;
        *out = (unsigned long)(uintptr_t)probe_low(n ? n : 1);
        return 0;
    }
    return probe_number(s, out);
}
