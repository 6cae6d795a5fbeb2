#include "appex_event_loop.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>

int appex_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int appex_epoll_add(int epfd, int fd) {
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = fd};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int appex_epoll_add_priority(int epfd, int fd) {
    struct epoll_event ev = {.events = EPOLLPRI, .data.fd = fd};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int appex_epoll_del(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, 0); }

int appex_epoll_wait(int epfd, int *fds, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) fds[i] = events[i].data.fd;
    return n;
}

int appex_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
int appex_eventfd_cloexec(int nonblocking) { return eventfd(0, EFD_CLOEXEC | (nonblocking ? EFD_NONBLOCK : 0)); }
int appex_timerfd(void) { return appex_timerfd_cloexec(1); }
int appex_timerfd_cloexec(int nonblocking) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | (nonblocking ? TFD_NONBLOCK : 0));
}

int appex_timerfd_arm(int fd, long long nanos) {
    if (nanos < 1) nanos = 1;
    struct itimerspec t = {.it_value = {.tv_sec = nanos / 1000000000LL, .tv_nsec = nanos % 1000000000LL}};
    return timerfd_settime(fd, 0, &t, NULL);
}

int appex_timerfd_disarm(int fd) {
    struct itimerspec t = {0};
    return timerfd_settime(fd, 0, &t, NULL);
}

void appex_name_thread(const char *name) { (void)prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }

int appex_filesystem_type(const char *path, long *type) {
    struct statfs fs;
    if (statfs(path, &fs) != 0) return -1;
    *type = (long)fs.f_type;
    return 0;
}

int appex_descriptor_filesystem_type(int fd, long *type) {
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0) return -1;
    *type = (long)fs.f_type;
    return 0;
}
