// appex-probe: tries one thing and prints a machine-readable result, so sandbox
// tests can assert what the kernel allowed. Every attempt is harmless when the
// sandbox is NOT in effect (the tests run as root on real machines): mounts
// target paths that do not exist, ptrace targets a pid beyond PID_MAX_LIMIT,
// reboot gets a wrong magic number, keyctl an invalid serial, raw syscalls get
// invalid arguments (NULL pointers, bad fds, unknown operations), and a namespace
// made by clone is left at once by a child that exits. seccomp answers before the
// kernel looks at the arguments, so EPERM tells "contained" from "uncontained"
// (ENOENT/ESRCH/EINVAL/ENOKEY/EFAULT/EBADF).
//
// Output: one line, "ok[ detail]" or "errno=NAME".
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *errname(int e) {
    switch (e) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case EINTR: return "EINTR";
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EINVAL: return "EINVAL";
    case ENOSPC: return "ENOSPC";
    case EROFS: return "EROFS";
    case ENOSYS: return "ENOSYS";
    case ENOKEY: return "ENOKEY";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case E2BIG: return "E2BIG";
    case ECHILD: return "ECHILD";
    case ENODEV: return "ENODEV";
    case ENOTTY: return "ENOTTY";
    case ERANGE: return "ERANGE";
    case EOVERFLOW: return "EOVERFLOW";
    case ENOTSOCK: return "ENOTSOCK";
    default: return "EOTHER";
    }
}

static int result(long r) {
    if (r < 0) {
        printf("errno=%s\n", errname(errno));
        return 0;
    }
    printf("ok\n");
    return 0;
}


// The parent's side of a process-creating call: a child (which _exited at once) is
// reaped and the call reported; a failure is reported by errno.
static int reap(long pid) {
    if (pid < 0) return result(-1);
    int status = 0;
    if (waitpid((pid_t)pid, &status, 0) < 0) return result(-1);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { printf("errno=EOTHER\n"); return 0; }
    return result(0);
}

// struct clone_args, first version (CLONE_ARGS_SIZE_VER0 = 64 bytes).
struct probe_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void *thread_main(void *arg) { return arg; }

static unsigned long number(const char *s) { return strtoul(s, NULL, 0); }

static int usage(void) {
    fprintf(stderr,
            "usage: appex-probe COMMAND [ARGS]\n"
            "  ptrace-nonexistent | mount-nonexistent | reboot-badmagic | keyctl-invalid\n"
            "  unshare | bpf | uname | getuid | pid | hostname | setrlimit-raise\n"
            "  read PATH | write PATH [TEXT] | exists PATH | ls PATH | truncate-stdout\n"
            "  alloc MIB | fork-bomb N | sleep SECONDS | env NAME | cgroup2\n"
            "  clone-newuser | clone3-newuser | fork | thread | personality VALUE\n"
            "  syscall NR [ARG...] | syscall-high\n");
    return 2;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) return usage();
    const char *cmd = argv[1];
    const char *arg = argc > 2 ? argv[2] : NULL;

    if (!strcmp(cmd, "ptrace-nonexistent")) {
        // Beyond PID_MAX_LIMIT (2^22): no such process can exist.
        return result(ptrace(PTRACE_ATTACH, (pid_t)((1 << 22) + 4242), NULL, NULL));
    }
    if (!strcmp(cmd, "mount-nonexistent")) {
        return result(mount("tmpfs", "/nonexistent/appex-probe", "tmpfs", 0, NULL));
    }
    if (!strcmp(cmd, "reboot-badmagic")) {
        // Wrong magic numbers: EINVAL when the call reaches the kernel's checks.
        return result(syscall(SYS_reboot, 0x1234, 0x5678, 0, NULL));
    }
    if (!strcmp(cmd, "keyctl-invalid")) {
        // KEYCTL_DESCRIBE (6) of a serial that does not exist.
        char buf[64];
        return result(syscall(SYS_keyctl, 6, 0x7ffffff0, buf, sizeof(buf), 0));
    }
    if (!strcmp(cmd, "unshare")) {
        return result(unshare(CLONE_NEWUSER));
    }
    if (!strcmp(cmd, "bpf")) {
        // BPF_PROG_LOAD with a zeroed attribute: EINVAL when reached.
        char attr[128];
        memset(attr, 0, sizeof(attr));
        return result(syscall(SYS_bpf, 5, attr, sizeof(attr)));
    }
    if (!strcmp(cmd, "uname")) {
        struct utsname u;
        return result(uname(&u));
    }
    if (!strcmp(cmd, "getuid")) {
        printf("ok uid=%u gid=%u groups=%d\n", getuid(), getgid(), getgroups(0, NULL));
        return 0;
    }
    if (!strcmp(cmd, "pid")) {
        printf("ok pid=%d\n", getpid());
        return 0;
    }
    if (!strcmp(cmd, "hostname")) {
        char h[256] = {0};
        gethostname(h, sizeof(h) - 1);
        printf("ok %s\n", h);
        return 0;
    }
    if (!strcmp(cmd, "env") && arg) {
        const char *v = getenv(arg);
        printf("ok %s\n", v ? v : "");
        return 0;
    }
    if (!strcmp(cmd, "setrlimit-raise")) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return result(-1);
        if (rl.rlim_max == RLIM_INFINITY) { printf("errno=EOTHER\n"); return 0; }
        rl.rlim_max += 1;
        rl.rlim_cur = rl.rlim_max;
        return result(setrlimit(RLIMIT_NOFILE, &rl));
    }
    if (!strcmp(cmd, "read") && arg) {
        int fd = open(arg, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return result(-1);
        char buf[256];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n < 0) return result(-1);
        buf[n] = 0;
        char *nl = strchr(buf, '\n');
        if (nl) *nl = 0;
        printf("ok %s\n", buf);
        return 0;
    }
    if (!strcmp(cmd, "write") && arg) {
        const char *text = argc > 3 ? argv[3] : "appex-probe";
        int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) return result(-1);
        ssize_t n = write(fd, text, strlen(text));
        close(fd);
        return result(n < 0 ? -1 : 0);
    }
    if (!strcmp(cmd, "truncate-stdout")) {
        // What an extension that wants its log gone tries first.
        return result(ftruncate(1, 0));
    }
    if (!strcmp(cmd, "exists") && arg) {
        struct stat st;
        return result(lstat(arg, &st));
    }
    if (!strcmp(cmd, "ls") && arg) {
        DIR *d = opendir(arg);
        if (!d) return result(-1);
        printf("ok");
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            printf(" %s", e->d_name);
        }
        printf("\n");
        closedir(d);
        return 0;
    }
    if (!strcmp(cmd, "alloc") && arg) {
        long mib = atol(arg);
        for (long i = 0; i < mib; i++) {
            char *p = malloc(1 << 20);
            if (!p) return result(-1);
            memset(p, 0xa5, 1 << 20);
        }
        printf("ok allocated=%ld\n", mib);
        return 0;
    }
    if (!strcmp(cmd, "fork-bomb") && arg) {
        // Bounded: N children that pause, then all are killed and reaped.
        long n = atol(arg), forked = 0;
        int err = 0;
        pid_t *pids = calloc((size_t)n + 1, sizeof(pid_t));
        for (long i = 0; i < n; i++) {
            pid_t p = fork();
            if (p == 0) { pause(); _exit(0); }
            if (p < 0) { err = errno; break; }
            pids[forked++] = p;
        }
        for (long i = 0; i < forked; i++) kill(pids[i], SIGKILL);
        for (long i = 0; i < forked; i++) waitpid(pids[i], NULL, 0);
        if (err) printf("errno=%s forked=%ld\n", errname(err), forked);
        else printf("ok forked=%ld\n", forked);
        return 0;
    }
    if (!strcmp(cmd, "cgroup2")) {
        // The unified-hierarchy line of /proc/self/cgroup.
        FILE *f = fopen("/proc/self/cgroup", "r");
        if (!f) return result(-1);
        char line[512];
        while (fgets(line, sizeof(line), f)) {
            if (!strncmp(line, "0::", 3)) {
                line[strcspn(line, "\n")] = 0;
                printf("ok %s\n", line + 3);
                fclose(f);
                return 0;
            }
        }
        fclose(f);
        printf("errno=ENOENT\n");
        return 0;
    }
    if (!strcmp(cmd, "clone-newuser")) {
        // No stack given: the child runs on a copy of this one, like fork, and leaves.
        long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
        if (pid == 0) _exit(0);
        return reap(pid);
    }
    if (!strcmp(cmd, "clone3-newuser")) {
        struct probe_clone_args ca;
        memset(&ca, 0, sizeof(ca));
        ca.flags = CLONE_NEWUSER;
        ca.exit_signal = SIGCHLD;
        long pid = syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid == 0) _exit(0);
        return reap(pid);
    }
    if (!strcmp(cmd, "fork")) {
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        return reap(pid);
    }
    if (!strcmp(cmd, "thread")) {
        // glibc tries clone3 first and falls back to clone on ENOSYS.
        pthread_t t;
        int err = pthread_create(&t, NULL, thread_main, NULL);
        if (err) { errno = err; return result(-1); }
        pthread_join(t, NULL);
        return result(0);
    }
    if (!strcmp(cmd, "personality") && arg) {
        // Changes only this short-lived process (and what it would execute).
        return result(syscall(SYS_personality, number(arg)));
    }
    if (!strcmp(cmd, "syscall") && arg) {
        // A raw call by number; the caller passes arguments the kernel rejects.
        unsigned long a[6] = {0};
        for (int i = 0; i < 6 && i + 3 < argc; i++) a[i] = number(argv[i + 3]);
        return result(syscall((long)number(arg), a[0], a[1], a[2], a[3], a[4], a[5]));
    }
    if (!strcmp(cmd, "syscall-high")) {
        // Far above any assigned number: ENOSYS from the kernel, or from the filter first.
        return result(syscall(1000, 0, 0, 0, 0, 0, 0));
    }
    if (!strcmp(cmd, "sleep") && arg) {
        sleep((unsigned)atoi(arg));
        printf("ok\n");
        return 0;
    }
    return usage();
}
