#!/usr/bin/env bash
# Builds the Debian package of Appex (dpkg-deb, no debhelper): the release build installed by
# scripts/install.sh with PREFIX /usr into a package tree, and maintainer scripts that reload
# systemd, stop appexd before removal and, on purge, delete its state and cache.
#
#   scripts/make-deb.sh BIN_DIR OUT_DIR     → OUT_DIR/appex_<VERSION>_<arch>.deb
set -euo pipefail
bin=${1:?usage: make-deb.sh BIN_DIR OUT_DIR}
out=${2:?usage: make-deb.sh BIN_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(tr -d '[:space:]' < "$root/VERSION")
arch=$(dpkg --print-architecture)
tree="$out/tree"

rm -rf "$tree"
mkdir -p "$tree/DEBIAN"
PREFIX=/usr SYSCONFDIR=/etc UNITDIR=/lib/systemd/system DESTDIR="$tree" "$root/scripts/install.sh" install "$bin" 2>/dev/null

# Shared libraries the executables still load (appexd links glibc and libseccomp dynamically;
# the static ones none), as the Debian packages that hold them.
depends=$(for exe in "$bin/appex" "$bin/appexd" "$bin/appex-commands"; do
        { ldd "$exe" 2>/dev/null || true; } | awk '/=> \// { print $3 }'
    done | sort -u | while read -r lib; do
        dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
    done | cut -d: -f1 | sort -u | while read -r pkg; do
        printf '%s (>= %s), ' "$pkg" "$(dpkg-query -W -f='${Version}' "$pkg" | sed 's/-[^-]*$//')"
    done)
depends=${depends%, }
size=$(du -sk "$tree" | cut -f1)

cat > "$tree/DEBIAN/control" <<CONTROL
Package: appex
Version: $version
Architecture: $arch
Maintainer: Appex <appex@localhost>
Installed-Size: $size
Depends: ${depends:-libc6}
Section: admin
Priority: optional
Description: Linux app extensions under an iOS-style supervisor
 appexd runs .appex bundles in sandboxes built from cgroups, seccomp, namespaces and
 per-extension uids, under their extension point's policy; appex validates, installs, runs
 and inspects them. Start it with: systemctl enable --now appexd. Check the machine with:
 appex doctor.
CONTROL

echo /etc/appex/appexd.yaml > "$tree/DEBIAN/conffiles"

cat > "$tree/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
# Not started here: the administrator decides (systemctl enable --now appexd).
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
exit 0
SCRIPT

cat > "$tree/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl stop appexd.service 2>/dev/null || true
    systemctl disable appexd.service 2>/dev/null || true
fi
exit 0
SCRIPT

cat > "$tree/DEBIAN/postrm" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
# Purge: what appexd made at run time (installed extensions, their data, compiled policies).
if [ "$1" = purge ]; then
    rm -rf /var/lib/appex /var/cache/appex /run/appex
    rmdir /etc/appex 2>/dev/null || true
fi
exit 0
SCRIPT
chmod 0755 "$tree/DEBIAN/postinst" "$tree/DEBIAN/prerm" "$tree/DEBIAN/postrm"

deb="$out/appex_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$tree" "$deb" >/dev/null
echo "$deb"
