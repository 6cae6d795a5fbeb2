// epoll and eventfd for the supervisor's event loop: Swift's Glibc module exports neither,
// and struct epoll_event is packed on x86_64, so the loop sees only descriptors.
#ifndef APPEX_EVENT_LOOP_H
#define APPEX_EVENT_LOOP_H

// epoll_create1(EPOLL_CLOEXEC); -1 and errno on failure.
int appex_epoll_create(void);
// Watch fd for input, hang-up and errors (level-triggered).
int appex_epoll_add(int epfd, int fd);
// Watch fd for priority events only (a PSI trigger signals with POLLPRI; errors too).
int appex_epoll_add_priority(int epfd, int fd);
int appex_epoll_del(int epfd, int fd);
// Waits up to timeout_ms (-1: forever); writes up to max ready descriptors to fds.
// Returns their number, or -1 and errno.
int appex_epoll_wait(int epfd, int *fds, int max, int timeout_ms);
// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK).
int appex_eventfd(void);
// eventfd(0, EFD_CLOEXEC), with EFD_NONBLOCK when nonblocking is not 0 (cgroup watchers).
int appex_eventfd_cloexec(int nonblocking);
// timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK): the v2 usage lines' clock.
int appex_timerfd(void);
// timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), with TFD_NONBLOCK when nonblocking is not 0
// (the SDK's standby reader blocks in read on it).
int appex_timerfd_cloexec(int nonblocking);
// Arms it once, nanos from now (at least 1: 0 would disarm it). 0, or -1 and errno.
int appex_timerfd_arm(int fd, long long nanos);
// Disarms it; an expiry not yet read is cleared too. 0, or -1 and errno.
int appex_timerfd_disarm(int fd);
// Names the calling thread (prctl PR_SET_NAME; at most 15 bytes kept): what top -H shows.
void appex_name_thread(const char *name);
// statfs(path)'s f_type (the filesystem's magic number), for recognizing cgroup hierarchies;
// Swift's Glibc module does not export statfs. 0 and the magic, or -1 and errno.
int appex_filesystem_type(const char *path, long *type);
// The same for an open descriptor (fstatfs), for telling what a received descriptor is.
int appex_descriptor_filesystem_type(int fd, long *type);

#endif
