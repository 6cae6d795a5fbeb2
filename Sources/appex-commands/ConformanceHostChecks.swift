import AppexWire
import AppexWireIO
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The host side for `appex conformance --host -- COMMAND…`: each check runs the command
/// afresh with APPEX_SOCKET naming a socket this process listens on, and plays appexd. The
/// command is expected to behave as a one-request host does (`appex request`, `appex-host-c`,
/// `python3 -m appex`): check in, send one HostBeginRequest, and exit 0 when it completes,
/// non-zero when it does not.
enum ConformanceHostChecks {
    typealias Failure = ConformancePeer.Failure

    static let all: [(name: String, summary: String, run: @Sendable ([String]) throws -> Void)] = [
        ("host-check-in", "Hello (protocol 1) first, then a well-formed HostBeginRequest with an id from 1", checkIn),
        ("host-ping", "a Ping while the request is open gets its Pong", ping),
        ("host-completed", "RequestOutcome(completed) ends it with exit status 0", completed),
        ("host-refused", "a Refusal naming its request ends it with a non-zero status", refused),
        ("host-malformed", "a frame with a bad magic gets Refusal(protocol-error) and a non-zero exit", malformed),
        ("host-version-mismatch", "appexd's Hello of version 2: Refusal(version-mismatch) or a close, and a non-zero exit", versionMismatch),
        ("host-end-of-stream", "appexd closing with the request open ends it with a non-zero status", endOfStream),
    ]

    /// A listening socket in a fresh directory, the command started against it, and the
    /// accepted connection.
    final class Session {
        let directory: String
        let listener: Int32
        let process = Process()
        let log: String
        var socket: WireSocket?

        init(_ command: [String]) throws {
            var template = Array((NSTemporaryDirectory() + "appex-conformance-host-XXXXXX").utf8CString)
            guard let p = mkdtemp(&template) else { throw Failure("mkdtemp: \(String(cString: strerror(errno)))") }
            directory = String(cString: p)
            log = directory + "/log"
            let path = directory + "/appexd.sock"
            listener = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard listener >= 0, bound == 0, listen(listener, 4) == 0 else {
                throw Failure("listening on \(path): \(String(cString: strerror(errno)))")
            }
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: command[0].contains("/") ? command[0] : "/usr/bin/env")
            process.arguments = command[0].contains("/") ? Array(command.dropFirst()) : command
            process.environment = ProcessInfo.processInfo.environment.merging(["APPEX_SOCKET": path]) { _, new in new }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle(forWritingAtPath: log)
            process.standardError = FileHandle(forWritingAtPath: log)
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            socket?.close()
            close(listener)
            try? FileManager.default.removeItem(atPath: directory)
        }

        /// Accepts the command's connection and reads its Hello.
        func accept(within milliseconds: Int32 = 5_000) throws -> Hello {
            var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, milliseconds) == 1 else { throw Failure("it did not connect within \(milliseconds) ms\(tail)") }
            let fd = Glibc.accept(listener, nil, nil)
            guard fd >= 0 else { throw Failure("accept: \(String(cString: strerror(errno)))") }
            socket = WireSocket(adopting: fd)
            guard case .hello(let hello) = try message(expecting: "its Hello") else { throw Failure("its first frame is not a Hello") }
            guard hello.protocolVersion == WireProtocol.version else { throw Failure("Hello says protocol version \(hello.protocolVersion)") }
            return hello
        }

        /// Check-in and the request: the HostBeginRequest's id.
        func request() throws -> UInt64 {
            _ = try accept()
            try send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
            guard case .hostBeginRequest(let begin) = try message(expecting: "HostBeginRequest") else {
                throw Failure("expected HostBeginRequest after check-in")
            }
            guard begin.requestID >= 1 else { throw Failure("request id 0") }
            return begin.requestID
        }

        func send(_ message: Message) throws { _ = try socket!.send(message) }

        func message(expecting what: String, within milliseconds: Int32 = 5_000) throws -> Message {
            var p = pollfd(fd: socket!.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, milliseconds) == 1 else { throw Failure("expected \(what), nothing came within \(milliseconds) ms\(tail)") }
            switch try socket!.receive() {
            case .frame(let frame):
                frame.closeDescriptors()
                return frame.message
            case .endOfStream, .wouldBlock: throw Failure("expected \(what), it closed the connection\(tail)")
            }
        }

        /// The exit status once it has ended within `milliseconds`.
        func exitStatus(within milliseconds: Int = 5_000) throws -> Int32 {
            let deadline = Date().addingTimeInterval(Double(milliseconds) / 1000)
            while process.isRunning && Date() < deadline { usleep(5_000) }
            guard !process.isRunning else { throw Failure("still running \(milliseconds) ms later\(tail)") }
            return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        }

        var tail: String {
            let text = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(2).joined(separator: " | ")
            return text.isEmpty ? "" : " (its output: \(text))"
        }
    }

    static func expectFailureExit(_ s: Session) throws {
        let status = try s.exitStatus()
        guard status != 0 else { throw Failure("exited with status 0\(s.tail)") }
    }

    static func checkIn(_ command: [String]) throws {
        let s = try Session(command)
        _ = try s.request()
    }

    static func ping(_ command: [String]) throws {
        let s = try Session(command)
        let id = try s.request()
        try s.send(.ping(sequence: 41))
        let answer = try s.message(expecting: "Pong(41)")
        guard answer == .pong(sequence: 41) else { throw Failure("expected Pong(41), got \(answer)") }
        try s.send(.requestOutcome(RequestOutcome(requestID: id, outcome: .completed)))
    }

    static func completed(_ command: [String]) throws {
        let s = try Session(command)
        let id = try s.request()
        try s.send(
            .requestOutcome(
                RequestOutcome(
                    requestID: id, outcome: .completed,
                    items: [ExtensionItem(attributedContentText: "from appex conformance")])))
        let status = try s.exitStatus()
        guard status == 0 else { throw Failure("exited with status \(status) after a completed outcome\(s.tail)") }
    }

    static func refused(_ command: [String]) throws {
        let s = try Session(command)
        let id = try s.request()
        try s.send(.refusal(Refusal(reason: .unknownExtension, message: "appex conformance refuses it", requestID: id)))
        try expectFailureExit(s)
    }

    static func malformed(_ command: [String]) throws {
        let s = try Session(command)
        _ = try s.request()
        try s.socket!.send(frame: try ConformanceChecks.badMagic())
        let m = try s.message(expecting: "Refusal(protocol-error)")
        guard case .refusal(let r) = m, r.reason == .protocolError, r.requestID == nil else {
            throw Failure("expected Refusal(protocol-error), got \(m)")
        }
        try expectFailureExit(s)
    }

    static func versionMismatch(_ command: [String]) throws {
        let s = try Session(command)
        _ = try s.accept()
        try s.send(.hello(Hello(protocolVersion: 2, bundleIdentifier: "appexd", pid: getpid())))
        // Refusing is the page's way (section 8); closing at once is accepted too.
        if let reply = try? s.message(expecting: "Refusal(version-mismatch)") {
            guard case .refusal(let r) = reply, r.reason == .versionMismatch else {
                throw Failure("expected Refusal(version-mismatch) or a close, got \(reply)")
            }
        }
        try expectFailureExit(s)
    }

    static func endOfStream(_ command: [String]) throws {
        let s = try Session(command)
        _ = try s.request()
        s.socket!.close()
        s.socket = nil
        try expectFailureExit(s)
    }
}
