import AppexStateDirectory
import CSeccomp

#if canImport(Glibc)
import Glibc
#endif

/// What this machine offers the seccomp filters Appex compiles: the libseccomp linked in, its
/// API level (5 and above: user notification, which `notify` rules use), and the filter return
/// actions the kernel supports (`/proc/sys/kernel/seccomp/actions_avail`). `appex doctor`
/// reports them.
public enum SeccompSupport {
    /// The libseccomp in use, "major.minor.micro".
    public static var libraryVersion: String? {
        guard let v = seccomp_version() else { return nil }
        return "\(v.pointee.major).\(v.pointee.minor).\(v.pointee.micro)"
    }

    /// libseccomp's view of the kernel: 5 or more means user notification works.
    public static var apiLevel: UInt32 { seccomp_api_get() }

    /// The actions Appex's filters use: kill the process, fail with an errno, hand to appexd.
    public static let requiredActions = ["kill_process", "errno", "user_notif"]

    /// The kernel's supported actions, or nil when the file is missing (no seccomp filter
    /// support, or /proc/sys not mounted).
    public static func availableActions(path: String = "/proc/sys/kernel/seccomp/actions_avail") -> [String]? {
        guard let bytes = try? Sys.readBytes(path) else { return nil }
        return bytes.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") })
            .map { String(decoding: $0, as: UTF8.self) }
    }
}
