import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Test bundles: `Name.appex/Info.plist` with an `NSExtension` dictionary, and the executable
/// it names, as the tests install into appexd, hand to `appex`, or load directly.
public enum BareBundle {
    /// An Info.plist, as XML. Values are written as given: `activationRule`, `attributes` and
    /// `extra` are XML (a `<string>` predicate or a `<dict>`; more keys), so a test can write
    /// what a hostile or sloppy author would. A nil key is left out; without `point` there is
    /// no `NSExtension` dictionary (a containing app's Info.plist).
    public struct InfoPlist: Sendable {
        public var identifier: String?
        public var executable: String?
        public var point: String?
        public var packageType: String?
        public var version: String?
        public var shortVersion: String?
        public var displayName: String?
        public var principalClass: String?
        /// The value of `NSExtensionActivationRule`, inside `NSExtensionAttributes`.
        public var activationRule: String?
        /// More keys inside `NSExtensionAttributes`, as XML.
        public var attributes: String
        /// More top-level keys, as XML.
        public var extra: String

        public init(
            identifier: String?, executable: String? = nil, point: String? = "com.apple.widgetkit-extension",
            packageType: String? = "XPC!", version: String? = "1", shortVersion: String? = nil,
            displayName: String? = nil, principalClass: String? = nil, activationRule: String? = nil,
            attributes: String = "", extra: String = ""
        ) {
            self.identifier = identifier
            self.executable = executable
            self.point = point
            self.packageType = packageType
            self.version = version
            self.shortVersion = shortVersion
            self.displayName = displayName
            self.principalClass = principalClass
            self.activationRule = activationRule
            self.attributes = attributes
            self.extra = extra
        }

        /// A containing app's: its identifier and nothing of an extension.
        public static func app(_ identifier: String, version: String? = nil, extra: String = "") -> InfoPlist {
            InfoPlist(identifier: identifier, point: nil, packageType: nil, version: version, extra: extra)
        }

        public var xml: String {
            func key(_ name: String, _ value: String?) -> String {
                value.map { "<key>\(name)</key><string>\($0)</string>" } ?? ""
            }
            var body =
                key("CFBundleIdentifier", identifier) + key("CFBundleExecutable", executable)
                + key("CFBundlePackageType", packageType) + key("CFBundleVersion", version)
                + key("CFBundleShortVersionString", shortVersion) + key("CFBundleDisplayName", displayName) + extra
            if let point {
                var attributesBody = activationRule.map { "<key>NSExtensionActivationRule</key>\($0)" } ?? ""
                attributesBody += attributes
                body +=
                    "<key>NSExtension</key><dict>" + key("NSExtensionPointIdentifier", point)
                    + key("NSExtensionPrincipalClass", principalClass)
                    + (attributesBody.isEmpty ? "" : "<key>NSExtensionAttributes</key><dict>\(attributesBody)</dict>")
                    + "</dict>"
            }
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0"><dict>\(body)</dict></plist>
                """
        }
    }

    /// Writes `info` as `directory/Info.plist`, making the directory (and its parents) first.
    /// Returns the directory.
    @discardableResult
    public static func writeInfoPlist(_ info: InfoPlist, in directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(info.xml.utf8).write(to: URL(fileURLWithPath: directory + "/Info.plist"))
        return directory
    }

    /// A bundle at `bundle` around a built executable: `info` as its Info.plist and `source`
    /// copied as `info.executable` (mode 0755, written by a child: ExecutableCopy). The bundle
    /// and its parent directory are 0755, so the uid an extension runs as can read it.
    public static func write(_ info: InfoPlist, at bundle: String, executableFrom source: String) throws {
        guard let name = info.executable else { throw POSIXError(.EINVAL, userInfo: [NSLocalizedDescriptionKey: "\(bundle): no CFBundleExecutable"]) }
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        chmod((bundle as NSString).deletingLastPathComponent, 0o755)
        chmod(bundle, 0o755)
        try ExecutableCopy.make(from: source, to: bundle + "/" + name)
        try writeInfoPlist(info, in: bundle)
    }

    /// The bare bundle most tests want: `NAME` from `source`, its identifier and extension point.
    public static func write(
        at bundle: String, executable name: String, from source: String, identifier: String,
        point: String = "com.apple.widgetkit-extension", version: String = "1"
    ) throws {
        try write(InfoPlist(identifier: identifier, executable: name, point: point, version: version), at: bundle, executableFrom: source)
    }
}
