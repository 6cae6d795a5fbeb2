import AppexKillReason

/// A stable, machine-readable reason: why something was refused, killed or terminated. Travels
/// as its string; people and scripts match on it. A receiver accepts reasons it does not know
/// (a newer appexd may add some) and shows them as they are.
public struct Reason: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    // Refusals: the request or connection was not accepted.
    public static let versionMismatch: Reason = "version-mismatch"
    public static let protocolError = Reason(KillReason.protocolError)
    public static let notAuthorized: Reason = "not-authorized"
    public static let unknownExtension: Reason = "unknown-extension"
    public static let disabled = Reason(KillReason.disabled)
    public static let notActivated: Reason = "not-activated"
    public static let invalidBundle: Reason = "invalid-bundle"
    /// An enable refused: the extension declares app groups it is not a member of.
    public static let appGroupRefused: Reason = "app-group-refused"
    public static let launchFailed = Reason(KillReason.launchFailed)
    public static let busy: Reason = "busy"
    /// An attachment's descriptor is not a read-only regular file or a pipe.
    public static let invalidAttachment: Reason = "invalid-attachment"

    // How an instance ended: `KillReason`'s strings, which a kill reason becomes on the wire.
    public init(_ reason: KillReason) { self.rawValue = reason.rawValue }
    /// This reason as an instance's end (`unrecognized` when it is none this build knows).
    public var killReason: KillReason { KillReason(rawValue: rawValue) }

    public static let launchTimeout = Reason(KillReason.launchTimeout)
    public static let requestTimeout = Reason(KillReason.requestTimeout)
    public static let unresponsive = Reason(KillReason.unresponsive)
    public static let crashed = Reason(KillReason.crashed)
    public static let seccompViolation = Reason(KillReason.seccompViolation)
    public static let perProcessLimit = Reason(KillReason.perProcessLimit)
    public static let memoryPressure = Reason(KillReason.memoryPressure)
    /// The kernel's OOM killer acted at the memory budget's limit (the parent cgroup's), not
    /// at the extension's own: appexd's jetsam was too late.
    public static let kernelOOM = Reason(KillReason.kernelOOM)
    public static let idleExit = Reason(KillReason.idleExit)
    /// Requests refused or failed while appexd stops (instances end with `supervisorShutdown`).
    public static let shutdown: Reason = "shutdown"
    /// An instance ended because appexd stopped (the termination record's reason).
    public static let supervisorShutdown = Reason(KillReason.supervisorShutdown)

    /// The kill reasons `appex_kills_total` exports at zero (`KillReason.exportedAtZero`).
    public static let killReasons: [Reason] = KillReason.exportedAtZero.map { Reason($0) }
}

// Background transfers (Docs/transfers.md): why one was refused or how it ended.
extension Reason {
    /// The extension point's policy does not allow background transfers.
    public static let transfersNotAllowed: Reason = "transfers-not-allowed"
    /// The extension has no host network (policy `network`, entitlement), so nor do its transfers.
    public static let noNetwork: Reason = "no-network"
    /// A bad URL, file name, method, header or app group (the message says which).
    public static let invalidTransfer: Reason = "invalid-transfer"
    /// Another process holds this session (one process per session, as on Apple platforms).
    public static let sessionBusy: Reason = "session-busy"
    /// More transfers than the policy allows at once.
    public static let transferLimit: Reason = "transfer-limit"
    /// The policy's byte quota was reached.
    public static let transferQuota: Reason = "transfer-quota"
    /// The policy's time limit passed.
    public static let transferTimeout: Reason = "transfer-timeout"
    /// The server answered with a status that is not success, after the retries.
    public static let httpStatus: Reason = "http-status"
    /// The connection failed, after the retries.
    public static let networkError: Reason = "network-error"
    /// A redirect to something other than http or https, or too many.
    public static let badRedirect: Reason = "bad-redirect"
    /// The file could not be created or read beneath the container.
    public static let fileError: Reason = "file-error"
    /// Cancelled by the extension, a host or `appex transfers cancel`.
    public static let cancelled: Reason = "cancelled"
}
