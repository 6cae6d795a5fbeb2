// File actions: what the extension can see, read and write, and the ways out of its view
// people try (a `..` chain, a symlink planted in its data directory). Reads outside the
// probe's own files report sizes, never contents, so a failed sandbox leaks nothing to logs.
#include "probe.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Opens path (following links) and reports what is there: "ok directory", or "ok bytes=N"
// for the bytes read, at most 1 MiB (a device such as /dev/zero never ends).
static int measure(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return probe_result(-1);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return probe_ok("directory");
    }
    char buf[4096];
    long total = 0;
    ssize_t n;
    while (total < (1 << 20) && (n = read(fd, buf, sizeof(buf))) > 0) total += n;
    int err = n < 0 ? errno : 0;
    close(fd);
    if (err) return probe_fail(err, NULL);
    return probe_ok("bytes=%ld", total);
}

// The extension's data directory: HOME inside the sandbox (/var/appex/data).
static const char *data_directory(void) {
    const char *home = getenv("HOME");
    return home && *home ? home : ".";
}

static int read_first_line(int argc, char **argv) {
    (void)argc;
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) return probe_result(-1);
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0) return probe_result(-1);
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return probe_ok("%s", buf);
}

static int write_file(int argc, char **argv) {
    const char *text = argc > 2 ? argv[2] : "appex-probe";
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return probe_result(-1);
    ssize_t n = write(fd, text, strlen(text));
    int err = errno;
    close(fd);
    if (n < 0) return probe_fail(err, NULL);
    return probe_ok(NULL);
}

static int truncate_stdout(int argc, char **argv) {
    (void)argc, (void)argv;
    // What an extension that wants its log gone tries first.
    return probe_result(ftruncate(1, 0));
}

static int exists(int argc, char **argv) {
    (void)argc;
    struct stat st;
    return probe_result(lstat(argv[1], &st));
}

static const char *file_type(mode_t m) {
    if (S_ISREG(m)) return "file";
    if (S_ISDIR(m)) return "directory";
    if (S_ISLNK(m)) return "symlink";
    if (S_ISCHR(m)) return "char";
    if (S_ISBLK(m)) return "block";
    if (S_ISFIFO(m)) return "fifo";
    if (S_ISSOCK(m)) return "socket";
    return "other";
}

static int stat_path(int argc, char **argv) {
    (void)argc;
    struct stat st;
    if (stat(argv[1], &st) < 0) return probe_result(-1);
    return probe_ok("type=%s mode=%04o uid=%u gid=%u size=%lld", file_type(st.st_mode), st.st_mode & 07777, st.st_uid,
                    st.st_gid, (long long)st.st_size);
}

static int list(int argc, char **argv) {
    (void)argc;
    DIR *d = opendir(argv[1]);
    if (!d) return probe_result(-1);
    fputs("ok", stdout);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        printf(" %s", e->d_name);
    }
    putchar('\n');
    closedir(d);
    return 0;
}

static int symlink_and_follow(int argc, char **argv) {
    (void)argc;
    // The link stays, so a test can check what the supervisor does with a planted link.
    if (symlink(argv[1], argv[2]) < 0) return probe_fail(errno, "at=symlink");
    return measure(argv[2]);
}

static int open_fds(int argc, char **argv) {
    (void)argc;
    unsigned long n;
    if (probe_number(argv[1], &n) < 0 || n > 1000000) return probe_usage();
    int *fds = calloc(n + 1, sizeof(int));
    unsigned long opened = 0;
    int err = 0;
    while (opened < n) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            err = errno;
            break;
        }
        fds[opened++] = fd;
    }
    for (unsigned long i = 0; i < opened; i++) close(fds[i]);
    free(fds);
    if (err) return probe_fail(err, "opened=%lu", opened);
    return probe_ok("opened=%lu", opened);
}

static int write_bundle(int argc, char **argv) {
    (void)argc, (void)argv;
    // Next to the probe's own executable, which is in its bundle; removed again if made.
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n < 0) return probe_fail(errno, "at=readlink");
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return probe_fail(ENOENT, "at=readlink");
    *slash = 0;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/.appex-probe-write-%d", exe, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return probe_result(-1);
    close(fd);
    unlink(path);
    return probe_ok(NULL);
}

static int proc_environ(int argc, char **argv) {
    unsigned long pid = 1;
    if (argc > 1 && (probe_number(argv[1], &pid) < 0 || pid == 0 || pid > 0x7fffffff)) return probe_usage();
    char path[64];
    snprintf(path, sizeof(path), "/proc/%lu/environ", pid);
    return measure(path);
}

static int escape_dotdot(int argc, char **argv) {
    // Enough `..` to climb from any directory to the root, then the host path.
    const char *from = argc > 2 ? argv[2] : data_directory();
    const char *target = argv[1];
    char path[PATH_MAX];
    int len = snprintf(path, sizeof(path), "%s", from);
    for (int i = 0; i < 32 && len < (int)sizeof(path); i++)
        len += snprintf(path + len, sizeof(path) - (size_t)len, "/..");
    if (len < (int)sizeof(path))
        snprintf(path + len, sizeof(path) - (size_t)len, "%s%s", *target == '/' ? "" : "/", target);
    return measure(path);
}

static int escape_symlink(int argc, char **argv) {
    (void)argc;
    // Planted in the data directory, followed, removed again.
    char link[PATH_MAX];
    snprintf(link, sizeof(link), "%s/.appex-probe-escape-%d", data_directory(), (int)getpid());
    if (symlink(argv[1], link) < 0) return probe_fail(errno, "at=symlink");
    int rc = measure(link);
    unlink(link);
    return rc;
}

const struct probe_action probe_file_actions[] = {
    {"read", 1, 1, read_first_line, "PATH"},
    {"write", 1, 2, write_file, "PATH [TEXT]"},
    {"exists", 1, 1, exists, "PATH"},
    {"stat", 1, 1, stat_path, "PATH"},
    {"ls", 1, 1, list, "PATH"},
    {"truncate-stdout", 0, 0, truncate_stdout, ""},
    {"symlink", 2, 2, symlink_and_follow, "TARGET LINK"},
    {"open-fds", 1, 1, open_fds, "N"},
    {"write-bundle", 0, 0, write_bundle, ""},
    {"proc-environ", 0, 1, proc_environ, "[PID]"},
    {"escape-dotdot", 1, 2, escape_dotdot, "TARGET [FROM]"},
    {"escape-symlink", 1, 1, escape_symlink, "TARGET"},
    {0, 0, 0, 0, 0},
};
