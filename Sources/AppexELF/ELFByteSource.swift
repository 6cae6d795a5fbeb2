#if canImport(Glibc)
import Glibc
#endif

/// Where the reader's bytes come from: a descriptor opened safely by the caller, or memory
/// (tests and fuzzing). The reader checks every range against `size` before asking.
public protocol ELFByteSource {
    var size: UInt64 { get }
    /// Exactly `count` bytes at `offset`, which the caller has checked lie inside `size`.
    func bytes(at offset: UInt64, count: Int) throws(ELFError) -> [UInt8]
}

/// Reads with `pread` from a descriptor; never moves its file offset, never closes it.
public struct FileDescriptorSource: ELFByteSource {
    public let fd: Int32
    public let size: UInt64

    /// `size` is what `fstat` said when the file was opened; a file that shrinks afterwards
    /// gives a short read, which is an error, never a silent zero fill.
    public init(fd: Int32, size: UInt64) {
        self.fd = fd
        self.size = size
    }

    public func bytes(at offset: UInt64, count: Int) throws(ELFError) -> [UInt8] {
        guard count > 0 else { return [] }
        guard let start = off_t(exactly: offset) else { throw ELFError("file", at: offset, "offset does not fit off_t") }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + done, count - done, start + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw ELFError("file", at: offset + UInt64(done), "read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { throw ELFError("file", at: offset + UInt64(done), "the file ended early (it changed while being read)") }
            done += n
        }
        return buffer
    }
}

/// A file already in memory.
public struct MemorySource: ELFByteSource {
    public let data: [UInt8]
    public var size: UInt64 { UInt64(data.count) }

    public init(_ data: [UInt8]) { self.data = data }

    public func bytes(at offset: UInt64, count: Int) throws(ELFError) -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw ELFError("file", at: offset, "\(count) bytes lie past the end of the file")
        }
        let start = Int(offset)
        return Array(data[start..<start + count])
    }
}
