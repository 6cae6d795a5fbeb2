/// A containing app directory (`Host.app/`) whose `PlugIns/` holds `.appex` bundles.
public struct ContainingApp: Sendable {
    public var path: String
    public var info: InfoPlist
    public var bundleIdentifier: String? { info.bundleIdentifier }
    /// Each plug-in, loaded or with the error that stopped it: one bad bundle hides no other.
    public var plugIns: [(path: String, result: Result<ExtensionBundle, PropertyListFileError>)]

    public static func load(path: String, buildSettings: [String: String] = [:]) throws -> ContainingApp {
        let standardized = BundlePath.standardized(path)
        let info = try InfoPlist.load(
            path: BundlePath.join(standardized, "Info.plist"),
            buildSettings: buildSettings)
        let plugInsDir = BundlePath.join(standardized, "PlugIns")
        let names = BundlePath.entries(of: plugInsDir)
            .filter { $0.hasSuffix(".appex") }.sorted()
        var plugIns: [(String, Result<ExtensionBundle, PropertyListFileError>)] = []
        for name in names {
            let bundlePath = BundlePath.join(plugInsDir, name)
            do {
                let bundle = try ExtensionBundle.load(
                    path: bundlePath, buildSettings: buildSettings,
                    containingAppIdentifier: info.bundleIdentifier)
                plugIns.append((bundlePath, .success(bundle)))
            } catch let error as PropertyListFileError {
                plugIns.append((bundlePath, .failure(error)))
            }
        }
        return ContainingApp(path: standardized, info: info, plugIns: plugIns)
    }

    /// True when `path` looks like a containing app: it has a `PlugIns/` directory.
    public static func isContainingApp(_ path: String) -> Bool {
        BundlePath.isDirectory(BundlePath.join(path, "PlugIns"))
    }
}
