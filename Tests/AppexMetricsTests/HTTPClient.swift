import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 client over a plain TCP socket, enough to ask appexd's endpoint what a
/// scraper asks and read the answer exactly as it was sent. One request per connection
/// (`Connection: close`), or several written at once on one connection (pipelining).
enum HTTPClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: String

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `address`: `HOST:PORT` with an IPv4 host, as appexd writes it.
    static func request(_ address: String, method: String = "GET", path: String = "/metrics") throws -> Response {
        let raw = try exchange(address, "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\n\r\n")
        guard let response = try parse(raw[...]).first else { throw Failure(description: "no response") }
        return response
    }

    /// Sends `text` as is and reads until the server closes the connection.
    static func exchange(_ address: String, _ text: String) throws -> [UInt8] {
        let fd = try connect(address)
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw Failure(description: "send failed") }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw Failure(description: "recv: errno \(errno) after \(received.count) bytes") }
            if n == 0 { break }
            received += chunk[..<n]
        }
        return received
    }

    /// A connected TCP socket to `address` (`HOST:PORT`, IPv4) that never blocks a test for
    /// long: receiving gives up after `timeout` seconds. `receiveBuffer`: SO_RCVBUF, set before
    /// connecting (so the window is small from the start), for a client that reads little.
    static func connect(_ address: String, timeout: Int = 20, receiveBuffer: Int32? = nil) throws -> Int32 {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw Failure(description: "bad address \(address)")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        guard inet_pton(AF_INET, String(address[..<colon]), &sin.sin_addr) == 1 else {
            close(fd)
            throw Failure(description: "not an IPv4 address: \(address)")
        }
        let connected = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect \(address): errno \(code)")
        }
        return fd
    }

    /// The responses in `raw`, one after another (each with a Content-Length).
    static func parse(_ raw: ArraySlice<UInt8>) throws -> [Response] {
        var rest = raw
        var responses: [Response] = []
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while !rest.isEmpty {
            guard let end = rest.indices.first(where: { rest[$0...].starts(with: separator) }) else {
                throw Failure(description: "no end of headers")
            }
            let head = String(decoding: rest[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let statusParts = head[0].split(separator: " ", maxSplits: 2)
            guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1]) else {
                throw Failure(description: "bad status line \(head[0])")
            }
            var headers: [(String, String)] = []
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { throw Failure(description: "bad header \(line)") }
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            let start = end + separator.count
            guard let lengthText = headers.first(where: { $0.0.lowercased() == "content-length" })?.1,
                let length = Int(lengthText), rest.endIndex - start >= length
            else {
                throw Failure(description: "missing or short Content-Length")
            }
            responses.append(
                Response(
                    status: status, headers: headers,
                    body: String(decoding: rest[start..<(start + length)], as: UTF8.self)))
            rest = rest[(start + length)...]
        }
        return responses
    }
}
