#!/usr/bin/env bash
# The main job on the embedded default: the shipped example extensions under full governance.
# appexd starts on a private state directory and socket, the example app is installed and its
# extensions enabled, each serves a request (cold, then warm), the probe misses its launch
# deadline and is killed with launch-timeout, and appexd stops cleanly.
set -euo pipefail
app=${1:?usage: demo.sh HOST_APP STATE_DIR}
state=${2:?usage: demo.sh HOST_APP STATE_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$(cd "$root" && swift build --show-bin-path)"
appex="$bin/appex"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "validate the example host app and its extensions"
"$appex" validate "$app"

step "which extensions would a share sheet offer? (activation rules)"
echo "-- for one JPEG:";   "$appex" extensions-for "$app" --item public.jpeg
echo "-- for plain text:"; "$appex" extensions-for "$app" --item public.plain-text

if [ "$(id -u)" -ne 0 ]; then
    step "supervising extensions needs root (cgroups, namespaces, uids): rerun 'sudo make demo'"
    exit 0
fi

rm -rf "$state"
mkdir -p "$state"
socket="$state/appexd.sock"
export APPEX_SOCKET="$socket"

step "start appexd (state $state/state, socket $socket)"
"$bin/appexd" --state-dir "$state/state" --socket "$socket" --config "$root/Docs/appexd.yaml" \
    --log-level notice 2>"$state/appexd.log" &
appexd_pid=$!
stop_appexd() { kill -TERM "$appexd_pid" 2>/dev/null && wait "$appexd_pid" || true; }
trap stop_appexd EXIT
for _ in $(seq 100); do "$appex" list >/dev/null 2>&1 && break; sleep 0.05; done

step "install the example app (validated, copied; extensions start disabled), then enable them"
"$appex" install "$app"
for id in share action widget hello-c; do "$appex" enable "dev.appex.examples.host.$id" >/dev/null; done
"$appex" list

note="$state/note.txt"
echo "a file the host shares: the extension reads it through a descriptor, never by path" >"$note"

step "Share (Swift, SDK): text, a URL and a file; cold, then warm"
"$appex" request dev.appex.examples.host.share --text "Lunch at noon" --url https://example.org/menu --file "$note"
"$appex" request dev.appex.examples.host.share --text "Second note"

step "Share, background upload: the note goes up after the extension has gone (Docs/transfers.md)"
uploads="$state/uploads"
mkdir -p "$uploads"
# The server holds the upload 12 s: past the Share policy's 10 s idle timeout.
python3 "$root/scripts/demo-upload-server.py" "$uploads" 12 &
server_pid=$!
stop_all() { kill -KILL "$server_pid" 2>/dev/null || true; stop_appexd; }
trap stop_all EXIT
for _ in $(seq 100); do [ -s "$uploads/port" ] && break; sleep 0.05; done
"$appex" request dev.appex.examples.host.share --text "Upload me later" \
    --user-info "backgroundUpload=http://127.0.0.1:$(cat "$uploads/port")/note.txt"
"$appex" transfers --state-dir "$state/state"
echo "-- the request is over; waiting for the Share extension to exit (idle timeout)"
share_uid=$(awk '$1 == "dev.appex.examples.host.share" { print $NF }' "$state/state/uids")
while pgrep -x -u "$share_uid" share >/dev/null; do sleep 0.2; done
echo "-- no Share process runs now; the upload is still in flight:"
"$appex" transfers --state-dir "$state/state"
events="$state/state/groups/group.dev.appex.examples/transfer-events.log"
for _ in $(seq 300); do [ -s "$events" ] && break; sleep 0.1; done
echo "-- appexd launched Share again with the session's results; it wrote $events:"
cat "$events"
"$appex" transfers --state-dir "$state/state"
echo "-- what the server received:"
cat "$uploads/note.txt"

step "Action (Swift, SDK): transforms text"
"$appex" request dev.appex.examples.host.action --text "make this loud"
"$appex" request dev.appex.examples.host.action --text "and again, warm"

step "Widget (Swift, SDK): a snapshot, fast"
"$appex" request dev.appex.examples.host.widget
"$appex" request dev.appex.examples.host.widget

step "HelloC (C, no SDK, written from Docs/protocol.md)"
"$appex" request dev.appex.examples.host.hello-c --text "hello from the host"
"$appex" request dev.appex.examples.host.hello-c --text "again"

step "a request that does not match an extension's activation rule is refused"
"$appex" request dev.appex.examples.host.action || true

step "the probe sleeps 3 s before checking in: its 1 s launch deadline kills it (launch-timeout)"
slow="$state/src/SlowProbe.appex"
mkdir -p "$slow"
cp "$app/PlugIns/Probe.appex/probe" "$slow/probe"
sed 's/dev.appex.examples.host.probe/dev.appex.examples.slow-probe/' "$app/PlugIns/Probe.appex/Info.plist" >"$slow/Info.plist"
echo "sleep-before-checkin-ms=3000" >"$slow/probe.conf"
"$appex" install "$slow" >/dev/null
"$appex" enable dev.appex.examples.slow-probe >/dev/null
"$appex" request dev.appex.examples.slow-probe --text "anyone there?" || true

step "the balloon grows until the kernel stops it at its memory limit (appex run, peak memory)"
"$appex" run --json --state-dir "$state/run" "$app/PlugIns/Balloon.appex" -- 4 512 \
    | grep -E '"(killReason|peakMemoryBytes|memoryLimitBytes)"' || true

step "stop appexd (SIGTERM: extensions terminate, sandboxes and cgroups are removed)"
trap - EXIT
kill -KILL "$server_pid" 2>/dev/null || true
stop_appexd
echo "appexd stopped; its log: $state/appexd.log"
tail -n 3 "$state/appexd.log"
