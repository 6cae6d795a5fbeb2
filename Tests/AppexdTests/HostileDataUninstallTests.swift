import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30, finding 7, through the real appexd and CLI: an extension fills its container with
/// a tree a recursive removal could not take (directories nested past 256, a non-UTF-8 name,
/// links out of it), and `appex uninstall --remove-data` must still remove all of it and the
/// extension, leaving nothing and following no link.
extension DaemonTests {
    @Test func uninstallRemovesAHostileTreeFromTheContainer() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            // A launch makes the container; then the tree is planted as the extension's uid.
            let r = try d.appex(["request", id, "--text", "make my container"])
            #expect(r.status == 0, "\(r.err)")
            let container = d.root + "/state/containers/" + id
            let uid = try #require(Self.assignedUID(of: id, stateDirectory: d.root + "/state"))
            let outside = d.root + "/outside"
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
            try Data("precious".utf8).write(to: URL(fileURLWithPath: outside + "/file"))
            try HostileTree.plant(
                in: container + "/Documents", depth: 300, linkTargets: [outside, outside + "/file"],
                owner: (uid, uid))

            let removed = try d.appex(["uninstall", id, "--remove-data"])
            #expect(removed.status == 0, "\(removed.out)\(removed.err)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: d.root + "/state/containers").isEmpty,
                "something of the container was left")
            #expect((try? String(contentsOfFile: outside + "/file", encoding: .utf8)) == "precious", "the removal followed a link")
            let list = try d.appex(["list", "--json"])
            #expect(list.status == 0 && !list.out.contains(id), "\(list.out)")
            // The catalog agrees: a request for it is refused as unknown.
            #expect(try d.appex(["request", id, "--text", "gone?"]).status != 0)
        }
    }

    /// The uid the state directory's table gave `identifier` (lines of `<id> <uid>`).
    static func assignedUID(of identifier: String, stateDirectory: String) -> UInt32? {
        guard let table = try? String(contentsOfFile: stateDirectory + "/uids", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first.map(String.init) == identifier, let uid = fields.last.flatMap({ UInt32($0) }) { return uid }
        }
        return nil
    }
}
