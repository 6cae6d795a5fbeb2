#!/usr/bin/env bash
# Installs what `make test-cgroup-v2` boots its cgroup v2 guest with, when missing: QEMU,
# Debian's kernel, a static busybox (virtme-ng's initramfs) from apt, virtme-ng from PyPI.
# As root it installs them; otherwise it prints the commands to run and fails.
set -euo pipefail

missing=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
compgen -G '/boot/vmlinuz-*-amd64' >/dev/null || missing+=(linux-image-amd64)
command -v busybox >/dev/null 2>&1 || missing+=(busybox-static)
need_vng=0
command -v vng >/dev/null 2>&1 || need_vng=1

[ ${#missing[@]} -eq 0 ] && [ $need_vng -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-v2-guest: missing ${missing[*]} $([ $need_vng = 1 ] && echo virtme-ng); run:" >&2
    [ ${#missing[@]} -gt 0 ] && echo "  sudo apt-get install -y ${missing[*]}" >&2
    [ $need_vng = 1 ] && echo "  sudo pip install virtme-ng" >&2
    exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "ensure-v2-guest: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
        apt-get update >/dev/null
        apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
    }
fi
if [ $need_vng = 1 ]; then
    echo "ensure-v2-guest: installing virtme-ng" >&2
    pip install --quiet virtme-ng >/dev/null 2>&1 || pip3 install --quiet virtme-ng >/dev/null
fi
