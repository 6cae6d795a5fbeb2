/* Frames and fields for the probe (Docs/protocol.md sections 2, 3, 5 and 8).
 *
 * Received payloads are checked against a table per message (a "shape": which tags, of what
 * type, how many times), then by a few hand-written rules the tables cannot say (an
 * attachment's data in exactly one place, every descriptor named once, one value per
 * user-info entry). After that the rest of the probe reads fields without re-checking. */
#define _GNU_SOURCE
#include "wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

char wire_problem[512];
const char *wire_refusal_reason = "protocol-error";

static int fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(wire_problem, sizeof wire_problem, format, args);
    va_end(args);
    return -1;
}

uint64_t wire_le(const uint8_t *p, uint32_t size) {
    uint64_t v = 0;
    while (size--) v = v << 8 | p[size];
    return v;
}

/* ---- shapes ------------------------------------------------------------------------------ */

enum kind { U8, BOOL, U32, I32, U64, I64, F64, STRING, BYTES, NESTED };
static const uint32_t fixed_size[] = {[U8] = 1, [BOOL] = 1, [U32] = 4, [I32] = 4, [U64] = 8, [I64] = 8, [F64] = 8};

struct walk;
struct rule {
    uint16_t tag;
    uint8_t kind;
    uint8_t min, max; /* occurrences: required 1..1, optional 0..1, repeated 0..limit */
    const char *name;
    const struct shape *nested;
};
struct shape {
    const char *name;
    const struct rule *rules;
    size_t count;
    /* Rules beyond the table, run once the fields are known to be well formed. */
    int (*check)(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path);
};

/* What a check needs beyond its fields: the descriptors that came with the frame. */
struct walk {
    int nfds;
    uint32_t fds_named;
};

#define SHAPE(name, check, ...)                                                                                        \
    {                                                                                                                  \
        name, (const struct rule[]){__VA_ARGS__}, sizeof((const struct rule[]){__VA_ARGS__}) / sizeof(struct rule),    \
            check                                                                                                      \
    }

static int check_attachment(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path);
static int check_user_info(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path);
static int check_item(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path);
static int check_memory_warning(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path);

static const struct shape error_shape = SHAPE("Error", NULL, {1, STRING, 1, 1, "domain", NULL},
                                              {2, I64, 1, 1, "code", NULL}, {3, STRING, 0, 1, "message", NULL});
static const struct shape attachment_shape = SHAPE(
    "Attachment", check_attachment, {1, STRING, 1, 16, "typeIdentifier", NULL}, {2, BYTES, 0, 1, "inlineData", NULL},
    {3, U32, 0, 1, "fdIndex", NULL}, {4, STRING, 0, 1, "suggestedName", NULL});
static const struct shape user_info_shape =
    SHAPE("UserInfoEntry", check_user_info, {1, STRING, 1, 1, "key", NULL}, {2, STRING, 0, 1, "string", NULL},
          {3, I64, 0, 1, "integer", NULL}, {4, BOOL, 0, 1, "bool", NULL}, {5, F64, 0, 1, "double", NULL},
          {6, BYTES, 0, 1, "data", NULL});
static const struct shape item_shape = SHAPE(
    "Item", check_item, {1, STRING, 0, 1, "attributedTitle", NULL}, {2, STRING, 0, 1, "attributedContentText", NULL},
    {3, NESTED, 0, 16, "attachment", &attachment_shape}, {4, NESTED, 0, 64, "userInfo", &user_info_shape});

/* The messages appexd may send on an extension channel, by type. */
static const struct shape hello_shape = SHAPE("Hello", NULL, {1, U32, 1, 1, "protocolVersion", NULL},
                                              {2, STRING, 1, 1, "bundleIdentifier", NULL}, {3, I32, 1, 1, "pid", NULL});
static const struct shape refusal_shape =
    SHAPE("Refusal", NULL, {1, STRING, 1, 1, "reason", NULL}, {2, STRING, 0, 1, "message", NULL},
          {3, U64, 0, 1, "requestID", NULL}, {4, STRING, 0, 64, "detail", NULL});
static const struct shape ping_shape = SHAPE("Ping", NULL, {1, U64, 1, 1, "sequence", NULL});
static const struct shape pong_shape = SHAPE("Pong", NULL, {1, U64, 1, 1, "sequence", NULL});
static const struct shape begin_shape =
    SHAPE("BeginRequest", NULL, {1, U64, 1, 1, "requestID", NULL}, {2, NESTED, 0, 16, "item", &item_shape});
static const struct shape cancel_shape =
    SHAPE("CancelRequest", NULL, {1, U64, 1, 1, "requestID", NULL}, {2, NESTED, 1, 1, "error", &error_shape});
static const struct shape url_result_shape =
    SHAPE("OpenURLResult", NULL, {1, U64, 1, 1, "requestID", NULL}, {2, BOOL, 1, 1, "accepted", NULL});
static const struct shape memory_shape = SHAPE("MemoryWarning", check_memory_warning, {1, U8, 1, 1, "level", NULL});
static const struct shape expire_shape =
    SHAPE("RequestWillExpire", NULL, {1, U64, 1, 1, "requestID", NULL}, {2, U32, 1, 1, "millisecondsLeft", NULL});
static const struct shape terminate_shape =
    SHAPE("Terminate", NULL, {1, STRING, 1, 1, "reason", NULL}, {2, U32, 0, 1, "graceMilliseconds", NULL});

static const struct shape *shape_of(uint16_t type) {
    switch (type) {
    case WIRE_HELLO: return &hello_shape;
    case WIRE_REFUSAL: return &refusal_shape;
    case WIRE_PING: return &ping_shape;
    case WIRE_PONG: return &pong_shape;
    case WIRE_BEGIN_REQUEST: return &begin_shape;
    case WIRE_CANCEL_REQUEST: return &cancel_shape;
    case WIRE_OPEN_URL_RESULT: return &url_result_shape;
    case WIRE_MEMORY_WARNING: return &memory_shape;
    case WIRE_REQUEST_WILL_EXPIRE: return &expire_shape;
    case WIRE_TERMINATE: return &terminate_shape;
    default: return NULL; /* CompleteRequest and OpenURL travel the other way; the rest are control-channel */
    }
}

/* ---- validation ---------------------------------------------------------------------------- */

int wire_is_utf8(const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t b = p[i];
        if (b == 0) return 0;
        if (b < 0x80) {
            i++;
            continue;
        }
        size_t extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
        if (extra == 0 || b < 0xC2 || b > 0xF4 || n - i <= extra) return 0;
        uint32_t cp = b & (0x3F >> extra);
        for (size_t k = 1; k <= extra; k++) {
            if ((p[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (p[i + k] & 0x3F);
        }
        static const uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
        if (cp < smallest[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += extra + 1;
    }
    return 1;
}

/* Checks the fields in p[0..n) against `shape`; `offset` is p's offset in the frame, for
 * messages, and `path` names where we are ("BeginRequest.item"). */
static int validate(struct walk *w, const struct shape *shape, const uint8_t *p, size_t n, size_t offset,
                    const char *path) {
    unsigned seen[8] = {0};
    size_t at = 0;
    while (at < n) {
        if (n - at < 6)
            return fail("truncated in %s at offset %zu: %zu bytes left, a field header takes 6", path, offset + at,
                        n - at);
        uint16_t tag = (uint16_t)wire_le(p + at, 2);
        uint32_t length = (uint32_t)wire_le(p + at + 2, 4);
        if (length > n - at - 6)
            return fail("truncated in %s at offset %zu: tag %u claims %u bytes, %zu remain", path, offset + at, tag,
                        length, n - at - 6);
        const uint8_t *value = p + at + 6;
        size_t value_offset = offset + at + 6;
        size_t r = 0;
        while (r < shape->count && shape->rules[r].tag != tag) r++;
        if (r == shape->count) {
            if (tag < 0x8000) return fail("unknown tag %u in %s at offset %zu", tag, path, offset + at);
            at += 6 + (size_t)length;
            continue;
        }
        const struct rule *rule = &shape->rules[r];
        if (++seen[r] > rule->max)
            return rule->max == 1 ? fail("%s.%s appears twice (again at offset %zu)", path, rule->name, offset + at)
                                  : fail("%s has more than %u of %s", path, rule->max, rule->name);
        if (rule->kind < STRING && length != fixed_size[rule->kind])
            return fail("bad-field-length in %s.%s at offset %zu: value is %u bytes, this field is %u", path,
                        rule->name, offset + at, length, fixed_size[rule->kind]);
        if (rule->kind == BOOL && value[0] > 1)
            return fail("bad bool in %s.%s at offset %zu: %u", path, rule->name, value_offset, value[0]);
        if (rule->kind == STRING && !wire_is_utf8(value, length))
            return fail("bad string in %s.%s at offset %zu: invalid UTF-8 or a NUL", path, rule->name, value_offset);
        if (rule->kind == NESTED) {
            char inner[256];
            snprintf(inner, sizeof inner, "%s.%s", path, rule->name);
            if (validate(w, rule->nested, value, length, value_offset, inner)) return -1;
        }
        at += 6 + (size_t)length;
    }
    for (size_t r = 0; r < shape->count; r++)
        if (seen[r] < shape->rules[r].min) return fail("%s.%s is required and missing", path, shape->rules[r].name);
    return shape->check ? shape->check(w, p, n, offset, path) : 0;
}

static int check_attachment(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path) {
    uint32_t length;
    const uint8_t *inline_data = wire_field(p, n, 2, 0, &length);
    const uint8_t *index = wire_field(p, n, 3, 0, &length);
    if (!inline_data == !index) return fail("%s at offset %zu: exactly one of inlineData and fdIndex", path, offset);
    if (!index) return 0;
    uint32_t i = (uint32_t)wire_le(index, 4);
    size_t at = offset + (size_t)(index - p);
    if (i >= (uint32_t)w->nfds)
        return fail("bad descriptor index in %s.fdIndex at offset %zu: %u, %d came with the frame", path, at, i,
                    w->nfds);
    if (w->fds_named & (1u << i))
        return fail("bad descriptor index in %s.fdIndex at offset %zu: descriptor %u named twice", path, at, i);
    w->fds_named |= 1u << i;
    return 0;
}

static int check_user_info(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path) {
    (void)w;
    int values = 0;
    uint32_t length;
    for (uint16_t tag = 2; tag <= 6; tag++) values += wire_field(p, n, tag, 0, &length) != NULL;
    return values == 1 ? 0 : fail("%s at offset %zu: %d values, exactly one is allowed", path, offset, values);
}

static int check_item(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path) {
    (void)w;
    uint32_t a_length, b_length, key_a, key_b;
    const uint8_t *a, *b;
    for (unsigned i = 0; (a = wire_field(p, n, 4, i, &a_length)); i++) {
        const uint8_t *ka = wire_field(a, a_length, 1, 0, &key_a);
        for (unsigned j = i + 1; (b = wire_field(p, n, 4, j, &b_length)); j++) {
            const uint8_t *kb = wire_field(b, b_length, 1, 0, &key_b);
            if (key_a == key_b && memcmp(ka, kb, key_a) == 0)
                return fail("%s at offset %zu: user-info key \"%.*s\" twice", path, offset, (int)key_a,
                            (const char *)ka);
        }
    }
    return 0;
}

static int check_memory_warning(struct walk *w, const uint8_t *p, size_t n, size_t offset, const char *path) {
    (void)w;
    uint32_t length;
    uint8_t level = *wire_field(p, n, 1, 0, &length);
    return level == 1 || level == 2 ? 0
                                    : fail("bad enum in %s.level at offset %zu: %u (1 or 2)", path, offset + 6, level);
}

const uint8_t *wire_field(const uint8_t *p, size_t n, uint16_t tag, unsigned nth, uint32_t *length) {
    for (size_t at = 0; n - at >= 6;) {
        uint32_t len = (uint32_t)wire_le(p + at + 2, 4);
        if (len > n - at - 6) return NULL;
        if (wire_le(p + at, 2) == tag && nth-- == 0) {
            *length = len;
            return p + at + 6;
        }
        at += 6 + (size_t)len;
    }
    return NULL;
}

/* ---- receiving ---------------------------------------------------------------------------- */

void wire_close_fds(struct wire_frame *frame) {
    for (int i = 0; i < frame->nfds; i++) close(frame->fds[i]);
    frame->nfds = 0;
}

static int check_frame(const uint8_t *b, size_t n, struct wire_frame *frame) {
    if (n < WIRE_HEADER_SIZE) return fail("truncated header: a %zu-byte record", n);
    if (memcmp(b, "APXW", 4) != 0) return fail("bad magic at offset 0");
    if (wire_le(b + 4, 2) != 1) return fail("unknown frame format %u at offset 4", (unsigned)wire_le(b + 4, 2));
    if (wire_le(b + 8, 2) != 0) return fail("reserved flags set at offset 8: 0x%04x", (unsigned)wire_le(b + 8, 2));
    if (wire_le(b + 10, 2) != (uint64_t)frame->nfds)
        return fail("descriptor count mismatch at offset 10: header says %u, %d arrived", (unsigned)wire_le(b + 10, 2),
                    frame->nfds);
    if (wire_le(b + 12, 4) != n - WIRE_HEADER_SIZE)
        return fail("payload length %u at offset 12 does not match the %zu bytes after the header",
                    (unsigned)wire_le(b + 12, 4), n - WIRE_HEADER_SIZE);
    frame->type = (uint16_t)wire_le(b + 6, 2);
    const struct shape *shape = shape_of(frame->type);
    if (!shape) return fail("message type 0x%02x at offset 6 is not one appexd sends to an extension", frame->type);
    if (frame->nfds > 0 && frame->type != WIRE_BEGIN_REQUEST)
        return fail("%s carries %d descriptors; only BeginRequest may", shape->name, frame->nfds);
    struct walk w = {frame->nfds, 0};
    if (validate(&w, shape, b + WIRE_HEADER_SIZE, n - WIRE_HEADER_SIZE, WIRE_HEADER_SIZE, shape->name)) return -1;
    if (w.fds_named != (1u << frame->nfds) - 1)
        return fail("%s: %d descriptors arrived and some are named by no attachment", shape->name, frame->nfds);
    frame->payload = b + WIRE_HEADER_SIZE;
    frame->length = n - WIRE_HEADER_SIZE;
    return 0;
}

int wire_receive(int sock, struct wire_frame *frame, int *protocol_error) {
    static uint8_t buffer[WIRE_MAX_FRAME];
    char control[CMSG_SPACE((WIRE_MAX_FDS + 1) * sizeof(int))];
    struct iovec iov = {buffer, sizeof buffer};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t n;
    *protocol_error = 0;
    frame->nfds = 0;
    do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0) return fail("recvmsg: %s", strerror(errno));
    int extra = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
            if (frame->nfds < WIRE_MAX_FDS)
                frame->fds[frame->nfds++] = fd;
            else {
                close(fd);
                extra++;
            }
        }
    }
    if (n == 0 && frame->nfds == 0) return 0;
    *protocol_error = 1;
    int bad;
    if (msg.msg_flags & MSG_TRUNC)
        bad = fail("frame too large: over %d bytes", WIRE_MAX_FRAME);
    else if ((msg.msg_flags & MSG_CTRUNC) || extra)
        bad = fail("too many descriptors: over %d with one frame", WIRE_MAX_FDS);
    else
        bad = check_frame(buffer, (size_t)n, frame);
    if (bad) {
        wire_close_fds(frame);
        return -1;
    }
    *protocol_error = 0;
    return 1;
}

/* ---- sending ------------------------------------------------------------------------------ */

static void emit(struct wire_out *out, const void *p, size_t n) {
    if (out->overflow || n > sizeof out->bytes - out->length) {
        out->overflow = 1;
        return;
    }
    memcpy(out->bytes + out->length, p, n);
    out->length += n;
}

static void emit_le(struct wire_out *out, uint64_t v, unsigned size) {
    uint8_t b[8];
    for (unsigned i = 0; i < size; i++) b[i] = (uint8_t)(v >> (8 * i));
    emit(out, b, size);
}

void wire_begin(struct wire_out *out, uint16_t type) {
    out->length = 0;
    out->overflow = 0;
    emit(out, "APXW", 4);
    emit_le(out, 1, 2);
    emit_le(out, type, 2);
    emit_le(out, 0, 8); /* flags, fd count, payload length: the last is set when sent */
}

void wire_put(struct wire_out *out, uint16_t tag, const void *value, size_t n) {
    emit_le(out, tag, 2);
    emit_le(out, n, 4);
    emit(out, value, n);
}

void wire_put_string(struct wire_out *out, uint16_t tag, const char *s) { wire_put(out, tag, s, strlen(s)); }

void wire_put_u64(struct wire_out *out, uint16_t tag, uint64_t v) {
    emit_le(out, tag, 2);
    emit_le(out, 8, 4);
    emit_le(out, v, 8);
}

void wire_put_u32(struct wire_out *out, uint16_t tag, uint32_t v) {
    emit_le(out, tag, 2);
    emit_le(out, 4, 4);
    emit_le(out, v, 4);
}

size_t wire_open(struct wire_out *out, uint16_t tag) {
    emit_le(out, tag, 2);
    size_t at = out->length;
    emit_le(out, 0, 4);
    return at;
}

void wire_close(struct wire_out *out, size_t at) {
    if (out->overflow) return;
    uint64_t n = out->length - at - 4;
    for (unsigned i = 0; i < 4; i++) out->bytes[at + i] = (uint8_t)(n >> (8 * i));
}

void wire_seal(struct wire_out *out) {
    uint64_t n = out->length - WIRE_HEADER_SIZE;
    for (unsigned i = 0; i < 4; i++) out->bytes[12 + i] = (uint8_t)(n >> (8 * i));
}

int wire_send(int sock, struct wire_out *out) {
    if (out->overflow) return fail("a frame over %d bytes", WIRE_MAX_FRAME);
    wire_seal(out);
    ssize_t n;
    do n = send(sock, out->bytes, out->length, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) return fail("send: %s", strerror(errno));
    return 0;
}

int wire_send_fd(int sock, struct wire_out *out, int fd) {
    if (out->overflow) return fail("a frame over %d bytes", WIRE_MAX_FRAME);
    out->bytes[10] = 1; /* the header's descriptor count (little-endian u16 at offset 10) */
    out->bytes[11] = 0;
    wire_seal(out);
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = out->bytes, .iov_len = out->length};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) return fail("sendmsg: %s", strerror(errno));
    return 0;
}

void wire_refuse(int sock, const char *message) {
    static struct wire_out out;
    wire_begin(&out, WIRE_REFUSAL);
    wire_put_string(&out, 1, wire_refusal_reason);
    /* A message cut short by snprintf may end inside a character; the string must be UTF-8. */
    size_t n = strlen(message);
    while (n > 0 && !wire_is_utf8((const uint8_t *)message, n)) n--;
    wire_put(&out, 2, message, n);
    wire_seal(&out);
    (void)send(sock, out.bytes, out.length, MSG_NOSIGNAL | MSG_DONTWAIT);
    close(sock);
}
