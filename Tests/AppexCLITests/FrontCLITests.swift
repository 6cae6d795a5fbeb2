import AppexBinaryLint
import AppexCgroups
import AppexELF
import AppexRun
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `appex` front: it links no Foundation, runs a run whose policies are cached by itself,
/// and hands everything else to `appex-commands` (Sources/appex/AppexFront.swift).
@Suite(.serialized) struct FrontCLITests {
    static func neededLibraries(_ path: String) throws -> (needed: [String], isStatic: Bool) {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let info = try ELFDynamicInfo.read(MemorySource(bytes))
        return (info.needed.map { String(decoding: $0, as: UTF8.self) }, info.isStaticallyLinked)
    }

    /// A debug build links Swift libraries dynamically, so what each executable links shows
    /// in its DT_NEEDED entries. (A release build is static; then there is nothing to list.)
    @Test func theFrontLinksNoFoundationAndTheFullToolDoes() throws {
        let front = try Self.neededLibraries(AppexBinary.path)
        let full = try Self.neededLibraries(AppexBinary.commandsPath)
        try #require(!front.isStatic && !full.isStatic, "a static build: no DT_NEEDED to compare")
        let heavy = ["Foundation", "sqlite", "Yams", "ArgumentParser"]
        for lib in front.needed {
            #expect(!heavy.contains { lib.contains($0) }, "appex links \(lib)")
        }
        // The same check finds Foundation where it is linked.
        #expect(full.needed.contains { $0.contains("Foundation") }, "\(full.needed)")
    }

    @Test func jsonTextWritesWhatJSONSerializationWrites() throws {
        let value = JSONText.object([
            "b": .array([.int(1), .int(-2)]), "a": .string("x/y\"\n\t\u{1}é✓"), "e": .array([]), "f": .object([:]),
            "n": .null, "t": .bool(true), "u": .bool(false), "d": .object(["y": .object(["z": .int(Int64.max)]), "x": .int(0)]),
            "arr": .array([.object(["k": .int(1)]), .object(["k": .int(2)])]),
        ])
        func foundation(_ v: JSONText) -> Any {
            switch v {
            case .null: NSNull()
            case .bool(let b): b
            case .int(let n): n
            case .string(let s): s
            case .array(let a): a.map(foundation)
            case .object(let o): o.mapValues(foundation)
            }
        }
        let data = try JSONSerialization.data(withJSONObject: foundation(value), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        #expect(value.pretty() == String(decoding: data, as: UTF8.self))
    }
}

/// The hand-over, through a copy of the front with no `appex-commands` beside it: the full
/// tool is reachable only through `APPEX_COMMANDS`, so a run that succeeds without it was the
/// front's own.
@Suite(.serialized, .requiresRoot("appex run needs root"))
struct FrontHandOverCLITests {
    static let probe = BuiltProducts.path("appex-probe")
    static let sandboxInit = BuiltProducts.path("appex-sandbox-init")

    @Test func aColdRunIsHandedOverAndACachedOneIsTheFrontsOwn() throws {
        let dir = try ScratchDirectory.make("front")
        defer {
            try? ScratchDirectory.removeTree(dir)
            try? CgroupManager.detect(parentName: "appex").removeParent()
        }
        let front = dir + "/appex"
        try ExecutableCopy.make(from: AppexBinary.path, to: front)
        #expect(mkdir(dir + "/cache", 0o700) == 0)
        var env = ProcessInfo.processInfo.environment
        env["APPEX_POLICY_CACHE"] = dir + "/cache"
        env["APPEX_SANDBOX_INIT"] = Self.sandboxInit
        let run = ["run", "--json", "--state-dir", dir + "/state", "--extension-point", "com.apple.widget-extension", Self.probe, "--", "pid"]

        // Policies not compiled yet, and no full tool to compile them: the front says so.
        env["APPEX_COMMANDS"] = dir + "/no-such-appex-commands"
        let stranded = try AppexBinary.run(run, environment: env, executable: front)
        #expect(stranded.status == 127)
        #expect(stranded.stderr.contains("appex-commands"), "\(stranded.stderr)")

        // With the full tool: it compiles the policies, under the front's identity, and runs.
        env["APPEX_COMMANDS"] = AppexBinary.commandsPath
        let cold = try AppexBinary.run(run, environment: env, executable: front)
        #expect(cold.status == 0, "\(cold.stderr)")
        let coldReport = try #require(try cold.json() as? [String: Any])

        // Cached now: the front runs it with no full tool to hand it to.
        env["APPEX_COMMANDS"] = dir + "/no-such-appex-commands"
        let warm = try AppexBinary.run(run, environment: env, executable: front)
        #expect(warm.status == 0, "\(warm.stderr)")
        let warmReport = try #require(try warm.json() as? [String: Any])
        #expect(warmReport["exitStatus"] as? Int == 0)
        #expect(Set(warmReport.keys) == Set(coldReport.keys))
        #expect(warmReport["memoryLimitBytes"] as? Int == coldReport["memoryLimitBytes"] as? Int)

        // Every other command is the full tool's.
        let other = try AppexBinary.run(["policy", "check"], environment: env, executable: front)
        #expect(other.status == 127)
    }
}
