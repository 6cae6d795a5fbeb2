import AppexPolicyCore
import CSeccomp

#if canImport(Glibc)
import Glibc
#endif

/// Compiled seccomp programs kept between runs, beside the compiled policies.
///
/// libseccomp's build of a shipped policy's filter (a rule for each known syscall number,
/// then the binary tree) was a third of a whole `appex run`
/// (Docs/decisions/0002-whole-command-static-runtime-seccomp-cache.md).
/// The program it exports depends only on the canonical rule list, on Appex's build (its
/// syscall table and argument rules), on libseccomp's version and on the API level it found in
/// the kernel, so all of them make the key; the file also carries the rule list itself, which
/// must equal the one asked for, so a hash collision cannot hand one policy another's filter.
///
/// Trust comes from `PrivateCacheFile` (a private file in a private directory), as for the
/// policy cache, in the same directory and switched off the same way (`APPEX_POLICY_CACHE=off`).
enum SeccompProgramCache {
    static let magic = Array("APXBPF01".utf8)

    /// The program compiled from `canonical` when `directory` holds it.
    static func read(canonical: String, directory: String) -> SeccompProgram? {
        guard PrivateCacheFile.isPrivate(directory, directory: true), let key = key(canonical),
            let payload = PrivateCacheFile.read(file(key, in: directory), magic: magic, key: key, maxBytes: 1 << 20)
        else { return nil }
        return decode(payload, canonical: canonical)
    }

    /// Keeps `program` for the next run; a failure only costs that run a compile.
    static func write(_ program: SeccompProgram, directory: String) {
        guard PrivateCacheFile.isPrivate(directory, directory: true), let key = key(program.canonicalRules) else { return }
        let path = file(key, in: directory)
        PrivateCacheFile.write(path, magic: magic, key: key, payload: encode(program))
        PrivateCacheFile.prune(directory, prefix: "seccomp-", suffix: ".bpf", keeping: path, limit: 64)
    }

    static func key(_ canonical: String) -> UInt64? {
        guard let identity = PrivateCacheFile.executableIdentity() else { return nil }
        var hash = FNV1a()
        hash.mix(identity.utf8)
        if let v = seccomp_version() {
            hash.mix("libseccomp \(v.pointee.major).\(v.pointee.minor).\(v.pointee.micro) api \(seccomp_api_get())\n".utf8)
        }
        hash.mix(canonical.utf8)
        return hash.value
    }

    static func file(_ key: UInt64, in directory: String) -> String {
        directory + "/seccomp-" + PrivateCacheFile.hex(key) + ".bpf"
    }

    static func encode(_ program: SeccompProgram) -> [UInt8] {
        var w = CacheWriter()
        w.string(program.canonicalRules)
        w.int(program.usesNotify ? 1 : 0)
        let numbers = program.notifyErrnos.keys.sorted()
        w.int(numbers.count)
        for nr in numbers {
            w.int(Int(nr))
            w.int(Int(program.notifyErrnos[nr]!))
        }
        w.blob(program.bytes)
        return w.bytes
    }

    /// nil unless the payload is whole, was compiled from `canonical`, and holds a program the
    /// kernel could take.
    static func decode(_ payload: [UInt8], canonical: String) -> SeccompProgram? {
        var r = CacheReader(payload, from: 0)
        guard r.string() == canonical, let notify = r.int(), notify == 0 || notify == 1, let n = r.count() else { return nil }
        var errnos: [Int32: Int32] = [:]
        for _ in 0..<n {
            guard let nr = r.int().flatMap(Int32.init(exactly:)), let e = r.int().flatMap(Int32.init(exactly:)) else { return nil }
            errnos[nr] = e
        }
        guard let bytes = r.blob(), r.atEnd, !bytes.isEmpty, bytes.count % 8 == 0,
            bytes.count / 8 <= SeccompCompiler.maxInstructions
        else { return nil }
        return SeccompProgram(
            bytes: bytes, usesNotify: notify == 1, notifyErrnos: errnos,
            canonicalRules: canonical, digest: FNV1a.of(canonical.utf8))
    }
}
