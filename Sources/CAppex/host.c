/* The host side: connect to appexd's control socket, send requests, read how they ended. */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/appex/appexd.sock"

struct appex_host {
    int sock;
    bool closed;
    uint64_t next_id;
    struct appex_book book;
    struct appex_frame out;
};

int appex_host_fd(const appex_host *host) { return host->sock; }

int appex_host_connect(appex_host **out, const char *socket_path, const char *identifier, appex_error *err) {
    *out = NULL;
    if (!socket_path || !*socket_path) socket_path = getenv("APPEX_SOCKET");
    if (!socket_path || !*socket_path) socket_path = DEFAULT_SOCKET;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof address.sun_path)
        return appex_fail(err, "usage", "socket path %s is longer than %zu bytes", socket_path,
                          sizeof address.sun_path - 1);
    strcpy(address.sun_path, socket_path);
    appex_host *host = calloc(1, sizeof *host);
    if (!host) return appex_fail(err, "io", "out of memory");
    host->next_id = 1;
    host->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (host->sock < 0) {
        free(host);
        return appex_fail_errno(err, errno, "socket");
    }
    int r;
    do r = connect(host->sock, (struct sockaddr *)&address, sizeof address);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        r = appex_fail_errno(err, errno, "connect to %s", socket_path);
    else if (appex_session_hello(host->sock, identifier ? identifier : "libappex", err) < 0 ||
             appex_session_await_hello(host->sock, APPEX_ROLE_HOST, err) < 0)
        r = -1;
    if (r < 0) {
        appex_host_close(host);
        return -1;
    }
    *out = host;
    return 0;
}

static int send_built(appex_host *host, appex_error *err) {
    if (host->closed) return appex_fail(err, "usage", "the connection is closed");
    if (appex_frame_finish(&host->out, err) < 0) return -1;
    return appex_send_frame(host->sock, &host->out, err);
}

int appex_host_begin(appex_host *host, const char *bundle_identifier, const appex_item *items, size_t item_count,
                     int band, uint64_t *request_id, appex_error *err) {
    if (host->book.count == APPEX_MAX_IN_FLIGHT)
        return appex_fail(err, "usage", "%d requests in flight on this connection already", APPEX_MAX_IN_FLIGHT);
    uint64_t id = host->next_id;
    appex_frame_begin(&host->out, APPEX_HOST_BEGIN_REQUEST);
    appex_frame_int(&host->out, 1, id, 8);
    appex_frame_string(&host->out, 2, bundle_identifier);
    appex_frame_items(&host->out, 3, items, item_count);
    if (band >= 0) appex_frame_int(&host->out, 4, (uint32_t)band, 4);
    if (send_built(host, err) < 0) return -1;
    host->next_id++;
    appex_book_add(&host->book, id);
    if (request_id) *request_id = id;
    return 0;
}

int appex_host_cancel(appex_host *host, uint64_t request_id, appex_error *err) {
    if (appex_book_find(&host->book, request_id) < 0) return 0; /* it has ended: nothing to cancel */
    appex_frame_begin(&host->out, APPEX_HOST_CANCEL_REQUEST);
    appex_frame_int(&host->out, 1, request_id, 8);
    return send_built(host, err);
}

int appex_host_open_url_result(appex_host *host, uint64_t request_id, int accepted, appex_error *err) {
    int i = appex_book_find(&host->book, request_id);
    if (i < 0 || host->book.open[i].urls == 0)
        return appex_fail(err, "usage", "request %llu has no OpenURL awaiting a result",
                          (unsigned long long)request_id);
    appex_frame_begin(&host->out, APPEX_OPEN_URL_RESULT);
    appex_frame_int(&host->out, 1, request_id, 8);
    appex_frame_int(&host->out, 2, accepted ? 1 : 0, 1);
    if (send_built(host, err) < 0) return -1;
    host->book.open[i].urls--;
    return 0;
}

/* Ends the connection for a fault in appexd's frame. */
static int refuse(appex_host *host, appex_error *err) {
    appex_send_refusal(host->sock, err->reason, err->message);
    shutdown(host->sock, SHUT_RDWR);
    host->closed = true;
    return APPEX_NEXT_ERROR;
}

/* The sequence rules for what appexd sends a host; answers pings. */
static int judge(appex_host *host, appex_message *m, appex_error *err) {
    int i;
    switch (m->type) {
    case APPEX_HELLO: appex_fail(err, "protocol-error", "a second Hello from appexd"); return refuse(host, err);
    case APPEX_PING:
        appex_frame_begin(&host->out, APPEX_PONG);
        appex_frame_int(&host->out, 1, m->sequence, 8);
        return send_built(host, err) < 0 ? APPEX_NEXT_ERROR : APPEX_NEXT_NOTHING;
    case APPEX_PONG: appex_fail(err, "protocol-error", "a Pong, and this host sent no Ping"); return refuse(host, err);
    case APPEX_REFUSAL:
        if (!m->has_request_id) {
            appex_fail(err, m->reason, "appexd refused the connection: %s%s%s", m->reason, m->message ? ": " : "",
                       m->message ? m->message : "");
            shutdown(host->sock, SHUT_RDWR);
            host->closed = true;
            return APPEX_NEXT_ERROR;
        }
        /* a Refusal with an id answers that request, as an outcome does */
        __attribute__((fallthrough));
    case APPEX_REQUEST_OUTCOME:
    case APPEX_INTERRUPTION:
    case APPEX_OPEN_URL:
        i = appex_book_find(&host->book, m->request_id);
        if (i < 0) {
            appex_fail(err, "protocol-error", "message type 0x%02x names request %llu, which is not in flight", m->type,
                       (unsigned long long)m->request_id);
            return refuse(host, err);
        }
        if (m->type == APPEX_OPEN_URL) {
            if (host->book.open[i].urls == APPEX_MAX_OPEN_URLS) {
                appex_fail(err, "protocol-error", "more than %d OpenURLs await a result for request %llu",
                           APPEX_MAX_OPEN_URLS, (unsigned long long)m->request_id);
                return refuse(host, err);
            }
            host->book.open[i].urls++;
        }
        if (m->type == APPEX_REQUEST_OUTCOME || m->type == APPEX_REFUSAL) appex_book_remove(&host->book, i);
        return APPEX_NEXT_MESSAGE;
    default: return APPEX_NEXT_MESSAGE;
    }
}

int appex_host_next(appex_host *host, appex_message **out, int timeout_ms, appex_error *err) {
    *out = NULL;
    if (host->closed) return appex_fail(err, "usage", "the connection is closed");
    int ready = appex_wait_readable(host->sock, timeout_ms, err);
    if (ready <= 0) return ready < 0 ? APPEX_NEXT_ERROR : APPEX_NEXT_NOTHING;
    appex_message *m;
    int r = appex_receive(host->sock, APPEX_ROLE_HOST, &m, err);
    if (r == APPEX_NEXT_ERROR && strcmp(err->reason, "protocol-error") == 0) return refuse(host, err);
    if (r != APPEX_NEXT_MESSAGE) {
        host->closed = true;
        return r;
    }
    r = judge(host, m, err);
    if (r == APPEX_NEXT_MESSAGE)
        *out = m;
    else
        appex_message_free(m);
    return r;
}

void appex_host_close(appex_host *host) {
    if (!host) return;
    if (host->sock >= 0) close(host->sock);
    free(host);
}
