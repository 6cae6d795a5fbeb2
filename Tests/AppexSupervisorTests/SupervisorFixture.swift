import AppexCgroups
import AppexSupervisor
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A supervisor on a private state directory, with a policy overlay that defines the test's
/// own extension point (short timeouts, so life-cycle tests take a second, not thirty), and
/// bundles installed from built extension executables. `close()` shuts it down and checks
/// that nothing is left: no instance, no cgroup.
final class SupervisorFixture: @unchecked Sendable {
    static let extensionPoint = "dev.appex.tests.supervisor"

    let root: String
    let supervisor: Supervisor
    let cgroupParent: String

    /// `policy`: YAML lines added to the test extension point's policy. `points`: more
    /// extension points (identifier → policy lines), for extensions under other policies.
    /// `budget`, `agingDelay`, `victimOrder`: the memory governor's options.
    init(
        policy: [String] = [], points: [String: [String]] = [:], budget: Int64? = nil,
        agingDelay: Duration? = nil, victimOrder: VictimOrder = .longestInBand, systemPressure: Bool = false,
        prebuildSandboxes: Bool = false
    ) throws {
        root = try ScratchDirectory.make("sup", mode: 0o755)
        let overlay = root + "/policies"
        try FileManager.default.createDirectory(atPath: overlay + "/extension-points", withIntermediateDirectories: true)
        // The test's lines replace these defaults key by key.
        let overridden = Set(policy.compactMap { $0.first == " " ? nil : $0.split(separator: ":").first.map(String.init) })
        let defaults = [
            "launchDeadline: 2s",
            "requestTimeout: 4s",
            "idleTimeout: 30s",
            "pingInterval: 200ms",
            "unresponsiveTimeout: 1s",
        ].filter { !overridden.contains(String($0.split(separator: ":")[0])) }
        let yaml = ["extensionPoints: [\(Self.extensionPoint)]", "title: Supervisor tests"] + defaults + policy
        try Self.write(yaml.joined(separator: "\n") + "\n", to: overlay + "/extension-points/tests.yaml")
        for (n, (point, lines)) in points.sorted(by: { $0.key < $1.key }).enumerated() {
            let other = ["extensionPoints: [\(point)]", "title: Supervisor tests \(n)"] + defaults + lines
            try Self.write(other.joined(separator: "\n") + "\n", to: overlay + "/extension-points/tests-\(n).yaml")
        }
        cgroupParent = "appexd-tests-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        supervisor = try Supervisor(
            options: SupervisorOptions(
                stateDirectory: root + "/state", policyOverlays: [overlay], cgroupParent: cgroupParent,
                terminateGrace: .milliseconds(500), memoryBudget: budget, victimOrder: victimOrder, agingDelay: agingDelay,
                watchSystemPressure: systemPressure, prebuildSandboxes: prebuildSandboxes))
        supervisor.start()
    }

    /// Builds a bundle around `executable`, installs and enables it; returns its identifier.
    @discardableResult
    func install(
        executable: String, identifier: String, activationRule: String? = nil,
        files: [String: String] = [:], extensionPoint: String = SupervisorFixture.extensionPoint,
        enable: Bool = true
    ) async throws -> String {
        let bundle = root + "/src/\(identifier).appex"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        for (name, text) in files { try Self.write(text, to: bundle + "/" + name) }
        try BareBundle.write(
            .init(
                identifier: identifier, executable: "ext", point: extensionPoint, shortVersion: "1.0",
                activationRule: activationRule), at: bundle, executableFrom: executable)
        _ = try await supervisor.install(path: bundle)
        if enable { _ = try await supervisor.enable(identifier) }
        return identifier
    }

    func request(
        _ identifier: String, text: String? = "hello", items: [AppexWire.ExtensionItem]? = nil,
        userInfo: [String: UserInfoValue] = [:], descriptors: [Int32] = [],
        id: UInt64 = UInt64.random(in: 1...UInt64.max / 2),
        openURL: @escaping @Sendable (String) -> Bool = { _ in false }
    ) async -> EmbeddedResult {
        let items = items ?? [AppexWire.ExtensionItem(attributedContentText: text, userInfo: userInfo)]
        return await supervisor.request(
            HostBeginRequest(requestID: id, bundleIdentifier: identifier, items: items),
            descriptors: descriptors, openURL: openURL)
    }

    /// Shuts the supervisor down and checks it left no cgroup behind; removes the files.
    func close() async throws {
        await supervisor.shutdown()
        let manager = try CgroupManager.detect(parentName: cgroupParent)
        for path in manager.parentPaths {
            #expect(!FileManager.default.fileExists(atPath: path), "cgroup parent left behind: \(path)")
            _ = rmdir(path)
        }
        try? ScratchDirectory.removeTree(root)
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }
}

extension EmbeddedResult {
    var outcome: RequestOutcome? {
        if case .ended(let o, _, _) = self { return o }
        return nil
    }

    var refusal: Refusal? {
        if case .refused(let r) = self { return r }
        return nil
    }

    var interruption: Interruption? {
        if case .ended(_, let i, _) = self { return i }
        return nil
    }

    func phase(_ name: String) -> UInt64? {
        outcome?.phases.first { $0.name == name }?.microseconds
    }
}
