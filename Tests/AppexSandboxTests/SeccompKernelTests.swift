import AppexPolicy
import AppexTestSupport
import Foundation
import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// The attacks of issue 10 (items 1 and 7) against the real kernel, in a full sandbox under the
/// shipped default rules, each beside a control run without the filter: the control shows the
/// probe reaches the kernel (and what the kernel itself answers), so EPERM is the filter's.
@Suite(.serialized, .requiresRoot("the sandbox needs root"))
struct SeccompKernelTests {
    let rules: [SeccompRule]

    init() throws { rules = try ShippedRules.rules() }

    /// x86_64 numbers of the calls the probe makes raw (the table is per architecture).
    static let x86_64: [String: Int] = [
        "modify_ldt": 154, "mount_setattr": 442, "quotactl_fd": 443, "statmount": 457, "listmount": 458,
        "lsm_get_self_attr": 459, "lsm_set_self_attr": 460, "lsm_list_modules": 461, "mseal": 462,
        "open_tree_attr": 467,
    ]

    @Test func cloneIntoANewUserNamespaceIsRefused() throws {
        let r = try ProbeRun("clone-ns")
        // Uncontained, an unprivileged process may make a user namespace on this kernel.
        #expect(try r.run(["clone-newuser"]).1 == "ok")
        #expect(try r.run(["clone3-newuser"]).1 == "ok")
        #expect(try r.run(["clone-newuser"], rules: rules).1 == "errno=EPERM")
        #expect(try r.run(["clone3-newuser"], rules: rules).1 == "errno=ENOSYS")
    }

    @Test func forkAndThreadsStillWork() throws {
        let r = try ProbeRun("clone-ok")
        #expect(try r.run(["fork"], rules: rules).1 == "ok")
        // glibc's pthread_create meets clone3's ENOSYS and falls back to clone.
        #expect(try r.run(["thread"], rules: rules).1 == "ok")
        #expect(try r.run(["fork-bomb", "3"], rules: rules).1 == "ok forked=3")
    }

    @Test func personalityKeepsOnlyTheHarmlessValues() throws {
        let r = try ProbeRun("personality")
        #expect(try r.run(["personality", "0x6"]).1 == "ok", "control: PER_BSD reaches the kernel")
        for value in ["0xffffffff", "0", "0x8", "0x20000", "0x20008"] {
            #expect(try r.run(["personality", value], rules: rules).1 == "ok", "personality(\(value))")
        }
        // PER_BSD, ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC.
        for value in ["0x6", "0x40000", "0x400000"] {
            #expect(try r.run(["personality", value], rules: rules).1 == "errno=EPERM", "personality(\(value))")
        }
    }

    @Test(
        .enabled(if: isX86_64, "syscall numbers below are x86_64's"),
        arguments: [
            // name, invalid arguments, what the kernel answers without the filter
            ("modify_ldt", ["1", "0", "0"], "ok"),  // write_ldt EINVAL, returned as an unsigned int
            ("mount_setattr", ["-1", "0", "0", "0", "0"], "errno=EINVAL"),
            ("open_tree_attr", ["-1", "0", "0", "0", "0"], "errno=EFAULT"),
            ("quotactl_fd", ["-1", "0", "0", "0"], "errno=EBADF"),
            ("listmount", ["0", "0", "0", "0"], "errno=EFAULT"),
            ("statmount", ["0", "0", "0", "0"], "errno=EFAULT"),
            ("lsm_list_modules", ["0", "0", "0"], "errno=EFAULT"),
            ("lsm_get_self_attr", ["0", "0", "0", "0"], "errno=EINVAL"),
            ("lsm_set_self_attr", ["0", "0", "0", "0"], "errno=EINVAL"),
        ])
    func newlyDeniedCallsGetThePolicysErrno(name: String, args: [String], uncontained: String) throws {
        let nr = try #require(Self.x86_64[name])
        #expect(SyscallNames.number(name) == Int32(nr))
        let r = try ProbeRun("deny-\(nr)")
        #expect(try r.run(["syscall", String(nr)] + args).1 == uncontained, "control run of \(name)")
        #expect(try r.run(["syscall", String(nr)] + args, rules: rules).1 == "errno=EPERM", "\(name)")
    }

    @Test(.enabled(if: isX86_64, "syscall numbers below are x86_64's"))
    func callsNewerThanLibseccompReachTheKernelAndUnknownNumbersDoNot() throws {
        let r = try ProbeRun("newer")
        // mseal (462, unknown to libseccomp 2.5.4) with an unaligned address: the kernel's EINVAL.
        #expect(try r.run(["syscall", "462", "1", "0", "0xff"], rules: rules).1 == "errno=EINVAL")
        // Nothing is assigned there: ENOSYS, from the filter before the kernel.
        #expect(try r.run(["syscall-high"], rules: rules).1 == "errno=ENOSYS")
        #expect(try r.run(["syscall", "400"], rules: rules).1 == "errno=ENOSYS")
    }

    @Test func theSwiftRuntimeStartsUnderTheDefaultRules() throws {
        let dir = try ScratchDirectory.make("sbx-seccomp-swift", mode: 0o755)
        defer { try? ContainerStore.removeTree(dir) }
        let (bundle, exe) = try Fixture.makeBundle(in: dir, name: "Balloon.appex", executable: Fixture.balloon)
        let state = try ScratchDirectory.make("sbx-seccomp-swift-state", mode: 0o755)
        defer { try? ContainerStore.removeTree(state) }
        let spec = SandboxSpec(
            bundleIdentifier: Fixture.uniqueID("seccomp-swift"), bundlePath: bundle, executablePath: exe,
            arguments: ["4", "8"], memoryMax: 64 << 20, pidsMax: 32, syscallRules: rules)
        let report = try ExtensionRun.run(spec, options: RunOptions(stateDirectory: state, cgroups: try Fixture.cgroups()))
        #expect(report.exitStatus == 0 && report.killReason == nil)
        #expect(try String(contentsOfFile: report.logPath, encoding: .utf8).contains("reached 8 MiB without being stopped"))
        Fixture.removeParentCgroups()
    }
}

let isX86_64: Bool = {
    #if arch(x86_64)
    true
    #else
    false
    #endif
}()
