// A joinable thread started on another CPU than its creator's (JoinableThread in Swift, the
// network-namespace maker in prepared_netns.c).
//
// Appex starts a helper thread for work meant to overlap the caller's: the sandbox build,
// the network namespace. Left to itself, the scheduler often queues a new thread on the
// CPU of the thread that made it, and a busy creator keeps it waiting there while the other
// CPU idles: up to 2 ms in an ftrace timeline of `appex run` on a 2-vCPU VM. So the thread
// is made on the caller's other CPUs only, and on its first instruction widens its
// affinity back to everything the caller may use, so later the scheduler moves it freely.
#define _GNU_SOURCE
#include "appex_threads.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

struct appex_thread_start {
    void *(*body)(void *);
    void *arg;
    cpu_set_t allowed;
    int narrowed;
};

static void *appex_thread_trampoline(void *p) {
    struct appex_thread_start start = *(struct appex_thread_start *)p;
    free(p);
    // Not fatal if refused (a cpuset changed meanwhile): the thread just stays where it is.
    if (start.narrowed) (void)sched_setaffinity(0, sizeof start.allowed, &start.allowed);
    return start.body(start.arg);
}

int appex_cpus_elsewhere(const cpu_set_t *allowed, int here, cpu_set_t *elsewhere) {
    // One CPU allowed, or the current one unknown or not among them: no placement.
    if (CPU_COUNT(allowed) < 2 || here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, allowed)) return 0;
    *elsewhere = *allowed;
    CPU_CLR(here, elsewhere);
    return 1;
}

int appex_thread_start_elsewhere(pthread_t *thread, size_t stack_size, void *(*body)(void *), void *arg) {
    struct appex_thread_start *start = malloc(sizeof *start);
    if (start == NULL) return ENOMEM;
    start->body = body;
    start->arg = arg;
    start->narrowed = 0;
    pthread_attr_t attr;
    int r = pthread_attr_init(&attr);
    if (r != 0) {
        free(start);
        return r;
    }
    if (stack_size > 0) (void)pthread_attr_setstacksize(&attr, stack_size);
    int here = sched_getcpu();
    cpu_set_t elsewhere;
    if (sched_getaffinity(0, sizeof start->allowed, &start->allowed) == 0 &&
        appex_cpus_elsewhere(&start->allowed, here, &elsewhere) &&
        pthread_attr_setaffinity_np(&attr, sizeof elsewhere, &elsewhere) == 0) {
        start->narrowed = 1;
    }
    r = pthread_create(thread, &attr, appex_thread_trampoline, start);
    pthread_attr_destroy(&attr);
    if (r != 0) free(start);
    return r;
}

int appex_current_cpu(void) { return sched_getcpu(); }

int appex_allowed_cpu_count(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    return CPU_COUNT(&allowed);
}
