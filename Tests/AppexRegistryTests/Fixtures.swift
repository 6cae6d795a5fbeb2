import AppexRegistry
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A scratch directory holding a state directory and synthetic sources, removed at the end.
final class Scratch {
    let directory: ScratchDirectory
    var path: String { directory.path }
    var state: String { path + "/state" }

    init() throws {
        directory = try ScratchDirectory("registry-test")
    }

    deinit {
        // A registry's SQLite connections close on GRDB's queues, and the last one can still
        // be writing its -wal or -shm while the tree goes: try again after it.
        for _ in 0..<5 {
            if (try? ScratchDirectory.removeTree(path)) != nil { return }
            usleep(20_000)
        }
    }

    func sub(_ relative: String) -> String { directory.sub(relative) }

    func write(_ relative: String, _ contents: String, mode: mode_t = 0o644) throws {
        try write(relative, Data(contents.utf8), mode: mode)
    }

    func write(_ relative: String, _ data: Data, mode: mode_t = 0o644) throws {
        let full = sub(relative)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
        #expect(chmod(full, mode) == 0)
    }

    func read(_ absolute: String) throws -> String {
        try String(contentsOfFile: absolute, encoding: .utf8)
    }

    /// A valid bare bundle at `relative`: Info.plist, a shell-script executable `run`, and
    /// `Resources/data.txt` holding `data`.
    @discardableResult
    func makeAppex(
        _ relative: String, identifier: String, data: String = "payload",
        point: String = "com.apple.share-services", name: String? = nil
    ) throws -> String {
        try write(relative + "/Info.plist", infoPlistXML(identifier: identifier, point: point, name: name))
        try write(relative + "/run", "#!/bin/sh\necho hello\n", mode: 0o755)
        try write(relative + "/Resources/data.txt", data)
        return sub(relative)
    }

    /// A containing app at `relative` with one plug-in per identifier, named after its last
    /// component (`com.example.host.share` → `PlugIns/share.appex`), and an app binary.
    @discardableResult
    func makeApp(_ relative: String, identifier: String, plugIns: [String], data: String = "payload") throws -> String {
        try write(relative + "/Info.plist", appInfoPlistXML(identifier: identifier))
        try write(relative + "/Host", "#!/bin/sh\n", mode: 0o755)
        for id in plugIns {
            let name = String(id.split(separator: ".").last!)
            try makeAppex(relative + "/PlugIns/\(name).appex", identifier: id, data: data)
        }
        return sub(relative)
    }

    func names(in absolute: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: absolute)) ?? []).sorted()
    }
}

func infoPlistXML(
    identifier: String, executable: String = "run", point: String = "com.apple.share-services",
    name: String? = nil
) -> String {
    BareBundle.InfoPlist(
        identifier: identifier, executable: executable, point: point, version: "7", shortVersion: "1.2",
        displayName: name, activationRule: "<string>TRUEPREDICATE</string>"
    ).xml
}

func appInfoPlistXML(identifier: String) -> String {
    BareBundle.InfoPlist(
        identifier: identifier, executable: "Host", point: nil, packageType: nil, version: "3",
        extra: "<key>CFBundleName</key><string>Host</string>"
    ).xml
}

/// The bundles an install refused, or nil (with a recorded issue) when it was not refused so.
func refusal(_ body: () throws -> Void) -> [BundleFindings]? {
    do {
        try body()
        Issue.record("expected the install to be refused")
    } catch RegistryError.invalidBundle(_, let bundles) {
        return bundles
    } catch {
        Issue.record("expected invalidBundle, got \(error)")
    }
    return nil
}

func fileStat(_ path: String) -> stat? {
    var st = stat()
    return lstat(path, &st) == 0 ? st : nil
}

/// True when the registry holds no copy and no staged leftovers: only `.lock` and `.staging`.
func bundlesAreEmpty(_ registry: Registry) -> Bool {
    let fm = FileManager.default
    let top = ((try? fm.contentsOfDirectory(atPath: registry.bundlesDirectory)) ?? []).filter { $0 != ".lock" }
    let staging = (try? fm.contentsOfDirectory(atPath: registry.bundlesDirectory + "/.staging")) ?? ["?"]
    return top == [".staging"] && staging.isEmpty
}
