/* The encoder: a frame built in one buffer, nested fields patched with their length when
 * closed. Faults (too big, a string that is not UTF-8, a count over its limit) are noted as it
 * goes and reported once by appex_frame_finish, so building code need not check each step. */
#include "internal.h"

#include <string.h>

static void append(struct appex_frame *f, const void *data, size_t n) {
    if (f->too_big || n > APPEX_MAX_FRAME - f->length) {
        f->too_big = true;
        return;
    }
    if (n) memcpy(f->bytes + f->length, data, n);
    f->length += n;
}

static void append_le(struct appex_frame *f, uint64_t v, int size) {
    uint8_t le[8];
    appex_set_le(le, v, size);
    append(f, le, (size_t)size);
}

void appex_frame_begin(struct appex_frame *f, uint16_t type) {
    f->length = 0;
    f->too_big = f->bad_text = f->too_many = false;
    f->fd_count = 0;
    append(f, "APXW", 4);
    append_le(f, APPEX_FRAME_FORMAT, 2);
    append_le(f, type, 2);
    append_le(f, 0, 2); /* flags */
    append_le(f, 0, 2); /* fd count, set by finish */
    append_le(f, 0, 4); /* payload length, set by finish */
}

void appex_frame_bytes(struct appex_frame *f, uint16_t tag, const void *value, size_t n) {
    if (n > UINT32_MAX) {
        f->too_big = true;
        return;
    }
    append_le(f, tag, 2);
    append_le(f, n, 4);
    append(f, value, n);
}

void appex_frame_string(struct appex_frame *f, uint16_t tag, const char *s) {
    size_t n = strlen(s);
    if (!appex_is_text((const uint8_t *)s, n)) f->bad_text = true;
    appex_frame_bytes(f, tag, s, n);
}

void appex_frame_int(struct appex_frame *f, uint16_t tag, uint64_t v, int size) {
    append_le(f, tag, 2);
    append_le(f, (uint64_t)size, 4);
    append_le(f, v, size);
}

size_t appex_frame_open(struct appex_frame *f, uint16_t tag) {
    append_le(f, tag, 2);
    size_t at = f->length;
    append_le(f, 0, 4);
    return at;
}

void appex_frame_close(struct appex_frame *f, size_t at) {
    if (!f->too_big) appex_set_le(f->bytes + at, f->length - at - 4, 4);
}

void appex_frame_error(struct appex_frame *f, uint16_t tag, const char *domain, int64_t code, const char *message) {
    size_t at = appex_frame_open(f, tag);
    appex_frame_string(f, 1, domain ? domain : "");
    appex_frame_int(f, 2, (uint64_t)code, 8);
    if (message) appex_frame_string(f, 3, message);
    appex_frame_close(f, at);
}

static void attachment(struct appex_frame *f, const appex_attachment *a) {
    size_t at = appex_frame_open(f, 3);
    if (a->type_identifier_count < 1 || a->type_identifier_count > APPEX_MAX_TYPE_IDS) f->too_many = true;
    for (size_t i = 0; i < a->type_identifier_count && i < APPEX_MAX_TYPE_IDS; i++)
        appex_frame_string(f, 1, a->type_identifiers[i]);
    if (a->fd >= 0) {
        if (f->fd_count == APPEX_MAX_FDS)
            f->too_many = true;
        else {
            appex_frame_int(f, 3, (uint64_t)f->fd_count, 4);
            f->fds[f->fd_count++] = a->fd;
        }
    } else {
        appex_frame_bytes(f, 2, a->inline_data.data, a->inline_data.length);
    }
    if (a->suggested_name) appex_frame_string(f, 4, a->suggested_name);
    appex_frame_close(f, at);
}

static void user_info(struct appex_frame *f, const appex_user_info *u) {
    size_t at = appex_frame_open(f, 4);
    appex_frame_string(f, 1, u->key ? u->key : "");
    switch (u->kind) {
    case APPEX_USER_INFO_STRING: appex_frame_string(f, 2, u->string ? u->string : ""); break;
    case APPEX_USER_INFO_INTEGER: appex_frame_int(f, 3, (uint64_t)u->integer, 8); break;
    case APPEX_USER_INFO_BOOL: appex_frame_int(f, 4, u->boolean ? 1 : 0, 1); break;
    case APPEX_USER_INFO_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &u->number, 8);
        appex_frame_int(f, 5, bits, 8);
        break;
    }
    case APPEX_USER_INFO_DATA: appex_frame_bytes(f, 6, u->data.data, u->data.length); break;
    default: f->too_many = true; /* no such kind: refuse to send */
    }
    appex_frame_close(f, at);
}

void appex_frame_items(struct appex_frame *f, uint16_t tag, const appex_item *items, size_t count) {
    if (count > APPEX_MAX_ITEMS) {
        f->too_many = true;
        return;
    }
    for (size_t i = 0; i < count; i++) {
        const appex_item *item = &items[i];
        size_t at = appex_frame_open(f, tag);
        if (item->title) appex_frame_string(f, 1, item->title);
        if (item->content_text) appex_frame_string(f, 2, item->content_text);
        if (item->attachment_count > APPEX_MAX_ATTACHMENTS || item->user_info_count > APPEX_MAX_USER_INFO)
            f->too_many = true;
        else {
            for (size_t j = 0; j < item->attachment_count; j++) attachment(f, &item->attachments[j]);
            for (size_t j = 0; j < item->user_info_count; j++) user_info(f, &item->user_info[j]);
        }
        appex_frame_close(f, at);
    }
}

int appex_frame_finish(struct appex_frame *f, appex_error *err) {
    if (f->too_big)
        return appex_fail(err, "usage", "the message does not fit in a %d-byte frame (send bulk data as a descriptor)",
                          APPEX_MAX_FRAME);
    if (f->bad_text) return appex_fail(err, "usage", "a string to send is not UTF-8 or holds a NUL byte");
    if (f->too_many)
        return appex_fail(
            err, "usage",
            "a count over the protocol's limits (items, attachments, type identifiers 1-16, user info, descriptors)");
    appex_set_le(f->bytes + 10, (uint64_t)f->fd_count, 2);
    appex_set_le(f->bytes + 12, f->length - APPEX_HEADER_SIZE, 4);
    return 0;
}
