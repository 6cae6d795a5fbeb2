/*
 * A libappex extension for LibAppexDaemonTests: it answers each request after sleeping the
 * number of seconds its content text names, on its only application thread. Started under a
 * name ending in "-threaded" it checks in with APPEX_PINGS_ON_THREAD (pings answered by the
 * library's thread meanwhile); under any other name pings wait for its loop.
 */
#include <appex.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    (void)argc;
    size_t n = strlen(argv[0]);
    int threaded = n >= 9 && strcmp(argv[0] + n - 9, "-threaded") == 0;
    appex_extension *ext;
    appex_error err;
    if (appex_extension_open(&ext, threaded ? APPEX_PINGS_ON_THREAD : 0, &err) < 0) {
        fprintf(stderr, "lib-test: %s\n", err.message);
        return 1;
    }
    for (;;) {
        struct pollfd p = {.fd = appex_extension_fd(ext), .events = POLLIN};
        (void)poll(&p, 1, -1);
        appex_message *m;
        int r = appex_extension_next(ext, &m, 0, &err);
        if (r == APPEX_NEXT_NOTHING) continue;
        if (r != APPEX_NEXT_MESSAGE) break;
        if (m->type == APPEX_BEGIN_REQUEST) {
            const char *text = m->item_count ? m->items[0].content_text : NULL;
            sleep(text ? (unsigned)atoi(text) : 0);
            appex_item reply = {.content_text = threaded ? "answered, pings on a thread" : "answered"};
            if (appex_extension_complete(ext, m->request_id, &reply, 1, &err) < 0)
                fprintf(stderr, "lib-test: %s\n", err.message);
        }
        int stop = m->type == APPEX_TERMINATE;
        appex_message_free(m);
        if (stop) break;
    }
    appex_extension_close(ext);
    return 0;
}
