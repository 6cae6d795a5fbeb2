import AppexCgroups
import AppexRun
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 33, items 1, 2 and 4 through the built `appex`: one exit-status table (in `--help`
/// and README.md), `appex run` passing the extension's status through as bwrap does, its
/// output on request, one name per flag, and bad input refused with a non-zero status.
struct ExitStatusCLITests {
    @Test func helpAndReadmeShowTheSameExitStatusTable() throws {
        let help = try AppexBinary.run(["--help"])
        #expect(help.status == 0)
        let readme = try String(contentsOfFile: AppexBinary.packageRoot + "/README.md", encoding: .utf8)
        // argument-parser wraps long lines: compare with the whitespace squeezed.
        let squeezedHelp = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for status in ExitStatus.allCases {
            #expect(squeezedHelp.contains("\(status.rawValue) \(status.meaning)"), "--help lacks \(status)")
            #expect(readme.contains("| \(status.rawValue) | \(status.meaning) |"), "README.md lacks \(status)")
        }
        #expect(squeezedHelp.contains("128+N appex run: the extension was killed by signal N"))
        #expect(readme.contains("| 128+N | appex run: the extension was killed by signal N"))
    }

    @Test func everySubcommandHasAOneLineAbstract() throws {
        let help = try AppexBinary.run(["--help"])
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("SUBCOMMANDS:") })
        let commands = lines[(start + 1)...].prefix { !$0.isEmpty }
        #expect(commands.count >= 20)
        for line in commands {
            // "  name   abstract": one line each, none wrapped onto a second.
            #expect(!line.hasPrefix("       "), "an abstract longer than one line: \(line)")
            let words = line.split(separator: " ", maxSplits: 1)
            #expect(words.count == 2, "no abstract: \(line)")
        }
        #expect(commands.contains { $0.contains("logs") })
    }

    @Test func policyDirIsTheOneNameAndPoliciesAHiddenAlias() throws {
        for command in [
            ["validate"], ["info"], ["run"], ["lint-binary"], ["test-policy"], ["policy", "show"],
            ["request"], ["profile"], ["report"],
        ] {
            let help = try AppexBinary.run(command + ["--help"])
            #expect(help.stdout.contains("--policy-dir"), "\(command) --help lacks --policy-dir")
            #expect(!help.stdout.contains("--policies"), "\(command) --help still shows --policies")
        }
        let appexd = try AppexBinary.run(["--help"], executable: BuiltProducts.path("appexd"))
        #expect(appexd.stdout.contains("--policy-dir") && !appexd.stdout.contains("--policies"), "\(appexd.stdout)")
        // The old name still works, and mixing both is refused (the overlays' order would be lost).
        let overlay = AppexBinary.packageRoot + "/Docs/examples/weakened-policy"
        let old = try AppexBinary.run(["policy", "show", "com.apple.share-services", "--policies", overlay])
        #expect(old.status == 0, "\(old.stderr)")
        let both = try AppexBinary.run(["policy", "show", "com.apple.share-services", "--policies", overlay, "--policy-dir", overlay])
        #expect(both.status == 64 && both.stderr.contains("--policies is the old name of --policy-dir"), "\(both.stderr)")
    }

    /// A file that is not there exits 66 (EX_NOINPUT) whichever command was given it, and
    /// creates nothing on the way.
    @Test func aMissingInputExits66Everywhere() throws {
        let nope = "/nonexistent/appex-\(getpid())"
        let state = NSTemporaryDirectory() + "appex-missing-state-\(getpid())"
        let lines: [[String]] = [
            ["validate", nope], ["info", nope], ["lint-binary", nope], ["run", nope],
            ["activation", "eval", "--plist", nope, "--items", nope], ["activation", "eval", "--rule", "TRUEPREDICATE", "--items", nope],
            ["extensions-for", nope, "--item", "public.jpeg"], ["test-policy", nope], ["policy", "check", nope],
            ["request", "x", "--file", nope], ["request", "--bundle", nope, "--state-dir", state],
            ["profile", nope, "--state-dir", state], ["report", "--state-dir", nope], ["kills", "--state-dir", nope],
            ["logs", "x", "--state-dir", nope],
        ]
        for line in lines {
            let r = try AppexBinary.run(line)
            #expect(r.status == 66, "\(line): \(r.status) \(r.stdout) \(r.stderr)")
            #expect((r.stdout + r.stderr).contains(nope), "\(line) does not name what is missing: \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: state), "a command created \(state)")
    }

    @Test func badInputIsRefusedWithAClearErrorAndStatus() throws {
        let bogus = try AppexBinary.run(["policy", "show", "com.bogus.point"])
        #expect(bogus.status == 66 && bogus.stderr.contains("no policy covers extension point com.bogus.point"), "\(bogus.stderr)")
        #expect(bogus.stdout.isEmpty, "the defaults were printed: \(bogus.stdout)")

        let zero = try AppexBinary.run(["kills", "--limit", "0", "--state-dir", "/nonexistent"])
        #expect(zero.status == 64 && zero.stderr.contains("--limit must be at least 1, not 0"), "\(zero.stderr)")

        let appexd = BuiltProducts.path("appexd")
        let loud = try AppexBinary.run(
            ["--log-level", "loud", "--state-dir", "/nonexistent/state", "--socket", "/nonexistent/s"],
            executable: appexd)
        #expect(
            loud.status == 64
                && loud.stderr.contains("--log-level must be one of trace, debug, info, notice, warning, error, critical, not \"loud\""),
            "\(loud.stderr)")

        let missing = try AppexBinary.run(["info", "/nonexistent/Nope.appex"])
        #expect(missing.status == 66, "\(missing.stderr)")
        let run = try AppexBinary.run(["run", "/nonexistent/Nope.appex"])
        #expect(run.status == 66 && run.stderr.contains("/nonexistent/Nope.appex: no such file or directory"), "\(run.stderr)")
    }
}

/// `appex run`'s status is the extension's, as bwrap's is its child's.
@Suite(.serialized, .requiresRoot("appex run needs root"))
struct RunExitStatusCLITests {
    func withState(_ body: (String) throws -> Void) throws {
        let state = try ScratchDirectory.make("cli-status")
        defer {
            try? ScratchDirectory.removeTree(state)
            try? CgroupManager.detect(parentName: "appex").removeParent()
        }
        try body(state)
    }

    func run(_ state: String, _ options: [String], _ args: [String]) throws -> AppexBinary.Result {
        try AppexBinary.run(
            ["run", "--state-dir", state] + options
                + ["--extension-point", "com.apple.share-services", RunCLITests.probe, "--"] + args)
    }

    @Test func theExtensionsExitStatusIsAppexs() throws {
        try withState { state in
            #expect(try run(state, [], ["pid"]).status == 0)
            // The probe exits 2 for a command it does not know.
            let bad = try run(state, [], ["no-such-action"])
            #expect(bad.status == 2, "\(bad.stdout)\(bad.stderr)")
            #expect(bad.stdout.contains("exited with status 2"), "\(bad.stdout)")
        }
    }

    @Test func aKilledExtensionIs128PlusItsSignal() throws {
        try withState { state in
            let killed = try run(state, ["--timeout", "0.3", "--json"], ["sleep", "30"])
            #expect(killed.status == 128 + SIGKILL, "\(killed.stderr)")
            let json = try #require(try killed.json() as? [String: Any])
            #expect(json["killReason"] as? String == "run-timeout")
        }
    }

    /// On a terminal (script(1) gives it one) the extension's output is shown without
    /// --stdio, as bwrap shows its child's; --no-stdio keeps it in the log only. Not on a
    /// terminal, the output stays in the log (theExtensionsExitStatusIsAppexs's stdout).
    @Test func onATerminalTheExtensionsOutputIsShownByDefault() throws {
        try withState { state in
            func onTerminal(_ options: [String]) throws -> AppexBinary.Result {
                let line =
                    ([AppexBinary.path, "run", "--state-dir", state] + options
                    + ["--extension-point", "com.apple.share-services", RunCLITests.probe, "--", "pid"])
                    .map { "'" + $0 + "'" }.joined(separator: " ")
                return try AppexBinary.run(["-qec", line, "/dev/null"], executable: "/usr/bin/script")
            }
            let shown = try onTerminal([])
            #expect(
                shown.status == 0 && shown.stdout.contains("ok pid=2") && shown.stdout.contains("exited with status 0"),
                "\(shown.stdout)\(shown.stderr)")
            let quiet = try onTerminal(["--no-stdio"])
            #expect(
                quiet.status == 0 && !quiet.stdout.contains("ok pid=2") && quiet.stdout.contains("exited with status 0"),
                "\(quiet.stdout)\(quiet.stderr)")
            let piped = try run(state, [], ["pid"])
            #expect(piped.status == 0 && !piped.stdout.contains("ok pid=2") && !piped.stderr.contains("ok pid=2"), "\(piped.stdout)")
        }
    }

    @Test func stdioShowsTheExtensionsOutputAndTheReportOnStderr() throws {
        try withState { state in
            let r = try run(state, ["--stdio"], ["pid"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout == "ok pid=2\n", "stdout is the extension's alone: \(r.stdout)")
            #expect(r.stderr.contains("exited with status 0"), "the report went to stderr: \(r.stderr)")
            let usage = try run(state, ["--stdio"], ["no-such-action"])
            #expect(usage.status == 2 && usage.stderr.contains("usage: appex-probe"), "\(usage.stderr)")
            // Also in its log, as without --stdio.
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: state + "/logs").first { $0.hasSuffix(".log") })
            let log = try String(contentsOfFile: state + "/logs/" + name, encoding: .utf8)
            #expect(log.contains("ok pid=2") && log.contains("usage: appex-probe"), "\(log)")
        }
    }
}
