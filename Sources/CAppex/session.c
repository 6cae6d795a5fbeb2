/* What both ends do alike: check in, and the book of requests in flight (section 6). */
#include "session.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int appex_session_hello(int sock, const char *identifier, appex_error *err) {
    struct appex_frame *f = malloc(sizeof *f); /* heap, not TLS: see appex_send_refusal */
    if (!f) return appex_fail(err, "io", "out of memory");
    appex_frame_begin(f, APPEX_HELLO);
    appex_frame_int(f, 1, APPEX_PROTOCOL_VERSION, 4);
    appex_frame_string(f, 2, identifier);
    appex_frame_int(f, 3, (uint32_t)getpid(), 4);
    int r = appex_frame_finish(f, err) < 0 ? -1 : appex_send_frame(sock, f, err);
    free(f);
    return r;
}

int appex_session_await_hello(int sock, enum appex_role role, appex_error *err) {
    appex_message *m;
    int r = appex_receive(sock, role, &m, err);
    if (r == APPEX_NEXT_CLOSED) return appex_fail(err, "io", "appexd closed the connection before its Hello");
    if (r != APPEX_NEXT_MESSAGE) {
        if (strcmp(err->reason, "protocol-error") == 0) appex_send_refusal(sock, err->reason, err->message);
        return -1;
    }
    int result = 0;
    if (m->type == APPEX_REFUSAL) {
        result = appex_fail(err, m->reason, "appexd refused: %s%s%s", m->reason, m->message ? ": " : "",
                            m->message ? m->message : "");
    } else if (m->type != APPEX_HELLO) {
        result = appex_fail(err, "protocol-error", "message type 0x%02x before appexd's Hello", m->type);
        appex_send_refusal(sock, err->reason, err->message);
    } else if (m->protocol_version != APPEX_PROTOCOL_VERSION) {
        result = appex_fail(err, "version-mismatch", "appexd speaks protocol version %u, this library %d",
                            m->protocol_version, APPEX_PROTOCOL_VERSION);
        appex_send_refusal(sock, err->reason, err->message);
    }
    appex_message_free(m);
    return result;
}

int appex_book_find(const struct appex_book *b, uint64_t id) {
    for (int i = 0; i < b->count; i++)
        if (b->open[i].id == id) return i;
    return -1;
}

int appex_book_add(struct appex_book *b, uint64_t id) {
    if (b->count == APPEX_MAX_IN_FLIGHT) return -1;
    b->open[b->count].id = id;
    b->open[b->count].urls = 0;
    b->count++;
    if (id > b->last) b->last = id;
    return 0;
}

void appex_book_remove(struct appex_book *b, int index) { b->open[index] = b->open[--b->count]; }

int appex_book_lookup(const struct appex_book *b, uint64_t id, const char *what, appex_error *err) {
    int i = appex_book_find(b, id);
    if (i >= 0) return i;
    if (id == 0 || id > b->last)
        return appex_fail(err, "protocol-error", "%s names request %llu, which never began", what,
                          (unsigned long long)id) -
               1;
    return -1; /* ended: stale */
}
