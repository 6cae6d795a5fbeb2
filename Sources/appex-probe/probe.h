// appex-probe's shared declarations. The probe tries one thing per run and prints one line
// (Docs/probe.md): "ok[ detail]" when the kernel let it happen, "errno=NAME[ detail]" when a
// call failed, "unsupported WHAT" when this build or machine cannot make the attempt.
#pragma once
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>

// Exit statuses: a result line (whatever it says) exits 0.
enum { PROBE_EXIT_USAGE = 2, PROBE_EXIT_UNSUPPORTED = 3 };

// ---- report.c: the one output line ----
const char *probe_errname(int e);
// "ok" or "errno=NAME" for a libc-style return (negative means errno is set).
int probe_result(long r);
// "ok DETAIL" (printf-style detail; NULL for none).
int probe_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// "errno=NAME" plus an optional detail, e.g. "at=symlink" for a step before the attempt.
int probe_fail(int e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// "unsupported WHAT", exit status 3.
int probe_unsupported(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// The usage text on stderr, exit status 2.
int probe_usage(void);
// One "NAME ARGS |" entry of the usage text, wrapped at 96 columns (*column: where it is).
void probe_usage_word(const char *name, const char *args, int last, int *column);

// ---- arguments.c ----
// Parses a number (decimal, 0x hex, 0 octal; a leading '-' wraps as the kernel reads it).
int probe_number(const char *s, unsigned long *out);
// Memory below 4 GiB where the machine allows it, so pointers survive the i386 ABI's
// 32-bit registers; zeroed, never freed (the probe is short-lived).
void *probe_low(size_t n);
const char *probe_low_string(const char *s);
// One raw-call argument: a number, "null", "str:TEXT" or "buf:N" (N zero bytes, at most 1 MiB).
int probe_syscall_argument(const char *s, unsigned long *out);

// ---- abi.c: making a call through one of the kernel's system-call ABIs ----
enum probe_abi { PROBE_ABI_NATIVE, PROBE_ABI_I386, PROBE_ABI_X32 };
struct probe_syscall {
    const char *name;
    long number;
};
struct probe_errno {
    int number;
    const char *name;
};
extern const struct probe_syscall probe_native_syscalls[];
#if defined(__x86_64__)
extern const struct probe_syscall probe_i386_syscalls[];
extern const struct probe_syscall probe_x32_syscalls[];
#endif
extern const struct probe_errno probe_errno_names[];

const char *probe_abi_name(enum probe_abi abi);
// Whether this build can make calls through abi (i386 and x32 exist only on x86_64).
int probe_abi_available(enum probe_abi abi);
// The number of a call by name in abi's table, or -1.
long probe_syscall_number(enum probe_abi abi, const char *name);
// Makes call nr through abi: the result, or -1 with errno set. x32's bit is added here.
// *unavailable is set when the machine refused the ABI itself (int 0x80 faulted).
long probe_invoke(enum probe_abi abi, long nr, const unsigned long a[6], int *unavailable);

// ---- calls.c: the forbidden calls, each with arguments that are harmless if it runs ----
int probe_call_main(enum probe_abi abi, int argc, char **argv);
int probe_is_call(const char *name);
void probe_calls_usage(void);

// ---- the plain actions: files.c, processes.c, system.c, network.c ----
struct probe_action {
    const char *name;
    int min_args, max_args; // after the action's name; max -1: any number
    int (*run)(int argc, char **argv); // argv[0] is the action's name
    const char *usage; // "ARG..." as shown in the usage text
};
extern const struct probe_action probe_file_actions[];
extern const struct probe_action probe_process_actions[];
extern const struct probe_action probe_system_actions[];
extern const struct probe_action probe_network_actions[];
