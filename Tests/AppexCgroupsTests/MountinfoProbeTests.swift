import Foundation
import Testing

@testable import AppexCgroups

/// `CgroupManager.probe` reads /proc/self/mountinfo as bytes: what it finds in lines shaped as
/// the kernel writes them (optional fields before the `-`, escaped mount points).
@Suite struct MountinfoProbeTests {
    static func probe(_ text: String) throws -> CgroupManager.SystemProbe {
        let info = NSTemporaryDirectory() + Names.unique("mountinfo")
        defer { try? FileManager.default.removeItem(atPath: info) }
        try text.write(toFile: info, atomically: false, encoding: .utf8)
        return try CgroupManager.probe(mountinfo: info)
    }

    @Test func v1ControllersBehindOptionalFields() throws {
        let p = try Self.probe(
            """
            22 27 0:21 / /proc rw,relatime shared:13 - proc proc rw
            33 25 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 master:3 - cgroup cgroup rw,memory
            34 25 0:30 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,pids
            35 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw shared:17 - cgroup cgroup rw,cpu,cpuacct
            36 25 0:32 / /sys/fs/cgroup/memory2 rw - cgroup cgroup rw,memory

            """)
        #expect(p.memoryMount == "/sys/fs/cgroup/memory")  // the first one
        #expect(p.pidsMount == "/sys/fs/cgroup/pids")
        #expect(p.unifiedMount == nil)
        #expect(p.v2MemoryReason == "no cgroup2 hierarchy is mounted")
    }

    @Test func escapedMountPointsAreDecoded() throws {
        let p = try Self.probe(
            """
            40 25 0:40 / /mnt/my\\040cgroups\\134x rw - cgroup cgroup rw,pids
            41 25 0:41 / /mnt/odd\\9 rw - cgroup cgroup rw,memory

            """)
        #expect(p.pidsMount == "/mnt/my cgroups\\x")
        #expect(p.memoryMount == "/mnt/odd\\9")  // not three octal digits: kept as written
    }

    @Test func linesWithoutTheSeparatorOrFieldsAreSkipped() throws {
        let p = try Self.probe(
            """
            garbage
            1 2 3 4 /x rw cgroup cgroup rw,memory
            50 25 0:50 / /ok rw - cgroup cgroup rw,memory
            - cgroup cgroup rw,pids
            """)
        #expect(p.memoryMount == "/ok")
        #expect(p.pidsMount == nil)
    }

    @Test func thisMachinesHierarchiesAreFound() throws {
        // The live file: whatever this machine mounts, the probe finds a memory controller,
        // on v1 or v2, as the cgroup tests need.
        let p = try CgroupManager.probe()
        #expect(p.memoryMount != nil || p.v2MemoryReason == nil)
        #expect(p.hasV2Memory == (p.v2MemoryReason == nil), "detect's quick question agrees with the message")
    }

    @Test func hasV2MemoryAgreesWithTheReason() {
        var p = CgroupManager.SystemProbe()
        #expect(!p.hasV2Memory && p.v2MemoryReason != nil)
        p.unifiedMount = "/sys/fs/cgroup/unified"
        p.unifiedControllers = ["hugetlb", "pids"]
        #expect(!p.hasV2Memory && p.v2MemoryReason?.contains("hugetlb pids") == true)
        p.unifiedControllers.insert("memory")
        #expect(p.hasV2Memory && p.v2MemoryReason == nil)
    }
}
