/* The decoder: one frame into an appex_message, every rule of Docs/protocol.md sections 2, 3
 * and 5 checked, written as one table per structure. It reads only inside the frame it is
 * given and allocates at most a bounded multiple of the frame's size. */
#include "internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A value's type (section 2). */
enum kind { K_U8 = 1, K_BOOL, K_U32, K_I32, K_U64, K_I64, K_F64, K_STRING, K_BYTES, K_NESTED };

struct schema;

/* One tag of a structure. A field that may repeat (most > 1) is stored as an array: a pointer
 * at `offset` and a size_t count at `count_at`. One that may not is stored at `offset`, and
 * its presence as an int at `count_at` (NONE: not recorded). */
struct rule {
    uint16_t tag;
    uint8_t kind;
    uint8_t required;
    uint16_t most;
    const char *name;
    size_t offset;
    ptrdiff_t count_at;
    const struct schema *nested;
};

#define NONE ((ptrdiff_t)-1)

struct decoder;

struct schema {
    const char *name;
    size_t size; /* of the struct a nested field of this schema fills */
    const struct rule *rules;
    size_t count;
    /* Checks across fields once all are in; NULL: none. */
    int (*check)(struct decoder *d, void *object, const char *path, size_t offset);
};

struct decoder {
    const uint8_t *frame;
    struct appex_arena *arena;
    appex_error *err;
};

static int malformed(struct decoder *d, const char *kind, const char *path, size_t offset, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

static int malformed(struct decoder *d, const char *kind, const char *path, size_t offset, const char *format, ...) {
    char detail[300];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    return appex_fail(d->err, "protocol-error", "%s in %s at offset %zu: %s", kind, path, offset, detail);
}

static int fixed_size(int kind) {
    switch (kind) {
    case K_U8:
    case K_BOOL: return 1;
    case K_U32:
    case K_I32: return 4;
    case K_U64:
    case K_I64:
    case K_F64: return 8;
    default: return 0;
    }
}

static size_t element_size(const struct rule *r) {
    return r->kind == K_NESTED ? r->nested->size : r->kind == K_STRING ? sizeof(const char *) : 0;
}

/* ---- the tables ---- */

#define M(field) offsetof(appex_message, field)
#define ONE(tag, kind, req, name, field, present)                                                                      \
    { tag, kind, req, 1, name, M(field), present, NULL }
#define HAS(field) (ptrdiff_t) M(field)

static int check_attachment(struct decoder *d, void *object, const char *path, size_t offset);
static int check_user_info(struct decoder *d, void *object, const char *path, size_t offset);
static int check_item(struct decoder *d, void *object, const char *path, size_t offset);
static int check_outcome(struct decoder *d, void *object, const char *path, size_t offset);
static int check_memory_warning(struct decoder *d, void *object, const char *path, size_t offset);

/* appex_attachment has `fd` as an int: the decoder puts the descriptor index there, or -1. */
struct attachment_wire {
    appex_attachment a;
    uint32_t fd_index;
    int has_fd_index;
    int has_inline;
};

static const struct rule attachment_rules[] = {
    {1, K_STRING, 1, APPEX_MAX_TYPE_IDS, "typeIdentifier", offsetof(appex_attachment, type_identifiers),
     offsetof(appex_attachment, type_identifier_count), NULL},
    {2, K_BYTES, 0, 1, "inlineData", offsetof(appex_attachment, inline_data),
     offsetof(struct attachment_wire, has_inline), NULL},
    {3, K_U32, 0, 1, "fdIndex", offsetof(struct attachment_wire, fd_index),
     offsetof(struct attachment_wire, has_fd_index), NULL},
    {4, K_STRING, 0, 1, "suggestedName", offsetof(appex_attachment, suggested_name), NONE, NULL},
};
static const struct schema attachment_schema = {
    "attachment", sizeof(struct attachment_wire), attachment_rules, 4, check_attachment,
};

/* Which value tags an entry had, as a bit each. */
struct user_info_wire {
    appex_user_info u;
    int has[7];
};

static const struct rule user_info_rules[] = {
    {1, K_STRING, 1, 1, "key", offsetof(appex_user_info, key), NONE, NULL},
    {2, K_STRING, 0, 1, "string", offsetof(appex_user_info, string), offsetof(struct user_info_wire, has[2]), NULL},
    {3, K_I64, 0, 1, "integer", offsetof(appex_user_info, integer), offsetof(struct user_info_wire, has[3]), NULL},
    {4, K_BOOL, 0, 1, "bool", offsetof(appex_user_info, boolean), offsetof(struct user_info_wire, has[4]), NULL},
    {5, K_F64, 0, 1, "double", offsetof(appex_user_info, number), offsetof(struct user_info_wire, has[5]), NULL},
    {6, K_BYTES, 0, 1, "data", offsetof(appex_user_info, data), offsetof(struct user_info_wire, has[6]), NULL},
};
static const struct schema user_info_schema = {
    "userInfo", sizeof(struct user_info_wire), user_info_rules, 6, check_user_info,
};

static const struct rule item_rules[] = {
    {1, K_STRING, 0, 1, "attributedTitle", offsetof(appex_item, title), NONE, NULL},
    {2, K_STRING, 0, 1, "attributedContentText", offsetof(appex_item, content_text), NONE, NULL},
    {3, K_NESTED, 0, APPEX_MAX_ATTACHMENTS, "attachment", offsetof(appex_item, attachments),
     offsetof(appex_item, attachment_count), &attachment_schema},
    {4, K_NESTED, 0, APPEX_MAX_USER_INFO, "userInfo", offsetof(appex_item, user_info),
     offsetof(appex_item, user_info_count), &user_info_schema},
};
static const struct schema item_schema = {"item", sizeof(appex_item), item_rules, 4, check_item};

static const struct rule error_rules[] = {
    {1, K_STRING, 1, 1, "domain", offsetof(appex_error_value, domain), NONE, NULL},
    {2, K_I64, 1, 1, "code", offsetof(appex_error_value, code), NONE, NULL},
    {3, K_STRING, 0, 1, "message", offsetof(appex_error_value, message), NONE, NULL},
};
static const struct schema error_schema = {"error", sizeof(appex_error_value), error_rules, 3, NULL};

static const struct rule phase_rules[] = {
    {1, K_STRING, 1, 1, "name", offsetof(appex_phase, name), NONE, NULL},
    {2, K_U64, 1, 1, "microseconds", offsetof(appex_phase, microseconds), NONE, NULL},
};
static const struct schema phase_schema = {"phase", sizeof(appex_phase), phase_rules, 2, NULL};

#define ITEMS(tag)                                                                                                     \
    { tag, K_NESTED, 0, APPEX_MAX_ITEMS, "item", M(items), HAS(item_count), &item_schema }
#define REQUEST_ID ONE(1, K_U64, 1, "requestID", request_id, HAS(has_request_id))
#define ERROR(tag, req)                                                                                                \
    { tag, K_NESTED, req, 1, "error", M(error), NONE, &error_schema }

static const struct rule hello_rules[] = {
    ONE(1, K_U32, 1, "protocolVersion", protocol_version, NONE),
    ONE(2, K_STRING, 1, "bundleIdentifier", bundle_identifier, NONE),
    ONE(3, K_I32, 1, "pid", pid, NONE),
};
static const struct rule refusal_rules[] = {
    ONE(1, K_STRING, 1, "reason", reason, NONE),
    ONE(2, K_STRING, 0, "message", message, NONE),
    ONE(3, K_U64, 0, "requestID", request_id, HAS(has_request_id)),
    {4, K_STRING, 0, APPEX_MAX_DETAILS, "detail", M(details), HAS(detail_count), NULL},
};
static const struct rule ping_rules[] = {ONE(1, K_U64, 1, "sequence", sequence, NONE)};
static const struct rule items_rules[] = {REQUEST_ID, ITEMS(2)};
static const struct rule cancel_rules[] = {REQUEST_ID, ERROR(2, 1)};
static const struct rule open_url_rules[] = {REQUEST_ID, ONE(2, K_STRING, 1, "url", url, NONE)};
static const struct rule open_url_result_rules[] = {REQUEST_ID, ONE(2, K_BOOL, 1, "accepted", accepted, NONE)};
static const struct rule memory_warning_rules[] = {ONE(1, K_U8, 1, "level", level, NONE)};
static const struct rule will_expire_rules[] = {
    REQUEST_ID,
    ONE(2, K_U32, 1, "millisecondsLeft", milliseconds, HAS(has_milliseconds)),
};
static const struct rule terminate_rules[] = {
    ONE(1, K_STRING, 1, "reason", reason, NONE),
    ONE(2, K_U32, 0, "graceMilliseconds", milliseconds, HAS(has_milliseconds)),
};
static const struct rule host_begin_rules[] = {
    REQUEST_ID,
    ONE(2, K_STRING, 1, "bundleIdentifier", bundle_identifier, NONE),
    ITEMS(3),
    ONE(4, K_U32, 0, "band", band, HAS(has_band)),
};
static const struct rule outcome_rules[] = {
    REQUEST_ID,
    ONE(2, K_U8, 1, "outcome", outcome, NONE),
    ITEMS(3),
    ERROR(4, 0),
    ONE(5, K_STRING, 0, "reason", reason, NONE),
    ONE(6, K_BOOL, 0, "cold", cold, NONE),
    {7, K_NESTED, 0, APPEX_MAX_PHASES, "phase", M(phases), HAS(phase_count), &phase_schema},
    ONE(8, K_U64, 0, "peakMemoryBytes", peak_memory_bytes, HAS(has_peak_memory_bytes)),
};
static const struct rule host_cancel_rules[] = {REQUEST_ID};
static const struct rule interruption_rules[] = {
    REQUEST_ID,
    ONE(2, K_STRING, 1, "bundleIdentifier", bundle_identifier, NONE),
    ONE(3, K_STRING, 1, "reason", reason, NONE),
    ONE(4, K_STRING, 0, "message", message, NONE),
    ONE(5, K_I32, 0, "signal", signal, HAS(has_signal)),
    ONE(6, K_U32, 0, "band", band, HAS(has_band)),
    ONE(7, K_U64, 0, "footprintBytes", footprint_bytes, HAS(has_footprint_bytes)),
    ONE(8, K_U64, 0, "triggerToDeathMicros", trigger_to_death_micros, HAS(has_trigger_to_death_micros)),
};

#define SCHEMA(name, rules, check)                                                                                     \
    { name, sizeof(appex_message), rules, sizeof rules / sizeof *rules, check }

/* The messages, and which role may receive each (a bit per role). */
#define EXT (1u << APPEX_ROLE_EXTENSION)
#define HOST (1u << APPEX_ROLE_HOST)
#define SUP (1u << APPEX_ROLE_SUPERVISOR_)

static const struct message_kind {
    uint16_t type;
    unsigned receivers;
    bool carries_items;
    struct schema schema;
} messages[] = {
    {APPEX_HELLO, EXT | HOST | SUP, false, SCHEMA("Hello", hello_rules, NULL)},
    {APPEX_REFUSAL, EXT | HOST | SUP, false, SCHEMA("Refusal", refusal_rules, NULL)},
    {APPEX_PING, EXT | HOST | SUP, false, SCHEMA("Ping", ping_rules, NULL)},
    {APPEX_PONG, EXT | HOST | SUP, false, SCHEMA("Pong", ping_rules, NULL)},
    {APPEX_BEGIN_REQUEST, EXT, true, SCHEMA("BeginRequest", items_rules, NULL)},
    {APPEX_COMPLETE_REQUEST, SUP, true, SCHEMA("CompleteRequest", items_rules, NULL)},
    {APPEX_CANCEL_REQUEST, EXT | SUP, false, SCHEMA("CancelRequest", cancel_rules, NULL)},
    {APPEX_OPEN_URL, HOST | SUP, false, SCHEMA("OpenURL", open_url_rules, NULL)},
    {APPEX_OPEN_URL_RESULT, EXT | SUP, false, SCHEMA("OpenURLResult", open_url_result_rules, NULL)},
    {APPEX_MEMORY_WARNING, EXT, false, SCHEMA("MemoryWarning", memory_warning_rules, check_memory_warning)},
    {APPEX_REQUEST_WILL_EXPIRE, EXT, false, SCHEMA("RequestWillExpire", will_expire_rules, NULL)},
    {APPEX_TERMINATE, EXT, false, SCHEMA("Terminate", terminate_rules, NULL)},
    {APPEX_HOST_BEGIN_REQUEST, SUP, true, SCHEMA("HostBeginRequest", host_begin_rules, NULL)},
    {APPEX_REQUEST_OUTCOME, HOST, true, SCHEMA("RequestOutcome", outcome_rules, check_outcome)},
    {APPEX_HOST_CANCEL_REQUEST, SUP, false, SCHEMA("HostCancelRequest", host_cancel_rules, NULL)},
    {APPEX_INTERRUPTION, HOST, false, SCHEMA("Interruption", interruption_rules, NULL)},
};

/* ---- walking fields ---- */

struct field {
    uint16_t tag;
    uint32_t length;
    size_t offset; /* of the tag, from the frame's start */
};

/* 1: a field in *f; 0: the end; -1: truncated. */
static int next_field(struct decoder *d, size_t *at, size_t end, const char *path, struct field *f) {
    if (*at == end) return 0;
    if (end - *at < 6)
        return malformed(d, "truncated-field", path, *at, "%zu bytes left, a field header is 6", end - *at);
    f->offset = *at;
    f->tag = (uint16_t)appex_get_le(d->frame + *at, 2);
    f->length = (uint32_t)appex_get_le(d->frame + *at + 2, 4);
    if (f->length > end - *at - 6)
        return malformed(d, "truncated-field", path, *at, "tag %u says %u bytes, %zu remain", f->tag, f->length,
                         end - *at - 6);
    *at += 6 + (size_t)f->length;
    return 1;
}

static const struct rule *find_rule(const struct schema *s, uint16_t tag, size_t *index) {
    for (size_t i = 0; i < s->count; i++)
        if (s->rules[i].tag == tag) {
            *index = i;
            return &s->rules[i];
        }
    return NULL;
}

static int decode_struct(struct decoder *d, const struct schema *s, size_t start, size_t end, void *object,
                         const char *path);

/* Stores one value of rule r, which is at f, into `slot`. */
static int store(struct decoder *d, const struct rule *r, const struct field *f, void *slot, const char *path) {
    const uint8_t *value = d->frame + f->offset + 6;
    char inner[160];
    snprintf(inner, sizeof inner, "%s.%s", path, r->name);
    switch (r->kind) {
    case K_U8: *(uint8_t *)slot = value[0]; return 0;
    case K_BOOL:
        if (value[0] > 1) return malformed(d, "bad-bool", inner, f->offset, "%u (0 or 1)", value[0]);
        *(int *)slot = value[0];
        return 0;
    case K_U32: *(uint32_t *)slot = (uint32_t)appex_get_le(value, 4); return 0;
    case K_I32: *(int32_t *)slot = (int32_t)(uint32_t)appex_get_le(value, 4); return 0;
    case K_U64: *(uint64_t *)slot = appex_get_le(value, 8); return 0;
    case K_I64: *(int64_t *)slot = (int64_t)appex_get_le(value, 8); return 0;
    case K_F64: {
        uint64_t bits = appex_get_le(value, 8);
        memcpy(slot, &bits, 8);
        return 0;
    }
    case K_STRING: {
        if (!appex_is_text(value, f->length))
            return malformed(d, "bad-string", inner, f->offset, "invalid UTF-8 or a NUL byte");
        char *copy = appex_arena_alloc(d->arena, (size_t)f->length + 1);
        if (!copy) return appex_fail(d->err, "io", "out of memory decoding %s", inner);
        memcpy(copy, value, f->length);
        *(const char **)slot = copy;
        return 0;
    }
    case K_BYTES:
        ((appex_bytes *)slot)->data = value;
        ((appex_bytes *)slot)->length = f->length;
        return 0;
    case K_NESTED: {
        void *object = slot;
        if (r->most == 1) { /* a single nested structure: stored by pointer */
            object = appex_arena_alloc(d->arena, r->nested->size);
            if (!object) return appex_fail(d->err, "io", "out of memory decoding %s", inner);
            *(void **)slot = object;
        }
        return decode_struct(d, r->nested, f->offset + 6, f->offset + 6 + f->length, object, inner);
    }
    }
    return appex_fail(d->err, "usage", "libappex: no kind %d", r->kind);
}

#define MOST_RULES 8

static int decode_struct(struct decoder *d, const struct schema *s, size_t start, size_t end, void *object,
                         const char *path) {
    size_t times[MOST_RULES] = {0};
    struct field f;
    size_t at = start, index;
    int r;
    if (s->count > MOST_RULES)
        return appex_fail(d->err, "usage", "libappex: schema %s has more than %d tags", s->name, MOST_RULES);
    /* First pass: tags, counts, sizes. */
    while ((r = next_field(d, &at, end, path, &f)) == 1) {
        const struct rule *rule = find_rule(s, f.tag, &index);
        if (!rule) {
            if (f.tag < 0x8000) return malformed(d, "unknown-tag", path, f.offset, "tag %u", f.tag);
            continue;
        }
        if (++times[index] > rule->most) {
            if (rule->most == 1) return malformed(d, "duplicate-field", path, f.offset, "%s appears twice", rule->name);
            return malformed(d, "too-many", path, f.offset, "more than %u %s fields", rule->most, rule->name);
        }
        int size = fixed_size(rule->kind);
        if (size && f.length != (uint32_t)size)
            return malformed(d, "bad-field-length", path, f.offset, "%s is %u bytes, this field is %d", rule->name,
                             f.length, size);
    }
    if (r < 0) return -1;
    char *base = object;
    for (size_t i = 0; i < s->count; i++) {
        const struct rule *rule = &s->rules[i];
        if (rule->required && times[i] == 0)
            return malformed(d, "missing-field", path, start, "%s is required", rule->name);
        if (rule->most > 1 && times[i] > 0) {
            void *array = appex_arena_alloc(d->arena, times[i] * element_size(rule));
            if (!array) return appex_fail(d->err, "io", "out of memory decoding %s", path);
            *(void **)(base + rule->offset) = array;
        }
        if (rule->count_at != NONE) {
            if (rule->most > 1)
                *(size_t *)(base + rule->count_at) = times[i];
            else
                *(int *)(base + rule->count_at) = times[i] > 0;
        }
    }
    /* Second pass: values, in order. */
    size_t filled[MOST_RULES] = {0};
    at = start;
    while (next_field(d, &at, end, path, &f) == 1) {
        const struct rule *rule = find_rule(s, f.tag, &index);
        if (!rule) continue;
        void *slot = base + rule->offset;
        if (rule->most > 1) slot = (char *)*(void **)slot + filled[index]++ * element_size(rule);
        if (store(d, rule, &f, slot, path) < 0) return -1;
    }
    return s->check ? s->check(d, object, path, start) : 0;
}

/* ---- checks across fields ---- */

static int check_attachment(struct decoder *d, void *object, const char *path, size_t offset) {
    struct attachment_wire *w = object;
    if (w->has_inline == w->has_fd_index)
        return malformed(d, "bad-attachment", path, offset, "exactly one of inlineData and fdIndex is required");
    w->a.fd = w->has_fd_index ? (int)(w->fd_index > APPEX_MAX_FDS ? APPEX_MAX_FDS : w->fd_index) : -1;
    return 0;
}

static int check_user_info(struct decoder *d, void *object, const char *path, size_t offset) {
    struct user_info_wire *w = object;
    int values = 0;
    for (int tag = 2; tag <= 6; tag++)
        if (w->has[tag]) {
            values++;
            w->u.kind = tag;
        }
    if (values != 1) return malformed(d, "bad-user-info", path, offset, "%d values, exactly one is required", values);
    return 0;
}

/* Keys unique within the item; the wire structs become the public ones (same leading layout). */
static int check_item(struct decoder *d, void *object, const char *path, size_t offset) {
    appex_item *item = object;
    const struct user_info_wire *entries = (const struct user_info_wire *)item->user_info;
    for (size_t i = 0; i < item->user_info_count; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(entries[i].u.key, entries[j].u.key) == 0)
                return malformed(d, "duplicate-key", path, offset, "userInfo key \"%s\" appears twice",
                                 entries[i].u.key);
    /* Compact the arrays into the public element types. */
    if (item->user_info_count) {
        appex_user_info *plain = appex_arena_alloc(d->arena, item->user_info_count * sizeof *plain);
        if (!plain) return appex_fail(d->err, "io", "out of memory decoding %s", path);
        for (size_t i = 0; i < item->user_info_count; i++) plain[i] = entries[i].u;
        item->user_info = plain;
    }
    if (item->attachment_count) {
        const struct attachment_wire *wires = (const struct attachment_wire *)item->attachments;
        appex_attachment *plain = appex_arena_alloc(d->arena, item->attachment_count * sizeof *plain);
        if (!plain) return appex_fail(d->err, "io", "out of memory decoding %s", path);
        for (size_t i = 0; i < item->attachment_count; i++) plain[i] = wires[i].a;
        item->attachments = plain;
    }
    return 0;
}

static int check_outcome(struct decoder *d, void *object, const char *path, size_t offset) {
    appex_message *m = object;
    if (m->outcome < APPEX_COMPLETED || m->outcome > APPEX_FAILED)
        return malformed(d, "bad-enum", path, offset, "outcome %u (1, 2 or 3)", m->outcome);
    for (size_t i = 0; i < m->phase_count; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->phases[i].name, m->phases[j].name) == 0)
                return malformed(d, "duplicate-phase", path, offset, "phase \"%s\" appears twice", m->phases[i].name);
    return 0;
}

static int check_memory_warning(struct decoder *d, void *object, const char *path, size_t offset) {
    appex_message *m = object;
    if (m->level != 1 && m->level != 2) return malformed(d, "bad-enum", path, offset, "level %u (1 or 2)", m->level);
    return 0;
}

/* Every descriptor named by exactly one attachment (section 2). */
static int check_descriptors(struct decoder *d, appex_message *m, int fd_count, const char *path) {
    uint32_t named = 0;
    for (size_t i = 0; i < m->item_count; i++)
        for (size_t j = 0; j < m->items[i].attachment_count; j++) {
            int index = m->items[i].attachments[j].fd;
            if (index < 0) continue;
            if (index >= fd_count)
                return malformed(d, "bad-descriptor-index", path, APPEX_HEADER_SIZE,
                                 "items[%zu].attachments[%zu] names descriptor %d, the frame has %d", i, j, index,
                                 fd_count);
            if (named & (1u << index))
                return malformed(d, "bad-descriptor-index", path, APPEX_HEADER_SIZE, "descriptor %d is named twice",
                                 index);
            named |= 1u << index;
        }
    if (named != (fd_count ? (1u << fd_count) - 1 : 0))
        return malformed(d, "unused-descriptor", path, APPEX_HEADER_SIZE,
                         "%d descriptors arrived and not every one is named by an attachment", fd_count);
    return 0;
}

/* ---- the entry point ---- */

void appex_message_free(appex_message *m) {
    if (!m) return;
    for (int i = 0; i < m->fd_count; i++)
        if (m->fds[i] >= 0) close(m->fds[i]);
    appex_arena_free(m->storage_);
}

int appex_message_take_fd(appex_message *m, int fd) {
    for (int i = 0; m && fd >= 0 && i < m->fd_count; i++)
        if (m->fds[i] == fd) {
            m->fds[i] = -1;
            return fd;
        }
    return -1;
}

/* Points b at a copy of its bytes in the arena; false when out of memory. */
static bool own_bytes(struct appex_arena *arena, appex_bytes *b) {
    if (b->length == 0) {
        b->data = NULL;
        return true;
    }
    uint8_t *copy = appex_arena_alloc(arena, b->length);
    if (!copy) return false;
    memcpy(copy, b->data, b->length);
    b->data = copy;
    return true;
}

int appex_decode(const uint8_t *frame, size_t length, int fd_count, enum appex_role role, appex_message **out,
                 appex_error *err) {
    *out = NULL;
    if (!frame && length) return appex_fail(err, "usage", "appex_decode: no frame");
    if (role != APPEX_ROLE_EXTENSION && role != APPEX_ROLE_HOST && role != APPEX_ROLE_SUPERVISOR_)
        return appex_fail(err, "usage", "appex_decode: unknown role %d", (int)role);
    if (length < APPEX_HEADER_SIZE)
        return appex_fail(err, "protocol-error", "truncated-header: a %zu-byte record, the header is %d", length,
                          APPEX_HEADER_SIZE);
    if (length > APPEX_MAX_FRAME)
        return appex_fail(err, "protocol-error", "oversized-frame: %zu bytes, the limit is %d", length,
                          APPEX_MAX_FRAME);
    if (memcmp(frame, "APXW", 4) != 0) return appex_fail(err, "protocol-error", "bad-magic at offset 0");
    unsigned format = (unsigned)appex_get_le(frame + 4, 2);
    if (format != APPEX_FRAME_FORMAT)
        return appex_fail(err, "protocol-error", "unknown-format %u at offset 4 (this library reads %d)", format,
                          APPEX_FRAME_FORMAT);
    uint16_t type = (uint16_t)appex_get_le(frame + 6, 2);
    unsigned flags = (unsigned)appex_get_le(frame + 8, 2);
    if (flags) return appex_fail(err, "protocol-error", "reserved-flags 0x%04x at offset 8", flags);
    unsigned announced = (unsigned)appex_get_le(frame + 10, 2);
    if (announced > APPEX_MAX_FDS || fd_count < 0 || fd_count > APPEX_MAX_FDS)
        return appex_fail(err, "protocol-error", "too-many-descriptors: more than %d with one frame", APPEX_MAX_FDS);
    if (announced != (unsigned)fd_count)
        return appex_fail(err, "protocol-error", "descriptor-count at offset 10: the header says %u, %d arrived",
                          announced, fd_count);
    uint32_t payload = (uint32_t)appex_get_le(frame + 12, 4);
    if (payload != length - APPEX_HEADER_SIZE)
        return appex_fail(err, "protocol-error",
                          "bad-payload-length at offset 12: %u, the record has %zu after the header", payload,
                          length - APPEX_HEADER_SIZE);
    const struct message_kind *kind = NULL;
    for (size_t i = 0; i < sizeof messages / sizeof *messages; i++)
        if (messages[i].type == type) kind = &messages[i];
    if (!kind) return appex_fail(err, "protocol-error", "unknown-type 0x%02x at offset 6", type);
    if (!(kind->receivers & (1u << role)))
        return appex_fail(err, "protocol-error", "wrong-direction: %s (0x%02x) is not sent to this end",
                          kind->schema.name, type);
    if (fd_count > 0 && !kind->carries_items)
        return appex_fail(err, "protocol-error", "descriptors-not-allowed: %s carries %d descriptors",
                          kind->schema.name, fd_count);

    struct appex_arena *arena = appex_arena_new();
    appex_message *m = arena ? appex_arena_alloc(arena, sizeof *m) : NULL;
    if (!m) {
        appex_arena_free(arena);
        return appex_fail(err, "io", "out of memory decoding a %zu-byte frame", length);
    }
    m->storage_ = arena;
    m->type = type;
    for (int i = 0; i < APPEX_MAX_FDS; i++) m->fds[i] = -1;
    struct decoder d = {frame, arena, err};
    if (decode_struct(&d, &kind->schema, APPEX_HEADER_SIZE, length, m, kind->schema.name) < 0 ||
        (kind->carries_items && check_descriptors(&d, m, fd_count, kind->schema.name) < 0)) {
        appex_arena_free(arena);
        return -1;
    }
    /* Byte values point into the frame, which the caller may reuse: copy them. */
    bool copied = true;
    for (size_t i = 0; i < m->item_count; i++) {
        appex_item *item = (appex_item *)&m->items[i];
        for (size_t j = 0; j < item->attachment_count; j++)
            copied &= own_bytes(arena, &((appex_attachment *)&item->attachments[j])->inline_data);
        for (size_t j = 0; j < item->user_info_count; j++)
            copied &= own_bytes(arena, &((appex_user_info *)&item->user_info[j])->data);
    }
    if (!copied) {
        appex_arena_free(arena);
        return appex_fail(err, "io", "out of memory decoding a %zu-byte frame", length);
    }
    *out = m;
    return 0;
}
