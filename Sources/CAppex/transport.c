/* One frame = one SOCK_SEQPACKET record, descriptors in one SCM_RIGHTS message (section 2). */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int appex_send_frame(int sock, const struct appex_frame *f, appex_error *err) {
    struct iovec iov = {(void *)f->bytes, f->length};
    union {
        char buffer[CMSG_SPACE(APPEX_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (f->fd_count > 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buffer;
        msg.msg_controllen = CMSG_SPACE((size_t)f->fd_count * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)f->fd_count * sizeof(int));
        memcpy(CMSG_DATA(c), f->fds, (size_t)f->fd_count * sizeof(int));
    }
    ssize_t n;
    do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) return appex_fail_errno(err, errno, "sendmsg of a %zu-byte frame", f->length);
    if ((size_t)n != f->length) return appex_fail(err, "io", "sendmsg sent %zd of %zu bytes", n, f->length);
    return 0;
}

/* Frames live on the heap, never in thread-local storage: a 128 KiB static TLS block would
 * leave no room in the small stacks other threads of a linking program ask for. */
void appex_send_refusal(int sock, const char *reason, const char *message) {
    struct appex_frame *f = malloc(sizeof *f);
    if (!f) return; /* best effort, as section 8 allows */
    appex_frame_begin(f, APPEX_REFUSAL);
    appex_frame_string(f, 1, reason);
    if (message) appex_frame_string(f, 2, message);
    if (appex_frame_finish(f, NULL) == 0) (void)send(sock, f->bytes, f->length, MSG_NOSIGNAL | MSG_DONTWAIT);
    free(f);
}

int appex_wait_readable(int fd, int timeout_ms, appex_error *err) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        int n = poll(&p, 1, timeout_ms);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return appex_fail_errno(err, errno, "poll");
        return n > 0;
    }
}

static void close_all(const int *fds, int n) {
    for (int i = 0; i < n; i++) close(fds[i]);
}

int appex_receive(int sock, enum appex_role role, appex_message **out, appex_error *err) {
    *out = NULL;
    /* The record's length first, so the buffer is the frame's size, not the bound's. */
    char probe;
    ssize_t size;
    do size = recv(sock, &probe, 1, MSG_PEEK | MSG_TRUNC);
    while (size < 0 && errno == EINTR);
    if (size < 0) return appex_fail_errno(err, errno, "recv");
    if (size == 0) {
        /* An empty record, or the end: either ends the connection (section 8). Consume it. */
        (void)recv(sock, &probe, 1, MSG_DONTWAIT);
        return APPEX_NEXT_CLOSED;
    }
    /* One byte more than the bound, so that an oversized record shows as one. */
    size_t capacity = (size_t)size > APPEX_MAX_FRAME ? APPEX_MAX_FRAME + 1 : (size_t)size;
    uint8_t *frame = malloc(capacity);
    if (!frame) return appex_fail(err, "io", "out of memory for a %zd-byte record", size);
    union {
        char buffer[CMSG_SPACE((APPEX_MAX_FDS + 1) * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {frame, capacity};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    ssize_t n;
    do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        int e = errno;
        free(frame);
        return appex_fail_errno(err, e, "recvmsg");
    }
    int fds[APPEX_MAX_FDS + 1], nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (nfds <= APPEX_MAX_FDS)
                fds[nfds++] = fd;
            else
                close(fd);
        }
    }
    int result;
    if (n == 0) {
        close_all(fds, nfds);
        free(frame);
        return APPEX_NEXT_CLOSED;
    }
    if (msg.msg_flags & MSG_TRUNC || (size_t)n > APPEX_MAX_FRAME)
        result = appex_fail(err, "protocol-error", "oversized-frame: a record of more than %d bytes", APPEX_MAX_FRAME);
    else if (msg.msg_flags & MSG_CTRUNC || nfds > APPEX_MAX_FDS)
        result = appex_fail(err, "protocol-error", "too-many-descriptors: more than %d with one frame", APPEX_MAX_FDS);
    else
        result = appex_decode(frame, (size_t)n, nfds, role, out, err);
    free(frame);
    if (result < 0) {
        close_all(fds, nfds);
        return APPEX_NEXT_ERROR;
    }
    appex_message *m = *out;
    m->fd_count = nfds;
    memcpy(m->fds, fds, (size_t)nfds * sizeof(int));
    /* Attachments name their descriptor by index on the wire; the caller gets the descriptor. */
    for (size_t i = 0; i < m->item_count; i++)
        for (size_t j = 0; j < m->items[i].attachment_count; j++) {
            appex_attachment *a = (appex_attachment *)&m->items[i].attachments[j];
            if (a->fd >= 0) a->fd = fds[a->fd];
        }
    return APPEX_NEXT_MESSAGE;
}
