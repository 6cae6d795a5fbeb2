/*
 * libappex: Appex's wire protocol (Docs/protocol.md, version 1) for C, both sides.
 *
 *   extension side: appex_extension_open, appex_extension_next, appex_extension_complete,
 *                   appex_extension_cancel, appex_extension_open_url, appex_extension_close
 *   host side:      appex_host_connect, appex_host_begin, appex_host_cancel, appex_host_next,
 *                   appex_host_open_url_result, appex_host_close
 *   both:           appex_message (what arrives), appex_message_free, appex_decode
 *
 * Errors are values: every function that can fail takes an appex_error and fills it in
 * (a reason token from section 7 of the page, or "io" / "usage", and a message naming what and
 * where). Nothing aborts, nothing is printed. Reference: Docs/libappex.md.
 *
 * Build with `pkg-config --cflags --libs appex` after `make install`.
 */
#ifndef APPEX_H
#define APPEX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's interface; everything else in libappex.so is hidden (-fvisibility=hidden). */
#define APPEX_API __attribute__((visibility("default")))

#define APPEX_PROTOCOL_VERSION 1
#define APPEX_FRAME_FORMAT 1
#define APPEX_HEADER_SIZE 16
#define APPEX_MAX_FRAME 131072
#define APPEX_MAX_FDS 16
#define APPEX_MAX_ITEMS 16
#define APPEX_MAX_ATTACHMENTS 16
#define APPEX_MAX_TYPE_IDS 16
#define APPEX_MAX_USER_INFO 64
#define APPEX_MAX_PHASES 32
#define APPEX_MAX_DETAILS 64
#define APPEX_MAX_IN_FLIGHT 64
#define APPEX_MAX_OPEN_URLS 8

/* Message types (section 4). */
enum appex_message_type {
    APPEX_HELLO = 0x01,
    APPEX_REFUSAL = 0x02,
    APPEX_PING = 0x03,
    APPEX_PONG = 0x04,
    APPEX_BEGIN_REQUEST = 0x10,
    APPEX_COMPLETE_REQUEST = 0x11,
    APPEX_CANCEL_REQUEST = 0x12,
    APPEX_OPEN_URL = 0x13,
    APPEX_OPEN_URL_RESULT = 0x14,
    APPEX_MEMORY_WARNING = 0x15,
    APPEX_REQUEST_WILL_EXPIRE = 0x16,
    APPEX_TERMINATE = 0x17,
    APPEX_HOST_BEGIN_REQUEST = 0x20,
    APPEX_REQUEST_OUTCOME = 0x21,
    APPEX_HOST_CANCEL_REQUEST = 0x22,
    APPEX_INTERRUPTION = 0x23,
};

/* RequestOutcome.outcome */
enum appex_outcome { APPEX_COMPLETED = 1, APPEX_CANCELLED = 2, APPEX_FAILED = 3 };

/* An error as a value. reason: "protocol-error", "version-mismatch", "io", "usage", or the
 * reason of a Refusal from the peer ("not-authorized", ...). message: for people. */
typedef struct appex_error {
    char reason[40];
    char message[480];
    int errnum; /* errno when reason is "io", else 0 */
} appex_error;

typedef struct appex_bytes {
    const uint8_t *data;
    size_t length;
} appex_bytes;

enum appex_user_info_kind {
    APPEX_USER_INFO_STRING = 2,
    APPEX_USER_INFO_INTEGER = 3,
    APPEX_USER_INFO_BOOL = 4,
    APPEX_USER_INFO_DOUBLE = 5,
    APPEX_USER_INFO_DATA = 6,
};

typedef struct appex_user_info {
    const char *key;
    int kind; /* enum appex_user_info_kind */
    const char *string;
    int64_t integer;
    int boolean;
    double number;
    appex_bytes data;
} appex_user_info;

/* An attachment (NSItemProvider): exactly one of inline data and a descriptor.
 * Received: fd is the descriptor (owned by the message; appex_message_take_fd keeps it),
 * or -1 for inline data. Sent: fd >= 0 sends that descriptor (the caller keeps its copy),
 * -1 sends inline_data. */
typedef struct appex_attachment {
    const char *const *type_identifiers; /* 1 to 16, most specific first */
    size_t type_identifier_count;
    appex_bytes inline_data;
    int fd;
    const char *suggested_name; /* NULL: none */
} appex_attachment;

/* An item (NSExtensionItem). NULL strings are absent. */
typedef struct appex_item {
    const char *title;
    const char *content_text;
    const appex_attachment *attachments;
    size_t attachment_count;
    const appex_user_info *user_info;
    size_t user_info_count;
} appex_item;

/* Error (NSError), as in CancelRequest and RequestOutcome. */
typedef struct appex_error_value {
    const char *domain;
    int64_t code;
    const char *message; /* NULL: none */
} appex_error_value;

typedef struct appex_phase {
    const char *name;
    uint64_t microseconds;
} appex_phase;

/* One received message. Only the fields of its type are meaningful; has_* say whether an
 * optional one was present. Strings are NUL-terminated copies, valid until appex_message_free. */
typedef struct appex_message {
    uint16_t type;
    uint64_t request_id;
    int has_request_id;
    /* Hello */
    uint32_t protocol_version;
    const char *bundle_identifier; /* Hello, Interruption */
    int32_t pid;
    /* Refusal (reason, message, details), Terminate (reason), Interruption (reason, message),
     * RequestOutcome (reason) */
    const char *reason;
    const char *message;
    const char *const *details;
    size_t detail_count;
    /* Ping, Pong */
    uint64_t sequence;
    /* BeginRequest, CompleteRequest, HostBeginRequest, RequestOutcome */
    const appex_item *items;
    size_t item_count;
    /* CancelRequest, RequestOutcome */
    const appex_error_value *error; /* NULL: none */
    /* OpenURL, OpenURLResult */
    const char *url;
    int accepted;
    /* MemoryWarning */
    uint8_t level;
    /* RequestWillExpire (millisecondsLeft), Terminate (graceMilliseconds) */
    uint32_t milliseconds;
    int has_milliseconds;
    /* RequestOutcome */
    uint8_t outcome; /* enum appex_outcome */
    int cold;
    const appex_phase *phases;
    size_t phase_count;
    uint64_t peak_memory_bytes;
    int has_peak_memory_bytes;
    /* Interruption */
    int32_t signal;
    int has_signal;
    uint32_t band;
    int has_band;
    uint64_t footprint_bytes;
    int has_footprint_bytes;
    uint64_t trigger_to_death_micros;
    int has_trigger_to_death_micros;
    /* The descriptors that came with the frame, in order; -1 once taken. */
    int fds[APPEX_MAX_FDS];
    int fd_count;
    void *storage_; /* private */
} appex_message;

/* Closes the descriptors still held (not taken) and frees the message. NULL is fine. */
APPEX_API void appex_message_free(appex_message *message);
/* Hands the caller descriptor `fd` of the message (it will not be closed by free). Returns
 * fd, or -1 when the message does not hold it. */
APPEX_API int appex_message_take_fd(appex_message *message, int fd);

/* Which end is decoding: what it may receive differs (section 4). */
enum appex_role {
    APPEX_ROLE_EXTENSION = 1, /* receives what appexd sends on an extension channel */
    APPEX_ROLE_HOST = 2, /* receives what appexd sends on the control channel */
};

/* Decodes one frame (header and payload) received with fd_count descriptors, checking every
 * rule of sections 2, 3 and 5 for a message `role` may receive. The message does not own
 * any descriptor (fds are -1); attachments name descriptors by index through their fd field.
 * Returns 0 with *out set, or -1 with err (reason "protocol-error" or "usage"). */
APPEX_API int appex_decode(const uint8_t *frame, size_t length, int fd_count, enum appex_role role, appex_message **out,
                           appex_error *err);

/* Return values of the *_next functions. */
enum appex_next_result {
    APPEX_NEXT_ERROR = -1, /* err says why; the connection is closed */
    APPEX_NEXT_NOTHING = 0, /* nothing for the caller (timeout, a ping answered, a stale message) */
    APPEX_NEXT_MESSAGE = 1, /* *out is a message to handle and free */
    APPEX_NEXT_CLOSED = 2, /* the peer closed the connection */
};

/* ---------------------------------------------------------------------------------------- */
/* Extension side                                                                              */

typedef struct appex_extension appex_extension;

enum appex_extension_flags {
    /* Pings are answered by a thread of the library's own, which reads the socket: messages
     * wait in a queue for appex_extension_next, and appex_extension_fd is readable while the
     * queue is not empty. Without it, pings are answered inside appex_extension_next: call it
     * whenever appex_extension_fd is readable (poll it in your loop), also while serving. */
    APPEX_PINGS_ON_THREAD = 1,
};

/* Checks in: reads APPEX_SOCKET_FD (default 3) and APPEX_BUNDLE_IDENTIFIER, checks the
 * socket, sets close-on-exec on it, sends Hello and waits for appexd's. */
APPEX_API int appex_extension_open(appex_extension **out, int flags, appex_error *err);
/* The same over a given socket and identifier (tests, supervisors of one's own). */
APPEX_API int appex_extension_open_fd(appex_extension **out, int socket_fd, const char *bundle_identifier, int flags,
                                      appex_error *err);

/* A descriptor to poll for POLLIN: the socket, or (APPEX_PINGS_ON_THREAD) the queue's. */
APPEX_API int appex_extension_fd(const appex_extension *ext);

/* The next message for the extension, waiting up to timeout_ms (-1: forever, 0: no wait).
 * Messages the caller sees: BeginRequest, CancelRequest (appexd asks; answer the request
 * anyway), OpenURLResult, MemoryWarning, RequestWillExpire, Terminate. Pings, stale messages
 * and appexd's Hello are handled inside. On a protocol error in appexd's frame the library
 * sends the Refusal, closes the socket and returns APPEX_NEXT_ERROR: print err.message to
 * stderr and exit 1 (section 8). */
APPEX_API int appex_extension_next(appex_extension *ext, appex_message **out, int timeout_ms, appex_error *err);

/* Answers request `request_id` with items (their fd attachments are sent, the caller keeps
 * its copies). */
APPEX_API int appex_extension_complete(appex_extension *ext, uint64_t request_id, const appex_item *items,
                                       size_t item_count, appex_error *err);
/* Answers request `request_id` as cancelled or failed, with an error of the extension's own. */
APPEX_API int appex_extension_cancel(appex_extension *ext, uint64_t request_id, const char *domain, int64_t code,
                                     const char *message, appex_error *err);
/* Asks the host to open url during request `request_id`; the answer comes as OpenURLResult. */
APPEX_API int appex_extension_open_url(appex_extension *ext, uint64_t request_id, const char *url, appex_error *err);
/* Refuses the connection (section 8) and closes it: for a fault the extension found itself. */
APPEX_API void appex_extension_refuse(appex_extension *ext, const char *reason, const char *message);
/* Stops the ping thread, closes the socket, frees. */
APPEX_API void appex_extension_close(appex_extension *ext);

/* ---------------------------------------------------------------------------------------- */
/* Host side                                                                                   */

typedef struct appex_host appex_host;

/* Connects to appexd's control socket: socket_path, else $APPEX_SOCKET, else
 * /run/appex/appexd.sock; sends Hello with `identifier` and waits for appexd's. */
APPEX_API int appex_host_connect(appex_host **out, const char *socket_path, const char *identifier, appex_error *err);
APPEX_API int appex_host_fd(const appex_host *host);

/* Sends HostBeginRequest: a new request id in *request_id. band < 0: the policy's. */
APPEX_API int appex_host_begin(appex_host *host, const char *bundle_identifier, const appex_item *items,
                               size_t item_count, int band, uint64_t *request_id, appex_error *err);
APPEX_API int appex_host_cancel(appex_host *host, uint64_t request_id, appex_error *err);
APPEX_API int appex_host_open_url_result(appex_host *host, uint64_t request_id, int accepted, appex_error *err);

/* The next message: RequestOutcome, Refusal with a request id (that request refused),
 * Interruption, OpenURL (answer it with appex_host_open_url_result, in order). */
APPEX_API int appex_host_next(appex_host *host, appex_message **out, int timeout_ms, appex_error *err);
APPEX_API void appex_host_close(appex_host *host);

/* A type identifier list for one attachment, and helpers that fill an attachment. */
APPEX_API void appex_attachment_url(appex_attachment *attachment, const char *url);
/* Type identifiers from the name's extension as `appex request --file` picks them. */
APPEX_API void appex_attachment_file(appex_attachment *attachment, int fd, const char *suggested_name);

/* "completed", "cancelled", "failed", or "unknown". */
APPEX_API const char *appex_outcome_name(int outcome);

#ifdef __cplusplus
}
#endif
#endif
