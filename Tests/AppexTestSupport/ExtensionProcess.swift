import AppexWire
import AppexWireIO
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real extension executable (Swift on the SDK, or C) running as a child of the test, started
/// as the launcher leaves one (ExtensionChild: its end of a socketpair at fd 3, stdin
/// /dev/null, a clean signal state) but with no sandbox. The test holds the other end and plays
/// appexd (role supervisor). The child's stderr goes to a file the test can read (`log`).
/// `stop()`, or at the latest `deinit`, kills and reaps the child if it is still there, closes
/// the socket and removes the file.
public final class ExtensionProcess {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    public let pid: pid_t
    public let connection: WireConnection
    /// Where the child's stderr goes (its log).
    public let logPath: String
    private var waitStatus: Int32?
    private var connectionClosed = false
    private var stopped = false
    private var nextRequestID: UInt64 = 1

    /// How long to wait for something that must happen. Not a performance bound: only a guard
    /// so that a broken extension fails the test instead of hanging the suite.
    public static let patience: Duration = .seconds(60)
    public static var patienceMilliseconds: Int32 { Int32(patience.components.seconds * 1000) }

    /// Starts `executable` with APPEX_SOCKET_FD=3, and APPEX_BUNDLE_IDENTIFIER, APPEX_BUNDLE_PATH
    /// and HOME when given, plus `environment`, which may override or (with nil) remove them.
    /// `socketAtFD3: false` starts it with nothing at fd 3, though the environment says 3.
    public init(
        _ executable: String, bundleIdentifier: String? = "dev.appex.tests.extension", bundlePath: String? = nil,
        home: String? = nil, environment: [String: String?] = [:], socketAtFD3: Bool = true
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw Failure("\(executable) is not built") }
        let (ours, theirs) = try WireSocket.pair()
        defer { theirs.close() }
        logPath = NSTemporaryDirectory() + "appex-extension-\(getpid())-\(UUID().uuidString).log"

        var env: [String: String] = [
            WireProtocol.extensionSocketEnvironment: "\(WireProtocol.extensionSocketFD)",
            "PATH": "/usr/bin:/bin",
        ]
        if let bundleIdentifier { env["APPEX_BUNDLE_IDENTIFIER"] = bundleIdentifier }
        if let bundlePath { env["APPEX_BUNDLE_PATH"] = bundlePath }
        if let home { env["HOME"] = home }
        for (key, value) in environment { env[key] = value }
        // The shell closes fd 3 and becomes the extension (same pid).
        let command = socketAtFD3 ? [executable] : ["/bin/sh", "-c", "exec \"$0\" 3>&-", executable]

        do {
            pid = try ExtensionChild.spawn(
                command, environment: env.map { "\($0.key)=\($0.value)" }, socket: theirs,
                logPath: logPath, stdoutToLog: false)
        } catch {
            ours.close()
            throw Failure("\(error)")
        }
        connection = WireConnection(socket: ours, role: .supervisor)
    }

    /// Started and checked in, ready for requests.
    public static func checkedIn(
        _ executable: String, bundleIdentifier: String = "dev.appex.tests.extension",
        home: String? = nil
    ) throws -> ExtensionProcess {
        let process = try ExtensionProcess(executable, bundleIdentifier: bundleIdentifier, home: home)
        do {
            try process.checkIn()
        } catch {
            process.stop()
            throw error
        }
        return process
    }

    deinit { stop() }

    /// Kills (if still running) and reaps the child, closes the socket, removes the log.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        kill()
        closeConnection()
        unlink(logPath)
    }

    /// Closes appexd's end (the extension sees end-of-stream). Once only: tests run in
    /// parallel, and a second close could hit a descriptor number another test has been given since.
    public func closeConnection() {
        guard !connectionClosed else { return }
        connectionClosed = true
        connection.close()
    }

    // MARK: the conversation

    /// The next event from the extension, waiting at most `milliseconds`; nil when nothing came.
    public func next(within milliseconds: Int32 = patienceMilliseconds) throws -> WireConnection.Event? {
        var p = pollfd(fd: connection.socket.fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&p, 1, milliseconds)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw Failure("poll: errno \(errno)") }
            if n == 0 { return nil }
            return try connection.receive()
        }
    }

    /// The next message; anything else (end of stream, silence, a stale message) fails.
    public func message() throws -> ReceivedFrame {
        switch try next() {
        case .message(let frame): return frame
        case let other: throw Failure("expected a message, got \(String(describing: other)); log: \(log)")
        }
    }

    /// The next message, stale ones skipped; fails at the end of the stream or after `patience`.
    public func receive() throws -> ReceivedFrame {
        let deadline = ContinuousClock.now + Self.patience
        while true {
            switch try next(within: Self.milliseconds(until: deadline)) {
            case .message(let frame): return frame
            case .stale, .wouldBlock: continue
            case .endOfStream: throw Failure("expected a message from pid \(pid), but the extension closed its socket")
            case nil: throw Failure("timed out waiting for a message from pid \(pid)")
            }
        }
    }

    /// True when the extension closed its end (after draining nothing but stale frames).
    public func receiveEndOfStream() throws -> Bool {
        let deadline = ContinuousClock.now + Self.patience
        while true {
            switch try next(within: Self.milliseconds(until: deadline)) {
            case .endOfStream: return true
            case .stale, .wouldBlock: continue
            case .message, nil: return false
            }
        }
    }

    /// The stream ends (the extension closed its socket or exited).
    public func expectEndOfStream() throws {
        switch try next() {
        case .endOfStream: return
        case let other: throw Failure("expected the end of the stream, got \(String(describing: other))")
        }
    }

    /// True when the extension sent nothing (and did not close) within `milliseconds`.
    public func isSilent(for milliseconds: Int32) throws -> Bool {
        try next(within: milliseconds) == nil
    }

    /// Reads the extension's Hello and answers with appexd's: the check-in.
    @discardableResult
    public func checkIn() throws -> Hello {
        let frame = try message()
        guard case .hello(let hello) = frame.message else { throw Failure("expected Hello, got \(frame.message)") }
        try connection.send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
        return hello
    }

    /// Begins a request with the next request id; returns the id.
    @discardableResult
    public func begin(_ items: [ExtensionItem], descriptors: [Int32] = []) throws -> UInt64 {
        let id = nextRequestID
        nextRequestID += 1
        try connection.send(.beginRequest(BeginRequest(requestID: id, items: items)), descriptors: descriptors)
        return id
    }

    /// A request whose first item's content text is `command`, and its answer (stale frames skipped).
    public func request(_ command: String, attachments: [AppexWire.Attachment] = [], descriptors: [Int32] = []) throws -> ReceivedFrame {
        try begin([ExtensionItem(attributedContentText: command, attachments: attachments)], descriptors: descriptors)
        return try receive()
    }

    /// Sends request `id` and returns the extension's answer (skipping nothing: the next
    /// message must be the answer).
    public func request(_ id: UInt64, _ items: [ExtensionItem], descriptors: [Int32] = []) throws -> Message {
        try connection.send(.beginRequest(BeginRequest(requestID: id, items: items)), descriptors: descriptors)
        return try message().message
    }

    // MARK: the process

    /// The extension's stderr so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The descriptors open in the child once it has finished with every frame sent so far:
    /// it handles frames one at a time, so when a Ping sent now is answered, everything before
    /// it (closing the descriptors that came with a request included) is done.
    public func openDescriptorsAfterRoundTrip(sequence: UInt64) throws -> [Int32] {
        try connection.send(.ping(sequence: sequence))
        let answer = try message().message
        guard answer == .pong(sequence: sequence) else { throw Failure("expected Pong(\(sequence)), got \(answer)") }
        return openDescriptors
    }

    /// The descriptor numbers open in the child, from /proc.
    public var openDescriptors: [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return names.compactMap { Int32($0) }.sorted()
    }

    /// Waits for the child to end and returns its wait status. Kills it (and fails) if it is
    /// still running after `patience`.
    public func waitForExit() throws -> Int32 {
        if let waitStatus { return waitStatus }
        let deadline = ContinuousClock.now + Self.patience
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw Failure("waitpid(\(pid)): errno \(errno)") }
            if ContinuousClock.now >= deadline {
                kill()
                throw Failure("pid \(pid) still running after \(Self.patience); log: \(log)")
            }
            usleep(5_000)
        }
        waitStatus = status
        return status
    }

    /// SIGKILL and reap (once); returns the wait status.
    @discardableResult
    public func kill() -> Int32 {
        if let waitStatus { return waitStatus }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        waitStatus = status
        return status
    }

    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - ContinuousClock.now
        return max(0, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
    }
}
