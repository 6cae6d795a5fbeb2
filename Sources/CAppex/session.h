/* Check-in and the requests in flight, shared by the extension and host sides. */
#ifndef APPEX_SESSION_H
#define APPEX_SESSION_H

#include "internal.h"

/* Sends Hello (protocol 1, identifier, pid). */
int appex_session_hello(int sock, const char *identifier, appex_error *err);
/* Reads appexd's answer to Hello: 0 on its Hello, else -1 (a Refusal's reason in err; a
 * protocol fault is refused back before returning). */
int appex_session_await_hello(int sock, enum appex_role role, appex_error *err);

/* Requests begun and not answered, with the OpenURLs awaiting a result for each. */
struct appex_book {
    struct {
        uint64_t id;
        int urls;
    } open[APPEX_MAX_IN_FLIGHT];
    int count;
    uint64_t last; /* the highest id begun */
};

int appex_book_find(const struct appex_book *b, uint64_t id);
int appex_book_add(struct appex_book *b, uint64_t id);
void appex_book_remove(struct appex_book *b, int index);
/* The index of request `id`; -1 when it ended (a stale message); -2 with err when it never
 * began (an error). */
int appex_book_lookup(const struct appex_book *b, uint64_t id, const char *what, appex_error *err);

#endif
