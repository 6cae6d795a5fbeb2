// The Appex launcher: the only code that runs between clone and execve.
//
// The parent (Swift) computes everything before the clone into a data-only
// `appex_plan`: argv/envp, the mount operations with their final paths, the
// pre-opened cgroup fds, the BPF program, the uid/gid and the rlimits.
// `appex_launch` creates the child with CLONE_VM|CLONE_VFORK (cheap from a big
// multithreaded parent) on a stack of its own plus new mount/pid/ipc/uts
// namespaces and CLONE_PIDFD. The child applies the plan with raw,
// async-signal-safe system calls and execs; a failing step is written as
// (step, index, errno) into the shared result and the child `_exit`s.
// See Docs/launch-sequence.md for the order of the steps and why.
#ifndef APPEX_LAUNCHER_H
#define APPEX_LAUNCHER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define APPEX_LAUNCHER_ABI_VERSION 4

// The child moves its end of the notify socketpair to this fd number before it
// loads the filter; the compiled filter never denies sendmsg(2) on it, so the
// child can always hand the seccomp listener to the parent (see SeccompCompiler).
#define APPEX_NOTIFY_SOCK_FD 1021

// The extension's end of its socketpair with appexd (Docs/protocol.md): the one
// descriptor beyond stdio that survives execve, at this number, not close-on-exec.
#define APPEX_CHANNEL_FD 3

// Mount operations, applied in order inside the child's mount namespace,
// before pivot_root. Targets are absolute paths under `plan.root`.
enum appex_op_kind {
    APPEX_OP_MKDIR = 1, // mkdir(target, mode); EEXIST is fine
    APPEX_OP_MKFILE = 2, // create an empty file (a bind target for a file)
    APPEX_OP_SYMLINK = 3, // symlink(source, target)
    APPEX_OP_BIND = 4, // bind source on target, then remount with `flags`
    APPEX_OP_TMPFS = 5, // tmpfs on target; `source` is the option string
    APPEX_OP_PROC = 6, // procfs of the child's pid namespace on target; `source`: options or NULL
    APPEX_OP_MKNOD = 7, // mknod(target, mode, dev): device nodes on a /dev tmpfs
    APPEX_OP_READONLY_TREE = 8, // mount_setattr(target, AT_RECURSIVE): `flags` on the whole tree
    APPEX_OP_ATTACH_TREE = 9, // move_mount(fd, "", target): a tree the parent cloned with open_tree,
    // so what is mounted is what the parent opened, not what a path names now
};

// Remount flags for APPEX_OP_BIND / mount flags for TMPFS and PROC (subset of MS_*).
#define APPEX_MNT_RDONLY 0x1u
#define APPEX_MNT_NOSUID 0x2u
#define APPEX_MNT_NODEV 0x4u
#define APPEX_MNT_NOEXEC 0x8u

typedef struct appex_mount_op {
    int32_t kind;
    uint32_t flags;
    uint32_t mode;
    uint64_t dev;
    const char *source;
    const char *target;
    int32_t fd; // APPEX_OP_ATTACH_TREE: the open_tree descriptor
} appex_mount_op;

typedef struct appex_rlimit {
    int32_t resource;
    uint64_t soft;
    uint64_t hard;
} appex_rlimit;

// Steps, in the order the child runs them. A failure reports one of these.
enum appex_step {
    APPEX_STEP_NONE = 0,
    APPEX_STEP_CLONE = 1, // parent: clone/clone3 failed
    APPEX_STEP_CGROUP = 2, // write "0" to v1 tasks fd [index]
    APPEX_STEP_MOUNT_PRIVATE = 3, // make / MS_PRIVATE|MS_REC
    APPEX_STEP_ROOT_TMPFS = 4, // tmpfs on plan.root
    APPEX_STEP_MOUNT_OP = 5, // mount operation [index]
    APPEX_STEP_PIVOT_ROOT = 6,
    APPEX_STEP_DETACH_OLD_ROOT = 7,
    APPEX_STEP_ROOT_READONLY = 8, // remount the new / read-only
    APPEX_STEP_HOSTNAME = 9,
    APPEX_STEP_STDIO = 10, // dup2 of stdin/stdout/stderr [index]
    APPEX_STEP_FDS = 11, // close_range / notify socket placement
    APPEX_STEP_RLIMIT = 12, // setrlimit [index]
    APPEX_STEP_SETGROUPS = 13,
    APPEX_STEP_SETGID = 14,
    APPEX_STEP_SETUID = 15,
    APPEX_STEP_CHDIR = 16,
    APPEX_STEP_NO_NEW_PRIVS = 17,
    APPEX_STEP_SECCOMP = 18,
    APPEX_STEP_SEND_LISTENER = 19, // sendmsg(SCM_RIGHTS) of the listener fd
    APPEX_STEP_EXEC = 20,
    APPEX_STEP_RECV_LISTENER = 21, // parent: recvmsg of the listener fd
    APPEX_STEP_NETNS = 22, // setns into the prepared network namespace (netns_fd)
    APPEX_STEP_ENTER_PIDNS = 23, // parent: setns into the sandbox's pid namespace
    APPEX_STEP_ENTER_SANDBOX = 24, // setns(pidfd) into the sandbox's other namespaces
    APPEX_STEP_CAPABILITIES = 25, // drop the bounding and ambient capability sets
};

// Namespace selection (plan.namespaces).
#define APPEX_NS_MOUNT 0x1u
#define APPEX_NS_PID 0x2u
#define APPEX_NS_IPC 0x4u
#define APPEX_NS_UTS 0x8u
#define APPEX_NS_NET 0x10u

typedef struct appex_plan {
    // What to run (the path is resolved inside the new root).
    const char *path;
    char *const *argv;
    char *const *envp;

    uint32_t namespaces;
    const char *hostname; // NULL: keep

    // Filesystem view. root == NULL: no view (the child keeps the host's).
    const char *root; // an existing empty host directory for the tmpfs root
    const appex_mount_op *ops;
    int32_t n_ops;
    const char *workdir; // chdir after the uid switch (inside the view)

    // cgroup: v1 pre-opened `tasks` fds (the child writes "0"), or a v2
    // directory fd for clone3(CLONE_INTO_CGROUP). -1 / 0 entries: none.
    const int32_t *cgroup_procs_fds;
    int32_t n_cgroup_procs_fds;
    int32_t cgroup_dir_fd;

    // stdio for the child; -1 keeps the parent's.
    int32_t stdin_fd, stdout_fd, stderr_fd;

    const appex_rlimit *rlimits;
    int32_t n_rlimits;

    // Credentials; set_ids == 0 keeps root (tests of the launcher itself).
    int32_t set_ids;
    uint32_t uid, gid;
    const uint32_t *groups; // supplementary groups (app-group directories)
    int32_t n_groups;

    // Seccomp: the exported BPF program (struct sock_filter[]), loaded last.
    const void *bpf;
    uint32_t bpf_len; // number of instructions
    int32_t seccomp_notify; // request a listener and pass it back
    int32_t no_new_privs;

    uint32_t stack_size; // child stack; 0: default

    // Enter an existing sandbox instead of making namespaces and a view: the pidfd of
    // its init (appex-sandbox-init). The parent switches its pid_ns_for_children to the
    // init's pid namespace around the clone (so the child is created in it, and is still
    // the parent's child to wait for); the child then setns(pidfd) into the `namespaces`
    // the sandbox owns (mount, ipc, uts, net; pid is ignored). `root`, `ops` and
    // `hostname` are ignored: the sandbox has its view and name already.
    // -1: none.
    int32_t enter_pidfd;
    // Exec this descriptor (execveat AT_EMPTY_PATH) instead of `path`: how the sandbox
    // init is started inside a view that need not contain it. -1: execve(path).
    int32_t exec_fd;
    // The extension's socket to appexd, placed at APPEX_CHANNEL_FD across execve. -1: none.
    int32_t channel_fd;
    // With APPEX_NS_NET and no enter_pidfd: a network namespace made beforehand
    // (appex_netns_create) that the child enters instead of cloning a new one. -1: none.
    int32_t netns_fd;
} appex_plan;

typedef struct appex_result {
    int32_t pid;
    int32_t pidfd;
    int32_t listener_fd; // seccomp notify listener in the parent, or -1
    int32_t step; // enum appex_step on failure, 0 on success
    int32_t index; // which op/rlimit/fd the step was about
    int32_t error; // errno of the failing step
    int32_t exit_status; // wait status of a child that failed before exec
    // CLOCK_MONOTONIC nanoseconds.
    uint64_t t_clone; // parent, right before clone
    uint64_t t_child; // child, first instruction
    uint64_t t_ready; // child, sandbox complete, right before execve
    uint64_t t_exec; // parent, vfork released (child exec'd)
} appex_result;

// Launches `plan`. Returns 0 when the child exec'd (pid, pidfd, listener_fd
// set), -1 when a step failed (step, index, error set; the child is reaped).
int appex_launch(const appex_plan *plan, appex_result *result);

// Reserves up to `count` low-numbered descriptors (copies of /dev/null) as slots that later
// launches stage their child's descriptors in, so the child gets a small descriptor table
// instead of a copy of the caller's (descriptor_slots.c). Call early, while descriptor
// numbers are still low (appexd does, first thing). Returns how many were reserved; later
// calls reserve nothing more. Without it, launches copy the whole table as before.
int appex_reserve_descriptor_slots(int32_t count);

int appex_launcher_abi_version(void);

// Step name for messages ("mount", "pivot_root", ...).
const char *appex_step_name(int32_t step);

#ifdef __cplusplus
}
#endif

#endif
