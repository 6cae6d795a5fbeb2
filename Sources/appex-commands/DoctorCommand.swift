import AppexCommandSupport
import AppexSandbox
import AppexStateDirectory
import ArgumentParser
import Foundation

/// `appex doctor`: whether this machine can run Appex, one line per check with its fix.
/// Exit 0 when no check failed (warnings allowed), 1 otherwise. Docs/deployment.md, "appex doctor".
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check whether this machine can run Appex.",
        discussion:
            "Check whether this machine can run Appex: root, cgroups, seccomp, the uid range, appexd, policies, sandbox init, state directory.")

    @Option(help: "appexd's control socket (default $APPEX_SOCKET, else /run/appex/appexd.sock).")
    var socket: String?

    @Option(help: "The state directory appexd uses (default /var/lib/appex as root).")
    var stateDir: String?

    @Option(name: .customLong("uid-range"), help: "The extensions' uid range appexd uses, START-END.")
    var uidRange = "\(UIDAllocator.defaultRange.lowerBound)-\(UIDAllocator.defaultRange.upperBound)"

    @Flag(help: "JSON output: {ok, checks: [{name, status, detail, fix}]}.")
    var json = false

    func run() throws {
        guard let range = UIDRangeCheck.parse(uidRange) else {
            throw ValidationError("--uid-range must be START-END with 1000 <= START <= END, not \"\(uidRange)\"")
        }
        var checks = [DoctorSystemChecks.root()]
        checks += DoctorSystemChecks.cgroups()
        checks += DoctorSystemChecks.seccomp()
        checks += DoctorSystemChecks.uidRange(range)
        checks.append(DoctorInstallChecks.appexd(socket: socket))
        checks.append(DoctorInstallChecks.policies())
        checks.append(DoctorInstallChecks.sandboxInit())
        checks += DoctorInstallChecks.stateDirectory(stateDir)

        let passed = !checks.contains { $0.status == .failed }
        if json {
            try JSONOutput.print(["ok": passed, "checks": checks.map(\.json)] as [String: Any])
        } else {
            for check in checks { print(check.line) }
            let failed = checks.filter { $0.status == .failed }.count
            let warned = checks.filter { $0.status == .warning }.count
            print(passed ? "Appex can run here (\(warned) warnings)." : "\(failed) checks failed, \(warned) warnings.")
        }
        if !passed { throw ExitCode(1) }
    }
}
