/* relay-floor: the floor under Appex's warm request round trip. Three plain C processes, the
 * same shape as host → appexd → extension → appexd → host: a host sends a request record to a
 * relay, the relay forwards it to a worker, the worker answers, the relay forwards the answer
 * back. Unix SOCK_SEQPACKET socketpairs (what Appex uses), the relay waiting in epoll (as
 * appexd does), records of the sizes Appex's frames have. No encoding, no decoding, no
 * bookkeeping: what is left is the kernel's part, which Appex cannot go below.
 *
 *   relay-floor ITERATIONS REQUEST_BYTES ANSWER_BYTES [WARMUP [HOSTS WORKERS]]
 *
 * Prints one round trip per line, in nanoseconds, after WARMUP (default 200) unmeasured ones.
 * With HOSTS and WORKERS (throughput, scaled as the supervisor's is): HOSTS host processes,
 * each sending ITERATIONS requests one after the other, all through the one relay to WORKERS
 * workers (host i to worker i mod WORKERS). The relay tags each record with its host so the
 * answer finds its way back. A first line "# SECONDS RELAY_CPU_SECONDS" gives the wall time of
 * the measured part (all hosts start it together) and the relay's CPU time over it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RECORD 131072

static uint8_t buffer[MAX_RECORD];

static void die(const char *what) {
    fprintf(stderr, "relay-floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static ssize_t receive(int fd) {
    ssize_t n;
    do n = recv(fd, buffer, sizeof buffer, 0);
    while (n < 0 && errno == EINTR);
    return n;
}

static void transmit(int fd, size_t n) {
    ssize_t sent;
    do sent = send(fd, buffer, n, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent != (ssize_t)n) die("send");
}

/* The relay's wait: the descriptors ready now (at least one). */
static int wait_ready(int ep, struct epoll_event *ready, int max) {
    for (;;) {
        int n = epoll_wait(ep, ready, max, -1);
        if (n >= 0) return n;
        if (errno != EINTR) die("epoll_wait");
    }
}

/* The worker: answers every request with ANSWER_BYTES, until the relay goes away. The
 * relay's tag (the first 4 bytes) goes back with the answer. */
static void worker(int fd, size_t answer) {
    for (;;) {
        ssize_t n = receive(fd);
        if (n <= 0) _exit(0);
        transmit(fd, answer);
    }
}

/* The relay of the throughput mode: HOSTS host sockets, WORKERS worker sockets, one epoll. A
 * request is tagged with its host's index on the way in; the answer is sent to that host. */
static void relay_many(const int *hosts, int host_count, const int *workers, int worker_count) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    for (int i = 0; i < host_count + worker_count; i++) {
        struct epoll_event ev = {.events = EPOLLIN};
        ev.data.u32 = (uint32_t)i;
        int fd = i < host_count ? hosts[i] : workers[i - host_count];
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) die("epoll_ctl");
    }
    int open_hosts = host_count;
    for (;;) {
        struct epoll_event ready[64];
        int n = wait_ready(ep, ready, 64);
        for (int i = 0; i < n; i++) {
            uint32_t at = ready[i].data.u32;
            if ((int)at < host_count) {
                ssize_t got = receive(hosts[at]);
                if (got <= 0) {
                    epoll_ctl(ep, EPOLL_CTL_DEL, hosts[at], NULL);
                    if (--open_hosts == 0) _exit(0);
                    continue;
                }
                memcpy(buffer, &at, sizeof at);
                transmit(workers[at % (uint32_t)worker_count], (size_t)got);
            } else {
                ssize_t got = receive(workers[at - (uint32_t)host_count]);
                if (got < (ssize_t)sizeof at) _exit(0);
                uint32_t host;
                memcpy(&host, buffer, sizeof host);
                if ((int)host < host_count) transmit(hosts[host], (size_t)got);
            }
        }
    }
}

/* The relay: forwards records both ways, woken by epoll; when the host leaves, it closes the
 * worker's socket and reaps it. */
static void relay(int host, int worker_fd, pid_t worker_pid) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN};
    ev.data.fd = host;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, host, &ev)) die("epoll_ctl");
    ev.data.fd = worker_fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, worker_fd, &ev)) die("epoll_ctl");
    for (;;) {
        struct epoll_event ready[2];
        int n = wait_ready(ep, ready, 2);
        for (int i = 0; i < n; i++) {
            int from = ready[i].data.fd;
            ssize_t got = receive(from);
            if (got <= 0) {
                close(worker_fd);
                while (waitpid(worker_pid, NULL, 0) < 0 && errno == EINTR) {}
                _exit(0);
            }
            transmit(from == host ? worker_fd : host, (size_t)got);
        }
    }
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long argument(const char *s, long min, long max, const char *what) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max) {
        fprintf(stderr, "relay-floor: %s must be %ld…%ld, got %s\n", what, min, max, s);
        exit(2);
    }
    return v;
}

/* utime + stime of `pid`, in seconds. */
static double cpu_seconds(pid_t pid) {
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *p = strrchr(text, ')');
    unsigned long utime = 0, stime = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return 0;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Throughput: HOSTS host processes at once through one relay to WORKERS workers. */
static int many(long iterations, size_t request, size_t answer, long warmup, int host_count, int worker_count) {
    int hosts[host_count], host_ends[host_count], workers[worker_count];
    int ready[2], go[2];
    if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC)) die("pipe2");
    for (int i = 0; i < host_count; i++) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair)) die("socketpair");
        hosts[i] = pair[0];
        host_ends[i] = pair[1];
    }
    pid_t relay_pid = fork();
    if (relay_pid < 0) die("fork");
    if (relay_pid == 0) {
        close(ready[0]);
        close(ready[1]);
        close(go[0]);
        close(go[1]);
        for (int w = 0; w < worker_count; w++) {
            int pair[2];
            if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair)) die("socketpair");
            pid_t pid = fork();
            if (pid < 0) die("fork");
            if (pid == 0) {
                /* Only its own socket: the relay must see every host's end of stream. */
                close(pair[0]);
                for (int i = 0; i < host_count; i++) {
                    close(hosts[i]);
                    close(host_ends[i]);
                }
                for (int i = 0; i < w; i++) close(workers[i]);
                worker(pair[1], answer);
            }
            close(pair[1]);
            workers[w] = pair[0];
        }
        for (int i = 0; i < host_count; i++) close(hosts[i]);
        relay_many(host_ends, host_count, workers, worker_count);
    }
    for (int i = 0; i < host_count; i++) close(host_ends[i]);

    /* Each host's samples and the time it finished, shared with this process. */
    size_t bytes = sizeof(uint64_t) * ((size_t)host_count * (size_t)iterations + (size_t)host_count);
    uint64_t *shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) die("mmap");
    uint64_t *ends = shared + (size_t)host_count * (size_t)iterations;
    pid_t pids[host_count];
    for (int h = 0; h < host_count; h++) {
        pids[h] = fork();
        if (pids[h] < 0) die("fork");
        if (pids[h] > 0) continue;
        close(ready[0]);
        close(go[1]);
        int fd = hosts[h];
        memset(buffer, 0x5a, request);
        for (long i = 0; i < warmup; i++) {
            transmit(fd, request);
            if (receive(fd) != (ssize_t)answer) die("the answer");
        }
        char one = 1, none;
        if (write(ready[1], &one, 1) != 1) die("write");
        while (read(go[0], &none, 1) < 0 && errno == EINTR) {} /* EOF: go */
        uint64_t *mine = shared + (size_t)h * (size_t)iterations;
        for (long i = 0; i < iterations; i++) {
            uint64_t t0 = now_ns();
            transmit(fd, request);
            if (receive(fd) != (ssize_t)answer) die("the answer");
            mine[i] = now_ns() - t0;
        }
        ends[h] = now_ns();
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    for (int h = 0; h < host_count; h++) {
        char one;
        if (read(ready[0], &one, 1) != 1) die("a host did not get ready");
    }
    double cpu0 = cpu_seconds(relay_pid);
    uint64_t start = now_ns();
    close(go[1]);
    int failed = 0;
    for (int h = 0; h < host_count; h++) {
        int status;
        while (waitpid(pids[h], &status, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    }
    double cpu1 = cpu_seconds(relay_pid);
    uint64_t end = 0;
    for (int h = 0; h < host_count; h++)
        if (ends[h] > end) end = ends[h];
    for (int h = 0; h < host_count; h++) close(hosts[h]);
    int status;
    while (waitpid(relay_pid, &status, 0) < 0 && errno == EINTR) {}
    if (failed) {
        fprintf(stderr, "relay-floor: a host failed\n");
        return 1;
    }
    printf("# %.6f %.6f\n", (double)(end - start) / 1e9, cpu1 - cpu0);
    for (size_t i = 0; i < (size_t)host_count * (size_t)iterations; i++)
        printf("%llu\n", (unsigned long long)shared[i]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5 && argc != 7) {
        fprintf(stderr, "usage: relay-floor ITERATIONS REQUEST_BYTES ANSWER_BYTES [WARMUP [HOSTS WORKERS]]\n");
        return 2;
    }
    long iterations = argument(argv[1], 1, 100000000, "ITERATIONS");
    size_t request = (size_t)argument(argv[2], 1, MAX_RECORD, "REQUEST_BYTES");
    size_t answer = (size_t)argument(argv[3], 1, MAX_RECORD, "ANSWER_BYTES");
    long warmup = argc >= 5 ? argument(argv[4], 0, 100000000, "WARMUP") : 200;
    if (argc == 7) {
        int host_count = (int)argument(argv[5], 1, 1024, "HOSTS");
        int worker_count = (int)argument(argv[6], 1, 1024, "WORKERS");
        if (answer < sizeof(uint32_t)) {
            fprintf(stderr, "relay-floor: ANSWER_BYTES must be at least 4 with HOSTS\n");
            return 2;
        }
        return many(iterations, request, answer, warmup, host_count, worker_count);
    }

    int host_relay[2], relay_worker[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, host_relay)) die("socketpair");
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, relay_worker)) die("socketpair");
    pid_t relay_pid = fork();
    if (relay_pid < 0) die("fork");
    if (relay_pid == 0) {
        pid_t worker_pid = fork();
        if (worker_pid < 0) die("fork");
        if (worker_pid == 0) {
            close(host_relay[0]);
            close(host_relay[1]);
            close(relay_worker[0]);
            worker(relay_worker[1], answer);
        }
        close(host_relay[0]);
        close(relay_worker[1]);
        relay(host_relay[1], relay_worker[0], worker_pid);
    }
    close(host_relay[1]);
    close(relay_worker[0]);
    close(relay_worker[1]);

    int host = host_relay[0];
    uint64_t *samples = calloc((size_t)iterations, sizeof *samples);
    if (!samples) die("calloc");
    memset(buffer, 0x5a, request);
    for (long i = 0; i < warmup + iterations; i++) {
        uint64_t t0 = now_ns();
        transmit(host, request);
        if (receive(host) != (ssize_t)answer) die("the answer");
        uint64_t t1 = now_ns();
        if (i >= warmup) samples[i - warmup] = t1 - t0;
    }
    close(host);
    int status;
    while (waitpid(relay_pid, &status, 0) < 0 && errno == EINTR) {}
    for (long i = 0; i < iterations; i++) printf("%llu\n", (unsigned long long)samples[i]);
    return 0;
}
