import AppexPolicyCore
import AppexRun
import AppexSandbox

#if canImport(Glibc)
import Glibc
#endif

/// Finds `appex-commands`, the full tool, and execs it with this process's arguments.
///
/// Order: `$APPEX_COMMANDS`; beside this executable (SwiftPM's products directory); in
/// `../libexec/appex/` beside it (an installed layout, as for `appex-sandbox-init`).
enum CommandsTool {
    static let name = "appex-commands"

    static func candidates() -> [String] {
        var list: [String] = []
        if let env = ProcessEnvironment.value("APPEX_COMMANDS"), !env.isEmpty { list.append(env) }
        return list + SandboxInitLocator.installedCandidates(named: name)
    }

    /// Replaces this process with the full tool. The caches' key names the build by an
    /// executable's identity (`PrivateCacheFile.executableIdentity`); the full tool is told
    /// this one's, so the policies it compiles for a run are the ones this front then reads.
    static func handOver() -> Never {
        if let identity = PrivateCacheFile.executableIdentity() {
            setenv(PrivateCacheFile.identityVariable, identity, 1)
        }
        for path in candidates() where access(path, X_OK) == 0 {
            execv(path, CommandLine.unsafeArgv)
            StandardError.line("appex: cannot run \(path): \(String(cString: strerror(errno)))")
            exit(ExitStatus.cannotExecute.rawValue)
        }
        StandardError.line(
            "appex: \(name), the rest of the appex tool, is not beside this executable nor in "
                + "../libexec/appex/; build it (swift build --product \(name)) or set APPEX_COMMANDS")
        exit(ExitStatus.notFound.rawValue)
    }
}
