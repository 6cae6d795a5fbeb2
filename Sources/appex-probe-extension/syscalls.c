/* Raw system calls for sandbox and policy tests. Each one is made with arguments that make
 * it fail or do nothing when no sandbox stops it (the tests run as root): paths that do not
 * exist, a pid above PID_MAX_LIMIT, invalid flags or commands, bad descriptors. A seccomp
 * filter answers before the kernel looks at the arguments, so the errno tells "stopped by the
 * sandbox" (EPERM, ENOSYS, ...) from "reached the kernel" (ENOENT, ESRCH, EINVAL, EBADF, ...). */
#define _GNU_SOURCE
#include "syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#define NOWHERE "/nonexistent-appex-probe/entry"
/* Above PID_MAX_LIMIT (2^22), so no process can have it. */
#define NO_PID 0x7ffffff0L
/* Numbers from here to the x32 bit are assigned to no system call on x86_64 or aarch64. */
#define FIRST_UNASSIGNED 1024L
#define LAST_UNASSIGNED 0x3fffffffL

static long call_socket(void) {
    /* Making a UDP socket is harmless; whether the sandbox allows it is the question. */
    long fd = syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) close((int)fd);
    return fd < 0 ? -1 : 0;
}

static long call_execve(void) {
    char *argv[] = {NOWHERE, NULL}, *envp[] = {NULL};
    return syscall(SYS_execve, NOWHERE, argv, envp);
}

static long call_sethostname(void) {
    static char name[1000]; /* longer than any UTS name may be: EINVAL */
    return syscall(SYS_sethostname, name, sizeof name);
}

static long call_clock_settime(void) {
    struct timespec t = {0, 0};
    return syscall(SYS_clock_settime, -1, &t); /* no such clock */
}

static long call_getpid(void) { return syscall(SYS_getpid); }
static long call_openat(void) { return syscall(SYS_openat, AT_FDCWD, NOWHERE, O_RDONLY | O_CLOEXEC); }
#ifdef SYS_open
static long call_open(void) { return syscall(SYS_open, NOWHERE, O_RDONLY | O_CLOEXEC); }
#endif
static long call_mkdirat(void) { return syscall(SYS_mkdirat, AT_FDCWD, NOWHERE, 0700); }
static long call_mknodat(void) { return syscall(SYS_mknodat, AT_FDCWD, NOWHERE, 0600, 0); }
static long call_unlinkat(void) { return syscall(SYS_unlinkat, AT_FDCWD, NOWHERE, 0); }
static long call_fchmodat(void) { return syscall(SYS_fchmodat, AT_FDCWD, NOWHERE, 0600); }
static long call_chdir(void) { return syscall(SYS_chdir, NOWHERE); }
static long call_chroot(void) { return syscall(SYS_chroot, NOWHERE); }
static long call_mount(void) { return syscall(SYS_mount, NULL, NOWHERE, "tmpfs", 0, NULL); }
static long call_umount2(void) { return syscall(SYS_umount2, NOWHERE, 0); }
static long call_pivot_root(void) { return syscall(SYS_pivot_root, NOWHERE, NOWHERE); }
static long call_acct(void) { return syscall(SYS_acct, NOWHERE); }
static long call_swapon(void) { return syscall(SYS_swapon, NOWHERE, 0); }
static long call_kill(void) { return syscall(SYS_kill, NO_PID, 0); }
static long call_ptrace(void) { return syscall(SYS_ptrace, PTRACE_ATTACH, NO_PID, NULL, NULL); }
static long call_setpriority(void) { return syscall(SYS_setpriority, PRIO_PROCESS, NO_PID, 0); }
static long call_reboot(void) { return syscall(SYS_reboot, 0, 0, 0, NULL); } /* bad magic numbers */
static long call_unshare(void) { return syscall(SYS_unshare, 0x1); } /* not a namespace flag */
static long call_setns(void) { return syscall(SYS_setns, -1, 0); }
static long call_bpf(void) { return syscall(SYS_bpf, 0x7fffffff, NULL, 0); } /* no such command */
static long call_keyctl(void) { return syscall(SYS_keyctl, 0x7fffffff, 0, 0, 0, 0); }
static long call_finit_module(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long call_delete_module(void) { return syscall(SYS_delete_module, "appex_probe_no_such_module", O_NONBLOCK); }
static long call_kexec_load(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0xffffffffUL); }
static long call_perf_event_open(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long call_ioctl(void) { return syscall(SYS_ioctl, -1, 0, 0); }
static long call_syslog(void) { return syscall(SYS_syslog, 10, NULL, 0); } /* SYSLOG_ACTION_SIZE_BUFFER */
static long call_userfaultfd(void) { return syscall(SYS_userfaultfd, ~0); }
static long call_memfd_create(void) { return syscall(SYS_memfd_create, "probe", ~0U); }
static long call_io_uring_setup(void) { return syscall(SYS_io_uring_setup, 1, NULL); }
static long call_personality(void) { return syscall(SYS_personality, 0xffffffffUL); } /* a query */

struct entry {
    const char *name;
    long number;
    long (*call)(void);
};

#define ENTRY(name)                                                                                                    \
    { #name, SYS_##name, call_##name }
static const struct entry table[] = {
    ENTRY(getpid),       ENTRY(openat),
#ifdef SYS_open
    ENTRY(open),
#endif
    ENTRY(mkdirat),      ENTRY(mknodat),        ENTRY(unlinkat),      ENTRY(fchmodat),      ENTRY(chdir),
    ENTRY(chroot),       ENTRY(execve),         ENTRY(mount),         ENTRY(umount2),       ENTRY(pivot_root),
    ENTRY(acct),         ENTRY(swapon),         ENTRY(kill),          ENTRY(ptrace),        ENTRY(setpriority),
    ENTRY(reboot),       ENTRY(unshare),        ENTRY(setns),         ENTRY(socket),        ENTRY(bpf),
    ENTRY(keyctl),       ENTRY(finit_module),   ENTRY(delete_module), ENTRY(kexec_load),    ENTRY(perf_event_open),
    ENTRY(ioctl),        ENTRY(syslog),         ENTRY(sethostname),   ENTRY(clock_settime), ENTRY(userfaultfd),
    ENTRY(memfd_create), ENTRY(io_uring_setup), ENTRY(personality),
};
#define TABLE_SIZE (sizeof table / sizeof *table)

int probe_syscall(const char *which, char *result, size_t size) {
    char *end;
    errno = 0;
    long number = strtol(which, &end, 10);
    int numeric = *which >= '0' && *which <= '9' && *end == 0 && errno == 0;
    const struct entry *found = NULL;
    for (size_t i = 0; i < TABLE_SIZE && !found; i++)
        if (numeric ? table[i].number == number : strcmp(table[i].name, which) == 0) found = &table[i];

    long r;
    if (found) {
        errno = 0;
        r = found->call();
    } else if (numeric && number >= FIRST_UNASSIGNED && number <= LAST_UNASSIGNED) {
        errno = 0;
        r = syscall(number, 0, 0, 0, 0, 0, 0);
    } else {
        snprintf(result, size,
                 "no harmless way to make syscall \"%s\": use a name or number from the probe's "
                 "table, or an unassigned number from %ld to %ld",
                 which, FIRST_UNASSIGNED, LAST_UNASSIGNED);
        return -1;
    }
    if (r == -1)
        snprintf(result, size, "errno=%d", errno);
    else
        snprintf(result, size, "ok");
    return 0;
}
