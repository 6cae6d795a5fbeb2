import AppexStateDirectory
import SystemPackage

/// A step of the launch that failed in the child (or the clone itself).
public struct LaunchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The launcher step (`APPEX_STEP_*`) and its name, e.g. `mount`.
    public var step: Int32
    public var stepName: String
    /// What the step was about, e.g. `mount data dir` for one mount operation.
    public var what: String
    /// The host or view path involved, when there is one.
    public var path: String?
    public var errno: Errno

    public var description: String {
        var s = "\(what): \(Errno.symbol(errno.rawValue)) (\(errno.description))"
        if let path { s += " (\(path))" }
        return s
    }
}
