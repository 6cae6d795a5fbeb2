/* The probe's `syscall` action: one raw system call with arguments that cannot do harm. */
#ifndef PROBE_SYSCALLS_H
#define PROBE_SYSCALLS_H

#include <stddef.h>

/* Makes the call named by `which` (a name from the table in syscalls.c, a number from it, or
 * an unassigned number from 1024 to 2^30 - 1) and writes "ok" or "errno=<n>" to `result`.
 * Returns 0, or -1 with a sentence in `result` when `which` is not one it knows how to make
 * harmlessly. */
int probe_syscall(const char *which, char *result, size_t size);

#endif
