import AppexWire
import AppexWireIO
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A C extension executable running as a child of the test, with its end of a socketpair at
/// fd 3 as the launcher would leave it, and no sandbox. The test holds the other end and plays
/// appexd (role supervisor). Whatever happens, `deinit` kills and reaps the child and removes
/// its files.
final class ExtensionProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    let pid: pid_t
    let connection: WireConnection
    let bundleIdentifier: String
    /// Where the child's stderr goes (its log).
    let logPath: String
    private var waitStatus: Int32?

    /// How long to wait for something that must happen. Not a performance bound: only a guard
    /// so that a broken extension fails the test instead of hanging the suite.
    static let patience: Int32 = 60_000

    /// The products directory SwiftPM built the executables into (beside the test bundle).
    static func product(_ name: String) -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for directory in [bundle.deletingLastPathComponent(), bundle.deletingLastPathComponent().deletingLastPathComponent()] {
            let path = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/\(name)").path
    }

    /// Starts `executable` with APPEX_SOCKET_FD=3, APPEX_BUNDLE_IDENTIFIER and (when given)
    /// APPEX_BUNDLE_PATH, plus `environment`, which may override or (with nil) remove them.
    init(_ executable: String, bundleIdentifier: String, bundlePath: String? = nil,
         environment: [String: String?] = [:]) throws {
        self.bundleIdentifier = bundleIdentifier
        let (ours, theirs) = try WireSocket.pair()
        defer { theirs.close() }
        logPath = NSTemporaryDirectory() + "appex-cext-\(getpid())-\(UUID().uuidString).log"

        var env: [String: String] = ["APPEX_SOCKET_FD": "3", "APPEX_BUNDLE_IDENTIFIER": bundleIdentifier,
                                     "PATH": "/usr/bin:/bin"]
        if let bundlePath { env["APPEX_BUNDLE_PATH"] = bundlePath }
        for (key, value) in environment { env[key] = value }

        do {
            pid = try ExtensionChild.spawn([executable], environment: env.map { "\($0.key)=\($0.value)" }, socket: theirs,
                                           logPath: logPath, stdoutToLog: false)
        } catch {
            ours.close()
            throw Failure("\(error)")
        }
        connection = WireConnection(socket: ours, role: .supervisor)
    }

    private var connectionClosed = false

    deinit {
        if waitStatus == nil {
            Glibc.kill(pid, SIGKILL)
            _ = reap()
        }
        closeConnection()
        unlink(logPath)
    }

    /// Closes appexd's end (the extension sees end-of-stream). Once only: a second close could
    /// hit a descriptor another test has opened under the same number since.
    func closeConnection() {
        guard !connectionClosed else { return }
        connectionClosed = true
        connection.close()
    }

    // MARK: the conversation

    /// The next event from the extension, waiting at most `milliseconds`; nil when nothing came.
    func next(within milliseconds: Int32 = patience) throws -> WireConnection.Event? {
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
    func message() throws -> ReceivedFrame {
        switch try next() {
        case .message(let frame): return frame
        case let other: throw Failure("expected a message, got \(String(describing: other)); log: \(log)")
        }
    }

    /// Reads the extension's Hello and answers with appexd's: the check-in of section 6.
    @discardableResult
    func checkIn() throws -> Hello {
        let frame = try message()
        guard case .hello(let hello) = frame.message else { throw Failure("expected Hello, got \(frame.message)") }
        try connection.send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
        return hello
    }

    /// Sends one request and returns the extension's answer (skipping nothing: the next
    /// message must be the answer).
    func request(_ id: UInt64, _ items: [ExtensionItem], descriptors: [Int32] = []) throws -> Message {
        try connection.send(.beginRequest(BeginRequest(requestID: id, items: items)), descriptors: descriptors)
        return try message().message
    }

    /// True when the extension sent nothing (and did not close) within `milliseconds`.
    func isSilent(for milliseconds: Int32) throws -> Bool {
        try next(within: milliseconds) == nil
    }

    /// The stream ends (the extension closed its socket or exited).
    func expectEndOfStream() throws {
        switch try next() {
        case .endOfStream: return
        case let other: throw Failure("expected the end of the stream, got \(String(describing: other))")
        }
    }

    // MARK: the process

    /// The extension's stderr so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The descriptors open in the child once it has finished with every frame sent so far:
    /// it handles frames one at a time, so when a Ping sent now is answered, everything before
    /// it (closing the descriptors that came with a request included) is done.
    func openDescriptorsAfterRoundTrip(sequence: UInt64) throws -> [Int32] {
        try connection.send(.ping(sequence: sequence))
        let answer = try message().message
        guard answer == .pong(sequence: sequence) else { throw Failure("expected Pong(\(sequence)), got \(answer)") }
        return openDescriptors
    }

    /// The descriptor numbers open in the child, from /proc.
    var openDescriptors: [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return names.compactMap { Int32($0) }.sorted()
    }

    /// Waits for the child to end and returns its wait status. Kills it (and fails) if it is
    /// still running after `patience`.
    func waitForExit() throws -> Int32 {
        if let waitStatus { return waitStatus }
        var status: Int32 = 0
        var waited: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw Failure("waitpid(\(pid)): errno \(errno)") }
            if waited >= Self.patience {
                Glibc.kill(pid, SIGKILL)
                _ = reap()
                throw Failure("pid \(pid) still running after \(Self.patience) ms; log: \(log)")
            }
            usleep(5_000)
            waited += 5
        }
        waitStatus = status
        return status
    }

    /// SIGKILL and reap; returns the wait status.
    @discardableResult
    func kill() -> Int32 {
        if let waitStatus { return waitStatus }
        Glibc.kill(pid, SIGKILL)
        return reap()
    }

    private func reap() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        waitStatus = status
        return status
    }
}

/// A wait status, readable in expectations.
enum Termination: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    init(_ status: Int32) {
        if status & 0x7f == 0 { self = .exited((status >> 8) & 0xff) } else { self = .signalled(status & 0x7f) }
    }

    var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signalled(let signal): "signal \(signal)"
        }
    }
}

/// Descriptors for attachments, close-on-exec from birth so that a child another test spawns
/// at the same moment cannot inherit them (pipe(2) would leave a window).
enum AttachmentSource {
    /// A stream whose reader sees `bytes` and then end-of-file; returns the reading end.
    static func stream(_ bytes: [UInt8]) throws -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw ExtensionProcess.Failure("socketpair: errno \(errno)")
        }
        defer { close(fds[1]) }
        guard write(fds[1], bytes, bytes.count) == bytes.count else {
            close(fds[0])
            throw ExtensionProcess.Failure("write: errno \(errno)")
        }
        return fds[0]
    }

    /// An unlinked regular file holding `bytes`, positioned at its start.
    static func file(_ bytes: [UInt8]) throws -> Int32 {
        let path = NSTemporaryDirectory() + "appex-cext-\(getpid())-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ExtensionProcess.Failure("open \(path): errno \(errno)") }
        unlink(path)
        guard write(fd, bytes, bytes.count) == bytes.count, lseek(fd, 0, SEEK_SET) == 0 else {
            close(fd)
            throw ExtensionProcess.Failure("write \(path): errno \(errno)")
        }
        return fd
    }
}

/// Fields of /proc/PID/status and /proc/PID/stat.
enum ProcStatus {
    /// Resident memory in KiB (VmRSS).
    static func residentKiB(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else {
            throw ExtensionProcess.Failure("no VmRSS in /proc/\(pid)/status")
        }
        return kib
    }

    /// The scheduler state letter (R running, S sleeping, ...) and user-mode CPU ticks.
    static func state(_ pid: pid_t) throws -> (state: Character, userTicks: Int) {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command name in parentheses: state is field 3, utime field 14.
        guard let close = stat.lastIndex(of: ")") else { throw ExtensionProcess.Failure("bad /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let state = fields[0].first, let ticks = Int(fields[11]) else {
            throw ExtensionProcess.Failure("bad /proc/\(pid)/stat: \(stat)")
        }
        return (state, ticks)
    }
}
