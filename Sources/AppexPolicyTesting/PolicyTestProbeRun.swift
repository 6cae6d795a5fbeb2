import AppexKillReason
import AppexPolicy
import AppexSandbox
import AppexStateDirectory
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What appex-probe did in one run: how it ended and the line it printed.
struct ProbeObservation: Sendable {
    var exitStatus: Int32?
    var signal: Int32?
    var killReason: KillReason?
    /// The probe's last output line (its answer), or "" when it printed nothing.
    var line: String
    /// Everything it wrote (stdout and stderr), for a usage message.
    var output: [String]
    /// Exec to exit.
    var runMicroseconds: Int64

    /// The errno name of an `errno=NAME` answer.
    var errnoName: String? {
        guard exitStatus == 0, line.hasPrefix("errno=") else { return nil }
        return String(line.dropFirst(6).prefix { $0 != " " })
    }

    /// `errno=NAME at=STEP`: a step before the attempt failed, so the attempt was not made.
    var failedBeforeAttempt: String? {
        guard line.hasPrefix("errno=") else { return nil }
        return line.split(separator: " ").first { $0.hasPrefix("at=") }.map { String($0.dropFirst(3)) }
    }

    /// How it ended, for the report: the line, or the kill.
    var summary: String {
        if let signal {
            let reason = killReason.map { ", \($0)" } ?? ""
            return "killed by signal \(signal)\(reason)" + (line.isEmpty ? "" : " after \"\(line)\"")
        }
        switch exitStatus {
        case 0: return line.isEmpty ? "exit 0, no answer" : line
        case 2: return "usage error (exit 2): \(output.first { !$0.isEmpty } ?? "")"
        case 3: return line
        case let s?: return "exit \(s)" + (line.isEmpty ? "" : ": \(line)")
        case nil: return "ended"
        }
    }
}

/// Runs appex-probe as an extension through the same machinery as `appex run` (ExtensionRun:
/// cgroup with the policy's limits, the uid switch, rlimits, the seccomp filter, the view),
/// launched into a sandbox kept per extension point and worker, as a supervisor keeps one per
/// extension.
final class PolicyTestProbeRunner: @unchecked Sendable {
    let environment: PolicyTestEnvironment
    private let sandboxes = Mutex<[String: (ExtensionSandbox, Container, String)]>([:])

    init(environment: PolicyTestEnvironment) {
        self.environment = environment
    }

    /// An errno no call the probe makes returns by itself (memory page hardware error): a
    /// policy whose errnos are all swapped for it shows which answers the filter gave.
    static let distinctiveErrno = ProbeErrno.value("EHWPOISON")!

    /// The attempt behind `read-only: PATH`: remove a directory entry that does not exist
    /// (`unlinkat(AT_FDCWD, PATH/<random>, AT_REMOVEDIR)`). A read-only mount answers EROFS
    /// before the name is looked up; a writable one ENOENT. Nothing is created or removed
    /// either way, so it is harmless where no sandbox stops it.
    static func readOnlyAttempt(_ path: String) -> [String] {
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        let name = ".appex-test-policy-absent-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return ["syscall", "unlinkat", "-100", "str:\(base)/\(name)", "0x200"]
    }

    /// The sandbox (and its container) for `spec` on this worker: one per extension point,
    /// policy file and view, made on first use.
    func sandbox(for spec: SandboxSpec, key: String) throws -> (ExtensionSandbox, Container, String) {
        if let hit = sandboxes.withLock({ $0[key] }) { return hit }
        // Named after the key, so a kept --state-dir reuses its containers and uids.
        let identifier = "dev.appex.test-policy.s" + String(FNV1a.of(key.utf8), radix: 16)
        var spec = spec
        spec.bundleIdentifier = identifier
        let store = environment.store
        let container = try store.prepare(bundleIdentifier: identifier, appGroups: spec.appGroups)
        let sandbox = try ExtensionSandbox.create(spec: spec, container: container, store: store)
        let entry = (sandbox, container, identifier)
        sandboxes.withLock { $0[key] = entry }
        return entry
    }

    /// The spec for appex-probe under `policy` with `arguments`, as a bundle (the staged probe).
    func spec(policy: EffectivePolicy, arguments: [String]) -> SandboxSpec {
        var spec = SandboxSpec(
            executable: environment.probeExecutable, policy: policy, bundleIdentifier: "dev.appex.test-policy",
            arguments: arguments)
        spec.bundlePath = environment.probeBundle
        spec.executablePath = environment.probeExecutable
        return spec
    }

    /// The key of the sandbox a spec can share: what the view and namespaces are made from.
    static func sandboxKey(extensionPoint: String, policyFile: String?, spec: SandboxSpec, worker: Int) -> String {
        [
            extensionPoint, policyFile ?? "-", spec.readOnlyPaths.joined(separator: ":"), String(spec.hostNetwork),
            spec.appGroups.joined(separator: ","), String(worker),
        ].joined(separator: "|")
    }

    /// Runs the probe once with `spec` in `sandbox` and reads its answer from its log.
    func run(_ spec: SandboxSpec, in sandbox: ExtensionSandbox, timeout: Duration) throws -> ProbeObservation {
        let log = environment.store.logPath(for: spec.bundleIdentifier)
        let offset = Self.size(of: log)
        let report = try ExtensionRun.run(spec, options: environment.runOptions(timeout: timeout), sandbox: sandbox)
        let lines = Self.read(log, from: offset).filter { !$0.hasPrefix("--- appex run ") }
        return ProbeObservation(
            exitStatus: report.exitStatus, signal: report.signal, killReason: report.killReason,
            line: lines.last { !$0.isEmpty } ?? "", output: lines,
            runMicroseconds: report.phases["run"] ?? 0)
    }

    /// The same rules with every errno answer swapped for the distinctive one.
    static func swapped(_ rules: [SeccompRule]) -> [SeccompRule] {
        rules.map { r in
            switch r.action {
            case .errno: SeccompRule(r.syscall, .errno(distinctiveErrno))
            case .notify: SeccompRule(r.syscall, .notify(errno: distinctiveErrno))
            default: r
            }
        }
    }

    /// Ends every sandbox (their inits, and anything still in them).
    func closeAll() {
        let all = sandboxes.withLock { s -> [ExtensionSandbox] in
            defer { s = [:] }
            return s.values.map(\.0)
        }
        all.forEach { $0.close() }
    }

    static func size(of path: String) -> UInt64 {
        var st = stat()
        return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
    }

    /// The log's lines from `offset` on; if it rotated meanwhile, the rest of the old one too.
    static func read(_ path: String, from offset: UInt64) -> [String] {
        var data = Data()
        if size(of: path) < offset, let old = FileManager.default.contents(atPath: path + ".1"), old.count >= offset {
            data.append(old.subdata(in: Int(offset)..<old.count))
            data.append(FileManager.default.contents(atPath: path) ?? Data())
        } else if let all = FileManager.default.contents(atPath: path), all.count >= offset {
            data = all.subdata(in: Int(offset)..<all.count)
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}
