#!/usr/bin/env bash
# Builds the example extensions (static Swift runtime, so the sandbox's read-only /usr and
# /lib are all they need) and assembles Examples/ExampleHost.app with them into OUT.
set -euo pipefail
out=${1:?usage: assemble-examples.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

swift build -c release --static-swift-stdlib --product AppexExampleShare >&2
swift build -c release --static-swift-stdlib --product AppexExampleBalloon >&2
bin=$(swift build -c release --show-bin-path)

rm -rf "$out/ExampleHost.app"
mkdir -p "$out"
cp -R Examples/ExampleHost.app "$out/"
install -m 0755 "$bin/AppexExampleShare" "$out/ExampleHost.app/PlugIns/Share.appex/share"
install -m 0755 "$bin/AppexExampleBalloon" "$out/ExampleHost.app/PlugIns/Balloon.appex/balloon"
echo "$out/ExampleHost.app"
