// The calls a sandbox must stop, each made exactly once with arguments that keep it harmless
// when nothing stops it (the suite runs as root on real machines): paths that do not exist,
// pids above PID_MAX_LIMIT, wrong magic numbers, flags no kernel accepts, NULL where the
// kernel copies a structure in. A seccomp filter answers before the kernel reads any
// argument, so the policy's errno (or SIGSYS) means contained, and the kernel's own answer
// (EINVAL, ENOENT, ESRCH, EBADF, EFAULT, ...) means the call got through. Docs/probe.md
// lists each call's arguments and what the kernel answers when it runs.
//
// Every call here can be made through the native ABI or, prefixed by `i386` or `x32`,
// through the other x86 system-call tables (abi.c).
#include "probe.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

// No process can have this pid: PID_MAX_LIMIT is 2^22.
#define NO_SUCH_PID 0x7ffffff0UL
// No keyring or key has this serial.
#define NO_SUCH_KEY 0x7ffffff0UL
// No clock has this id (ids are small, or negative for CPU clocks and fds).
#define NO_SUCH_CLOCK 0x7ffffff0UL
#define MISSING_PATH "/nonexistent/appex-probe"
// Bit 31: no flags argument of these calls defines it.
#define BAD_FLAGS 0x80000000UL

#define ARGS enum probe_abi abi, int argc, char **argv, unsigned long a[6]
#define UNUSED (void)abi, (void)argc, (void)argv

static unsigned long low_string(const char *s) { return (unsigned long)(uintptr_t)probe_low_string(s); }
static unsigned long low_zeroes(size_t n) { return (unsigned long)(uintptr_t)probe_low(n); }

static int build_ptrace(ARGS) {
    UNUSED;
    a[0] = 16; // PTRACE_ATTACH
    a[1] = NO_SUCH_PID;
    return 0;
}

static int build_process_vm_readv(ARGS) {
    UNUSED;
    // One 8-byte iovec on each side (an empty transfer returns 0 before the pid is looked
    // up); the i386 ABI reads struct compat_iovec, two 32-bit words.
    unsigned long buf = low_zeroes(8);
    unsigned long iov;
    if (abi == PROBE_ABI_I386) {
        uint32_t *v = probe_low(8);
        v[0] = (uint32_t)buf;
        v[1] = 8;
        iov = (unsigned long)(uintptr_t)v;
    } else {
        unsigned long *v = probe_low(16);
        v[0] = buf;
        v[1] = 8;
        iov = (unsigned long)(uintptr_t)v;
    }
    a[0] = NO_SUCH_PID;
    a[1] = iov;
    a[2] = 1;
    a[3] = iov;
    a[4] = 1;
    a[5] = 0;
    return 0;
}

static int build_mount(ARGS) {
    UNUSED;
    a[0] = low_string("tmpfs");
    a[1] = low_string(MISSING_PATH);
    a[2] = low_string("tmpfs");
    return 0;
}

static int build_umount2(ARGS) {
    UNUSED;
    a[0] = low_string(MISSING_PATH);
    return 0;
}

static int build_pivot_root(ARGS) {
    UNUSED;
    a[0] = low_string(MISSING_PATH);
    a[1] = low_string(MISSING_PATH "/old");
    return 0;
}

static int build_fsopen(ARGS) {
    UNUSED;
    a[0] = low_string("appex-probe-no-such-filesystem");
    a[1] = BAD_FLAGS;
    return 0;
}

static int build_open_tree(ARGS) {
    UNUSED;
    a[0] = (unsigned long)AT_FDCWD;
    a[1] = low_string(MISSING_PATH);
    a[2] = BAD_FLAGS;
    return 0;
}

static int build_move_mount(ARGS) {
    UNUSED;
    a[0] = (unsigned long)-1;
    a[1] = low_string(MISSING_PATH);
    a[2] = (unsigned long)-1;
    a[3] = low_string(MISSING_PATH "/target");
    a[4] = BAD_FLAGS;
    return 0;
}

static int build_unshare(ARGS) {
    UNUSED;
    // Succeeds when not stopped, but only this short-lived process enters the namespace.
    a[0] = CLONE_NEWUSER;
    return 0;
}

static int build_setns(ARGS) {
    UNUSED;
    a[0] = (unsigned long)-1;
    return 0;
}

// Namespace flags by name ("newuser|newns" or "newuser,newns"), or a number.
static int namespace_flags(int argc, char **argv, unsigned long *flags) {
    if (argc < 2) {
        *flags =
            CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
        return 0;
    }
    if (probe_number(argv[1], flags) == 0) return 0;
    static const struct {
        const char *name;
        unsigned long flag;
    } names[] = {
        {"newuser", CLONE_NEWUSER},     {"newns", CLONE_NEWNS},
        {"newpid", CLONE_NEWPID},       {"newnet", CLONE_NEWNET},
        {"newipc", CLONE_NEWIPC},       {"newuts", CLONE_NEWUTS},
        {"newcgroup", CLONE_NEWCGROUP}, {"newtime", 0x80 /* CLONE_NEWTIME, clone3 only */},
    };
    char *copy = strdup(argv[1]), *save = NULL;
    int rc = 0;
    *flags = 0;
    for (char *w = strtok_r(copy, "|,", &save); w && rc == 0; w = strtok_r(NULL, "|,", &save)) {
        size_t i = 0;
        while (i < sizeof(names) / sizeof(names[0]) && strcmp(names[i].name, w)) i++;
        if (i == sizeof(names) / sizeof(names[0]))
            rc = -1;
        else
            *flags |= names[i].flag;
    }
    free(copy);
    return rc;
}

static int build_clone3(ARGS) {
    (void)abi;
    unsigned long flags;
    if (namespace_flags(argc, argv, &flags) < 0) return -1;
    // struct clone_args, first version (64 bytes), the same for every ABI. No stack: the
    // child runs on a copy of this one, like fork, and _exits at once.
    uint64_t *ca = probe_low(64);
    ca[0] = flags;
    ca[4] = SIGCHLD; // exit_signal
    a[0] = (unsigned long)(uintptr_t)ca;
    a[1] = 64;
    return 0;
}

static int build_clone(ARGS) {
    (void)abi;
    unsigned long flags;
    if (namespace_flags(argc, argv, &flags) < 0) return -1;
    a[0] = flags | SIGCHLD; // flags come first in every ABI's clone
    return 0;
}

static int build_bpf(ARGS) {
    UNUSED;
    // BPF_PROG_LOAD with an attribute size above a page: E2BIG before the kernel reads the
    // attribute or checks privilege.
    a[0] = 5;
    a[1] = low_zeroes(128);
    a[2] = 1UL << 30;
    return 0;
}

static int build_perf_event_open(ARGS) {
    UNUSED;
    a[0] = 0; // no attribute to copy
    a[1] = 0;
    a[2] = (unsigned long)-1;
    a[3] = (unsigned long)-1;
    a[4] = BAD_FLAGS;
    return 0;
}

static int build_keyctl(ARGS) {
    UNUSED;
    a[0] = 6; // KEYCTL_DESCRIBE
    a[1] = NO_SUCH_KEY;
    a[2] = low_zeroes(64);
    a[3] = 64;
    return 0;
}

static int build_add_key(ARGS) {
    UNUSED;
    a[0] = low_string("appex-probe-no-such-key-type");
    a[1] = low_string("appex-probe");
    a[4] = NO_SUCH_KEY; // the destination keyring
    return 0;
}

static int build_reboot(ARGS) {
    UNUSED;
    a[0] = 0x1234; // not LINUX_REBOOT_MAGIC1
    a[1] = 0x5678; // not a MAGIC2
    return 0;
}

static int build_kexec_load(ARGS) {
    UNUSED;
    // An undefined flag bit (0x8000) and more segments than KEXEC_SEGMENT_MAX: EINVAL. With
    // zero segments and valid flags the call would unload the loaded kernel instead.
    a[1] = 1000;
    a[3] = 0x8000;
    return 0;
}

static int build_init_module(ARGS) {
    UNUSED;
    // 64 zero bytes are no ELF image.
    a[0] = low_zeroes(64);
    a[1] = 64;
    a[2] = low_string("");
    return 0;
}

static int build_swapon(ARGS) {
    UNUSED;
    a[0] = low_string(MISSING_PATH);
    a[1] = BAD_FLAGS;
    return 0;
}

static int build_clock_settime(ARGS) {
    UNUSED;
    a[0] = NO_SUCH_CLOCK;
    a[1] = 0; // no time to set, should the clock exist
    return 0;
}

static int build_iopl(ARGS) {
    UNUSED;
    a[0] = 4; // levels are 0 to 3
    return 0;
}

static int build_userfaultfd(ARGS) {
    UNUSED;
    // UFFD_USER_MODE_ONLY (so the unprivileged-use sysctl does not answer first) plus an
    // undefined bit.
    a[0] = 1 | 2;
    return 0;
}

static int build_io_uring_setup(ARGS) {
    UNUSED;
    a[0] = 1;
    a[1] = 0; // no parameters to copy
    return 0;
}

static int build_open_by_handle_at(ARGS) {
    UNUSED;
    a[0] = (unsigned long)-1; // no mount fd
    a[1] = 0; // no handle
    a[2] = O_RDONLY;
    return 0;
}

static int build_personality(ARGS) {
    (void)abi;
    // ADDR_NO_RANDOMIZE by default; changes only this process (and what it would execute).
    a[0] = 0x0040000;
    if (argc > 1 && probe_number(argv[1], &a[0]) < 0) return -1;
    return 0;
}

static int build_kill(ARGS) {
    (void)abi;
    // Signal 0: the permission and existence check, nothing delivered. pid 0 and negative
    // pids (groups, everything) are refused.
    a[0] = NO_SUCH_PID;
    if (argc > 1 && probe_number(argv[1], &a[0]) < 0) return -1;
    if ((long)a[0] <= 0 || a[0] > 0x7fffffffUL) return -1;
    a[1] = 0;
    return 0;
}

static int build_getpid(ARGS) {
    UNUSED;
    (void)a;
    return 0;
}

static int socket_args(unsigned long a[6], int family, int type, int protocol) {
    a[0] = (unsigned long)family;
    a[1] = (unsigned long)(type | SOCK_CLOEXEC);
    a[2] = (unsigned long)protocol;
    return 0;
}
// Created and closed, never bound or connected.
static int build_socket_netlink(ARGS) {
    UNUSED;
    return socket_args(a, AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */);
}
static int build_socket_packet(ARGS) {
    UNUSED;
    return socket_args(a, AF_PACKET, SOCK_RAW, 0 /* no protocol: receives nothing */);
}
static int build_socket_inet(ARGS) {
    UNUSED;
    return socket_args(a, AF_INET, SOCK_STREAM, 0);
}
static int build_socket_inet6(ARGS) {
    UNUSED;
    return socket_args(a, AF_INET6, SOCK_STREAM, 0);
}
static int build_socket_unix(ARGS) {
    UNUSED;
    return socket_args(a, AF_UNIX, SOCK_STREAM, 0);
}
// AF_VSOCK (40): never connected; it ignores network namespaces, so only the filter stops it.
static int build_socket_vsock(ARGS) {
    UNUSED;
    return socket_args(a, 40, SOCK_STREAM, 0);
}
// An undefined flag: EINVAL before any memory is set aside.
static int build_memfd_secret(ARGS) {
    UNUSED;
    a[0] = 0x80000000UL;
    return 0;
}

enum { RETURNS_FD = 1, FORKS = 2 };

static const struct call {
    const char *action, *alias, *syscall, *usage;
    int max_args;
    int (*build)(ARGS);
    int flags;
} calls[] = {
    {"ptrace", "ptrace-nonexistent", "ptrace", "", 0, build_ptrace, 0},
    {"process_vm_readv", NULL, "process_vm_readv", "", 0, build_process_vm_readv, 0},
    {"mount", "mount-nonexistent", "mount", "", 0, build_mount, 0},
    {"umount2", NULL, "umount2", "", 0, build_umount2, 0},
    {"pivot_root", NULL, "pivot_root", "", 0, build_pivot_root, 0},
    {"fsopen", NULL, "fsopen", "", 0, build_fsopen, RETURNS_FD},
    {"open_tree", NULL, "open_tree", "", 0, build_open_tree, RETURNS_FD},
    {"move_mount", NULL, "move_mount", "", 0, build_move_mount, 0},
    {"unshare", NULL, "unshare", "", 0, build_unshare, 0},
    {"setns", NULL, "setns", "", 0, build_setns, 0},
    {"clone3", NULL, "clone3", "[FLAGS]", 1, build_clone3, FORKS},
    {"clone", NULL, "clone", "[FLAGS]", 1, build_clone, FORKS},
    {"bpf", NULL, "bpf", "", 0, build_bpf, RETURNS_FD},
    {"perf_event_open", NULL, "perf_event_open", "", 0, build_perf_event_open, RETURNS_FD},
    {"keyctl", "keyctl-invalid", "keyctl", "", 0, build_keyctl, 0},
    {"add_key", NULL, "add_key", "", 0, build_add_key, 0},
    {"reboot", "reboot-badmagic", "reboot", "", 0, build_reboot, 0},
    {"kexec_load", NULL, "kexec_load", "", 0, build_kexec_load, 0},
    {"init_module", NULL, "init_module", "", 0, build_init_module, 0},
    {"swapon", NULL, "swapon", "", 0, build_swapon, 0},
    {"clock_settime", NULL, "clock_settime", "", 0, build_clock_settime, 0},
    {"iopl", NULL, "iopl", "", 0, build_iopl, 0},
    {"userfaultfd", NULL, "userfaultfd", "", 0, build_userfaultfd, RETURNS_FD},
    {"io_uring_setup", NULL, "io_uring_setup", "", 0, build_io_uring_setup, RETURNS_FD},
    {"open_by_handle_at", NULL, "open_by_handle_at", "", 0, build_open_by_handle_at, RETURNS_FD},
    {"personality", NULL, "personality", "[VALUE]", 1, build_personality, 0},
    {"socket-netlink", NULL, "socket", "", 0, build_socket_netlink, RETURNS_FD},
    {"socket-packet", NULL, "socket", "", 0, build_socket_packet, RETURNS_FD},
    {"socket-inet", NULL, "socket", "", 0, build_socket_inet, RETURNS_FD},
    {"socket-inet6", NULL, "socket", "", 0, build_socket_inet6, RETURNS_FD},
    {"socket-unix", NULL, "socket", "", 0, build_socket_unix, RETURNS_FD},
    {"socket-vsock", NULL, "socket", "", 0, build_socket_vsock, RETURNS_FD},
    {"memfd_secret", NULL, "memfd_secret", "", 0, build_memfd_secret, RETURNS_FD},
    {"kill", NULL, "kill", "[PID]", 1, build_kill, 0},
    {"getpid", NULL, "getpid", "", 0, build_getpid, 0},
};
enum { NCALLS = sizeof(calls) / sizeof(calls[0]) };

static const struct call *find(const char *name) {
    for (int i = 0; i < NCALLS; i++) {
        if (!strcmp(calls[i].action, name) || (calls[i].alias && !strcmp(calls[i].alias, name))) return &calls[i];
    }
    return NULL;
}

int probe_is_call(const char *name) { return find(name) || !strcmp(name, "syscall") || !strcmp(name, "syscall-high"); }

// The answer to a call that returned r: a process-creating call's child leaves at once and
// the parent reaps it; a descriptor is closed.
static int answer(long r, int flags) {
    if (r < 0) return probe_result(-1);
    if (flags & FORKS) {
        if (r == 0) _exit(0);
        int status = 0;
        if (waitpid((pid_t)r, &status, 0) < 0) return probe_result(-1);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return probe_fail(0, NULL);
        return probe_ok(NULL);
    }
    if (flags & RETURNS_FD) close((int)r);
    return probe_ok(NULL);
}

static int invoke(enum probe_abi abi, long nr, const unsigned long a[6], int flags) {
    int unavailable = 0;
    long r = probe_invoke(abi, nr, a, &unavailable);
    if (unavailable) return probe_unsupported("%s ABI: the kernel refused to enter it", probe_abi_name(abi));
    return answer(r, flags);
}

// `syscall NAME|NR [ARG...]`: a raw call; the caller chooses arguments the kernel rejects.
static int raw(enum probe_abi abi, int argc, char **argv) {
    if (argc < 2 || argc > 8) return probe_usage();
    unsigned long n;
    long nr = probe_number(argv[1], &n) == 0 ? (long)n : probe_syscall_number(abi, argv[1]);
    if (nr < 0) return probe_unsupported("%s has no number in the %s ABI", argv[1], probe_abi_name(abi));
    unsigned long a[6] = {0};
    for (int i = 2; i < argc; i++) {
        if (probe_syscall_argument(argv[i], &a[i - 2]) < 0) return probe_usage();
    }
    // A child of a raw fork-like call must not print too.
    int unavailable = 0;
    pid_t self = getpid();
    long r = probe_invoke(abi, nr, a, &unavailable);
    if (getpid() != self) _exit(0);
    if (unavailable) return probe_unsupported("%s ABI: the kernel refused to enter it", probe_abi_name(abi));
    return probe_result(r);
}

int probe_call_main(enum probe_abi abi, int argc, char **argv) {
    if (!probe_abi_available(abi)) return probe_unsupported("%s ABI on this architecture", probe_abi_name(abi));
    if (!strcmp(argv[0], "syscall")) return raw(abi, argc, argv);
    if (!strcmp(argv[0], "syscall-high")) {
        // Far above any assigned number: ENOSYS from the kernel, or from a filter first.
        unsigned long a[6] = {0};
        return invoke(abi, 1000, a, 0);
    }
    const struct call *c = find(argv[0]);
    if (!c || argc - 1 > c->max_args) return probe_usage();
    long nr = probe_syscall_number(abi, c->syscall);
    if (nr < 0) return probe_unsupported("%s has no number in the %s ABI", c->syscall, probe_abi_name(abi));
    unsigned long a[6] = {0};
    if (c->build(abi, argc, argv, a) < 0) return probe_usage();
    return invoke(abi, nr, a, c->flags);
}

void probe_calls_usage(void) {
    fputs("calls (each may be prefixed by i386 or x32 to use that ABI):\n", stderr);
    int column = 1;
    fputs(" ", stderr);
    probe_usage_word("syscall", "NAME|NR [ARG...] (ARG: number, null, str:TEXT, buf:N)", 0, &column);
    probe_usage_word("syscall-high", "", 0, &column);
    for (int i = 0; i < NCALLS; i++) probe_usage_word(calls[i].action, calls[i].usage, i + 1 == NCALLS, &column);
}
