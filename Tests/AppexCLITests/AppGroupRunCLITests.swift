import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension ProbeCLITests {
    /// Issue 30, finding 5, for one-off runs: `appex run` has no install to bind an app group
    /// to, and a bundle names its groups and its containing app itself, so it mounts none. A
    /// bundle declaring a victim's group, bare or inside an app claiming the victim's
    /// identifier, sees no group directory even where the state root holds the victim's.
    @Test func aOneOffRunMountsNoAppGroup() throws {
        let state = try makeStateDirectory()
        defer { cleanUp(state) }
        let group = "group.shared.x"
        try FileManager.default.createDirectory(atPath: state + "/groups/" + group, withIntermediateDirectories: true)
        try Data("the victim's file".utf8).write(to: URL(fileURLWithPath: state + "/groups/\(group)/secret"))
        let app = state + "/src/Victim.app"
        try FileManager.default.createDirectory(atPath: app + "/PlugIns", withIntermediateDirectories: true)
        try BareBundle.writeInfoPlist(.app("dev.appex.tests.victim"), in: app)

        for dir in [state + "/src", app + "/PlugIns"] {
            let bundle = try RunCLITests().makeBundle(in: dir, identifier: "dev.appex.tests.victim.hostile")
            try FileManager.default.copyItem(atPath: Self.probe, toPath: bundle + "/probe")
            try Data(
                """
                <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
                <key>com.apple.security.application-groups</key><array><string>\(group)</string></array></dict></plist>
                """.utf8
            ).write(to: URL(fileURLWithPath: bundle + "/Entitlements.plist"))
            for path in ["/var/appex/groups/\(group)/secret", "/var/appex/groups"] {
                #expect(try run(bundle, ["exists", path], state: state, extensionPoint: nil).line == "errno=ENOENT", "\(bundle): \(path)")
            }
        }
    }
}
