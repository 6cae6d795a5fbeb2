#if canImport(Glibc)
import Glibc
#endif

/// Whole reads and writes on a descriptor, retrying short transfers and EINTR.
enum DescriptorIO {
    /// Everything `fd` holds. A regular file is read with pread from offset 0, so reading twice
    /// gives the same bytes whatever the sender did with the offset; a pipe or socket is read to
    /// its end, once. `index` names the attachment in errors.
    static func readAll(_ fd: Int32, index: Int) throws(AttachmentError) -> [UInt8] {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .readFailed(index: index, operation: "fstat", errno: errno) }
        let isRegular = info.st_mode & S_IFMT == S_IFREG
        var out: [UInt8] = []
        if isRegular { out.reserveCapacity(Int(info.st_size)) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var offset: off_t = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { buffer in
                isRegular
                    ? pread(fd, buffer.baseAddress, buffer.count, offset)
                    : read(fd, buffer.baseAddress, buffer.count)
            }
            if n > 0 {
                out.append(contentsOf: chunk[0..<n])
                offset += off_t(n)
            } else if n == 0 {
                return out
            } else if errno != EINTR {
                throw .readFailed(index: index, operation: isRegular ? "pread" : "read", errno: errno)
            }
        }
    }

    /// Writes all of `bytes`; returns the errno of the failing write, nil when all went out.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return n < 0 ? errno : EIO
            }
        }
        return nil
    }
}
