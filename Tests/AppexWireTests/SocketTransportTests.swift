import AppexWireListener
import Testing

@testable import AppexWire
@testable import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

/// Real sockets, real descriptors: frames and SCM_RIGHTS over a socketpair and a bound path.
@Suite struct SocketTransportTests {
    func pair() throws -> (WireSocket, WireSocket) { try WireSocket.pair() }

    func makePipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        return (fds[0], fds[1])
    }

    func readAll(_ fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { return out }
            out += buf[0..<n]
        }
    }

    /// True when nothing holds the write end of the pipe any more (read gives EOF at once).
    func writersGone(_ readEnd: Int32) -> Bool {
        var p = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 0) == 1 else { return false }
        var b: UInt8 = 0
        return read(readEnd, &b, 1) == 0
    }

    func frame(_ r: WireSocket.Received) -> ReceivedFrame? {
        if case .frame(let f) = r { return f }
        return nil
    }

    @Test func everyMessageCrossesASocketpair() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        let devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(devnull) }
        for m in Samples.all {
            let n = try FrameHeader.decode(WireCodec.encode(m)).descriptorCount
            try a.send(m, descriptors: [Int32](repeating: devnull, count: n))
            let got = try #require(frame(try b.receive()))
            #expect(got.message == m)
            #expect(got.descriptors.count == n)
            got.closeDescriptors()
        }
    }

    @Test func attachmentsTravelAsDescriptors() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        // A pipe with data in it, and an unlinked file nobody else can name.
        let p = makePipe()
        let text = Array("piped bytes".utf8)
        _ = write(p.write, text, text.count)
        close(p.write)
        var template = Array("/tmp/appex-wire-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        #expect(file >= 0)
        unlink(String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        let content = Array("file bytes".utf8)
        _ = write(file, content, content.count)
        _ = lseek(file, 0, SEEK_SET)

        let item = ExtensionItem(attachments: [
            AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .descriptor(index: 0)),
            AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 1)),
        ])
        try a.send(.beginRequest(BeginRequest(requestID: 1, items: [item])), descriptors: [p.read, file])
        close(p.read)
        close(file)

        let got = try #require(frame(try b.receive()))
        defer { got.closeDescriptors() }
        #expect(got.descriptors.count == 2)
        for fd in got.descriptors { #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0) }
        guard case .beginRequest(let r) = got.message,
            case .descriptor(let i0) = r.items[0].attachments[0].content,
            case .descriptor(let i1) = r.items[0].attachments[1].content
        else {
            Issue.record("unexpected \(got.message)")
            return
        }
        #expect(readAll(got.descriptors[i0]) == text)
        #expect(readAll(got.descriptors[i1]) == content)
    }

    @Test func peerCredentialsAreOurs() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        let c = try b.peerCredentials()
        #expect(c.pid == getpid())
        #expect(c.uid == getuid())
        #expect(c.gid == getgid())
    }

    @Test func listenerConnectAndPeerCredentials() throws {
        let path = "/tmp/appex-wire-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let listener = try WireListener.bind(path: path)
        defer {
            listener.close()
            unlink(path)
        }
        let client = try WireSocket.connect(path: path)
        defer { client.close() }
        let server = try #require(try listener.accept())
        defer { server.close() }
        #expect(fcntl(server.fd, F_GETFD) & FD_CLOEXEC != 0)
        #expect(try server.peerCredentials() == PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
        try client.send(.ping(sequence: 1))
        #expect(frame(try server.receive())?.message == .ping(sequence: 1))
        #expect(throws: SocketError.self) { try WireSocket.connect(path: path + ".missing") }
        #expect(throws: SocketError.self) { try WireListener.bind(path: String(repeating: "x", count: 200)) }
    }

    @Test func nonblockingListenerAndReceive() throws {
        let path = "/tmp/appex-wire-nb-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let listener = try WireListener.bind(path: path, nonblocking: true)
        defer {
            listener.close()
            unlink(path)
        }
        #expect(try listener.accept() == nil)
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        guard case .wouldBlock = try b.receive(blocking: false) else {
            Issue.record("expected wouldBlock")
            return
        }
        try a.send(.pong(sequence: 2))
        #expect(frame(try b.receive(blocking: false))?.message == .pong(sequence: 2))
    }

    @Test func peerCloseIsEndOfStream() throws {
        let (a, b) = try pair()
        defer { b.close() }
        a.close()
        guard case .endOfStream = try b.receive() else {
            Issue.record("expected endOfStream")
            return
        }
    }

    @Test func oversizedRecordIsRejectedAndItsDescriptorsClosed() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        let p = makePipe()
        defer { close(p.read) }
        // A record bigger than any frame (the kernel lets it through: it fits the send buffer).
        let big = try WireCodec.encode(.ping(sequence: 1)) + [UInt8](repeating: 0, count: WireProtocol.maxFrameSize)
        try a.send(frame: big, descriptors: [p.write])
        close(p.write)
        #expect {
            try b.receive()
        } throws: { ($0 as? WireError)?.kind == .frameTooLarge }
        #expect(writersGone(p.read))
        // The connection's next frame still reads: one bad record was consumed, no more.
        try a.send(.ping(sequence: 2))
        #expect(frame(try b.receive())?.message == .ping(sequence: 2))
    }

    @Test func malformedFramesAreRejectedAndTheirDescriptorsClosed() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        let cases: [([UInt8], Int, WireError.Kind)] = [
            (Array("not a frame at all".utf8), 1, .badMagic),
            // Announces no descriptor, one arrives.
            (try WireCodec.encode(.ping(sequence: 1)), 1, .descriptorCountMismatch),
            // Announces one; no attachment refers to it.
            (
                {
                    var f = try! WireCodec.encode(.ping(sequence: 1))
                    f[10] = 1
                    return f
                }(), 1, .unusedDescriptor
            ),
            // Announces one, truncated before the attachments could refer to it.
            (
                {
                    var f = try! WireCodec.encode(.ping(sequence: 1))
                    f[10] = 1
                    return Array(f.dropLast(3))
                }(), 1, .truncated
            ),
        ]
        for (bytes, fdCount, expected) in cases {
            let p = makePipe()
            try a.send(frame: bytes, descriptors: [Int32](repeating: p.write, count: fdCount))
            close(p.write)
            #expect {
                try b.receive()
            } throws: { ($0 as? WireError)?.kind == expected }
            #expect(writersGone(p.read), "descriptor of a \(expected) frame left open")
            close(p.read)
        }
    }

    @Test func tooManyDescriptorsIsControlTruncation() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        let p = makePipe()
        defer { close(p.read) }
        let n = WireLimits.descriptorsPerFrame + 4
        try a.send(frame: try WireCodec.encode(.ping(sequence: 1)), descriptors: [Int32](repeating: p.write, count: n))
        close(p.write)
        #expect {
            try b.receive()
        } throws: { ($0 as? WireError)?.kind == .tooManyDescriptors }
        #expect(writersGone(p.read))
    }

    @Test func sendChecksDescriptorCount() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        #expect {
            try a.send(.ping(sequence: 1), descriptors: [0])
        } throws: { ($0 as? WireError)?.kind == .descriptorCountMismatch }
    }

    @Test func connectionRefusesOutOfOrderFrames() throws {
        let (a, b) = try pair()
        let ext = WireConnection(socket: a, role: .extension)
        let sup = WireConnection(socket: b, role: .supervisor)
        defer { ext.close() }
        // The extension skips its Hello (raw socket, bypassing its own state machine).
        try a.send(.completeRequest(CompleteRequest(requestID: 1)))
        #expect {
            try sup.receive()
        } throws: { ($0 as? WireError)?.kind == .outOfOrder }
        sup.refuseAndClose(for: WireError(.outOfOrder, field: "CompleteRequest", "CompleteRequest before Hello"))
        guard case .frame(let f) = try a.receive(), case .refusal(let r) = f.message else {
            Issue.record("expected a refusal")
            return
        }
        #expect(r.reason == .protocolError)
        guard case .endOfStream = try a.receive() else {
            Issue.record("expected the connection closed")
            return
        }
    }

    @Test func connectionsCheckInAndServeARequest() throws {
        let (a, b) = try pair()
        let ext = WireConnection(socket: a, role: .extension)
        let sup = WireConnection(socket: b, role: .supervisor)
        defer {
            ext.close()
            sup.close()
        }
        try ext.send(.hello(Hello(bundleIdentifier: "com.example.e", pid: getpid())))
        guard case .message = try sup.receive() else {
            Issue.record("hello")
            return
        }
        try sup.send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
        guard case .message = try ext.receive() else {
            Issue.record("hello back")
            return
        }
        try sup.send(.beginRequest(BeginRequest(requestID: 1, items: [Samples.plainItem])))
        guard case .message(let f) = try ext.receive(), case .beginRequest(let r) = f.message else {
            Issue.record("begin")
            return
        }
        try ext.send(.completeRequest(CompleteRequest(requestID: r.requestID, items: r.items)))
        // appexd's will-expire crosses the completion: the extension drops it as stale.
        try sup.send(.requestWillExpire(RequestWillExpire(requestID: 1, millisecondsLeft: 10)))
        guard case .message(let done) = try sup.receive() else {
            Issue.record("complete")
            return
        }
        #expect(done.message == .completeRequest(CompleteRequest(requestID: 1, items: [Samples.plainItem])))
        guard case .stale = try ext.receive() else {
            Issue.record("expected stale")
            return
        }
        // The state machine refuses our own mistakes before they reach the wire.
        #expect(throws: WireError.self) { try ext.send(.completeRequest(CompleteRequest(requestID: 1))) }
    }

    @Test func inheritedSocketFromEnvironment() throws {
        let (a, b) = try pair()
        defer {
            a.close()
            b.close()
        }
        setenv(WireProtocol.extensionSocketEnvironment, "\(b.fd)", 1)
        defer { unsetenv(WireProtocol.extensionSocketEnvironment) }
        let s = try WireSocket.inherited()
        #expect(s.fd == b.fd)
        let p = makePipe()
        defer {
            close(p.read)
            close(p.write)
        }
        setenv(WireProtocol.extensionSocketEnvironment, "\(p.read)", 1)
        #expect(throws: SocketError.self) { try WireSocket.inherited() }
        setenv(WireProtocol.extensionSocketEnvironment, "three", 1)
        #expect(throws: SocketError.self) { try WireSocket.inherited() }
    }
}
