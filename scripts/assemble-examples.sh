#!/usr/bin/env bash
# Builds the example extensions (static Swift runtime, so the sandbox's read-only /usr and
# /lib are all they need) and assembles Examples/ExampleHost.app with them into OUT.
set -euo pipefail
out=${1:?usage: assemble-examples.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

rm -rf "$out/ExampleHost.app"
mkdir -p "$out"
cp -R Examples/ExampleHost.app "$out/"
plugins="$out/ExampleHost.app/PlugIns"

# Swift extensions: product name -> bundle/executable. Share, Action and Widget are built on
# AppexExtensionKit (Docs/sdk.md); Balloon is a bare memory-limit demonstration.
swift_extensions=(
    "AppexExampleShare Share.appex/share"
    "AppexExampleAction Action.appex/action"
    "AppexExampleWidget Widget.appex/widget"
    "AppexExampleBalloon Balloon.appex/balloon"
)
for entry in "${swift_extensions[@]}"; do
    swift build -c release --static-swift-stdlib --product "${entry%% *}" >&2
done
bin=$(swift build -c release --show-bin-path)
for entry in "${swift_extensions[@]}"; do
    install -m 0755 "$bin/${entry%% *}" "$plugins/${entry#* }"
done

echo "$out/ExampleHost.app"

# C extensions: written in C from Docs/protocol.md alone (no Swift, no SDK), so no static
# runtime to ask for; glibc comes from the sandbox's read-only /usr. HelloC answers text
# requests; Probe misbehaves on instruction (Docs/probe-extension.md).
swift build -c release --product appex-example-c >&2
swift build -c release --product appex-probe-extension >&2
# HelloLib: HelloC's twin on libappex (Docs/libappex.md), the library linked in statically.
swift build -c release --product appex-example-lib >&2
cbin=$(swift build -c release --show-bin-path)
for bundle in HelloC HelloLib Probe; do
  install -D -m 0644 "Examples/ExampleHost.app/PlugIns/$bundle.appex/Info.plist" \
    "$out/ExampleHost.app/PlugIns/$bundle.appex/Info.plist"
done
install -m 0755 "$cbin/appex-example-c" "$out/ExampleHost.app/PlugIns/HelloC.appex/hello-c"
install -m 0755 "$cbin/appex-probe-extension" "$out/ExampleHost.app/PlugIns/Probe.appex/probe"
install -m 0755 "$cbin/appex-example-lib" "$out/ExampleHost.app/PlugIns/HelloLib.appex/hello-lib"
