import AppexPolicy
import Foundation
import SystemPackage

/// Finds the `appex-sandbox-init` executable (`ExtensionSandbox`'s pid 1).
///
/// Order: `$APPEX_SANDBOX_INIT`; beside the running executable (SwiftPM puts every product
/// of the package, test bundles included, in one directory); `../libexec/appex/` beside it
/// (an installed layout); the source checkout's `.build/{debug,release}` (a development
/// build used from another package, such as Benchmarks/).
public enum SandboxInitLocator {
    public static let name = "appex-sandbox-init"

    public static func path() throws -> String {
        // stat and access, not FileManager: its first use costs ~40 µs of every `appex run`.
        for candidate in candidates() where isExecutableFile(candidate) {
            return candidate
        }
        throw SandboxError("locate \(name)", errno: .noSuchFileOrDirectory,
                           message: "build it (swift build --product \(name)) or set APPEX_SANDBOX_INIT")
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }

    static func candidates() -> [String] {
        var list: [String] = []
        if let env = ProcessEnvironment.value("APPEX_SANDBOX_INIT"), !env.isEmpty { list.append(env) }
        // realpath and swift-system's lexical paths, not Foundation's URL: this runs on every
        // `appex run`, and URL's first use costs ~0.2 ms (AbsolutePath).
        if let exe = realpath("/proc/self/exe", nil) {
            let directory = FilePath(String(cString: exe)).removingLastComponent()
            free(exe)
            list.append(directory.appending(name).string)
            list.append(directory.appending("../libexec/appex/\(name)").lexicallyNormalized().string)
        }
        let source = FilePath(#filePath).removingLastComponent().appending("../../.build")
        for config in ["release", "debug"] {
            list.append(source.appending("\(config)/\(name)").lexicallyNormalized().string)
        }
        return list
    }
}
