#!/usr/bin/env bash
# The fresh Debian 12 root file system `make test-systemd` boots: debootstrap's minbase with
# systemd as init and the packages named, nothing of the build machine. Built once per package
# list and kept under CACHE_DIR (rootfs-<hash of suite, mirror and list>); later runs re-use it
# and copy it before changing anything, so the cached tree stays as debootstrap left it.
#
#   scripts/systemd-guest-rootfs.sh CACHE_DIR PACKAGE...    → prints the rootfs directory
set -euo pipefail
cache=${1:?usage: systemd-guest-rootfs.sh CACHE_DIR PACKAGE...}
shift
suite=bookworm
mirror=${APPEX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=$(printf '%s\n' "$@" | sort -u | paste -sd, -)
key=$(printf '%s %s %s\n' "$suite" "$mirror" "$packages" | sha256sum | cut -c1-16)
rootfs="$cache/rootfs-$key"

if [ -f "$rootfs/.appex-rootfs-complete" ]; then echo "$rootfs"; exit 0; fi

mkdir -p "$cache"
# Older trees (another package list) are not used again.
find "$cache" -maxdepth 1 -name 'rootfs-*' ! -name "rootfs-$key" -exec rm -rf {} +
partial="$rootfs.partial"
rm -rf "$partial"
echo "systemd-guest-rootfs: debootstrap $suite (minbase + $packages) into $rootfs" >&2
# The downloaded packages stay in debs/, so a rebuild for another list fetches only what changed.
mkdir -p "$cache/debs"
debootstrap --variant=minbase --include="$packages" --cache-dir="$(cd "$cache/debs" && pwd)" \
    "$suite" "$partial" "$mirror" > "$cache/debootstrap.log" 2>&1 || {
    echo "systemd-guest-rootfs: debootstrap failed; the end of $cache/debootstrap.log:" >&2
    tail -n 20 "$cache/debootstrap.log" >&2
    exit 1
}
# No package lists or downloaded archives in the image: the guest installs from files only.
rm -rf "$partial"/var/cache/apt/archives/*.deb "$partial"/var/lib/apt/lists/*_Packages
touch "$partial/.appex-rootfs-complete"
mv "$partial" "$rootfs"
echo "$rootfs"
