#if canImport(Glibc)
import Glibc
#endif

/// What one control-socket client may hold in appexd, so that no local user can take the
/// descriptors, memory or time that other hosts, administrators and the extensions need.
/// Administrators (root and the configuration's `admins`) are counted apart: others'
/// connections never keep them out.
public struct ClientLimits: Sendable, Equatable {
    /// A connection that has not sent Hello by then is closed.
    public var helloTimeout: Duration = .seconds(5)
    /// Connections of all hosts that are not administrators together.
    public var connections = 256
    /// Connections of one such host uid.
    public var connectionsPerUID = 64
    /// Requests one connection may have open (queued, launching or at an extension).
    public var requestsPerConnection = 32
    /// Attachment descriptors one connection's open requests may hold in appexd.
    public var descriptorsPerConnection = 64
    /// Connections of one administrator uid: generous, only a bound against a runaway script.
    public var connectionsPerAdministrator = 256
    /// A uid that may neither host nor administer is only ever told so, at Hello: a few
    /// connections each and together, counted apart so that they never crowd out hosts.
    public var connectionsPerStranger = 4
    public var strangerConnections = 32

    public init() {}

    /// These limits with `connections` lowered so that what non-administrators may hold at
    /// most (each connection and its attachments) stays within a quarter of `descriptorLimit`,
    /// leaving the rest to the extensions and administrators.
    public func fitted(toDescriptorLimit descriptorLimit: UInt64) -> ClientLimits {
        var fitted = self
        let perConnection = UInt64(1 + max(descriptorsPerConnection, 0))
        let share = descriptorLimit / 4 / perConnection
        fitted.connections = Int(min(UInt64(max(connections, 1)), max(share, 1)))
        fitted.connectionsPerUID = min(connectionsPerUID, fitted.connections)
        return fitted
    }

    /// The soft RLIMIT_NOFILE of this process, if it can be read.
    public static var currentDescriptorLimit: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }
}
