// Threads started from C: placed on another CPU than their creator's, the network
// namespace made ahead on one, and glibc's malloc arenas (GNU extensions and <malloc.h>
// constants Swift's Glibc module leaves out).
#ifndef APPEX_THREADS_H
#define APPEX_THREADS_H

#include <pthread.h>
#include <sched.h> // cpu_set_t
#include <stddef.h>

// A new network namespace as a close-on-exec descriptor, made by the calling thread, which
// is back in its own namespace on return; -1 with errno on failure.
int appex_netns_create(void);
// appex_netns_create on a thread started elsewhere (appex_thread_start_elsewhere). NULL
// only when out of memory. Every maker is finished exactly once: appex_netns_maker_finish
// joins the thread (or, when none could be started, does its work there), frees the maker
// and returns the namespace's descriptor (-1: it could not be made).
struct appex_netns_maker;
struct appex_netns_maker *appex_netns_maker_start(void);
int appex_netns_maker_finish(struct appex_netns_maker *maker);
// mallopt(M_ARENA_MAX, 1): every thread allocates from the main arena (1: done). Call it
// before the process starts a thread.
int appex_malloc_single_arena(void);
// pthread_create of body(arg), joinable, with `stack_size` (0: the default), placed on one of
// the caller's CPUs other than the one it runs on (when it may use several); the thread
// widens its affinity back to the caller's set before calling body. Returns pthread_create's
// error number (0: started). background_thread.c says why.
int appex_thread_start_elsewhere(pthread_t *thread, size_t stack_size, void *(*body)(void *), void *arg);
// The CPUs of `allowed` other than `here`, into `elsewhere`; 1 when that leaves at least one,
// 0 (elsewhere untouched) when `allowed` holds one CPU or does not hold `here`.
int appex_cpus_elsewhere(const cpu_set_t *allowed, int here, cpu_set_t *elsewhere);
// sched_getcpu(), and CPU_COUNT of the calling thread's affinity (-1 on failure): GNU
// extensions Swift's Glibc module leaves out, for the tests of the placement above.
int appex_current_cpu(void);
int appex_allowed_cpu_count(void);

#endif
