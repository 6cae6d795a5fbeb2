import Foundation
import Testing

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

/// The footprint definition on the live kernel: anonymous memory counts, clean page cache does not.
@Suite("footprint, live v1", .serialized)
struct FootprintTests {
    /// A shell that runs `steps` one by one, each after the test writes a line into a FIFO,
    /// and reports "step N" into a file once a step is done.
    final class SteppedShell {
        let fifo: String
        let out: String
        let child: GatedChild

        init(_ steps: [String]) throws {
            fifo = "/var/tmp/" + Names.unique("fifo")
            out = "/var/tmp/" + Names.unique("out")
            guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(.EIO) }
            var script = "exec 3<>\(fifo); "
            for (i, s) in steps.enumerated() {
                script += "\(s); echo step\(i) >> \(out); read _next <&3; "
            }
            child = try GatedChild(script)
        }

        func waitForStep(_ i: Int) -> Bool {
            eventually(timeout: 20) {
                ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("step\(i)\n")
            }
        }

        func next() {
            let fd = open(fifo, O_WRONLY | O_NONBLOCK)
            if fd >= 0 {
                _ = write(fd, "\n", 1)
                close(fd)
            }
        }

        deinit {
            child.stop()
            unlink(fifo)
            unlink(out)
        }
    }

    @Test func touchedAnonymousMemoryCountsAndCleanPageCacheDoesNot() throws {
        let live = try LiveV1("footprint")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 512 * MiB))

        // A 64 MiB file on disk, evicted from the page cache so that the reader gets charged.
        let big = makeScratchFile(mebibytes: 64, fill: 0x5a)
        defer { unlink(big) }
        try PageCache.evict(big)

        let sh = try SteppedShell([
            "true",
            "v=$(head -c 33554432 /dev/zero | tr '\\0' a)",
            "cat \(big) > /dev/null",
        ])
        try cg.addProcess(sh.child.pid)
        sh.child.release()

        #expect(sh.waitForStep(0))
        let base = try cg.footprintBreakdown()
        let baseUsage = try cg.memoryCurrent()

        sh.next()
        #expect(sh.waitForStep(1))
        let afterAnon = try cg.footprintBreakdown()
        // 32 MiB touched: the footprint grows at least that much (dash may keep more).
        #expect(afterAnon.total - base.total >= 32 * MiB, "\(base) → \(afterAnon)")

        sh.next()
        #expect(sh.waitForStep(2))
        let afterRead = try cg.footprintBreakdown()
        let usageAfterRead = try cg.memoryCurrent()
        // Reading 64 MiB charges the cgroup with clean cache, not footprint.
        #expect(usageAfterRead - baseUsage >= 32 * MiB + 48 * MiB, "usage \(baseUsage) → \(usageAfterRead)")
        #expect(afterRead.cleanFile - afterAnon.cleanFile >= 48 * MiB, "\(afterAnon) → \(afterRead)")
        #expect(abs(afterRead.total - afterAnon.total) < 4 * MiB, "\(afterAnon) → \(afterRead)")

        try cg.killAll()
        try cg.remove()
    }

    @Test func cleanCacheIsReclaimedUnderTheHardLimitInsteadOfKilling() throws {
        // 16 MiB hard limit, 64 MiB of file reads: the kernel reclaims the cache, nobody dies.
        let live = try LiveV1("reclaim")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 16 * MiB))
        let big = makeScratchFile(mebibytes: 64, fill: 0x33)
        defer { unlink(big) }
        try PageCache.evict(big)
        let child = try GatedChild("cat \(big) > /dev/null")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        #expect(child.wait() == .status(0))
        #expect(try cg.oomKillCount() == 0)
        #expect(try cg.memoryPeak() <= 16 * MiB)
        try cg.remove()
    }

    @Test func pageCacheIsChargedToWhoeverReadsItFirst() throws {
        let live = try LiveV1("firstreader")
        defer { live.cleanup() }
        let big = makeScratchFile(mebibytes: 32, fill: 0x44)
        defer { unlink(big) }

        func chargedForReading() throws -> Int64 {
            let cg = try live.manager.create(name: Names.unique("reader"), limits: CgroupLimits(memoryMax: 256 * MiB))
            defer {
                try? cg.killAll()
                try? cg.remove()
            }
            let child = try GatedChild("cat \(big) > /dev/null")
            defer { child.stop() }
            try cg.addProcess(child.pid)
            child.release()
            #expect(child.wait() == .status(0))
            return try cg.footprintBreakdown().cleanFile
        }

        try PageCache.evict(big)
        let cold = try chargedForReading()
        try PageCache.evict(big)
        #expect(try PageCache.warm([big, "/nonexistent/skipped"]) == 32 * MiB)
        let warm = try chargedForReading()
        #expect(cold >= 28 * MiB, "cold read charged \(cold)")
        #expect(warm < 2 * MiB, "warm read charged \(warm)")
    }

    /// The Swift runtime directory of this (dynamically linked) test process.
    static func swiftRuntimeDirectory() throws -> String {
        let maps = try Sys.readFile("/proc/self/maps")  // Foundation reads size-0 /proc files as empty
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            if path.hasSuffix("/libswiftCore.so") { return String(path.dropLast("/libswiftCore.so".count)) }
        }
        throw CgroupError("find libswiftCore.so in", path: "/proc/self/maps", message: "not linked dynamically")
    }

    @Test(.timeLimit(.minutes(2)))
    func smallSwiftExtensionRunsUnderSixteenMiBWithoutThrashing() throws {
        // A Swift-only program with 4 MiB of heap, runtime pages pre-warmed by "the supervisor"
        // (this process). Docs/cgroups.md has the cold-runtime numbers this guards against.
        let runtime = try Self.swiftRuntimeDirectory()
        let toolchainBin = runtime.replacingOccurrences(of: "/lib/swift/linux", with: "/bin")
        let swiftc = FileManager.default.isExecutableFile(atPath: toolchainBin + "/swiftc") ? toolchainBin + "/swiftc" : "swiftc"
        let dir = "/var/tmp/" + Names.unique("swiftext")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
        #if canImport(Glibc)
        import Glibc
        #endif
        var heap = [UInt8](repeating: 1, count: 4 << 20)
        var d: [String: Int] = [:]
        for i in 0..<300_000 { d["key\\(i % 4096)", default: 0] &+= i; heap[i % heap.count] &+= 1 }
        print(d.count, heap[7])
        """.write(toFile: dir + "/ext.swift", atomically: false, encoding: .utf8)
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = [swiftc, "-O", dir + "/ext.swift", "-o", dir + "/ext"]
        try build.run()
        build.waitUntilExit()
        try #require(build.terminationStatus == 0, "swiftc failed")

        try PageCache.warm(try PageCache.sharedObjects(in: runtime) + [dir + "/ext"])

        let live = try LiveV1("swift16")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: 16 * MiB))
        let child = try GatedChild("exec \(dir)/ext", stdout: dir + "/out")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        #expect(child.wait(timeout: 60) == .status(0))
        #expect(try Sys.readFile(dir + "/out") == "4096 2\n")
        let stat = try cg.memoryStat()
        print(
            "Swift extension under 16 MiB, runtime pre-warmed: peak \(try cg.memoryPeak()) bytes, refault_file \(stat["workingset_refault_file", default: -1]), pgmajfault \(stat["pgmajfault", default: -1])"
        )
        #expect(try cg.oomKillCount() == 0)
        // No thrashing: (almost) nothing evicted and read back, no major faults to speak of.
        #expect(stat["workingset_refault_file", default: 0] < 256, "\(stat)")
        #expect(stat["pgmajfault", default: 0] < 64, "\(stat)")
        #expect(try cg.memoryPeak() < 12 * MiB)
        try cg.remove()
    }
}

@Suite("footprint budget, live v1", .serialized)
struct FootprintBudgetTests {
    @Test func anonymousGrowthOverTheBudgetIsReported() throws {
        let live = try LiveV1("budget")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: .forFootprint(8 * MiB, fileAllowance: 56 * MiB))
        #expect(try cg.currentLimits().memoryMax == 64 * MiB)
        let w = try cg.makeFootprintWatcher(budget: 8 * MiB)
        #expect(try w.wait(timeout: .milliseconds(100)) == nil)
        let child = try GatedChild("v=$(head -c 16777216 /dev/zero | tr '\\0' a); sleep 60")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        let f = try w.wait(timeout: .seconds(10))
        #expect(f != nil && f! > 8 * MiB)
        try cg.killAll()
        try cg.remove()
    }

    @Test func cleanCacheOverTheBudgetIsNot() throws {
        let live = try LiveV1("budgetcache")
        defer { live.cleanup() }
        let cg = try live.manager.create(name: "ext", limits: .forFootprint(8 * MiB, fileAllowance: 56 * MiB))
        let big = makeScratchFile(mebibytes: 32, fill: 0x21)
        defer { unlink(big) }
        try PageCache.evict(big)
        let w = try cg.makeFootprintWatcher(budget: 8 * MiB, pollInterval: .milliseconds(20))
        let child = try GatedChild("cat \(big) > /dev/null; sleep 60")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        #expect(try eventually { try cg.memoryCurrent() > 24 * MiB })
        #expect(try w.wait(timeout: .milliseconds(500)) == nil)
        #expect(try cg.footprint() < 8 * MiB)
        try cg.killAll()
        try cg.remove()
    }
}
