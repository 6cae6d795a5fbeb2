/* The extension side: check-in, the sequence rules an extension keeps (section 6), answers,
 * and pings answered either inside appex_extension_next or by a thread of the library's. */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct queued {
    struct queued *next;
    appex_message *message;
};

struct appex_extension {
    int sock;
    int flags;
    /* Guards the socket's sending side, the book and `closed`: both threads send. */
    pthread_mutex_t lock;
    struct appex_book book;
    bool terminated;
    bool closed;
    struct appex_frame out;
    /* APPEX_PINGS_ON_THREAD: the reader and its queue. */
    pthread_t reader;
    bool reader_running;
    int queue_fd; /* eventfd, readable while the queue holds something or the reader ended */
    pthread_mutex_t queue_lock;
    pthread_cond_t queue_changed;
    struct queued *head, *tail;
    int ended; /* 0 running, else the final APPEX_NEXT_CLOSED or APPEX_NEXT_ERROR */
    appex_error end_error;
};

/* Ends the connection for a fault found in appexd's frame (section 8). Lock held. */
static int refuse_locked(appex_extension *ext, appex_error *err) {
    if (!ext->closed) {
        appex_send_refusal(ext->sock, err->reason, err->message);
        shutdown(ext->sock, SHUT_RDWR);
        ext->closed = true;
    }
    return APPEX_NEXT_ERROR;
}

static int pong(appex_extension *ext, uint64_t sequence, appex_error *err) {
    appex_frame_begin(&ext->out, APPEX_PONG);
    appex_frame_int(&ext->out, 1, sequence, 8);
    if (appex_frame_finish(&ext->out, err) < 0) return -1;
    return appex_send_frame(ext->sock, &ext->out, err);
}

/* Applies the sequence rules to a message from appexd; answers pings. Lock held. Returns
 * APPEX_NEXT_MESSAGE (the caller's), APPEX_NEXT_NOTHING, or APPEX_NEXT_ERROR. */
static int judge(appex_extension *ext, appex_message *m, appex_error *err) {
    int i;
    switch (m->type) {
    case APPEX_HELLO: appex_fail(err, "protocol-error", "a second Hello from appexd"); return refuse_locked(ext, err);
    case APPEX_REFUSAL:
        if (m->has_request_id) return APPEX_NEXT_MESSAGE;
        appex_fail(err, m->reason, "appexd refused: %s%s%s", m->reason, m->message ? ": " : "",
                   m->message ? m->message : "");
        shutdown(ext->sock, SHUT_RDWR);
        ext->closed = true;
        return APPEX_NEXT_ERROR;
    case APPEX_PING:
        if (pong(ext, m->sequence, err) < 0) return APPEX_NEXT_ERROR;
        return APPEX_NEXT_NOTHING;
    case APPEX_PONG:
        appex_fail(err, "protocol-error", "a Pong, and this extension sent no Ping");
        return refuse_locked(ext, err);
    case APPEX_BEGIN_REQUEST:
        if (ext->terminated) {
            appex_fail(err, "protocol-error", "BeginRequest %llu after Terminate", (unsigned long long)m->request_id);
            return refuse_locked(ext, err);
        }
        if (m->request_id == 0 || m->request_id <= ext->book.last) {
            appex_fail(err, "protocol-error", "BeginRequest %llu after request %llu: ids must increase from 1",
                       (unsigned long long)m->request_id, (unsigned long long)ext->book.last);
            return refuse_locked(ext, err);
        }
        if (appex_book_add(&ext->book, m->request_id) < 0) {
            appex_fail(err, "protocol-error", "more than %d requests in flight", APPEX_MAX_IN_FLIGHT);
            return refuse_locked(ext, err);
        }
        return APPEX_NEXT_MESSAGE;
    case APPEX_CANCEL_REQUEST:
    case APPEX_REQUEST_WILL_EXPIRE:
    case APPEX_OPEN_URL_RESULT:
        i = appex_book_lookup(&ext->book, m->request_id,
                              m->type == APPEX_CANCEL_REQUEST    ? "CancelRequest"
                              : m->type == APPEX_OPEN_URL_RESULT ? "OpenURLResult"
                                                                 : "RequestWillExpire",
                              err);
        if (i == -2) return refuse_locked(ext, err);
        if (i == -1) return APPEX_NEXT_NOTHING; /* stale: the request was answered meanwhile */
        if (m->type == APPEX_OPEN_URL_RESULT) {
            if (ext->book.open[i].urls == 0) {
                appex_fail(err, "protocol-error", "OpenURLResult for request %llu, which awaits none",
                           (unsigned long long)m->request_id);
                return refuse_locked(ext, err);
            }
            ext->book.open[i].urls--;
        }
        return APPEX_NEXT_MESSAGE;
    case APPEX_TERMINATE: ext->terminated = true; return APPEX_NEXT_MESSAGE;
    default: /* MemoryWarning; the decoder let nothing else through */ return APPEX_NEXT_MESSAGE;
    }
}

/* Reads and judges one frame. */
static int read_one(appex_extension *ext, appex_message **out, appex_error *err) {
    appex_message *m;
    int r = appex_receive(ext->sock, APPEX_ROLE_EXTENSION, &m, err);
    pthread_mutex_lock(&ext->lock);
    if (r == APPEX_NEXT_ERROR && strcmp(err->reason, "protocol-error") == 0) refuse_locked(ext, err);
    if (r == APPEX_NEXT_MESSAGE) {
        r = judge(ext, m, err);
        if (r == APPEX_NEXT_MESSAGE)
            *out = m;
        else
            appex_message_free(m);
    }
    if (r == APPEX_NEXT_CLOSED || r == APPEX_NEXT_ERROR) ext->closed = true;
    pthread_mutex_unlock(&ext->lock);
    return r;
}

static void *reader_main(void *arg) {
    appex_extension *ext = arg;
    for (;;) {
        appex_message *m = NULL;
        appex_error err;
        int r = read_one(ext, &m, &err);
        if (r == APPEX_NEXT_NOTHING) continue;
        pthread_mutex_lock(&ext->queue_lock);
        if (r == APPEX_NEXT_MESSAGE) {
            struct queued *q = malloc(sizeof *q);
            if (q) {
                q->next = NULL;
                q->message = m;
                if (ext->tail)
                    ext->tail->next = q;
                else
                    ext->head = q;
                ext->tail = q;
            } else {
                appex_message_free(m);
                r = APPEX_NEXT_ERROR;
                appex_fail(&err, "io", "out of memory queueing a message");
            }
        }
        if (r != APPEX_NEXT_MESSAGE) {
            ext->ended = r;
            ext->end_error = err;
        }
        uint64_t one = 1;
        (void)!write(ext->queue_fd, &one, sizeof one);
        pthread_cond_broadcast(&ext->queue_changed);
        pthread_mutex_unlock(&ext->queue_lock);
        if (r != APPEX_NEXT_MESSAGE) return NULL;
    }
}

/* With the queue locked: the first message, or the end. */
static int take_queued(appex_extension *ext, appex_message **out, appex_error *err) {
    struct queued *q = ext->head;
    if (q) {
        ext->head = q->next;
        if (!ext->head) ext->tail = NULL;
        *out = q->message;
        free(q);
    }
    if (!ext->head && !ext->ended) {
        uint64_t count;
        (void)!read(ext->queue_fd, &count, sizeof count);
    }
    if (q) return APPEX_NEXT_MESSAGE;
    if (ext->ended == APPEX_NEXT_ERROR && err) *err = ext->end_error;
    return ext->ended;
}

static int next_from_queue(appex_extension *ext, appex_message **out, int timeout_ms, appex_error *err) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&ext->queue_lock);
    while (!ext->head && !ext->ended && timeout_ms != 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&ext->queue_changed, &ext->queue_lock);
        else if (pthread_cond_timedwait(&ext->queue_changed, &ext->queue_lock, &deadline) == ETIMEDOUT)
            break;
    }
    int r = take_queued(ext, out, err);
    pthread_mutex_unlock(&ext->queue_lock);
    return r;
}

int appex_extension_next(appex_extension *ext, appex_message **out, int timeout_ms, appex_error *err) {
    *out = NULL;
    if (ext->flags & APPEX_PINGS_ON_THREAD) return next_from_queue(ext, out, timeout_ms, err);
    if (ext->closed) return appex_fail(err, "usage", "the connection is closed");
    int ready = appex_wait_readable(ext->sock, timeout_ms, err);
    if (ready <= 0) return ready < 0 ? APPEX_NEXT_ERROR : APPEX_NEXT_NOTHING;
    return read_one(ext, out, err);
}

int appex_extension_fd(const appex_extension *ext) {
    return ext->flags & APPEX_PINGS_ON_THREAD ? ext->queue_fd : ext->sock;
}

/* With the lock held: request `id`'s place in the book, or -1 with err. */
static int in_flight(appex_extension *ext, uint64_t id, appex_error *err) {
    if (ext->closed) return appex_fail(err, "usage", "the connection is closed");
    int i = appex_book_find(&ext->book, id);
    if (i < 0) return appex_fail(err, "usage", "request %llu is not in flight", (unsigned long long)id);
    return i;
}

/* Sends the frame built in ext->out as the answer to request `i`. Lock held. */
static int send_answer(appex_extension *ext, int i, appex_error *err) {
    if (appex_frame_finish(&ext->out, err) < 0 || appex_send_frame(ext->sock, &ext->out, err) < 0) return -1;
    appex_book_remove(&ext->book, i);
    return 0;
}

int appex_extension_complete(appex_extension *ext, uint64_t request_id, const appex_item *items, size_t item_count,
                             appex_error *err) {
    pthread_mutex_lock(&ext->lock);
    int i = in_flight(ext, request_id, err);
    if (i >= 0) {
        appex_frame_begin(&ext->out, APPEX_COMPLETE_REQUEST);
        appex_frame_int(&ext->out, 1, request_id, 8);
        appex_frame_items(&ext->out, 2, items, item_count);
        i = send_answer(ext, i, err);
    }
    pthread_mutex_unlock(&ext->lock);
    return i < 0 ? -1 : 0;
}

int appex_extension_cancel(appex_extension *ext, uint64_t request_id, const char *domain, int64_t code,
                           const char *message, appex_error *err) {
    pthread_mutex_lock(&ext->lock);
    int i = in_flight(ext, request_id, err);
    if (i >= 0) {
        appex_frame_begin(&ext->out, APPEX_CANCEL_REQUEST);
        appex_frame_int(&ext->out, 1, request_id, 8);
        appex_frame_error(&ext->out, 2, domain, code, message);
        i = send_answer(ext, i, err);
    }
    pthread_mutex_unlock(&ext->lock);
    return i < 0 ? -1 : 0;
}

int appex_extension_open_url(appex_extension *ext, uint64_t request_id, const char *url, appex_error *err) {
    pthread_mutex_lock(&ext->lock);
    int i = in_flight(ext, request_id, err);
    if (i >= 0 && ext->book.open[i].urls == APPEX_MAX_OPEN_URLS)
        i = appex_fail(err, "usage", "request %llu already has %d OpenURLs awaiting a result",
                       (unsigned long long)request_id, APPEX_MAX_OPEN_URLS);
    if (i >= 0) {
        appex_frame_begin(&ext->out, APPEX_OPEN_URL);
        appex_frame_int(&ext->out, 1, request_id, 8);
        appex_frame_string(&ext->out, 2, url);
        if (appex_frame_finish(&ext->out, err) < 0 || appex_send_frame(ext->sock, &ext->out, err) < 0)
            i = -1;
        else
            ext->book.open[i].urls++;
    }
    pthread_mutex_unlock(&ext->lock);
    return i < 0 ? -1 : 0;
}

void appex_extension_refuse(appex_extension *ext, const char *reason, const char *message) {
    pthread_mutex_lock(&ext->lock);
    if (!ext->closed) {
        appex_send_refusal(ext->sock, reason, message);
        shutdown(ext->sock, SHUT_RDWR);
        ext->closed = true;
    }
    pthread_mutex_unlock(&ext->lock);
}

void appex_extension_close(appex_extension *ext) {
    if (!ext) return;
    shutdown(ext->sock, SHUT_RDWR); /* the reader's recvmsg returns */
    if (ext->reader_running) pthread_join(ext->reader, NULL);
    for (struct queued *q = ext->head, *next; q; q = next) {
        next = q->next;
        appex_message_free(q->message);
        free(q);
    }
    if (ext->queue_fd >= 0) close(ext->queue_fd);
    close(ext->sock);
    pthread_mutex_destroy(&ext->lock);
    pthread_mutex_destroy(&ext->queue_lock);
    pthread_cond_destroy(&ext->queue_changed);
    free(ext);
}

int appex_extension_open_fd(appex_extension **out, int sock, const char *bundle_identifier, int flags,
                            appex_error *err) {
    *out = NULL;
    if (!bundle_identifier || !*bundle_identifier)
        return appex_fail(err, "usage", "no bundle identifier (appexd sets APPEX_BUNDLE_IDENTIFIER)");
    int type = 0;
    socklen_t size = sizeof type;
    if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_SEQPACKET)
        return appex_fail(err, "usage", "fd %d is not a SOCK_SEQPACKET socket (start the extension from appexd)", sock);
    if (fcntl(sock, F_SETFD, FD_CLOEXEC) != 0) return appex_fail_errno(err, errno, "fcntl(F_SETFD) on fd %d", sock);
    appex_extension *ext = calloc(1, sizeof *ext);
    if (!ext) return appex_fail(err, "io", "out of memory");
    ext->sock = sock;
    ext->flags = flags;
    ext->queue_fd = -1;
    pthread_mutex_init(&ext->lock, NULL);
    pthread_mutex_init(&ext->queue_lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ext->queue_changed, &attr);
    pthread_condattr_destroy(&attr);
    if (appex_session_hello(sock, bundle_identifier, err) < 0 ||
        appex_session_await_hello(sock, APPEX_ROLE_EXTENSION, err) < 0) {
        ext->sock = -1; /* the caller's socket stays the caller's on failure */
        appex_extension_close(ext);
        return -1;
    }
    if (flags & APPEX_PINGS_ON_THREAD) {
        ext->queue_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        int e = ext->queue_fd < 0 ? errno : pthread_create(&ext->reader, NULL, reader_main, ext);
        if (e) {
            ext->sock = -1;
            appex_extension_close(ext);
            return appex_fail_errno(err, e, "starting the ping thread");
        }
        ext->reader_running = true;
    }
    *out = ext;
    return 0;
}

int appex_extension_open(appex_extension **out, int flags, appex_error *err) {
    const char *fd_text = getenv("APPEX_SOCKET_FD");
    char *end = NULL;
    long fd = fd_text ? strtol(fd_text, &end, 10) : 3;
    if (fd_text && (*fd_text == 0 || *end != 0 || fd < 0 || fd > 65535))
        return appex_fail(err, "usage", "APPEX_SOCKET_FD=\"%s\" is not a descriptor number", fd_text);
    return appex_extension_open_fd(out, (int)fd, getenv("APPEX_BUNDLE_IDENTIFIER"), flags, err);
}
