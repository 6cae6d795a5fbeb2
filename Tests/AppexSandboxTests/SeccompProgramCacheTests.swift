import AppexPolicy
import AppexTestSupport
import Foundation
import Testing

@testable import AppexSandbox

#if canImport(Glibc)
import Glibc
#endif

/// The compiled seccomp programs kept on disk: a hit is byte for byte what libseccomp builds,
/// and a file that is damaged, foreign, shared or made for other rules is never loaded.
@Suite struct SeccompProgramCacheTests {
    /// A private (0700) directory of the test's own, removed at the end.
    final class CacheDirectory {
        let scratch: ScratchDirectory
        init() throws { scratch = try ScratchDirectory("bpf-cache") }
        var path: String { scratch.path }
        var files: [String] { scratch.files(endingIn: ".bpf") }
    }

    static let rules = [
        SeccompRule("ptrace", .errno(EPERM)), SeccompRule("keyctl", .notify(errno: EACCES)),
        SeccompRule("unshare", .errno(EPERM)), SeccompRule("personality", .kill),
    ]

    func load(_ rules: [SeccompRule], _ dir: CacheDirectory) throws -> (program: SeccompProgram, fromDisk: Bool) {
        try SeccompCompiler.compileOrLoad(rules, cacheDirectory: dir.path)
    }

    func built(_ rules: [SeccompRule]) throws -> SeccompProgram {
        try SeccompCompiler.compileOrLoad(rules, cacheDirectory: nil).program
    }

    @Test func aStoredProgramIsTheOneLibseccompBuilds() throws {
        let dir = try CacheDirectory()
        let first = try load(Self.rules, dir)
        #expect(!first.fromDisk)
        #expect(dir.files.count == 1)
        let second = try load(Self.rules, dir)
        #expect(second.fromDisk)
        #expect(second.program == first.program)
        #expect(second.program == (try built(Self.rules)))
        #expect(second.program.usesNotify && second.program.notifyErrnos.values.sorted() == [EACCES])
        let mode = try FileManager.default.attributesOfItem(atPath: dir.path + "/" + dir.files[0])[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// Another rule set's program under this rule set's key and name: refused, rebuilt.
    @Test func anotherRuleSetsProgramIsNotServed() throws {
        let dir = try CacheDirectory()
        let other = [SeccompRule("ptrace", .errno(EACCES))]
        let otherProgram = try built(other)
        let canonical = try SeccompCompiler.canonicalize(Self.rules)
        let key = try #require(SeccompProgramCache.key(canonical))
        PrivateCacheFile.write(
            SeccompProgramCache.file(key, in: dir.path), magic: SeccompProgramCache.magic, key: key,
            payload: SeccompProgramCache.encode(otherProgram))
        let loaded = try load(Self.rules, dir)
        #expect(!loaded.fromDisk)
        #expect(loaded.program == (try built(Self.rules)))
        #expect(try load(Self.rules, dir).fromDisk, "the refused file was replaced by the right one")
    }

    /// One flipped bit in the program: the digest no longer matches, so it is rebuilt.
    @Test func aDamagedFileIsRebuilt() throws {
        let dir = try CacheDirectory()
        _ = try load(Self.rules, dir)
        let path = dir.path + "/" + dir.files[0]
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count - 3] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        let loaded = try load(Self.rules, dir)
        #expect(!loaded.fromDisk)
        #expect(loaded.program == (try built(Self.rules)))
    }

    /// A directory others may write to is neither read nor written.
    @Test func aSharedDirectoryIsNotUsed() throws {
        let dir = try CacheDirectory()
        chmod(dir.path, 0o777)
        #expect(!(try load(Self.rules, dir)).fromDisk)
        #expect(dir.files.isEmpty)
    }

    /// A file of another owner, or a link to a file that would pass, is not read.
    @Test(.requiresRoot("changing a file's owner needs root")) func aForeignOrLinkedFileIsNotRead() throws {
        let dir = try CacheDirectory()
        _ = try load(Self.rules, dir)
        let path = dir.path + "/" + dir.files[0]
        chown(path, 12345, 12345)
        #expect(!(try load(Self.rules, dir)).fromDisk)

        #expect(try load(Self.rules, dir).fromDisk, "rewritten as ours")
        let elsewhere = dir.path + "/elsewhere"
        #expect(rename(path, elsewhere) == 0)
        #expect(symlink(elsewhere, path) == 0)
        #expect(!(try load(Self.rules, dir)).fromDisk)
    }

    /// The decoder on every prefix of a payload: nil, never a trap.
    @Test func theDecoderRejectsEveryTruncation() throws {
        let program = try built(Self.rules)
        let payload = SeccompProgramCache.encode(program)
        #expect(SeccompProgramCache.decode(payload, canonical: program.canonicalRules) == program)
        for n in 0..<payload.count {
            #expect(SeccompProgramCache.decode(Array(payload.prefix(n)), canonical: program.canonicalRules) == nil)
        }
    }
}
