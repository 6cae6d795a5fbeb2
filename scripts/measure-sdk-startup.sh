#!/usr/bin/env bash
# Start-up cost of extensions built on AppexExtensionKit (Docs/sdk.md, "Start-up"): builds the
# minimal extensions of Benchmarks/sdk-startup in release mode, with the static Swift runtime
# (as shipped extensions are built) and with the shared one, and times spawn -> Hello for each
# with the hello-latency harness, next to a C floor that sends a prebuilt Hello.
# usage: measure-sdk-startup.sh [RUNS]   (default 300)
set -euo pipefail
runs=${1:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/Benchmarks/sdk-startup"
out=.build/harness
mkdir -p "$out"
cc -O2 -Wall -o "$out/hello-latency" harness/hello-latency.c
cc -O2 -Wall -o "$out/hello-floor" harness/hello-floor.c

extensions=(startup-swift-floor startup-sdk startup-foundation-essentials startup-foundation)
swift build -c release --static-swift-stdlib >&2
static=$(swift build -c release --static-swift-stdlib --show-bin-path)
swift build -c release --scratch-path .build/dynamic >&2
dynamic=$(swift build -c release --scratch-path .build/dynamic --show-bin-path)

echo "== static Swift runtime (-c release --static-swift-stdlib), $runs runs each"
"$out/hello-latency" "$runs" "$out/hello-floor" "${extensions[@]/#/$static/}"
echo
echo "== shared Swift runtime (-c release), $runs runs each"
"$out/hello-latency" "$runs" "${extensions[@]/#/$dynamic/}"
echo
for e in "${extensions[@]}"; do
    printf '%-32s static %s bytes, shared %s bytes\n' "$e" "$(stat -c %s "$static/$e")" "$(stat -c %s "$dynamic/$e")"
done
