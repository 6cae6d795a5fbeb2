// Parent-side system calls Swift cannot reach: glibc's syscall(2) is variadic, and
// struct open_how and waitid's siginfo_t are awkward to lay out from Swift.
// Each returns -1 with errno set on failure.
#ifndef APPEX_SYSCALLS_H
#define APPEX_SYSCALLS_H

#include <stdint.h>

int appex_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);
// open_tree(dirfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH): a detached copy of
// the mount at `dirfd` (not recursive: submounts stay invisible), for APPEX_OP_ATTACH_TREE.
int appex_open_tree_clone(int dirfd);
int appex_pidfd_send_signal(int pidfd, int sig);
int appex_pidfd_open(int pid);
// prctl(PR_SET_CHILD_SUBREAPER): orphaned descendants are reparented to the caller, which
// reaps them (what pid 1 does on a real system; a test harness stands in for it).
int appex_set_child_subreaper(int on);
int appex_memfd(const char *name);
int appex_pipe_cloexec(int fds[2]);
// waitid(P_PIDFD): status is the exit code or signal; code is CLD_EXITED/CLD_KILLED/CLD_DUMPED
// (0 with WNOHANG when still running).
int appex_wait_pidfd(int pidfd, int options, int32_t *code, int32_t *status);

#endif
