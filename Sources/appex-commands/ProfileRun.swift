import AppexCommandSupport
import AppexLaunchReport
import AppexRegistry
import AppexSupervisor
import AppexWire
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Launches an extension N times through a supervisor embedded in this process, as appexd
/// would launch it: under its effective policy, in its sandbox, with its launch deadline.
/// Cold (default): each launch serves one request, then its idle instance is ended, so the
/// next request launches again (into the extension's sandbox, which stays, as under appexd).
/// Warm: one launch, then N requests to that same instance.
struct ProfileRun {
    var target: String
    var extensionIdentifier: String?
    var count: Int
    var warm: Bool
    var texts: [String]
    var urls: [String]
    var files: [String]
    var stateDirectory: String
    var policies: [String]
    var uidRange: ClosedRange<UInt32>
    /// nil: `appex-profile-<pid>`, and the parents dead profiles left are swept.
    var cgroupParent: String?

    static let cgroupPrefix = "appex-profile"

    /// `progress(done, total)` after each launch or request, from the calling task.
    func run(progress: (Int, Int) -> Void) async throws -> ProfileSamples {
        // An identifier names something installed: with no registry there, nothing is, and
        // nothing (lock, registry, bundles) is made in the state directory to find that out.
        var isDirectory: ObjCBool = false
        let isBundle = FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) && isDirectory.boolValue
        if !isBundle && !FileManager.default.fileExists(atPath: stateDirectory + "/" + Registry.databaseName) {
            throw CommandFailure(
                .noInput,
                "appex profile: no bundle at \(target), and no extension \(extensionIdentifier ?? target) "
                    + "is installed in \(stateDirectory) (it holds no \(Registry.databaseName); --state-dir names another)")
        }
        let lock: StateDirectoryLock
        do {
            lock = try StateDirectoryLock(stateDirectory: stateDirectory)
        } catch {
            throw ValidationErrorText("\(error); stop appexd, or profile the bundle's path with --state-dir DIR")
        }
        defer { withExtendedLifetime(lock) {} }
        var logger = Logger(label: "appex.profile")
        // Failures are counted and shown with the results; log lines would tear the progress bar.
        logger.logLevel = ProcessInfo.processInfo.environment["APPEX_PROFILE_LOG"] == "debug" ? .debug : .critical
        let supervisor = try Supervisor(
            options: SupervisorOptions(
                stateDirectory: stateDirectory, policyOverlays: policies,
                cgroupParent: cgroupParent ?? CgroupParentName.embedded(Self.cgroupPrefix),
                uidRange: uidRange),
            logger: logger)
        _ = try StaleSweep.run(
            stateDirectory: stateDirectory, cgroups: supervisor.cgroupManager,
            uidRange: supervisor.options.uidRange, embeddedPrefix: cgroupParent == nil ? Self.cgroupPrefix : nil)
        supervisor.start()
        do {
            let identifier = try await resolve(supervisor)
            let samples = try await measure(supervisor, identifier: identifier, progress: progress)
            await supervisor.shutdown()
            return samples
        } catch {
            await supervisor.shutdown()
            throw error
        }
    }

    /// The extension to launch: from the bundle at `target` (installed into the state
    /// directory and enabled, like `appex request --bundle`), or the installed one named
    /// `target`.
    private func resolve(_ supervisor: Supervisor) async throws -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory), isDirectory.boolValue {
            let installed = try await supervisor.install(path: target).extensions
            let ids = installed.map(\.bundleIdentifier)
            guard let id = extensionIdentifier ?? (ids.count == 1 ? ids[0] : nil) else {
                throw ValidationErrorText("\(target) holds \(ids.count) extensions; name one with --extension: \(ids.joined(separator: ", "))")
            }
            guard ids.contains(id) else {
                throw ValidationErrorText("\(target) holds no extension \(id) (it holds \(ids.joined(separator: ", ")))")
            }
            _ = try await supervisor.enable(id)
            return id
        }
        let id = extensionIdentifier ?? target
        guard let installed = try await supervisor.list().first(where: { $0.bundleIdentifier == id }) else {
            throw CommandFailure(.noInput, "appex profile: no bundle at \(target), and no extension \(id) is installed in \(stateDirectory)")
        }
        guard installed.isEnabled else {
            throw ValidationErrorText("\(id) is disabled in \(stateDirectory); enable it first (appex enable \(id))")
        }
        return id
    }

    private func measure(
        _ supervisor: Supervisor, identifier: String,
        progress: (Int, Int) -> Void
    ) async throws -> ProfileSamples {
        guard let policy = await supervisor.effectivePolicy(of: identifier) else {
            throw ValidationErrorText("\(identifier) is installed but could not be loaded (see appex info)")
        }
        let installed = try await supervisor.list().first { $0.bundleIdentifier == identifier }
        var result = ProfileSamples(
            bundleIdentifier: identifier, version: installed?.version, warm: warm,
            requested: count, launchDeadline: policy.policy.launchDeadline)
        var requestID: UInt64 = 0

        if warm {
            // The launch every warm request reuses; it must work, or nothing can be measured.
            requestID += 1
            let (outcome, message) = try await request(supervisor, identifier, id: requestID)
            guard let outcome, outcome.phases.contains(where: { $0.name == "checkIn" }) else {
                throw ValidationErrorText("the first launch of \(identifier) failed: \(message)")
            }
        }
        for done in 1...count {
            requestID += 1
            let (outcome, message) = try await request(supervisor, identifier, id: requestID)
            record(outcome, message: message, into: &result)
            if !warm { await supervisor.endIdleInstances(of: identifier) }
            progress(done, count)
        }
        if warm { await supervisor.endIdleInstances(of: identifier) }
        return result
    }

    /// One request; nil outcome with the refusal's text when it never started. A refusal is
    /// the same for every launch (disabled, rule not met), so it ends the run.
    private func request(_ supervisor: Supervisor, _ identifier: String, id: UInt64) async throws -> (RequestOutcome?, String) {
        // Opened anew for each request: every launch reads its files from the start.
        let items = try RequestItems.make(
            texts: texts.isEmpty && urls.isEmpty && files.isEmpty ? ["appex profile"] : texts,
            urls: urls, files: files)
        let result = await supervisor.request(
            HostBeginRequest(requestID: id, bundleIdentifier: identifier, items: items.items),
            descriptors: items.descriptors)
        switch result {
        case .refused(let r):
            throw ValidationErrorText("\(identifier) refused the request: \(r.reason)" + (r.message.map { ": \($0)" } ?? ""))
        case .ended(let o, _, let returned):
            returned.forEach { _ = close($0) }
            return (o, o.error?.message ?? o.reason?.rawValue ?? "")
        }
    }

    /// Counts one outcome: its phases when its launch checked in (cold) or it reused the
    /// instance (warm), otherwise its reason as a failure.
    private func record(_ outcome: RequestOutcome?, message: String, into result: inout ProfileSamples) {
        guard let outcome else { return }
        let kind: String
        switch outcome.outcome {
        case .completed: kind = "completed"
        case .cancelled: kind = "cancelled"
        case .failed: kind = "failed"
        }
        result.outcomes[kind, default: 0] += 1
        var phases: [String: UInt64] = [:]
        for p in outcome.phases { phases[p.name] = p.microseconds }
        let counted = warm ? !outcome.cold : (outcome.cold && phases["checkIn"] != nil)
        if counted {
            result.samples.append(LaunchPhaseCatalog.withDerived(phases))
            return
        }
        let reason = outcome.reason?.rawValue ?? (warm && outcome.cold ? "relaunched" : kind)
        result.failures[reason, default: 0] += 1
        if result.failureMessages[reason] == nil { result.failureMessages[reason] = message }
    }
}
