#if canImport(Glibc)
import Glibc
#endif

// The cache's payload: a compiled PolicySet in a compact binary form (little-endian integers,
// length-prefixed UTF-8), written and read field by field. Decoding goes through the types'
// memberwise initialisers, so a field added to a policy type does not compile until it is
// added here too; and the cache key includes the executable's identity (PolicyCache), so a
// cache written by another build of this code is never read. JSON through Codable was tried
// first: 2.7 ms to decode the shipped set, most of a parse; this takes tens of µs.

package struct CacheWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func int(_ v: Int64) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
    package mutating func int(_ v: Int) { int(Int64(v)) }
    package mutating func string(_ s: String) {
        let utf8 = Array(s.utf8)
        int(utf8.count)
        bytes += utf8
    }
    package mutating func strings(_ list: [String]) {
        int(list.count)
        for s in list { string(s) }
    }
    package mutating func optional(_ s: String?) {
        bytes.append(s == nil ? 0 : 1)
        if let s { string(s) }
    }
    package mutating func blob(_ b: [UInt8]) {
        int(b.count)
        bytes += b
    }
    /// What `body` writes, prefixed by its length (CacheReader.record, .skip).
    mutating func record(_ body: (inout CacheWriter) -> Void) {
        var inner = CacheWriter()
        body(&inner)
        blob(inner.bytes)
    }
}

/// Reads what CacheWriter wrote; any overrun, bad length or bad value is `nil`, never a trap
/// (the file is ours, but a truncated write or a disk error must only cost a parse).
package struct CacheReader {
    package let bytes: [UInt8]
    package var at = 0

    package init(_ bytes: [UInt8], from start: Int) {
        self.bytes = bytes
        at = start
    }

    package var atEnd: Bool { at == bytes.count }

    package mutating func int64() -> Int64? {
        guard bytes.count - at >= 8 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
        at += 8
        return Int64(bitPattern: v)
    }
    package mutating func int() -> Int? { int64().flatMap { Int(exactly: $0) } }
    package mutating func count() -> Int? {
        guard let n = int(), n >= 0, n <= bytes.count - at else { return nil }
        return n
    }
    package mutating func string() -> String? {
        guard let n = count() else { return nil }
        defer { at += n }
        return String(validating: bytes[at..<at + n], as: UTF8.self)
    }
    package mutating func blob() -> [UInt8]? {
        guard let n = count() else { return nil }
        defer { at += n }
        return Array(bytes[at..<at + n])
    }
    /// Passes over a length-prefixed field (a string or a blob) without reading it; false on
    /// a bad length.
    package mutating func skip() -> Bool {
        guard let n = count() else { return false }
        at += n
        return true
    }
    /// Whether the next length-prefixed string is `utf8`, compared as bytes (no String is
    /// made); nil on a bad length. Reads past it either way.
    package mutating func stringEquals(_ utf8: [UInt8]) -> Bool? {
        guard let n = count() else { return nil }
        defer { at += n }
        guard n == utf8.count else { return false }
        for i in 0..<n where bytes[at + i] != utf8[i] { return false }
        return true
    }
    /// Decodes one length-prefixed record with `decode`, which must use exactly its bytes.
    mutating func record<T>(_ decode: (inout CacheReader) -> T?) -> T? {
        guard let n = count() else { return nil }
        let end = at + n
        guard let value = decode(&self), at == end else { return nil }
        return value
    }
    package mutating func strings() -> [String]? {
        guard let n = count() else { return nil }
        var out: [String] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            guard let s = string() else { return nil }
            out.append(s)
        }
        return out
    }
    package mutating func optional() -> String?? {
        guard at < bytes.count else { return nil }
        at += 1
        switch bytes[at - 1] {
        case 0: return .some(nil)
        case 1: return string().map { .some($0) }
        default: return nil
        }
    }
}

extension PolicySet {
    // Layout: directories, defaults, the distinct policies, the identifier table, the syscall
    // groups. Each policy and each group is a length-prefixed record, so a reader that wants
    // one extension point (`appex run`) passes over the others without decoding them.
    func cacheEncoded() -> [UInt8] {
        var w = CacheWriter()
        w.strings(directories)
        w.record { defaults.encode(into: &$0) }
        // Each distinct policy once, then every identifier with the index of its policy: a
        // file names several identifiers (Safari's three, the intents' three), and decoding a
        // copy per identifier was most of a cache hit.
        let points = byExtensionPoint.keys.sorted()
        var distinct: [ExtensionPointPolicy] = []
        var index: [Int] = []
        for p in points {
            let policy = byExtensionPoint[p]!
            if let i = distinct.firstIndex(of: policy) {
                index.append(i)
            } else {
                index.append(distinct.count)
                distinct.append(policy)
            }
        }
        w.int(distinct.count)
        for policy in distinct { w.record { policy.encode(into: &$0) } }
        w.int(points.count)
        for (p, i) in zip(points, index) {
            w.string(p)
            w.int(i)
        }
        let names = groups.keys.sorted()
        w.int(names.count)
        for name in names {
            w.string(name)
            w.record { groups[name]!.encode(into: &$0) }
        }
        return w.bytes
    }

    /// The whole set.
    static func cacheDecoded(_ r: inout CacheReader) -> PolicySet? {
        cacheDecoded(&r, only: nil)
    }

    /// With `point`: only what `narrowed(to: point)` keeps (its policy, the defaults, the
    /// groups that policy names); the other records are passed over, not decoded. Either way
    /// the whole payload's framing is checked, so a truncated file is nil.
    static func cacheDecoded(_ r: inout CacheReader, only point: String?) -> PolicySet? {
        guard let directories = r.strings(), let defaults = r.record(ExtensionPointPolicy.decode), let d = r.count() else { return nil }
        // Where each distinct policy's record starts; decoded now for the whole set, on
        // demand for one point.
        var starts: [Int] = []
        var distinct: [ExtensionPointPolicy] = []
        starts.reserveCapacity(d)
        for _ in 0..<d {
            starts.append(r.at)
            if point == nil {
                guard let policy = r.record(ExtensionPointPolicy.decode) else { return nil }
                distinct.append(policy)
            } else if !r.skip() {
                return nil
            }
        }
        guard let n = r.count() else { return nil }
        var byPoint: [String: ExtensionPointPolicy] = [:]
        if let point {
            let wanted = Array(point.utf8)
            var found: Int?
            for _ in 0..<n {
                guard let same = r.stringEquals(wanted), let i = r.int64(), i >= 0, i < d else { return nil }
                if same { found = Int(i) }
            }
            if let found {
                var at = CacheReader(r.bytes, from: starts[found])
                guard let policy = at.record(ExtensionPointPolicy.decode) else { return nil }
                byPoint[point] = policy
            }
        } else {
            byPoint.reserveCapacity(n)
            for _ in 0..<n {
                guard let name = r.string(), let i = r.int64(), i >= 0, i < d else { return nil }
                byPoint[name] = distinct[Int(i)]
            }
        }
        // The groups: all of them, or those the chosen policy names.
        let named: [[UInt8]]? = point.map { p in
            (byPoint[p] ?? defaults).deniedSyscalls.map { Array($0.group.utf8) }
        }
        guard let m = r.count() else { return nil }
        var groups: [String: SyscallGroup] = [:]
        for _ in 0..<m {
            // The name is read ahead on a copy, then passed over: the record holds it too.
            let wanted =
                named.map { names in
                    names.contains {
                        var probe = r
                        return probe.stringEquals($0) == true
                    }
                } ?? true
            guard r.skip() else { return nil }
            if wanted {
                guard let group = r.record(SyscallGroup.decode) else { return nil }
                groups[group.name] = group
            } else if !r.skip() {
                return nil
            }
        }
        guard r.atEnd else { return nil }
        return PolicySet(defaults: defaults, byExtensionPoint: byPoint, groups: groups, directories: directories)
    }
}

extension ExtensionPointPolicy {
    func encode(into w: inout CacheWriter) {
        w.strings(extensionPoints)
        w.string(title)
        for size in [
            memory.activeHardLimit, memory.activeSoftLimit, memory.inactiveHardLimit,
            memory.inactiveSoftLimit, memory.pageCacheAllowance,
        ] { w.int(size.bytes) }
        w.string(memory.source)
        w.int(jetsamBand.value)
        w.int(idleBand.value)
        for d in [launchDeadline, requestTimeout, idleTimeout, pingInterval, unresponsiveTimeout, idlePingInterval] {
            w.int(d.components.seconds)
            w.int(d.components.attoseconds)
        }
        w.int(maxInstances)
        w.int(pidsLimit)
        w.int(openFilesLimit)
        w.strings(grantableEntitlements)
        w.strings(readOnlyPaths)
        w.string(network.rawValue)
        w.int(deniedSyscalls.count)
        for denial in deniedSyscalls {
            w.string(denial.group)
            denial.action.encode(into: &w)
        }
        w.strings(files)
        w.int(transfers.allowed ? 1 : 0)
        w.int(transfers.concurrent)
        w.int(transfers.pending)
        w.int(transfers.quotaBytes)
        w.int(transfers.timeLimit.components.seconds)
    }

    static func decode(_ r: inout CacheReader) -> ExtensionPointPolicy? {
        guard let points = r.strings(), let title = r.string() else { return nil }
        var sizes: [ByteSize] = []
        for _ in 0..<5 {
            guard let b = r.int64() else { return nil }
            sizes.append(ByteSize(bytes: b))
        }
        guard let source = r.string(), let band = r.int().flatMap(JetsamBand.init(value:)),
            let idleBand = r.int().flatMap(JetsamBand.init(value:))
        else { return nil }
        var durations: [Duration] = []
        for _ in 0..<6 {
            guard let s = r.int64(), let a = r.int64() else { return nil }
            durations.append(Duration(secondsComponent: s, attosecondsComponent: a))
        }
        guard let maxInstances = r.int(), let pids = r.int(), let files = r.int(),
            let grantable = r.strings(), let readOnly = r.strings(),
            let network = r.string().flatMap(NetworkAccess.init(rawValue:)), let denials = r.count()
        else { return nil }
        var denied: [SyscallDenial] = []
        for _ in 0..<denials {
            guard let group = r.string(), let action = SyscallAction.decode(&r) else { return nil }
            denied.append(SyscallDenial(group: group, action: action))
        }
        guard let sources = r.strings(), let allowed = r.int(), let concurrent = r.int(), let pending = r.int(),
            let quota = r.int64(), let limit = r.int64()
        else { return nil }
        var transfers = TransferPolicy()
        transfers.allowed = allowed != 0
        transfers.concurrent = concurrent
        transfers.pending = pending
        transfers.quotaBytes = quota
        transfers.timeLimit = .seconds(limit)
        var policy = ExtensionPointPolicy(
            extensionPoints: points, title: title,
            memory: MemoryPolicy(
                activeHardLimit: sizes[0], activeSoftLimit: sizes[1], inactiveHardLimit: sizes[2],
                inactiveSoftLimit: sizes[3], pageCacheAllowance: sizes[4], source: source),
            jetsamBand: band, idleBand: idleBand,
            launchDeadline: durations[0], requestTimeout: durations[1], idleTimeout: durations[2],
            maxInstances: maxInstances, pingInterval: durations[3], idlePingInterval: durations[5], unresponsiveTimeout: durations[4],
            pidsLimit: pids, openFilesLimit: files, grantableEntitlements: grantable, readOnlyPaths: readOnly,
            network: network, deniedSyscalls: denied, files: sources)
        policy.transfers = transfers
        return policy
    }
}

extension SyscallAction {
    func encode(into w: inout CacheWriter) {
        switch self {
        case .errno(let e):
            w.int(0)
            w.int(Int(e))
        case .kill: w.int(1)
        case .log: w.int(2)
        case .notify(let e):
            w.int(3)
            w.int(Int(e))
        }
    }

    static func decode(_ r: inout CacheReader) -> SyscallAction? {
        switch r.int() {
        case 0: return r.int().flatMap(Int32.init(exactly:)).map { .errno($0) }
        case 1: return .kill
        case 2: return .log
        case 3: return r.int().flatMap(Int32.init(exactly:)).map { .notify(errno: $0) }
        default: return nil
        }
    }
}

extension SyscallGroup {
    func encode(into w: inout CacheWriter) {
        w.string(name)
        w.string(summary)
        w.optional(appleCounterpart)
        w.strings(syscalls)
        w.string(file)
    }

    static func decode(_ r: inout CacheReader) -> SyscallGroup? {
        guard let name = r.string(), let summary = r.string(), let counterpart = r.optional(),
            let syscalls = r.strings(), let file = r.string()
        else { return nil }
        return SyscallGroup(name: name, summary: summary, appleCounterpart: counterpart, syscalls: syscalls, file: file)
    }
}
