import AppexBundle
import AppexELF
import Foundation
import Testing

/// RUNPATH entries are the extension author's words: read through a descriptor, and refused
/// unless they resolve inside the bundle or a system path the policy shows.
struct ELFRunpathTests {
    @Test func runpathOfASwiftExecutable() throws {
        // The test runner is a Swift executable: RUNPATH names the toolchain's runtime and $ORIGIN.
        let exe = CommandLine.arguments[0]
        let fd = open(exe, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let entries = ELFRunpath.entries(fd: fd)
        #expect(
            entries.contains { $0.hasPrefix("/") && access($0 + "/libswiftCore.so", F_OK) == 0 },
            "no RUNPATH entry holds the Swift runtime: \(entries)")
        // Reading only the parts it needs finds what parsing the whole file finds.
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: exe)))
        #expect(ELFRunpath.parse(whole) == entries)
        #expect(ELFRunpath.parse([1, 2, 3]).isEmpty)
    }

    @Test func entriesOutsideTheBundleAndThePolicysPathsAreRefused() {
        let system = ["/usr", "/lib", "/lib64", "/etc/ld.so.cache"]
        #expect(
            RunpathCheck.refused(
                ["/etc", "/home", "/usr/lib/x86_64-linux-gnu", "$ORIGIN/../lib", "${ORIGIN}", "lib"],
                systemPaths: system) == ["/etc", "/home"])
        // Climbing out of an allowed path, or a prefix that is not a path component, is refused.
        #expect(
            RunpathCheck.refused(["/usr/../root", "/usrlocal/lib", "/lib64/./x"], systemPaths: system)
                == ["/usr/../root", "/usrlocal/lib"])
        #expect(RunpathCheck.refused(["/opt/swift/usr/lib/swift/linux"], systemPaths: system) == ["/opt/swift/usr/lib/swift/linux"])
        #expect(RunpathCheck.refused(["/opt/swift/usr/lib/swift/linux"], systemPaths: system + ["/opt/swift/usr/lib/swift/linux"]).isEmpty)
        #expect(RunpathCheck.refused(["/anything"], systemPaths: ["/"]) == ["/anything"], "/ shows nothing by itself")
    }
}
