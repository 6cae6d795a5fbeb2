import AppexCommandSupport
import AppexPolicy
import AppexPolicyTesting
import AppexRun
import AppexSandbox
import AppexStateDirectory
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `appex test-policy PATH...`: runs policy test files (Docs/policy-tests.md) under the real
/// sandbox and reports a line per case and `N passed, N failed`.
struct TestPolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-policy",
        abstract: "Run policy test files under the real sandbox.",
        discussion: """
            Each case runs appex-probe as an extension (the machinery of appex run: cgroup, uid, \
            rlimits, seccomp filter, view), or, for a launch deadline or memory warnings, the probe \
            extension through an embedded supervisor, and compares what happened with what the \
            case expects. Prints one line per case, then "N passed, N failed". Exit status: 0 all \
            passed, 1 a case failed, 65 a test file was refused, 66 a path is missing, 77 not root, \
            78 the policies do not load. Needs root. See Docs/policy-tests.md.
            """)

    @Argument(help: "Test files, or directories of them (their .yaml files).")
    var paths: [String]

    @Flag(help: "Print one JSON object (cases, passed, failed) instead of lines.")
    var json = false

    @Option(help: "Also write a JUnit XML report to this file.")
    var junit: String?

    @Option(help: "Cases run at once (default: the number of CPUs).")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup var policyOverlays: PolicyOverlayOptions

    @Option(name: .customLong("filter"), help: "Run only cases whose \"suite: name\" contains this (repeatable).")
    var filters: [String] = []

    @Option(name: .customLong("state-dir"), help: "State directory for the runs (default: a fresh one, removed afterwards).")
    var stateDir: String?

    @Option(name: .customLong("uid-range"), help: "Uids for the test extensions, START-END; checked against /etc/passwd and friends.")
    var uidRange = "260000-265535"

    @Option(help: "The appex-probe executable (default: beside appex, or $APPEX_PROBE).")
    var probe: String?

    @Option(name: .customLong("probe-extension"), help: "The appex-probe-extension executable (default: beside appex, or $APPEX_PROBE_EXTENSION).")
    var probeExtension: String?

    func run() throws {
        let catalog: PolicyTestCatalog
        do { catalog = try PolicyTestCatalog(overlays: policyOverlays.directories) } catch {
            Self.printError(error)
            throw ExitCode(ExitStatus.configuration.rawValue)
        }
        defer { catalog.removeScratch() }

        // Every file is read before anything runs, and every mistake in them is listed.
        var files: [PolicyTestFile] = []
        var refused = false
        do {
            let parser = PolicyTestParser(catalog: catalog)
            for path in try PolicyTestParser.files(in: paths) {
                do { files.append(try parser.parse(file: path)) } catch {
                    Self.printError(error)
                    refused = true
                }
            }
        } catch {
            // The paths themselves: a file or directory that is not there.
            Self.printError(error)
            throw ExitCode(ExitStatus.noInput.rawValue)
        }
        if refused { throw ExitCode(ExitStatus.dataError.rawValue) }

        let (planned, otherArchitecture) = try PolicyTestPlanner.plan(files, catalog: catalog, filters: filters)
        var notes: [String] = []
        if otherArchitecture > 0 { notes.append("\(otherArchitecture) cases for other architectures than \(PolicyTestPlanner.machine) left out") }
        guard !planned.isEmpty else {
            FileHandle.standardError.write(Data("appex test-policy: no cases to run\n".utf8))
            throw ExitCode(ExitStatus.noInput.rawValue)
        }
        guard geteuid() == 0 else {
            FileHandle.standardError.write(
                Data("appex test-policy: runs cases under the real sandbox (namespaces, cgroups, uids): needs root\n".utf8))
            throw ExitCode(ExitStatus.noPermission.rawValue)
        }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard let uids = UIDRangeCheck.parse(uidRange) else {
            throw ValidationError("--uid-range must be START-END with 1000 <= START <= END, not \"\(uidRange)\"")
        }
        try UIDRangeCheck.verify(uids)

        let usesSupervisor = planned.contains { $0.testCase.throughSupervisor }
        let variables = planned.reduce(into: Set<String>()) { $0.formUnion($1.testCase.variables) }
        let environment = try PolicyTestEnvironment(
            stateDirectory: stateDir, uidRange: uids,
            probe: try Self.locate("appex-probe", option: probe, environment: "APPEX_PROBE"),
            probeExtension: usesSupervisor
                ? try Self.locate("appex-probe-extension", option: probeExtension, environment: "APPEX_PROBE_EXTENSION") : "",
            setuidProbe: variables.contains("setuidProbe"), listener: variables.contains("hostLoopbackPort"))
        defer { environment.tearDown() }

        var bystander: PolicyTestBystander?
        if files.contains(where: \.bystander) {
            bystander = try PolicyTestBystander(environment: environment, policies: catalog.base)
        }
        let runner = PolicyTestRunner(environment: environment, catalog: catalog, bystander: bystander, jobs: jobs)
        // Ctrl-C or SIGTERM: finish the cases under way, then clean up and report as usual.
        let interrupts = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { runner.cancel() }
            source.resume()
            return source
        }
        defer { interrupts.forEach { $0.cancel() } }
        let json = self.json
        var results = runner.run(planned) { result in
            if !json { print(PolicyTestReport.line(result)) }
        }
        if results.count < planned.count {
            let result = PolicyTestResult(
                suite: "run", name: "interrupted", expected: "every case run",
                verdict: .fail("\(planned.count - results.count) of \(planned.count) cases not run", "interrupted"),
                milliseconds: 0)
            if !json { print(PolicyTestReport.line(result)) }
            results.append(result)
        }
        var checks = runner.bystanderChecks()
        bystander?.stop()
        checks.append(Self.hostCheck(environment))
        if !json { checks.forEach { print(PolicyTestReport.line($0)) } }
        results += checks

        if let junit {
            try PolicyTestReport.junit(results).write(toFile: junit, atomically: true, encoding: .utf8)
        }
        if json {
            try JSONOutput.print(PolicyTestReport.json(results, notes: notes))
        } else {
            notes.forEach { print("note: \($0)") }
            print(PolicyTestReport.summary(results))
        }
        if results.contains(where: { !$0.verdict.passed }) { throw ExitCode(1) }
    }

    /// Nothing of the run is left on the host: no cgroup, no mount, no process.
    static func hostCheck(_ environment: PolicyTestEnvironment) -> PolicyTestResult {
        let left = environment.hostLeftovers()
        let all = left.cgroups.map { "cgroup \($0)" } + left.mounts.map { "mount \($0)" } + left.processes
        return PolicyTestResult(
            suite: "host", name: "nothing left behind", expected: "no cgroups, mounts or processes left",
            verdict: all.isEmpty ? .pass("none left") : .fail(all.joined(separator: ", "), "the run left these on the host"),
            milliseconds: 0)
    }

    static func printError(_ error: Error) {
        let lines: [String]
        switch error {
        case let e as PolicyErrors: lines = e.errors.map(\.description)
        case let e as PolicyTestErrors: lines = e.errors.map(\.description)
        case let e as PolicyError: lines = [e.description]
        default: lines = ["\(error)"]
        }
        for line in lines { FileHandle.standardError.write(Data("error: \(line)\n".utf8)) }
    }

    /// An executable of this package: the option, the environment variable, beside this
    /// executable, or in `../libexec/appex/` beside it (an installed layout).
    static func locate(_ name: String, option: String?, environment: String) throws -> String {
        if let option {
            // Named by the operator: that file or nothing.
            guard FileManager.default.isExecutableFile(atPath: option) else { throw ValidationErrorText("\(option): not an executable file") }
            return URL(fileURLWithPath: option).standardizedFileURL.path
        }
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment[environment], !env.isEmpty { candidates.append(env) }
        let dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(dir.appendingPathComponent(name).path)
        candidates.append(dir.appendingPathComponent("../libexec/appex/\(name)").standardizedFileURL.path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return URL(fileURLWithPath: found).standardizedFileURL.path
        }
        throw ValidationErrorText("\(name) not found (build it: swift build --product \(name); or pass its path)")
    }
}
