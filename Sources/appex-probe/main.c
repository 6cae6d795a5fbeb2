// appex-probe: tries one thing inside the sandbox and prints one machine-readable line, so
// sandbox tests and `appex test-policy` can assert what the kernel allowed. It is C so that
// each action is exactly the system call it names. Every attempt is harmless when the
// sandbox is NOT in effect, because the tests run as root on real machines (calls.c, files.c).
//
//   appex-probe ACTION [ARG...]          the native ABI
//   appex-probe i386|x32 CALL [ARG...]   a call through another x86 system-call ABI
//
// Output (Docs/probe.md): "ok[ detail]", "errno=NAME[ detail]" (exit 0), "unsupported WHAT"
// (exit 3); a malformed command prints usage on stderr (exit 2).
#include "probe.h"
#include <stdio.h>
#include <string.h>

static const struct probe_action *const action_tables[] = {
    probe_file_actions,
    probe_process_actions,
    probe_system_actions,
    probe_network_actions,
};
enum { NTABLES = sizeof(action_tables) / sizeof(action_tables[0]) };

int probe_usage(void) {
    fputs("usage: appex-probe ACTION [ARG...] | appex-probe i386|x32 CALL [ARG...]\nactions:\n", stderr);
    for (int t = 0; t < NTABLES; t++) {
        int column = 1;
        fputs(" ", stderr);
        for (const struct probe_action *a = action_tables[t]; a->name; a++) {
            probe_usage_word(a->name, a->usage, !a[1].name, &column);
        }
    }
    probe_calls_usage();
    return PROBE_EXIT_USAGE;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) return probe_usage();
    const char *name = argv[1];
    int n = argc - 2; // the action's own arguments

    if (!strcmp(name, "i386") || !strcmp(name, "x32")) {
        if (argc < 3 || !probe_is_call(argv[2])) return probe_usage();
        return probe_call_main(!strcmp(name, "i386") ? PROBE_ABI_I386 : PROBE_ABI_X32, argc - 2, argv + 2);
    }
    if (probe_is_call(name)) return probe_call_main(PROBE_ABI_NATIVE, argc - 1, argv + 1);
    for (int t = 0; t < NTABLES; t++) {
        for (const struct probe_action *a = action_tables[t]; a->name; a++) {
            if (strcmp(a->name, name)) continue;
            if (n < a->min_args || (a->max_args >= 0 && n > a->max_args)) return probe_usage();
            return a->run(argc - 1, argv + 1);
        }
    }
    return probe_usage();
}
