import AppexPolicyCore
import AppexSandbox

/// `appex run`'s report, for people and as JSON, written without Foundation.
public enum RunReportText {
    public static func json(_ r: RunReport, spec: SandboxSpec, extensionPoint: String) -> JSONText {
        .object([
            "bundleIdentifier": .string(r.bundleIdentifier),
            "extensionPoint": .string(extensionPoint),
            "pid": .int(Int64(r.pid)),
            "uid": .int(Int64(r.uid)),
            "cgroup": .string(r.cgroup),
            "exitStatus": r.exitStatus.map { .int(Int64($0)) } ?? .null,
            "signal": r.signal.map { .int(Int64($0)) } ?? .null,
            "killReason": r.killReason.map { .string($0.rawValue) } ?? .null,
            "peakMemoryBytes": r.peakMemoryBytes.map { .int($0) } ?? .null,
            "memoryLimitBytes": spec.memoryMax.map { .int($0) } ?? .null,
            "oomKills": .int(Int64(r.oomKills)),
            "phases": .object(r.phases.mapValues { .int($0) }),
            "deniedSyscalls": .array(r.deniedSyscalls.map { .object(["syscall": .string($0.syscall), "count": .int(Int64($0.count))]) }),
            "logPath": .string(r.logPath),
        ])
    }

    public static func human(_ r: RunReport, spec: SandboxSpec, extensionPoint: String) -> String {
        var lines: [String] = []
        var outcome: String
        if let s = r.exitStatus {
            outcome = "exited with status \(s)"
        } else if let sig = r.signal {
            outcome = "killed by signal \(sig)" + (signalName(sig).map { " (\($0))" } ?? "")
        } else {
            outcome = "ended"
        }
        if let reason = r.killReason { outcome += ", kill reason \(reason.rawValue)" }
        lines.append("\(r.bundleIdentifier) [\(extensionPoint)] pid \(r.pid) uid \(r.uid): \(outcome)")
        let limit = spec.memoryMax.map { " of \(mib($0)) limit" } ?? ""
        lines.append("  peak memory: \(r.peakMemoryBytes.map(mib) ?? "unknown")\(limit)")
        let p = r.phases
        func us(_ k: String) -> String { p[k].map { "\($0) µs" } ?? "-" }
        let view = p["view"].map { _ in " (of which sandbox build \(us("view")))" } ?? ""
        lines.append(
            "  launch: clone \(us("clone")), sandbox \(us("sandbox")), exec \(us("exec")) = \(us("launch")); prepare \(us("prepare"))\(view), run \(us("run"))"
        )
        if !r.deniedSyscalls.isEmpty {
            lines.append("  denied: " + r.deniedSyscalls.map { "\($0.syscall) ×\($0.count)" }.joined(separator: ", "))
        }
        lines.append("  log: \(r.logPath)")
        return lines.newlineJoined
    }

    /// One decimal, rounded as `%.1f` would (no `String(format:)`: that is Foundation).
    public static func mib(_ bytes: Int64) -> String {
        let tenths = (max(bytes, 0) * 10 + 524_288) / 1_048_576
        return "\(tenths / 10).\(tenths % 10) MiB"
    }

    public static func signalName(_ s: Int32) -> String? {
        [9: "SIGKILL", 31: "SIGSYS", 11: "SIGSEGV", 6: "SIGABRT", 15: "SIGTERM", 7: "SIGBUS", 4: "SIGILL", 8: "SIGFPE"][s]
    }
}
