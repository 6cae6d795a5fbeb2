import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A cgroup file that holds one number and is read on a hot path (the high-water mark, at every
/// answer): opened at the first read and kept, each read then one pread at offset 0, on which
/// cgroupfs renders the value afresh. `Sys.readFile` would open, read twice (to EOF) and close
/// each time.
final class KeptNumberFile: Sendable {
    let path: String
    /// The descriptor once opened; -1 before.
    private let descriptor = Mutex<Int32>(-1)

    init(path: String) { self.path = path }

    deinit {
        descriptor.withLock { if $0 >= 0 { Sys.close($0) } }
    }

    /// The number in the file now. A cgroup that is gone fails the read (the kernel's errno).
    func read() throws -> Int64 {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            let n = try descriptor.withLock { (fd: inout Int32) throws -> Int in
                if fd < 0 { fd = try Sys.open(path, O_RDONLY) }
                while true {
                    let n = pread(fd, buffer.baseAddress, buffer.count, 0)
                    if n >= 0 { return n }
                    if Glibc.errno == EINTR { continue }
                    throw Sys.fail("read", path)
                }
            }
            return try CgroupParse.number(String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<n]), as: UTF8.self), path: path)
        }
    }
}
