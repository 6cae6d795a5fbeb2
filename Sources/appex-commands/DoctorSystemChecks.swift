import AppexCgroups
import AppexSandbox
import AppexStateDirectory
import Foundation

/// `appex doctor`'s checks of the machine itself: root, cgroups, seccomp, the uid range.
enum DoctorSystemChecks {
    static func root(euid: uid_t = geteuid()) -> DoctorCheck {
        euid == 0
            ? .ok("root", "running as root")
            : .failed(
                "root", "running as uid \(euid); sandboxes need root (cgroups, mount namespaces, per-extension uids)",
                fix: "run appexd and appex run as root (sudo appex doctor to check as root)")
    }

    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// Which hierarchy Appex would use, which controllers it offers, and (v2) what this
    /// process's cgroup has been delegated.
    static func cgroups() -> [DoctorCheck] {
        guard let probe = try? CgroupManager.probe() else {
            return [.failed("cgroups", "cannot read /proc/self/mountinfo", fix: "mount /proc")]
        }
        guard let manager = try? CgroupManager.detect(parentName: "appexd") else {
            return [
                .failed(
                    "cgroups", "no memory controller: " + (probe.v2MemoryReason ?? "none mounted"),
                    fix: "boot with cgroup v2 (systemd's default; systemd.unified_cgroup_hierarchy=1) "
                        + "or mount the v1 memory and pids controllers under /sys/fs/cgroup")
            ]
        }
        switch manager.version {
        case .v1:
            let memory = manager.roots.memory ?? "?"
            var checks: [DoctorCheck] = [.ok("cgroups", "v1, memory controller at \(memory)")]
            if let pids = manager.roots.pids {
                checks.append(.ok("cgroup-controllers", "memory, pids (at \(pids))"))
            } else {
                checks.append(
                    .warning(
                        "cgroup-controllers", "memory only: no v1 pids controller, extensions' process limits are not enforced",
                        fix: "mount the pids controller: mount -t cgroup -o pids cgroup /sys/fs/cgroup/pids"))
            }
            return checks
        case .v2:
            let mount = probe.unifiedMount ?? "/sys/fs/cgroup"
            let available = probe.unifiedControllers.sorted()
            var checks: [DoctorCheck] = [.ok("cgroups", "v2 at \(mount), base \(manager.roots.unified ?? mount)")]
            let listed = available.joined(separator: " ")
            checks.append(
                probe.unifiedControllers.contains("pids")
                    ? .ok("cgroup-controllers", "available: \(listed)")
                    : .warning(
                        "cgroup-controllers", "available: \(listed); no pids controller, extensions' process limits are not enforced",
                        fix: "enable pids at the root: echo +pids > \(mount)/cgroup.subtree_control"))
            checks.append(delegation(probe: probe, mount: mount))
            return checks
        }
    }

    /// v2: the controllers this process's own cgroup offers, and whether it may write there
    /// (what systemd's `Delegate=yes` gives appexd).
    static func delegation(probe: CgroupManager.SystemProbe, mount: String) -> DoctorCheck {
        guard let own = probe.ownUnifiedPath, own != "/" else {
            return .ok("cgroup-delegation", "this process is in the root cgroup: appexd uses the whole hierarchy")
        }
        let dir = mount + own
        let offered = CgroupParse.controllers(read(dir + "/cgroup.controllers") ?? "").sorted()
        let writable = access(dir, W_OK) == 0
        let detail =
            "\(dir) offers \(offered.isEmpty ? "no controllers" : offered.joined(separator: " "))"
            + (writable ? ", writable" : ", not writable")
        if writable && offered.contains("memory") && offered.contains("pids") {
            return .ok("cgroup-delegation", "delegated: " + detail)
        }
        return .warning(
            "cgroup-delegation", "not delegated: " + detail + "; appexd falls back to the hierarchy's root",
            fix: "run appexd from its unit (Delegate=yes), or systemd-run -p Delegate=yes appexd")
    }

    static func seccomp() -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        if let version = SeccompSupport.libraryVersion {
            let parts = version.split(separator: ".").compactMap { Int($0) }
            let recent = parts.count >= 2 && (parts[0], parts[1]) >= (2, 5)
            let api = SeccompSupport.apiLevel
            if !recent {
                checks.append(.failed("libseccomp", "libseccomp \(version), older than 2.5", fix: "apt-get install libseccomp2 (2.5 or later)"))
            } else if api < 5 {
                checks.append(
                    .failed(
                        "libseccomp", "libseccomp \(version), API level \(api): no user notification (notify rules)",
                        fix: "a kernel of Linux 5.5 or later"))
            } else {
                checks.append(.ok("libseccomp", "libseccomp \(version), API level \(api)"))
            }
        } else {
            checks.append(.failed("libseccomp", "libseccomp reports no version", fix: "apt-get install libseccomp2"))
        }
        guard let actions = SeccompSupport.availableActions() else {
            checks.append(
                .failed(
                    "seccomp-kernel", "/proc/sys/kernel/seccomp/actions_avail is missing: no seccomp filters",
                    fix: "a kernel built with CONFIG_SECCOMP_FILTER (Linux 5.0 or later)"))
            return checks
        }
        let missing = SeccompSupport.requiredActions.filter { !actions.contains($0) }
        checks.append(
            missing.isEmpty
                ? .ok("seccomp-kernel", "actions: \(actions.joined(separator: " "))")
                : .failed(
                    "seccomp-kernel", "the kernel lacks \(missing.joined(separator: ", ")) (actions: \(actions.joined(separator: " ")))",
                    fix: "a kernel of Linux 5.5 or later"))
        return checks
    }

    /// The extensions' uid range against accounts (`/etc/passwd`, `/etc/group`) and
    /// subordinate ranges (`/etc/subuid`, `/etc/subgid`), one line each.
    static func uidRange(_ range: ClosedRange<UInt32>, etc: String = "/etc") -> [DoctorCheck] {
        let text = "\(range.lowerBound)-\(range.upperBound)"
        let conflicts = UIDRangeCheck.conflicts(range, etc: etc)
        let fix = "choose a free range (appexd --uid-range START-END, and the same for appex run) or move the entries"
        var checks: [DoctorCheck] = []
        for (name, files) in [("uid-range-accounts", ["passwd", "group"]), ("uid-range-subordinate", ["subuid", "subgid"])] {
            let paths = files.map { etc + "/" + $0 }
            let found = conflicts.filter { paths.contains($0.file) }
            if found.isEmpty {
                checks.append(.ok(name, "\(text) is free of \(paths.joined(separator: ", "))"))
            } else {
                checks.append(.failed(name, "\(text) overlaps " + found.map(\.what).joined(separator: "; "), fix: fix))
            }
        }
        return checks
    }
}
