import AppexBundle
import Foundation

/// What a PATH argument names: a bundle, a containing app, a bare Info.plist or an
/// entitlements file. Loading fails only when a plist cannot be read or parsed.
enum InputTarget {
    case bundle(ExtensionBundle)
    case containingApp(ContainingApp)
    case infoPlist(path: String, InfoPlist)
    case entitlements(path: String, Entitlements)

    static func load(_ path: String, buildSettings: [String: String]) throws -> InputTarget {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw PropertyListFileError.unreadable(path: path, reason: "no such file or directory")
        }
        if isDir.boolValue {
            if ContainingApp.isContainingApp(path) {
                return .containingApp(try ContainingApp.load(path: path, buildSettings: buildSettings))
            }
            return .bundle(try ExtensionBundle.load(path: path, buildSettings: buildSettings))
        }
        if path.hasSuffix(".entitlements") {
            return .entitlements(path: path, try Entitlements.load(path: path, buildSettings: buildSettings))
        }
        return .infoPlist(path: path, try InfoPlist.load(path: path, buildSettings: buildSettings))
    }

    var kind: String {
        switch self {
        case .bundle: "bundle"
        case .containingApp: "containing-app"
        case .infoPlist: "info-plist"
        case .entitlements: "entitlements"
        }
    }
}
