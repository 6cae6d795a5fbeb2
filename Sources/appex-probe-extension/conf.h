/* probe.conf: what the probe does before it checks in (Docs/probe-extension.md). */
#ifndef PROBE_CONF_H
#define PROBE_CONF_H

struct probe_conf {
    long sleep_ms; /* sleep-before-checkin-ms, 0 when absent */
    int exit_code; /* exit-before-checkin, -1 when absent */
    int crash; /* crash-before-checkin=1 */
    int ignore_pings; /* ignore-pings=1 */
};

/* Reads $APPEX_BUNDLE_PATH/probe.conf into *conf (defaults when the variable is unset or the
 * file does not exist). On any other problem prints it on stderr, naming the file and line,
 * and returns -1. */
int probe_conf_load(struct probe_conf *conf);

#endif
