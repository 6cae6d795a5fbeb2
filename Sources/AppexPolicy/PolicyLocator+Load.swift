/// Loading the policies whether or not the cache holds them (YAML: AppexPolicy).
extension PolicyLocator {
    /// The shipped policies with `overlays` layered on top, compiled once and then taken from
    /// the cache while no file changes (PolicyCache). `appex policy check` parses everything
    /// every time instead (`PolicySet.load`). `only`: just what that extension point needs
    /// (`PolicySet.narrowed(to:)`), which is all `appex run` reads.
    public static func load(overlays: [String] = [], only extensionPoint: String? = nil) throws -> PolicySet {
        guard let shipped = shippedDirectory() else {
            throw PolicyError(file: "Policies", message: "shipped policy directory not found; set APPEX_POLICIES")
        }
        return try PolicyCache.load(directories: [shipped] + overlays, only: extensionPoint)
    }
}
