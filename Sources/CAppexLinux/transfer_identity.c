#define _GNU_SOURCE
#include "appex_transfer_identity.h"
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int appex_transfer_drop_identity(uid_t uid, gid_t gid, const char **step) {
    if (uid == 0) {
        *step = "refuse uid 0";
        errno = EPERM;
        return -1;
    }
    gid_t groups[1] = {gid};
    if (setgroups(1, groups) < 0) {
        *step = "setgroups";
        return -1;
    }
    if (setresgid(gid, gid, gid) < 0) {
        *step = "setresgid";
        return -1;
    }
    if (setresuid(uid, uid, uid) < 0) {
        *step = "setresuid";
        return -1;
    }
    // Without SECBIT_KEEP_CAPS, leaving uid 0 cleared the permitted set; the bounding set
    // and ambient caps no longer matter to a process that cannot exec a setuid file.
    if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        *step = "no_new_privs";
        return -1;
    }
    // Proof rather than trust: going back must fail.
    if (setresuid(0, 0, 0) == 0) {
        *step = "setresuid(0) succeeded after the drop";
        errno = EPERM;
        return -1;
    }
    return 0;
}

int appex_transfer_die_with_parent(pid_t parent) {
    if (syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) return -1;
    if (getppid() != parent) {
        errno = ESRCH;
        return -1;
    }
    return 0;
}
