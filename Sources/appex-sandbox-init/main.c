// appex-sandbox-init: pid 1 of one extension's sandbox.
//
// Appex builds an extension's namespaces (mount with its filesystem view, pid, ipc, uts,
// network) once, with this tiny process inside as their holder, the way a Kubernetes pod's
// pause container holds the pod's namespaces. Each launch of the extension then *enters*
// them (setns) instead of building them again: no per-launch mounts, no per-launch
// namespace teardown. See Docs/launch-sequence.md.
//
// Its whole job:
//   - reap: orphans of the extension are re-parented to pid 1 of its pid namespace;
//   - hold: stay alive while the supervisor keeps the other end of fd 0 (a pipe) open.
//     EOF on fd 0 (the supervisor closed it or died) ends it, and with pid 1 gone the kernel
//     kills every process left in the namespace.
// It runs as an unprivileged uid with no_new_privs (set by the launcher before the exec),
// is invisible to the extension (/proc is mounted hidepid=invisible) and opens nothing.
//
// No C library: it is exec'd inside the view by descriptor (execveat), where no dynamic
// loader or library may be visible, so it must be static; and a static C library's start-up
// (TLS, IRELATIVE relocations, /proc/self/exe, getrandom, brk) costs more than this whole
// program and makes the file hundreds of times larger. So it starts at _start, makes six kinds of system call
// itself (syscall.h) and takes every number and structure from the kernel's own headers.
// The file is a few KB; Docs/launch-sequence.md has the measurements.
//
// `appex-sandbox-init --version` prints Appex's version (version.h) and exits, as every
// installed executable does; appexd starts it with no argument, so a launch pays one compare.
#include <asm/signal.h>
#include <asm/unistd.h>
#include <linux/errno.h>
#include <linux/poll.h>
#include <linux/signalfd.h>
#include <linux/wait.h>

#include "syscall.h"
#include "version.h"

static int run(void) {
    // The kernel's signal set is one word here, not the C library's 1024 bits.
    unsigned long chld = 1UL << (SIGCHLD - 1);
    if (sys5(__NR_rt_sigprocmask, SIG_BLOCK, (long)&chld, 0, sizeof chld, 0) < 0) return 1;
    long sfd = sys5(__NR_signalfd4, -1, (long)&chld, sizeof chld, SFD_CLOEXEC, 0);
    if (sfd < 0) return 1;

    struct pollfd fds[2];
    fds[0].fd = 0;
    fds[0].events = POLLIN;
    fds[1].fd = (int)sfd;
    fds[1].events = POLLIN;
    for (;;) {
        // ppoll, not poll: arm64 has only the former. No timeout, no signal mask.
        long ready = sys5(__NR_ppoll, (long)fds, 2, 0, 0, 0);
        if (ready == -EINTR) continue;
        if (ready < 0) return 1;
        if (fds[0].revents) {
            char buf[64];
            long n = sys5(__NR_read, 0, (long)buf, sizeof buf, 0, 0);
            if (n == 0 || (n < 0 && n != -EINTR && n != -EAGAIN)) return 0;
        }
        if (fds[1].revents) {
            struct signalfd_siginfo si;
            (void)sys5(__NR_read, sfd, (long)&si, sizeof si, 0, 0);
            while (sys5(__NR_wait4, -1, 0, WNOHANG, 0, 0) > 0) {}
        }
    }
}

static int same(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

static long print_version(void) {
    static const char line[] = APPEX_VERSION "\n";
    return sys5(__NR_write, 1, (long)line, sizeof line - 1, 0, 0) == (long)(sizeof line - 1) ? 0 : 1;
}

// Called from _start with the stack the kernel built: argc, then argv[0..argc-1], NULL.
__attribute__((noreturn, used)) void start(long *stack) {
    long argc = stack[0];
    char **argv = (char **)(stack + 1);
    long status = argc == 2 && same(argv[1], "--version") ? print_version() : run();
    for (;;) sys5(__NR_exit_group, status, 0, 0, 0, 0);
}

// The entry point: hands the initial stack pointer (where argc is) to start, on a stack
// aligned as the calling convention wants, with no return address to go back to.
#if defined(__x86_64__)
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call start\n"
        "  hlt\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  mov x29, #0\n"
        "  mov x30, #0\n"
        "  mov x0, sp\n"
        "  and sp, x0, #-16\n"
        "  bl start\n"
        "  brk #0\n");
#else
#error "appex-sandbox-init: no _start for this architecture (main.c, syscall.h)"
#endif
