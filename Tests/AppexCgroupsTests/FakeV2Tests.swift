import Foundation
import Testing

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory shaped like a cgroup2 mount. New cgroup directories get the
/// files the kernel would create; tests then read what the backend wrote.
final class FakeCgroup2: Sendable {
    let root: String
    let hasPeak: Bool
    let hasKill: Bool
    let hasSwap: Bool

    init(hasPeak: Bool = true, hasKill: Bool = true, hasSwap: Bool = true) throws {
        root = NSTemporaryDirectory() + Names.unique("fake-cg2")
        self.hasPeak = hasPeak
        self.hasKill = hasKill
        self.hasSwap = hasSwap
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try put("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n")
        try put("cgroup.subtree_control", "\n")
        try put("cgroup.procs", "1\n")
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func path(_ rel: String) -> String { rel.isEmpty ? root : root + "/" + rel }

    func put(_ rel: String, _ text: String) throws {
        try text.write(toFile: path(rel), atomically: false, encoding: .utf8)
    }

    func get(_ rel: String) throws -> String {
        try String(contentsOfFile: path(rel), encoding: .utf8)
    }

    /// What cgroupfs puts in a new child directory (defaults as the kernel reports them).
    func populate(_ dir: String) throws {
        var files: [String: String] = [
            "cgroup.controllers": "memory pids\n",
            "cgroup.subtree_control": "\n",
            "cgroup.procs": "",
            "cgroup.events": "populated 0\nfrozen 0\n",
            "memory.current": "0\n",
            "memory.max": "max\n",
            "memory.high": "max\n",
            "memory.low": "0\n",
            "memory.oom.group": "0\n",
            "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
            "memory.stat": "anon 0\nfile 0\nshmem 0\nfile_dirty 0\nfile_writeback 0\n",
            "memory.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            "pids.max": "max\n",
            "pids.current": "0\n",
        ]
        if hasPeak { files["memory.peak"] = "0\n" }
        if hasKill { files["cgroup.kill"] = "" }
        if hasSwap { files["memory.swap.max"] = "max\n" }
        for (name, text) in files {
            try text.write(toFile: dir + "/" + name, atomically: false, encoding: .utf8)
        }
    }

    func manager(parent: String = "appex") throws -> CgroupManager {
        try CgroupManager(
            version: .v2, roots: .v2(root), parentName: parent,
            didMakeDirectory: { [self] in try populate($0) },
            removeDirectory: { dir in
                // cgroupfs lets rmdir take the control files with it; a real directory does not.
                guard FileManager.default.fileExists(atPath: dir) else { return false }
                for f in try FileManager.default.contentsOfDirectory(atPath: dir) {
                    var isDir: ObjCBool = false
                    if FileManager.default.fileExists(atPath: dir + "/" + f, isDirectory: &isDir), isDir.boolValue {
                        throw CgroupError("rmdir", path: dir, errno: .directoryNotEmpty)
                    }
                    try FileManager.default.removeItem(atPath: dir + "/" + f)
                }
                return try Sys.rmdir(dir)
            })
    }
}

@Suite("cgroup v2 backend against a fake cgroupfs")
struct FakeV2Tests {
    @Test func createWritesLimitsAndDelegatesControllers() throws {
        let fake = try FakeCgroup2()
        let m = try fake.manager()
        let limits = CgroupLimits(memoryMax: 16 * MiB, memoryHigh: 12 * MiB, pidsMax: 32)
        let cg = try m.create(name: "com.example.share", limits: limits)

        // Root and parent delegate exactly memory and pids, in one write each.
        #expect(try fake.get("cgroup.subtree_control") == "+memory +pids")
        #expect(try fake.get("appex/cgroup.subtree_control") == "+memory +pids")
        let d = "appex/com.example.share"
        #expect(try fake.get(d + "/memory.max") == "16777216")
        #expect(try fake.get(d + "/memory.high") == "12582912")
        #expect(try fake.get(d + "/memory.swap.max") == "0")
        #expect(try fake.get(d + "/memory.oom.group") == "1")
        #expect(try fake.get(d + "/pids.max") == "32")
        #expect(cg.version == .v2)
        #expect(cg.paths == [fake.path(d)])
        #expect(cg.join == .directory(fake.path(d)))
        #expect(try m.list() == ["com.example.share"])

        // Read back through the same parser.
        var back = try cg.currentLimits()
        back.swapOff = true
        #expect(back == limits)
    }

    /// The parent cgroup may be removed at any moment (tests share one and remove it when
    /// done): listing a parent that is not there is an empty list, not an error.
    @Test func listingAParentThatIsGoneIsEmpty() throws {
        let fake = try FakeCgroup2()
        let m = try fake.manager(parent: "gone")
        try? FileManager.default.removeItem(atPath: fake.path("gone"))
        #expect(!FileManager.default.fileExists(atPath: fake.path("gone")))
        #expect(try m.list() == [])
    }

    @Test func unsetLimitsAreLeftAtMaxAndSwapFileOptional() throws {
        let fake = try FakeCgroup2(hasSwap: false)
        let m = try fake.manager()
        let cg = try m.create(name: "x", limits: CgroupLimits())
        #expect(try fake.get("appex/x/memory.max") == "max\n")
        #expect(try fake.get("appex/x/memory.high") == "max\n")
        #expect(try fake.get("appex/x/pids.max") == "max\n")
        // No swap accounting: nothing to write, and the cgroup counts as swap-free.
        #expect(!FileManager.default.fileExists(atPath: fake.path("appex/x/memory.swap.max")))
        #expect(try cg.currentLimits() == CgroupLimits(memoryMax: nil, memoryHigh: nil, pidsMax: nil, swapOff: true))
    }

    @Test func alreadyDelegatedControllersAreNotRewritten() throws {
        let fake = try FakeCgroup2()
        try fake.put("cgroup.subtree_control", "memory pids\n")
        let m = try fake.manager()
        _ = try m.create(name: "x", limits: CgroupLimits())
        #expect(try fake.get("cgroup.subtree_control") == "memory pids\n")
    }

    @Test func duplicateNameFailsWithEEXISTAndBadNamesNeverTouchDisk() throws {
        let fake = try FakeCgroup2()
        let m = try fake.manager()
        _ = try m.create(name: "x", limits: CgroupLimits())
        let e = #expect(throws: CgroupError.self) { try m.create(name: "x", limits: CgroupLimits()) }
        #expect(e?.errno == .fileExists)
        for bad in ["../escape", "a/b", ""] {
            #expect(throws: CgroupError.self) { try m.create(name: bad, limits: CgroupLimits()) }
        }
        #expect(!FileManager.default.fileExists(atPath: fake.root + "/escape"))
    }

    @Test func joinFDIsAnOPathDirectory() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits())
        let fds = try cg.openJoinFDs()
        defer { fds.forEach { close($0) } }
        #expect(fds.count == 1)
        let flags = fcntl(fds[0], F_GETFL)
        #expect(flags & Sys.O_PATH != 0)
        #expect(fcntl(fds[0], F_GETFD) & FD_CLOEXEC != 0)
        // It names the cgroup directory.
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fds[0])")
        #expect(link == fake.path("appex/x"))
    }

    @Test func readsUsagePeakStatAndEvents() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits(memoryMax: 64 * MiB))
        try fake.put("appex/x/memory.current", "5242880\n")
        try fake.put("appex/x/memory.peak", "9437184\n")
        try fake.put(
            "appex/x/memory.stat",
            """
            anon 3145728
            file 8388608
            kernel 262144
            shmem 1048576
            file_mapped 4194304
            file_dirty 524288
            file_writeback 0
            pgmajfault 7

            """)
        try fake.put("appex/x/memory.events", "low 0\nhigh 4\nmax 9\noom 2\noom_kill 2\noom_group_kill 1\n")
        #expect(try cg.memoryCurrent() == 5 * MiB)
        #expect(try cg.memoryPeak() == 9 * MiB)
        #expect(try cg.memoryStat()["pgmajfault"] == 7)
        #expect(try cg.footprint() == 3 * MiB + 1 * MiB + 512 * 1024)
        #expect(try cg.footprintBreakdown().cleanFile == 8 * MiB - 1 * MiB - 512 * 1024)
        #expect(try cg.oomKillCount() == 2)
        #expect(try cg.memoryEvents()["high"] == 4)
    }

    @Test func peakWithoutMemoryPeakIsTrackedMax() throws {
        let fake = try FakeCgroup2(hasPeak: false)
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits())
        try fake.put("appex/x/memory.current", "7000\n")
        #expect(try cg.memoryCurrent() == 7000)
        try fake.put("appex/x/memory.current", "3000\n")
        #expect(try cg.memoryPeak() == 7000)
        try fake.put("appex/x/memory.current", "8000\n")
        #expect(try cg.memoryPeak() == 8000)
    }

    @Test func oomWatcherFiresOnlyWhenOOMKillGrows() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits(memoryMax: 16 * MiB))
        let w = try cg.makeOOMWatcher()
        // Other events (reclaim at memory.high) wake the watcher but are not OOM kills.
        try fake.put("appex/x/memory.events", "low 0\nhigh 5\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n")
        #expect(try w.wait(timeout: .milliseconds(200)) == nil)
        // The fd is pollable: the kernel-side file change makes it readable.
        try fake.put("appex/x/memory.events", "low 0\nhigh 5\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n")
        var p = pollfd(fd: w.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 2000) == 1)
        #expect(try w.wait(timeout: .seconds(2)) == 1)
        #expect(try w.check() == nil)  // reported once
    }

    @Test func oomWatcherAsyncAndCancel() async throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits(memoryMax: 16 * MiB))
        let w = try cg.makeOOMWatcher()
        async let n = w.next(timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(100))
        try fake.put("appex/x/memory.events", "low 0\nhigh 0\nmax 1\noom 1\noom_kill 4\noom_group_kill 0\n")
        #expect(try await n == 4)

        // Cancelled, the wait ends without an event and before its own timeout: the only bound
        // here is the watcher's (a loaded machine may take seconds to run the waiter at all).
        let w2 = try cg.makeOOMWatcher()
        let timeout = Duration.seconds(300)
        let start = ContinuousClock.now
        async let m = w2.next(timeout: timeout)
        try await Task.sleep(for: .milliseconds(50))
        w2.cancel()
        #expect(try await m == nil)
        #expect(ContinuousClock.now - start < timeout, "ended by the timeout, not by cancel")
    }

    /// No memory.events change here: v2's threshold reads memory.current on its own timer.
    @Test func thresholdWatcherV2ReadsMemoryCurrent() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits(memoryMax: 16 * MiB))
        let w = try cg.makeThresholdWatcher(bytes: 8 * MiB)
        #expect(try w.wait(timeout: .milliseconds(100)) == nil)
        try fake.put("appex/x/memory.current", "\(9 * MiB)\n")
        #expect(try w.wait(timeout: .seconds(10)) == 9 * MiB)
    }

    /// v2 has per-cgroup PSI: the trigger goes to the cgroup's own memory.pressure (a fake
    /// file takes any write; the kernel's would check it). v1 has none.
    @Test func pressureMonitorWritesItsTriggerToTheCgroupsMemoryPressure() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits(memoryMax: 16 * MiB))
        try fake.put("appex/x/memory.pressure", "")
        let m = try #require(try cg.makePressureMonitor(kind: .full, stall: .milliseconds(100), window: .seconds(1)))
        #expect(m.path.hasSuffix("/appex/x/memory.pressure") && m.kind == .full)
        #expect(try fake.get("appex/x/memory.pressure") == "full 100000 1000000")
    }

    @Test func footprintWatcherPollsMemoryStatOnV2() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: .forFootprint(8 * MiB))
        #expect(try fake.get("appex/x/memory.max") == "\(40 * MiB)")
        let w = try cg.makeFootprintWatcher(budget: 8 * MiB, pollInterval: .milliseconds(10))
        // Lots of clean cache: usage over the budget, footprint under it.
        try fake.put("appex/x/memory.current", "\(30 * MiB)\n")
        try fake.put("appex/x/memory.stat", "anon \(2 * MiB)\nfile \(28 * MiB)\nshmem 0\nfile_dirty 0\nfile_writeback 0\n")
        #expect(try w.wait(timeout: .milliseconds(100)) == nil)
        try fake.put("appex/x/memory.stat", "anon \(9 * MiB)\nfile \(21 * MiB)\nshmem 0\nfile_dirty 0\nfile_writeback 0\n")
        #expect(try w.wait(timeout: .seconds(2)) == 9 * MiB)
    }

    @Test func killAllWritesCgroupKillThenWaitsForEmpty() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits())
        try cg.killAll()
        #expect(try fake.get("appex/x/cgroup.kill") == "1")
        #expect(try cg.pids() == [])
    }

    @Test func addProcessWritesThePid() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits())
        try cg.addProcess(4242)
        #expect(try fake.get("appex/x/cgroup.procs") == "4242")
        #expect(try cg.pids() == [4242])
    }

    @Test func cleanupLeftoversRemovesEveryChildAndRemoveIsIdempotent() throws {
        let fake = try FakeCgroup2(hasKill: true)
        let m = try fake.manager()
        let a = try m.create(name: "a", limits: CgroupLimits())
        _ = try m.create(name: "b", limits: CgroupLimits())
        // A fresh manager, as after a supervisor crash.
        let again = try fake.manager()
        #expect(try again.cleanupLeftovers() == ["a", "b"])
        #expect(try fake.get("appex/cgroup.subtree_control") == "+memory +pids")
        #expect(!FileManager.default.fileExists(atPath: fake.path("appex/a")))
        try a.remove()  // already gone: fine
        #expect(!a.exists)
        try again.removeParent()
        #expect(!FileManager.default.fileExists(atPath: fake.path("appex")))
    }

    @Test func nestedParentIsCreatedLevelByLevel() throws {
        let fake = try FakeCgroup2()
        let m = try fake.manager(parent: "appexd.service/appex")
        _ = try m.create(name: "x", limits: CgroupLimits())
        #expect(try fake.get("appexd.service/cgroup.subtree_control") == "+memory +pids")
        #expect(try fake.get("appexd.service/appex/cgroup.subtree_control") == "+memory +pids")
        #expect(m.parentPaths == [fake.path("appexd.service/appex")])
    }

    @Test func probeFindsV2MemoryFromMountinfo() throws {
        let fake = try FakeCgroup2()
        let info = NSTemporaryDirectory() + Names.unique("mountinfo")
        defer { try? FileManager.default.removeItem(atPath: info) }
        try """
        25 1 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw
        30 25 0:26 / \(fake.root) rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate
        31 25 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids

        """.write(toFile: info, atomically: false, encoding: .utf8)
        let p = try CgroupManager.probe(mountinfo: info)
        #expect(p.unifiedMount == fake.root)
        #expect(p.unifiedControllers.contains("memory"))
        #expect(p.v2MemoryReason == nil)
        #expect(p.pidsMount == "/sys/fs/cgroup/pids")
        #expect(p.memoryMount == nil)

        try fake.put("cgroup.controllers", "cpu io\n")
        let q = try CgroupManager.probe(mountinfo: info)
        #expect(q.v2MemoryReason?.contains("no memory controller") == true)
    }

    /// The base detect picks: the delegated cgroup when it offers memory and is writable, the
    /// subtree above the `supervisor` leaf a process was parked in (not a new subtree below it),
    /// else the mount.
    @Test func v2BaseIsTheDelegatedSubtreeEvenFromItsSupervisorLeaf() throws {
        let fake = try FakeCgroup2()
        let service = "system.slice/appexd.service"
        try FileManager.default.createDirectory(atPath: fake.path(service + "/supervisor"), withIntermediateDirectories: true)
        try fake.put(service + "/cgroup.controllers", "memory pids\n")
        try fake.put(service + "/supervisor/cgroup.controllers", "memory pids\n")
        #expect(CgroupManager.v2Base(mount: fake.root, ownPath: "/" + service) == fake.path(service))
        #expect(CgroupManager.v2Base(mount: fake.root, ownPath: "/" + service + "/supervisor") == fake.path(service))
        #expect(CgroupManager.v2Base(mount: fake.root, ownPath: "/supervisor") == fake.root)
        #expect(CgroupManager.v2Base(mount: fake.root, ownPath: "/") == fake.root)
        #expect(CgroupManager.v2Base(mount: fake.root, ownPath: nil) == fake.root)
        try fake.put(service + "/cgroup.controllers", "pids\n")
        #expect(CgroupManager.v2Base(mount: fake.root, ownPath: "/" + service) == fake.root, "no memory there")
    }
}
