import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bound datagram socket standing in for journald.
public final class DatagramReceiver {
    public let fd: Int32

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { dst in for (i, b) in path.utf8.enumerated() { dst[i] = b } }
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        chmod(path, 0o666)
    }

    deinit { close(fd) }

    /// Every datagram waiting now.
    public func drain() -> [[UInt8]] {
        var out: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n <= 0 { return out }
            out.append(Array(buffer[..<n]))
        }
    }
}

/// The journal's native protocol read back: `NAME=value\n`, or `NAME\n` + 64-bit length + value + `\n`.
public enum JournalRecord {
    public static func parse(_ d: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        var i = 0
        while i < d.count {
            guard let end = d[i...].firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") }) else { break }
            let name = String(decoding: d[i..<end], as: UTF8.self)
            if d[end] == UInt8(ascii: "=") {
                let stop = d[end...].firstIndex(of: UInt8(ascii: "\n")) ?? d.count
                fields[name] = String(decoding: d[(end + 1)..<stop], as: UTF8.self)
                i = stop + 1
            } else {
                var length: UInt64 = 0
                for k in 0..<8 { length |= UInt64(d[end + 1 + k]) << (8 * k) }
                let start = end + 9
                fields[name] = String(decoding: d[start..<(start + Int(length))], as: UTF8.self)
                i = start + Int(length) + 1
            }
        }
        return fields
    }
}
