import AppexTestSupport
import Foundation
import Testing

@testable import AppexPolicy
@testable import AppexPolicyCore

#if canImport(Glibc)
import Glibc
#endif

/// Finding the shipped policies: the installed layout beside the real executable (through a
/// link, as a command on `PATH` often is), else the source checkout.
@Suite struct PolicyLocatorTests {
    @Test func theInstalledLayoutIsFoundThroughALink() throws {
        let prefix = try ScratchDirectory("locator")
        let policies = prefix.path + "/share/appex/Policies"
        try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: policies + "/defaults.yaml", contents: Data())
        try FileManager.default.createDirectory(atPath: prefix.path + "/bin", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: prefix.path + "/bin/appex", contents: Data())
        #expect(symlink(prefix.path + "/bin/appex", prefix.path + "/appex-link") == 0)

        let real = try #require(PolicyLocator.resolved(policies))
        #expect(PolicyLocator.shippedDirectory(executablePath: prefix.path + "/bin/appex", environment: nil) == real)
        #expect(PolicyLocator.shippedDirectory(executablePath: prefix.path + "/appex-link", environment: nil) == real)
        // appexd in sbin, and the full tool one level deeper, in libexec/appex.
        for exe in ["sbin/appexd", "libexec/appex/appex-commands"] {
            try FileManager.default.createDirectory(
                atPath: prefix.path + "/" + PolicyLocator.directoryOf(exe),
                withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: prefix.path + "/" + exe, contents: Data())
            #expect(PolicyLocator.shippedDirectory(executablePath: prefix.path + "/" + exe, environment: nil) == real, "\(exe)")
        }
    }

    /// No installed layout: the checkout this test was built from (its Policies/defaults.yaml).
    @Test func withoutAnInstallTheCheckoutIsUsed() throws {
        let elsewhere = try ScratchDirectory("locator-bare")
        FileManager.default.createFile(atPath: elsewhere.path + "/appex", contents: Data())
        let found = try #require(PolicyLocator.shippedDirectory(executablePath: elsewhere.path + "/appex", environment: nil))
        #expect(found.hasSuffix("/Policies"))
        #expect(FileManager.default.fileExists(atPath: found + "/defaults.yaml"))
        #expect(!found.contains(".."))
    }

    @Test func directoryOfAPath() {
        #expect(PolicyLocator.directoryOf("/usr/bin/appex") == "/usr/bin")
        #expect(PolicyLocator.directoryOf("/appex") == "/")
        #expect(PolicyLocator.directoryOf("appex") == ".")
    }
}
