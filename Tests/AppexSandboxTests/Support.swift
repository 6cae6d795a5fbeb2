import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// Shared fixtures: a private state root, bundles holding the probe, the test cgroup parent.
enum Fixture {
    /// Every test cgroup lives under this parent, so leftovers are easy to see.
    static let cgroupParent = "appex-tests"

    /// The `appex-probe` executable: built by SwiftPM next to the tests, else compiled here.
    static let probe: String = {
        let built = BuiltProducts.path("appex-probe")
        if FileManager.default.isExecutableFile(atPath: built) { return built }
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/appex-probe").standardizedFileURL.path
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: sources)) ?? [])
            .filter { $0.hasSuffix(".c") }.sorted().map { sources + "/" + $0 }
        let out = NSTemporaryDirectory() + "appex-probe-\(getpid())"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/gcc")
        p.arguments = ["-O2", "-o", out] + files
        try? p.run()
        p.waitUntilExit()
        return out
    }()

    static var balloon: String { BuiltProducts.path("AppexExampleBalloon") }

    static func cgroups() throws -> CgroupManager {
        try CgroupManager.detect(parentName: cgroupParent)
    }

    /// Removes the (empty) test parent cgroups; a busy parent (EBUSY) stays for the next test.
    static func removeParentCgroups() {
        guard let m = try? cgroups() else { return }
        for p in m.parentPaths.reversed() { _ = rmdir(p) }
    }

    /// A bundle directory (0755) holding a copy of `executable` named `probe`.
    static func makeBundle(in dir: String, name: String = "Probe.appex", executable: String = probe) throws -> (bundle: String, exe: String) {
        let bundle = dir + "/" + name
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        chmod(bundle, 0o755)
        let exe = bundle + "/probe"
        try? FileManager.default.removeItem(atPath: exe)
        try FileManager.default.copyItem(atPath: executable, toPath: exe)
        chmod(exe, 0o755)
        return (bundle, exe)
    }

    static func uniqueID(_ tag: String) -> String {
        "com.example.test.\(tag).p\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
    }
}

/// One sandboxed run of the probe with its own state root, checked for leftovers; removes
/// its temporary directories when released.
final class ProbeRun {
    let state: String
    let bundle: String
    let exe: String
    let id: String
    private let owned: [String]

    init(_ tag: String, state: String? = nil, id: String? = nil) throws {
        let madeState = state == nil
        self.state = try state ?? ScratchDirectory.make("sbx-\(tag)", mode: 0o755)
        let dir = try ScratchDirectory.make("sbx-\(tag)-bundle", mode: 0o755)
        (bundle, exe) = try Fixture.makeBundle(in: dir)
        self.id = id ?? Fixture.uniqueID(tag)
        owned = [dir] + (madeState ? [self.state] : [])
    }

    deinit {
        for d in owned { try? ContainerStore.removeTree(d) }
    }

    func spec(
        _ args: [String], rules: [SeccompRule] = [], memoryMax: Int64? = 64 << 20,
        pids: Int? = 32
    ) -> SandboxSpec {
        SandboxSpec(
            bundleIdentifier: id, bundlePath: bundle, executablePath: exe, arguments: args,
            memoryMax: memoryMax, pidsMax: pids, syscallRules: rules)
    }

    /// Uids of this run's own: RLIMIT_NPROC counts every process of a uid, so a fork bomb in
    /// one test would make another test's execve fail with EAGAIN if they shared uid 200000.
    let uidRange: ClosedRange<UInt32> = {
        let base = 400_000 + UInt32.random(in: 0..<2000) * 50
        return base...(base + 49)
    }()

    func options(timeout: Duration? = nil) throws -> RunOptions {
        RunOptions(stateDirectory: state, timeout: timeout, cgroups: try Fixture.cgroups(), uidRange: uidRange)
    }

    /// Runs and returns the report and the probe's last output line; asserts no leftovers.
    func run(
        _ args: [String], rules: [SeccompRule] = [], memoryMax: Int64? = 64 << 20, pids: Int? = 32,
        timeout: Duration? = nil
    ) throws -> (RunReport, String) {
        let report = try ExtensionRun.run(
            spec(args, rules: rules, memoryMax: memoryMax, pids: pids),
            options: options(timeout: timeout))
        try checkNoLeftovers(report)
        return (report, lastLine())
    }

    func lastLine() -> String {
        let text = (try? String(contentsOfFile: state + "/logs/\(id).log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").last.map(String.init) ?? ""
    }

    func checkNoLeftovers(_ report: RunReport) throws {
        let manager = try Fixture.cgroups()
        #expect(try !manager.list().contains(report.cgroup), "cgroup \(report.cgroup) left behind")
        let mountinfo = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        #expect(!mountinfo.contains(state), "a mount under \(state) leaked into the host")
        #expect(kill(report.pid, 0) == -1 && errno == ESRCH, "pid \(report.pid) still exists")
        Fixture.removeParentCgroups()
    }
}
