import AppexTestSupport
import AppexWireIO
import Glibc
import Testing

@testable import AppexDaemon

/// A datagram socket standing in for systemd's notification socket, bound to a path or to an
/// abstract name.
final class NotifyListener {
    let fd: Int32
    /// What `NOTIFY_SOCKET` would say: the path, or `@name`.
    let address: String
    private let directory: ScratchDirectory?

    init(abstract: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var name: [UInt8]
        if abstract {
            directory = nil
            address = "@appex-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            name = [0] + Array(address.utf8.dropFirst())
        } else {
            // Under /tmp: the path must fit sun_path.
            let dir = try ScratchDirectory("notify", in: "/tmp")
            directory = dir
            address = dir.path + "/notify"
            name = Array(address.utf8) + [0]
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: name) }
        // sun_family (2 bytes) and exactly the name: an abstract name has no terminator.
        let length = socklen_t(2 + name.count)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        try #require(rc == 0, "bind \(address): errno \(errno)")
    }

    /// The next datagram, without waiting: notify has returned, so it is already queued.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return n < 0 ? nil : String(decoding: buffer[..<n], as: UTF8.self)
    }

    func close() {
        _ = Glibc.close(fd)
        directory?.remove()
    }
}

// Serialized: one test sets NOTIFY_SOCKET in the process environment.
@Suite(.serialized) struct SDNotifyTests {
    @Test func aPathSocketReceivesTheDatagram() throws {
        let listener = try NotifyListener(abstract: false)
        defer { listener.close() }
        try SDNotify.notify("READY=1\nSTATUS=listening on /run/appex/appexd.sock", socket: listener.address)
        #expect(listener.receive() == "READY=1\nSTATUS=listening on /run/appex/appexd.sock")
        #expect(listener.receive() == nil)
    }

    @Test func anAbstractSocketReceivesTheDatagram() throws {
        let listener = try NotifyListener(abstract: true)
        defer { listener.close() }
        try SDNotify.notify("STOPPING=1", socket: listener.address)
        #expect(listener.receive() == "STOPPING=1")
    }

    @Test func notifyFollowsTheEnvironment() throws {
        let listener = try NotifyListener(abstract: false)
        defer { listener.close() }
        setenv(SDNotify.environmentVariable, listener.address, 1)
        defer { unsetenv(SDNotify.environmentVariable) }
        #expect(try SDNotify.notify("READY=1"))
        #expect(listener.receive() == "READY=1")

        unsetenv(SDNotify.environmentVariable)
        #expect(try SDNotify.notify("READY=1") == false)
        #expect(try SDNotify.notify("READY=1", environmentValue: "") == false)
        #expect(listener.receive() == nil)
    }

    @Test func badAddressesThrowWithTheirContext() throws {
        let relative = #expect(throws: SocketError.self) { try SDNotify.notify("READY=1", socket: "run/notify") }
        #expect(relative?.errno == EINVAL)
        #expect(relative?.context?.contains("NOTIFY_SOCKET=run/notify") == true)

        let listener = try NotifyListener(abstract: false)
        let path = listener.address
        listener.close()
        let gone = #expect(throws: SocketError.self) { try SDNotify.notify("READY=1", socket: path) }
        #expect(gone?.operation == "sendto")
        #expect(gone?.errno == ENOENT)
        #expect(gone?.description.contains(path) == true)

        let nobody = #expect(throws: SocketError.self) {
            try SDNotify.notify("READY=1", socket: "@appex-notify-nobody-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        }
        #expect(nobody?.errno == ECONNREFUSED)

        let long = #expect(throws: SocketError.self) {
            try SDNotify.notify("READY=1", socket: "/" + String(repeating: "n", count: 200))
        }
        #expect(long?.errno == ENAMETOOLONG)
    }
}
