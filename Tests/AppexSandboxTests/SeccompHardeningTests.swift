import AppexPolicy
import CAppexLauncher
import Foundation
import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// The shipped policy tree and the rules its defaults deny, as `appex run` compiles them.
enum ShippedRules {
    static let policyDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Policies").standardizedFileURL.path

    static func rules(_ point: String = "com.apple.share-services") throws -> [SeccompRule] {
        let set = try PolicySet.load(directories: [policyDirectory])
        return EffectivePolicy(extensionPoint: point, in: set).syscallRules.map { SeccompRule($0.name, $0.action) }
    }
}

/// What the compiled filter answers, read from the program itself (issue 10, items 1 and 7).
@Suite struct SeccompFilterDecisionTests {
    static let clone = SyscallNames.number("clone")!
    static let clone3 = SyscallNames.number("clone3")!
    static let personality = SyscallNames.number("personality")!
    static let socket = SyscallNames.number("socket")!
    static let socketpair = SyscallNames.number("socketpair")!
    static let eperm = SeccompBPF.errno(EPERM)
    static let enosys = SeccompBPF.errno(ENOSYS)

    func filter(_ rules: [SeccompRule]) throws -> SeccompBPF {
        SeccompBPF(try SeccompCompiler.compile(rules).bytes)
    }

    @Test func everyKnownCallIsAllowedUnlessDeniedAndEveryOtherIsENOSYS() throws {
        let rules = try ShippedRules.rules()
        let denied = Dictionary(uniqueKeysWithValues: rules.compactMap { r in SyscallNames.number(r.syscall).map { ($0, r.action) } })
        let known = Set(SyscallNames.knownNumbers)
        let bpf = try filter(rules)
        for nr: Int32 in 0...1100 where ![Self.clone, Self.clone3, Self.personality, Self.socket, Self.socketpair].contains(nr) {
            let expected: UInt32 =
                if let action = denied[nr] {
                    SeccompCompiler.actionValue(action)
                } else {
                    known.contains(nr) ? SeccompBPF.allow : Self.enosys
                }
            #expect(try bpf.run(nr: nr) == expected, "syscall \(nr) \(SyscallNames.name(nr) ?? "(unknown)")")
        }
        // Numbers past everything Appex knows: what a kernel newer than Appex adds.
        let highest = try #require(SyscallNames.knownNumbers.last)
        #expect(highest >= 469)
        for nr in [highest + 1, highest + 2, 999, 0x3fff_ffff] { #expect(try bpf.run(nr: nr) == Self.enosys) }
    }

    @Test func newCallsAreDeniedWithThePolicysErrno() throws {
        let bpf = try filter(try ShippedRules.rules())
        for name in [
            "modify_ldt", "open_tree_attr", "quotactl_fd", "listmount", "statmount", "mount_setattr",
            "lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules", "unshare", "setns",
        ] {
            let nr = try #require(SyscallNames.number(name), "\(name) has no number")
            #expect(try bpf.run(nr: nr) == Self.eperm, "\(name)")
        }
        // Newer than libseccomp and harmless: allowed through to the kernel.
        for name in ["mseal", "cachestat", "fchmodat2", "futex_wake", "setxattrat", "file_getattr"] {
            #expect(try bpf.run(nr: try #require(SyscallNames.number(name))) == SeccompBPF.allow, "\(name)")
        }
    }

    @Test func cloneWithANamespaceFlagGetsUnsharesAction() throws {
        let bpf = try filter(try ShippedRules.rules())
        let sigchld = UInt64(SIGCHLD)
        for flag in SeccompArgumentRules.cloneNamespaceFlags {
            #expect(try bpf.run(nr: Self.clone, args: [flag | sigchld]) == Self.eperm, "flag 0x\(String(flag, radix: 16))")
            // The kernel reads only the low 32 bits; high bits do not hide a flag.
            #expect(try bpf.run(nr: Self.clone, args: [0xffff_ffff_0000_0000 | flag]) == Self.eperm)
        }
        #expect(try bpf.run(nr: Self.clone, args: [0x1000_0000 | 0x4000_0000 | 0x0002_0000 | sigchld]) == Self.eperm)
        // glibc's fork and pthread_create (after clone3's ENOSYS).
        let fork: UInt64 = 0x0120_0000 | sigchld  // CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID
        let thread: UInt64 = 0x003d_0f00  // VM FS FILES SIGHAND THREAD SYSVSEM SETTLS PARENT_SETTID CHILD_CLEARTID
        for flags in [fork, thread, sigchld, 0, 0xffff_ffff_0000_0000] {
            #expect(try bpf.run(nr: Self.clone, args: [flags]) == SeccompBPF.allow, "flags 0x\(String(flags, radix: 16))")
        }
        // clone3's flags are behind a pointer: every clone3 is ENOSYS, so libc falls back to clone.
        #expect(try bpf.run(nr: Self.clone3, args: [0x7fff_0000_1000, 88]) == Self.enosys)
    }

    /// socket creates only the address families the network needs (issue 30, #9): AF_VSOCK
    /// ignores network namespaces, so the filter is what stops it.
    @Test func socketCreatesOnlyTheFamiliesTheNetworkNeeds() throws {
        let afUnix: UInt64 = 1, afInet: UInt64 = 2, afInet6: UInt64 = 10, afNetlink: UInt64 = 16
        let afPacket: UInt64 = 17, afAlg: UInt64 = 38, afVsock: UInt64 = 40
        let refused = SeccompBPF.errno(EAFNOSUPPORT)
        let rules = try ShippedRules.rules()
        let none = SeccompBPF(try SeccompCompiler.compile(rules).bytes)
        let host = SeccompBPF(try SeccompCompiler.compile(rules, hostNetwork: true).bytes)
        #expect(try none.run(nr: Self.socket, args: [afUnix, 1]) == SeccompBPF.allow)
        #expect(try host.run(nr: Self.socket, args: [afUnix, 1]) == SeccompBPF.allow)
        for family in [afInet, afInet6, afNetlink] {
            #expect(try none.run(nr: Self.socket, args: [family, 1]) == refused, "family \(family), no network")
            #expect(try host.run(nr: Self.socket, args: [family, 1]) == SeccompBPF.allow, "family \(family), host network")
        }
        for family in [afPacket, afAlg, afVsock, 0, 46, 0x1_0000_0001] {
            #expect(try none.run(nr: Self.socket, args: [family, 1]) == refused, "family \(family)")
            #expect(try host.run(nr: Self.socket, args: [family, 1]) == refused, "family \(family)")
        }
        #expect(try host.run(nr: Self.socketpair, args: [afUnix, 1]) == SeccompBPF.allow)
        #expect(try host.run(nr: Self.socketpair, args: [afVsock, 1]) == refused)
        // A policy that names socket itself gets exactly its own rule.
        let own = SeccompBPF(try SeccompCompiler.compile([SeccompRule("socket", .errno(EPERM))]).bytes)
        #expect(try own.run(nr: Self.socket, args: [afUnix, 1]) == Self.eperm)
        #expect(try own.run(nr: Self.socketpair, args: [afVsock, 1]) == refused)
    }

    @Test(arguments: [SyscallAction.kill, .notify(errno: EACCES), .errno(EACCES)])
    func cloneFollowsWhateverActionUnshareHas(_ action: SyscallAction) throws {
        let bpf = try filter([SeccompRule("unshare", action)])
        #expect(try bpf.run(nr: Self.clone, args: [0x1000_0000]) == SeccompCompiler.actionValue(action))
        #expect(try bpf.run(nr: Self.clone, args: [UInt64(SIGCHLD)]) == SeccompBPF.allow)
        #expect(try bpf.run(nr: Self.clone3) == Self.enosys, "a killed clone3 would kill every pthread_create")
    }

    @Test func loggedUnshareLogsCloneAndClone3() throws {
        let bpf = try filter([SeccompRule("unshare", .log)])
        #expect(try bpf.run(nr: Self.clone, args: [0x1000_0000]) == SeccompBPF.log)
        #expect(try bpf.run(nr: Self.clone3) == SeccompBPF.log)
    }

    @Test func withoutUnshareDeniedCloneIsNotJudged() throws {
        let bpf = try filter([SeccompRule("ptrace", .errno(EPERM))])
        #expect(try bpf.run(nr: Self.clone, args: [0x1000_0000]) == SeccompBPF.allow)
        #expect(try bpf.run(nr: Self.clone3) == SeccompBPF.allow)
    }

    @Test func aPolicyThatNamesCloneItselfWins() throws {
        let bpf = try filter([SeccompRule("unshare", .errno(EPERM)), SeccompRule("clone", .kill), SeccompRule("clone3", .errno(EACCES))])
        #expect(try bpf.run(nr: Self.clone, args: [UInt64(SIGCHLD)]) == SeccompBPF.killProcess)
        #expect(try bpf.run(nr: Self.clone3) == SeccompBPF.errno(EACCES))
    }

    @Test(arguments: [SyscallAction.errno(EPERM), .kill, .notify(errno: EPERM)])
    func personalityAllowsOnlyTheHarmlessValues(_ action: SyscallAction) throws {
        let bpf = try filter([SeccompRule("personality", action)])
        for value in SeccompArgumentRules.harmlessPersonalities {
            #expect(try bpf.run(nr: Self.personality, args: [value]) == SeccompBPF.allow, "0x\(String(value, radix: 16))")
        }
        // PER_BSD, ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, PER_LINUX32|ADDR_NO_RANDOMIZE, high bits, -1.
        for value: UInt64 in [0x6, 0x4_0000, 0x40_0000, 0x4_0008, 0x1_0000_0000, 0x1_0000_0008, .max, 0xffff_fffe] {
            #expect(try bpf.run(nr: Self.personality, args: [value]) == SeccompCompiler.actionValue(action), "0x\(String(value, radix: 16))")
        }
    }

    @Test func notifyLetsTheListenerHandOffThrough() throws {
        let bpf = try filter([SeccompRule("keyctl", .notify(errno: EPERM)), SeccompRule("sendmsg", .notify(errno: EPERM))])
        let sendmsg = try #require(SyscallNames.number("sendmsg"))
        #expect(try bpf.run(nr: sendmsg, args: [UInt64(APPEX_NOTIFY_SOCK_FD)]) == SeccompBPF.allow)
        #expect(try bpf.run(nr: sendmsg, args: [3]) == SeccompBPF.notify)
    }

    @Test func otherArchitecturesAreKilled() throws {
        let bpf = try filter(try ShippedRules.rules())
        #if arch(x86_64)
        // i386 through int 0x80, and the x32 ABI (the x32 bit on x86_64's own arch token).
        #expect(try bpf.run(nr: 1, arch: SeccompBPF.auditArchI386) == SeccompBPF.killProcess)
        #expect(try bpf.run(nr: 0x4000_0000 | 39) == SeccompBPF.killProcess)
        #endif
        #expect(try bpf.run(nr: 39, arch: 0xdead_beef) == SeccompBPF.killProcess)
    }

    @Test func programStaysFarBelowTheKernelsLimit() throws {
        #expect(try SeccompCompiler.compile(try ShippedRules.rules()).instructionCount < SeccompCompiler.maxInstructions / 2)
        // The worst case: every known call denied, each with its own errno, so no two leaves merge.
        let errnos: [Int32] = [EPERM, EACCES, EIO, EBUSY, EINVAL, ENODEV, EROFS, ENOSPC]
        let all = SyscallNames.knownNumbers.compactMap(SyscallNames.name).enumerated()
            .filter { !SeccompCompiler.launcherNeeds.contains($0.element) }
            .map { SeccompRule($0.element, .errno(errnos[$0.offset % errnos.count])) }
        let worst = try SeccompCompiler.compile(all)
        #expect(worst.instructionCount <= SeccompCompiler.maxInstructions)
        let none = try SeccompCompiler.compile([])
        #expect(worst.instructionCount > none.instructionCount)
    }
}

/// Names the policy language accepts beyond libseccomp 2.5.4's table.
@Suite struct NewerSyscallNameTests {
    @Test func namesNewerThanLibseccompResolveToTheKernelsNumbers() throws {
        #if arch(x86_64) || arch(arm64)
        let expected: [String: Int32] = [
            "statmount": 457, "listmount": 458, "lsm_get_self_attr": 459, "lsm_set_self_attr": 460,
            "lsm_list_modules": 461, "mseal": 462, "open_tree_attr": 467, "file_setattr": 469,
        ]
        for (name, nr) in expected {
            #expect(SyscallNames.number(name) == nr, "\(name)")
            #expect(SyscallNames.name(nr) == name)
        }
        #endif
        // libseccomp's own names still come from libseccomp.
        #expect(SyscallNames.number("clone3") == 435)
        #expect(SyscallNames.name(try #require(SyscallNames.number("ptrace"))) == "ptrace")
    }

    @Test func knownNumbersAreSortedUniqueAndIncludeBothSources() throws {
        let numbers = SyscallNames.knownNumbers
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        #expect(numbers.contains(try #require(SyscallNames.number("read"))))
        #expect(numbers.contains(try #require(SyscallNames.number("listmount"))))
        #expect(numbers.allSatisfy { SyscallNames.name($0) != nil })
    }

    @Test func aNewerNameCompilesAndUnknownNamesAreStillRefused() throws {
        let listmount = try #require(SyscallNames.number("listmount"))
        let bpf = SeccompBPF(try SeccompCompiler.compile([SeccompRule("listmount", .errno(EACCES))]).bytes)
        #expect(try bpf.run(nr: listmount) == SeccompBPF.errno(EACCES))
        #expect(throws: SandboxError.self) { try SeccompCompiler.compile([SeccompRule("no_such_call", .errno(EPERM))]) }
    }

    @Test func theLaunchersOwnCallsAfterTheFilterCannotBeDenied() {
        for name in ["execveat", "rt_sigprocmask", "execve"] {
            #expect(throws: SandboxError.self, "\(name)") { try SeccompCompiler.compile([SeccompRule(name, .errno(EPERM))]) }
        }
    }
}
