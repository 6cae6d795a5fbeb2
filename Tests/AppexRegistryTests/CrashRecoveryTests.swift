import AppexTestSupport
import Foundation
import Testing

@testable import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

@Suite("Registry crash recovery")
struct CrashRecoveryTests {
    /// The crash helper, built beside the test binary (the test target depends on it).
    static let helper = BuiltProducts.path("appex-registry-crash-helper")

    @Test("opening removes staged leftovers and copies no row names, and keeps the live copy")
    func recoveryOnOpen() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let installed = try Registry(stateDirectory: scratch.state).install(path: source).extensions[0]
        // What a SIGKILL at each step of an install could leave behind.
        try scratch.write("state/bundles/.staging/install-dead/0/Share.appex/run", "half")
        try scratch.write("state/bundles/com.example.share/2/Share.appex/run", "uncommitted")
        try scratch.write("state/bundles/com.example.gone/1/Gone.appex/run", "uncommitted")

        let registry = try Registry(stateDirectory: scratch.state)
        #expect(registry.recovery.removedStaging == [scratch.state + "/bundles/.staging/install-dead"])
        #expect(
            registry.recovery.removedOrphans.sorted() == [
                scratch.state + "/bundles/com.example.gone",
                scratch.state + "/bundles/com.example.share/2",
            ])
        #expect(registry.recovery.missingCopies.isEmpty)
        #expect(scratch.names(in: registry.bundlesDirectory).filter { !$0.hasPrefix(".") } == ["com.example.share"])
        #expect(scratch.names(in: registry.bundlesDirectory + "/com.example.share") == ["1"])
        #expect(scratch.names(in: registry.bundlesDirectory + "/.staging").isEmpty)
        #expect(try registry.list() == [installed])
        #expect(try registry.integrityProblems() == [])
        #expect(try Registry(stateDirectory: scratch.state).recovery.isEmpty)
    }

    @Test("a copy deleted behind the registry's back is reported, not hidden")
    func missingCopyReported() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let installed = try Registry(stateDirectory: scratch.state).install(path: source).extensions[0]
        try FileManager.default.removeItem(atPath: installed.bundlePath)

        let registry = try Registry(stateDirectory: scratch.state)
        #expect(registry.recovery.missingCopies == ["com.example.share"])
        #expect(try registry.integrityProblems().contains { $0.contains("com.example.share") && $0.contains("missing") })
    }

    /// Lines the helper printed so far, read until `count` have arrived.
    final class LineReader {
        let handle: FileHandle
        var buffer = Data()
        var lines: [String] = []
        init(_ handle: FileHandle) { self.handle = handle }

        func waitFor(_ count: Int) -> Bool {
            while lines.count < count {
                let chunk = handle.availableData
                if chunk.isEmpty { return false }  // the helper exited
                buffer += chunk
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer = Data(buffer[(newline + 1)...])
                }
            }
            return true
        }
    }

    @Test("SIGKILL in the middle of installs and toggles leaves a sound registry")
    func sigkill() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.helper), "missing \(Self.helper)")
        let scratch = try Scratch()
        let big = String(repeating: "0123456789abcdef", count: 1 << 16)  // 1 MiB: kills land mid-copy
        let app = try scratch.makeApp(
            "src/Host.app", identifier: "com.example.host",
            plugIns: ["com.example.host.share", "com.example.host.action"], data: big)
        let bare = try scratch.makeAppex("src/Widget.appex", identifier: "com.example.widget", data: big)
        let churn = try scratch.makeAppex("src/Churn.appex", identifier: "com.example.churn", data: big)
        let kept = ["com.example.host.action", "com.example.host.share", "com.example.widget"]

        // Each round kills the helper after a different number of finished steps.
        for (round, steps) in [0, 1, 3, 6, 10].enumerated() {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.helper)
            process.arguments = [scratch.state, app, bare, "--", churn]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let reader = LineReader(out.fileHandleForReading)
            let reached = reader.waitFor(1 + steps)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(reached, "round \(round): the helper stopped early: \(reader.lines) \(stderr)")
            #expect(
                process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
                "round \(round): the helper was not killed mid-run: \(stderr)")
            #expect(reader.lines.first == "ready")

            let registry = try Registry(stateDirectory: scratch.state)
            #expect(try registry.integrityProblems() == [], "round \(round)")
            #expect(registry.recovery.missingCopies.isEmpty, "round \(round)")
            #expect(scratch.names(in: registry.bundlesDirectory + "/.staging").isEmpty, "round \(round)")
            let rows = try registry.list()
            // The extensions installed and enabled before "ready" survive every kill, enabled:
            // re-installs replace their copies and keep the state.
            for id in kept {
                let row = rows.first { $0.bundleIdentifier == id }
                #expect(row?.isEnabled == true, "round \(round): \(id) is \(row.map { "\($0)" } ?? "missing")")
            }
            #expect(Set(rows.map(\.bundleIdentifier)).isSubset(of: Set(kept + ["com.example.churn"])), "round \(round)")
            // Exactly one copy per row, the one it names; no copy without a row.
            let directories = scratch.names(in: registry.bundlesDirectory).filter { !$0.hasPrefix(".") }
            #expect(directories == rows.map(\.bundleIdentifier).sorted(), "round \(round)")
            for row in rows {
                #expect(
                    scratch.names(in: registry.bundlesDirectory + "/" + row.bundleIdentifier) == [String(row.generation)],
                    "round \(round): \(row.bundleIdentifier)")
                #expect(try scratch.read(row.bundlePath + "/Resources/data.txt") == big)
            }
        }
    }
}
