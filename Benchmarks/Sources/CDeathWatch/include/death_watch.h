/* The moment a process is gone, as its pidfd tells it: how jetsam-bench sees an Appex victim
 * die. earlyoom-trial watches its bloater the same way (pidfd_open, then poll). */
#ifndef DEATH_WATCH_H
#define DEATH_WATCH_H

#include <stdint.h>
#include <sys/types.h>

/* pidfd_open(pid, 0): a descriptor, or -1 with errno. */
int death_watch_open(pid_t pid);

/* Blocks until the pidfd is readable (the process has exited) or timeout_ms passes. Returns
 * CLOCK_MONOTONIC ns read as soon as poll returns, or 0 at the timeout or on an error. */
uint64_t death_watch_wait(int pidfd, int timeout_ms);

#endif
