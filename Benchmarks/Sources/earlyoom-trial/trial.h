/* What earlyoom-trial's two kinds of trial share (main.c says what a trial is). */
#ifndef EARLYOOM_TRIAL_H
#define EARLYOOM_TRIAL_H

#include "grow.h"

#include <stdint.h>
#include <sys/types.h>

/* Says what failed, with errno, on stderr, and exits 1. */
void die(const char *what);
uint64_t monotonic_ns(void);
void sleep_micros(long long micros);
/* A whole number ≥ 0 from an argument, or exit 1 naming the argument. */
long long number(const char *text, const char *name);
long long mem_available_kib(void);
/* PLAN (grow.h's text form), or exit 1 saying what is wrong with it. */
void parse_plan(const char *text, struct grow_plan *plan);
/* The grow log the harness made at `path`, mapped shared, or exit 1. */
struct grow_log *open_log(const char *path);

/* A process of the trial's load: dies with the init (which it never outlives), named `name`
 * (as earlyoom shows it), oom_score_adj 1000 so that it and nothing outside the trial is what
 * the kernel would kill first too. Returns in the child; the parent gets the pid. */
pid_t fork_member(const char *name);

/* The grower's hook after each step: MemAvailable as earlyoom reads it, so that the harness
 * can tell when earlyoom's own input crossed its line, whatever else the machine was doing.
 * open_meminfo first, in the grower. */
void open_meminfo(void);
void note_available(struct grow_step *step);

/* earlyoom, started with its SIGTERM line `cross_kib` under MemAvailable as read now (both
 * kept in `w`); swap never holds it back (-s 100), no periodic reports (-r 0); `prefer` a
 * --prefer pattern, or NULL to leave the choice to earlyoom (largest oom_score). Returns once
 * it has printed its configuration (its poll loop starts right after), or exits 1. */
struct watcher {
    pid_t pid;
    int out;
    long long available_kib, threshold_kib;
};
void watcher_start(struct watcher *w, const char *earlyoom, long long cross_kib, const char *prefer);
/* earlyoom's output so far, a line at a time, echoed as `earlyoom: <line>`. 1 once a line
 * containing `mark` was seen (mark may be NULL), -1 at end of file, else 0. */
int watcher_drain(struct watcher *w, const char *mark);
/* SIGKILLs and reaps it: it can kill nothing more. */
void watcher_stop(struct watcher *w);

/* The trials, each run as the namespace's init with /proc mounted for it (main.c). */
void latency_trial(char **argv);
void crossing_trial(char **argv);

#endif
