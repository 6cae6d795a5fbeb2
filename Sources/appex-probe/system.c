// What the extension sees of itself and the machine: identity, names, limits, its cgroup.
#include "probe.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

static int uname_action(int argc, char **argv) {
    (void)argc, (void)argv;
    struct utsname u;
    return probe_result(uname(&u));
}

static int getuid_action(int argc, char **argv) {
    (void)argc, (void)argv;
    return probe_ok("uid=%u gid=%u groups=%d", getuid(), getgid(), getgroups(0, NULL));
}

static int ids(int argc, char **argv) {
    (void)argc, (void)argv;
    // The effective ids too: what a setuid executable would have raised.
    return probe_ok("uid=%u euid=%u gid=%u egid=%u", getuid(), geteuid(), getgid(), getegid());
}

static int pid(int argc, char **argv) {
    (void)argc, (void)argv;
    return probe_ok("pid=%d", getpid());
}

static int hostname(int argc, char **argv) {
    (void)argc, (void)argv;
    char h[256] = {0};
    gethostname(h, sizeof(h) - 1);
    return probe_ok("%s", h);
}

static int env(int argc, char **argv) {
    (void)argc;
    const char *v = getenv(argv[1]);
    return probe_ok("%s", v ? v : "");
}

static int setrlimit_raise(int argc, char **argv) {
    (void)argc, (void)argv;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return probe_result(-1);
    if (rl.rlim_max == RLIM_INFINITY) return probe_fail(0, NULL);
    rl.rlim_max += 1;
    rl.rlim_cur = rl.rlim_max;
    return probe_result(setrlimit(RLIMIT_NOFILE, &rl));
}

static int cgroup2(int argc, char **argv) {
    (void)argc, (void)argv;
    // The unified-hierarchy line of /proc/self/cgroup.
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return probe_result(-1);
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "0::", 3)) {
            line[strcspn(line, "\n")] = 0;
            fclose(f);
            return probe_ok("%s", line + 3);
        }
    }
    fclose(f);
    return probe_fail(ENOENT, NULL);
}

static int cpus(int argc, char **argv) {
    (void)argc, (void)argv;
    // The CPUs this process may run on (Cpus_allowed_list of /proc/self/status).
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return probe_result(-1);
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "Cpus_allowed_list:", 18)) {
            line[strcspn(line, "\n")] = 0;
            fclose(f);
            return probe_ok("%s", line + 18 + strspn(line + 18, " \t"));
        }
    }
    fclose(f);
    return probe_fail(ENOENT, NULL);
}

const struct probe_action probe_system_actions[] = {
    {"uname", 0, 0, uname_action, ""},
    {"getuid", 0, 0, getuid_action, ""},
    {"ids", 0, 0, ids, ""},
    {"pid", 0, 0, pid, ""},
    {"hostname", 0, 0, hostname, ""},
    {"env", 1, 1, env, "NAME"},
    {"setrlimit-raise", 0, 0, setrlimit_raise, ""},
    {"cgroup2", 0, 0, cgroup2, ""},
    {"cpus", 0, 0, cpus, ""},
    {0, 0, 0, 0, 0},
};
