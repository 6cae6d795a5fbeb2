#if canImport(Glibc)
import Glibc
#endif

/// SCM_RIGHTS control messages, laid out by hand: the CMSG_* macros are not importable into
/// Swift. A cmsghdr is followed by its data at the next multiple of size_t.
enum ControlMessage {
    private static let align = MemoryLayout<Int>.size
    private static func aligned(_ n: Int) -> Int { (n + align - 1) & ~(align - 1) }
    private static let headerSize = aligned(MemoryLayout<cmsghdr>.size)

    /// CMSG_SPACE for `count` descriptors: the buffer size to offer recvmsg or give sendmsg.
    static func space(descriptors count: Int) -> Int {
        headerSize + aligned(count * MemoryLayout<Int32>.size)
    }

    /// A control buffer carrying `fds` as one SCM_RIGHTS message.
    static func rights(_ fds: [Int32]) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: space(descriptors: fds.count))
        buffer.withUnsafeMutableBytes { raw in
            var header = cmsghdr()
            header.cmsg_len = headerSize + fds.count * MemoryLayout<Int32>.size
            header.cmsg_level = SOL_SOCKET
            header.cmsg_type = Int32(SCM_RIGHTS)
            raw.storeBytes(of: header, as: cmsghdr.self)
            for (i, fd) in fds.enumerated() {
                raw.storeBytes(of: fd, toByteOffset: headerSize + i * MemoryLayout<Int32>.size, as: Int32.self)
            }
        }
        return buffer
    }

    /// Every descriptor in the SCM_RIGHTS messages of the first `length` bytes of `buffer`.
    /// Other control messages are skipped.
    static func descriptors(in buffer: UnsafeRawBufferPointer, length: Int) -> [Int32] {
        var fds: [Int32] = []
        var offset = 0
        let end = min(length, buffer.count)
        while offset + headerSize <= end {
            let header = buffer.loadUnaligned(fromByteOffset: offset, as: cmsghdr.self)
            let total = Int(header.cmsg_len)
            guard total >= headerSize, offset + total <= end else { break }
            if header.cmsg_level == SOL_SOCKET && header.cmsg_type == Int32(SCM_RIGHTS) {
                let count = (total - headerSize) / MemoryLayout<Int32>.size
                for i in 0..<count {
                    fds.append(buffer.loadUnaligned(fromByteOffset: offset + headerSize + i * 4, as: Int32.self))
                }
            }
            offset += aligned(total)
        }
        return fds
    }
}
