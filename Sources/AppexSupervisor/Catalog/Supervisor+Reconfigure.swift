import AppexPolicy
import AppexRegistry

// A new configuration while extensions run (appexd's SIGHUP): new policies and app-group
// grants take effect at each extension's next launch. A running instance keeps the policy it
// was launched with. Its sandbox (namespaces and view) is shared by the extension's instances,
// so it is rebuilt only when none is left in it: at once for an extension with no instance,
// else at the first launch after the last one ended.

extension Supervisor {
    /// Swaps in `policies` and `appGroupGrants` and rebuilds every catalog entry with them.
    /// Returns the extensions whose sandbox specification changed.
    @discardableResult
    public func reconfigure(policies: PolicySet, appGroupGrants: AppGroupGrants) async -> [String] {
        live.withLock {
            $0.policies = policies
            $0.appGroupGrants = appGroupGrants
        }
        let before = await onLoop { s in s.catalog.mapValues(\.spec) }
        let installed = (try? await list().map(\.bundleIdentifier)) ?? []
        await reload(Array(Set(installed).union(before.keys)))
        return await onLoop { s in
            var changed: [String] = []
            for (id, spec) in before where s.catalog[id]?.spec != spec {
                changed.append(id)
                guard let slot = s.slots[id] else { continue }
                if slot.instances.isEmpty {
                    // No instance is in it and none is launching: launches are posted to the
                    // same queue after this close, so the next one builds afresh.
                    let holder = slot.sandbox
                    slot.launchQueue.async { holder.close() }
                    if let entry = s.catalog[id] { s.prebuildSandbox(entry) }
                } else {
                    slot.sandboxStale = true
                }
            }
            return changed.sorted()
        }
    }
}
