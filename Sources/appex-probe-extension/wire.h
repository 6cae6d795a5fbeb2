/* The probe's own reading of Docs/protocol.md: frames, fields and the checks of sections 2,
 * 3 and 5, for the messages appexd sends on an extension channel, and an encoder for the ones
 * the probe sends. Shares no code with appex-example-c on purpose (each shows that the page
 * alone is enough). */
#ifndef PROBE_WIRE_H
#define PROBE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_HEADER_SIZE 16
#define WIRE_MAX_FRAME 131072
#define WIRE_MAX_FDS 16
#define WIRE_PROTOCOL_VERSION 1

enum wire_type {
    WIRE_HELLO = 0x01,
    WIRE_REFUSAL = 0x02,
    WIRE_PING = 0x03,
    WIRE_PONG = 0x04,
    WIRE_BEGIN_REQUEST = 0x10,
    WIRE_COMPLETE_REQUEST = 0x11,
    WIRE_CANCEL_REQUEST = 0x12,
    WIRE_OPEN_URL = 0x13,
    WIRE_OPEN_URL_RESULT = 0x14,
    WIRE_MEMORY_WARNING = 0x15,
    WIRE_REQUEST_WILL_EXPIRE = 0x16,
    WIRE_TERMINATE = 0x17,
};

/* A received frame that passed every check of the protocol page (not the sequence rules:
 * those are the caller's). The payload points into the receive buffer. */
struct wire_frame {
    uint16_t type;
    const uint8_t *payload;
    size_t length;
    int fds[WIRE_MAX_FDS];
    int nfds;
};

/* Why the last wire_* call failed, for stderr and the Refusal; and the Refusal's reason
 * (protocol-error unless set otherwise, e.g. version-mismatch). */
extern char wire_problem[512];
extern const char *wire_refusal_reason;

/* Receives one record. 1: a valid frame in *frame; 0: end of the connection; -1: a socket
 * failure or a frame that breaks the protocol (wire_problem says which; its descriptors are
 * already closed; *protocol_error is 1 for the latter). */
int wire_receive(int sock, struct wire_frame *frame, int *protocol_error);

void wire_close_fds(struct wire_frame *frame);

/* Field access, after wire_receive validated the payload: the nth (from 0) field with `tag`
 * among the fields in [p, p + n), or NULL. */
const uint8_t *wire_field(const uint8_t *p, size_t n, uint16_t tag, unsigned nth, uint32_t *length);
uint64_t wire_le(const uint8_t *p, uint32_t size);
int wire_is_utf8(const uint8_t *p, size_t n);

/* Building frames: fields appended in order; nested fields closed in reverse. */
struct wire_out {
    uint8_t bytes[WIRE_MAX_FRAME];
    size_t length;
    int overflow;
};

void wire_begin(struct wire_out *out, uint16_t type);
void wire_put(struct wire_out *out, uint16_t tag, const void *value, size_t n);
void wire_put_string(struct wire_out *out, uint16_t tag, const char *s);
void wire_put_u64(struct wire_out *out, uint16_t tag, uint64_t v);
void wire_put_u32(struct wire_out *out, uint16_t tag, uint32_t v);
size_t wire_open(struct wire_out *out, uint16_t tag);
void wire_close(struct wire_out *out, size_t at);
/* Writes the payload length into the header (wire_send does it; the probe's `send-frame`
 * action seals a frame itself to break it afterwards). */
void wire_seal(struct wire_out *out);
/* 0, or -1 with wire_problem set (frame too big, socket failure). */
int wire_send(int sock, struct wire_out *out);
/* wire_send with one descriptor (SCM_RIGHTS), counted in the header. */
int wire_send_fd(int sock, struct wire_out *out, int fd);
/* Section 8: a Refusal(wire_refusal_reason, message) sent without blocking, then the socket
 * closed. */
void wire_refuse(int sock, const char *message);

#endif
