import AppexTestSupport
import Foundation

/// Real binaries compiled once for the tests: a program importing denied calls, a shared
/// library, a static program, and shared objects for other word sizes and byte orders
/// (clang and lld from the Swift toolchain cross-link them without a C library).
enum TestBinaries {
    static let directory: String = try! ScratchDirectory.makeForProcess("lint-tests")

    /// Imports mount, ptrace and puts; never run.
    static let program: String = try! CProgram.compile(
        """
        #include <stdio.h>
        #include <sys/mount.h>
        #include <sys/ptrace.h>
        int main(int argc, char **argv) {
            if (argc > 99) { mount(argv[1], argv[2], "none", 0, 0); ptrace(PTRACE_TRACEME, 0, 0, 0); }
            puts("hello");
            return 0;
        }
        """, named: "program", in: directory)

    /// A shared library with PLT and GOT relocations naming its imports.
    static let library: String = try! CProgram.compile(
        """
        #include <sys/reboot.h>
        #include <unistd.h>
        int helper(int n) { if (n == 12345) return reboot(0); return getpid(); }
        """, named: "libhelper.so", in: directory, flags: ["-shared", "-fPIC"])

    static let staticProgram: String = try! CProgram.compile(
        """
        #include <stdio.h>
        int main(void) { puts("static"); return 0; }
        """, named: "static", in: directory, flags: ["-static"])

    /// clang from PATH (the Swift toolchain's), which cross-compiles for any target.
    static let clang: String = {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(dir)/clang"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "/opt/swift/usr/bin/clang"
    }()

    /// A shared object for `target` importing mount, linked with lld and no C library.
    static func crossLibrary(_ target: String) throws -> String {
        try CProgram.compile(
            """
            int mount(const char *, const char *, const char *, unsigned long, const void *);
            int f(void) { return mount(0, 0, 0, 0, 0); }
            """, named: "cross-\(target).so", in: directory,
            flags: ["--target=\(target)", "-nostdlib", "-shared", "-fPIC", "-fuse-ld=lld"], compiler: clang)
    }

    static func bytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path)!) }
}

/// Where things are in a 64-bit little-endian ELF file, read by the tests themselves (not by
/// the reader under test) so they can damage exactly one structure.
struct ELF64Layout {
    var bytes: [UInt8]

    func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
    func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
    func u64(_ o: Int) -> Int { u32(o) | u32(o + 4) << 32 }

    mutating func set(_ o: Int, _ value: UInt64, width: Int) {
        for i in 0..<width { bytes[o + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }

    var phoff: Int { u64(32) }
    var phnum: Int { u16(56) }
    /// File offsets of the program headers.
    var programHeaders: [Int] { (0..<phnum).map { phoff + $0 * 56 } }
    func type(ofHeader at: Int) -> Int { u32(at) }
    /// The PT_DYNAMIC header's offset.
    var dynamicHeader: Int? { programHeaders.first { type(ofHeader: $0) == 2 } }
    /// File offsets of the dynamic entries (to the end of PT_DYNAMIC's file size).
    var dynamicEntries: [Int] {
        guard let ph = dynamicHeader else { return [] }
        let offset = u64(ph + 8), size = u64(ph + 32)
        return stride(from: offset, to: offset + size, by: 16).map { $0 }
    }
    func entry(tag: Int) -> Int? { dynamicEntries.first { u64($0) == tag } }
}
