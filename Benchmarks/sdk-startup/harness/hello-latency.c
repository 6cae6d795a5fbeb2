// hello-latency: how long an extension takes from spawn to its Hello frame.
//
// RUNS rounds (after WARMUP unmeasured ones), each launching every executable once: create a SOCK_SEQPACKET
// socketpair, posix_spawn the executable with one end at fd 3 (APPEX_SOCKET_FD=3,
// APPEX_BUNDLE_IDENTIFIER set, as appexd does), and time until the Hello frame arrives. Then
// answer as appexd (Hello, Terminate) so the extension exits 0, and record its peak RSS.
// Prints min / median / p90 / max in milliseconds and the median peak RSS per executable.
//
// usage: hello-latency RUNS EXECUTABLE...
#define _GNU_SOURCE
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { WARMUP = 5, HELLO = 0x01, TERMINATE = 0x17 };

struct frame {
    unsigned char b[256];
    size_t n;
};

static void put_le(struct frame *f, uint64_t v, int size) {
    for (int i = 0; i < size; i++) f->b[f->n++] = (unsigned char)(v >> (8 * i));
}

static void put_field(struct frame *f, uint16_t tag, const void *value, uint32_t length) {
    put_le(f, tag, 2);
    put_le(f, length, 4);
    memcpy(f->b + f->n, value, length);
    f->n += length;
}

/* A frame of `type` whose fields the caller appends; finish() patches the payload length. */
static void begin(struct frame *f, uint16_t type) {
    f->n = 0;
    memcpy(f->b, "APXW", 4);
    f->n = 4;
    put_le(f, 1, 2); /* format */
    put_le(f, type, 2);
    put_le(f, 0, 2); /* flags */
    put_le(f, 0, 2); /* descriptors */
    put_le(f, 0, 4); /* payload length, patched */
}

static void finish(struct frame *f) {
    uint32_t length = (uint32_t)(f->n - 16);
    for (int i = 0; i < 4; i++) f->b[12 + i] = (unsigned char)(length >> (8 * i));
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One launch: the spawn-to-Hello time in ms, the peak RSS in KiB; -1 on any failure. */
static double launch(const char *path, long *peak_kib) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("socketpair");
        return -1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sv[1], 3);
    char *argv[] = {(char *)path, NULL};
    char *envp[] = {"APPEX_SOCKET_FD=3", "APPEX_BUNDLE_IDENTIFIER=dev.appex.bench", "PATH=/usr/bin:/bin", NULL};

    double start = now_ms();
    pid_t pid;
    int rc = posix_spawn(&pid, path, &actions, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    close(sv[1]);
    if (rc != 0) {
        fprintf(stderr, "posix_spawn %s: %s\n", path, strerror(rc));
        close(sv[0]);
        return -1;
    }

    unsigned char in[512];
    ssize_t n = recv(sv[0], in, sizeof in, 0);
    double elapsed = now_ms() - start;
    int ok = n >= 16 && memcmp(in, "APXW", 4) == 0 && in[6] == HELLO;
    if (!ok) fprintf(stderr, "%s: no Hello frame (read %zd bytes)\n", path, n);

    /* Answer as appexd: Hello, then Terminate, so the extension exits on its own. */
    struct frame f;
    uint32_t version = 1;
    int32_t self = (int32_t)getpid();
    begin(&f, HELLO);
    put_field(&f, 1, &version, 4);
    put_field(&f, 2, "appexd", 6);
    put_field(&f, 3, &self, 4);
    finish(&f);
    send(sv[0], f.b, f.n, MSG_NOSIGNAL);
    begin(&f, TERMINATE);
    put_field(&f, 1, "shutdown", 8);
    finish(&f);
    send(sv[0], f.b, f.n, MSG_NOSIGNAL);

    int status = 0;
    struct rusage usage;
    wait4(pid, &status, 0, &usage);
    close(sv[0]);
    *peak_kib = usage.ru_maxrss;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: exited with status 0x%x\n", path, status);
        return -1;
    }
    return ok ? elapsed : -1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: hello-latency RUNS EXECUTABLE...\n");
        return 2;
    }
    int runs = atoi(argv[1]);
    if (runs < 1) {
        fprintf(stderr, "RUNS must be at least 1\n");
        return 2;
    }
    int count = argc - 2;
    double *times = calloc((size_t)(runs * count), sizeof *times);
    double *peaks = calloc((size_t)(runs * count), sizeof *peaks);
    long kib = 0;
    for (int i = 0; i < WARMUP; i++)
        for (int e = 0; e < count; e++)
            if (launch(argv[2 + e], &kib) < 0) return 1;
    /* Round-robin, so a burst of load on the machine hits every executable alike. */
    for (int i = 0; i < runs; i++) {
        for (int e = 0; e < count; e++) {
            double t = launch(argv[2 + e], &kib);
            if (t < 0) return 1;
            times[e * runs + i] = t;
            peaks[e * runs + i] = (double)kib;
        }
    }
    printf("%-32s %8s %8s %8s %8s %10s\n", "executable (spawn -> Hello)", "min ms", "median", "p90", "max", "peak RSS");
    for (int e = 0; e < count; e++) {
        double *t = times + e * runs, *p = peaks + e * runs;
        qsort(t, (size_t)runs, sizeof *t, compare);
        qsort(p, (size_t)runs, sizeof *p, compare);
        const char *name = strrchr(argv[2 + e], '/') ? strrchr(argv[2 + e], '/') + 1 : argv[2 + e];
        printf("%-32s %8.2f %8.2f %8.2f %8.2f %6.1f MiB\n", name, t[0], t[runs / 2], t[runs * 9 / 10], t[runs - 1],
               p[runs / 2] / 1024.0);
    }
    free(times);
    free(peaks);
    return 0;
}
