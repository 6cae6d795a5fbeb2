/*
 * appex-host-c: a host in C on libappex (Docs/libappex.md). Sends one request through appexd
 * and prints what came back:
 *
 *   appex-host-c [--socket PATH] BUNDLE_ID [--text T] [--url U] [--file F] [--band N]
 *
 * One item: the texts joined by newlines as its content text, every URL then every file as
 * attachments (as `appex request` builds them). Prints each returned item, then the outcome;
 * answers an OpenURL with "not opened". Exit status 0 when the request completed, 1 when it
 * was cancelled, failed or refused, 2 for a usage error, 3 when appexd could not be reached.
 */
#include <appex.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOST 16

static void print_item(size_t index, const appex_item *item) {
    printf("item %zu\n", index);
    if (item->title) printf("  title: %s\n", item->title);
    if (item->content_text) printf("  contentText: %s\n", item->content_text);
    for (size_t i = 0; i < item->attachment_count; i++) {
        const appex_attachment *a = &item->attachments[i];
        printf("  attachment %zu: %s", i, a->type_identifier_count ? a->type_identifiers[0] : "?");
        if (a->fd >= 0)
            printf(" (descriptor)\n");
        else
            printf(" %.*s\n", (int)a->inline_data.length, (const char *)a->inline_data.data);
    }
}

static int usage(void) {
    fprintf(stderr, "usage: appex-host-c [--socket PATH] BUNDLE_ID [--text T] [--url U] [--file F] [--band N]\n");
    return 2;
}

int main(int argc, char **argv) {
    const char *socket_path = NULL, *bundle = NULL, *texts[MOST], *urls[MOST], *files[MOST];
    size_t text_count = 0, url_count = 0, file_count = 0;
    int band = -1;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--socket") == 0 && value)
            socket_path = argv[++i];
        else if (strcmp(argv[i], "--text") == 0 && value && text_count < MOST)
            texts[text_count++] = argv[++i];
        else if (strcmp(argv[i], "--url") == 0 && value && url_count < MOST)
            urls[url_count++] = argv[++i];
        else if (strcmp(argv[i], "--file") == 0 && value && file_count < MOST)
            files[file_count++] = argv[++i];
        else if (strcmp(argv[i], "--band") == 0 && value)
            band = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !bundle)
            bundle = argv[i];
        else
            return usage();
    }
    if (!bundle || url_count + file_count > MOST) return usage();

    /* The content text: the texts joined by newlines. */
    size_t length = 1;
    for (size_t i = 0; i < text_count; i++) length += strlen(texts[i]) + 1;
    char *content = calloc(1, length);
    for (size_t i = 0; content && i < text_count; i++) {
        if (i) strcat(content, "\n");
        strcat(content, texts[i]);
    }
    appex_attachment attachments[MOST];
    size_t count = 0;
    for (size_t i = 0; i < url_count; i++) appex_attachment_url(&attachments[count++], urls[i]);
    for (size_t i = 0; i < file_count; i++) {
        int fd = open(files[i], O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "appex-host-c: %s is not a readable regular file\n", files[i]);
            return 2;
        }
        const char *name = strrchr(files[i], '/');
        appex_attachment_file(&attachments[count++], fd, name ? name + 1 : files[i]);
    }
    appex_item item = {
        .content_text = text_count ? content : NULL, .attachments = attachments, .attachment_count = count};

    appex_host *host;
    appex_error err;
    if (appex_host_connect(&host, socket_path, "dev.appex.examples.host-c", &err) < 0) {
        fprintf(stderr, "appex-host-c: %s: %s\n", err.reason, err.message);
        return 3;
    }
    uint64_t id;
    if (appex_host_begin(host, bundle, &item, 1, band, &id, &err) < 0) {
        fprintf(stderr, "appex-host-c: %s\n", err.message);
        return 2;
    }
    int status = 1;
    for (;;) {
        appex_message *m;
        int r = appex_host_next(host, &m, -1, &err);
        if (r == APPEX_NEXT_NOTHING) continue;
        if (r != APPEX_NEXT_MESSAGE) {
            fprintf(stderr, "appex-host-c: %s\n",
                    r == APPEX_NEXT_CLOSED ? "appexd closed the connection" : err.message);
            break;
        }
        int done = 0;
        if (m->type == APPEX_OPEN_URL) {
            printf("openURL: %s (not opened)\n", m->url);
            if (appex_host_open_url_result(host, id, 0, &err) < 0) fprintf(stderr, "appex-host-c: %s\n", err.message);
        } else if (m->type == APPEX_INTERRUPTION) {
            printf("interrupted: %s%s%s\n", m->reason, m->message ? ": " : "", m->message ? m->message : "");
        } else if (m->type == APPEX_REFUSAL) {
            printf("refused: %s%s%s\n", m->reason, m->message ? ": " : "", m->message ? m->message : "");
            done = 1;
        } else if (m->type == APPEX_REQUEST_OUTCOME) {
            for (size_t i = 0; i < m->item_count; i++) print_item(i, &m->items[i]);
            printf("outcome: %s", appex_outcome_name(m->outcome));
            if (m->reason) printf(" (%s)", m->reason);
            if (m->error)
                printf(" error %s %lld%s%s", m->error->domain, (long long)m->error->code, m->error->message ? ": " : "",
                       m->error->message ? m->error->message : "");
            printf("%s\n", m->cold ? " cold" : "");
            status = m->outcome == APPEX_COMPLETED ? 0 : 1;
            done = 1;
        }
        appex_message_free(m);
        if (done) break;
    }
    appex_host_close(host);
    for (size_t i = 0; i < count; i++)
        if (attachments[i].fd >= 0) close(attachments[i].fd);
    free(content);
    return status;
}
