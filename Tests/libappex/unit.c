/* libappex's own tests: the codec against the page's rules, and both sides over real
 * SOCK_SEQPACKET sockets with this program playing appexd. `make test-libappex` runs it
 * under AddressSanitizer and UndefinedBehaviorSanitizer. Exit status 0: every check held. */
#define _GNU_SOURCE
#include "../../Sources/CAppex/internal.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int failures;
#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

static struct appex_frame f;

/* With LIBAPPEX_SEEDS set, every frame built here is also written there: seeds for
 * `make fuzz-libappex`. */
static void keep_seed(void) {
    static int count;
    const char *dir = getenv("LIBAPPEX_SEEDS");
    if (!dir) return;
    char path[512];
    snprintf(path, sizeof path, "%s/unit-%03d", dir, count++);
    FILE *out = fopen(path, "wb");
    if (out) {
        fwrite(f.bytes, 1, f.length, out);
        fclose(out);
    }
}

static void finish(void) {
    appex_error err;
    if (appex_frame_finish(&f, &err) < 0) {
        fprintf(stderr, "finish: %s\n", err.message);
        exit(2);
    }
    keep_seed();
}

/* Decodes f as `role` and expects a protocol error whose message contains `needle`. */
static void expect_refused(enum appex_role role, int fds, const char *needle, const char *what) {
    appex_message *m;
    appex_error err;
    int r = appex_decode(f.bytes, f.length, fds, role, &m, &err);
    EXPECT(r < 0, "%s: decoded", what);
    if (r < 0)
        EXPECT(strstr(err.message, needle) && strcmp(err.reason, "protocol-error") == 0, "%s: %s: %s, wanted %s", what,
               err.reason, err.message, needle);
    else
        appex_message_free(m);
}

static void documented_hello(void) {
    static const uint8_t expected[55] = {
        0x41, 0x50, 0x58, 0x57, 1,   0,   1,   0, 0, 0,  0, 0, 0x27, 0,    0,    0,   1,   0,   4,
        0,    0,    0,    1,    0,   0,   0,   2, 0, 13, 0, 0, 0,    'c',  'o',  'm', '.', 'e', 'x',
        'a',  'm',  'p',  'l',  'e', '.', 'c', 3, 0, 4,  0, 0, 0,    0xd2, 0x04, 0,   0,
    };
    appex_frame_begin(&f, APPEX_HELLO);
    appex_frame_int(&f, 1, 1, 4);
    appex_frame_string(&f, 2, "com.example.c");
    appex_frame_int(&f, 3, 1234, 4);
    finish();
    EXPECT(f.length == 55 && memcmp(f.bytes, expected, 55) == 0, "the documented Hello frame");
}

static void round_trip(void) {
    const char *types[] = {"public.plain-text", "public.text"};
    appex_attachment attachments[2] = {
        {.type_identifiers = types,
         .type_identifier_count = 2,
         .inline_data = {(const uint8_t *)"inline", 6},
         .fd = -1,
         .suggested_name = "a.txt"},
        {.type_identifiers = types, .type_identifier_count = 1, .fd = 0},
    };
    appex_user_info info[3] = {
        {.key = "s", .kind = APPEX_USER_INFO_STRING, .string = "välue"},
        {.key = "n", .kind = APPEX_USER_INFO_INTEGER, .integer = -7},
        {.key = "d", .kind = APPEX_USER_INFO_DOUBLE, .number = 2.5},
    };
    appex_item item = {.title = "T",
                       .content_text = "héllo",
                       .attachments = attachments,
                       .attachment_count = 2,
                       .user_info = info,
                       .user_info_count = 3};
    appex_frame_begin(&f, APPEX_COMPLETE_REQUEST);
    appex_frame_int(&f, 1, 9, 8);
    appex_frame_items(&f, 2, &item, 1);
    finish();
    EXPECT(f.fd_count == 1, "one descriptor collected");
    appex_message *m;
    appex_error err;
    int r = appex_decode(f.bytes, f.length, 1, APPEX_ROLE_SUPERVISOR_, &m, &err);
    EXPECT(r == 0, "round trip: %s", err.message);
    if (r != 0) return;
    EXPECT(m->request_id == 9 && m->item_count == 1, "id and items");
    const appex_item *got = &m->items[0];
    EXPECT(strcmp(got->title, "T") == 0 && strcmp(got->content_text, "héllo") == 0, "texts");
    EXPECT(got->attachment_count == 2 && got->attachments[0].type_identifier_count == 2 &&
               strcmp(got->attachments[0].type_identifiers[1], "public.text") == 0 &&
               got->attachments[0].inline_data.length == 6 &&
               memcmp(got->attachments[0].inline_data.data, "inline", 6) == 0 && got->attachments[0].fd == -1 &&
               strcmp(got->attachments[0].suggested_name, "a.txt") == 0 && got->attachments[1].fd == 0,
           "attachments");
    EXPECT(got->user_info_count == 3 && got->user_info[0].kind == APPEX_USER_INFO_STRING &&
               strcmp(got->user_info[0].string, "välue") == 0 && got->user_info[1].integer == -7 &&
               got->user_info[2].number == 2.5,
           "user info");
    appex_message_free(m);
    expect_refused(APPEX_ROLE_SUPERVISOR_, 0, "descriptor-count", "fd count differs from the header");
    expect_refused(APPEX_ROLE_EXTENSION, 1, "wrong-direction", "CompleteRequest to an extension");
}

static void malformed_frames(void) {
    appex_frame_begin(&f, APPEX_PING);
    appex_frame_int(&f, 1, 5, 8);
    finish();
    uint8_t good[64];
    size_t good_length = f.length;
    memcpy(good, f.bytes, f.length);
#define MUTATE(offset, value, needle)                                                                                  \
    do {                                                                                                               \
        memcpy(f.bytes, good, good_length);                                                                            \
        f.length = good_length;                                                                                        \
        f.bytes[offset] = value;                                                                                       \
        expect_refused(APPEX_ROLE_EXTENSION, 0, needle, needle);                                                       \
    } while (0)
    MUTATE(0, 'X', "bad-magic");
    MUTATE(4, 2, "unknown-format");
    MUTATE(8, 1, "reserved-flags");
    MUTATE(6, 0x7f, "unknown-type");
    MUTATE(12, 9, "bad-payload-length");
    MUTATE(16, 9, "unknown-tag");
    MUTATE(18, 9, "truncated-field");
    MUTATE(10, 1, "descriptor-count");
    /* A tag from 0x8000 up is skipped. */
    appex_frame_begin(&f, APPEX_PING);
    appex_frame_int(&f, 1, 5, 8);
    appex_frame_string(&f, 0x8001, "future");
    finish();
    appex_message *m;
    appex_error err;
    EXPECT(appex_decode(f.bytes, f.length, 0, APPEX_ROLE_EXTENSION, &m, &err) == 0 && m->sequence == 5,
           "tag 0x8001 skipped");
    appex_message_free(m);

    appex_frame_begin(&f, APPEX_PING);
    appex_frame_int(&f, 1, 5, 4);
    finish();
    expect_refused(APPEX_ROLE_EXTENSION, 0, "bad-field-length", "a u64 of 4 bytes");
    appex_frame_begin(&f, APPEX_PING);
    appex_frame_int(&f, 1, 5, 8);
    appex_frame_int(&f, 1, 6, 8);
    finish();
    expect_refused(APPEX_ROLE_EXTENSION, 0, "duplicate-field", "a field twice");
    appex_frame_begin(&f, APPEX_HELLO);
    appex_frame_int(&f, 1, 1, 4);
    appex_frame_bytes(&f, 2, "a\xff", 2);
    appex_frame_int(&f, 3, 1, 4);
    finish();
    expect_refused(APPEX_ROLE_EXTENSION, 0, "bad-string", "invalid UTF-8");
    appex_frame_begin(&f, APPEX_HELLO);
    appex_frame_int(&f, 1, 1, 4);
    finish();
    expect_refused(APPEX_ROLE_EXTENSION, 0, "missing-field", "a required field missing");
    appex_frame_begin(&f, APPEX_OPEN_URL_RESULT);
    appex_frame_int(&f, 1, 1, 8);
    appex_frame_int(&f, 2, 2, 1);
    finish();
    expect_refused(APPEX_ROLE_EXTENSION, 0, "bad-bool", "a bool of 2");
    appex_frame_begin(&f, APPEX_BEGIN_REQUEST);
    appex_frame_int(&f, 1, 1, 8);
    for (int i = 0; i < 17; i++) appex_frame_close(&f, appex_frame_open(&f, 2));
    finish();
    expect_refused(APPEX_ROLE_EXTENSION, 0, "too-many", "17 items");
    /* An attachment naming descriptor 3 of a frame with 1; one with both data and index. */
    appex_frame_begin(&f, APPEX_BEGIN_REQUEST);
    appex_frame_int(&f, 1, 1, 8);
    size_t item = appex_frame_open(&f, 2), a = appex_frame_open(&f, 3);
    appex_frame_string(&f, 1, "public.data");
    appex_frame_int(&f, 3, 3, 4);
    appex_frame_close(&f, a);
    appex_frame_close(&f, item);
    finish();
    appex_set_le(f.bytes + 10, 1, 2);
    expect_refused(APPEX_ROLE_EXTENSION, 1, "bad-descriptor-index", "an index out of range");
    appex_frame_begin(&f, APPEX_BEGIN_REQUEST);
    appex_frame_int(&f, 1, 1, 8);
    item = appex_frame_open(&f, 2);
    a = appex_frame_open(&f, 3);
    appex_frame_string(&f, 1, "public.data");
    appex_frame_bytes(&f, 2, "x", 1);
    appex_frame_int(&f, 3, 0, 4);
    appex_frame_close(&f, a);
    appex_frame_close(&f, item);
    finish();
    expect_refused(APPEX_ROLE_EXTENSION, 0, "bad-attachment", "inline data and an index");
    appex_frame_begin(&f, APPEX_PING);
    appex_frame_int(&f, 1, 5, 8);
    finish();
    appex_set_le(f.bytes + 10, 1, 2);
    expect_refused(APPEX_ROLE_EXTENSION, 1, "descriptors-not-allowed", "a Ping with a descriptor");
}

/* ---- the extension side, this program playing appexd ---- */

static int sup; /* appexd's end */

static void sup_send(void) {
    appex_error err;
    finish();
    if (appex_send_frame(sup, &f, &err) < 0) {
        fprintf(stderr, "send: %s\n", err.message);
        exit(2);
    }
}

static appex_message *sup_receive(int timeout_ms) {
    appex_message *m = NULL;
    appex_error err;
    if (appex_wait_readable(sup, timeout_ms, &err) <= 0) return NULL;
    if (appex_receive(sup, APPEX_ROLE_SUPERVISOR_, &m, &err) != APPEX_NEXT_MESSAGE) return NULL;
    return m;
}

static void sup_hello(void) {
    appex_frame_begin(&f, APPEX_HELLO);
    appex_frame_int(&f, 1, 1, 4);
    appex_frame_string(&f, 2, "appexd");
    appex_frame_int(&f, 3, 1, 4);
    sup_send();
}

static appex_extension *checked_in(int flags) {
    int pair[2];
    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair);
    sup = pair[0];
    sup_hello(); /* buffered: the extension reads it after sending its own */
    appex_extension *ext;
    appex_error err;
    if (appex_extension_open_fd(&ext, pair[1], "dev.appex.tests.lib", flags, &err) < 0) {
        fprintf(stderr, "open: %s\n", err.message);
        exit(2);
    }
    appex_message *hello = sup_receive(5000);
    EXPECT(hello && hello->type == APPEX_HELLO && strcmp(hello->bundle_identifier, "dev.appex.tests.lib") == 0,
           "check-in");
    appex_message_free(hello);
    return ext;
}

static appex_message *ext_next(appex_extension *ext) {
    appex_message *m = NULL;
    appex_error err;
    for (int i = 0; i < 50; i++) {
        int r = appex_extension_next(ext, &m, 100, &err);
        if (r == APPEX_NEXT_MESSAGE) return m;
        if (r != APPEX_NEXT_NOTHING) return NULL;
    }
    return NULL;
}

static void extension_side(int flags) {
    appex_extension *ext = checked_in(flags);
    int pipefd[2];
    (void)!pipe(pipefd);
    (void)!write(pipefd[1], "piped", 5);
    close(pipefd[1]);
    appex_frame_begin(&f, APPEX_PING);
    appex_frame_int(&f, 1, 1, 8);
    sup_send();
    appex_frame_begin(&f, APPEX_BEGIN_REQUEST);
    appex_frame_int(&f, 1, 1, 8);
    appex_attachment a;
    appex_attachment_file(&a, pipefd[0], "in.txt");
    appex_item item = {.content_text = "hi", .attachments = &a, .attachment_count = 1};
    appex_frame_items(&f, 2, &item, 1);
    sup_send();
    close(pipefd[0]);
    if (flags & APPEX_PINGS_ON_THREAD) {
        /* The thread answers before the application asks for anything. */
        appex_message *pong = sup_receive(5000);
        EXPECT(pong && pong->type == APPEX_PONG && pong->sequence == 1, "pong from the thread");
        appex_message_free(pong);
    }
    appex_message *m = ext_next(ext);
    EXPECT(m && m->type == APPEX_BEGIN_REQUEST && m->request_id == 1, "BeginRequest delivered");
    if (!m) return;
    char buffer[8] = {0};
    int fd = m->items[0].attachments[0].fd;
    EXPECT(fd >= 0 && read(fd, buffer, sizeof buffer) == 5 && memcmp(buffer, "piped", 5) == 0, "descriptor readable");
    EXPECT(strcmp(m->items[0].content_text, "hi") == 0, "content text");
    appex_error err;
    appex_item reply = {.content_text = "done"};
    EXPECT(appex_extension_complete(ext, 1, &reply, 1, &err) == 0, "complete: %s", err.message);
    EXPECT(appex_extension_complete(ext, 1, &reply, 1, &err) < 0 && strcmp(err.reason, "usage") == 0,
           "a second answer refused");
    appex_message_free(m);
    if (!(flags & APPEX_PINGS_ON_THREAD)) {
        appex_message *pong = sup_receive(5000);
        EXPECT(pong && pong->type == APPEX_PONG && pong->sequence == 1, "pong from next");
        appex_message_free(pong);
    }
    appex_message *complete = sup_receive(5000);
    EXPECT(complete && complete->type == APPEX_COMPLETE_REQUEST && complete->request_id == 1 &&
               strcmp(complete->items[0].content_text, "done") == 0,
           "CompleteRequest");
    appex_message_free(complete);
    /* A stale CancelRequest is swallowed; Terminate is delivered. */
    appex_frame_begin(&f, APPEX_CANCEL_REQUEST);
    appex_frame_int(&f, 1, 1, 8);
    appex_frame_error(&f, 2, "dev.appex.appexd", 2, NULL);
    sup_send();
    appex_frame_begin(&f, APPEX_TERMINATE);
    appex_frame_string(&f, 1, "idle-exit");
    appex_frame_int(&f, 2, 2000, 4);
    sup_send();
    m = ext_next(ext);
    EXPECT(m && m->type == APPEX_TERMINATE && strcmp(m->reason, "idle-exit") == 0 && m->milliseconds == 2000,
           "Terminate");
    appex_message_free(m);
    /* A request after Terminate: refused with protocol-error. */
    appex_frame_begin(&f, APPEX_BEGIN_REQUEST);
    appex_frame_int(&f, 1, 2, 8);
    sup_send();
    int r = appex_extension_next(ext, &m, 5000, &err);
    EXPECT(r == APPEX_NEXT_ERROR && strcmp(err.reason, "protocol-error") == 0, "BeginRequest after Terminate: %d", r);
    appex_message *refusal = sup_receive(5000);
    EXPECT(refusal && refusal->type == APPEX_REFUSAL && strcmp(refusal->reason, "protocol-error") == 0, "Refusal sent");
    appex_message_free(refusal);
    appex_extension_close(ext);
    close(sup);
}

static void version_mismatch(void) {
    int pair[2];
    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair);
    sup = pair[0];
    appex_frame_begin(&f, APPEX_HELLO);
    appex_frame_int(&f, 1, 2, 4);
    appex_frame_string(&f, 2, "appexd");
    appex_frame_int(&f, 3, 1, 4);
    sup_send();
    appex_extension *ext;
    appex_error err;
    EXPECT(appex_extension_open_fd(&ext, pair[1], "dev.appex.tests.lib", 0, &err) < 0 &&
               strcmp(err.reason, "version-mismatch") == 0,
           "version 2 refused: %s", err.reason);
    appex_message_free(sup_receive(1000)); /* its Hello */
    appex_message *refusal = sup_receive(1000);
    EXPECT(refusal && refusal->type == APPEX_REFUSAL && strcmp(refusal->reason, "version-mismatch") == 0,
           "Refusal(version-mismatch)");
    appex_message_free(refusal);
    close(pair[1]);
    close(sup);
}

/* ---- the host side: a listening socket, appexd played by a thread ---- */

static void *fake_appexd(void *arg) {
    int listener = *(int *)arg;
    int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    sup = c;
    appex_message_free(sup_receive(5000)); /* Hello */
    sup_hello();
    appex_message *begin = sup_receive(5000);
    EXPECT(begin && begin->type == APPEX_HOST_BEGIN_REQUEST && strcmp(begin->bundle_identifier, "dev.appex.x") == 0 &&
               begin->item_count == 1 && begin->items[0].attachment_count == 1 &&
               strcmp(begin->items[0].attachments[0].type_identifiers[0], "public.url") == 0,
           "HostBeginRequest");
    appex_frame_begin(&f, APPEX_REQUEST_OUTCOME);
    appex_frame_int(&f, 1, begin ? begin->request_id : 1, 8);
    appex_frame_int(&f, 2, APPEX_COMPLETED, 1);
    appex_item item = {.content_text = "answer"};
    appex_frame_items(&f, 3, &item, 1);
    size_t phase = appex_frame_open(&f, 7);
    appex_frame_string(&f, 1, "roundTrip");
    appex_frame_int(&f, 2, 42, 8);
    appex_frame_close(&f, phase);
    sup_send();
    appex_message_free(begin);
    appex_message_free(sup_receive(5000)); /* wait for the host to close */
    close(c);
    return NULL;
}

static void host_side(void) {
    char path[] = "/tmp/libappex-unit-XXXXXX";
    if (!mkdtemp(path)) exit(2);
    char socket_path[128];
    snprintf(socket_path, sizeof socket_path, "%s/s", path);
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strcpy(address.sun_path, socket_path);
    bind(listener, (struct sockaddr *)&address, sizeof address);
    listen(listener, 1);
    pthread_t thread;
    pthread_create(&thread, NULL, fake_appexd, &listener);
    appex_host *host;
    appex_error err;
    EXPECT(appex_host_connect(&host, socket_path, "unit", &err) == 0, "connect: %s", err.message);
    appex_attachment a;
    appex_attachment_url(&a, "https://example.com/");
    appex_item item = {.attachments = &a, .attachment_count = 1};
    uint64_t id = 0;
    EXPECT(appex_host_begin(host, "dev.appex.x", &item, 1, -1, &id, &err) == 0 && id == 1, "begin: %s", err.message);
    appex_message *m = NULL;
    int r = appex_host_next(host, &m, 5000, &err);
    EXPECT(r == APPEX_NEXT_MESSAGE && m->type == APPEX_REQUEST_OUTCOME && m->outcome == APPEX_COMPLETED &&
               strcmp(m->items[0].content_text, "answer") == 0 && m->phase_count == 1 &&
               m->phases[0].microseconds == 42,
           "outcome");
    appex_message_free(m);
    appex_host_close(host);
    pthread_join(thread, NULL);
    close(listener);
    unlink(socket_path);
    rmdir(path);
}

int main(void) {
    documented_hello();
    round_trip();
    malformed_frames();
    extension_side(0);
    extension_side(APPEX_PINGS_ON_THREAD);
    version_mismatch();
    host_side();
    if (failures) {
        fprintf(stderr, "libappex unit: %d checks failed\n", failures);
        return 1;
    }
    printf("libappex unit: all checks passed\n");
    return 0;
}
