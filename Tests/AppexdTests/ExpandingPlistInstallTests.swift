import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30, finding 3, through appexd: `appex install` of a bundle whose binary Info.plist
/// shares one string at every reference is refused with the limit named, and appexd goes on
/// serving. The file expands to tens of MiB unbounded: harmless should the bound fail.
extension DaemonTests {
    @Test func installOfAnExpandingInfoPlistIsRefusedNamingTheLimit() async throws {
        try await withDaemon { d in
            let bundle = try d.writeProbeBundle()
            let plist = BinaryPlistBuilder.expandingInfoPlist(
                identifier: "dev.appex.tests.daemon.probe", executable: "probe", extensionPoint: "com.apple.widgetkit-extension",
                stringBytes: 16 << 10, fanOut: 64, levels: 2)
            try Data(plist).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))

            let r = try d.appex(["install", bundle])
            #expect(r.status != 0, "\(r.out)")
            #expect(
                (r.out + r.err).contains("expands past the limit of 8388608 bytes (PropertyListReader.maximumExpandedBytes)"),
                "\(r.out)\(r.err)")
            let list = try d.appex(["list", "--json"])
            #expect(list.status == 0 && !list.out.contains("dev.appex.tests.daemon.probe"), "\(list.out)")
        }
    }
}
