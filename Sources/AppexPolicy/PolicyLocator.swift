import Foundation

/// Finds the shipped `Policies/` directory.
///
/// Order: `$APPEX_POLICIES`; `../share/appex/Policies` beside the executable (an installed
/// layout); the source checkout this binary was built from (a development build).
public enum PolicyLocator {
    public static func shippedDirectory(executablePath: String = CommandLine.arguments.first ?? "") -> String? {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["APPEX_POLICIES"], !env.isEmpty { return env }
        let exe = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath()
        let installed = exe.deletingLastPathComponent().appendingPathComponent("../share/appex/Policies").standardizedFileURL.path
        if fm.fileExists(atPath: (installed as NSString).appendingPathComponent("defaults.yaml")) { return installed }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Policies").standardizedFileURL.path
        if fm.fileExists(atPath: (source as NSString).appendingPathComponent("defaults.yaml")) { return source }
        return nil
    }

    /// The shipped policies with `overlays` layered on top, compiled once and then taken from
    /// the cache while no file changes (PolicyCache). `appex policy check` parses everything
    /// every time instead (`PolicySet.load`).
    public static func load(overlays: [String] = []) throws -> PolicySet {
        guard let shipped = shippedDirectory() else {
            throw PolicyError(file: "Policies", message: "shipped policy directory not found; set APPEX_POLICIES")
        }
        return try PolicyCache.load(directories: [shipped] + overlays)
    }
}
