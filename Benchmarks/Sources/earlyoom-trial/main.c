/* earlyoom-trial: one trial of the jetsam benchmark's earlyoom side (jetsam-bench).
 *
 *   earlyoom-trial latency EARLYOOM LOG PLAN CROSS_KIB DELAY_US TIMEOUT_MS
 *   earlyoom-trial crossing EARLYOOM LOG PLAN CROSS_KIB BYSTANDERS HOLD_MIB DELAY_US SETTLE_MS
 *
 * latency (latency.c): threshold crossed → victim dead. A bloater (jetsam-bloater) grows by
 * PLAN (grow.h: the same code as the probe extension's `grow` action, a symlink), logging its
 * steps to the file LOG, each with MemAvailable read right after it. earlyoom prefers it.
 * crossing (crossing.c): kills per crossing and survivors. BYSTANDERS idle processes hold
 * HOLD_MIB each, then a foreground grows by PLAN (logged the same way) and holds; earlyoom
 * chooses its victims as it does by default.
 *
 * Both: earlyoom's SIGTERM line is MemAvailable − CROSS_KIB, read just before it starts, so
 * that the growth crosses the line after CROSS_KIB if nothing else on the machine moves (the
 * logged MemAvailable tells when it really did). The growth starts DELAY_US after earlyoom
 * has printed its configuration (the harness picks the delay at random, so the crossing falls
 * anywhere in earlyoom's polling period).
 *
 * earlyoom can kill nothing else: the trial runs in its own PID namespace with its own /proc
 * (earlyoom sees and can signal only the trial's processes and this init, the namespace's
 * PID 1, which it never picks), and every process of the load has oom_score_adj 1000. The init
 * SIGKILLs earlyoom before the trial ends. When the init exits, or the process that started it
 * dies, the kernel kills whatever is left in the namespace.
 *
 * Prints earlyoom's output as `earlyoom: <line>`, then one line:
 *   latency   available_kib=A threshold_kib=M go_ns=T death_ns=T signal=S outcome=killed|timeout
 *   crossing  available_kib=A threshold_kib=M lowest_kib=L last_kib=L go_ns=T crossed_ns=T|0
 *             [NAME=killed:SIGNAL@DEATH_NS]... survivors=N
 * (MemAvailable's lowest and last readings while earlyoom ran, every 10 ms; crossed_ns the
 * first reading at or under the line; NAME jetsam-fg or jetsam-idle-N, for each process that
 * died, in the order of the load).
 * Exit status 0 when that line was printed, 1 on a failure (said on stderr). Needs root. */
#define _GNU_SOURCE
#include "trial.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void run_init(char **argv, int outer_alive) {
    /* Dies with the process that started it, taking the namespace with it. (getppid says 0
     * here, the parent being outside the namespace: whether it already died shows as the end
     * of the pipe only it writes to.) */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) exit(1);
    struct pollfd alive = {outer_alive, POLLIN, 0};
    if (poll(&alive, 1, 0) != 0) exit(1);
    close(outer_alive);
    /* This namespace's own /proc, so that earlyoom sees only the processes in it. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("making / private");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mounting /proc");
    if (strcmp(argv[1], "latency") == 0)
        latency_trial(argv + 2);
    else
        crossing_trial(argv + 2);
}

int main(int argc, char **argv) {
    int latency = argc == 8 && strcmp(argv[1], "latency") == 0;
    int crossing = argc == 10 && strcmp(argv[1], "crossing") == 0;
    if (!latency && !crossing) {
        fprintf(stderr,
                "usage: earlyoom-trial latency EARLYOOM LOG PLAN CROSS_KIB DELAY_US TIMEOUT_MS\n"
                "       earlyoom-trial crossing EARLYOOM LOG PLAN CROSS_KIB BYSTANDERS HOLD_MIB DELAY_US SETTLE_MS\n");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A plain process: whatever its starter ignored or blocked (jetsam-bench ignores SIGINT and
     * SIGTERM to handle them itself, and exec keeps ignored signals ignored) must not spare the
     * load earlyoom's SIGTERM, nor reach earlyoom. */
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int alive[2];
    if (pipe2(alive, O_CLOEXEC)) die("pipe");
    if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) die("unshare (needs root)");
    pid_t init = fork();
    if (init < 0) die("fork");
    if (init == 0) {
        close(alive[1]);
        run_init(argv, alive[0]);
    }
    close(alive[0]);
    int status;
    while (waitpid(init, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
