import Foundation

/// Finds the `appex-sandbox-init` executable (`ExtensionSandbox`'s pid 1).
///
/// Order: `$APPEX_SANDBOX_INIT`; beside the running executable (SwiftPM puts every product
/// of the package, test bundles included, in one directory); `../libexec/appex/` beside it
/// (an installed layout); the source checkout's `.build/{debug,release}` (a development
/// build used from another package, such as Benchmarks/).
public enum SandboxInitLocator {
    public static let name = "appex-sandbox-init"

    public static func path() throws -> String {
        for candidate in candidates() where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw SandboxError("locate \(name)", errno: .noSuchFileOrDirectory,
                           message: "build it (swift build --product \(name)) or set APPEX_SANDBOX_INIT")
    }

    static func candidates() -> [String] {
        var list: [String] = []
        if let env = ProcessInfo.processInfo.environment["APPEX_SANDBOX_INIT"], !env.isEmpty { list.append(env) }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        list.append(exe.appendingPathComponent(name).path)
        list.append(exe.appendingPathComponent("../libexec/appex/\(name)").standardizedFileURL.path)
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build")
        for config in ["release", "debug"] {
            list.append(source.appendingPathComponent("\(config)/\(name)").standardizedFileURL.path)
        }
        return list
    }
}
