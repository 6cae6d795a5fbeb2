// A network namespace made ahead on a thread of its own (PreparedNetworkNamespace.swift),
// started here in C: the first Swift thread of `appex run` used to wait for the runtime to
// instantiate the generic types around it, at the start of the process, before the thread
// could begin its work (Docs/decisions/0007-first-uses-off-the-path.md).
#define _GNU_SOURCE
#include "appex_threads.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

struct appex_netns_maker {
    pthread_t thread;
    int started;
    int fd;
};

static void *appex_netns_maker_body(void *arg) {
    struct appex_netns_maker *m = arg;
    m->fd = appex_netns_create();
    return NULL;
}

struct appex_netns_maker *appex_netns_maker_start(void) {
    struct appex_netns_maker *m = calloc(1, sizeof *m);
    if (m == NULL) return NULL;
    m->fd = -1;
    m->started = appex_thread_start_elsewhere(&m->thread, 1 << 20, appex_netns_maker_body, m) == 0;
    return m;
}

int appex_netns_maker_finish(struct appex_netns_maker *m) {
    if (m == NULL) return -1;
    if (m->started) {
        pthread_join(m->thread, NULL);
    } else {
        appex_netns_maker_body(m); // no thread could be made: the work is done here
    }
    int fd = m->fd;
    free(m);
    return fd;
}

int appex_netns_create(void) {
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0) return -1;
    if (unshare(CLONE_NEWNET) < 0) {
        int e = errno;
        close(self);
        errno = e;
        return -1;
    }
    int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    int e = errno;
    // Back where this thread was: it must not go on in the new namespace.
    if (setns(self, CLONE_NEWNET) < 0) abort();
    close(self);
    errno = e;
    return fd;
}
