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

/// A minimal Info.plist for synthetic bundles; `extra` is raw XML inserted into the top dict.
func infoPlistXML(identifier: String? = "com.example.host.share", executable: String? = "share",
                  point: String = "com.apple.share-services", extra: String = "",
                  rule: String = "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>") -> String {
    var body = ""
    if let identifier { body += "<key>CFBundleIdentifier</key><string>\(identifier)</string>" }
    if let executable { body += "<key>CFBundleExecutable</key><string>\(executable)</string>" }
    body += "<key>CFBundlePackageType</key><string>XPC!</string><key>CFBundleVersion</key><string>1</string>"
    body += extra
    body += "<key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>\(point)</string>"
    body += "<key>NSExtensionAttributes</key><dict>\(rule)</dict></dict>"
    return """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0"><dict>\(body)</dict></plist>
    """
}
