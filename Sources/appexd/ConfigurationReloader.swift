import AppexDaemon
import AppexPolicy
import AppexRegistry
import AppexSupervisor
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Who may host and administer, from the configuration in force: the control server asks on
/// every Hello, request and administration, so a reload applies to connections already open.
final class LiveAuthorization: PeerAuthorization {
    private let settings: Mutex<DaemonConfiguration>

    init(_ settings: DaemonConfiguration) { self.settings = Mutex(settings) }

    var current: DaemonConfiguration {
        get { settings.withLock { $0 } }
        set { settings.withLock { $0 = newValue } }
    }

    func mayHost(uid: UInt32) -> Bool { settings.withLock { $0.mayHost(uid: uid) } }
    func mayAdminister(uid: UInt32) -> Bool { settings.withLock { $0.mayAdminister(uid: uid) } }
    func maySpeak(forApp app: String, uid: UInt32) -> Bool { settings.withLock { $0.maySpeak(forApp: app, uid: uid) } }
}

/// SIGHUP (`systemctl reload appexd`): reads the configuration file and the policy directories
/// again and applies what a running appexd can change (Docs/supervisor.md, "Reloading").
/// Everything is read and checked before anything changes: a file or a policy with a mistake
/// is logged with its file and line, and the configuration in force stays, whole.
struct ConfigurationReloader: Sendable {
    let path: String
    let explicit: Bool
    /// Keys the command line set: its values stay, whatever the file says.
    let overridden: Set<String>
    let policyOverlays: [String]
    let authorization: LiveAuthorization
    let logLevel: ReloadableLogLevel
    /// The level when neither the command line nor the file names one.
    let defaultLogLevel: Logger.Level
    let supervisor: Supervisor
    let server: ControlServer
    let logger: Logger

    /// One reload between systemd's `RELOADING=1` (with the monotonic time it asks for) and
    /// `READY=1`, which ends `systemctl reload` whether the reload applied or not.
    func reloadNotifying() async {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        _ = try? SDNotify.notify("RELOADING=1\nMONOTONIC_USEC=\(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)")
        let status = await reload()
        _ = try? SDNotify.notify("READY=1\nSTATUS=\(status)")
    }

    /// One reload. Returns a line for systemd's STATUS.
    func reload() async -> String {
        let old = authorization.current
        let fresh: DaemonConfiguration, policies: PolicySet
        do {
            fresh = try DaemonConfiguration.load(path: path, explicit: explicit)
            policies = try PolicyLocator.load(overlays: policyOverlays)
        } catch {
            logger.error("reload failed, the configuration in force stays: \(error)")
            return "reload failed: \(error)"
        }
        let change = ConfigurationReload(from: old, to: fresh, overridden: overridden)
        for key in change.needsRestart {
            logger.warning("reload: \(key) changed in \(path); it needs a restart, the running value stays")
        }
        authorization.current = change.inForce
        if !overridden.contains("logLevel") {
            logLevel.current = change.inForce.logLevel.flatMap(Logger.Level.init(rawValue:)) ?? defaultLogLevel
        }
        await server.update(limits: change.inForce.clients)
        let changed = await supervisor.reconfigure(policies: policies, appGroupGrants: AppGroupGrants(change.inForce.appGroups))
        let applied = change.applied.isEmpty ? "no configuration key changed" : "applied \(change.applied.joined(separator: ", "))"
        let specs = changed.isEmpty ? "" : "; policy or app groups changed for \(changed.joined(separator: ", ")) (at their next launch)"
        let restart = change.needsRestart.isEmpty ? "" : "; needs a restart: \(change.needsRestart.joined(separator: ", "))"
        logger.notice("reloaded \(path): \(applied)\(specs)\(restart)")
        return "reloaded: \(applied)\(restart)"
    }
}
