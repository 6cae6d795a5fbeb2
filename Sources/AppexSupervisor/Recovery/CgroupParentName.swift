import AppexCgroups
import AppexPolicyCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which cgroup parent a supervisor runs its extensions under, so that two supervisors never
/// share one: appexd's follows from its state directory (which it alone may use), an
/// embedded supervisor's from its process.
public enum CgroupParentName {
    /// The state directory appexd is deployed with, whose parent keeps the deployed name.
    static let deployedStateDirectory = "/var/lib/appex"

    /// `appexd` for /var/lib/appex, else `appexd-<hash of the canonical path>`.
    public static func daemon(stateDirectory: String) -> String {
        let path = canonical(stateDirectory)
        if path == deployedStateDirectory { return "appexd" }
        return "appexd-" + String(FNV1a.of(path.utf8), radix: 16)
    }

    /// `<prefix>-<pid>`: an embedded supervisor's own parent (`appex request --bundle`,
    /// `appex profile`), removed when it shuts down.
    public static func embedded(_ prefix: String, pid: Int32 = getpid()) -> String {
        "\(prefix)-\(pid)"
    }

    /// Removes the parents `<prefix>-<pid>` that embedded supervisors left when they died:
    /// only those whose pid is gone and whose claim nobody holds (a live supervisor keeps
    /// its claim; a recycled pid keeps the parent until that process ends). Their cgroups'
    /// processes are killed first. Returns the parents removed.
    public static func sweepEmbedded(_ prefix: String, beside cgroups: CgroupManager) -> [String] {
        var removed: [String] = []
        for name in siblings(of: cgroups) {
            guard name.hasPrefix(prefix + "-"), name != cgroups.parentName,
                let pid = Int32(name.dropFirst(prefix.count + 1)), pid > 0, !isAlive(pid),
                let other = try? CgroupManager(version: cgroups.version, roots: cgroups.roots, parentName: name),
                let claim = try? other.claimParentIfFree()
            else { continue }
            _ = try? other.cleanupLeftovers()
            try? other.removeParent()
            claim.release()
            removed.append(name)
        }
        return removed
    }

    /// Directory names beside `cgroups`' (top-level) parent in its first hierarchy.
    static func siblings(of cgroups: CgroupManager) -> [String] {
        let base = (cgroups.parentPaths[0] as NSString).deletingLastPathComponent
        return (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
    }

    static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// The absolute path with symbolic links resolved, or as given when it does not exist.
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return (path as NSString).standardizingPath }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
