import AppexBundle
import AppexCommandSupport
import AppexRun
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `appex conformance BUNDLE`: plays appexd against an extension's executable and reports,
/// check by check, whether it implements the extension side of Docs/protocol.md
/// (Docs/libappex.md, "Conformance").
struct ConformanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Play appexd against an extension: protocol checks.",
        discussion: """
            Each check starts the bundle's executable afresh with its socket at fd 3, as appexd \
            does, and plays appexd: check-in, requests, descriptors, pings, malformed frames, \
            a request id out of order, another protocol version, a refused check-in, Terminate \
            and end of stream. The executable runs without the sandbox: as root it runs under \
            --uid (nobody by default). With --host -- COMMAND, a one-request host command is \
            checked instead, against a socket named by APPEX_SOCKET. Exit status 0 when every \
            check passes, 1 otherwise.
            """
    )

    @Argument(help: "A Name.appex bundle (not with --host).")
    var bundle: String?

    @Flag(help: "Check a host command instead, given after --: it must send one request and exit 0 when it completes.")
    var host = false

    @Argument(parsing: .postTerminator, help: "With --host: the host command and its arguments (APPEX_SOCKET is set for it).")
    var command: [String] = []

    @Option(help: "The uid (and gid) the executable runs as when this runs as root; 0 keeps root.")
    var uid: UInt32 = 65534

    @Option(name: .customLong("check"), help: "Run only this check (repeatable); see --list.")
    var checks: [String] = []

    @Flag(help: "List the checks and what each asks.")
    var list = false

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        if list {
            for check in ConformanceChecks.all { print("\(check.name)\t\(check.summary)") }
            for check in ConformanceHostChecks.all { print("\(check.name)\t\(check.summary) (--host)") }
            return
        }
        if host {
            guard bundle == nil, !command.isEmpty else { throw CommandFailure(.usage, "appex conformance: --host -- COMMAND [ARGS...], no bundle") }
            let selected = ConformanceHostChecks.all.filter { checks.isEmpty || checks.contains($0.name) }
            try report(
                subject: command.joined(separator: " "),
                selected.map { check in
                    (check.name, check.summary, { [command] in try check.run(command) })
                })
            return
        }
        guard let bundle else { throw CommandFailure(.usage, "appex conformance: a bundle, or --host -- COMMAND") }
        let loaded: ExtensionBundle
        do {
            loaded = try ExtensionBundle.load(path: bundle)
        } catch {
            throw CommandFailure(.noInput, "appex conformance: \(bundle): \(error)")
        }
        guard let identifier = loaded.info.bundleIdentifier, let executable = loaded.executablePath else {
            throw CommandFailure(.dataError, "appex conformance: \(bundle) names no CFBundleIdentifier or no executable")
        }
        let unknown = checks.filter { name in !ConformanceChecks.all.contains { $0.name == name } }
        guard unknown.isEmpty else { throw CommandFailure(.usage, "appex conformance: no check named \(unknown.joined(separator: ", ")) (--list)") }
        let selected = ConformanceChecks.all.filter { checks.isEmpty || checks.contains($0.name) }
        let target = ConformanceTarget(
            executable: executable, bundleIdentifier: identifier, bundlePath: loaded.path,
            uid: geteuid() == 0 && uid != 0 ? uid : nil)
        try report(subject: identifier, selected.map { check in (check.name, check.summary, { try check.run(target) }) })
    }

    /// Runs the checks and prints one line each (or JSON); fails when any failed.
    private func report(subject: String, _ checks: [(name: String, summary: String, run: () throws -> Void)]) throws {
        var results: [[String: Any]] = []
        for check in checks {
            var result: [String: Any] = ["check": check.name, "summary": check.summary]
            do {
                try check.run()
                result["passed"] = true
            } catch {
                result["passed"] = false
                result["why"] = "\(error)"
            }
            results.append(result)
            if !json {
                let passed = result["passed"] as? Bool == true
                print("\(passed ? "pass" : "FAIL")  \(check.name)\(passed ? "" : ": \(result["why"] ?? "")")")
            }
        }
        let failed = results.filter { $0["passed"] as? Bool != true }.count
        if json {
            try JSONOutput.print(["subject": subject, "checks": results, "passed": results.count - failed, "failed": failed])
        } else {
            print("\(subject): \(results.count - failed) of \(results.count) checks passed")
        }
        if failed > 0 { throw CommandFailure(.no, lines: []) }
    }
}
