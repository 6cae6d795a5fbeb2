/* Errors as values, the arena decoded messages live in, UTF-8, outcome names. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_reason(appex_error *err, const char *reason) {
    snprintf(err->reason, sizeof err->reason, "%s", reason);
}

/* Cuts the message back to whole characters: it may be sent in a Refusal, which is UTF-8. */
static void trim_to_text(appex_error *err) {
    size_t n = strlen(err->message);
    while (n > 0 && !appex_is_text((const uint8_t *)err->message, n)) err->message[--n] = 0;
}

int appex_fail(appex_error *err, const char *reason, const char *format, ...) {
    if (!err) return -1;
    va_list args;
    va_start(args, format);
    vsnprintf(err->message, sizeof err->message, format, args);
    va_end(args);
    put_reason(err, reason);
    err->errnum = 0;
    trim_to_text(err);
    return -1;
}

int appex_fail_errno(appex_error *err, int errnum, const char *format, ...) {
    if (!err) return -1;
    char what[300];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    snprintf(err->message, sizeof err->message, "%s: %s", what, strerror(errnum));
    put_reason(err, "io");
    err->errnum = errnum;
    trim_to_text(err);
    return -1;
}

/* A chain of blocks; a request larger than a block gets a block of its own. */
#define BLOCK 16384

struct block {
    struct block *next;
    size_t used, size;
    max_align_t data[];
};

struct appex_arena {
    struct block *head;
};

struct appex_arena *appex_arena_new(void) {
    return calloc(1, sizeof(struct appex_arena));
}

void *appex_arena_alloc(struct appex_arena *arena, size_t size) {
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (size == 0) size = sizeof(max_align_t);
    struct block *b = arena->head;
    if (!b || b->size - b->used < size) {
        size_t capacity = size > BLOCK ? size : BLOCK;
        b = calloc(1, sizeof *b + capacity);
        if (!b) return NULL;
        b->size = capacity;
        b->next = arena->head;
        arena->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    return p;
}

void appex_arena_free(struct appex_arena *arena) {
    if (!arena) return;
    for (struct block *b = arena->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(arena);
}

size_t appex_utf8_sequence(const uint8_t *p, size_t n) {
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
    /* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
    return len;
}

bool appex_is_text(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t len = p[i] == 0 ? 0 : appex_utf8_sequence(p + i, n - i);
        if (len == 0) return false;
        i += len;
    }
    return true;
}

const char *appex_outcome_name(int outcome) {
    switch (outcome) {
    case APPEX_COMPLETED: return "completed";
    case APPEX_CANCELLED: return "cancelled";
    case APPEX_FAILED: return "failed";
    default: return "unknown";
    }
}
