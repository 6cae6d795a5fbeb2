import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bare extension bundle around a built executable, as the tests install into appexd or
/// hand to `appex conformance`: `bundle/NAME` copied from `source` (mode 0755, written by a
/// child: ExecutableCopy), and an Info.plist naming it, its identifier and extension point.
/// The bundle and its parent directory are 0755, so the uid an extension runs as can read it.
public enum BareBundle {
    public static func write(at bundle: String, executable name: String, from source: String, identifier: String,
                             point: String = "com.apple.widgetkit-extension") throws {
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        chmod((bundle as NSString).deletingLastPathComponent, 0o755)
        chmod(bundle, 0o755)
        try ExecutableCopy.make(from: source, to: bundle + "/" + name)
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>\(identifier)</string>
            <key>CFBundleExecutable</key><string>\(name)</string>
            <key>CFBundlePackageType</key><string>XPC!</string>
            <key>CFBundleVersion</key><string>1</string>
            <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>\(point)</string></dict>
            </dict></plist>
            """
        try Data(plist.utf8).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
    }
}
