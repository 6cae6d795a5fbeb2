/* Attachments as `appex request` builds them (Docs/protocol.md, "What appex request sends"). */
#include "internal.h"

#include <string.h>
#include <strings.h>

static const char *const url_types[] = {"public.url"};

void appex_attachment_url(appex_attachment *a, const char *url) {
    memset(a, 0, sizeof *a);
    a->type_identifiers = url_types;
    a->type_identifier_count = 1;
    a->inline_data.data = (const uint8_t *)url;
    a->inline_data.length = strlen(url);
    a->fd = -1;
}

/* A name's extension and its type identifiers, public.data last. */
static const struct {
    const char *extension;
    const char *const types[4];
    size_t count;
} by_extension[] = {
    {"txt", {"public.plain-text", "public.text", "public.data"}, 3},
    {"md", {"net.daringfireball.markdown", "public.plain-text", "public.data"}, 3},
    {"jpg", {"public.jpeg", "public.image", "public.data"}, 3},
    {"jpeg", {"public.jpeg", "public.image", "public.data"}, 3},
    {"png", {"public.png", "public.image", "public.data"}, 3},
    {"gif", {"com.compuserve.gif", "public.image", "public.data"}, 3},
    {"pdf", {"com.adobe.pdf", "public.data"}, 2},
    {"html", {"public.html", "public.text", "public.data"}, 3},
    {"json", {"public.json", "public.text", "public.data"}, 3},
};

static const char *const data_types[] = {"public.data"};

void appex_attachment_file(appex_attachment *a, int fd, const char *suggested_name) {
    memset(a, 0, sizeof *a);
    a->fd = fd;
    a->suggested_name = suggested_name;
    a->type_identifiers = data_types;
    a->type_identifier_count = 1;
    const char *dot = suggested_name ? strrchr(suggested_name, '.') : NULL;
    if (!dot) return;
    for (size_t i = 0; i < sizeof by_extension / sizeof *by_extension; i++)
        if (strcasecmp(dot + 1, by_extension[i].extension) == 0) {
            a->type_identifiers = by_extension[i].types;
            a->type_identifier_count = by_extension[i].count;
            return;
        }
}
