#!/usr/bin/env bash
# `make test-package`: installs the Debian package `make deb` built on this machine (Debian 12,
# as root), checks the installed tree works from its prefix alone, then removes and purges it
# and checks nothing is left. Refuses to run where an `appex` package is already installed.
#
#   scripts/test-package.sh DEB_DIR
set -euo pipefail
dir=${1:?usage: test-package.sh DEB_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(tr -d '[:space:]' < "$root/VERSION")
deb="$dir/appex_${version}_$(dpkg --print-architecture).deb"

[ "$(id -u)" -eq 0 ] || { echo "test-package: needs root (dpkg -i)" >&2; exit 1; }
[ -f "$deb" ] || { echo "test-package: $deb missing (make deb)" >&2; exit 1; }
if dpkg-query -W -f='${Status}' appex 2>/dev/null | grep -q installed; then
    echo "test-package: an appex package is installed here already; not touching it" >&2; exit 1
fi
for p in /etc/appex /var/lib/appex /run/appex; do
    [ ! -e "$p" ] || { echo "test-package: $p exists already; not touching it" >&2; exit 1; }
done
# The compiled-policy cache is shared with every root run of a development build here: purge
# deletes it (it is remade on demand), and other runs may make it again meanwhile, so it is
# only checked when it was not there before.
cache_check=/var/cache/appex
[ ! -e /var/cache/appex ] || cache_check=

work=$(mktemp -d /tmp/appex-test-package-XXXXXX)
chmod 0755 "$work"
daemon=
cleanup() {
    set +e
    [ -z "$daemon" ] || { kill -TERM "$daemon" 2>/dev/null; sleep 1; kill -KILL "$daemon" 2>/dev/null; }
    dpkg --purge appex >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
failures=0
check() { # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@" >"$work/out" 2>&1; then echo "ok   $what"; else echo "FAIL $what"; sed 's/^/     /' "$work/out"; failures=$((failures + 1)); fi
}
# The installed tree, never the checkout: no variables pointing into it, and the checkout
# hidden behind an empty tmpfs in a mount namespace of its own.
installed() { env -u APPEX_POLICIES -u APPEX_SANDBOX_INIT -u APPEX_COMMANDS \
    unshare -m sh -c 'mount -t tmpfs none "$0" && cd / && exec "$@"' "$root" "$@"; }

dpkg-deb -c "$deb" | awk '{ print substr($6, 2) }' | grep -v '/$' > "$work/files"
check "dpkg -i $(basename "$deb")" dpkg -i "$deb"
check "appex --version is $version" sh -c "[ \"\$(appex --version)\" = $version ]"
check "appexd --version is $version" sh -c "[ \"\$(/usr/sbin/appexd --version)\" = $version ]"
check "appex-sandbox-init --version is $version" sh -c "[ \"\$(/usr/libexec/appex/appex-sandbox-init --version)\" = $version ]"
check "the unit verifies" systemd-analyze verify /lib/systemd/system/appexd.service
check "the example configuration is /etc/appex/appexd.yaml" cmp /etc/appex/appexd.yaml "$root/Docs/appexd.yaml"
check "policies load from /usr/share/appex/Policies" installed appex policy check
check "man appex exists" test -f /usr/share/man/man1/appex.1
check "bash completion" test -s /usr/share/bash-completion/completions/appex

# appexd from the package on a state directory and socket of the test's own (this machine's
# init is not systemd: the unit is verified, not started), and doctor against it. Started as
# one command, not through installed(): env, unshare and sh each exec the next, so $! is appexd.
printf 'hosts: []\nadmins: []\n' > "$work/appexd.yaml"
env -u APPEX_POLICIES -u APPEX_SANDBOX_INIT -u APPEX_COMMANDS \
    unshare -m sh -c 'mount -t tmpfs none "$0" && cd / && exec "$@"' "$root" /usr/sbin/appexd --state-dir "$work/state" --socket "$work/appexd.sock" --metrics 127.0.0.1:0 \
    --uid-range 371000-371099 --log-level warning --config "$work/appexd.yaml" 2>"$work/appexd.log" &
daemon=$!
for _ in $(seq 100); do [ -S "$work/appexd.sock" ] && break; sleep 0.1; done
[ -S "$work/appexd.sock" ] || { echo "FAIL appexd did not start:"; sed 's/^/     /' "$work/appexd.log"; }
check "appex doctor is green against the installed appexd" \
    installed appex doctor --socket "$work/appexd.sock" --state-dir "$work/state" --uid-range 371000-371099
cp "$work/out" "$work/doctor"
grep -E 'policies|sandbox-init' "$work/doctor" | sed 's/^/     /'
check "it found the installed policies and init" \
    sh -c "grep -q 'policies: /usr/share/appex/Policies' '$work/doctor' && grep -q 'sandbox-init: /usr/libexec/appex/appex-sandbox-init' '$work/doctor'"
check "appex list through the installed appexd" installed appex list --socket "$work/appexd.sock"
# libappex from the package (Docs/libappex.md): a C host built with pkg-config alone, against
# the installed appexd (which refuses the request: no such extension is installed).
check "a C host builds with pkg-config --cflags --libs appex" \
    sh -c "cc '$root/Sources/appex-host-c/main.c' \$(pkg-config --cflags --libs appex) -o '$work/host-c'"
check "it reaches the installed appexd through libappex.so" \
    sh -c "'$work/host-c' --socket '$work/appexd.sock' dev.appex.none --text x | grep -q 'refused: unknown-extension'"
# And both sides on the package's libappex: HelloLib (HelloC's twin) built with pkg-config alone,
# installed into that appexd, answers the pkg-config host.
mkdir -p "$work/src/HelloLib.appex" && chmod 0755 "$work/src" "$work/src/HelloLib.appex"
cp "$root/Examples/ExampleHost.app/PlugIns/HelloLib.appex/Info.plist" "$work/src/HelloLib.appex/"
check "a C extension builds with pkg-config --cflags --libs appex" \
    sh -c "cc '$root/Sources/appex-example-lib/main.c' \$(pkg-config --cflags --libs appex) -o '$work/src/HelloLib.appex/hello-lib'"
check "the installed appexd installs and enables it" \
    sh -c "appex install --socket '$work/appexd.sock' '$work/src/HelloLib.appex' && appex enable --socket '$work/appexd.sock' dev.appex.examples.host.hello-lib"
check "the pkg-config host gets the pkg-config extension's answer" \
    sh -c "'$work/host-c' --socket '$work/appexd.sock' dev.appex.examples.host.hello-lib --text olleh | grep -q 'hello from libappex: hello'"
check "appex_build_info on /metrics" sh -c "curl -sf http://\$(cat '$work/state/metrics-address')/metrics | grep -Ex 'appex_build_info[{]version=\"$version\"[}] 1(\.0)?'"
kill -TERM "$daemon" 2>/dev/null || true; wait "$daemon" || true; daemon=

check "dpkg -r appex" dpkg -r appex
check "the configuration stays after remove" test -f /etc/appex/appexd.yaml
check "dpkg --purge appex" dpkg --purge appex
left=$(while read -r f; do [ ! -e "$f" ] || echo "$f"; done < "$work/files"; \
       for p in /etc/appex /var/lib/appex $cache_check /usr/share/appex /usr/libexec/appex; do [ ! -e "$p" ] || echo "$p"; done)
check "nothing left after purge" test -z "$left"
[ -z "$left" ] || echo "$left" | sed 's/^/     left: /'

[ "$failures" -eq 0 ] && echo "test-package: all passed" || { echo "test-package: $failures failed"; exit 1; }
