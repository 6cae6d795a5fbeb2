#!/usr/bin/env bash
# Regenerates BuildSupport/appex-link-order.txt, the order in which lld lays out a release
# `appex`: first the functions and data an `appex run` touches, so that its start faults in a
# few dense ranges of the executable instead of pages spread over 100 MB. Run it after changes
# to the run path; a stale order is harmless (names that no longer exist are skipped, new code
# is laid out after the listed symbols), only slower. Docs/launch-sequence.md, "Laid out for the run".
#
# Needs root (it runs `appex run`), perf (Debian: linux-perf), python3 and a C compiler.
# Usage: BuildSupport/make-link-order.sh [ROUNDS]   (default 12)
#
# How: a release build is linked once with the current order and its link command kept. Its
# runs are sampled (perf, user cycles) for the functions that take time; then, round after
# round, it is relinked with the order so far, run, and every page fault of the run is traced
# (exceptions:page_fault_user): the symbol at each faulting address of the executable joins
# the order. A fault names only the first symbol touched in a range the kernel maps at once,
# so the rounds go on until a run faults on nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."
order=$PWD/BuildSupport/appex-link-order.txt
rounds=${1:-12}
[ "$(id -u)" = 0 ] || { echo "make-link-order: needs root (appex run)" >&2; exit 1; }
command -v perf >/dev/null || { echo "make-link-order: needs perf (Debian: linux-perf)" >&2; exit 1; }

work=$(mktemp -d /tmp/appex-link-order.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The release build, and the command that links it (SwiftPM prints it with -v). The copy run
# from $work hands its first run (policies not yet cached) to the full tool beside the build.
swift build -c release --static-swift-stdlib --product appex-commands >/dev/null
swift build -c release --static-swift-stdlib --product appex >/dev/null
bin=$(swift build -c release --show-bin-path)/appex
export APPEX_COMMANDS=$(swift build -c release --show-bin-path)/appex-commands
rm -f "$bin"
swift build -c release --static-swift-stdlib --product appex -v 2>&1 |
    grep -E "^/[^ ]*swiftc .* -o $bin " | tail -1 >"$work/link"
[ -s "$work/link" ] || { echo "make-link-order: no link command in swift build -v" >&2; exit 1; }
grep -q -- "--symbol-ordering-file=$order" "$work/link" ||
    { echo "make-link-order: the link command does not use $order (Package.swift)" >&2; exit 1; }
link=$(sed -e "s#--symbol-ordering-file=$order#--symbol-ordering-file=$work/order#" \
           -e "s# -o $bin # -o $work/appex #" "$work/link")

# What is run: `appex run` of a static `true`, the shape `make bench-launch` measures.
printf 'int main(void) { return 0; }\n' >"$work/true.c"
${CC:-cc} -static -O2 -o "$work/true" "$work/true.c"
mkdir -p "$work/state" "$work/cache"
printf '%s\n' '#!/bin/sh' \
    "APPEX_POLICY_CACHE=$work/cache exec $work/appex run $work/true --extension-point com.apple.widget-extension --state-dir $work/state \"\$@\" >/dev/null" \
    >"$work/run"
chmod +x "$work/run"

# symbols BINARY < ADDRESSES: the name of the symbol each hexadecimal address falls in, once.
symbols() {
    nm -S -n "$1" >"$work/nm"
    python3 -c '
import bisect, sys
syms = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4:
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
syms.sort()
starts = [s[0] for s in syms]
seen = set()
for line in sys.stdin:
    a = int(line, 16)
    i = bisect.bisect_right(starts, a) - 1
    if i >= 0 and a < syms[i][0] + syms[i][1] and syms[i][2] not in seen:
        seen.add(syms[i][2])
        print(syms[i][2])
' "$work/nm"
}

# Seeds: the functions that take time, sampled over many runs (with and without --json).
: >"$work/order"
eval "$link" >/dev/null 2>&1
for _ in 1 2 3; do "$work/run"; done
perf record -q -e cycles:u -c 3000 -o "$work/samples" -- \
    sh -c "for i in \$(seq 60); do $work/run; $work/run --json; done" >/dev/null 2>&1
perf script -i "$work/samples" -F comm,ip 2>/dev/null |
    awk '$1 ~ /^appex/ && $1 !~ /^appex-(sandbox|commands)/ { print $2 }' | sort -u |
    symbols "$work/appex" >"$work/order"
echo "make-link-order: $(wc -l <"$work/order") symbols from samples"

# Rounds: relink, run, add the symbols at the run's page faults.
for round in $(seq "$rounds"); do
    eval "$link" >/dev/null 2>&1
    "$work/run"; "$work/run"
    perf record -q -e exceptions:page_fault_user -o "$work/faults" -- "$work/run" >/dev/null 2>&1
    perf script -i "$work/faults" -F comm,trace 2>/dev/null |
        awk '$1 ~ /^appex/ && $1 !~ /^appex-(sandbox|commands)/ { for (i = 2; i <= NF; i++) if ($i ~ /^address=/) print substr($i, 11) }' |
        symbols "$work/appex" | { grep -vxF -f "$work/order" || true; } >"$work/new"
    faults=$(perf script -i "$work/faults" -F comm 2>/dev/null | awk '$1 ~ /^appex/ && $1 !~ /^appex-(sandbox|commands)/' | wc -l)
    echo "make-link-order: round $round: $faults page faults, $(wc -l <"$work/new") new symbols"
    [ -s "$work/new" ] || break
    cat "$work/new" >>"$work/order"
done

{
    echo "# Link order of a release appex (lld --symbol-ordering-file): the symbols an"
    echo "# \`appex run\` touches, first. Generated by BuildSupport/make-link-order.sh; do not edit."
    cat "$work/order"
} >"$order"
echo "make-link-order: $(grep -vc '^#' "$order") symbols in $order; rebuild appex to use it"
rm -f "$bin"
