#if canImport(Glibc)
import Glibc
#endif

/// One `GET /metrics` as Prometheus makes it, on a new loopback connection, read to the end:
/// the bytes received.
func scrape(_ address: String, keep: ((ArraySlice<UInt8>) -> Void)? = nil) -> Int {
    guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
        fail("bad metrics address \(address)")
    }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { fail("socket: errno \(errno)") }
    defer { close(fd) }
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = port.bigEndian
    _ = inet_pton(AF_INET, String(address[..<colon]), &sin.sin_addr)
    let connected = withUnsafePointer(to: &sin) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { fail("connect \(address): errno \(errno)") }
    let request = Array("GET /metrics HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\n\r\n".utf8)
    guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { fail("send") }
    var total = 0
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = recv(fd, &chunk, chunk.count, 0)
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { fail("recv: errno \(errno)") }
        if n == 0 { break }
        if total == 0 && !chunk.starts(with: Array("HTTP/1.1 200".utf8)) { fail("scrape: not 200") }
        keep?(chunk[0..<n])
        total += n
    }
    return total
}

/// The whole response of one scrape, as text (for the few values the benchmark reads back).
func scrapeText(_ address: String) -> String {
    var bytes: [UInt8] = []
    _ = scrape(address) { bytes += $0 }
    return String(decoding: bytes, as: UTF8.self)
}
