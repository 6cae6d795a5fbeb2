import AppexKillReason
import AppexPolicy
import Foundation

/// What a policy test case expects the sandbox to do (Docs/policy-tests.md).
enum PolicyTestExpectation: Sendable, Equatable {
    /// The attempt succeeded: the probe printed `ok` (starting with `output`, when given).
    case allowed(output: String?)
    /// The attempt failed with one of `errnos`, answered by `by`.
    case denied(errnos: [String], by: Attribution)
    /// The extension was killed with `reason`, no later than `within` after it started.
    case killed(reason: KillReason, within: Duration?)
    /// The extension missed its launch deadline and was killed for it (through the supervisor).
    case launchTimeout(within: Duration?)
    /// A memory warning reached the extension (through the supervisor).
    case warned
    /// The path is not there: `ENOENT`.
    case invisible
    /// The path is there but cannot be written: `EROFS`.
    case readOnly

    /// Who must have given a `denied` answer.
    enum Attribution: String, Sendable, CaseIterable {
        /// The seccomp filter: the answer follows the policy's errno (checked by a second run
        /// with the policy's errnos swapped for a distinctive one).
        case filter
        /// The kernel itself (a limit, a permission): the filter let the call through.
        case kernel
        /// Either; one run, no attribution.
        case any
    }

    static let kinds = ["allowed", "denied", "killed", "launch-timeout", "warned", "invisible", "read-only"]

    /// Only the supervisor can show these: they need a check-in or a request.
    var needsSupervisor: Bool {
        switch self {
        case .launchTimeout, .warned: true
        default: false
        }
    }

    var description: String {
        switch self {
        case .allowed(let output): output.map { "allowed \"\($0)…\"" } ?? "allowed"
        case .denied(let errnos, let by):
            "denied \(errnos.joined(separator: "|"))" + (by == .any ? "" : " by \(by.rawValue)")
        case .killed(let reason, let within): "killed \(reason)" + (within.map { " within \(Self.format($0))" } ?? "")
        case .launchTimeout(let within): "launch-timeout" + (within.map { " within \(Self.format($0))" } ?? "")
        case .warned: "warned"
        case .invisible: "invisible"
        case .readOnly: "read-only"
        }
    }

    static func format(_ d: Duration) -> String {
        let ms = d.milliseconds
        return ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
    }
}

/// Limits a case sets over its policy's.
struct PolicyTestLimits: Sendable, Hashable {
    /// The footprint hard limit, active and inactive (`memory.activeHardLimit`).
    var memory: ByteSize?
    /// The soft limit, active and inactive; lowered to `memory` when only that is given.
    var memorySoft: ByteSize?
    var pids: Int?
    var files: Int?
    var launchDeadline: Duration?

    var isEmpty: Bool { self == PolicyTestLimits() }

    static let keys: Set<String> = ["memory", "memorySoft", "pids", "files", "launchDeadline"]

    /// `policy` with these limits applied.
    func apply(to policy: ExtensionPointPolicy) -> ExtensionPointPolicy {
        var p = policy
        if let memory {
            p.memory.activeHardLimit = memory
            p.memory.inactiveHardLimit = memory
            p.memory.activeSoftLimit = min(p.memory.activeSoftLimit, memory)
            p.memory.inactiveSoftLimit = min(p.memory.inactiveSoftLimit, memory)
        }
        if let memorySoft {
            p.memory.activeSoftLimit = memorySoft
            p.memory.inactiveSoftLimit = memorySoft
        }
        if let pids { p.pidsLimit = pids }
        if let files { p.openFilesLimit = files }
        if let launchDeadline { p.launchDeadline = launchDeadline }
        return p
    }
}

/// One case as written, before its extension points are expanded.
package struct PolicyTestCase: Sendable {
    var file: String
    var line: Int?
    var name: String
    /// Extension points to run under (one case each); empty with `policyFile` means its first.
    var extensionPoints: [String]
    /// An extension-point policy file layered over the shipped policies.
    var policyFile: String?
    /// appex-probe's arguments (run through the same machinery as `appex run`).
    var action: [String]?
    /// The probe extension's `probe.action` and optional `probe.arg` (through a supervisor).
    var request: [String]?
    /// probe.conf lines for the probe extension, in the order written.
    var probeConf: [(key: String, value: Int)]
    var limits: PolicyTestLimits
    var expectation: PolicyTestExpectation
    /// How long the probe may run before it is killed (`run-timeout`).
    var timeout: Duration
    /// Architectures the case applies to (`uname -m` names); nil: all.
    var architectures: [String]?

    /// Through an embedded supervisor with the probe extension, rather than `appex run`.
    package var throughSupervisor: Bool { request != nil || !probeConf.isEmpty || expectation.needsSupervisor }

    /// Every `${NAME}` its arguments use.
    package var variables: Set<String> {
        Set(((action ?? []) + (request ?? [])).flatMap(PolicyTestVariables.names(in:)))
            .union(expectationOutputVariables)
    }

    private var expectationOutputVariables: [String] {
        if case .allowed(let output?) = expectation { return PolicyTestVariables.names(in: output) }
        return []
    }
}

/// One test file: a title, whether it runs a bystander beside its cases, and its cases.
package struct PolicyTestFile: Sendable {
    var path: String
    var title: String?
    package var bystander: Bool
    var cases: [PolicyTestCase]
}
