/* probe: an Appex extension that misbehaves on instruction, for tests, the demo and policy
 * work (Docs/probe-extension.md). Before check-in it follows probe.conf in its bundle; after,
 * each request's first item says what to do. Written in C from Docs/protocol.md, with its own
 * wire code (wire.c); single-threaded on purpose, so that `hang` and `spin` really stop it
 * from answering pings.
 *
 * Exit status: 0 on Terminate or when appexd closes the socket; 1 on a protocol error (after
 * sending Refusal(protocol-error)) or a Refusal from appexd; 2 on a bad start (environment,
 * probe.conf). */
#define _GNU_SOURCE
#include "conf.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* probe.conf's instructions for before check-in, in this order: sleep, crash, exit. */
static void before_check_in(const struct probe_conf *conf) {
    if (conf->sleep_ms > 0) {
        struct timespec t = {conf->sleep_ms / 1000, (conf->sleep_ms % 1000) * 1000000L};
        while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
    }
    if (conf->crash) probe_crash();
    if (conf->exit_code >= 0) exit(conf->exit_code);
}

/* The socket appexd left us (APPEX_SOCKET_FD, default 3), checked and made close-on-exec. */
static int channel(void) {
    const char *text = getenv("APPEX_SOCKET_FD");
    char *end = NULL;
    long fd = text ? strtol(text, &end, 10) : 3;
    if (text && (!*text || *end || fd < 0 || fd > 65535)) {
        fprintf(stderr, "probe: APPEX_SOCKET_FD=\"%s\" is not a descriptor number\n", text);
        return -1;
    }
    int type = 0;
    socklen_t size = sizeof type;
    if (getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_SEQPACKET) {
        fprintf(stderr, "probe: fd %ld is not a SOCK_SEQPACKET socket: start the probe from appexd or a test\n", fd);
        return -1;
    }
    if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "probe: fcntl(F_SETFD) on fd %ld: %s\n", fd, strerror(errno));
        return -1;
    }
    return (int)fd;
}

static long long until_ms(const struct timespec *due) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)(due->tv_sec - now.tv_sec) * 1000000000LL + (due->tv_nsec - now.tv_nsec);
    /* Rounded up: a sleep never ends early. */
    return ns <= 0 ? 0 : (ns + 999999) / 1000000;
}

/* Answers the sleeps that are due; returns the poll timeout until the next one (-1: none). */
static int wake_sleepers(struct probe *p) {
    long long next = -1;
    for (int i = 0; i < PROBE_MAX_REQUESTS; i++) {
        struct pending *r = &p->pending[i];
        if (r->id == 0 || r->awaiting_url || r->awaiting_pongs) continue;
        long long left = until_ms(&r->due);
        if (left == 0) {
            char text[64];
            snprintf(text, sizeof text, "slept %ld ms", r->sleep_ms);
            uint64_t id = r->id;
            r->id = 0;
            if (probe_complete_text(p, id, text)) return -2;
            continue;
        }
        if (next < 0 || left < next) next = left;
    }
    return next > 100000 ? 100000 : (int)next;
}

static struct pending *find(struct probe *p, uint64_t id) {
    for (int i = 0; i < PROBE_MAX_REQUESTS; i++)
        if (p->pending[i].id == id) return &p->pending[i];
    return NULL;
}

static int in_flight(const struct probe *p) {
    int n = 0;
    for (int i = 0; i < PROBE_MAX_REQUESTS; i++) n += p->pending[i].id != 0;
    return n;
}

/* A message about request `id` that is not in flight: stale if it was begun (section 6,
 * "Messages that cross"), else an error. 0 to ignore, -1 for a protocol error. */
static int stale_or_unknown(const struct probe *p, const char *what, uint64_t id) {
    if (id > 0 && id <= p->last_request) return 0;
    snprintf(wire_problem, sizeof wire_problem, "%s names request %llu, which never began", what,
             (unsigned long long)id);
    return -1;
}

/* The sequence rules for one valid frame. 0: go on; 1: exit 0; -1: protocol error; -2: a
 * Refusal or failed send (wire_problem says which). */
static int dispatch(struct probe *p, const struct wire_frame *f, int *checked_in) {
    uint32_t n;
    const uint8_t *first = wire_field(f->payload, f->length, 1, 0, &n);
    if (!*checked_in && f->type != WIRE_HELLO && f->type != WIRE_REFUSAL) {
        snprintf(wire_problem, sizeof wire_problem, "message type 0x%02x before appexd's Hello", f->type);
        return -1;
    }
    switch (f->type) {
    case WIRE_HELLO:
        if (*checked_in) return snprintf(wire_problem, sizeof wire_problem, "a second Hello"), -1;
        if (wire_le(first, 4) != WIRE_PROTOCOL_VERSION) {
            wire_refusal_reason = "version-mismatch";
            snprintf(wire_problem, sizeof wire_problem, "version mismatch: appexd speaks %u, the probe %d",
                     (unsigned)wire_le(first, 4), WIRE_PROTOCOL_VERSION);
            return -1;
        }
        *checked_in = 1;
        return 0;
    case WIRE_REFUSAL: {
        uint32_t m = 0;
        const uint8_t *message = wire_field(f->payload, f->length, 2, 0, &m);
        snprintf(wire_problem, sizeof wire_problem, "appexd refused: %.*s%s%.*s", (int)n, (const char *)first,
                 message ? ": " : "", (int)m, message ? (const char *)message : "");
        return -2;
    }
    case WIRE_PING: {
        static struct wire_out pong;
        if (p->ignore_pings) return 0;
        wire_begin(&pong, WIRE_PONG);
        wire_put(&pong, 1, first, 8);
        return wire_send(p->sock, &pong) ? -2 : 0;
    }
    case WIRE_PONG:
        for (int i = 0; i < PROBE_MAX_REQUESTS; i++) {
            struct pending *r = &p->pending[i];
            if (!r->id || !r->awaiting_pongs) continue;
            if (--r->awaiting_pongs) return 0;
            char text[32];
            snprintf(text, sizeof text, "pongs=%d", r->pings);
            uint64_t id = r->id;
            r->id = 0;
            return probe_complete_text(p, id, text) ? -2 : 0;
        }
        return snprintf(wire_problem, sizeof wire_problem, "a Pong, and the probe awaits none"), -1;
    case WIRE_BEGIN_REQUEST: {
        uint64_t id = wire_le(first, 8);
        if (id <= p->last_request) {
            snprintf(wire_problem, sizeof wire_problem, "BeginRequest %llu after %llu: request ids must increase",
                     (unsigned long long)id, (unsigned long long)p->last_request);
            return -1;
        }
        if (in_flight(p) == PROBE_MAX_REQUESTS) {
            snprintf(wire_problem, sizeof wire_problem, "BeginRequest %llu: over %d requests in flight",
                     (unsigned long long)id, PROBE_MAX_REQUESTS);
            return -1;
        }
        p->last_request = id;
        return probe_begin(p, f) ? -2 : 0;
    }
    case WIRE_CANCEL_REQUEST: {
        struct pending *r = find(p, wire_le(first, 8));
        if (!r) return stale_or_unknown(p, "CancelRequest", wire_le(first, 8));
        uint64_t id = r->id;
        r->id = 0; /* a later OpenURLResult for it is stale */
        return probe_cancel(p, id, ECANCELED, "cancelled by appexd") ? -2 : 0;
    }
    case WIRE_OPEN_URL_RESULT: {
        uint64_t id = wire_le(first, 8);
        uint32_t m;
        struct pending *r = find(p, id);
        if (!r) return stale_or_unknown(p, "OpenURLResult", id);
        if (!r->awaiting_url) {
            snprintf(wire_problem, sizeof wire_problem, "OpenURLResult for request %llu, which opened no URL",
                     (unsigned long long)id);
            return -1;
        }
        int accepted = *wire_field(f->payload, f->length, 2, 0, &m);
        size_t used = strlen(r->url_results);
        snprintf(r->url_results + used, sizeof r->url_results - used, "%s%s", used ? "," : "",
                 accepted ? "accepted" : "refused");
        if (--r->awaiting_url) return 0;
        r->id = 0;
        return probe_complete_text(p, id, r->url_results) ? -2 : 0;
    }
    case WIRE_MEMORY_WARNING: p->memory_warnings++; return 0;
    case WIRE_REQUEST_WILL_EXPIRE:
        p->will_expire++;
        return find(p, wire_le(first, 8)) ? 0 : stale_or_unknown(p, "RequestWillExpire", wire_le(first, 8));
    case WIRE_TERMINATE:
        /* No new requests will come: cancel what is still waiting, then leave. */
        for (int i = 0; i < PROBE_MAX_REQUESTS; i++) {
            uint64_t id = p->pending[i].id;
            p->pending[i].id = 0;
            if (id && probe_cancel(p, id, ECANCELED, "terminating")) return -2;
        }
        return 1;
    default: /* wire_receive admits no other type */
        return snprintf(wire_problem, sizeof wire_problem, "unexpected type 0x%02x", f->type), -1;
    }
}

static int check_in(int sock) {
    static struct wire_out hello;
    const char *identifier = getenv("APPEX_BUNDLE_IDENTIFIER");
    if (!identifier || !*identifier || !wire_is_utf8((const uint8_t *)identifier, strlen(identifier))) {
        fprintf(stderr, "probe: APPEX_BUNDLE_IDENTIFIER is not set (appexd sets it to the bundle's identifier)\n");
        return 2;
    }
    wire_begin(&hello, WIRE_HELLO);
    wire_put_u32(&hello, 1, WIRE_PROTOCOL_VERSION);
    wire_put_string(&hello, 2, identifier);
    wire_put_u32(&hello, 3, (uint32_t)getpid());
    if (wire_send(sock, &hello)) {
        fprintf(stderr, "probe: cannot check in: %s\n", wire_problem);
        return 1;
    }
    return 0;
}

int main(void) {
    /* A crash on instruction must not leave a core file where the tests run. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);

    struct probe_conf conf;
    if (probe_conf_load(&conf)) return 2;
    before_check_in(&conf);

    static struct probe p;
    p.sock = channel();
    if (p.sock < 0) return 2;
    p.ignore_pings = conf.ignore_pings;
    int status = check_in(p.sock);
    if (status) return status;

    int checked_in = 0;
    static struct wire_frame frame;
    for (;;) {
        int timeout = wake_sleepers(&p);
        if (timeout == -2) break;
        struct pollfd pfd = {p.sock, POLLIN, 0};
        int ready = poll(&pfd, 1, timeout);
        if (ready < 0 && errno != EINTR) {
            fprintf(stderr, "probe: poll: %s\n", strerror(errno));
            return 1;
        }
        if (ready <= 0) continue;

        int protocol_error;
        int got = wire_receive(p.sock, &frame, &protocol_error);
        if (got == 0) return 0; /* appexd closed the connection */
        int result = got < 0 ? (protocol_error ? -1 : -2) : dispatch(&p, &frame, &checked_in);
        wire_close_fds(&frame); /* actions read attachments while serving; nothing keeps them */
        if (result == 1) return 0;
        if (result == -1) {
            fprintf(stderr, "probe: %s: %s\n", wire_refusal_reason, wire_problem);
            wire_refuse(p.sock, wire_problem);
            return 1;
        }
        if (result == -2) break;
    }
    fprintf(stderr, "probe: %s\n", wire_problem);
    return 1;
}
