/* relay-floor: the floor under Appex's warm request round trip. Three plain C processes, the
 * same shape as host → appexd → extension → appexd → host: a host sends a request record to a
 * relay, the relay forwards it to a worker, the worker answers, the relay forwards the answer
 * back. Unix SOCK_SEQPACKET socketpairs (what Appex uses), the relay waiting in epoll (as
 * appexd does), records of the sizes Appex's frames have. No encoding, no decoding, no
 * bookkeeping: what is left is the kernel's part, which Appex cannot go below.
 *
 *   relay-floor ITERATIONS REQUEST_BYTES ANSWER_BYTES [WARMUP]
 *
 * Prints one round trip per line, in nanoseconds, after WARMUP (default 200) unmeasured ones. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
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

/* The worker: answers every request with ANSWER_BYTES, until the relay goes away. */
static void worker(int fd, size_t answer) {
    for (;;) {
        ssize_t n = receive(fd);
        if (n <= 0) _exit(0);
        transmit(fd, answer);
    }
}

/* The relay: forwards records both ways, woken by epoll; when the host leaves, it closes the
 * worker's socket and reaps it. */
static void relay(int host, int worker_fd, pid_t worker_pid) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    struct epoll_event ev = { .events = EPOLLIN };
    ev.data.fd = host;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, host, &ev)) die("epoll_ctl");
    ev.data.fd = worker_fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, worker_fd, &ev)) die("epoll_ctl");
    for (;;) {
        struct epoll_event ready[2];
        int n = epoll_wait(ep, ready, 2, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("epoll_wait");
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

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: relay-floor ITERATIONS REQUEST_BYTES ANSWER_BYTES [WARMUP]\n");
        return 2;
    }
    long iterations = argument(argv[1], 1, 100000000, "ITERATIONS");
    size_t request = (size_t)argument(argv[2], 1, MAX_RECORD, "REQUEST_BYTES");
    size_t answer = (size_t)argument(argv[3], 1, MAX_RECORD, "ANSWER_BYTES");
    long warmup = argc == 5 ? argument(argv[4], 0, 100000000, "WARMUP") : 200;

    int host_relay[2], relay_worker[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, host_relay)) die("socketpair");
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, relay_worker)) die("socketpair");
    pid_t relay_pid = fork();
    if (relay_pid < 0) die("fork");
    if (relay_pid == 0) {
        pid_t worker_pid = fork();
        if (worker_pid < 0) die("fork");
        if (worker_pid == 0) {
            close(host_relay[0]); close(host_relay[1]); close(relay_worker[0]);
            worker(relay_worker[1], answer);
        }
        close(host_relay[0]); close(relay_worker[1]);
        relay(host_relay[1], relay_worker[0], worker_pid);
    }
    close(host_relay[1]); close(relay_worker[0]); close(relay_worker[1]);

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
