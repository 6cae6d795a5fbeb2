// The Appex launcher. Everything in `child_main` runs in a CLONE_VM|CLONE_VFORK
// child that shares the parent's memory (and the parent thread's TLS), so it
// must only make raw system calls: no malloc, no stdio, no locks, and no glibc
// wrappers with process-wide side effects. In particular glibc's setuid() and
// setgroups() broadcast to every thread of the *parent* (they think the child
// is one of them), so credentials change with syscall(2) directly.
// Order and rationale: Docs/launch-sequence.md.
#define _GNU_SOURCE
#include "appex_launcher.h"
#include "descriptor_slots.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int appex_launcher_abi_version(void) { return APPEX_LAUNCHER_ABI_VERSION; }

const char *appex_step_name(int32_t step) {
    switch (step) {
    case APPEX_STEP_NONE: return "none";
    case APPEX_STEP_CLONE: return "clone";
    case APPEX_STEP_CGROUP: return "join cgroup";
    case APPEX_STEP_MOUNT_PRIVATE: return "make mounts private";
    case APPEX_STEP_ROOT_TMPFS: return "mount root tmpfs";
    case APPEX_STEP_MOUNT_OP: return "mount";
    case APPEX_STEP_PIVOT_ROOT: return "pivot_root";
    case APPEX_STEP_DETACH_OLD_ROOT: return "detach old root";
    case APPEX_STEP_ROOT_READONLY: return "remount root read-only";
    case APPEX_STEP_HOSTNAME: return "sethostname";
    case APPEX_STEP_STDIO: return "redirect stdio";
    case APPEX_STEP_FDS: return "close inherited fds";
    case APPEX_STEP_RLIMIT: return "setrlimit";
    case APPEX_STEP_SETGROUPS: return "setgroups";
    case APPEX_STEP_SETGID: return "setgid";
    case APPEX_STEP_SETUID: return "setuid";
    case APPEX_STEP_CHDIR: return "chdir";
    case APPEX_STEP_NO_NEW_PRIVS: return "no_new_privs";
    case APPEX_STEP_SECCOMP: return "load seccomp filter";
    case APPEX_STEP_SEND_LISTENER: return "send seccomp listener";
    case APPEX_STEP_EXEC: return "execve";
    case APPEX_STEP_RECV_LISTENER: return "receive seccomp listener";
    case APPEX_STEP_ENTER_PIDNS: return "enter sandbox pid namespace";
    case APPEX_STEP_ENTER_SANDBOX: return "enter sandbox namespaces";
    case APPEX_STEP_NETNS: return "enter prepared network namespace";
    case APPEX_STEP_CAPABILITIES: return "drop capability bounding set";
    default: return "unknown step";
    }
}

static uint64_t now_ns(void) {
    struct timespec ts;
    // vDSO call: no syscall, no lock; safe in the child.
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct child_ctx {
    const appex_plan *plan;
    appex_result *result;
    int notify_sock; // child's end of the socketpair, or -1
    int32_t unshare_below; // > 0: cloned with CLONE_FILES; keep only descriptors below this
    const cpu_set_t *cpus; // non-NULL: the child starts pinned to the parent's CPU; restore this
} child_ctx;

// The child starts on the CPU its parent is leaving. With CLONE_VFORK the parent sleeps as
// soon as the clone returns, but the scheduler places a new task while the parent still runs:
// on a 2-CPU machine it often picks the other CPU, and when something runs there the child
// waits in its queue (measured 2.5-6 ms, 3 launches in 8, with a busy neighbour) while the
// parent's CPU goes idle. Pinning the parent thread to its current CPU for the clone makes the
// child inherit that single CPU; the child restores the saved mask first thing, so what
// execs may run anywhere again, and the parent restores it when the clone returns.
typedef struct cpu_handoff {
    cpu_set_t saved;
    int pinned;
} cpu_handoff;

static void cpu_handoff_begin(cpu_handoff *h) {
    h->pinned = 0;
    if (sched_getaffinity(0, sizeof(h->saved), &h->saved) != 0 || CPU_COUNT(&h->saved) < 2) return;
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &h->saved)) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    h->pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
}

static void cpu_handoff_end(cpu_handoff *h) {
    if (h->pinned) (void)sched_setaffinity(0, sizeof(h->saved), &h->saved);
}

// Kernel layout of struct sigaction for rt_sigaction(2).
struct k_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

static unsigned long ms_flags(uint32_t f) {
    unsigned long m = 0;
    if (f & APPEX_MNT_RDONLY) m |= MS_RDONLY;
    if (f & APPEX_MNT_NOSUID) m |= MS_NOSUID;
    if (f & APPEX_MNT_NODEV) m |= MS_NODEV;
    if (f & APPEX_MNT_NOEXEC) m |= MS_NOEXEC;
    return m;
}

__attribute__((noreturn)) static void fail(child_ctx *c, int32_t step, int32_t index, int err) {
    c->result->index = index;
    c->result->error = err;
    // The step last: the parent treats step != 0 as "failed".
    __atomic_store_n(&c->result->step, step, __ATOMIC_RELEASE);
    syscall(SYS_exit_group, 127);
    for (;;) {}
}

static int apply_op(const appex_mount_op *op) {
    long r;
    switch (op->kind) {
    case APPEX_OP_MKDIR:
        r = syscall(SYS_mkdirat, AT_FDCWD, op->target, op->mode);
        if (r < 0 && errno != EEXIST) return -1;
        return 0;
    case APPEX_OP_MKFILE: {
        r = syscall(SYS_openat, AT_FDCWD, op->target, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, op->mode);
        if (r < 0) return errno == EEXIST ? 0 : -1;
        syscall(SYS_close, (int)r);
        return 0;
    }
    case APPEX_OP_SYMLINK:
        r = syscall(SYS_symlinkat, op->source, AT_FDCWD, op->target);
        return (r < 0 && errno != EEXIST) ? -1 : 0;
    case APPEX_OP_BIND:
        // Not MS_REC: submounts under a listed path stay invisible.
        if (syscall(SYS_mount, op->source, op->target, NULL, MS_BIND, NULL) < 0) return -1;
        if (op->flags == 0) return 0;
        return (int)syscall(SYS_mount, NULL, op->target, NULL, MS_REMOUNT | MS_BIND | ms_flags(op->flags), NULL);
    case APPEX_OP_TMPFS: return (int)syscall(SYS_mount, "tmpfs", op->target, "tmpfs", ms_flags(op->flags), op->source);
    case APPEX_OP_PROC: return (int)syscall(SYS_mount, "proc", op->target, "proc", ms_flags(op->flags), op->source);
    case APPEX_OP_MKNOD:
        r = syscall(SYS_mknodat, AT_FDCWD, op->target, op->mode, op->dev);
        return (r < 0 && errno != EEXIST) ? -1 : 0;
    case APPEX_OP_READONLY_TREE: {
        // One call instead of a remount per bind: everything mounted so far under target.
        struct mount_attr attr;
        memset(&attr, 0, sizeof(attr));
        if (op->flags & APPEX_MNT_RDONLY) attr.attr_set |= MOUNT_ATTR_RDONLY;
        if (op->flags & APPEX_MNT_NOSUID) attr.attr_set |= MOUNT_ATTR_NOSUID;
        if (op->flags & APPEX_MNT_NODEV) attr.attr_set |= MOUNT_ATTR_NODEV;
        if (op->flags & APPEX_MNT_NOEXEC) attr.attr_set |= MOUNT_ATTR_NOEXEC;
        return (int)syscall(SYS_mount_setattr, AT_FDCWD, op->target, AT_RECURSIVE, &attr, sizeof(attr));
    }
    case APPEX_OP_ATTACH_TREE:
        return (int)syscall(SYS_move_mount, op->fd, "", AT_FDCWD, op->target, MOVE_MOUNT_F_EMPTY_PATH);
    default: errno = EINVAL; return -1;
    }
}

static int child_main(void *arg) {
    child_ctx *c = arg;
    const appex_plan *p = c->plan;
    c->result->t_child = now_ns();
    // Back to the parent's whole CPU set (it was pinned for the clone: cpu_handoff).
    if (c->cpus) syscall(SYS_sched_setaffinity, 0, sizeof(cpu_set_t), c->cpus);

    // 0. Cloned with CLONE_FILES (descriptor slots): a private descriptor table before
    //    anything else, holding only the descriptors below the slots' bound; until this
    //    the child must not touch a descriptor, the table is still the parent's.
    if (c->unshare_below > 0 && syscall(SYS_close_range, (unsigned int)c->unshare_below, ~0U, CLOSE_RANGE_UNSHARE) < 0)
        fail(c, APPEX_STEP_FDS, 5, errno);

    // Handlers are the parent's code on shared memory: reset them all first.
    // Signals stay blocked (the parent blocked them) until right before execve.
    struct k_sigaction dfl = {0};
    dfl.handler = SIG_DFL;
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        syscall(SYS_rt_sigaction, sig, &dfl, NULL, 8);
    }

    // 1. cgroup first, so everything the child does from here on is charged and counted.
    //    v1: "0" into each hierarchy's `tasks` moves this thread, the only one: the kernel
    //    skips the threadgroup rwsem (and its RCU grace period) that `cgroup.procs` takes.
    for (int32_t i = 0; i < p->n_cgroup_procs_fds; i++) {
        if (syscall(SYS_write, p->cgroup_procs_fds[i], "0", 1) != 1) fail(c, APPEX_STEP_CGROUP, i, errno);
    }

    // 2. A new sandbox whose network namespace was made beforehand (the clone left out
    //    CLONE_NEWNET) enters that one.
    if (p->enter_pidfd < 0 && p->netns_fd >= 0 && (p->namespaces & APPEX_NS_NET) &&
        syscall(SYS_setns, p->netns_fd, CLONE_NEWNET) < 0)
        fail(c, APPEX_STEP_NETNS, 0, errno);
    //    An existing sandbox: its mount (with the view), ipc, uts and network namespaces in
    //    one call. setns(CLONE_NEWNS) also moves root and cwd to the view's root.
    if (p->enter_pidfd >= 0) {
        int nsflags = 0;
        if (p->namespaces & APPEX_NS_MOUNT) nsflags |= CLONE_NEWNS;
        if (p->namespaces & APPEX_NS_IPC) nsflags |= CLONE_NEWIPC;
        if (p->namespaces & APPEX_NS_UTS) nsflags |= CLONE_NEWUTS;
        if (p->namespaces & APPEX_NS_NET) nsflags |= CLONE_NEWNET;
        if (nsflags && syscall(SYS_setns, p->enter_pidfd, nsflags) < 0) fail(c, APPEX_STEP_ENTER_SANDBOX, 0, errno);
    }

    // UTS name (new UTS namespace only; an entered sandbox has its own already).
    if (p->hostname && (p->namespaces & APPEX_NS_UTS) && p->enter_pidfd < 0) {
        if (syscall(SYS_sethostname, p->hostname, strlen(p->hostname)) < 0) fail(c, APPEX_STEP_HOSTNAME, 0, errno);
    }

    // 3. Filesystem view: private propagation, tmpfs root, ops, pivot_root (an entered
    //    sandbox has its view already).
    if (p->root && p->enter_pidfd < 0) {
        // Modes in the plan are exact: no umask while building the view.
        long old_umask = syscall(SYS_umask, 0);
        if (syscall(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
            fail(c, APPEX_STEP_MOUNT_PRIVATE, 0, errno);
        if (syscall(SYS_mount, "tmpfs", p->root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096") < 0)
            fail(c, APPEX_STEP_ROOT_TMPFS, 0, errno);
        for (int32_t i = 0; i < p->n_ops; i++) {
            if (apply_op(&p->ops[i]) < 0) fail(c, APPEX_STEP_MOUNT_OP, i, errno);
        }
        if (syscall(SYS_chdir, p->root) < 0) fail(c, APPEX_STEP_PIVOT_ROOT, 0, errno);
        // pivot_root(".", "."): the old root ends up stacked on "." and is detached next.
        if (syscall(SYS_pivot_root, ".", ".") < 0) fail(c, APPEX_STEP_PIVOT_ROOT, 1, errno);
        if (syscall(SYS_umount2, ".", MNT_DETACH) < 0) fail(c, APPEX_STEP_DETACH_OLD_ROOT, 0, errno);
        if (syscall(SYS_chdir, "/") < 0) fail(c, APPEX_STEP_DETACH_OLD_ROOT, 1, errno);
        if (syscall(SYS_mount, NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
            fail(c, APPEX_STEP_ROOT_READONLY, 0, errno);
        syscall(SYS_umask, old_umask);
    }

    // 4. stdio and the channel to appexd at fd 3; nothing else survives execve (the notify
    //    socket is close-on-exec itself).
    const int32_t stdio[3] = {p->stdin_fd, p->stdout_fd, p->stderr_fd};
    for (int i = 0; i < 3; i++) {
        if (stdio[i] < 0) continue;
        if (stdio[i] == i) {
            if (syscall(SYS_fcntl, i, F_SETFD, 0) < 0) fail(c, APPEX_STEP_STDIO, i, errno);
        } else if (syscall(SYS_dup3, stdio[i], i, 0) < 0) {
            fail(c, APPEX_STEP_STDIO, i, errno);
        }
    }
    if (c->notify_sock >= 0) {
        if (syscall(SYS_dup3, c->notify_sock, APPEX_NOTIFY_SOCK_FD, O_CLOEXEC) < 0) fail(c, APPEX_STEP_FDS, 1, errno);
    }
    // The channel goes to fd 3. Whatever sits there now (the executable's fd, say) is moved
    // out of the way first, so the dup3 below cannot close something still needed.
    int32_t exec_fd = p->exec_fd;
    if (p->channel_fd >= 0 && p->channel_fd != APPEX_CHANNEL_FD) {
        if (exec_fd == APPEX_CHANNEL_FD) {
            long moved = syscall(SYS_fcntl, exec_fd, F_DUPFD_CLOEXEC, APPEX_CHANNEL_FD + 1);
            if (moved < 0) fail(c, APPEX_STEP_FDS, 2, errno);
            exec_fd = (int32_t)moved;
        }
        if (syscall(SYS_dup3, p->channel_fd, APPEX_CHANNEL_FD, 0) < 0) fail(c, APPEX_STEP_FDS, 3, errno);
    }
    if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) fail(c, APPEX_STEP_FDS, 0, errno);
    if (p->channel_fd >= 0 && syscall(SYS_fcntl, APPEX_CHANNEL_FD, F_SETFD, 0) < 0) fail(c, APPEX_STEP_FDS, 4, errno);

    // 5. rlimits while still privileged (lowering hard limits needs no privilege,
    //    raising them above the current hard limit does).
    for (int32_t i = 0; i < p->n_rlimits; i++) {
        struct rlimit64 {
            uint64_t cur, max;
        } rl = {p->rlimits[i].soft, p->rlimits[i].hard};
        if (syscall(SYS_prlimit64, 0, p->rlimits[i].resource, &rl, NULL) < 0) fail(c, APPEX_STEP_RLIMIT, i, errno);
    }

    // 6. Credentials. First empty the bounding and ambient sets (this needs CAP_SETPCAP, so
    //    while still root): the uid switch clears the effective and permitted sets, and with an
    //    empty bounding set nothing exec'd later (a setuid or file-capability binary, were
    //    no_new_privs ever lifted) can gain a capability back. Then groups, gid, uid.
    if (p->set_ids) {
        if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
            fail(c, APPEX_STEP_CAPABILITIES, 1, errno);
        // Capabilities this kernel does not know answer EINVAL: stop there.
        for (int cap = 0; cap < 64; cap++) {
            if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                if (errno == EINVAL) break;
                fail(c, APPEX_STEP_CAPABILITIES, 0, errno);
            }
        }
        if (syscall(SYS_setgroups, p->n_groups, p->n_groups ? p->groups : NULL) < 0)
            fail(c, APPEX_STEP_SETGROUPS, 0, errno);
        if (syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0) fail(c, APPEX_STEP_SETGID, 0, errno);
        if (syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0) fail(c, APPEX_STEP_SETUID, 0, errno);
    }
    if (p->workdir && syscall(SYS_chdir, p->workdir) < 0) fail(c, APPEX_STEP_CHDIR, 0, errno);

    // 7. No new privileges: setuid binaries and file caps are inert from here on.
    if (p->no_new_privs || p->bpf) {
        if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail(c, APPEX_STEP_NO_NEW_PRIVS, 0, errno);
    }

    // 8. seccomp last: every step above may use any syscall.
    if (p->bpf && p->bpf_len > 0) {
        struct sock_fprog prog = {.len = (unsigned short)p->bpf_len, .filter = (struct sock_filter *)p->bpf};
        unsigned long flags = p->seccomp_notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
        long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
        if (fd < 0) fail(c, APPEX_STEP_SECCOMP, 0, errno);
        if (p->seccomp_notify) {
            // The listener is close-on-exec; the parent receives its copy.
            char byte = 'L';
            struct iovec iov = {.iov_base = &byte, .iov_len = 1};
            union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
            } u;
            memset(&u, 0, sizeof(u));
            struct msghdr msg = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
            struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            int lfd = (int)fd;
            memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
            if (syscall(SYS_sendmsg, APPEX_NOTIFY_SOCK_FD, &msg, MSG_NOSIGNAL) < 0)
                fail(c, APPEX_STEP_SEND_LISTENER, 0, errno);
        }
    }

    // 9. Unblock signals and exec.
    uint64_t empty = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, NULL, 8);
    c->result->t_ready = now_ns();
    // ETXTBSY: some process holds the executable open for writing. Often that is only a fork
    // elsewhere in this process that inherited a descriptor a thread had open for writing
    // (an install copying a bundle) and has not reached its own exec yet: that passes within
    // milliseconds, so try again for up to ~100 ms before failing.
    for (int attempt = 0;; attempt++) {
        if (exec_fd >= 0)
            syscall(SYS_execveat, exec_fd, "", p->argv, p->envp, AT_EMPTY_PATH);
        else
            syscall(SYS_execve, p->path, p->argv, p->envp);
        if (errno != ETXTBSY || attempt >= 50) break;
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 2000000};
        syscall(SYS_nanosleep, &pause, NULL);
    }
    fail(c, APPEX_STEP_EXEC, 0, errno);
}

#if defined(__x86_64__)
// clone3 with a caller-provided stack: the child returns from the syscall on
// the new, empty stack, so it cannot return into C. This trampoline calls
// fn(arg) there and exits with its result. rdi=args rsi=size rdx=fn rcx=arg.
long appex_clone3_trampoline(struct clone_args *args, size_t size, int (*fn)(void *), void *arg);
__asm__(".text\n"
        ".globl appex_clone3_trampoline\n"
        ".hidden appex_clone3_trampoline\n"
        ".type appex_clone3_trampoline,@function\n"
        "appex_clone3_trampoline:\n"
        "  push %r12\n"
        "  push %r13\n"
        "  mov %rdx, %r12\n"
        "  mov %rcx, %r13\n"
        "  mov $435, %eax\n" // __NR_clone3
        "  syscall\n"
        "  test %rax, %rax\n"
        "  jz 1f\n"
        "  pop %r13\n"
        "  pop %r12\n"
        "  ret\n"
        "1:\n"
        "  xor %ebp, %ebp\n"
        "  mov %r13, %rdi\n"
        "  call *%r12\n"
        "  mov %eax, %edi\n"
        "  mov $231, %eax\n" // __NR_exit_group
        "  syscall\n"
        "  hlt\n"
        ".size appex_clone3_trampoline, .-appex_clone3_trampoline\n");
#endif

static int recv_listener(int sock) {
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    ssize_t n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n <= 0) return -1;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
        errno = EPROTO;
        return -1;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(cm), sizeof(int));
    return fd;
}

// This process's own pid namespace, to return to after cloning into a sandbox's.
// Opened once; a race between two first callers only costs a spare open.
static int self_pidns_fd(void) {
    static int cached = -1;
    int fd = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (fd >= 0) return fd;
    fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int expected = -1;
    if (!__atomic_compare_exchange_n(&cached, &expected, fd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        close(fd);
        fd = expected;
    }
    return fd;
}

int appex_launch(const appex_plan *plan, appex_result *result) {
    memset(result, 0, sizeof(*result));
    result->pid = -1;
    result->pidfd = -1;
    result->listener_fd = -1;

    int sv[2] = {-1, -1};
    if (plan->seccomp_notify) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
            result->step = APPEX_STEP_CLONE;
            result->index = 1;
            result->error = errno;
            return -1;
        }
    }

    size_t stack_size = plan->stack_size ? plan->stack_size : 256 * 1024;
    void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) {
        result->step = APPEX_STEP_CLONE;
        result->index = 2;
        result->error = errno;
        if (sv[0] >= 0) {
            close(sv[0]);
            close(sv[1]);
        }
        return -1;
    }

    // Stage every descriptor the child uses below the slots' bound; when that cannot be
    // done (no slots reserved, none free), the child gets a copy of the whole table.
    appex_plan staged = *plan;
    appex_slot_set slots = {.limit = appex_descriptor_slots_limit(), .n = 0};
    int32_t procs[8];
    appex_mount_op *ops = NULL;
    int32_t notify = sv[1];
    int use_slots = slots.limit > 0 && plan->n_cgroup_procs_fds <= 8;
    if (use_slots && plan->n_ops > 0) {
        ops = malloc(sizeof(appex_mount_op) * (size_t)plan->n_ops);
        if (!ops) use_slots = 0;
    }
    if (use_slots) {
        int bad = 0;
        for (int32_t i = 0; i < plan->n_cgroup_procs_fds; i++)
            bad |= appex_slot_stage(&slots, plan->cgroup_procs_fds[i], &procs[i]);
        staged.cgroup_procs_fds = procs;
        for (int32_t i = 0; i < plan->n_ops; i++) {
            ops[i] = plan->ops[i];
            if (ops[i].kind == APPEX_OP_ATTACH_TREE) bad |= appex_slot_stage(&slots, plan->ops[i].fd, &ops[i].fd);
        }
        if (plan->n_ops > 0) staged.ops = ops;
        bad |= appex_slot_stage(&slots, plan->stdin_fd, &staged.stdin_fd);
        bad |= appex_slot_stage(&slots, plan->stdout_fd, &staged.stdout_fd);
        bad |= appex_slot_stage(&slots, plan->stderr_fd, &staged.stderr_fd);
        bad |= appex_slot_stage(&slots, plan->enter_pidfd, &staged.enter_pidfd);
        bad |= appex_slot_stage(&slots, plan->exec_fd, &staged.exec_fd);
        bad |= appex_slot_stage(&slots, plan->channel_fd, &staged.channel_fd);
        bad |= appex_slot_stage(&slots, plan->netns_fd, &staged.netns_fd);
        bad |= appex_slot_stage(&slots, sv[1], &notify);
        if (bad) {
            appex_slot_release(&slots);
            use_slots = 0;
            staged = *plan;
            notify = sv[1];
        }
    }
    child_ctx ctx = {.plan = use_slots ? &staged : plan,
                     .result = result,
                     .notify_sock = notify,
                     .unshare_below = use_slots ? slots.limit : 0};
    unsigned long files = use_slots ? CLONE_FILES : 0;

    unsigned long ns = 0;
    if (plan->namespaces & APPEX_NS_MOUNT) ns |= CLONE_NEWNS;
    if (plan->namespaces & APPEX_NS_PID) ns |= CLONE_NEWPID;
    if (plan->namespaces & APPEX_NS_IPC) ns |= CLONE_NEWIPC;
    if (plan->namespaces & APPEX_NS_UTS) ns |= CLONE_NEWUTS;
    // A prepared network namespace is entered by the child rather than made by the clone.
    if ((plan->namespaces & APPEX_NS_NET) && plan->netns_fd < 0) ns |= CLONE_NEWNET;
    if (plan->enter_pidfd >= 0) {
        // The namespaces exist: the child enters them (pid here, the rest in the child).
        ns = 0;
        int self = self_pidns_fd();
        if (self < 0 || setns(plan->enter_pidfd, CLONE_NEWPID) < 0) {
            result->step = APPEX_STEP_ENTER_PIDNS;
            result->error = errno;
            appex_slot_release(&slots);
            free(ops);
            munmap(stack, stack_size);
            if (sv[0] >= 0) {
                close(sv[0]);
                close(sv[1]);
            }
            return -1;
        }
    }

    // No handler of ours may run in the child before it resets them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    cpu_handoff handoff;
    cpu_handoff_begin(&handoff);
    ctx.cpus = handoff.pinned ? &handoff.saved : NULL;

    int pidfd = -1;
    long pid;
    result->t_clone = now_ns();
#if defined(__x86_64__)
    if (plan->cgroup_dir_fd >= 0) {
        struct clone_args args;
        memset(&args, 0, sizeof(args));
        args.flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP | files | ns;
        args.pidfd = (uint64_t)(uintptr_t)&pidfd;
        args.exit_signal = SIGCHLD;
        args.stack = (uint64_t)(uintptr_t)stack;
        args.stack_size = stack_size;
        args.cgroup = (uint64_t)plan->cgroup_dir_fd;
        pid = appex_clone3_trampoline(&args, sizeof(args), child_main, &ctx);
        if (pid < 0) {
            errno = (int)-pid;
            pid = -1;
        }
    } else
#endif
    {
        if (plan->cgroup_dir_fd >= 0) {
            pid = -1;
            errno = ENOSYS;
        } else {
            pid = clone(child_main, (char *)stack + stack_size,
                        (int)(CLONE_VM | CLONE_VFORK | CLONE_PIDFD | files | ns | SIGCHLD), &ctx, &pidfd);
        }
    }
    int clone_errno = errno;
    result->t_exec = now_ns();
    cpu_handoff_end(&handoff);
    if (plan->enter_pidfd >= 0) {
        // Back to our own pid namespace for this thread's later children. It cannot fail
        // (our active namespace is always allowed); if it did, this thread would create
        // every later process inside the extension's sandbox: stop instead.
        if (setns(self_pidns_fd(), CLONE_NEWPID) < 0) abort();
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    munmap(stack, stack_size);
    // The child exec'd or died: its table is its own (or gone); the slots are free again.
    appex_slot_release(&slots);
    free(ops);

    if (pid < 0) {
        result->step = APPEX_STEP_CLONE;
        result->error = clone_errno;
        if (sv[0] >= 0) {
            close(sv[0]);
            close(sv[1]);
        }
        return -1;
    }
    result->pid = (int32_t)pid;
    result->pidfd = pidfd;

    int32_t step = __atomic_load_n(&result->step, __ATOMIC_ACQUIRE);
    if (step == APPEX_STEP_NONE && result->t_ready == 0) {
        // Died before reaching execve without reporting (e.g. SIGKILL by the OOM killer).
        step = APPEX_STEP_EXEC;
        result->step = step;
        result->index = -1;
        result->error = EINTR;
    }
    if (step != APPEX_STEP_NONE) {
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR) {}
        result->exit_status = si.si_status;
        close(pidfd);
        result->pidfd = -1;
        if (sv[0] >= 0) {
            close(sv[0]);
            close(sv[1]);
        }
        return -1;
    }

    if (plan->seccomp_notify) {
        int lfd = recv_listener(sv[0]);
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        if (lfd < 0) {
            // The child runs under a notify filter nobody answers: kill it.
            syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
            siginfo_t si;
            while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR) {}
            close(pidfd);
            result->pidfd = -1;
            result->step = APPEX_STEP_RECV_LISTENER;
            result->error = e;
            return -1;
        }
        result->listener_fd = lfd;
    }
    return 0;
}
