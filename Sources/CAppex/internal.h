/* libappex's private pieces: errors, the arena decoded messages live in, the frame encoder,
 * the transport. Not installed. */
#ifndef APPEX_INTERNAL_H
#define APPEX_INTERNAL_H

#include "appex.h"

#include <stdarg.h>
#include <stdbool.h>

/* Internal role: a supervisor receives what extensions and hosts send (tests, conformance). */
#define APPEX_ROLE_SUPERVISOR_ 3

/* ---- errors ---- */
int appex_fail(appex_error *err, const char *reason, const char *format, ...) __attribute__((format(printf, 3, 4)));
int appex_fail_errno(appex_error *err, int errnum, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* ---- arena: every allocation of one message, freed at once ---- */
struct appex_arena;
struct appex_arena *appex_arena_new(void);
void *appex_arena_alloc(struct appex_arena *arena, size_t size); /* zeroed; NULL when out of memory */
void appex_arena_free(struct appex_arena *arena);

/* ---- little-endian ---- */
static inline uint64_t appex_get_le(const uint8_t *p, int size) {
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}
static inline void appex_set_le(uint8_t *p, uint64_t v, int size) {
    for (int i = 0; i < size; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- UTF-8 ---- */
size_t appex_utf8_sequence(const uint8_t *p, size_t n); /* bytes of the sequence at p, 0 when invalid */
bool appex_is_text(const uint8_t *p, size_t n); /* valid UTF-8, no NUL */

/* ---- encoding: one frame in one buffer, descriptors beside it ---- */
struct appex_frame {
    uint8_t bytes[APPEX_MAX_FRAME];
    size_t length;
    bool too_big;
    bool bad_text; /* a string that is not UTF-8 or has a NUL */
    bool too_many; /* a count over its limit */
    int fds[APPEX_MAX_FDS];
    int fd_count;
};

void appex_frame_begin(struct appex_frame *f, uint16_t type);
void appex_frame_bytes(struct appex_frame *f, uint16_t tag, const void *value, size_t n);
void appex_frame_string(struct appex_frame *f, uint16_t tag, const char *s);
void appex_frame_int(struct appex_frame *f, uint16_t tag, uint64_t v, int size);
size_t appex_frame_open(struct appex_frame *f, uint16_t tag);
void appex_frame_close(struct appex_frame *f, size_t at);
/* Items as fields with `tag`; fd attachments add their descriptor to the frame. */
void appex_frame_items(struct appex_frame *f, uint16_t tag, const appex_item *items, size_t count);
void appex_frame_error(struct appex_frame *f, uint16_t tag, const char *domain, int64_t code, const char *message);
/* Sets the header's lengths; 0, or -1 with err when the frame cannot be sent as built. */
int appex_frame_finish(struct appex_frame *f, appex_error *err);

/* ---- transport ---- */
/* Sends a finished frame as one record with its descriptors. */
int appex_send_frame(int sock, const struct appex_frame *f, appex_error *err);
/* Without blocking, best effort: a Refusal that ends the connection (section 8). */
void appex_send_refusal(int sock, const char *reason, const char *message);
/* Reads one record and decodes it: APPEX_NEXT_MESSAGE, APPEX_NEXT_CLOSED or APPEX_NEXT_ERROR
 * (err->reason "protocol-error" when the frame was at fault, "io" otherwise). Descriptors are
 * the message's; attachments' fd fields hold them. */
int appex_receive(int sock, enum appex_role role, appex_message **out, appex_error *err);
/* Waits for the socket to be readable: 1 readable, 0 timeout, -1 error. */
int appex_wait_readable(int fd, int timeout_ms, appex_error *err);

#endif
