import Foundation

/// A containing app directory (`Host.app/`) whose `PlugIns/` holds `.appex` bundles.
public struct ContainingApp: Sendable {
    public var path: String
    public var info: InfoPlist
    public var bundleIdentifier: String? { info.bundleIdentifier }
    /// Each plug-in, loaded or with the error that stopped it: one bad bundle hides no other.
    public var plugIns: [(path: String, result: Result<ExtensionBundle, PropertyListFileError>)]

    public static func load(path: String, buildSettings: [String: String] = [:]) throws -> ContainingApp {
        let standardized = (path as NSString).standardizingPath
        let info = try InfoPlist.load(path: (standardized as NSString).appendingPathComponent("Info.plist"),
                                      buildSettings: buildSettings)
        let plugInsDir = (standardized as NSString).appendingPathComponent("PlugIns")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: plugInsDir)) ?? [])
            .filter { $0.hasSuffix(".appex") }.sorted()
        var plugIns: [(String, Result<ExtensionBundle, PropertyListFileError>)] = []
        for name in names {
            let bundlePath = (plugInsDir as NSString).appendingPathComponent(name)
            do {
                let bundle = try ExtensionBundle.load(path: bundlePath, buildSettings: buildSettings,
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
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("PlugIns"), isDirectory: &isDir) && isDir.boolValue
    }
}
