#!/usr/bin/env bash
# The main job on the embedded default: the shipped example extensions, validated, matched
# against items like a share sheet would, and launched under full governance.
set -euo pipefail
app=${1:?usage: demo.sh HOST_APP STATE_DIR}
state=${2:?usage: demo.sh HOST_APP STATE_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
appex="$(cd "$root" && swift build --show-bin-path)/appex"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "validate the example host app and its extensions"
"$appex" validate "$app"

step "describe the share extension and the policy it runs under"
"$appex" info "$app/PlugIns/Share.appex"

step "which extensions would a share sheet offer? (activation rules)"
echo "-- for one JPEG:";        "$appex" extensions-for "$app" --item public.jpeg
echo "-- for plain text:";      "$appex" extensions-for "$app" --item public.plain-text

if [ "$(id -u)" -ne 0 ]; then
    step "launching needs root (cgroups, namespaces, uids): rerun 'sudo make demo'"
    exit 0
fi

mkdir -p "$state"
step "run the share extension in its sandbox (twice: its container persists)"
"$appex" run --state-dir "$state" "$app/PlugIns/Share.appex"
"$appex" run --state-dir "$state" "$app/PlugIns/Share.appex"
echo "-- its log (the extension's own stdout/stderr):"
tail -n 4 "$state/logs/dev.appex.examples.host.share.log" 2>/dev/null || true

step "launch the share extension 3 times into one sandbox, as a supervisor does (later launches only enter it)"
"$appex" run --launches 3 --state-dir "$state" "$app/PlugIns/Share.appex" | grep -E '^  launch:'

step "run the balloon widget: it grows until the kernel stops it at its limit"
"$appex" run --json --state-dir "$state" "$app/PlugIns/Balloon.appex" -- 4 512 || true
