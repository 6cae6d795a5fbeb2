import AppexTestSupport
import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SeccompCompilerTests {
    @Test func compilesAndCachesByContent() throws {
        let a = try SeccompCompiler.compile([SeccompRule("ptrace", .errno(1)), SeccompRule("reboot", .kill)])
        let b = try SeccompCompiler.compile([SeccompRule("reboot", .kill), SeccompRule("ptrace", .errno(1))])
        #expect(a == b)
        #expect(a.instructionCount > 4)
        #expect(!a.usesNotify)
        let c = try SeccompCompiler.compile([SeccompRule("ptrace", .errno(13)), SeccompRule("reboot", .kill)])
        #expect(c.canonicalRules != a.canonicalRules)
        #expect(c.bytes != a.bytes)
    }

    @Test func unknownSyscallIsAnError() {
        #expect(throws: SandboxError.self) { try SeccompCompiler.compile([SeccompRule("no_such_call", .errno(1))]) }
    }

    @Test func conflictingActionsAreAnError() {
        #expect(throws: SandboxError.self) {
            try SeccompCompiler.compile([SeccompRule("ptrace", .errno(1)), SeccompRule("ptrace", .kill)])
        }
    }

    @Test func launcherSyscallsCannotBeDenied() {
        #expect(throws: SandboxError.self) { try SeccompCompiler.compile([SeccompRule("execve", .errno(1))]) }
        #expect(throws: SandboxError.self) { try SeccompCompiler.compile([SeccompRule("exit_group", .kill)]) }
    }

    @Test func notifyRecordsErrnosBySyscallNumber() throws {
        let p = try SeccompCompiler.compile([SeccompRule("keyctl", .notify(errno: 13)), SeccompRule("sendmsg", .notify(errno: 1))])
        #expect(p.usesNotify)
        #expect(p.notifyErrnos.values.sorted() == [1, 13])
    }
}

@Suite struct ContainerTests {
    @Test(arguments: [
        "", ".", "..", "a/b", "a\u{0}b", "../etc", ".hidden", "a..b", "a.\u{301}.b", "\u{e9}t\u{e9}", "a b",
        String(repeating: "a", count: 256),
    ])
    func rejectsUnsafeIdentifiers(_ id: String) {
        #expect(throws: SandboxError.self) { try ContainerStore.validate(identifier: id) }
    }

    @Test func acceptsBundleIdentifiers() throws {
        try ContainerStore.validate(identifier: "com.example.share-ext")
        try ContainerStore.validate(identifier: "A.b-9.")
        try ContainerStore.validate(identifier: String(repeating: "a", count: 255))
    }

    @Test func uidsAreStablePerBundleAndDistinct() throws {
        let state = try ScratchDirectory.make("sbx-uids", mode: 0o755)
        let alloc = UIDAllocator(stateRoot: state, range: 300_000...300_002)
        let a = try alloc.uid(for: "com.example.a")
        let b = try alloc.uid(for: "com.example.b")
        #expect(a != b)
        #expect(try alloc.uid(for: "com.example.a") == a)
        #expect(try UIDAllocator(stateRoot: state, range: 300_000...300_002).uid(for: "com.example.b") == b)
        _ = try alloc.uid(for: "com.example.c")
        #expect(throws: SandboxError.self) { try alloc.uid(for: "com.example.d") }
        try ContainerStore.removeTree(state)
    }

    @Test(.requiresRoot("chown needs root"))
    func containerIsPrivateToItsUid() throws {
        let state = try ScratchDirectory.make("sbx-container", mode: 0o755)
        defer { try? ContainerStore.removeTree(state) }
        let store = ContainerStore(stateRoot: state)
        let c = try store.prepare(bundleIdentifier: "com.example.private")
        var st = stat()
        #expect(lstat(c.path, &st) == 0)
        #expect(st.st_uid == c.uid)
        #expect(st.st_mode & 0o777 == 0o700)
        for sub in ContainerStore.containerSubdirectories {
            #expect(lstat(c.path + "/" + sub, &st) == 0 && st.st_uid == c.uid)
        }
        #expect(c.uid >= UIDAllocator.defaultRange.lowerBound)
    }

    @Test(.requiresRoot("chown needs root"))
    func symlinkPlantedInContainerIsRefused() throws {
        let state = try ScratchDirectory.make("sbx-symlink", mode: 0o755)
        defer { try? ContainerStore.removeTree(state) }
        let store = ContainerStore(stateRoot: state)
        let c = try store.prepare(bundleIdentifier: "com.example.link")
        try ContainerStore.removeTree(c.path + "/Documents")
        #expect(symlink("/etc", c.path + "/Documents") == 0)
        #expect(throws: SandboxError.self) { try store.prepare(bundleIdentifier: "com.example.link") }
    }
}
