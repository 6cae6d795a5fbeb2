import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Root takes policies only from directories only root can change (issue 30, #9): a policy
/// tree, or an overlay, that another uid owns or that group and others may write is refused
/// by name, through `appex policy check` and `appex run --policy-dir`.
@Suite(.serialized) struct PolicyTrustCLITests {
    /// A copy of the shipped policies (root's, 0755/0644) in a private scratch directory.
    final class Scratch {
        let directory: ScratchDirectory
        var root: String { directory.path }
        var policies: String { root + "/policies" }

        init() throws {
            directory = try ScratchDirectory("policy-trust")
            chmod(directory.path, 0o755)
            try FileManager.default.copyItem(atPath: AppexBinary.packageRoot + "/Policies", toPath: policies)
        }

        func check() throws -> AppexBinary.Result {
            try AppexBinary.run(["policy", "check", policies])
        }
    }

    @Test(.requiresRoot("the refusal is root's"))
    func aPolicyTreeSomeoneElseCanChangeIsRefused() throws {
        let s = try Scratch()
        let fine = try s.check()
        #expect(fine.status == 0 && fine.stdout.contains(": ok:"), "\(fine.stdout) \(fine.stderr)")

        // Another uid owns the directory.
        #expect(chown(s.policies, 4242, 4242) == 0)
        let owned = try s.check()
        #expect(owned.status != 0)
        #expect(owned.stdout.contains("policy directory refused: \(s.policies) belongs to uid 4242, not root"), "\(owned.stdout)")
        #expect(chown(s.policies, 0, 0) == 0)

        // Everyone may write the directory.
        #expect(chmod(s.policies, 0o777) == 0)
        let open = try s.check()
        #expect(open.status != 0)
        #expect(open.stdout.contains("\(s.policies) is writable by group or others (mode 777)"), "\(open.stdout)")
        #expect(chmod(s.policies, 0o755) == 0)

        // One policy file, or a directory above, is writable by others.
        let file = s.policies + "/extension-points/share.yaml"
        #expect(chmod(file, 0o666) == 0)
        let writableFile = try s.check()
        #expect(writableFile.status != 0 && writableFile.stdout.contains("\(file) is writable by group or others"), "\(writableFile.stdout)")
        #expect(chmod(file, 0o644) == 0)
        #expect(chmod(s.root, 0o777) == 0)
        let writableParent = try s.check()
        #expect(writableParent.status != 0 && writableParent.stdout.contains("\(s.root) is writable by group or others"), "\(writableParent.stdout)")
        // A sticky one (such as /tmp) is fine: others cannot replace what root owns in it.
        #expect(chmod(s.root, 0o1777) == 0)
        #expect(try s.check().status == 0)
        #expect(chmod(s.root, 0o755) == 0)
        #expect(try s.check().status == 0, "and as root's again, it loads")
    }

    @Test(.requiresRoot("the refusal is root's"))
    func anOverlaySomeoneElseOwnsIsRefusedForARun() throws {
        let s = try Scratch()
        let overlay = s.root + "/overlay"
        try FileManager.default.createDirectory(atPath: overlay + "/extension-points", withIntermediateDirectories: true)
        #expect(chown(overlay, 4242, 4242) == 0)
        let r = try AppexBinary.run([
            "run", "--json", "--state-dir", s.root + "/state", "--policy-dir", overlay,
            "--extension-point", "com.apple.share-services", "/bin/true",
        ])
        #expect(r.status != 0)
        #expect(
            (r.stdout + r.stderr).contains("policy directory refused: \(overlay) belongs to uid 4242, not root"),
            "\(r.stdout) \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/state/logs"), "nothing ran")
    }
}
