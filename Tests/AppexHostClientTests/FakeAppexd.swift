import AppexTestSupport
import AppexWire
import AppexWireIO
import AppexWireListener
import Glibc

@testable import AppexHostClient

/// A stand-in for appexd's control socket: a real listening socket in a fresh temporary
/// directory, whose service side each test plays by hand (appexd itself lives elsewhere).
/// The scripted side runs on an OS thread of its own because it blocks in accept and recvmsg.
final class FakeAppexd: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let directory: ScratchDirectory
    let path: String
    let listener: WireListener

    init() throws {
        // Under /tmp: the socket's path must fit sun_path.
        directory = try ScratchDirectory("host-client", in: "/tmp")
        path = directory.path + "/appexd.sock"
        listener = try WireListener.bind(path: path)
    }

    /// Closes the listener and removes the socket and the directory.
    func cleanUp() {
        listener.close()
        directory.remove()
    }

    /// Accepts one client and reads its Hello, without answering it.
    func acceptHello() throws -> (WireConnection, Hello, PeerCredentials) {
        guard let socket = try listener.accept() else { throw Failure(description: "accept returned nothing") }
        let connection = WireConnection(socket: socket, role: .service)
        guard case .hello(let hello) = try Self.next(connection).message else {
            connection.close()
            throw Failure(description: "the client did not start with Hello")
        }
        return (connection, hello, try socket.peerCredentials())
    }

    /// Accepts one host and checks it in as appexd does.
    func acceptHost() throws -> WireConnection {
        let (connection, _, _) = try acceptHello()
        try connection.send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
        return connection
    }

    /// The next frame; anything but a message is a failure.
    static func next(_ connection: WireConnection) throws -> ReceivedFrame {
        switch try connection.receive() {
        case .message(let frame): return frame
        case .endOfStream: throw Failure(description: "the host closed the connection")
        case .stale(let m): throw Failure(description: "stale \(m.type.name)")
        case .wouldBlock: throw Failure(description: "would block")
        }
    }

    /// Waits until the host closes its end.
    static func awaitEnd(_ connection: WireConnection) throws {
        while true {
            switch try connection.receive() {
            case .endOfStream: return
            case .message(let frame):
                frame.closeDescriptors()
                throw Failure(description: "expected the end, got \(frame.message.type.name)")
            case .stale, .wouldBlock: continue
            }
        }
    }

    /// Runs `script` on a thread of its own; `Served.result()` awaits what it returned.
    func serve<T: Sendable>(_ script: @escaping @Sendable (FakeAppexd) throws -> T) throws -> Served<T> {
        let slot = OneShot<Result<T, any Error>>()
        let thread = try ReaderThread { [self] in
            slot.fulfill(.success(Result { try script(self) }))
        }
        return Served(slot: slot, thread: thread)
    }

    struct Served<T: Sendable>: Sendable {
        let slot: OneShot<Result<T, any Error>>
        let thread: ReaderThread

        /// What the script returned (or threw). Awaited, not joined: a blocked test task would
        /// hold a thread of the cooperative pool that the client's open-URL tasks may need.
        func result() async throws -> T {
            let outcome = try await slot.value()
            thread.join()
            return try outcome.get()
        }
    }
}

/// A pipe holding `text` whose write end is already closed: a reader gets `text`, then EOF.
func pipe(holding text: String) -> Int32 {
    var fds: [Int32] = [-1, -1]
    precondition(Glibc.pipe(&fds) == 0)
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    let bytes = Array(text.utf8)
    precondition(write(fds[1], bytes, bytes.count) == bytes.count)
    close(fds[1])
    return fds[0]
}

/// Everything readable from `fd` until end of file.
func readAll(_ fd: Int32) -> String {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { break }
        out += buffer[..<n]
    }
    return String(decoding: out, as: UTF8.self)
}
