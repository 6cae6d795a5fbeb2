import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

@testable import AppexPolicy
@testable import AppexPolicyCore
@testable import AppexSandbox

#if canImport(Glibc)
import Glibc
#endif

/// The compiled seccomp program cache attacked through the real `appex run`, as root: a
/// forged program that claims the share policy's rules but holds a filter allowing every call,
/// planted where `appex run` looks (`APPEX_POLICY_CACHE`). Someone other than root wrote it,
/// or the directory is shared, or the name is a link: the run must build its own filter, and
/// the probe's `personality(PER_BSD)` must still get EPERM. The last case plants the same
/// forgery where every check passes and sees the run follow it: the forgery works, so it is
/// the checks that stop the others.
@Suite(.serialized, .requiresRoot("appex run needs root"))
struct SeccompCacheAttackCLITests {
    static let denied = ["personality", "0x6"]  // PER_BSD: denied by the shipped share policy

    /// A private cache directory and a state directory, removed at the end.
    final class Workspace {
        let cache: ScratchDirectory
        let state: ScratchDirectory
        init() throws {
            cache = try ScratchDirectory("cli-bpf-cache")
            state = try ScratchDirectory("cli-bpf-state")
        }
        deinit { try? CgroupManager.detect(parentName: "appex").removeParent() }

        /// The probe's last log line after `appex run` with this cache.
        func run() throws -> String {
            var env = ProcessInfo.processInfo.environment
            env["APPEX_POLICY_CACHE"] = cache.path
            let r = try AppexBinary.run(
                [
                    "run", "--json", "--state-dir", state.path, "--extension-point",
                    "com.apple.share-services", RunCLITests.probe, "--",
                ] + SeccompCacheAttackCLITests.denied,
                environment: env)
            try #require(r.status == 0, "\(r.stderr)")
            let json = try #require(try r.json() as? [String: Any])
            let log = try String(contentsOfFile: json["logPath"] as? String ?? "", encoding: .utf8)
            return log.split(separator: "\n").last.map(String.init) ?? ""
        }

        /// The program file `appex run` wrote (one rule list: one file).
        func programFile() throws -> String {
            let files = cache.files(endingIn: ".bpf")
            try #require(files.count == 1, "\(files)")
            return cache.path + "/" + files[0]
        }

        /// Replaces `path` with a file under the real file's header (its magic and key) whose
        /// payload claims the same rules but holds the filter of no rules at all, sealed with a
        /// correct digest: it passes every check but who wrote it and where it lies.
        func forge(_ real: String, into path: String) throws {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: real)))
            let payload = Array(bytes[PrivateCacheFile.headerSize...])
            var reader = CacheReader(payload, from: 0)
            let decoded = reader.string()
            let canonical = try #require(decoded)
            let claimed = try #require(SeccompProgramCache.decode(payload, canonical: canonical))
            var permissive = try SeccompCompiler.compileOrLoad([], cacheDirectory: nil).program
            #expect(permissive.bytes != claimed.bytes)
            permissive.canonicalRules = canonical
            permissive.usesNotify = claimed.usesNotify
            permissive.notifyErrnos = claimed.notifyErrnos
            let forged = SeccompProgramCache.encode(permissive)
            var file = Array(bytes[0..<16])
            withUnsafeBytes(of: PrivateCacheFile.digest(forged[...]).littleEndian) { file += $0 }
            try Data(file + forged).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
        }

        /// A first run (denied, as the policy says) writes the program; the forgery replaces it.
        func plantForgery() throws -> String {
            #expect(try run() == "errno=EPERM")
            let file = try programFile()
            try forge(file, into: file)
            return file
        }
    }

    @Test func aForgedProgramOfAnotherOwnerIsNotLoaded() throws {
        let w = try Workspace()
        chown(try w.plantForgery(), 12345, 12345)
        #expect(try w.run() == "errno=EPERM", "a program another uid wrote was loaded")
    }

    @Test func aForgedProgramInASharedDirectoryIsNotLoaded() throws {
        let w = try Workspace()
        _ = try w.plantForgery()
        chmod(w.cache.path, 0o777)
        #expect(try w.run() == "errno=EPERM", "a program in a directory anyone may write was loaded")
    }

    @Test func aLinkToAForgedProgramIsNotFollowed() throws {
        let w = try Workspace()
        #expect(try w.run() == "errno=EPERM")
        let file = try w.programFile()
        let elsewhere = w.state.path + "/forged.bin"
        try w.forge(file, into: elsewhere)
        try FileManager.default.removeItem(atPath: file)
        #expect(symlink(elsewhere, file) == 0)
        #expect(try w.run() == "errno=EPERM", "a program behind a link was loaded")
    }

    /// The control: the same forgery, root's own file in the private directory, is followed.
    /// (Writing there takes root, who needs no forgery to change the rules.)
    @Test func theForgeryWorksWhereEveryCheckPasses() throws {
        let w = try Workspace()
        _ = try w.plantForgery()
        #expect(try w.run() == "ok")
    }
}
