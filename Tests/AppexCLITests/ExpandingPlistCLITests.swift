import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30, finding 3, the way it was found: `appex validate`, run as `nobody`, on a binary
/// Info.plist of some kilobytes whose shared string, copied at every reference, made 2 GiB.
/// The data-size limit the tool runs under keeps the test harmless should the bound fail: the
/// tool then dies of it instead of taking the machine's memory, and the test fails.
@Suite(.requiresRoot("setpriv needs root"))
struct ExpandingPlistCLITests {
    @Test func validateAsNobodyRefusesAnExpandingPlistNamingTheLimit() throws {
        let dir = try ScratchDirectory("expanding-plist")
        chmod(dir.path, 0o755)
        // 360 arrays of 360 references to one 16 KiB string: under the value limit, 2 GiB copied.
        let file = BinaryPlistBuilder.expandingInfoPlist(
            identifier: "com.example.expanding", executable: "expanding", extensionPoint: "com.apple.share-services",
            stringBytes: 16 << 10, fanOut: 360, levels: 2)
        #expect(file.count < 32 << 10)
        let path = dir.path + "/Info.plist"
        try Data(file).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)

        // The policies where nobody can read them: a checkout may sit in a directory only
        // root may search (a 0700 home or mktemp directory).
        let policies = dir.path + "/Policies"
        try FileManager.default.copyItem(atPath: AppexBinary.packageRoot + "/Policies", toPath: policies)

        let r = try AppexBinary.run(
            [
                "--data=\(512 << 20)", "--", "/usr/bin/env", "APPEX_POLICIES=\(policies)",
                "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                AppexBinary.commandsPath, "validate", path,
            ],
            executable: "/usr/bin/prlimit")
        let output = r.stdout + r.stderr
        #expect(r.status == 1, "status \(r.status): \(output)")
        #expect(output.contains("plist.malformed"), "\(output)")
        #expect(output.contains("expands past the limit of 8388608 bytes (PropertyListReader.maximumExpandedBytes)"), "\(output)")
    }
}
