/// Why an extension instance ended: the one vocabulary of `appex run`'s report, the
/// supervisor's termination records, the wire (`Interruption`, `RequestOutcome`, `Terminate`),
/// the history database (`appex kills`), the metrics' `reason` label and policy tests'
/// `expect: killed`. Docs/supervisor.md, "How an instance ends", says when each is given.
///
/// Its raw value is the string people and scripts see; those never change. A string this build
/// does not know (a database another version of appexd wrote) is kept as it is, as
/// `unrecognized`, and shown as it is: reading it never fails.
public enum KillReason: Sendable {
    /// No check-in within the policy's launch deadline.
    case launchTimeout
    /// No answer within the policy's request timeout.
    case requestTimeout
    /// A ping unanswered in time, or a socket buffer it does not read.
    case unresponsive
    /// Another signal, a non-zero exit, or any exit while serving a request.
    case crashed
    /// SIGSYS from a `kill` rule of its system-call filter.
    case seccompViolation
    /// Its own memory limit: appexd's kill at its fatal footprint, or the kernel's OOM killer
    /// in its own cgroup.
    case perProcessLimit
    /// appexd's memory governor chose it as the victim.
    case memoryPressure
    /// The kernel's OOM killer at an ancestor's limit (appexd's memory budget), not its own.
    case kernelOOM
    /// Idle for the policy's idle timeout.
    case idleExit
    /// A frame that broke the protocol, a refused check-in, or a socket closed without an exit.
    case protocolError
    /// The sandbox or the clone failed.
    case launchFailed
    /// An administrator disabled, uninstalled or reinstalled the extension.
    case disabled, uninstalled, updated
    /// appexd stopping.
    case supervisorShutdown
    /// It exited by itself, status 0, while idle: not a kill.
    case exited
    /// `appex run --timeout` ran out (never the supervisor's).
    case runTimeout
    /// A reason this build does not know, as it was written.
    case unrecognized(String)

    /// Every reason this build gives, in the order the docs list them.
    public static let known: [KillReason] = [
        .launchTimeout, .requestTimeout, .unresponsive, .crashed, .seccompViolation, .perProcessLimit,
        .memoryPressure, .kernelOOM, .idleExit, .protocolError, .launchFailed, .disabled, .uninstalled,
        .updated, .supervisorShutdown, .exited, .runTimeout,
    ]

    /// The reasons an extension itself is ended for (not administration, appexd stopping, a
    /// failed launch nor its own exit): the `appex_kills_total` series exported at zero.
    public static let exportedAtZero: [KillReason] = [
        .launchTimeout, .requestTimeout, .unresponsive, .crashed, .seccompViolation, .perProcessLimit,
        .memoryPressure, .kernelOOM, .idleExit,
    ]

    /// Whether `appex_kills_total` counts it: every end but the extension's own exit.
    public var isCountedAsKill: Bool { self != .exited }

    /// Ends appexd asked for and the extension met gracefully (or its own exit): not kills in
    /// `appex report`'s fleet view.
    public var isGraceful: Bool {
        switch self {
        case .exited, .idleExit, .disabled, .uninstalled, .updated, .supervisorShutdown: true
        default: false
        }
    }
}

extension KillReason: RawRepresentable {
    public var rawValue: String {
        switch self {
        case .launchTimeout: "launch-timeout"
        case .requestTimeout: "request-timeout"
        case .unresponsive: "unresponsive"
        case .crashed: "crashed"
        case .seccompViolation: "seccomp-violation"
        case .perProcessLimit: "per-process-limit"
        case .memoryPressure: "memory-pressure"
        case .kernelOOM: "kernel-oom"
        case .idleExit: "idle-exit"
        case .protocolError: "protocol-error"
        case .launchFailed: "launch-failed"
        case .disabled: "disabled"
        case .uninstalled: "uninstalled"
        case .updated: "updated"
        case .supervisorShutdown: "supervisor-shutdown"
        case .exited: "exited"
        case .runTimeout: "run-timeout"
        case .unrecognized(let raw): raw
        }
    }

    /// The reason `rawValue` names; `unrecognized` when this build does not know it.
    public init(rawValue: String) {
        self = Self.known.first { $0.rawValue == rawValue } ?? .unrecognized(rawValue)
    }
}

// Equal when spelled the same: `unrecognized("crashed")` is `crashed`.
extension KillReason: Hashable {
    public static func == (a: KillReason, b: KillReason) -> Bool { a.rawValue == b.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

extension KillReason: CustomStringConvertible {
    public var description: String { rawValue }
}

/// A literal names a reason as the records spell it (`"idle-exit"`), as the wire's `Reason` does.
extension KillReason: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
}

/// Encoded as its string, so JSON and database rows read as before; decoding any string works.
extension KillReason: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
