import AppexCommandSupport
import AppexHostClient
import AppexPolicy
import AppexSandbox
import AppexStateDirectory
import AppexSupervisor
import AppexWire
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `appex request`: one request to an extension, through a running appexd, or with
/// `--bundle` through a supervisor embedded in this process (no daemon needed).
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send a request to an extension; show the result.",
        discussion: """
            Through appexd (its socket from --socket, $APPEX_SOCKET or /run/appex/appexd.sock), \
            or with --bundle PATH through a supervisor embedded here: the bundle is installed \
            (validated and copied) into the state directory, enabled, and launched under full \
            governance. Files are opened here and passed to the extension as descriptors.
            Exit status: 0 completed; 1 cancelled, failed, or refused (66 when no such extension \
            is installed, 77 when not permitted, 75 when appexd is busy); 69 when no appexd answers.
            """)

    @Argument(help: "The extension's bundle identifier (optional with --bundle).")
    var bundleIdentifier: String?

    @Option(name: .customLong("text"), help: "Text for the item's content (repeatable).")
    var texts: [String] = []
    @Option(name: .customLong("url"), help: "A URL attachment (repeatable).")
    var urls: [String] = []
    @Option(name: .customLong("file"), help: "A file attachment, passed as a descriptor (repeatable).")
    var files: [String] = []
    @Option(name: .customLong("user-info"), help: "KEY=VALUE in the item's userInfo, as a string (repeatable).")
    var userInfo: [String] = []
    @Flag(help: "One JSON object: outcome, items, error, reason, cold, phases (µs).")
    var json = false
    @Option(help: "appexd's control socket.")
    var socket: String?
    @Option(help: "Serve the request through an embedded supervisor from this bundle (.appex or containing app).")
    var bundle: String?
    @Option(help: "State directory for --bundle (default /var/lib/appex as root, $XDG_STATE_HOME/appex otherwise).")
    var stateDir: String?
    @OptionGroup var policyOverlays: PolicyOverlayOptions
    @Option(
        name: .customLong("uid-range"),
        help:
            "Uids for the extension with --bundle, START-END (default 200000-265535); give one of its own when appexd runs on another state directory."
    )
    var uidRange: String?
    @Option(
        help:
            "The extension's jetsam band while it serves this request, by name (idle, background, ui-support, foreground-support, foreground, …) or number; never above its policy's."
    )
    var band: String?

    func validate() throws {
        if bundle == nil && bundleIdentifier == nil {
            throw ValidationError("name the extension's bundle identifier, or give --bundle PATH")
        }
        if let uidRange, UIDRangeCheck.parse(uidRange) == nil {
            throw ValidationError("--uid-range must be START-END with 1000 <= START <= END, not \"\(uidRange)\"")
        }
        do { _ = try RequestItems.userInfo(userInfo) } catch let e as ValidationErrorText { throw ValidationError(e.description) }
        if let band, Self.bandValue(band) == nil {
            throw ValidationError("--band: unknown jetsam band \"\(band)\"; one of \(JetsamBand.named.map(\.0).joined(separator: ", "))")
        }
    }

    static func bandValue(_ text: String) -> UInt32? {
        if let b = JetsamBand(name: text) { return UInt32(b.value) }
        if let n = Int(text), let b = JetsamBand(value: n) { return UInt32(b.value) }
        return nil
    }

    func run() async throws {
        let request = try RequestItems.make(texts: texts, urls: urls, files: files, userInfo: RequestItems.userInfo(userInfo))
        defer { request.descriptors.forEach { _ = close($0) } }
        let output: RequestOutput
        // Before the embedded supervisor makes anything in the state directory.
        if let bundle, !FileManager.default.fileExists(atPath: bundle) {
            throw CommandFailure(.noInput, "appex request: --bundle \(bundle): no such file or directory")
        }
        if let bundle {
            output = try await Self.embedded(
                bundle: bundle, identifier: bundleIdentifier, request: request,
                stateDirectory: stateDir ?? SupervisorOptions.defaultStateDirectory,
                policies: policyOverlays.directories, band: band.flatMap(Self.bandValue),
                uidRange: try uidRange.flatMap(UIDRangeCheck.parse).map {
                    try UIDRangeCheck.verify($0)
                    return $0
                })
        } else {
            output = try await Self.throughDaemon(
                identifier: bundleIdentifier!, request: request, socket: socket,
                band: band.flatMap(Self.bandValue))
        }
        if json {
            try JSONOutput.print(output.json)
        } else {
            print(output.human)
        }
        if !output.succeeded { throw ExitCode(output.exitStatus.rawValue) }
    }

    static func throughDaemon(identifier: String, request: RequestItems, socket: String?, band: UInt32?) async throws -> RequestOutput {
        let client = try HostClient.connect(socketPath: socket, identifier: "appex-cli")
        defer { client.close() }
        do {
            let received = try await client.beginRequest(
                bundleIdentifier: identifier, items: request.items,
                descriptors: request.descriptors, band: band)
            received.closeDescriptors()
            return RequestOutput(received.message)
        } catch let e as HostClientError where e.kind == .refused {
            return RequestOutput(
                refusal: Refusal(
                    reason: e.reason ?? Reason("refused"), message: e.refusalText,
                    details: e.details))
        }
    }

    /// Each embedded run's cgroup parent is `appex-request-<pid>`: runs side by side never
    /// sweep each other's extensions.
    static let cgroupPrefix = "appex-request"

    static func embedded(
        bundle: String, identifier: String?, request: RequestItems, stateDirectory: String,
        policies: [String], band: UInt32?, uidRange: ClosedRange<UInt32>?
    ) async throws -> RequestOutput {
        let lock = try StateDirectoryLock(stateDirectory: stateDirectory)
        defer { withExtendedLifetime(lock) {} }
        let supervisor = try Supervisor(
            options: SupervisorOptions(
                stateDirectory: stateDirectory, policyOverlays: policies,
                cgroupParent: CgroupParentName.embedded(Self.cgroupPrefix),
                uidRange: uidRange ?? UIDAllocator.defaultRange))
        _ = try StaleSweep.run(
            stateDirectory: stateDirectory, cgroups: supervisor.cgroupManager,
            uidRange: supervisor.options.uidRange, embeddedPrefix: Self.cgroupPrefix)
        supervisor.start()
        do {
            let installed = try await supervisor.install(path: bundle).extensions
            guard let target = identifier ?? (installed.count == 1 ? installed[0].bundleIdentifier : nil) else {
                await supervisor.shutdown()
                throw ValidationErrorText(
                    "\(bundle) holds \(installed.count) extensions; name one: \(installed.map(\.bundleIdentifier).joined(separator: ", "))")
            }
            _ = try await supervisor.enable(target)
            // The supervisor owns what it is given: hand it duplicates.
            let fds = request.descriptors.map { fcntl($0, F_DUPFD_CLOEXEC, 3) }
            let result = await supervisor.request(
                HostBeginRequest(requestID: 1, bundleIdentifier: target, items: request.items, band: band),
                descriptors: fds)
            await supervisor.shutdown()
            switch result {
            case .refused(let r): return RequestOutput(refusal: r)
            case .ended(let o, _, let returned):
                returned.forEach { _ = close($0) }
                return RequestOutput(o)
            }
        } catch {
            await supervisor.shutdown()
            throw error
        }
    }
}
