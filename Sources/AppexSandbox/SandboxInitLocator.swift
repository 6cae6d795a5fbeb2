import AppexPolicyCore
import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// Finds the `appex-sandbox-init` executable (`ExtensionSandbox`'s pid 1).
///
/// Order: `$APPEX_SANDBOX_INIT`; beside the running executable (SwiftPM puts every product
/// of the package, test bundles included, in one directory); `../libexec/appex/` beside it
/// (an installed layout); the source checkout's `.build/{debug,release}` (a development
/// build used from another package, such as Benchmarks/).
public enum SandboxInitLocator {
    public static let name = "appex-sandbox-init"

    public static func path() throws -> String {
        // stat and access, not FileManager: its first use in a process is paid by every `appex run`.
        for candidate in candidates() where isExecutableFile(candidate) {
            return candidate
        }
        throw SandboxError(
            "locate \(name)", errno: .noSuchFileOrDirectory,
            message: "build it (swift build --product \(name)) or set APPEX_SANDBOX_INIT")
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }

    /// Where an executable of Appex's own sits next to the running one: beside it, and in
    /// `../libexec/appex/` beside it (the installed layout).
    public static func installedCandidates(named name: String) -> [String] {
        guard let exe = runningExecutable() else { return [] }
        let directory = PolicyLocator.directoryOf(exe)
        return [directory + "/" + name, PolicyLocator.directoryOf(directory) + "/libexec/appex/" + name]
    }

    /// The running executable's path as the kernel keeps it (absolute, links resolved): the
    /// target of `/proc/self/exe`, read with readlink, not realpath. realpath checks every
    /// directory on the way, which fails for a user who may run a binary in a directory it
    /// cannot search (a root-owned 0700 build tree run through `setpriv`, as the tests do).
    static func runningExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0, n < buffer.count - 1 else { return PolicyLocator.resolved("/proc/self/exe") }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func candidates() -> [String] {
        var list: [String] = []
        if let env = ProcessEnvironment.value("APPEX_SANDBOX_INIT"), !env.isEmpty { list.append(env) }
        // realpath and plain string steps on its canonical answer (PolicyLocator's, which finds
        // the shipped policies the same way), not Foundation's URL (costly on first use,
        // AbsolutePath) nor FilePath's removingLastComponent (a conformance scan): this runs
        // on every `appex run` (Docs/decisions/0004-shorter-filter-sandbox-beside.md).
        list += installedCandidates(named: name)
        // A debug build also finds the init its checkout built; a release build never does:
        // whoever owns the checkout would choose what root runs as every sandbox's pid 1.
        #if DEBUG
        // This file is <checkout>/Sources/AppexSandbox/SandboxInitLocator.swift.
        let checkout = PolicyLocator.directoryOf(PolicyLocator.directoryOf(PolicyLocator.directoryOf(#filePath)))
        for config in ["release", "debug"] {
            list.append(checkout + "/.build/" + config + "/" + name)
        }
        #endif
        return list
    }
}
