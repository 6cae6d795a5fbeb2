import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One running extension's cgroup (one directory per hierarchy on v1, one on v2).
public final class ExtensionCgroup: Sendable, CustomStringConvertible {
    public let name: String
    public let version: CgroupVersion
    /// The limits it was created with (`CgroupLimits()` when opened as a leftover).
    public let limits: CgroupLimits
    /// Its directories: v1 memory then pids (when the pids hierarchy exists); v2 the one directory.
    public let paths: [String]

    /// Directory holding the memory files (v1 memory hierarchy, or the v2 directory).
    public let memoryDir: String
    /// Directory holding pids.max, if any.
    let pidsDir: String?
    /// For v2 kernels without memory.peak (< 5.19): the largest memory.current seen.
    private let trackedPeak = Mutex<Int64>(0)
    /// The high-water mark's file (v1 memory.max_usage_in_bytes, v2 memory.peak), read at
    /// every answer: kept open.
    private let peakFile: KeptNumberFile
    /// rmdir, or a fake tree's stand-in (tests).
    let removeDirectory: @Sendable (String) throws -> Bool

    init(
        name: String, version: CgroupVersion, limits: CgroupLimits, memoryDir: String, pidsDir: String?,
        removeDirectory: (@Sendable (String) throws -> Bool)? = nil
    ) {
        self.removeDirectory = removeDirectory ?? { try Sys.rmdir($0) }
        self.name = name
        self.version = version
        self.limits = limits
        self.memoryDir = memoryDir
        self.pidsDir = pidsDir
        switch version {
        case .v1: paths = [memoryDir] + (pidsDir.map { [$0] } ?? [])
        case .v2: paths = [memoryDir]
        }
        peakFile = KeptNumberFile(path: memoryDir + "/" + (version == .v1 ? "memory.max_usage_in_bytes" : "memory.peak"))
    }

    public var description: String { "\(version) cgroup \(name) at \(paths.joined(separator: ", "))" }

    func file(_ name: String) -> String { memoryDir + "/" + name }

    // MARK: Joining

    public var join: CgroupJoin {
        switch version {
        case .v1: .procsFiles(paths.map { $0 + "/tasks" })
        case .v2: .directory(memoryDir)
        }
    }

    /// Descriptors for the child to join with, opened close-on-exec; the caller closes them.
    /// v1: each `tasks`, `O_WRONLY` (the child writes "0"); v2: the directory,
    /// `O_PATH|O_DIRECTORY`, for `clone3(CLONE_INTO_CGROUP)`.
    ///
    /// v1 joins through `tasks`, not `cgroup.procs`: "0" there moves only the writing thread
    /// (the child's only one, so the whole process), and for that the kernel does not take
    /// `cgroup_threadgroup_rwsem` for writing. Writing `cgroup.procs` does, and the first such
    /// write after a quiet spell waits for an RCU grace period, milliseconds where `tasks`
    /// takes microseconds (Docs/launch-sequence.md, section 5, has the figures).
    public func openJoinFDs() throws -> [Int32] {
        var fds: [Int32] = []
        do {
            switch version {
            case .v1:
                for p in paths { fds.append(try Sys.open(p + "/tasks", O_WRONLY)) }
            case .v2:
                fds.append(try Sys.open(memoryDir, Sys.O_PATH | Sys.O_DIRECTORY))
            }
        } catch {
            fds.forEach(Sys.close)
            throw error
        }
        return fds
    }

    /// Moves a running process (all its threads) in, from the parent side.
    public func addProcess(_ pid: Int32) throws {
        for p in paths { try Sys.writeFile(p + "/cgroup.procs", String(pid)) }
    }

    // MARK: Memory

    /// Bytes charged now (anon, page cache, kernel memory).
    public func memoryCurrent() throws -> Int64 {
        let path = file(version == .v1 ? "memory.usage_in_bytes" : "memory.current")
        let v = try CgroupParse.number(try Sys.readFile(path), path: path)
        trackedPeak.withLock { $0 = max($0, v) }
        return v
    }

    /// Largest charge since creation. v1 `memory.max_usage_in_bytes`; v2 `memory.peak`
    /// when the kernel has it (5.19+), else the largest `memory.current` this object has read.
    public func memoryPeak() throws -> Int64 {
        switch version {
        case .v1:
            return try peakFile.read()
        case .v2:
            do {
                return try peakFile.read()
            } catch let error as CgroupError where error.errno == .noSuchFileOrDirectory {
                let now = try memoryCurrent()
                return trackedPeak.withLock { max($0, now) }
            }
        }
    }

    /// `memory.stat` as numbers (keys as the kernel names them; they differ between versions).
    public func memoryStat() throws -> [String: Int64] {
        CgroupParse.keyed(try Sys.readFile(file("memory.stat")))
    }

    /// The footprint with its parts. See `Footprint`.
    public func footprintBreakdown() throws -> Footprint {
        Footprint(stat: try memoryStat(), version: version)
    }

    /// The Appex footprint in bytes: anon + shmem + dirty + writeback, from `memory.stat`.
    public func footprint() throws -> Int64 {
        try footprintBreakdown().total
    }

    /// The limits as the kernel holds them now (nil = unlimited).
    public func currentLimits() throws -> CgroupLimits {
        var l = CgroupLimits(swapOff: false)
        switch version {
        case .v1:
            l.memoryMax = try CgroupParse.limit(try Sys.readFile(file("memory.limit_in_bytes")))
            l.memoryHigh = try CgroupParse.limit(try Sys.readFile(file("memory.soft_limit_in_bytes")))
            let swappiness = try CgroupParse.number(try Sys.readFile(file("memory.swappiness")))
            l.swapOff = swappiness == 0
        case .v2:
            l.memoryMax = try CgroupParse.limit(try Sys.readFile(file("memory.max")))
            l.memoryHigh = try CgroupParse.limit(try Sys.readFile(file("memory.high")))
            let swap = file("memory.swap.max")
            // No swap accounting (no file) means the cgroup cannot swap by itself either.
            l.swapOff = Sys.exists(swap) ? (try CgroupParse.limit(try Sys.readFile(swap)) == 0) : true
        }
        if let pidsDir, Sys.exists(pidsDir + "/pids.max") {
            l.pidsMax = try CgroupParse.limit(try Sys.readFile(pidsDir + "/pids.max")).map { Int($0) }
        }
        return l
    }

    /// Kernel OOM kills inside this cgroup so far. v1 `memory.oom_control` key `oom_kill`;
    /// v2 `memory.events` key `oom_kill`.
    public func oomKillCount() throws -> Int {
        let path = file(version == .v1 ? "memory.oom_control" : "memory.events")
        guard let v = CgroupParse.keyed(try Sys.readFile(path))["oom_kill"] else {
            throw CgroupError("read oom_kill from", path: path, message: "no oom_kill key")
        }
        return Int(v)
    }

    /// Whether this cgroup's charge reached its own hard limit, as opposed to an ancestor's:
    /// an OOM kill inside a cgroup whose peak stayed under its own limit came from an
    /// ancestor's limit (the memory budget's). The kernel OOM-kills at a limit only once
    /// reclaim cannot make room for one more charge, so the peak is then within a charge
    /// (`slack` covers a huge page) of it. Not `failcnt`: with memsw limited too, the charge
    /// fails on memsw first, and current kernels count neither.
    public func reachedOwnLimit(slack: Int64 = 4 << 20) -> Bool {
        guard let limit = (try? currentLimits())?.memoryMax ?? limits.memoryMax else { return false }
        guard let peak = try? memoryPeak() else { return true }
        return peak + slack >= limit
    }

    /// v2 `memory.events` (low, high, max, oom, oom_kill, oom_group_kill). v1 has no such file:
    /// returns `memory.oom_control` keys plus `max` = `memory.failcnt` + `memory.memsw.failcnt`.
    public func memoryEvents() throws -> [String: Int64] {
        switch version {
        case .v2:
            return CgroupParse.keyed(try Sys.readFile(file("memory.events")))
        case .v1:
            var e = CgroupParse.keyed(try Sys.readFile(file("memory.oom_control")))
            // With memsw limited too, the charge fails on the memsw counter first, and current
            // kernels do not count that in memsw.failcnt either: "max" is a lower bound on v1.
            var failures = try CgroupParse.number(try Sys.readFile(file("memory.failcnt")))
            if let memsw = try? Sys.readFile(file("memory.memsw.failcnt")) {
                failures += try CgroupParse.number(memsw)
            }
            e["max"] = failures
            return e
        }
    }

    /// Event-driven OOM-kill detection. Read the baseline before arming, so a kill that
    /// lands in between is seen by the first `wait` rather than lost.
    public func makeOOMWatcher() throws -> OOMWatcher {
        let baseline = try oomKillCount()
        let source: EventSource
        switch version {
        case .v1:
            // eventfd registered on memory.oom_control via cgroup.event_control.
            source = try EventSource.v1Event(dir: memoryDir, control: "memory.oom_control", argument: nil)
        case .v2:
            source = try EventSource.inotify(file("memory.events"))
        }
        return OOMWatcher(cgroup: self, source: source, baseline: baseline)
    }

    /// A watcher that fires when usage crosses `bytes` (the soft-limit warning). See
    /// `makeThresholdWatcher(lines:)`.
    public func makeThresholdWatcher(bytes: Int64) throws -> ThresholdWatcher {
        try makeThresholdWatcher(lines: [bytes])
    }

    /// One watcher for several lines: it fires when usage crosses any of them, either way,
    /// and the reader reads the usage again to know where it is. v1: one eventfd with a
    /// `memory.usage_in_bytes` threshold registered per line (the registrations made in
    /// parallel). v2: a timerfd that reads `memory.current` sooner the nearer the next line
    /// is (`UsageLines`); `memory.events` moves only at the cgroup's own `memory.high` and
    /// `memory.max`, not at lines below them. `bytes` of the result is the lowest line.
    public func makeThresholdWatcher(lines: [Int64]) throws -> ThresholdWatcher {
        guard let lowest = lines.min() else {
            throw CgroupError("watch usage of", path: memoryDir, errno: .invalidArgument, message: "no lines")
        }
        switch version {
        case .v1:
            let source = try EventSource.v1Events(
                dir: memoryDir, control: "memory.usage_in_bytes",
                arguments: lines.map { String($0) })
            return ThresholdWatcher(cgroup: self, source: source, bytes: lowest)
        case .v2:
            let poller = try UsagePoller(path: file("memory.current"), lines: lines)
            return ThresholdWatcher(cgroup: self, source: poller.source, bytes: lowest, poller: poller)
        }
    }

    /// v2: a PSI trigger on this cgroup's own `memory.pressure` (its tasks stalled on memory,
    /// reclaim at its limits included), with the window rounded up to the kernel's 2 s
    /// granularity when the first is refused. v1 has no per-cgroup PSI: nil.
    public func makePressureMonitor(
        kind: MemoryPressureMonitor.Kind, stall: Duration,
        window: Duration
    ) throws -> MemoryPressureMonitor? {
        guard version == .v2 else { return nil }
        return try MemoryPressureMonitor.firstAccepted(paths: [file("memory.pressure")], kind: kind, stall: stall, window: window)
    }

    // MARK: Processes

    /// Processes (thread-group ids) in the cgroup, across all its hierarchies.
    public func pids() throws -> [Int32] {
        var all = Set<Int32>()
        for p in paths {
            let procs = p + "/cgroup.procs"
            do {
                all.formUnion(CgroupParse.pids(try Sys.readFile(procs)))
            } catch let e as CgroupError where e.errno == .noSuchFileOrDirectory {
                continue  // already removed
            }
        }
        return all.sorted()
    }

    /// Kills every process in the cgroup and waits (bounded) until it is empty.
    /// v2 with `cgroup.kill` (5.14+) kills atomically, forks included; otherwise SIGKILL
    /// every listed pid in rounds until none is left, which also catches children forked
    /// meanwhile (the pids limit bounds how many there can be).
    public func killAll() throws {
        let deadline = MonotonicTime.now + 5_000_000_000
        let killFile = file("cgroup.kill")
        if version == .v2 && Sys.exists(killFile) {
            try Sys.writeFile(killFile, "1")
        }
        var delay = 1
        while true {
            let pids = try pids()
            if pids.isEmpty { return }
            for pid in pids where pid > 0 {
                _ = Glibc.kill(pid, SIGKILL)
            }
            if MonotonicTime.now > deadline {
                throw CgroupError(
                    "kill all processes in", path: memoryDir, errno: .resourceBusy,
                    message: "still populated after 5 s: \(pids)")
            }
            Sys.sleep(milliseconds: delay)
            delay = min(delay * 2, 50)
        }
    }

    /// Removes the cgroup from every hierarchy; already-removed directories are fine.
    /// Fails with EBUSY while processes remain: call `killAll()` first. Retries briefly,
    /// since a killed process leaves the cgroup a moment after it is reaped.
    public func remove() throws {
        for p in paths.reversed() {
            var attempt = 0
            while true {
                do {
                    _ = try removeDirectory(p)
                    break
                } catch let e as CgroupError where e.errno == .resourceBusy && attempt < 100 {
                    attempt += 1
                    Sys.sleep(milliseconds: 10)
                }
            }
        }
    }

    /// Whether any of its directories still exists.
    public var exists: Bool { paths.contains(where: Sys.isDirectory) }
}
