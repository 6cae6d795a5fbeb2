/* What the probe does for one request, chosen by the first input item's user info:
 * `probe.action` (default echo) and `probe.arg` (both string values). A missing or malformed
 * argument, or an unknown action, is answered with CancelRequest(dev.appex.probe, EINVAL)
 * saying what is wrong, so a test's typo cannot pass for a result. */
#define _GNU_SOURCE
#include "grow.h"
#include "probe.h"
#include "syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MAX_ARG 2048
/* How much of each descriptor attachment the `fds` action reads: 16 of them still fit a frame. */
#define MAX_FD_READ 4096

struct instruction {
    uint64_t id;
    char action[32];
    char arg[MAX_ARG];
    int has_arg;
    const uint8_t *text; /* the first item's content text, or NULL */
    uint32_t text_length;
};

/* ---- answers -------------------------------------------------------------------------------- */

static struct wire_out out;

int probe_complete_text(struct probe *p, uint64_t id, const char *text) {
    wire_begin(&out, WIRE_COMPLETE_REQUEST);
    wire_put_u64(&out, 1, id);
    size_t item = wire_open(&out, 2);
    wire_put_string(&out, 2, text);
    wire_close(&out, item);
    return wire_send(p->sock, &out);
}

int probe_cancel(struct probe *p, uint64_t id, int64_t code, const char *message) {
    wire_begin(&out, WIRE_CANCEL_REQUEST);
    wire_put_u64(&out, 1, id);
    size_t error = wire_open(&out, 2);
    wire_put_string(&out, 1, PROBE_ERROR_DOMAIN);
    wire_put_u64(&out, 2, (uint64_t)code);
    wire_put_string(&out, 3, message);
    wire_close(&out, error);
    return wire_send(p->sock, &out);
}

static int refuse_arg(struct probe *p, const struct instruction *in, const char *wanted) {
    char message[MAX_ARG + 256];
    snprintf(message, sizeof message, "probe.action %s wants probe.arg %s, got %s%s%s", in->action, wanted,
             in->has_arg ? "\"" : "none", in->has_arg ? in->arg : "", in->has_arg ? "\"" : "");
    return probe_cancel(p, in->id, EINVAL, message);
}

/* probe.arg as a whole number in [min, max]; 0, or -1 when it is not one. */
static int number_arg(const struct instruction *in, long long min, long long max, long long *value) {
    char *end;
    errno = 0;
    long long v = strtoll(in->arg, &end, 10);
    if (!in->has_arg || in->arg[0] == 0 || in->arg[0] == ' ' || *end != 0 || errno != 0 || v < min || v > max)
        return -1;
    *value = v;
    return 0;
}

static struct pending *free_slot(struct probe *p) {
    for (int i = 0; i < PROBE_MAX_REQUESTS; i++)
        if (p->pending[i].id == 0) return &p->pending[i];
    return NULL; /* main admits a request only with a slot free */
}

/* ---- actions ---------------------------------------------------------------------------------- */

static int act_echo(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    char *text = strndup(in->text ? (const char *)in->text : "", in->text ? in->text_length : 0);
    if (!text) return probe_cancel(p, in->id, ENOMEM, "out of memory");
    int r = probe_complete_text(p, in->id, text);
    free(text);
    return r;
}

static int act_sleep(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    long long ms;
    if (number_arg(in, 0, 86400000, &ms)) return refuse_arg(p, in, "milliseconds from 0 to 86400000");
    struct pending *slot = free_slot(p);
    clock_gettime(CLOCK_MONOTONIC, &slot->due);
    slot->due.tv_sec += (time_t)(ms / 1000);
    slot->due.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (slot->due.tv_nsec >= 1000000000L) {
        slot->due.tv_sec++;
        slot->due.tv_nsec -= 1000000000L;
    }
    slot->sleep_ms = (long)ms;
    slot->awaiting_url = 0;
    slot->awaiting_pongs = 0;
    slot->id = in->id; /* answered by main's timer; pings are served meanwhile */
    return 0;
}

/* Held until the process exits, so the memory stays charged to it. */
static volatile uint8_t **held;
static size_t held_count;
static long long held_mib;

static int act_allocate(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    long long mib;
    if (number_arg(in, 1, 1 << 20, &mib)) return refuse_arg(p, in, "MiB from 1 to 1048576");
    size_t bytes = (size_t)mib << 20;
    volatile uint8_t **list = realloc(held, (held_count + 1) * sizeof *held);
    if (!list) return probe_cancel(p, in->id, ENOMEM, "out of memory for the list of blocks");
    held = list;
    volatile uint8_t *block = malloc(bytes);
    if (!block) return probe_cancel(p, in->id, ENOMEM, "malloc failed");
    /* Write every page: untouched pages are not resident and would not count. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t at = 0; at < bytes; at += page) block[at] = (uint8_t)(at / page) | 1;
    held[held_count++] = block;
    held_mib += mib;
    char text[96];
    snprintf(text, sizeof text, "allocated %lld MiB, holding %lld MiB", mib, held_mib);
    return probe_complete_text(p, in->id, text);
}

/* Memory an extension might hope to hide from a limit on its anonymous memory: shared pages
 * of a memfd, mapped and written, held until the process ends. The kernel counts them as
 * shmem, which the footprint includes (Docs/cgroups.md). */
static int act_allocate_shared(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    long long mib;
    if (number_arg(in, 1, 1 << 20, &mib)) return refuse_arg(p, in, "MiB from 1 to 1048576");
    size_t bytes = (size_t)mib << 20;
    int fd = memfd_create("appex-probe-shared", MFD_CLOEXEC);
    if (fd < 0) return probe_cancel(p, in->id, errno, "memfd_create failed");
    if (ftruncate(fd, (off_t)bytes) != 0) {
        int e = errno;
        close(fd);
        return probe_cancel(p, in->id, e, "ftruncate failed");
    }
    volatile uint8_t *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); /* the mapping keeps the pages */
    if (block == MAP_FAILED) return probe_cancel(p, in->id, errno, "mmap failed");
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t at = 0; at < bytes; at += page) block[at] = (uint8_t)(at / page) | 1;
    held_mib += mib;
    char text[96];
    snprintf(text, sizeof text, "shared %lld MiB, holding %lld MiB", mib, held_mib);
    return probe_complete_text(p, in->id, text);
}

/* The grow action's pipe, when its attachment is one: each finished step goes to it. */
static int grow_pipe = -1;
static void write_step(struct grow_step *step) {
    /* 32 bytes, under PIPE_BUF: one atomic write; the host made the pipe big enough. */
    if (write(grow_pipe, step, sizeof *step) < 0) grow_pipe = -1;
}

/* Where the grow action logs, from the descriptor: a grow log file mapped shared, or for a
 * pipe (what appexd forwards now that attachments are read-only files or pipes) a private log
 * whose finished steps are written to it. NULL with errno when it is neither. */
static struct grow_log *grow_log_for(int fd, void (**after_step)(struct grow_step *)) {
    struct stat st;
    if (fstat(fd, &st) != 0) return NULL;
    if (!S_ISFIFO(st.st_mode)) return grow_map_log(fd);
    enum { capacity = 4096 };
    size_t size = sizeof(struct grow_log) + capacity * sizeof(struct grow_step);
    struct grow_log *log = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (log == MAP_FAILED) return NULL;
    log->magic = GROW_MAGIC;
    log->capacity = capacity;
    grow_pipe = fd;
    *after_step = write_step;
    return log;
}

/* Grows in timed steps and holds, for the jetsam benchmark (grow.h). The first descriptor
 * attachment of the first item, if any, is where the steps are logged: a grow log file, or a
 * pipe that gets each step once it is done. Blocks the only thread until the hold ends: pings
 * go unanswered meanwhile. */
static int act_grow(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    struct grow_plan plan;
    char why[160] = "STEP_KIB,INTERVAL_US,CAP_MIB,HOLD_MS";
    if (!in->has_arg || grow_parse(in->arg, &plan, why, sizeof why)) return refuse_arg(p, in, why);
    struct grow_log *log = NULL;
    void (*after_step)(struct grow_step *) = NULL;
    uint32_t item_length, attachment_length, n;
    const uint8_t *item = wire_field(frame->payload, frame->length, 2, 0, &item_length), *attachment;
    for (unsigned a = 0; item && !log && (attachment = wire_field(item, item_length, 3, a, &attachment_length)); a++) {
        const uint8_t *index = wire_field(attachment, attachment_length, 3, 0, &n);
        if (!index) continue;
        log = grow_log_for(frame->fds[wire_le(index, 4)], &after_step);
        if (!log)
            return probe_cancel(p, in->id, errno,
                                "the descriptor attachment is neither a grow log (grow.h) nor a pipe");
    }
    long long grown = grow_run(&plan, log, after_step);
    if (grown < 0) return probe_cancel(p, in->id, errno, "could not reserve the address space");
    char text[96];
    snprintf(text, sizeof text, "grew %lld MiB, held %llu ms", grown >> 20,
             (unsigned long long)(plan.hold_ns / 1000000));
    return probe_complete_text(p, in->id, text);
}

static _Noreturn void spin_forever(void) {
    volatile unsigned long turns = 0;
    for (;;) turns++;
}

static _Noreturn void hang_forever(void) {
    /* The only thread sleeps, so nothing reads the socket or answers a ping. */
    for (;;) pause();
}

static int act_spin(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)p;
    (void)in;
    (void)frame;
    spin_forever();
}

static int act_hang(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)p;
    (void)in;
    (void)frame;
    hang_forever();
}

void probe_crash(void) {
    /* Whatever mask or handler the probe inherited, SIGSEGV must kill it. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    _exit(70); /* not reached */
}

static int act_crash(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)p;
    (void)in;
    (void)frame;
    probe_crash();
}

static int act_abort(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)p;
    (void)in;
    (void)frame;
    abort();
}

static int act_exit(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    long long code;
    if (number_arg(in, 0, 255, &code)) return refuse_arg(p, in, "an exit status from 0 to 255");
    fflush(NULL);
    _exit((int)code);
}

static int act_syscall(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    char result[320];
    if (!in->has_arg) return refuse_arg(p, in, "a system call name or number");
    if (probe_syscall(in->arg, result, sizeof result)) return probe_cancel(p, in->id, EINVAL, result);
    return probe_complete_text(p, in->id, result);
}

static int act_cancel(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    long long code;
    if (number_arg(in, INT64_MIN, INT64_MAX, &code)) return refuse_arg(p, in, "an error code (a 64-bit integer)");
    return probe_cancel(p, in->id, code, "cancelled on instruction");
}

/* One OpenURL per URL (space-separated, up to 8) during this request; answered with the
 * results in the order they come ("accepted", or "accepted,refused" for two). */
static int act_open_url(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    if (!in->has_arg || !in->arg[0]) return refuse_arg(p, in, "a URL (or up to 8, space-separated)");
    static char urls[MAX_ARG];
    strcpy(urls, in->arg);
    struct pending *slot = free_slot(p);
    memset(slot, 0, sizeof *slot);
    char *save = NULL;
    for (char *url = strtok_r(urls, " ", &save); url; url = strtok_r(NULL, " ", &save)) {
        if (slot->awaiting_url == 8) return refuse_arg(p, in, "at most 8 URLs");
        wire_begin(&out, WIRE_OPEN_URL);
        wire_put_u64(&out, 1, in->id);
        wire_put_string(&out, 2, url);
        if (wire_send(p->sock, &out)) return -1;
        slot->awaiting_url++;
    }
    slot->id = in->id; /* answered when the last OpenURLResult comes */
    return 0;
}

/* Sends a Ping, answers the request, then exits at once with the status: two frames are on
 * appexd's socket when the process is already gone (appexd reads one per wakeup). */
static int act_answer_and_exit(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    long long code;
    if (number_arg(in, 0, 255, &code)) return refuse_arg(p, in, "an exit status from 0 to 255");
    wire_begin(&out, WIRE_PING);
    wire_put_u64(&out, 1, 1);
    if (wire_send(p->sock, &out)) return -1;
    if (probe_complete_text(p, in->id, "answered, exiting")) return -1;
    fflush(NULL);
    _exit((int)code);
}

/* Pings appexd N times (1 ... 16, sequences 1 ... N) and answers `pongs=N` once every Pong came. */
static int act_ping_appexd(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    long long n;
    if (number_arg(in, 1, 16, &n)) return refuse_arg(p, in, "a count from 1 to 16");
    for (long long i = 1; i <= n; i++) {
        wire_begin(&out, WIRE_PING);
        wire_put_u64(&out, 1, (uint64_t)i);
        if (wire_send(p->sock, &out)) return -1;
    }
    struct pending *slot = free_slot(p);
    memset(slot, 0, sizeof *slot);
    slot->awaiting_pongs = slot->pings = (int)n;
    slot->id = in->id;
    return 0;
}

/* Refuses the connection (Refusal without a request id), then exits 1. */
static int act_refuse(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)in;
    (void)frame;
    wire_refuse(p->sock, "refused on instruction");
    fflush(NULL);
    _exit(1);
}

/* Reads up to MAX_FD_READ bytes from the descriptor's current offset. */
static ssize_t read_some(int fd, uint8_t *buffer) {
    size_t got = 0;
    while (got < MAX_FD_READ) {
        ssize_t n = read(fd, buffer + got, MAX_FD_READ - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* One returned item per descriptor attachment, in order over all input items: its content
 * text when the bytes are UTF-8, else an inline public.data attachment with them. */
static int act_fds(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    static uint8_t data[MAX_FD_READ + 1];
    wire_begin(&out, WIRE_COMPLETE_REQUEST);
    wire_put_u64(&out, 1, in->id);
    uint32_t item_length, attachment_length, n;
    const uint8_t *item, *attachment;
    for (unsigned i = 0; (item = wire_field(frame->payload, frame->length, 2, i, &item_length)); i++) {
        for (unsigned a = 0; (attachment = wire_field(item, item_length, 3, a, &attachment_length)); a++) {
            const uint8_t *index = wire_field(attachment, attachment_length, 3, 0, &n);
            if (!index) continue;
            ssize_t got = read_some(frame->fds[wire_le(index, 4)], data);
            if (got < 0) return probe_cancel(p, in->id, errno, "reading a descriptor attachment failed");
            size_t returned = wire_open(&out, 2);
            if (wire_is_utf8(data, (size_t)got)) {
                wire_put(&out, 2, data, (size_t)got);
            } else {
                size_t inline_attachment = wire_open(&out, 3);
                wire_put_string(&out, 1, "public.data");
                wire_put(&out, 2, data, (size_t)got);
                wire_close(&out, inline_attachment);
            }
            wire_close(&out, returned);
        }
    }
    return wire_send(p->sock, &out);
}

/* Answers with one descriptor attachment of the kind asked for: what a hostile extension
 * might try to hand its host. appexd must refuse all but `readonly` (Docs/protocol.md). */
static int act_return_fd(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    if (!in->has_arg) return refuse_arg(p, in, "directory, socket, writable or readonly");
    int fd;
    if (strcmp(in->arg, "directory") == 0)
        fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    else if (strcmp(in->arg, "socket") == 0)
        fd = dup(p->sock);
    else if (strcmp(in->arg, "writable") == 0)
        fd = open("/tmp", O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
    else if (strcmp(in->arg, "readonly") == 0)
        fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    else
        return refuse_arg(p, in, "directory, socket, writable or readonly");
    if (fd < 0) return probe_cancel(p, in->id, errno, "opening the descriptor to return failed");
    wire_begin(&out, WIRE_COMPLETE_REQUEST);
    wire_put_u64(&out, 1, in->id);
    size_t item = wire_open(&out, 2);
    size_t attachment = wire_open(&out, 3);
    wire_put_string(&out, 1, "public.data");
    wire_put_u32(&out, 3, 0);
    wire_close(&out, attachment);
    wire_close(&out, item);
    int r = wire_send_fd(p->sock, &out, fd);
    close(fd);
    return r;
}

static int act_ignore_pings(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    p->ignore_pings = 1;
    return probe_complete_text(p, in->id, "ignoring pings");
}

/* stat(2) on a path: "ok", or "errno=N". For checking what the extension's view holds
 * (a host path that must not be there, its own container that must). */
static int act_stat(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    if (!in->has_arg || !in->arg[0]) return refuse_arg(p, in, "a path");
    struct stat st;
    char text[32];
    if (stat(in->arg, &st) == 0)
        snprintf(text, sizeof text, "ok");
    else
        snprintf(text, sizeof text, "errno=%d", errno);
    return probe_complete_text(p, in->id, text);
}

static int act_memory_warnings(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    char text[96];
    snprintf(text, sizeof text, "memory-warnings=%lu will-expire=%lu", p->memory_warnings, p->will_expire);
    return probe_complete_text(p, in->id, text);
}

/* Sends appexd a frame that breaks the protocol, for the tests of what appexd does then (it
 * closes this connection and kills the probe with `protocol-error`; nobody else notices).
 * No answer: the request ends with the probe. */
static int act_send_frame(struct probe *p, const struct instruction *in, const struct wire_frame *frame) {
    (void)frame;
    static struct wire_out bad;
    wire_begin(&bad, WIRE_COMPLETE_REQUEST);
    wire_put_u64(&bad, 1, in->id);
    size_t item = wire_open(&bad, 2);
    wire_put_string(&bad, 2, "never delivered");
    wire_close(&bad, item);
    wire_seal(&bad);
    size_t length = bad.length;
    if (strcmp(in->arg, "bad-magic") == 0) {
        bad.bytes[0] ^= 0xff;
    } else if (strcmp(in->arg, "truncated") == 0) {
        length -= 4; /* the header announces 4 bytes more than follow */
    } else if (strcmp(in->arg, "oversized") == 0) {
        memset(bad.bytes + length, 0, sizeof bad.bytes - length);
        length = sizeof bad.bytes; /* WIRE_MAX_FRAME, then one byte more below */
    } else if (strcmp(in->arg, "out-of-order") == 0) {
        wire_begin(&bad, WIRE_HELLO); /* a second Hello, well formed */
        wire_put_u32(&bad, 1, WIRE_PROTOCOL_VERSION);
        wire_put_string(&bad, 2, "again");
        wire_put_u32(&bad, 3, (uint32_t)getpid());
        wire_seal(&bad);
        length = bad.length;
    } else {
        return refuse_arg(p, in, "bad-magic, truncated, oversized or out-of-order");
    }
    static uint8_t record[WIRE_MAX_FRAME + 1];
    memcpy(record, bad.bytes, length);
    if (strcmp(in->arg, "oversized") == 0) length += 1;
    ssize_t n;
    do n = send(p->sock, record, length, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return 0;
}

static const struct {
    const char *name;
    int (*run)(struct probe *p, const struct instruction *in, const struct wire_frame *frame);
} actions[] = {
    {"echo", act_echo},
    {"sleep", act_sleep},
    {"allocate", act_allocate},
    {"spin", act_spin},
    {"hang", act_hang},
    {"crash", act_crash},
    {"abort", act_abort},
    {"exit", act_exit},
    {"syscall", act_syscall},
    {"cancel", act_cancel},
    {"open-url", act_open_url},
    {"fds", act_fds},
    {"return-fd", act_return_fd},
    {"ignore-pings", act_ignore_pings},
    {"memory-warnings", act_memory_warnings},
    {"stat", act_stat},
    {"send-frame", act_send_frame},
    {"grow", act_grow},
    {"allocate-shared", act_allocate_shared},
    {"answer-and-exit", act_answer_and_exit},
    {"ping-appexd", act_ping_appexd},
    {"refuse", act_refuse},
};

/* ---- reading the instruction ------------------------------------------------------------------ */

/* Copies the string value of user-info entry `entry` to `to`; -1 when it is not a string or
 * does not fit, with the reason in `why`. */
static int string_value(const uint8_t *entry, uint32_t length, const char *key, char *to, size_t size, char *why,
                        size_t why_size) {
    uint32_t n;
    const uint8_t *value = wire_field(entry, length, 2, 0, &n);
    if (!value) return snprintf(why, why_size, "%s must have a string value", key), -1;
    if (n >= size) return snprintf(why, why_size, "%s is longer than %zu bytes", key, size - 1), -1;
    memcpy(to, value, n);
    to[n] = 0;
    return 0;
}

static int read_instruction(const struct wire_frame *frame, struct instruction *in, char *why, size_t why_size) {
    uint32_t item_length, entry_length, n;
    strcpy(in->action, "echo");
    const uint8_t *item = wire_field(frame->payload, frame->length, 2, 0, &item_length);
    if (!item) return 0;
    in->text = wire_field(item, item_length, 2, 0, &in->text_length);
    const uint8_t *entry;
    for (unsigned i = 0; (entry = wire_field(item, item_length, 4, i, &entry_length)); i++) {
        const uint8_t *key = wire_field(entry, entry_length, 1, 0, &n);
        if (n == 12 && memcmp(key, "probe.action", 12) == 0) {
            if (string_value(entry, entry_length, "probe.action", in->action, sizeof in->action, why, why_size))
                return -1;
        } else if (n == 9 && memcmp(key, "probe.arg", 9) == 0) {
            if (string_value(entry, entry_length, "probe.arg", in->arg, sizeof in->arg, why, why_size)) return -1;
            in->has_arg = 1;
        }
    }
    return 0;
}

int probe_begin(struct probe *p, const struct wire_frame *frame) {
    static struct instruction in;
    char why[160];
    memset(&in, 0, sizeof in);
    uint32_t n;
    in.id = wire_le(wire_field(frame->payload, frame->length, 1, 0, &n), 8);
    if (read_instruction(frame, &in, why, sizeof why)) return probe_cancel(p, in.id, EINVAL, why);
    fprintf(stderr, "probe: request %llu: %s%s%s\n", (unsigned long long)in.id, in.action, in.has_arg ? " " : "",
            in.arg);
    for (size_t i = 0; i < sizeof actions / sizeof *actions; i++)
        if (strcmp(actions[i].name, in.action) == 0) return actions[i].run(p, &in, frame);
    snprintf(why, sizeof why, "unknown probe.action \"%s\" (see Docs/probe-extension.md)", in.action);
    return probe_cancel(p, in.id, EINVAL, why);
}
