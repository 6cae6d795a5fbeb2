import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The log both sides' bloaters write their steps to (Sources/appex-probe-extension/grow.h):
/// a 32-byte header (magic, capacity, count, reserved), then (start_ns, end_ns, bytes,
/// available_kib) per step, little-endian. On tmpfs, and written here before every trial, so that its pages are
/// charged to the harness and never to the bloater whose growth is being measured.
final class GrowLog {
    static let magic: UInt64 = 0x7772_6761_7865_7061  // "appexgrw"
    static let capacity = 4096

    struct Step {
        var start: UInt64
        var end: UInt64
        var bytes: UInt64
        /// MemAvailable read after the step (the earlyoom side only), KiB.
        var availableKiB: UInt64
    }

    let path: String
    let fd: Int32

    init(path: String) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fail("cannot create \(path): \(String(cString: strerror(errno)))") }
        reset()
    }

    /// The header, and every step zeroed.
    func reset() {
        var words = [UInt64](repeating: 0, count: 4 + Self.capacity * 4)
        words[0] = Self.magic.littleEndian
        words[1] = UInt64(Self.capacity).littleEndian
        let written = words.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == words.count * 8 else { fail("cannot write \(path)") }
    }

    /// The steps begun, in order (the writer is gone when this is read).
    func steps() -> [Step] {
        var words = [UInt64](repeating: 0, count: 4 + Self.capacity * 4)
        _ = words.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        words = words.map { UInt64(littleEndian: $0) }
        let count = min(Int(words[2]), Self.capacity)
        return (0..<count).map {
            Step(start: words[4 + $0 * 4], end: words[5 + $0 * 4], bytes: words[6 + $0 * 4], availableKiB: words[7 + $0 * 4])
        }
    }

    func remove() {
        close(fd)
        unlink(path)
    }
}

/// The Appex side's log: appexd forwards only read-only files and pipes to an extension, so
/// the probe writes each step to a pipe once it is done (the same 32 bytes as in the file),
/// and the harness reads them after the trial. Sized for every step the probe can log, so
/// the probe's write never blocks while nobody reads.
final class GrowPipe {
    let readEnd: Int32
    /// Given to appexd with the request; closed here once sent.
    private(set) var writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { fail("pipe: \(String(cString: strerror(errno)))") }
        (readEnd, writeEnd) = (fds[0], fds[1])
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // F_SETPIPE_SZ (Glibc's overlay leaves it out): room for every step.
        let size = Int32(GrowLog.capacity * 32)
        guard fcntl(readEnd, 1031, size) >= size else { fail("F_SETPIPE_SZ \(size): \(String(cString: strerror(errno)))") }
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
    }

    func sent() {
        close(writeEnd)
        writeEnd = -1
    }

    /// The steps written so far (the writer may be gone or still holding its end).
    func steps() -> [GrowLog.Step] {
        var words = [UInt64](repeating: 0, count: GrowLog.capacity * 4)
        var bytes = 0
        while bytes < words.count * 8 {
            let n = words.withUnsafeMutableBytes { read(readEnd, $0.baseAddress! + bytes, $0.count - bytes) }
            if n <= 0 { break }
            bytes += n
        }
        return (0..<bytes / 32).map { k in
            let w = words[(k * 4)..<(k * 4 + 4)].map { UInt64(littleEndian: $0) }
            return GrowLog.Step(start: w[0], end: w[1], bytes: w[2], availableKiB: w[3])
        }
    }

    deinit {
        close(readEnd)
        if writeEnd >= 0 { close(writeEnd) }
    }
}

/// When a threshold was crossed, from the log; every latency counted from it is an upper bound.
enum Crossing {
    case at(UInt64)
    /// Already crossed when the growth started: something else moved the line.
    case beforeGrowth
    case never
}

extension [GrowLog.Step] {
    /// The Appex side: when the growth reached `bytes`. The parent cgroup holds nothing else
    /// that grows, so this is when its footprint crossed the line: at the start of the first
    /// step that takes the growth there, or later (the kernel charges the step's pages one by
    /// one while it is touched).
    func crossing(growth bytes: Int64) -> Crossing {
        first { Int64($0.bytes) >= bytes }.map { .at($0.start) } ?? .never
    }

    /// The earlyoom side: when MemAvailable, what earlyoom reads, fell to `threshold`. Other
    /// processes move it too, so the bloater reads it after each step: the line was crossed
    /// after the last reading above it (the end of the step before) and by the first reading
    /// at or below it.
    func crossing(availableKiB threshold: Int64) -> Crossing {
        guard let k = firstIndex(where: { $0.availableKiB > 0 && Int64($0.availableKiB) <= threshold }) else { return .never }
        return k == 0 ? .beforeGrowth : .at(self[k - 1].end)
    }

    /// The mean time to touch one whole step, ns.
    var meanTouch: UInt64 {
        let done = filter { $0.end >= $0.start && $0.end > 0 }
        return done.isEmpty ? 0 : done.map { $0.end - $0.start }.reduce(0, +) / UInt64(done.count)
    }
}
