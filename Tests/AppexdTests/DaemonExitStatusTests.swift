import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonTests {
    /// appexd's own failures exit with the `appex` table's statuses (sysexits), so systemd's
    /// RestartPreventExitStatus=78 holds back a restart that cannot mend a mistake. In use
    /// (75) is SupervisorOwnershipTests'.
    @Suite struct DaemonExitStatusTests {
        @Test func aConfigurationMistakeIsEXConfigNamingFileAndLine() throws {
            try RequiresRoot.check("appexd needs root")
            let d = try Daemon(tag: "exit-status")
            defer { d.cleanUp() }
            try Data("hosts: [4242]\napps:\n  ../etc: [4242]\n".utf8).write(to: URL(fileURLWithPath: d.root + "/appexd.yaml"))
            let r = try SupervisorOwnershipTests.run(BuiltProducts.path("appexd"), d.arguments)
            #expect(r.status == 78, "EX_CONFIG, not \(r.status): \(r.stderr)")
            #expect(r.stderr.contains("appexd.yaml:3:") && r.stderr.contains("apps.../etc"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: d.socket), "nothing served")
        }

        @Test func aPolicyWithAMistakeIsEXConfig() throws {
            try RequiresRoot.check("appexd needs root")
            let d = try Daemon(tag: "exit-status")
            defer { d.cleanUp() }
            let policies = d.root + "/policies/extension-points"
            try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
            try Data("extensionPoints: [com.apple.share-services]\nidleTimeout: often\n".utf8)
                .write(to: URL(fileURLWithPath: policies + "/share.yaml"))
            let r = try SupervisorOwnershipTests.run(BuiltProducts.path("appexd"), d.arguments + ["--policy-dir", d.root + "/policies"])
            #expect(r.status == 78, "EX_CONFIG, not \(r.status): \(r.stderr)")
            #expect(r.stderr.contains("share.yaml:2:") && r.stderr.contains("idleTimeout"), "\(r.stderr)")
        }
    }
}
