// Parent-side system calls Swift cannot reach: glibc's syscall(2) is variadic, and
// struct open_how, waitid's siginfo_t and pipe2 are not usable from Swift's Glibc module.
#define _GNU_SOURCE
#include "appex_syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int appex_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve) {
    struct open_how how;
    memset(&how, 0, sizeof(how));
    how.flags = flags;
    how.mode = mode;
    how.resolve = resolve;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int appex_open_tree_clone(int dirfd) {
    return (int)syscall(SYS_open_tree, dirfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
}

int appex_pidfd_send_signal(int pidfd, int sig) { return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0); }

int appex_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int appex_set_child_subreaper(int on) { return (int)syscall(SYS_prctl, PR_SET_CHILD_SUBREAPER, on ? 1 : 0, 0, 0, 0); }

int appex_wait_pidfd(int pidfd, int options, int32_t *code, int32_t *status) {
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    int r;
    do { r = waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED | options); } while (r < 0 && errno == EINTR);
    if (r < 0) return -1;
    *code = si.si_code;
    *status = si.si_status;
    return si.si_pid == 0 ? 0 : 1;
}

int appex_memfd(const char *name) { return (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC); }

int appex_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
