/* probe.conf, parsed strictly: a typo in a test's instructions must fail loudly, not make the
 * probe quietly do nothing. Lines are `key=value` with no spaces; blank lines and lines
 * starting with `#` are skipped; each key at most once. */
#define _GNU_SOURCE
#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CONF 4096

struct key {
    const char *name;
    long min, max;
};

static const struct key keys[] = {
    {"sleep-before-checkin-ms", 0, 3600000},
    {"exit-before-checkin", 0, 255},
    {"crash-before-checkin", 0, 1},
    {"ignore-pings", 0, 1},
};
#define KEY_COUNT (sizeof keys / sizeof *keys)

static int complain(const char *path, int line, const char *format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "probe: %s:%d: ", path, line);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    return -1;
}

/* The file's text, NUL-terminated, or NULL with *missing set when it does not exist. */
static char *read_conf(const char *path, int *missing) {
    static char text[MAX_CONF + 1];
    *missing = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            *missing = 1;
            return NULL;
        }
        fprintf(stderr, "probe: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fd, text + got, MAX_CONF + 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            fprintf(stderr, "probe: cannot read %s: %s\n", path, strerror(errno));
            close(fd);
            return NULL;
        }
        if (n == 0) break;
        got += (size_t)n;
        if (got > MAX_CONF) {
            fprintf(stderr, "probe: %s is over %d bytes; it holds a few key=value lines\n", path, MAX_CONF);
            close(fd);
            return NULL;
        }
    }
    close(fd);
    if (memchr(text, 0, got)) {
        fprintf(stderr, "probe: %s contains a NUL byte\n", path);
        return NULL;
    }
    text[got] = 0;
    return text;
}

int probe_conf_load(struct probe_conf *conf) {
    *conf = (struct probe_conf){.sleep_ms = 0, .exit_code = -1, .crash = 0, .ignore_pings = 0};
    const char *bundle = getenv("APPEX_BUNDLE_PATH");
    if (!bundle || !*bundle) return 0;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/probe.conf", bundle) >= (int)sizeof path) {
        fprintf(stderr, "probe: APPEX_BUNDLE_PATH is too long\n");
        return -1;
    }
    int missing;
    char *text = read_conf(path, &missing);
    if (!text) return missing ? 0 : -1;

    long values[KEY_COUNT];
    int given[KEY_COUNT] = {0};
    int number = 0;
    for (char *line = text, *next; line; line = next) {
        number++;
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (*line == 0 || *line == '#') continue;
        char *equals = strchr(line, '=');
        if (!equals) return complain(path, number, "expected key=value, got \"%s\"", line);
        *equals = 0;
        const char *value = equals + 1;
        size_t k = 0;
        while (k < KEY_COUNT && strcmp(keys[k].name, line) != 0) k++;
        if (k == KEY_COUNT)
            return complain(path, number,
                            "unknown key \"%s\" (known: sleep-before-checkin-ms, "
                            "exit-before-checkin, crash-before-checkin, ignore-pings)",
                            line);
        if (given[k]) return complain(path, number, "key \"%s\" given twice", line);
        char *end;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (*value < '0' || *value > '9' || *end != 0 || errno != 0 || v < keys[k].min || v > keys[k].max)
            return complain(path, number, "%s wants a whole number from %ld to %ld, got \"%s\"", keys[k].name,
                            keys[k].min, keys[k].max, value);
        given[k] = 1;
        values[k] = v;
    }
    if (given[0]) conf->sleep_ms = values[0];
    if (given[1]) conf->exit_code = (int)values[1];
    if (given[2]) conf->crash = (int)values[2];
    if (given[3]) conf->ignore_pings = (int)values[3];
    return 0;
}
