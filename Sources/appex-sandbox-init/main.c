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
// Statically linked: it is exec'd inside the view by descriptor (execveat), where no
// dynamic loader or library may be visible.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0) return 1;
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC);
    if (sfd < 0) return 1;

    struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (fds[0].revents) {
            char buf[64];
            ssize_t n = read(0, buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return 0;
        }
        if (fds[1].revents) {
            struct signalfd_siginfo si;
            (void)!read(sfd, &si, sizeof si);
            while (waitpid(-1, NULL, WNOHANG) > 0) {}
        }
    }
}
