import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Creates and finds Appex's cgroups.
///
/// Layout: one parent cgroup (default `appex`) holding one child per running extension.
/// v1: `<memory root>/<parent>/<name>` and `<pids root>/<parent>/<name>`, at the hierarchy
/// roots. v2: `<unified root>/<parent>/<name>` with `memory` and `pids` enabled in the
/// parent's `cgroup.subtree_control`.
public struct CgroupManager: Sendable, CustomStringConvertible {
    public let version: CgroupVersion
    public let roots: CgroupRoots
    public let parentName: String
    /// Called after this manager makes a cgroup directory. Tests use it to populate a
    /// fake tree the way cgroupfs populates a new directory.
    let didMakeDirectory: (@Sendable (String) throws -> Void)?
    /// Replaces rmdir for a fake tree, whose directories hold regular files.
    let removeDirectory: (@Sendable (String) throws -> Bool)?

    /// For tests and explicit configuration: drive the hierarchies at `roots`.
    /// `parentName` may be nested (`a/b`); each component is validated like a cgroup name.
    public init(version: CgroupVersion, roots: CgroupRoots, parentName: String = "appex") throws {
        try self.init(version: version, roots: roots, parentName: parentName, didMakeDirectory: nil, removeDirectory: nil)
    }

    init(
        version: CgroupVersion, roots: CgroupRoots, parentName: String,
        didMakeDirectory: (@Sendable (String) throws -> Void)?,
        removeDirectory: (@Sendable (String) throws -> Bool)?
    ) throws {
        for part in parentName.split(separator: "/", omittingEmptySubsequences: false) {
            try Self.validate(name: String(part))
        }
        switch version {
        case .v1 where roots.memory == nil:
            throw CgroupError("configure", path: roots.description, errno: .invalidArgument, message: "v1 needs a memory root")
        case .v2 where roots.unified == nil:
            throw CgroupError("configure", path: roots.description, errno: .invalidArgument, message: "v2 needs a unified root")
        default: break
        }
        self.version = version
        self.roots = roots
        self.parentName = parentName
        self.didMakeDirectory = didMakeDirectory
        self.removeDirectory = removeDirectory
    }

    public var description: String { "CgroupManager(\(version), \(roots), parent \(parentName))" }

    /// Cgroup names are one path component: not empty, not `.` or `..`, no `/` or NUL,
    /// and not a name that cgroupfs could take for a control file or reserve.
    /// On the UTF-8 bytes, in one plain loop: `String.contains(String)` comes from the
    /// string-processing library, and generic helpers such as `zip` or `starts(with:)` make
    /// the runtime look conformances up by scanning the whole executable, the first time in
    /// every `appex run`.
    public static func validate(name: String) throws {
        var slash = false, nul = false, dots = false, newline = false
        var previous: UInt8 = 0
        for b in name.utf8 {
            if b == UInt8(ascii: "/") { slash = true }
            if b == 0 { nul = true }
            if b == UInt8(ascii: "\n") { newline = true }
            if b == UInt8(ascii: "."), previous == b { dots = true }
            previous = b
        }
        let bad: String?
        if name.isEmpty {
            bad = "empty"
        } else if name == "." || name == ".." {
            bad = "a dot path"
        } else if slash {
            bad = "contains '/'"
        } else if nul {
            bad = "contains NUL"
        } else if dots {
            bad = "contains '..'"
        } else if name.utf8.count > 200 {
            bad = "longer than 200 bytes"
        } else if name.hasPrefix("cgroup.") {
            bad = "reserved cgroup. prefix"
        } else if newline {
            bad = "contains a newline"
        } else {
            bad = nil
        }
        if let bad {
            throw CgroupError("validate cgroup name", path: name, errno: .invalidArgument, message: bad)
        }
    }

    // MARK: Detection

    /// What the running system offers, from /proc/self/mountinfo.
    public struct SystemProbe: Sendable, Equatable {
        /// Mount point of the cgroup2 hierarchy, if mounted.
        public var unifiedMount: String?
        /// Controllers available at the cgroup2 root (`cgroup.controllers`).
        public var unifiedControllers: Set<String> = []
        public var memoryMount: String?
        public var pidsMount: String?
        /// This process's cgroup2 path (the `0::` line of /proc/self/cgroup).
        public var ownUnifiedPath: String?

        /// Whether a v2 memory controller exists (what `detect` asks on every run, without
        /// building `v2MemoryReason`'s message).
        public var hasV2Memory: Bool { unifiedMount != nil && unifiedControllers.contains("memory") }

        /// Whether a v2 memory controller exists, and if not, why.
        public var v2MemoryReason: String? {
            guard let m = unifiedMount else { return "no cgroup2 hierarchy is mounted" }
            if !hasV2Memory {
                let list = unifiedControllers.sorted().joined(separator: " ")
                return "cgroup2 at \(m) has no memory controller (cgroup.controllers: \"\(list)\"); memory is bound to a v1 hierarchy"
                    + (memoryMount.map { " at \($0)" } ?? "")
            }
            return nil
        }
    }

    public static func probe(mountinfo: String = "/proc/self/mountinfo") throws -> SystemProbe {
        var p = SystemProbe()
        // Read as bytes, not Characters: this runs on every `appex run`, and grapheme
        // breaking loads its tables on first use.
        for line in try Sys.readBytes(mountinfo).split(separator: UInt8(ascii: "\n")) {
            // "<id> <parent> <maj:min> <root> <mount point> <opts> [optional...] - <fstype> <source> <super opts>"
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count > 4,
                let dash = fields.firstIndex(where: { $0.count == 1 && $0.first == UInt8(ascii: "-") }),
                dash > 4, dash + 1 < fields.count
            else { continue }
            let fstype = fields[dash + 1]
            let isV2 = fstype.elementsEqual("cgroup2".utf8)
            guard isV2 || fstype.elementsEqual("cgroup".utf8) else { continue }
            let mountPoint = unescapeMount(fields[4])
            if isV2 {
                if p.unifiedMount == nil { p.unifiedMount = mountPoint }
                continue
            }
            let superOpts = dash + 3 < fields.count ? fields[dash + 3].split(separator: UInt8(ascii: ",")) : []
            func has(_ option: String) -> Bool { superOpts.contains { $0.elementsEqual(option.utf8) } }
            if p.memoryMount == nil, has("memory") { p.memoryMount = mountPoint }
            if p.pidsMount == nil, has("pids") { p.pidsMount = mountPoint }
        }
        if let m = p.unifiedMount {
            p.unifiedControllers = CgroupParse.controllers((try? Sys.readFile(m + "/cgroup.controllers")) ?? "")
        }
        if let text = try? Sys.readFile("/proc/self/cgroup") {
            for line in text.split(separator: "\n") where line.hasPrefix("0::") {
                p.ownUnifiedPath = String(line.dropFirst(3))
            }
        }
        return p
    }

    /// mountinfo escapes space, tab, newline and backslash as three octal digits.
    static func unescapeMount(_ field: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(field.count)
        var i = field.startIndex
        while i < field.endIndex {
            let c = field[i]
            if c == UInt8(ascii: "\\"), field.endIndex - i >= 4,
                let v = octal(field[(i + 1)...(i + 3)])
            {
                out.append(v)
                i += 4
            } else {
                out.append(c)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
        var value = 0
        for d in digits {
            guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "7") else { return nil }
            value = value * 8 + Int(d - UInt8(ascii: "0"))
        }
        return value <= 255 ? UInt8(value) : nil
    }

    /// The real system: v2 when cgroup2 has a usable memory controller (at the root, or
    /// in the delegated subtree this process runs in); otherwise v1 memory (+ pids).
    public static func detect(parentName: String = "appex") throws -> CgroupManager {
        if let roots = standardV1Roots(parentName: parentName) {
            return try CgroupManager(version: .v1, roots: roots, parentName: parentName)
        }
        let p = try probe()
        if let mount = p.unifiedMount, p.hasV2Memory {
            let base = v2Base(mount: mount, ownPath: p.ownUnifiedPath)
            return try CgroupManager(version: .v2, roots: .v2(base), parentName: parentName)
        }
        if let memory = p.memoryMount {
            return try CgroupManager(version: .v1, roots: .v1(memory: memory, pids: p.pidsMount), parentName: parentName)
        }
        throw CgroupError(
            "detect cgroups", path: "/proc/self/mountinfo", errno: .noSuchFileOrDirectory,
            message: "no cgroup memory controller (v1 or v2) is mounted")
    }

    /// The v2 base: a delegated subtree (systemd `Delegate=yes`), i.e. our own cgroup when we
    /// may write it and it offers memory; otherwise the root of the hierarchy. A process already
    /// parked in the subtree's `supervisor` leaf (by `enableControllers`, or inherited from the
    /// supervisor that started it) belongs to the subtree above the leaf, not to a new one below it.
    static func v2Base(mount: String, ownPath: String?) -> String {
        guard var own = ownPath, own != "/" else { return mount }
        if own.hasSuffix("/supervisor") { own.removeLast("/supervisor".count) }
        guard !own.isEmpty else { return mount }
        let dir = mount + own
        let controllers = CgroupParse.controllers((try? Sys.readFile(dir + "/cgroup.controllers")) ?? "")
        return controllers.contains("memory") && Glibc.access(dir, W_OK) == 0 ? dir : mount
    }

    // MARK: Layout

    /// The parent directory in each hierarchy (v1: memory, then pids if present).
    public var parentPaths: [String] {
        switch version {
        case .v1: return [roots.memory! + "/" + parentName] + (roots.pids.map { [$0 + "/" + parentName] } ?? [])
        case .v2: return [roots.unified! + "/" + parentName]
        }
    }

    func handle(name: String, limits: CgroupLimits) -> ExtensionCgroup {
        handle(relativePath: parentName + "/" + name, name: name, limits: limits, removeDirectory: removeDirectory)
    }

    /// A handle on the cgroup at `relativePath` below each hierarchy's root.
    func handle(
        relativePath: String, name: String, limits: CgroupLimits,
        removeDirectory: (@Sendable (String) throws -> Bool)?
    ) -> ExtensionCgroup {
        switch version {
        case .v1:
            return ExtensionCgroup(
                name: name, version: .v1, limits: limits,
                memoryDir: roots.memory! + "/" + relativePath,
                pidsDir: roots.pids.map { $0 + "/" + relativePath },
                removeDirectory: removeDirectory)
        case .v2:
            let dir = roots.unified! + "/" + relativePath
            return ExtensionCgroup(
                name: name, version: .v2, limits: limits, memoryDir: dir, pidsDir: dir,
                removeDirectory: removeDirectory)
        }
    }

    private func makeDirectory(_ path: String) throws -> Bool {
        let made = try Sys.mkdir(path)
        if made { try didMakeDirectory?(path) }
        return made
    }

    /// Makes the parent cgroup(s) if missing and, on v2, delegates memory and pids to
    /// the extensions' level. Idempotent; `create` calls it.
    public func prepare() throws {
        switch version {
        case .v1:
            let memoryRoot = roots.memory!
            var dir = memoryRoot
            // String(part): adding a Substring goes through a generic append whose first use
            // costs a conformance scan in every `appex run`.
            for part in parentName.split(separator: "/") {
                dir += "/" + String(part)
                if try makeDirectory(dir) {
                    // Hierarchical accounting so the parent sees its children (always on since 5.x;
                    // older kernels need it before any child exists).
                    let uh = dir + "/memory.use_hierarchy"
                    if (try? Sys.readFile(uh).trimmingWhitespace) == "0" { try? Sys.writeFile(uh, "1") }
                }
            }
            if let pidsRoot = roots.pids {
                var d = pidsRoot
                for part in parentName.split(separator: "/") {
                    d += "/" + String(part)
                    _ = try makeDirectory(d)
                }
            }
        case .v2:
            var dir = roots.unified!
            try enableControllers(in: dir)
            for part in parentName.split(separator: "/") {
                dir += "/" + String(part)
                _ = try makeDirectory(dir)
                try enableControllers(in: dir)
            }
        }
    }

    /// v2: enable memory and pids for the children of `dir`, as far as `dir` offers them.
    /// A non-root cgroup holding processes cannot delegate (the "no internal processes"
    /// rule, EBUSY): then its processes move to a `supervisor` leaf, as systemd advises
    /// for delegated services.
    func enableControllers(in dir: String) throws {
        let available = CgroupParse.controllers(try Sys.readFile(dir + "/cgroup.controllers"))
        let enabled = CgroupParse.controllers(try Sys.readFile(dir + "/cgroup.subtree_control"))
        let wanted = ["memory", "pids"].filter { available.contains($0) && !enabled.contains($0) }
        guard !wanted.isEmpty else { return }
        let line = wanted.map { "+" + $0 }.joined(separator: " ")
        do {
            try Sys.writeFile(dir + "/cgroup.subtree_control", line)
        } catch {
            // The root cgroup is exempt from the rule, so EBUSY there is a real error.
            guard let e = error as? CgroupError, e.errno == .resourceBusy, dir != roots.unified! || Sys.exists(dir + "/cgroup.type") else {
                throw error
            }
            let leaf = dir + "/supervisor"
            _ = try makeDirectory(leaf)
            for pid in CgroupParse.pids(try Sys.readFile(dir + "/cgroup.procs")) {
                try? Sys.writeFile(leaf + "/cgroup.procs", String(pid))
            }
            try Sys.writeFile(dir + "/cgroup.subtree_control", line)
        }
    }

    // MARK: Extensions

    /// Makes the cgroup for one extension and applies `limits` before anything joins it.
    /// Fails with EEXIST if a cgroup of that name exists (use `cleanupLeftovers` at start).
    public func create(name: String, limits: CgroupLimits) throws -> ExtensionCgroup {
        try Self.validate(name: name)
        if version == .v2 && name == "supervisor" {
            // Reserved for the supervisor's own leaf in a delegated subtree.
            throw CgroupError("validate cgroup name", path: name, errno: .invalidArgument, message: "reserved on v2")
        }
        let cg = handle(name: name, limits: limits)
        // The parent may vanish between making it and making the child: whoever removes
        // parents (another run's cleanup, a sweep) removes them when empty, which ours still
        // is. ENOENT then means "make the parent again", a bounded number of times.
        var attempt = 0
        while true {
            try prepare()
            var made: [String] = []
            do {
                for p in cg.paths {
                    guard try makeDirectory(p) else {
                        throw CgroupError("create cgroup", path: p, errno: .fileExists)
                    }
                    made.append(p)
                }
                try apply(limits, to: cg)
                return cg
            } catch let error as CgroupError where error.errno == .noSuchFileOrDirectory && attempt < 3 {
                for p in made.reversed() { _ = try? (removeDirectory ?? { try Sys.rmdir($0) })(p) }
                attempt += 1
            } catch {
                for p in made.reversed() { _ = try? (removeDirectory ?? { try Sys.rmdir($0) })(p) }
                throw error
            }
        }
    }

    func apply(_ l: CgroupLimits, to cg: ExtensionCgroup) throws {
        switch version {
        case .v1:
            let d = cg.memoryDir
            if l.swapOff {
                try Sys.writeFile(d + "/memory.swappiness", "0")
            }
            if let max = l.memoryMax {
                // memsw must stay >= the memory limit: memory first, then memsw.
                try Sys.writeFile(d + "/memory.limit_in_bytes", String(max))
                if l.swapOff && Sys.exists(d + "/memory.memsw.limit_in_bytes") {
                    try Sys.writeFile(d + "/memory.memsw.limit_in_bytes", String(max))
                }
            }
            if let high = l.memoryHigh {
                try Sys.writeFile(d + "/memory.soft_limit_in_bytes", String(high))
            }
            if let pids = l.pidsMax, let pd = cg.pidsDir {
                try Sys.writeFile(pd + "/pids.max", String(pids))
            }
        case .v2:
            let d = cg.memoryDir
            if let max = l.memoryMax { try Sys.writeFile(d + "/memory.max", String(max)) }
            if let high = l.memoryHigh { try Sys.writeFile(d + "/memory.high", String(high)) }
            // No memory.swap.max means no swap accounting: nothing to turn off.
            if l.swapOff && Sys.exists(d + "/memory.swap.max") {
                try Sys.writeFile(d + "/memory.swap.max", "0")
            }
            // An extension is one unit, as on iOS: an OOM kill takes all of its processes.
            if Sys.exists(d + "/memory.oom.group") {
                try Sys.writeFile(d + "/memory.oom.group", "1")
            }
            if let pids = l.pidsMax { try Sys.writeFile(d + "/pids.max", String(pids)) }
        }
    }

    /// A handle on an existing extension cgroup (nil if it does not exist).
    public func existing(name: String) throws -> ExtensionCgroup? {
        try Self.validate(name: name)
        let cg = handle(name: name, limits: CgroupLimits(swapOff: false))
        return cg.exists ? cg : nil
    }

    /// Names of the extension cgroups under the parent, across hierarchies.
    public func list() throws -> [String] {
        var names = Set<String>()
        for p in parentPaths {
            names.formUnion(try Sys.subdirectories(p))
        }
        // v2 delegation may have parked the supervisor here; it is not an extension.
        if version == .v2 { names.remove("supervisor") }
        return names.sorted()
    }

    /// Removes cgroups a crashed supervisor left behind: kills their processes, then
    /// removes them. Call at start, before creating any. Returns the names removed.
    public func cleanupLeftovers() throws -> [String] {
        var removed: [String] = []
        for name in try list() {
            let cg = handle(name: name, limits: CgroupLimits(swapOff: false))
            try cg.killAll()
            try cg.remove()
            removed.append(name)
        }
        return removed
    }

    /// Removes the (empty) parent cgroup(s), innermost first; gone is fine.
    public func removeParent() throws {
        let parts = parentName.split(separator: "/").map(String.init)
        let rootList: [String] = version == .v1 ? [roots.memory!] + (roots.pids.map { [$0] } ?? []) : [roots.unified!]
        for root in rootList {
            for depth in stride(from: parts.count, through: 1, by: -1) {
                let dir = root + "/" + parts.prefix(depth).joined(separator: "/")
                _ = try (removeDirectory ?? { try Sys.rmdir($0) })(dir)
            }
        }
    }
}
