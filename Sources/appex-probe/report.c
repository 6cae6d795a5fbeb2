// The probe's one output line. Tests and `appex test-policy` read it, so its shape is fixed:
// "ok[ detail]", "errno=NAME[ detail]" or "unsupported WHAT" (Docs/probe.md).
#include "probe.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *probe_errname(int e) {
    // A failure without an errno (a child that exited non-zero).
    if (e == 0) return "EOTHER";
    for (const struct probe_errno *p = probe_errno_names; p->name; p++) {
        if (p->number == e) return p->name;
    }
    // Kernel-internal codes that leak out (ENOTSUPP, 524) and anything newer: the number.
    static char buf[16];
    snprintf(buf, sizeof(buf), "%d", e);
    return buf;
}

static void detail(const char *fmt, va_list ap) {
    if (!fmt) return;
    putchar(' ');
    vprintf(fmt, ap);
}

int probe_result(long r) {
    if (r < 0) return probe_fail(errno, NULL);
    return probe_ok(NULL);
}

int probe_ok(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("ok", stdout);
    detail(fmt, ap);
    va_end(ap);
    putchar('\n');
    return 0;
}

int probe_fail(int e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("errno=%s", probe_errname(e));
    detail(fmt, ap);
    va_end(ap);
    putchar('\n');
    return 0;
}

int probe_unsupported(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("unsupported", stdout);
    detail(fmt, ap);
    va_end(ap);
    putchar('\n');
    return PROBE_EXIT_UNSUPPORTED;
}

void probe_usage_word(const char *name, const char *args, int last, int *column) {
    int width = (int)strlen(name) + (*args ? (int)strlen(args) + 1 : 0) + 3;
    if (*column + width > 96) {
        fputs("\n ", stderr);
        *column = 1;
    }
    fprintf(stderr, " %s%s%s%s", name, *args ? " " : "", args, last ? "\n" : " |");
    *column = last ? 0 : *column + width;
}
