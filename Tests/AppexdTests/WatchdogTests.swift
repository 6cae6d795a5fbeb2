import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// appexd under a service manager's watchdog (`WatchdogSec=` sets `WATCHDOG_USEC`): READY=1,
/// then WATCHDOG=1 every half interval, from the supervisor's loop.
@Suite struct WatchdogTests {
    /// A datagram socket bound at `path`, as systemd's notification socket is.
    static func notifySocket(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "bind \(path): \(String(cString: strerror(errno)))")
        return fd
    }

    /// Every datagram that arrives within `seconds`, up to the first one `done` says ends it.
    static func receive(_ fd: Int32, for seconds: Double, until done: (String) -> Bool = { _ in false }) -> [String] {
        var messages: [String] = []
        let end = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(max(1, end.timeIntervalSinceNow * 1000))) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { continue }
            messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
            if done(messages[messages.count - 1]) { break }
        }
        return messages
    }

    /// The first datagram within `seconds` with a line `line`, or nil.
    static func receive(_ fd: Int32, until line: String, seconds: Double) -> String? {
        let has = { (message: String) in message.split(separator: "\n").contains(Substring(line)) }
        return receive(fd, for: seconds, until: has).last.flatMap { has($0) ? $0 : nil }
    }

    @Test func appexdPingsTheWatchdogFromItsLoop() throws {
        let d = try DaemonTests.Daemon()
        defer { try? FileManager.default.removeItem(atPath: d.root) }
        let fd = try Self.notifySocket(d.root + "/notify")
        defer { close(fd) }
        // 200 ms: a ping every 100 ms.
        d.environment = ["NOTIFY_SOCKET": d.root + "/notify", "WATCHDOG_USEC": "200000"]
        try d.start()
        defer { _ = d.signal(SIGTERM) }
        let messages = Self.receive(fd, for: 1.5)
        #expect(messages.contains { $0.split(separator: "\n").contains("READY=1") }, "\(messages)")
        let pings = messages.filter { $0 == "WATCHDOG=1" }.count
        #expect(pings >= 5, "\(pings) pings in 1.5 s at a 100 ms interval: \(messages)")
    }

    @Test func noPingsForAnotherProcessesWatchdog() throws {
        let d = try DaemonTests.Daemon()
        defer { try? FileManager.default.removeItem(atPath: d.root) }
        let fd = try Self.notifySocket(d.root + "/notify")
        defer { close(fd) }
        // WATCHDOG_PID names a process that is not appexd: the watchdog is not appexd's.
        d.environment = ["NOTIFY_SOCKET": d.root + "/notify", "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"]
        try d.start()
        defer { _ = d.signal(SIGTERM) }
        let messages = Self.receive(fd, for: 0.6)
        #expect(messages.contains { $0.split(separator: "\n").contains("READY=1") }, "\(messages)")
        #expect(!messages.contains("WATCHDOG=1"), "\(messages)")
    }
}
