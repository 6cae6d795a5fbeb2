import AppexWire
import AppexWireIO
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One run of an extension's executable for `appex conformance`, with this process playing
/// appexd on the other end of its socket (fd 3, APPEX_SOCKET_FD and APPEX_BUNDLE_IDENTIFIER
/// as Docs/protocol.md section 1 gives them). No sandbox: as root the executable runs under
/// another uid (setpriv). Whatever happens, `finish` or deinit kills and reaps it.
final class ConformancePeer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    let pid: pid_t
    let socket: WireSocket
    private var status: Int32?
    private var socketClosed = false
    let logPath: String

    /// `uid`: run as this uid and gid (root only); nil: as the caller.
    init(executable: String, bundleIdentifier: String, bundlePath: String, uid: UInt32?) throws {
        let (ours, theirs) = try WireSocket.pair()
        defer { theirs.close() }
        logPath = NSTemporaryDirectory() + "appex-conformance-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).log"
        var command = [executable]
        if let uid { command = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--"] + command }
        let environment = [
            "APPEX_SOCKET_FD=3", "APPEX_BUNDLE_IDENTIFIER=\(bundleIdentifier)", "APPEX_BUNDLE_PATH=\(bundlePath)",
            "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/nonexistent",
        ]
        do {
            pid = try ExtensionChild.spawn(command, environment: environment, socket: theirs, logPath: logPath, stdoutToLog: true)
        } catch {
            ours.close()
            throw Failure("cannot start \(command[0]): \(error)")
        }
        socket = ours
    }

    deinit {
        _ = finish()
        unlink(logPath)
    }

    /// What the extension wrote to stdout and stderr.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    enum Received {
        case frame(ReceivedFrame)
        case endOfStream
        case silence
        /// A frame this end could not decode: the extension broke the protocol.
        case malformed(String)
    }

    /// The next record from the extension within `milliseconds`.
    func receive(within milliseconds: Int32) -> Received {
        var p = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&p, 1, milliseconds)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return .silence }
            do {
                switch try socket.receive() {
                case .frame(let frame): return .frame(frame)
                case .endOfStream: return .endOfStream
                case .wouldBlock: return .silence
                }
            } catch {
                return .malformed("\(error)")
            }
        }
    }

    /// The next message within `milliseconds`, or a failure saying what came instead.
    func message(within milliseconds: Int32, expecting what: String) throws -> Message {
        switch receive(within: milliseconds) {
        case .frame(let frame):
            frame.closeDescriptors()
            return frame.message
        case .endOfStream: throw Failure("expected \(what), the extension closed its socket\(logTail)")
        case .silence: throw Failure("expected \(what), nothing came within \(milliseconds) ms\(logTail)")
        case .malformed(let why): throw Failure("expected \(what), got a malformed frame: \(why)")
        }
    }

    func send(_ message: Message, descriptors: [Int32] = []) throws {
        _ = try socket.send(message, descriptors: descriptors)
    }

    func send(frame: [UInt8]) throws {
        _ = try socket.send(frame: frame)
    }

    /// Closes appexd's end: the extension reads end of stream.
    func closeSocket() {
        guard !socketClosed else { return }
        socketClosed = true
        socket.close()
    }

    /// The wait status once the process has ended within `milliseconds`; nil while it runs.
    func exitStatus(within milliseconds: Int) -> Int32? {
        if let status { return status }
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            var s: Int32 = 0
            let r = waitpid(pid, &s, WNOHANG)
            if r == pid {
                status = s
                return s
            }
            if r < 0 && errno != EINTR { return nil }
            if ContinuousClock.now >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Kills (if still running) and reaps; the wait status.
    func finish() -> Int32? {
        if status == nil {
            kill(pid, SIGKILL)
            var s: Int32 = 0
            while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
            status = s
        }
        closeSocket()
        return status
    }

    /// The process's descriptors whose /proc link reads `target` (e.g. "pipe:[123]").
    func descriptors(linkingTo target: String) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return names.compactMap { name in
            guard let fd = Int32(name),
                let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)"),
                link == target
            else { return nil }
            return fd
        }
    }

    private var logTail: String {
        let text = log.split(separator: "\n").suffix(3).joined(separator: " | ")
        return text.isEmpty ? "" : " (its output: \(text))"
    }

    /// Reads the extension's Hello and answers with appexd's.
    func checkIn(within milliseconds: Int32 = 5_000) throws -> Hello {
        guard case .hello(let hello) = try message(within: milliseconds, expecting: "the extension's Hello") else {
            throw Failure("the extension's first frame is not a Hello")
        }
        try send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
        return hello
    }

    /// Sends Ping(sequence) and expects its Pong within `milliseconds`.
    func pingRoundTrip(_ sequence: UInt64, within milliseconds: Int32 = 5_000) throws {
        try send(.ping(sequence: sequence))
        let answer = try message(within: milliseconds, expecting: "Pong(\(sequence))")
        guard answer == .pong(sequence: sequence) else { throw Failure("expected Pong(\(sequence)), got \(answer)") }
    }
}
