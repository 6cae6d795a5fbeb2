#!/bin/bash
# Inside the `make test-systemd` guest (scripts/test-systemd.sh): a fresh Debian 12 with systemd
# as PID 1 and cgroup v2, no network. Started at boot by appex-systemd-check.service; installs
# the package, runs appexd as the unit says, checks each step (PASS/FAIL on the console and in
# RESULTS/checks.txt), purges the package, and writes RESULTS as a tar stream to OUT_DISK for
# the host to read. The unit powers the guest off when this exits.
#
#   systemd-guest.sh PAYLOAD_DIR OUT_DISK
set -uo pipefail
payload=${1:?usage: systemd-guest.sh PAYLOAD_DIR OUT_DISK}
disk=${2:?usage: systemd-guest.sh PAYLOAD_DIR OUT_DISK}
results="$payload/results"
mkdir -p "$results"
deb=$(ls "$payload"/appex_*.deb)
app="$payload/ExampleHost.app"
cg=/sys/fs/cgroup/system.slice/appexd.service
passed=0 failed=0
started=$(date +%s)

say() { echo "systemd-check: $*" | tee -a "$results/checks.txt"; }
# check NAME COMMAND...: PASS or FAIL with the command's output; its seconds too.
check() {
    local name=$1 t0 rc; shift
    t0=$(date +%s.%N)
    "$@" >"$results/out" 2>&1; rc=$?
    local took; took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 0 ]; then say "PASS $name (${took} s)"; passed=$((passed + 1))
    else say "FAIL $name (${took} s, exit $rc)"; failed=$((failed + 1)); fi
    sed 's/^/    /' "$results/out" | tee -a "$results/checks.txt"
    return $rc
}
prop() { systemctl show -P "$1" appexd.service; }
# The pids whose name (comm) matches the extended regular expression (minbase has no procps).
pids_named() {
    local f comm re="^($1)\$"
    for f in /proc/[0-9]*/comm; do
        read -r comm < "$f" 2>/dev/null || continue
        [[ $comm =~ $re ]] && { f=${f#/proc/}; echo "${f%/comm}"; }
    done
}
# Every path outside the kernel's and the run's own trees, for comparing before and after.
snapshot() {
    find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
        -o -path "$payload" -o -path /var/log -o -path /var/lib/dpkg -o -path /var/lib/systemd \
        -o -path /var/cache/debconf -o -path /var/cache/ldconfig \) -prune -o -print | sort
}

# Each check a function: its output is the check's evidence, its status PASS or FAIL.
systemd_pid1() {
    echo "pid 1: $(cat /proc/1/comm); $(systemctl --version | head -n 1)"
    echo "system state: $(systemctl is-system-running)"
    echo "/sys/fs/cgroup: $(stat -f -c %T /sys/fs/cgroup)"
    [ "$(cat /proc/1/comm)" = systemd ] && [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]
}
no_network() { ls /sys/class/net; ! ls /sys/class/net | grep -vqx lo; }
unit_verifies() {
    systemctl cat appexd.service | head -n 3
    systemd-analyze verify appexd.service && echo "systemd-analyze verify: ok"
}
start_active() {
    systemctl start appexd || return 1
    systemctl show -p ActiveState -p SubState -p Type -p NotifyAccess -p StatusText -p MainPID appexd.service
    [ "$(systemctl is-active appexd)" = active ]
}
own_cgroup_delegated() {
    systemctl status --no-pager --lines=0 appexd
    echo "Delegate=$(prop Delegate) DelegateControllers=$(prop DelegateControllers)"
    echo "$cg/cgroup.controllers: $(cat $cg/cgroup.controllers)"
    echo "$cg/cgroup.subtree_control: $(cat $cg/cgroup.subtree_control)"
    echo "appexd (pid $main_pid): $(cat /proc/$main_pid/cgroup)"
    [ "$(prop ControlGroup)" = /system.slice/appexd.service ] && [ "$(prop Delegate)" = yes ] &&
        grep -qw memory $cg/cgroup.controllers && grep -qw pids $cg/cgroup.controllers &&
        grep -q '^0::/system.slice/appexd.service' /proc/$main_pid/cgroup
}
install_examples() {
    appex install "$app" || return 1
    for id in share action widget hello-c; do appex enable "dev.appex.examples.host.$id" || return 1; done
    appex list
}
# request ID TEXT EXPECTED: the answer contains EXPECTED.
request() {
    local out
    out=$(appex request "dev.appex.examples.host.$1" --text "$2") || { echo "$out"; return 1; }
    echo "$out"; echo "$out" | grep -q "$3"
}
# Right after a request, while the extension waits warm (it exits when idle).
extensions_below_appexd() {
    appex request dev.appex.examples.host.action --text warm >/dev/null || return 1
    systemd-cgls --no-pager -u appexd.service
    local p seen=
    for p in $(pids_named 'hello-c|action'); do
        echo "pid $p ($(cat /proc/$p/comm)): $(cat /proc/$p/cgroup)"
        grep -q '^0::/system.slice/appexd.service/.' /proc/$p/cgroup || return 1
        seen=1
    done
    [ -n "$seen" ]
}
# The pings arrive (WatchdogTimestamp moves on) and the watchdog does not fire.
watchdog_quiet() {
    echo "WatchdogUSec=$(prop WatchdogUSec)"
    local before after
    before=$(prop WatchdogTimestampMonotonic); echo "last ping (monotonic us): $before"
    sleep 65
    after=$(prop WatchdogTimestampMonotonic); echo "65 s later: $after"
    echo "MainPID $(prop MainPID) (was $main_pid), NRestarts $(prop NRestarts), $(systemctl is-active appexd)"
    ! journalctl -u appexd --no-pager | grep -i 'watchdog timeout' &&
        [ "$after" -gt "$before" ] && [ "$(prop MainPID)" = "$main_pid" ] &&
        [ "$(prop NRestarts)" = 0 ] && [ "$(systemctl is-active appexd)" = active ]
}
# The file changes (logLevel), SIGHUP, and appexd says what it applied.
reload_applies() {
    local since; since=$(date '+%Y-%m-%d %H:%M:%S')
    sed -i 's/^logLevel: info/logLevel: notice/' /etc/appex/appexd.yaml
    systemctl reload appexd || return 1
    sleep 1
    journalctl -u appexd --since "$since" --no-pager -o cat
    echo "MainPID $(prop MainPID), $(systemctl is-active appexd), StatusText: $(prop StatusText)"
    journalctl -u appexd --since "$since" --no-pager -o cat | grep -q 'reloaded /etc/appex/appexd.yaml: applied logLevel' &&
        [ "$(prop MainPID)" = "$main_pid" ] && [ "$(systemctl is-active appexd)" = active ]
}
# A stopped supervisor loop: no pings, so systemd's watchdog aborts appexd and restarts it
# (Restart=on-failure); the new appexd serves. (An unhandled SIGABRT ends even a stopped
# process; the SIGCONT is for a kernel that would hold it until TimeoutAbortSec.)
watchdog_fires() {
    local since i; since=$(date '+%Y-%m-%d %H:%M:%S')
    kill -STOP "$main_pid"
    for i in $(seq 90); do journalctl -u appexd --since "$since" --no-pager | grep -q 'Watchdog timeout' && break; sleep 1; done
    kill -CONT "$main_pid" 2>/dev/null
    for i in $(seq 60); do
        [ "$(systemctl is-active appexd)" = active ] && [ "$(prop MainPID)" != "$main_pid" ] && [ "$(prop MainPID)" != 0 ] && break
        sleep 1
    done
    journalctl -u appexd --since "$since" --no-pager -o cat | grep -v '^$'
    echo "MainPID $(prop MainPID) (was $main_pid), NRestarts $(prop NRestarts), $(systemctl is-active appexd)"
    journalctl -u appexd --since "$since" --no-pager | grep -q 'Watchdog timeout' &&
        [ "$(prop NRestarts)" = 1 ] && [ "$(prop MainPID)" != "$main_pid" ] || return 1
    main_pid=$(prop MainPID)
    request hello-c 'after the restart' 'hello from C: tratser eht retfa'
}
stop_clean() {
    systemctl stop appexd || return 1
    systemctl show -p ActiveState -p Result -p ExecMainCode -p ExecMainStatus appexd.service
    [ ! -e $cg ] || { echo "left: $(find $cg -type d)"; return 1; }
    [ ! -e /run/appex ] || { echo "left: /run/appex"; return 1; }
    local left; left=$(pids_named 'hello-c|action|share|widget|appex-sandbox-i.*')
    [ -z "$left" ] || { echo "processes left: $left"; return 1; }
    [ "$(prop Result)" = success ] && [ "$(systemctl is-active appexd)" = inactive ]
}
journal_has_log() {
    journalctl -u appexd --no-pager -o short-monotonic | tail -n 25
    journalctl -u appexd --no-pager -o cat -t appexd | grep -q . &&
        journalctl -u appexd --no-pager | grep -q 'Started appexd.service\|Started Appex extension supervisor'
}
purge_leaves_nothing() {
    dpkg --purge appex || return 1
    snapshot > "$results/files-after"
    diff "$results/files-before" "$results/files-after" || return 1
    echo "the file list is as before dpkg -i"
    local f
    while read -r f; do
        [ -d "$f" ] || [ ! -e "$f" ] || { echo "left: $f"; return 1; }
    done < "$results/package-files"
    for f in /var/lib/appex /var/cache/appex /etc/appex /run/appex; do [ ! -e $f ] || { echo "left: $f"; return 1; }; done
}

say "guest up after $(cut -d' ' -f1 /proc/uptime) s; kernel $(uname -r); $(nproc) CPUs"
check "systemd is PID 1 on cgroup v2" systemd_pid1
check "no network in the guest" no_network
snapshot > "$results/files-before"
check "dpkg -i $(basename "$deb") (Depends from the image alone)" dpkg -i "$deb"
dpkg-query -L appex > "$results/package-files" 2>&1
check "the unit is installed and verifies" unit_verifies
check "systemctl enable appexd" systemctl enable appexd
check "systemctl start appexd: active (Type=notify, READY=1 arrived)" start_active
main_pid=$(prop MainPID)
check "systemctl status: its own cgroup, memory and pids delegated" own_cgroup_delegated
check "appex doctor is green (exit 0)" appex doctor
check "install the example app and enable its extensions" install_examples
check "appex request hello-c (C) through the service" request hello-c 'hello systemd' 'hello from C: dmetsys olleh'
check "appex request action (Swift) through the service" request action 'make this loud' 'MAKE THIS LOUD'
check "the extensions run in cgroups below appexd's" extensions_below_appexd
check "the watchdog does not fire over a minute (WATCHDOG=1 pings arrive)" watchdog_quiet
check "systemctl reload appexd: SIGHUP, the configuration reloaded (journal)" reload_applies
check "appex request after the reload" request hello-c again 'hello from C: niaga'
check "the watchdog fires when appexd's loop stops: aborted, restarted, serving" watchdog_fires
check "systemctl stop appexd: clean, no cgroup or extension left" stop_clean
check "journalctl -u appexd has appexd's log" journal_has_log
journalctl -u appexd --no-pager -o short-monotonic > "$results/appexd-journal.txt" 2>&1
check "dpkg --purge appex leaves nothing" purge_leaves_nothing

say "$passed passed, $failed failed ($(( $(date +%s) - started )) s in the guest's checks)"
journalctl -b --no-pager -o short-monotonic > "$results/journal.txt" 2>&1
rm -f "$results/out"
tar -cf "$disk" -C "$results" . && sync
exit 0
