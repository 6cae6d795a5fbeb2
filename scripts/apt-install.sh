#!/usr/bin/env bash
# Installs the Debian packages named (no recommends), refreshing the package lists only when
# the first try fails. As root it installs them; otherwise it prints the command and fails.
#
#   scripts/apt-install.sh WHO PACKAGE...     (WHO prefixes the messages)
set -euo pipefail
who=${1:?usage: apt-install.sh WHO PACKAGE...}
shift
[ $# -gt 0 ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "$who: missing $*; run:" >&2
    echo "  sudo apt-get install -y $*" >&2
    exit 1
fi
echo "$who: installing $*" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 || {
    apt-get update >/dev/null
    apt-get install -y --no-install-recommends "$@" >/dev/null
}
