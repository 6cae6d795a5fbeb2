import AppexActivation
import AppexBundle
import AppexKillReason
import AppexPolicy
import AppexRegistry
import AppexWire
import Dispatch

// Administration: install, list, enable, disable, uninstall. The registry work (copying a
// bundle, SQLite) runs on a worker thread; the catalog the loop serves from is then rebuilt,
// and running instances of an extension that changed are retired first, so the next request
// launches what the registry now holds.

extension Supervisor {
    /// The checks an install adds to Apple's bundle rules: a policy must cover the extension
    /// point, and the activation rule must compile (what `appex validate` reports); app groups
    /// are judged with the configuration's grants.
    var installOptions: InstallOptions {
        let policies = self.policies
        var install = InstallOptions(extraExtensionPoints: Set(policies.byExtensionPoint.keys)) { bundle in
            var findings = Activation.rule(for: bundle).findings.filter { $0.severity == .error }
            if EffectivePolicy(bundle: bundle, in: policies) == nil {
                findings.append(
                    Finding(
                        .error, code: "install.policy", at: PlistKeyPath(["NSExtension", "NSExtensionPointIdentifier"]),
                        "no policy covers extension point \(bundle.info.extensionInfo?.pointIdentifier ?? "(none)")"))
            }
            return findings
        }
        install.appGroupGrants = appGroupGrants
        return install
    }

    /// Installs a containing app or a bare `.appex` (validated, then copied into the state
    /// directory). Installed extensions start disabled; a reinstalled one keeps its state.
    /// `requester`: the user who asked, whose permissions the source is read with (nil: ours).
    public func install(path: String, requester: FileIdentity? = nil) async throws -> InstallResult {
        var options = installOptions
        options.requester = requester
        let result = try await onWorker { [registry, options] in try registry.install(path: path, options: options) }
        let changed = result.extensions.map(\.bundleIdentifier) + result.removedExtensions
        for id in changed { await retire(id, reason: .updated, "a new version was installed") }
        await reload(changed)
        return result
    }

    public func list() async throws -> [InstalledExtension] {
        try await onWorker { [registry] in try registry.list() }
    }

    public func enable(_ identifier: String) async throws -> InstalledExtension {
        let grants = appGroupGrants
        let e = try await onWorker { [registry] in try registry.enable(identifier, appGroupGrants: grants) }
        await reload([identifier])
        return e
    }

    /// Disables an extension: requests are refused from now on, running instances terminate.
    public func disable(_ identifier: String) async throws -> InstalledExtension {
        let e = try await onWorker { [registry] in try registry.disable(identifier) }
        await reload([identifier])
        await retire(identifier, reason: .disabled, "the extension was disabled")
        return e
    }

    /// Uninstalls an extension (or every extension of a containing app): instances end first;
    /// the data container goes only with `removeData`.
    public func uninstall(_ identifier: String, removeData: Bool) async throws -> [String] {
        let targets = try await onWorker { [registry] in
            if let e = try? registry.extension(bundleIdentifier: identifier) { return [e.bundleIdentifier] }
            return try registry.apps().first { $0.bundleIdentifier == identifier }?.extensionIdentifiers ?? []
        }
        for id in targets { await retire(id, reason: .uninstalled, "the extension was uninstalled", withdraw: true) }
        do {
            let removed = try await onWorker { [registry] in try registry.uninstall(identifier, removeData: removeData) }
            await reload(targets + removed)
            return removed
        } catch {
            // Some errors come after the rows went (`RegistryError.dataLeftBehind`): the
            // catalog follows the registry either way.
            await reload(targets)
            throw error
        }
    }

    /// Rebuilds the catalog entries of `identifiers`, the only ones an admin change touched:
    /// loaded (plist, policy, activation rule) on a worker, swapped in on the loop. Reloading
    /// the whole catalog made each install cost O(installed) on the loop: with 1,000
    /// extensions, a quarter of a second in which no other extension was served.
    ///
    /// Reloads run one at a time, each reading the registry after its own change, and their
    /// swaps reach the loop in the same order: when two admins change one extension at once,
    /// the catalog ends as the registry does.
    func reload(_ identifiers: [String]) async {
        let policies = self.policies
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            catalogReloads.async { [self, registry] in
                let membership: AppGroupMembership
                do {
                    membership = try registry.appGroupMembership(grants: appGroupGrants)
                } catch {
                    // No owners known: only granted groups are mounted until the next reload.
                    logger.error("catalog: app group owners unreadable: \(error)")
                    membership = AppGroupMembership(grants: appGroupGrants)
                }
                // nil: uninstalled, or its copy no longer loads (logged); either way it leaves.
                let loaded = Set(identifiers).map { id -> (String, CatalogEntry?) in
                    do {
                        return (
                            id,
                            loadCatalogEntry(
                                try registry.extension(bundleIdentifier: id), policies: policies,
                                membership: membership)
                        )
                    } catch RegistryError.unknownExtension {
                        return (id, nil)
                    } catch {
                        logger.error("catalog: \(id) left out: \(error)")
                        return (id, nil)
                    }
                }
                loop.post { [self] in
                    for (id, entry) in loaded {
                        catalog[id] = entry
                        if let entry { prebuildSandbox(entry) }
                    }
                    c.resume()
                }
            }
        }
    }

    /// Ends `identifier`'s instances and queued requests. `withdraw`: it also leaves the
    /// catalog first, so that no request admitted meanwhile relaunches it (and recreates its
    /// container) while it is being uninstalled; the reload afterwards puts it back if the
    /// uninstall did not happen.
    private func retire(_ identifier: String, reason: KillReason, _ message: String, withdraw: Bool = false) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            loop.post { [self] in
                if withdraw { catalog[identifier] = nil }
                if let slot = slots[identifier] {
                    for ticket in slot.queue { ticket.fail(Reason(reason), "\(identifier): \(message)") }
                    slot.queue.removeAll()
                }
                retire(identifier, reason: reason, message) { c.resume() }
            }
        }
    }

    private func onWorker<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            workers.async { c.resume(with: Result { try body() }) }
        }
    }
}

/// The catalog reloads of every supervisor in the process, in order (see `reload`).
private let catalogReloads = DispatchQueue(label: "appex.catalog-reloads")
