#!/usr/bin/env bash
# `make test-cgroup-v2`: boots Debian's kernel in a QEMU guest (virtme-ng, TCG: KVM guests hang
# at boot on this machine kind) whose /sys/fs/cgroup is cgroup2 with the memory controller,
# and runs the live cgroup v2 checks there (scripts/cgroup-v2-guest.sh) against the test
# binaries and products built here first. The guest sees the host's root read-only; the
# checkout and /root are copy-on-write overlays in it, and its logs land in $logs.
# Prints `N passed, N failed` and exits non-zero when anything failed or the guest did not finish.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/ensure-v2-guest.sh"

swift build --build-tests
bin=$(swift build --show-bin-path)
for p in appex appex-commands appexd appex-sandbox-init appex-probe appex-probe-extension AppexExampleBalloon; do
    [ -x "$bin/$p" ] || { echo "test-cgroup-v2: $bin/$p was not built" >&2; exit 1; }
done

kernel=${APPEX_V2_KERNEL:-$(ls /boot/vmlinuz-*-amd64 | sort -V | tail -n 1)}
logs=${APPEX_V2_LOGS:-$root/.build/cgroup-v2}
rm -rf "$logs"
mkdir -p "$logs"
swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
# The whole guest run is bounded: a hung guest must not hold CI.
limit=${APPEX_V2_TIMEOUT:-1500}

echo "test-cgroup-v2: booting $kernel (TCG, 2 CPUs, 3 GiB), logs in $logs"
start=$(date +%s)
set +e
timeout --kill-after=10 "$limit" vng --run "$kernel" --disable-kvm --memory 3G --cpus 2 \
    --overlay-rwdir "$root" --overlay-rwdir /root --rwdir "$logs" \
    --exec "PATH=$swift_bin:/usr/sbin:/usr/bin:/sbin:/bin APPEX_V2_NOFILE=$(ulimit -n) $root/scripts/cgroup-v2-guest.sh $root $logs" \
    </dev/null 2>&1 | tee "$logs/console.txt"
rc=${PIPESTATUS[0]}
set -e
echo "test-cgroup-v2: guest ran $(( $(date +%s) - start )) s (vng exit $rc)"
summary=$(grep -a -E '^cgroup-v2: [0-9]+ passed, [0-9]+ failed' "$logs/summary.txt" 2>/dev/null | tail -n 1 || true)
if [ -z "$summary" ]; then
    echo "test-cgroup-v2: the guest did not finish (timeout ${limit}s or crash): 0 passed, 1 failed" >&2
    exit 1
fi
echo "${summary#cgroup-v2: }"
case "$summary" in *" 0 failed") exit 0 ;; *) exit 1 ;; esac
