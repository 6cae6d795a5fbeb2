/* Stepwise memory growth with a timed log: the load of the jetsam benchmark
 * (Benchmarks/Sources/jetsam-bench). The probe's `grow` action runs it inside appexd's sandbox;
 * the benchmark's earlyoom side runs the same file (a symlink) in a plain process, so both
 * sides grow the same way. Self-contained: libc only. */
#ifndef GROW_H
#define GROW_H

#include <stddef.h>
#include <stdint.h>

/* "appexgrw", little-endian, at the start of a log file. */
#define GROW_MAGIC 0x7772676178657061ULL

/* One step, written before its pages are touched (start_ns, bytes) and completed after
 * (end_ns, then whatever the caller's hook adds). A step cut short by a kill keeps end_ns 0. */
struct grow_step {
    uint64_t start_ns; /* CLOCK_MONOTONIC */
    uint64_t end_ns; /* CLOCK_MONOTONIC, 0 until every page of the step is touched */
    uint64_t bytes; /* all the growth held once this step is done */
    uint64_t available_kib; /* for the hook: the earlyoom side's MemAvailable after the step */
};

/* The log file: a 32-byte header, then the steps (32 bytes each). Whoever reads it does so after the writer
 * is gone; `count` is the steps begun (stored with release order after each step's fields). */
struct grow_log {
    uint64_t magic;
    uint64_t capacity; /* steps that fit, set by whoever made the file */
    uint64_t count;
    uint64_t reserved;
    struct grow_step steps[];
};

struct grow_plan {
    uint64_t step_bytes;
    uint64_t interval_ns; /* step k starts at k × interval after the first */
    uint64_t cap_bytes; /* growth stops here, and the memory is held */
    uint64_t hold_ns; /* how long it is held before grow_run returns */
};

/* "STEP_KIB,INTERVAL_US,CAP_MIB,HOLD_MS", e.g. "1024,2000,160,5000". 0, or -1 with `why`
 * saying what is wrong. */
int grow_parse(const char *text, struct grow_plan *plan, char *why, size_t why_size);

/* Maps a log file made by the reader (magic and capacity set, sized for them) shared and
 * writable. NULL with errno when it is not one. */
struct grow_log *grow_map_log(int fd);

/* Grows by plan, logging each step to `log` (NULL: no log) and calling `after_step` (NULL:
 * none) on each logged step once it is done, then holds for hold_ns. The memory is never
 * released: it stays charged until the process exits. Returns the bytes grown, or -1 with
 * errno when the address space could not be reserved. */
long long grow_run(const struct grow_plan *plan, struct grow_log *log, void (*after_step)(struct grow_step *step));

#endif
