#!/usr/bin/env bash
# Installs the system packages Appex builds and tests against (and, with APPEX_REQUIRE_CHROMIUM=1,
# Chromium), when missing. As root it installs them;
# otherwise it prints the one command to run and fails.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! pkg-config --exists libseccomp 2>/dev/null; then missing+=(libseccomp-dev); fi
command -v cc >/dev/null 2>&1 || missing+=(gcc)
# appex top's test drives it in a real terminal: tmux.
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
# The systemd unit's test runs systemd-analyze verify (the tools only; systemd need not be init).
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# Headless Chromium renders the HTML pages of appex profile/report in their test; only CI
# (and whoever sets APPEX_REQUIRE_CHROMIUM=1) needs it, elsewhere that test part is skipped.
if [ "${APPEX_REQUIRE_CHROMIUM:-}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then missing+=(chromium fonts-liberation); fi

# promtool (Debian's prometheus package) checks the metrics exposition and the alert rules in
# their tests; only CI (and whoever sets APPEX_REQUIRE_PROMTOOL=1) needs it, elsewhere skipped.
if [ "${APPEX_REQUIRE_PROMTOOL:-}" = 1 ] && ! command -v promtool >/dev/null 2>&1; then missing+=(prometheus); fi

# `make lint` checks the C with clang-format (swift-format ships with the toolchain).
if [ "${APPEX_LINT:-}" = 1 ] && ! command -v clang-format >/dev/null 2>&1; then missing+=(clang-format); fi

# The cgroup v2 guest of `make test-cgroup-v2` (QEMU, a kernel, virtme-ng): only with
# APPEX_CGROUP_V2=1 (CI sets it); the target itself asks for it too.
if [ "${APPEX_CGROUP_V2:-}" = 1 ]; then "$(dirname "$0")/ensure-v2-guest.sh"; fi

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    echo "ensure-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
        apt-get update >/dev/null
        apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
    }
else
    echo "ensure-deps: missing ${missing[*]}; run:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
