import AppexTestSupport
import Foundation

/// A scratch directory removed when the test ends.
final class TemporaryDirectory {
    let scratch: ScratchDirectory
    var path: String { scratch.path }
    init() throws {
        scratch = try ScratchDirectory("bundle-test")
    }

    func write(_ relative: String, _ contents: String, mode: Int = 0o644) throws {
        try write(relative, Data(contents.utf8), mode: mode)
    }

    func write(_ relative: String, _ data: Data, mode: Int = 0o644) throws {
        let full = (path as NSString).appendingPathComponent(relative)
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: full)
    }

    func sub(_ relative: String) -> String { (path as NSString).appendingPathComponent(relative) }
}

/// A minimal Info.plist for synthetic bundles (a share extension activated by anything);
/// `extra` is raw XML inserted into the top dict.
func infoPlistXML(
    identifier: String? = "com.example.host.share", executable: String? = "share",
    point: String = "com.apple.share-services", extra: String = ""
) -> String {
    BareBundle.InfoPlist(
        identifier: identifier, executable: executable, point: point,
        activationRule: "<string>TRUEPREDICATE</string>", extra: extra
    ).xml
}
