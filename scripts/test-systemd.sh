#!/usr/bin/env bash
# `make test-systemd`: the package on a fresh Debian 12 with systemd as PID 1. Boots Debian's
# kernel in QEMU (TCG: KVM guests hang at boot on this machine kind) on a root file system
# debootstrap made (scripts/systemd-guest-rootfs.sh, cached under $cache), with the .deb `make
# deb` built and the example app in it; scripts/systemd-guest.sh runs at boot as a oneshot
# unit, checks install, start, delegation, doctor, requests, the watchdog, reload, stop, the
# journal and purge, and powers off. The console and the guest's results land in $logs.
# Prints `N passed, N failed`; exits non-zero unless every check passed.
#
#   scripts/test-systemd.sh DEB_DIR EXAMPLE_APP
set -euo pipefail
debdir=${1:?usage: test-systemd.sh DEB_DIR EXAMPLE_APP}
app=${2:?usage: test-systemd.sh DEB_DIR EXAMPLE_APP}
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(tr -d '[:space:]' < "$root/VERSION")
deb="$debdir/appex_${version}_$(dpkg --print-architecture).deb"
cache=${APPEX_SYSTEMD_CACHE:-$root/.build/systemd-guest}
logs="$cache/logs"
# The whole guest is bounded: a hung boot or check must not hold CI.
limit=${APPEX_SYSTEMD_TIMEOUT:-1200}

[ "$(id -u)" -eq 0 ] || { echo "test-systemd: needs root (debootstrap, the image's ownership)" >&2; exit 1; }
[ -f "$deb" ] || { echo "test-systemd: $deb missing (make deb)" >&2; exit 1; }
[ -d "$app/PlugIns" ] || { echo "test-systemd: $app missing (make examples)" >&2; exit 1; }

missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
command -v debootstrap >/dev/null || missing+=(debootstrap)
compgen -G '/boot/vmlinuz-*-amd64' >/dev/null || missing+=(linux-image-amd64)
"$root/scripts/apt-install.sh" test-systemd ${missing[@]+"${missing[@]}"}
kernel=${APPEX_SYSTEMD_KERNEL:-$(ls /boot/vmlinuz-*-amd64 | sort -V | tail -n 1)}
initrd=/boot/initrd.img-${kernel#/boot/vmlinuz-}
[ -f "$initrd" ] || { echo "test-systemd: no $initrd for $kernel" >&2; exit 1; }

t0=$(date +%s)
# systemd as init, and what the package says it needs at run time (first of each alternative).
depends=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | grep .)
# shellcheck disable=SC2086
rootfs=$("$root/scripts/systemd-guest-rootfs.sh" "$cache" systemd systemd-sysv dbus libseccomp2 ca-certificates $depends)
t_rootfs=$(( $(date +%s) - t0 ))

# This run's image: a copy of the cached tree with the payload and the unit that runs it.
run="$cache/run"
rm -rf "$run" "$logs"
mkdir -p "$run" "$logs"
stage="$run/stage"
cp -a "$rootfs" "$stage"
rm -f "$stage/.appex-rootfs-complete"
payload=/root/appex-test
mkdir -p "$stage$payload"
cp "$deb" "$stage$payload/"
cp -R "$app" "$stage$payload/ExampleHost.app"
install -m 0755 "$root/scripts/systemd-guest.sh" "$stage$payload/systemd-guest.sh"
echo appex-guest > "$stage/etc/hostname"
# No login prompt on the console the checks print to.
ln -sf /dev/null "$stage/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$stage/etc/systemd/system/getty@tty1.service"
cat > "$stage/etc/systemd/system/appex-systemd-check.service" <<UNIT
[Unit]
Description=make test-systemd: the checks, then power off
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=$payload/systemd-guest.sh $payload /dev/vdb
# Straight to the serial console (the journal's copy would carry a prefix); the host reads it.
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
UNIT
mkdir -p "$stage/etc/systemd/system/multi-user.target.wants"
ln -sf ../appex-systemd-check.service "$stage/etc/systemd/system/multi-user.target.wants/appex-systemd-check.service"
mkfs.ext4 -q -F -L appex-root -d "$stage" "$run/root.img" 3G >/dev/null
rm -rf "$stage"
# The results disk: the guest writes a tar stream to it.
truncate -s 64M "$run/results.img"
t_image=$(( $(date +%s) - t0 - t_rootfs ))

echo "test-systemd: booting $kernel (TCG, 2 CPUs, 2 GiB) on bookworm with systemd; console in $logs/console.txt"
t1=$(date +%s)
set +e
timeout --kill-after=10 "$limit" qemu-system-x86_64 -accel tcg -m 2G -smp 2 -display none -no-reboot \
    -monitor none -serial stdio -nic none \
    -kernel "$kernel" -initrd "$initrd" \
    -append "root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 panic=-1" \
    -drive "file=$run/root.img,format=raw,if=virtio" -drive "file=$run/results.img,format=raw,if=virtio" \
    </dev/null 2>&1 | tee "$logs/console.txt" | grep -a --line-buffered '^systemd-check: '
rc=${PIPESTATUS[0]}
set -e
t_guest=$(( $(date +%s) - t1 ))
mkdir -p "$logs/results"
tar -xf "$run/results.img" -C "$logs/results" 2>/dev/null || true
rm -f "$run/root.img"
echo "test-systemd: rootfs ${t_rootfs} s, image ${t_image} s, guest ${t_guest} s (qemu exit $rc); results in $logs/results"
summary=$(grep -a -E '^systemd-check: [0-9]+ passed, [0-9]+ failed' "$logs/results/checks.txt" 2>/dev/null | tail -n 1 || true)
if [ -z "$summary" ]; then
    echo "test-systemd: the guest did not finish (timeout ${limit}s, boot failure or crash): 0 passed, 1 failed" >&2
    tail -n 30 "$logs/console.txt" >&2
    exit 1
fi
summary=${summary#systemd-check: }
echo "${summary%% (*}"
case "$summary" in *" 0 failed"*) exit 0 ;; *) exit 1 ;; esac
