import Foundation
import Testing

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

/// The v1 backend on the real kernel. CI and this machine run as root with the v1 memory
/// controller, so these always run; each test makes its own parent and removes it.
/// Serialized: OOM timing on a shared 2-core machine should not depend on the other tests.
@Suite("cgroup v1 backend, live", .serialized)
struct LiveV1Tests {
    @Test func detectPicksV1OnThisMachineKind() throws {
        let p = try CgroupManager.probe()
        let m = try CgroupManager.detect(parentName: Names.unique("detect"))
        if p.v2MemoryReason != nil {
            #expect(m.version == .v1)
            #expect(m.roots.memory == p.memoryMount)
            #expect(m.roots.pids == p.pidsMount)
        } else {
            #expect(m.version == .v2)
        }
    }

    /// detect's statfs fast path (`standardV1Roots`) gives what mountinfo gives, once the
    /// parent cgroup exists, and only for real hierarchies carrying the right controllers.
    @Test func theStandardLayoutAgreesWithMountinfo() throws {
        let live = try LiveV1("layout")
        defer { live.cleanup() }
        let parent = live.manager.parentName
        // No parent yet: the pids hierarchy cannot be told by its root, so no fast answer.
        #expect(CgroupManager.standardV1Roots(parentName: parent) == nil)
        try live.manager.prepare()
        let p = try CgroupManager.probe()
        let fast = CgroupManager.standardV1Roots(parentName: parent)
        if p.v2MemoryReason != nil, p.memoryMount == "/sys/fs/cgroup/memory", p.pidsMount == "/sys/fs/cgroup/pids" {
            #expect(fast == .v1(memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids"))
            #expect(try CgroupManager.detect(parentName: parent).roots == fast)
        } else {
            #expect(fast == nil)
        }

        // The same names in plain directories: not cgroupfs, refused.
        let fake = FileManager.default.temporaryDirectory.appendingPathComponent(Names.unique("layout")).path
        defer { try? FileManager.default.removeItem(atPath: fake) }
        for file in ["memory/memory.limit_in_bytes", "pids/\(parent)/pids.max"] {
            let dir = (fake + "/" + file).split(separator: "/").dropLast().joined(separator: "/")
            try FileManager.default.createDirectory(atPath: "/" + dir, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: fake + "/" + file, contents: Data("max\n".utf8)))
        }
        #expect(CgroupManager.standardV1Roots(parentName: parent, base: fake) == nil)
        guard fast != nil else { return }

        // Links to the real hierarchies pass; the pids hierarchy in memory's place does not
        // (no memory.limit_in_bytes there), nor memory's in pids' place.
        let links = fake + "-links"
        defer { try? FileManager.default.removeItem(atPath: links) }
        func link(memory: String, pids: String) throws {
            try? FileManager.default.removeItem(atPath: links)
            try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: links + "/memory", withDestinationPath: memory)
            try FileManager.default.createSymbolicLink(atPath: links + "/pids", withDestinationPath: pids)
        }
        try link(memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids")
        #expect(CgroupManager.standardV1Roots(parentName: parent, base: links) == .v1(memory: links + "/memory", pids: links + "/pids"))
        try link(memory: "/sys/fs/cgroup/pids", pids: "/sys/fs/cgroup/pids")
        #expect(CgroupManager.standardV1Roots(parentName: parent, base: links) == nil)
        try link(memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/memory")
        #expect(CgroupManager.standardV1Roots(parentName: parent, base: links) == nil)
    }

    @Test func createAppliesLimitsBeforeAnyoneJoinsAndRemoveCleansUp() throws {
        let live = try LiveV1("limits")
        defer { live.cleanup() }
        let m = live.manager
        let limits = CgroupLimits(memoryMax: 16 * MiB, memoryHigh: 12 * MiB, pidsMax: 16)
        let cg = try m.create(name: "ext", limits: limits)
        let memDir = "/sys/fs/cgroup/memory/\(m.parentName)/ext"
        let pidsDir = "/sys/fs/cgroup/pids/\(m.parentName)/ext"
        #expect(cg.paths == [memDir, pidsDir])
        #expect(cg.join == .procsFiles([memDir + "/tasks", pidsDir + "/tasks"]))
        #expect(try cg.currentLimits() == limits)
        #expect(try Sys.readFile(memDir + "/memory.memsw.limit_in_bytes").trimmingWhitespace == "\(16 * MiB)")
        #expect(try Sys.readFile(memDir + "/memory.swappiness").trimmingWhitespace == "0")
        #expect(try cg.pids() == [])
        #expect(try cg.oomKillCount() == 0)
        #expect(try m.list() == ["ext"])
        let dup = #expect(throws: CgroupError.self) { try m.create(name: "ext", limits: limits) }
        #expect(dup?.errno == .fileExists)
        try cg.remove()
        #expect(!cg.exists)
        try cg.remove()  // tolerates gone
        try m.removeParent()
        #expect(!Sys.exists("/sys/fs/cgroup/memory/\(m.parentName)"))
        #expect(!Sys.exists("/sys/fs/cgroup/pids/\(m.parentName)"))
    }

    @Test func joinFDsMoveAProcessIn() throws {
        let live = try LiveV1("join")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 64 * MiB))
        let child = try GatedChild("exit 0")
        defer { child.stop() }
        let fds = try cg.openJoinFDs()
        defer { fds.forEach { close($0) } }
        #expect(fds.count == 2)
        for fd in fds {
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(fd, F_GETFL) & O_ACCMODE == O_WRONLY)
            // The launcher's child writes "0"; from out here write the child's pid.
            let s = "\(child.pid)"
            #expect(write(fd, s, s.utf8.count) == s.utf8.count)
        }
        #expect(try cg.pids() == [child.pid])
        let ownCgroup = try Sys.readFile("/proc/\(child.pid)/cgroup")
        #expect(ownCgroup.contains("memory:/\(live.manager.parentName)/ext"))
        #expect(ownCgroup.contains("pids:/\(live.manager.parentName)/ext"))
        child.release()
        #expect(child.wait() == .status(0))
        #expect(try eventually { try cg.pids().isEmpty })
        try cg.remove()
    }

    @Test func overTheHardLimitIsOOMKilledAndReported() throws {
        let live = try LiveV1("oom")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 16 * MiB, pidsMax: 16))
        let watcher = try cg.makeOOMWatcher()
        // The shell keeps 64 MB of command-substitution output: real, touched anonymous memory.
        let child = try GatedChild("v=$(head -c 67108864 /dev/zero | tr '\\0' a); echo ${#v}")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        // The kernel itself signals the eventfd (not just a re-read of the counter).
        var p = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 10_000) == 1)
        #expect(child.wait() == .signal(SIGKILL))
        let n = try watcher.wait(timeout: .seconds(10))
        #expect(n != nil && n! >= 1)
        #expect(try cg.oomKillCount() >= 1)
        #expect(try cg.memoryPeak() >= 15 * MiB)
        // v1 memoryEvents carries oom_control's counters (failcnt stays 0 when memsw fails first).
        #expect(try cg.memoryEvents()["oom_kill", default: 0] >= 1)
        try cg.killAll()
        try cg.remove()
    }

    @Test func underTheLimitIsNotKilled() throws {
        let live = try LiveV1("nooom")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 64 * MiB))
        let watcher = try cg.makeOOMWatcher()
        let child = try GatedChild("v=$(head -c 4194304 /dev/zero | tr '\\0' a); test ${#v} -eq 4194304")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        #expect(child.wait() == .status(0))
        #expect(try cg.oomKillCount() == 0)
        #expect(try watcher.wait(timeout: .milliseconds(300)) == nil)
        #expect(try cg.memoryPeak() >= 4 * MiB)
        try cg.remove()
    }

    @Test func watcherReturnsNilWhenTheCgroupIsRemoved() throws {
        let live = try LiveV1("gone")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 64 * MiB))
        let watcher = try cg.makeOOMWatcher()
        try cg.remove()
        // v1 signals the eventfd on rmdir; the watcher must not mistake that for an OOM kill.
        #expect(try watcher.wait(timeout: .seconds(5)) == nil)
    }

    @Test func thresholdWatcherFiresWhenUsageCrossesTheSoftLimit() throws {
        let live = try LiveV1("threshold")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 64 * MiB, memoryHigh: 8 * MiB))
        let w = try cg.makeThresholdWatcher(bytes: 8 * MiB)
        #expect(try w.wait(timeout: .milliseconds(100)) == nil)
        let child = try GatedChild("v=$(head -c 16777216 /dev/zero | tr '\\0' a); sleep 300")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        // A bound, not a measurement: the shell builds its 16 MiB in well under a second on a
        // quiet machine, but the whole suite runs beside it (fork bombs, spinning probes).
        let usage = try w.wait(timeout: .seconds(90))
        #expect(usage != nil && usage! >= 8 * MiB, "\(Self.diagnosis(cg, child))")
        try cg.killAll()
        #expect(child.wait() == .signal(SIGKILL))
        try cg.remove()
    }

    @Test func pidsLimitHoldsAndKillAllEmptiesTheCgroup() throws {
        let live = try LiveV1("pids")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 64 * MiB, pidsMax: 4))
        let out = NSTemporaryDirectory() + Names.unique("pids-out")
        defer { unlink(out) }
        // Try to start 10 sleepers; only 3 fit next to the shell (dash gives up at the first
        // failed fork, so the shell may be gone while its sleepers stay).
        let child = try GatedChild("for i in 1 2 3 4 5 6 7 8 9 10; do sleep 30 & done; wait", stdout: out)
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        #expect(try eventually { try cg.pids().count >= 3 })
        usleep(200_000)
        #expect(try cg.pids().count <= 4)
        let pidsDir = cg.paths[1]
        #expect(Int(try Sys.readFile(pidsDir + "/pids.current").trimmingWhitespace)! <= 4)
        // The kernel refused forks at the limit.
        #expect(CgroupParse.keyed(try Sys.readFile(pidsDir + "/pids.events"))["max", default: 0] > 0)
        try cg.killAll()
        #expect(try cg.pids() == [])
        #expect(child.wait() != nil)
        try cg.remove()
        #expect(!cg.exists)
    }

    @Test func killAllEmptiesACgroupThatKeepsForking() throws {
        let live = try LiveV1("forker")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 64 * MiB, pidsMax: 16))
        // Every process keeps spawning; fork failures at pids.max are ignored and retried.
        let child = try GatedChild("while :; do (while :; do sleep 30 & wait; done) 2>/dev/null & sleep 0.01; done 2>/dev/null")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        #expect(try eventually { try cg.pids().count >= 8 })
        try cg.killAll()
        #expect(try cg.pids() == [])
        try cg.remove()
        #expect(!cg.exists)
    }

    @Test func cleanupLeftoversKillsAndRemovesWhatACrashLeft() throws {
        let live = try LiveV1("leftovers")
        defer { live.cleanup() }
        let a = try live.manager.create(name: "a", limits: CgroupLimits(memoryMax: 64 * MiB))
        _ = try live.manager.create(name: "b", limits: CgroupLimits(memoryMax: 64 * MiB))
        let child = try GatedChild("sleep 60")
        defer { child.stop() }
        try a.addProcess(child.pid)
        child.release()
        // A new supervisor with the same parent name.
        let fresh = try CgroupManager(version: .v1, roots: .systemV1, parentName: live.manager.parentName)
        #expect(try fresh.cleanupLeftovers() == ["a", "b"])
        #expect(child.wait() == .signal(SIGKILL))
        #expect(try fresh.list() == [])
        #expect(!a.exists)
        try fresh.removeParent()
    }

    @Test func invalidNamesAreRejectedBeforeTouchingCgroupfs() throws {
        let live = try LiveV1("names")
        defer { live.cleanup() }
        for bad in ["", "..", "a/b", "../../escape", "x\0y"] {
            #expect(throws: CgroupError.self) { try live.manager.create(name: bad, limits: CgroupLimits()) }
        }
        #expect(!Sys.exists("/sys/fs/cgroup/memory/escape"))
    }

    @Test func pressureMonitorArmsOnTheSystemPSIFile() throws {
        // The trigger is armed by the write and lives with the fd.
        let mon = try MemoryPressureMonitor.system(stall: .milliseconds(150), window: .seconds(1))
        print("PSI trigger armed on \(mon.path): \(mon.kind) \(mon.stall) in \(mon.window)")
        #expect(mon.fd >= 0)
        _ = try mon.wait(timeout: .milliseconds(50))  // pressure may or may not exist right now
        #expect(try MemoryPressureMonitor.read()[.some] != nil)
        mon.cancel()
        #expect(try mon.wait(timeout: .seconds(5)) == false)
    }

    /// What a threshold test saw when it gave up: whether usage ever got there (a missed
    /// event) or never did (the child was slow, or died: how).
    static func diagnosis(_ cg: ExtensionCgroup, _ child: GatedChild) -> String {
        func read(_ name: String) -> String {
            ((try? Sys.readFile(cg.paths[0] + "/" + name)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let alive = kill(child.pid, 0) == 0
        return "usage \(read("memory.usage_in_bytes")), max \(read("memory.max_usage_in_bytes")), failcnt \(read("memory.failcnt")), "
            + "procs [\(read("cgroup.procs").replacingOccurrences(of: "\n", with: " "))], child \(child.pid) alive \(alive), "
            + "oom_control \(read("memory.oom_control").replacingOccurrences(of: "\n", with: " "))"
    }
}
