/* The probe extension's state and the answers it sends (Docs/probe-extension.md). */
#ifndef PROBE_H
#define PROBE_H

#include <stdint.h>
#include <time.h>

#include "wire.h"

#define PROBE_ERROR_DOMAIN "dev.appex.probe"
/* Section 3: at most 64 requests in flight on one connection. */
#define PROBE_MAX_REQUESTS 64

/* A request answered later: after a sleep, or when the OpenURLResult arrives. */
struct pending {
    uint64_t id; /* 0: a free slot */
    int awaiting_url; /* OpenURLResults still to come (else sleeping until `due`, or awaiting pongs) */
    int awaiting_pongs; /* Pongs still to come for the ping-appexd action */
    int pings; /* how many that action sent */
    char url_results[8 * 9]; /* "accepted" / "refused", comma-separated, in arrival order */
    struct timespec due; /* CLOCK_MONOTONIC */
    long sleep_ms;
};

struct probe {
    int sock;
    int ignore_pings;
    uint64_t last_request; /* the highest request id begun */
    unsigned long memory_warnings;
    unsigned long will_expire;
    struct pending pending[PROBE_MAX_REQUESTS];
};

/* Serves one BeginRequest (already checked by the wire layer and the sequence rules): answers
 * it now or leaves it in `pending`. Some actions never return (spin, hang, crash, abort, exit).
 * Returns 0, or -1 when sending failed (wire_problem says why). */
int probe_begin(struct probe *p, const struct wire_frame *frame);

/* Answers: CompleteRequest with one item of content text; CancelRequest in dev.appex.probe. */
int probe_complete_text(struct probe *p, uint64_t id, const char *text);
int probe_cancel(struct probe *p, uint64_t id, int64_t code, const char *message);

/* Dies of SIGSEGV (crash-before-checkin, the crash action). */
_Noreturn void probe_crash(void);

#endif
