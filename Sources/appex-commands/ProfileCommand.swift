import AppexCommandSupport
import AppexLaunchReport
import AppexSandbox
import AppexStateDirectory
import AppexSupervisor
import ArgumentParser
import Foundation

/// `appex profile`: launch an extension N times under its policy and show where launch time
/// goes, per phase, against its launch deadline (Docs/profiling.md).
struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Launch an extension N times: phase percentiles.",
        discussion: """
            Launch an extension N times and show p50/p90/p99/max per launch phase against its deadline. \
            Through a supervisor embedded here, as appexd would launch it: its effective policy, \
            its sandbox, its launch deadline. BUNDLE (a .appex or a containing app) is installed \
            into the state directory and enabled, as with `appex request --bundle`; EXTENSION \
            names one already installed and enabled there. appexd must not be using the state \
            directory. Cold launches by default (each idle instance is ended before the next \
            request); --warm launches once and sends N requests to that instance. Every launch \
            is also recorded in the state directory's history (`appex report`).
            """)

    @Argument(help: "A bundle path (.appex or containing app), or an installed extension's bundle identifier.")
    var target: String
    @Option(name: .short, parsing: .unconditional, help: "How many launches (or, with --warm, requests).")
    var n: Int = 20
    @Flag(help: "Launch once and measure N requests to the same instance.")
    var warm = false
    @Option(name: .customLong("extension"), help: "Which extension of a containing app to profile.")
    var extensionIdentifier: String?
    @Flag(help: "One JSON object: launches, deadlineMicros, phases (name → p50, p90, p99, max in µs), …")
    var json = false
    @Option(help: "Also write a self-contained HTML page with a distribution plot per phase.")
    var html: String?
    @Option(help: "An earlier run's --json output: each phase's p50 and p99 then and now, side by side.")
    var baseline: String?
    @Option(name: .customLong("text"), help: "Text for the request's item (repeatable; default \"appex profile\").")
    var texts: [String] = []
    @Option(name: .customLong("url"), help: "A URL attachment (repeatable).")
    var urls: [String] = []
    @Option(name: .customLong("file"), help: "A file attachment, opened anew for each request (repeatable).")
    var files: [String] = []
    @Option(help: "State directory (default /var/lib/appex as root, $XDG_STATE_HOME/appex otherwise).")
    var stateDir: String?
    @OptionGroup var policyOverlays: PolicyOverlayOptions
    @Option(
        name: .customLong("uid-range"),
        help: "Uids for the extension, START-END (default 200000-265535); give one of its own when appexd runs on another state directory.")
    var uidRange: String?
    @Option(name: .customLong("cgroup-parent"), help: "The cgroup parent the launches run under (default appex-profile-<pid>, removed at the end).")
    var cgroupParent: String?

    func validate() throws {
        guard n >= 1, n <= 100_000 else { throw ValidationError("-n must be 1…100000, not \(n)") }
    }

    func run() async throws {
        // Read first: a bad baseline is refused before anything is launched.
        let before: ProfileBaseline?
        do {
            before = try baseline.map(ProfileBaseline.load)
        } catch {
            FileHandle.standardError.write(Data("appex profile: \(error)\n".utf8))
            throw ExitCode(65)
        }
        var uids = UIDAllocator.defaultRange
        if let uidRange {
            guard let parsed = UIDRangeCheck.parse(uidRange) else {
                throw ValidationError("--uid-range must be START-END with 1000 <= START <= END, not \"\(uidRange)\"")
            }
            try UIDRangeCheck.verify(parsed)
            uids = parsed
        }
        let profile = ProfileRun(
            target: target, extensionIdentifier: extensionIdentifier, count: n, warm: warm,
            texts: texts, urls: urls, files: files,
            stateDirectory: stateDir ?? SupervisorOptions.defaultStateDirectory,
            policies: policyOverlays.directories, uidRange: uids, cgroupParent: cgroupParent)
        let progress = ProfileProgress(title: warm ? "requests" : "launches", total: n)
        let samples: ProfileSamples
        do {
            samples = try await profile.run { done, _ in progress.update(done: done) }
            progress.finish()
        } catch let failure as CommandFailure {
            progress.finish()
            throw failure
        } catch {
            progress.finish()
            throw CommandFailure(ErrorExitStatus.of(error) ?? .no, "appex profile: \(error)")
        }
        let output = ProfileOutput(run: samples, baseline: before)
        if let html {
            do { try output.html().write(to: html) } catch {
                throw CommandFailure(.cannotCreate, "appex profile: cannot write \(html): \(error)")
            }
        }
        if json {
            try JSONOutput.print(output.json)
        } else {
            print(output.human)
            if let html { print("Page: \(html)") }
        }
        if samples.samples.isEmpty { throw ExitCode(1) }
    }
}
