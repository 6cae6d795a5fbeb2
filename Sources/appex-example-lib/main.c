/*
 * hello-lib: HelloC's twin built on libappex (Docs/libappex.md). Same behaviour: every request
 * is answered with one item whose content text is "hello from libappex: " and the input
 * reversed by code point; the input is the first item's content text, else its first
 * attachment's bytes (inline, or up to 4 KiB read from the descriptor). Input that is not
 * UTF-8 is answered with CancelRequest in domain dev.appex.examples.hello-lib.
 *
 * The loop is the application's own: it polls appex_extension_fd and calls
 * appex_extension_next when it is readable, which answers pings on the way. The protocol
 * itself (framing, checks, sequence rules, refusals) is all in the library.
 */
#include <appex.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREFIX "hello from libappex: "
#define DOMAIN "dev.appex.examples.hello-lib"
#define MAX_ATTACHMENT_TEXT 4096

/* Length of the UTF-8 sequence at p (the input was checked to be UTF-8). */
static size_t sequence_length(unsigned char b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

static int is_utf8(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t len = sequence_length(p[i]);
        if (p[i] == 0 || (p[i] >= 0x80 && p[i] < 0xC2) || p[i] > 0xF4 || len > n - i) return 0;
        for (size_t k = 1; k < len; k++)
            if ((p[i + k] & 0xC0) != 0x80) return 0;
        /* No overlong three- and four-byte forms, no surrogates, nothing past U+10FFFF. */
        if ((p[i] == 0xE0 && p[i + 1] < 0xA0) || (p[i] == 0xED && p[i + 1] >= 0xA0) ||
            (p[i] == 0xF0 && p[i + 1] < 0x90) || (p[i] == 0xF4 && p[i + 1] >= 0x90))
            return 0;
        i += len;
    }
    return 1;
}

static char *greeting(const unsigned char *input, size_t n) {
    size_t prefix = strlen(PREFIX);
    char *out = malloc(prefix + n + 1);
    if (!out) return NULL;
    memcpy(out, PREFIX, prefix);
    size_t end = prefix + n;
    for (size_t i = 0; i < n;) {
        size_t len = sequence_length(input[i]);
        end -= len;
        memcpy(out + end, input + i, len);
        i += len;
    }
    out[prefix + n] = 0;
    return out;
}

static ssize_t read_up_to(int fd, unsigned char *buffer, size_t size) {
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buffer + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static int answer(appex_extension *ext, const appex_message *request, appex_error *err) {
    static unsigned char buffer[MAX_ATTACHMENT_TEXT];
    const unsigned char *input = (const unsigned char *)"";
    size_t length = 0;
    if (request->item_count > 0) {
        const appex_item *item = &request->items[0];
        if (item->content_text) {
            input = (const unsigned char *)item->content_text;
            length = strlen(item->content_text);
        } else if (item->attachment_count > 0 && item->attachments[0].fd < 0) {
            input = item->attachments[0].inline_data.data;
            length = item->attachments[0].inline_data.length;
        } else if (item->attachment_count > 0) {
            ssize_t n = read_up_to(item->attachments[0].fd, buffer, sizeof buffer);
            if (n < 0)
                return appex_extension_cancel(ext, request->request_id, DOMAIN, errno, "cannot read the attachment",
                                              err);
            input = buffer;
            length = (size_t)n;
        }
    }
    if (!is_utf8(input, length))
        return appex_extension_cancel(ext, request->request_id, DOMAIN, 1, "the input is not UTF-8 text", err);
    char *text = greeting(input, length);
    if (!text) return appex_extension_cancel(ext, request->request_id, DOMAIN, ENOMEM, "out of memory", err);
    appex_item reply = {.content_text = text};
    int r = appex_extension_complete(ext, request->request_id, &reply, 1, err);
    if (r < 0 && strcmp(err->reason, "usage") == 0) /* too big for one frame */
        r = appex_extension_cancel(ext, request->request_id, DOMAIN, 2, err->message, err);
    free(text);
    return r;
}

int main(void) {
    appex_extension *ext;
    appex_error err;
    if (appex_extension_open(&ext, 0, &err) < 0) {
        fprintf(stderr, "hello-lib: cannot check in: %s: %s\n", err.reason, err.message);
        return strcmp(err.reason, "usage") == 0 ? 2 : 1;
    }
    for (;;) {
        struct pollfd p = {.fd = appex_extension_fd(ext), .events = POLLIN};
        if (poll(&p, 1, -1) < 0 && errno != EINTR) break;
        appex_message *m;
        int r = appex_extension_next(ext, &m, 0, &err);
        if (r == APPEX_NEXT_NOTHING) continue;
        if (r == APPEX_NEXT_CLOSED) break;
        if (r == APPEX_NEXT_ERROR) {
            fprintf(stderr, "hello-lib: %s: %s\n", err.reason, err.message);
            appex_extension_close(ext);
            return 1;
        }
        int stop = m->type == APPEX_TERMINATE;
        if (m->type == APPEX_BEGIN_REQUEST && answer(ext, m, &err) < 0) {
            fprintf(stderr, "hello-lib: answering request %llu: %s\n", (unsigned long long)m->request_id, err.message);
            stop = 1;
        }
        /* CancelRequest, RequestWillExpire, MemoryWarning: every request is answered at once,
         * nothing is cached. */
        appex_message_free(m);
        if (stop) break;
    }
    appex_extension_close(ext);
    return 0;
}
