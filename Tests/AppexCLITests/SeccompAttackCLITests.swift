import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 10, items 1 and 7, attacked the way an extension would: the probe as a share
/// extension through the real `appex run`, as root, under the shipped policy. Each probe is
/// harmless if not stopped (a namespace its child leaves at once, invalid arguments).
@Suite(.serialized, .requiresRoot("appex run needs root"))
struct SeccompAttackCLITests {
    static let probe = RunCLITests.probe

    static let attacks: [([String], String)] = {
        var list: [([String], String)] = [
            (["clone-newuser"], "errno=EPERM"),
            (["clone3-newuser"], "errno=ENOSYS"),
            (["fork"], "ok"),
            (["thread"], "ok"),
            (["personality", "0xffffffff"], "ok"),
            (["personality", "0x8"], "ok"),
            (["personality", "0x6"], "errno=EPERM"),  // PER_BSD
            (["personality", "0x40000"], "errno=EPERM"),  // ADDR_NO_RANDOMIZE
            (["syscall-high"], "errno=ENOSYS"),
        ]
        #if arch(x86_64)
        list += [
            (["syscall", "154", "1", "0", "0"], "errno=EPERM"),  // modify_ldt
            (["syscall", "442", "-1", "0", "0", "0", "0"], "errno=EPERM"),  // mount_setattr
            (["syscall", "443", "-1", "0", "0", "0"], "errno=EPERM"),  // quotactl_fd
            (["syscall", "457", "0", "0", "0", "0"], "errno=EPERM"),  // statmount
            (["syscall", "458", "0", "0", "0", "0"], "errno=EPERM"),  // listmount
            (["syscall", "461", "0", "0", "0"], "errno=EPERM"),  // lsm_list_modules
            (["syscall", "467", "-1", "0", "0", "0", "0"], "errno=EPERM"),  // open_tree_attr
            (["syscall", "462", "1", "0", "0xff"], "errno=EINVAL"),  // mseal: allowed, the kernel answers
        ]
        #endif
        return list
    }()

    @Test(arguments: attacks)
    func attackThroughAppexRun(_ args: [String], expected: String) throws {
        let state = try ScratchDirectory.make("cli-seccomp")
        defer {
            try? ScratchDirectory.removeTree(state)
            try? CgroupManager.detect(parentName: "appex").removeParent()
        }
        let r = try AppexBinary.run(
            [
                "run", "--json", "--state-dir", state,
                "--extension-point", "com.apple.share-services", Self.probe, "--",
            ] + args)
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try r.json() as? [String: Any])
        #expect(json["exitStatus"] as? Int == 0)
        #expect(json["killReason"] is NSNull)
        let log = try String(contentsOfFile: json["logPath"] as? String ?? "", encoding: .utf8)
        #expect(log.split(separator: "\n").last.map(String.init) == expected, "\(args.joined(separator: " "))")
    }
}
