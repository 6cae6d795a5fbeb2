import AppexPolicy

extension Supervisor {
    /// The effective policy `identifier` runs under, as the catalog holds it (nil: not
    /// installed, or its copy did not load). `appex profile` reads the launch deadline here, so
    /// it measures against exactly what the supervisor enforces.
    public func effectivePolicy(of identifier: String) async -> EffectivePolicy? {
        await onLoop { $0.catalog[identifier]?.policy }
    }
}
