/*
 * hello-c: an Appex extension in plain C, written from Docs/protocol.md alone. It links no
 * Appex code (no SDK, no Swift), which is the point: the protocol is language-neutral.
 *
 * What it does: checks in (Hello with $APPEX_BUNDLE_IDENTIFIER and its pid), answers every
 * BeginRequest at once with CompleteRequest carrying one item whose content text is
 * "hello from C: " followed by the input text reversed (by code point). The input text is the
 * first item's content text, else the first attachment's bytes (inline or read from its
 * descriptor). It answers Ping with Pong and exits 0 on Terminate or when appexd closes the
 * socket. A malformed or out-of-order frame gets Refusal(protocol-error) and exit status 1
 * (section 8); a Refusal from appexd is printed and ends it with status 1.
 *
 * Everything is in this one file on purpose: read it top to bottom next to the protocol page.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Section 2 and 3: the frame header and the limits. */
#define HEADER_SIZE 16
#define MAX_FRAME 131072
#define MAX_FDS 16
#define MAX_ITEMS 16
#define MAX_ATTACHMENTS 16
#define MAX_TYPE_IDS 16
#define MAX_USER_INFO 64
#define PROTOCOL_VERSION 1
#define FRAME_FORMAT 1

/* Section 4: the message types this extension sends or may receive. */
enum {
    MSG_HELLO = 0x01,
    MSG_REFUSAL = 0x02,
    MSG_PING = 0x03,
    MSG_PONG = 0x04,
    MSG_BEGIN_REQUEST = 0x10,
    MSG_COMPLETE_REQUEST = 0x11,
    MSG_CANCEL_REQUEST = 0x12,
    MSG_OPEN_URL = 0x13,
    MSG_OPEN_URL_RESULT = 0x14,
    MSG_MEMORY_WARNING = 0x15,
    MSG_REQUEST_WILL_EXPIRE = 0x16,
    MSG_TERMINATE = 0x17,
};

#define PREFIX "hello from C: "
#define ERROR_DOMAIN "dev.appex.examples.hello-c"
/* How much of an attachment is read as input text: enough for a greeting. */
#define MAX_ATTACHMENT_TEXT 4096

/* ------------------------------------------------------------------------------------------ */
/* Little-endian integers                                                                      */

static uint64_t get_le(const uint8_t *p, int size) {
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void set_le(uint8_t *p, uint64_t v, int size) {
    for (int i = 0; i < size; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------------------------------------ */
/* Errors: one message, kept for stderr and for the Refusal we send before closing.           */

static char problem[512];
/* The Refusal reason for `problem` when it ends the connection (section 7). */
static const char *refusal_reason = "protocol-error";

static int bad(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(problem, sizeof problem, format, args);
    va_end(args);
    return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Encoding: a frame is built in one buffer; nested fields patch their length when closed.     */

struct frame_out {
    uint8_t bytes[MAX_FRAME];
    size_t length;
    int too_big;
};

static void append(struct frame_out *f, const void *data, size_t n) {
    if (f->too_big || n > MAX_FRAME - f->length) {
        f->too_big = 1;
        return;
    }
    memcpy(f->bytes + f->length, data, n);
    f->length += n;
}

static void append_le(struct frame_out *f, uint64_t v, int size) {
    uint8_t le[8];
    set_le(le, v, size);
    append(f, le, (size_t)size);
}

static void begin_frame(struct frame_out *f, uint16_t type) {
    f->length = 0;
    f->too_big = 0;
    append(f, "APXW", 4);
    append_le(f, FRAME_FORMAT, 2);
    append_le(f, type, 2);
    append_le(f, 0, 2); /* flags */
    append_le(f, 0, 2); /* fd count: this extension never sends descriptors */
    append_le(f, 0, 4); /* payload length, set by send_frame */
}

static void add_bytes(struct frame_out *f, uint16_t tag, const void *value, size_t n) {
    append_le(f, tag, 2);
    append_le(f, n, 4);
    append(f, value, n);
}

static void add_string(struct frame_out *f, uint16_t tag, const char *s) { add_bytes(f, tag, s, strlen(s)); }

static void add_integer(struct frame_out *f, uint16_t tag, uint64_t v, int size) {
    append_le(f, tag, 2);
    append_le(f, (uint64_t)size, 4);
    append_le(f, v, size);
}

/* Opens a nested field; returns where its length goes, for close_nested. */
static size_t open_nested(struct frame_out *f, uint16_t tag) {
    append_le(f, tag, 2);
    size_t at = f->length;
    append_le(f, 0, 4);
    return at;
}

static void close_nested(struct frame_out *f, size_t at) {
    if (!f->too_big) set_le(f->bytes + at, f->length - at - 4, 4);
}

/* Sends the frame as one record. Returns 0, or -1 with `problem` set. */
static int send_frame(int sock, struct frame_out *f) {
    if (f->too_big) return bad("the answer does not fit in a %d-byte frame", MAX_FRAME);
    set_le(f->bytes + 12, f->length - HEADER_SIZE, 4);
    ssize_t n;
    do n = send(sock, f->bytes, f->length, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)f->length) return bad("send: %s", n < 0 ? strerror(errno) : "short write");
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Decoding: walk the fields of a payload one at a time and check each against section 5.     */

/* A run of fields: bytes [at, end) of the frame, named for error messages. */
struct fields {
    const uint8_t *frame;
    size_t at, end;
    const char *name;
};

struct field {
    uint16_t tag;
    uint32_t length;
    const uint8_t *value;
    size_t offset; /* of the field's tag, from the start of the frame */
};

/* 1: a field in *f; 0: no more fields; -1: truncated. */
static int next(struct fields *run, struct field *f) {
    if (run->at == run->end) return 0;
    if (run->end - run->at < 6)
        return bad("truncated field in %s at offset %zu: %zu bytes left, a field header is 6", run->name, run->at,
                   run->end - run->at);
    f->offset = run->at;
    f->tag = (uint16_t)get_le(run->frame + run->at, 2);
    f->length = (uint32_t)get_le(run->frame + run->at + 2, 4);
    if (f->length > run->end - run->at - 6)
        return bad("truncated field in %s at offset %zu: tag %u says %u bytes, %zu remain", run->name, run->at, f->tag,
                   f->length, run->end - run->at - 6);
    f->value = run->frame + run->at + 6;
    run->at += 6 + (size_t)f->length;
    return 1;
}

static struct fields inside(const struct fields *outer, const struct field *f, const char *name) {
    size_t start = f->offset + 6;
    return (struct fields){outer->frame, start, start + f->length, name};
}

/* Number of bytes in the UTF-8 sequence starting at p[0..n), or 0 when it is not valid. */
static size_t utf8_sequence(const uint8_t *p, size_t n) {
    uint8_t b = p[0];
    size_t len;
    uint32_t cp;
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) {
        len = 2;
        cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        cp = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        cp = b & 0x07;
    } else
        return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    /* No overlong forms, no surrogates, nothing past U+10FFFF. */
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
    return len;
}

static int is_text(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t len = p[i] == 0 ? 0 : utf8_sequence(p + i, n - i);
        if (len == 0) return 0;
        i += len;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Section 5 as tables: for each structure, its tags, their kinds and how often they appear.  */

/* A field's kind: its fixed size in bytes (1, 4 or 8), or one of these. */
enum { TEXT = -1, DATA = -2, NESTED = -3 };

struct rule {
    uint16_t tag;
    int kind;
    unsigned most; /* 1: at most once; more: repeated up to this many */
    int required; /* at least once */
    const char *name;
};

static const struct rule hello_rules[] = {
    {1, 4, 1, 1, "protocolVersion"},
    {2, TEXT, 1, 1, "bundleIdentifier"},
    {3, 4, 1, 1, "pid"},
};
static const struct rule refusal_rules[] = {
    {1, TEXT, 1, 1, "reason"},
    {2, TEXT, 1, 0, "message"},
    {3, 8, 1, 0, "requestID"},
    {4, TEXT, 64, 0, "detail"},
};
static const struct rule ping_rules[] = {{1, 8, 1, 1, "sequence"}};
static const struct rule memory_warning_rules[] = {{1, 1, 1, 1, "level"}};
static const struct rule will_expire_rules[] = {{1, 8, 1, 1, "requestID"}, {2, 4, 1, 1, "millisecondsLeft"}};
static const struct rule terminate_rules[] = {{1, TEXT, 1, 1, "reason"}, {2, 4, 1, 0, "graceMilliseconds"}};
static const struct rule cancel_rules[] = {{1, 8, 1, 1, "requestID"}, {2, NESTED, 1, 1, "error"}};
static const struct rule error_rules[] = {
    {1, TEXT, 1, 1, "domain"},
    {2, 8, 1, 1, "code"},
    {3, TEXT, 1, 0, "message"},
};
static const struct rule begin_rules[] = {{1, 8, 1, 1, "requestID"}, {2, NESTED, MAX_ITEMS, 0, "item"}};
static const struct rule item_rules[] = {
    {1, TEXT, 1, 0, "attributedTitle"},
    {2, TEXT, 1, 0, "attributedContentText"},
    {3, NESTED, MAX_ATTACHMENTS, 0, "attachment"},
    {4, NESTED, MAX_USER_INFO, 0, "userInfo"},
};
static const struct rule attachment_rules[] = {
    {1, TEXT, MAX_TYPE_IDS, 1, "typeIdentifier"},
    {2, DATA, 1, 0, "inlineData"},
    {3, 4, 1, 0, "fdIndex"},
    {4, TEXT, 1, 0, "suggestedName"},
};
static const struct rule user_info_rules[] = {
    {1, TEXT, 1, 1, "key"}, {2, TEXT, 1, 0, "string"}, {3, 8, 1, 0, "integer"},
    {4, 1, 1, 0, "bool"},   {5, 8, 1, 0, "double"},    {6, DATA, 1, 0, "data"},
};
#define MOST_RULES 6

/* Checks the fields of `run` against `rules`: unknown tags (an error below 0x8000, skipped
 * from there up), sizes, UTF-8, how often each appears. first[i] is the first field that
 * matched rules[i] (value NULL when there is none). Nested fields are the caller's to check. */
static int check_fields(struct fields run, const struct rule *rules, size_t count, struct field *first) {
    unsigned times[MOST_RULES] = {0};
    struct field f;
    int r;
    memset(first, 0, count * sizeof *first);
    while ((r = next(&run, &f)) == 1) {
        size_t i = 0;
        while (i < count && rules[i].tag != f.tag) i++;
        if (i == count) {
            if (f.tag < 0x8000) return bad("unknown tag %u in %s at offset %zu", f.tag, run.name, f.offset);
            continue;
        }
        const struct rule *rule = &rules[i];
        if (++times[i] > rule->most)
            return rule->most == 1 ? bad("%s.%s appears twice, again at offset %zu", run.name, rule->name, f.offset)
                                   : bad("%s has more than %u %s fields", run.name, rule->most, rule->name);
        if (rule->kind > 0 && f.length != (uint32_t)rule->kind)
            return bad("bad-field-length in %s.%s at offset %zu: value is %u bytes, this field is %d", run.name,
                       rule->name, f.offset, f.length, rule->kind);
        if (rule->kind == TEXT && !is_text(f.value, f.length))
            return bad("bad-string in %s.%s at offset %zu: invalid UTF-8 or a NUL byte", run.name, rule->name,
                       f.offset);
        if (times[i] == 1) first[i] = f;
    }
    if (r < 0) return -1;
    for (size_t i = 0; i < count; i++)
        if (rules[i].required && times[i] == 0) return bad("%s.%s is required and missing", run.name, rules[i].name);
    return 0;
}

#define CHECK(run, rules, first) check_fields(run, rules, sizeof rules / sizeof *rules, first)

/* The next field with `tag` in a run check_fields has already passed. */
static int each(struct fields *run, uint16_t tag, struct field *f) {
    while (next(run, f) == 1)
        if (f->tag == tag) return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* BeginRequest: the one message with structure inside.                                         */

/* What a BeginRequest means to this extension: its id and where its input is. */
struct request {
    uint64_t id;
    /* The input: the first item's content text, else its first attachment. */
    struct field content_text; /* value NULL when there is none */
    int has_attachment;
    struct field inline_data;
    int attachment_fd; /* index of its descriptor, or -1 for inline data */
    uint32_t fds_named; /* a bit per descriptor index an attachment names */
};

/* Exactly one of inlineData and fdIndex; every descriptor named by exactly one attachment. */
static int check_attachment(struct fields run, int descriptors, struct request *req, struct field *first) {
    if (CHECK(run, attachment_rules, first)) return -1;
    if (!first[1].value == !first[2].value) return bad("%s must have exactly one of inlineData and fdIndex", run.name);
    if (!first[2].value) return 0;
    uint32_t index = (uint32_t)get_le(first[2].value, 4);
    if (index >= (uint32_t)descriptors)
        return bad("bad descriptor index in %s.fdIndex at offset %zu: %u, the frame has %d descriptors", run.name,
                   first[2].offset, index, descriptors);
    if (req->fds_named & (1u << index))
        return bad("bad descriptor index in %s.fdIndex at offset %zu: descriptor %u is used twice", run.name,
                   first[2].offset, index);
    req->fds_named |= 1u << index;
    return 0;
}

/* A key and exactly one value (tags 2 to 6); the key in *key. */
static int check_user_info(struct fields run, struct field *key) {
    struct field first[6];
    if (CHECK(run, user_info_rules, first)) return -1;
    int values = 0;
    for (int i = 1; i < 6; i++) values += first[i].value != NULL;
    if (values != 1) return bad("%s has %d values, exactly one of tags 2 to 6 is required", run.name, values);
    if (first[3].value && first[3].value[0] > 1)
        return bad("bad bool in %s at offset %zu: %u", run.name, first[3].offset, first[3].value[0]);
    *key = first[0];
    return 0;
}

static int parse_item(struct fields run, int descriptors, struct request *req, int first_item) {
    struct field first[4], f, attachment[4], keys[MAX_USER_INFO];
    int entries = 0;
    if (CHECK(run, item_rules, first)) return -1;
    if (first_item) req->content_text = first[1];
    for (struct fields walk = run; each(&walk, 3, &f);) {
        if (check_attachment(inside(&walk, &f, "Item.attachment"), descriptors, req, attachment)) return -1;
        if (first_item && !req->has_attachment) {
            req->has_attachment = 1;
            req->inline_data = attachment[1];
            req->attachment_fd = attachment[2].value ? (int)get_le(attachment[2].value, 4) : -1;
        }
    }
    for (struct fields walk = run; each(&walk, 4, &f);) {
        struct field key;
        if (check_user_info(inside(&walk, &f, "Item.userInfo"), &key)) return -1;
        for (int i = 0; i < entries; i++)
            if (keys[i].length == key.length && memcmp(keys[i].value, key.value, key.length) == 0)
                return bad("%s.userInfo key \"%.*s\" appears twice", run.name, (int)key.length, key.value);
        keys[entries++] = key;
    }
    return 0;
}

static int parse_begin_request(struct fields run, int descriptors, struct request *req) {
    struct field first[2], f;
    memset(req, 0, sizeof *req);
    req->attachment_fd = -1;
    if (CHECK(run, begin_rules, first)) return -1;
    req->id = get_le(first[0].value, 8);
    int items = 0;
    for (struct fields walk = run; each(&walk, 2, &f); items++)
        if (parse_item(inside(&walk, &f, "BeginRequest.item"), descriptors, req, items == 0)) return -1;
    if (req->fds_named != (1u << descriptors) - 1)
        return bad("BeginRequest: %d descriptors arrived and not every one is named by an attachment", descriptors);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The extension's own work.                                                                    */

/* "hello from C: " and the input reversed by code point (the input is valid UTF-8). */
static char *greeting(const uint8_t *input, size_t n) {
    size_t prefix = strlen(PREFIX);
    char *out = malloc(prefix + n + 1);
    if (!out) return NULL;
    memcpy(out, PREFIX, prefix);
    size_t end = prefix + n;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_sequence(input + i, n - i);
        end -= len;
        memcpy(out + end, input + i, len);
        i += len;
    }
    out[prefix + n] = 0;
    return out;
}

/* Up to MAX_ATTACHMENT_TEXT bytes from the descriptor, from its current offset. */
static ssize_t read_attachment(int fd, uint8_t *buffer) {
    size_t got = 0;
    while (got < MAX_ATTACHMENT_TEXT) {
        ssize_t n = read(fd, buffer + got, MAX_ATTACHMENT_TEXT - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static int send_cancel(int sock, uint64_t id, int64_t code, const char *message) {
    static struct frame_out out;
    begin_frame(&out, MSG_CANCEL_REQUEST);
    add_integer(&out, 1, id, 8);
    size_t error = open_nested(&out, 2);
    add_string(&out, 1, ERROR_DOMAIN);
    add_integer(&out, 2, (uint64_t)code, 8);
    add_string(&out, 3, message);
    close_nested(&out, error);
    return send_frame(sock, &out);
}

/* Answers one request: CompleteRequest with the greeting, or CancelRequest when the input is
 * not text or the answer would not fit in a frame. */
static int answer(int sock, const struct request *req, const int *fds) {
    static struct frame_out out;
    static uint8_t attachment[MAX_ATTACHMENT_TEXT];
    const uint8_t *input = (const uint8_t *)"";
    size_t length = 0;
    if (req->content_text.value) {
        input = req->content_text.value;
        length = req->content_text.length;
    } else if (req->has_attachment && req->attachment_fd < 0) {
        input = req->inline_data.value;
        length = req->inline_data.length;
    } else if (req->has_attachment) {
        ssize_t n = read_attachment(fds[req->attachment_fd], attachment);
        if (n < 0) return send_cancel(sock, req->id, errno, "cannot read the attachment's descriptor");
        input = attachment;
        length = (size_t)n;
    }
    if (!is_text(input, length)) return send_cancel(sock, req->id, 1, "the input is not UTF-8 text");

    char *reply = greeting(input, length);
    if (!reply) return send_cancel(sock, req->id, ENOMEM, "out of memory");
    begin_frame(&out, MSG_COMPLETE_REQUEST);
    add_integer(&out, 1, req->id, 8);
    size_t item = open_nested(&out, 2);
    add_string(&out, 2, reply); /* attributedContentText */
    close_nested(&out, item);
    free(reply);
    if (out.too_big) return send_cancel(sock, req->id, 2, "the answer does not fit in one frame");
    return send_frame(sock, &out);
}

/* ------------------------------------------------------------------------------------------ */
/* The connection.                                                                              */

static void close_all(const int *fds, int n) {
    for (int i = 0; i < n; i++) close(fds[i]);
}

/* Section 8: say why, without blocking, and give up on the connection. */
static int protocol_error(int sock) {
    static struct frame_out out;
    fprintf(stderr, "hello-c: %s: %s\n", refusal_reason, problem);
    /* vsnprintf may have cut the text inside a character; the message must be UTF-8. */
    size_t length = strlen(problem);
    while (length > 0 && !is_text((const uint8_t *)problem, length)) length--;
    begin_frame(&out, MSG_REFUSAL);
    add_string(&out, 1, refusal_reason);
    add_bytes(&out, 2, problem, length);
    if (!out.too_big) {
        set_le(out.bytes + 12, out.length - HEADER_SIZE, 4);
        (void)send(sock, out.bytes, out.length, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close(sock);
    return 1;
}

/* The connection's state, for the sequence rules of section 6. */
struct session {
    int sock;
    int checked_in; /* appexd's Hello has arrived */
    uint64_t last_request; /* the highest request id begun so far */
};

/* Handles one frame. Returns 0 to go on, 1 to stop with exit status 0, -1 on a protocol
 * error, -2 on a Refusal or a failed send (problem says which). */
static int handle(struct session *s, uint16_t type, struct fields payload, const int *fds, int nfds) {
    if (nfds > 0 && type != MSG_BEGIN_REQUEST)
        return bad("message type 0x%02x carries %d descriptors; only BeginRequest may", type, nfds);
    if (!s->checked_in && type != MSG_HELLO && type != MSG_REFUSAL)
        return bad("message type 0x%02x before appexd's Hello", type);

    struct field first[MOST_RULES], error[3];
    uint64_t id;
    switch (type) {
    case MSG_HELLO: {
        if (s->checked_in) return bad("a second Hello");
        if (CHECK(payload, hello_rules, first)) return -1;
        uint32_t version = (uint32_t)get_le(first[0].value, 4);
        if (version != PROTOCOL_VERSION) {
            refusal_reason = "version-mismatch";
            return bad("appexd speaks protocol version %u, this extension %d", version, PROTOCOL_VERSION);
        }
        s->checked_in = 1;
        return 0;
    }
    case MSG_REFUSAL:
        if (CHECK(payload, refusal_rules, first)) return -1;
        bad("appexd refused: %.*s%s%.*s", (int)first[0].length, (const char *)first[0].value,
            first[1].value ? ": " : "", (int)first[1].length, first[1].value ? (const char *)first[1].value : "");
        return -2;
    case MSG_PING: {
        static struct frame_out out;
        if (CHECK(payload, ping_rules, first)) return -1;
        begin_frame(&out, MSG_PONG);
        add_bytes(&out, 1, first[0].value, 8); /* the same sequence */
        return send_frame(s->sock, &out) ? -2 : 0;
    }
    case MSG_BEGIN_REQUEST: {
        struct request req;
        if (parse_begin_request(payload, nfds, &req)) return -1;
        if (req.id <= s->last_request)
            return bad("BeginRequest %llu after request %llu: ids must increase", (unsigned long long)req.id,
                       (unsigned long long)s->last_request);
        s->last_request = req.id;
        return answer(s->sock, &req, fds) ? -2 : 0;
    }
    case MSG_CANCEL_REQUEST:
    case MSG_REQUEST_WILL_EXPIRE:
        if (type == MSG_CANCEL_REQUEST
                ? CHECK(payload, cancel_rules, first) ||
                      CHECK(inside(&payload, &first[1], "CancelRequest.error"), error_rules, error)
                : CHECK(payload, will_expire_rules, first))
            return -1;
        /* Every request is answered at once, so these can only be stale (section 6): ignore
         * them, unless they name a request that never began. */
        id = get_le(first[0].value, 8);
        if (id == 0 || id > s->last_request)
            return bad("message type 0x%02x names request %llu, which never began", type, (unsigned long long)id);
        return 0;
    case MSG_MEMORY_WARNING:
        if (CHECK(payload, memory_warning_rules, first)) return -1;
        if (first[0].value[0] != 1 && first[0].value[0] != 2)
            return bad("bad MemoryWarning.level at offset %zu: %u (1 or 2)", first[0].offset, first[0].value[0]);
        return 0; /* nothing cached, nothing to free */
    case MSG_TERMINATE: return CHECK(payload, terminate_rules, first) ? -1 : 1;
    case MSG_PONG: return bad("a Pong, and this extension sent no Ping");
    case MSG_OPEN_URL_RESULT: return bad("an OpenURLResult, and this extension sent no OpenURL");
    default: return bad("message type 0x%02x is not one appexd sends on an extension channel", type);
    }
}

/* Checks the header of a received record (section 2). Returns the type, or -1. */
static int check_header(const uint8_t *frame, size_t n, int nfds) {
    if (n < HEADER_SIZE) return bad("a %zu-byte record, shorter than the %d-byte header", n, HEADER_SIZE);
    if (memcmp(frame, "APXW", 4) != 0) return bad("bad magic at offset 0");
    if (get_le(frame + 4, 2) != FRAME_FORMAT)
        return bad("unknown frame format %u at offset 4", (unsigned)get_le(frame + 4, 2));
    if (get_le(frame + 8, 2) != 0) return bad("reserved flags 0x%04x at offset 8", (unsigned)get_le(frame + 8, 2));
    if (get_le(frame + 10, 2) != (uint64_t)nfds)
        return bad("header announces %u descriptors at offset 10, %d arrived", (unsigned)get_le(frame + 10, 2), nfds);
    if (get_le(frame + 12, 4) != n - HEADER_SIZE)
        return bad("payload length %u at offset 12, the record has %zu bytes after the header",
                   (unsigned)get_le(frame + 12, 4), n - HEADER_SIZE);
    return (int)get_le(frame + 6, 2);
}

static int send_hello(int sock, const char *bundle_identifier) {
    static struct frame_out out;
    begin_frame(&out, MSG_HELLO);
    add_integer(&out, 1, PROTOCOL_VERSION, 4);
    add_string(&out, 2, bundle_identifier);
    add_integer(&out, 3, (uint32_t)getpid(), 4);
    return send_frame(sock, &out);
}

int main(void) {
    const char *fd_text = getenv("APPEX_SOCKET_FD");
    const char *bundle_identifier = getenv("APPEX_BUNDLE_IDENTIFIER");
    char *end = NULL;
    long fd = fd_text ? strtol(fd_text, &end, 10) : 3;
    if (fd_text && (*fd_text == 0 || *end != 0 || fd < 0 || fd > 65535)) {
        fprintf(stderr, "hello-c: APPEX_SOCKET_FD=\"%s\" is not a descriptor number\n", fd_text);
        return 2;
    }
    if (!bundle_identifier || !*bundle_identifier ||
        !is_text((const uint8_t *)bundle_identifier, strlen(bundle_identifier))) {
        fprintf(stderr, "hello-c: APPEX_BUNDLE_IDENTIFIER is not set (appexd sets it to the bundle's identifier)\n");
        return 2;
    }
    int type = 0;
    socklen_t size = sizeof type;
    if (getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_SEQPACKET) {
        fprintf(stderr, "hello-c: fd %ld is not a SOCK_SEQPACKET socket (start me from appexd)\n", fd);
        return 2;
    }
    /* Our own children, if we had any, must not inherit the channel. */
    if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "hello-c: fcntl(F_SETFD) on fd %ld: %s\n", fd, strerror(errno));
        return 2;
    }
    struct session s = {.sock = (int)fd};
    if (send_hello(s.sock, bundle_identifier)) {
        fprintf(stderr, "hello-c: cannot check in: %s\n", problem);
        return 1;
    }

    static uint8_t frame[MAX_FRAME];
    for (;;) {
        char control[CMSG_SPACE((MAX_FDS + 1) * sizeof(int))];
        struct iovec iov = {frame, sizeof frame};
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
        ssize_t n = recvmsg(s.sock, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            fprintf(stderr, "hello-c: recvmsg: %s\n", strerror(errno));
            return 1;
        }
        if (n == 0) return 0; /* appexd closed the connection (or sent an empty record: the same) */

        int fds[MAX_FDS + 1], nfds = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && nfds <= MAX_FDS; i++)
                    memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));

        int result;
        if (msg.msg_flags & MSG_TRUNC)
            result = bad("a record larger than %d bytes", MAX_FRAME);
        else if (msg.msg_flags & MSG_CTRUNC || nfds > MAX_FDS)
            result = bad("more than %d descriptors with one frame", MAX_FDS);
        else if ((type = check_header(frame, (size_t)n, nfds)) < 0)
            result = -1;
        else {
            static const char *names[] = {[MSG_HELLO] = "Hello",
                                          [MSG_REFUSAL] = "Refusal",
                                          [MSG_PING] = "Ping",
                                          [MSG_BEGIN_REQUEST] = "BeginRequest",
                                          [MSG_CANCEL_REQUEST] = "CancelRequest",
                                          [MSG_MEMORY_WARNING] = "MemoryWarning",
                                          [MSG_REQUEST_WILL_EXPIRE] = "RequestWillExpire",
                                          [MSG_TERMINATE] = "Terminate"};
            const char *name = type < (int)(sizeof names / sizeof *names) && names[type] ? names[type] : "message";
            struct fields payload = {frame, HEADER_SIZE, (size_t)n, name};
            result = handle(&s, (uint16_t)type, payload, fds, nfds);
        }
        close_all(fds, nfds); /* this extension keeps no descriptor past its answer */
        if (result == 1) return 0;
        if (result == -1) return protocol_error(s.sock);
        if (result == -2) {
            fprintf(stderr, "hello-c: %s\n", problem);
            return 1;
        }
    }
}
