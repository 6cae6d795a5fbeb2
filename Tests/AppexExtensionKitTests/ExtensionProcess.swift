import AppexWire
import AppexWireIO
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real extension executable, started as appexd would start it (its end of a socketpair at
/// fd 3, APPEX_SOCKET_FD and APPEX_BUNDLE_IDENTIFIER set, no sandbox), with the test playing
/// appexd on the other end through a supervisor-role WireConnection. Its stderr goes to a
/// file the test can read. `stop()` (also run on deinit) kills and reaps it if it is still
/// there and removes the file.
final class ExtensionProcess {
    enum Exit: Equatable { case status(Int32), signal(Int32) }

    struct Timeout: Error, CustomStringConvertible {
        var waitingFor: String
        var description: String { "timed out waiting for \(waitingFor)" }
    }

    let pid: pid_t
    let connection: WireConnection
    let stderrPath: String
    private var exit: Exit?
    private var stopped = false
    private var socketClosed = false
    private var nextRequestID: UInt64 = 1

    /// Bound on every wait, so a broken extension fails a test instead of hanging it.
    static let patience: Duration = .seconds(20)

    /// The executables SwiftPM built beside the test bundle.
    static let buildDirectory: String = URL(fileURLWithPath: CommandLine.arguments[0])
        .resolvingSymlinksInPath().deletingLastPathComponent().path

    init(_ product: String, bundleIdentifier: String? = "dev.appex.tests.extension",
         home: String? = nil, socketAtFD3: Bool = true) throws {
        let executable = Self.buildDirectory + "/" + product
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw POSIXError(.ENOENT, userInfo: [NSLocalizedDescriptionKey: "\(executable) is not built"])
        }
        let (mine, theirs) = try WireSocket.pair()
        defer { theirs.close() }
        stderrPath = NSTemporaryDirectory() + "appex-sdk-test-\(getpid())-\(UUID().uuidString).stderr"

        // dup2 onto the same number would keep close-on-exec; make sure the numbers differ.
        var childEnd = theirs.fd
        if childEnd == WireProtocol.extensionSocketFD {
            childEnd = fcntl(theirs.fd, F_DUPFD_CLOEXEC, 10)
        }
        defer { if childEnd != theirs.fd { close(childEnd) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if socketAtFD3 { posix_spawn_file_actions_adddup2(&actions, childEnd, WireProtocol.extensionSocketFD) }

        var environment = ["PATH=/usr/bin:/bin", "\(WireProtocol.extensionSocketEnvironment)=\(WireProtocol.extensionSocketFD)"]
        if let bundleIdentifier { environment.append("APPEX_BUNDLE_IDENTIFIER=\(bundleIdentifier)") }
        if let home { environment.append("HOME=\(home)") }
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }

        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, nil, &argv, &envp)
        guard rc == 0 else {
            mine.close()
            throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO)
        }
        pid = child
        connection = WireConnection(socket: mine, role: .supervisor)
    }

    /// Started and checked in, ready for requests.
    static func checkedIn(_ product: String, bundleIdentifier: String = "dev.appex.tests.extension",
                          home: String? = nil) throws -> ExtensionProcess {
        let process = try ExtensionProcess(product, bundleIdentifier: bundleIdentifier, home: home)
        do {
            try process.checkIn()
        } catch {
            process.stop()
            throw error
        }
        return process
    }

    deinit { stop() }

    /// Kills (if still running) and reaps the child, closes the socket, removes the stderr file.
    func stop() {
        guard !stopped else { return }
        stopped = true
        if exit == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            exit = .status(-1)
        }
        closeSocket()
        unlink(stderrPath)
    }

    /// Closes appexd's end, once: tests run in parallel, and a second close could hit a
    /// descriptor number another test has been given since.
    func closeSocket() {
        guard !socketClosed else { return }
        socketClosed = true
        connection.close()
    }

    // MARK: playing appexd

    /// Reads the extension's Hello and answers with appexd's.
    @discardableResult
    func checkIn() throws -> Hello {
        guard case .hello(let hello) = try receive().message else { throw Timeout(waitingFor: "a Hello first") }
        try connection.send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
        return hello
    }

    /// Begins a request; returns its id.
    @discardableResult
    func begin(_ items: [ExtensionItem], descriptors: [Int32] = []) throws -> UInt64 {
        let id = nextRequestID
        nextRequestID += 1
        try connection.send(.beginRequest(BeginRequest(requestID: id, items: items)), descriptors: descriptors)
        return id
    }

    /// A request whose first item's content text is `command`, and its answer.
    func request(_ command: String, attachments: [AppexWire.Attachment] = [], descriptors: [Int32] = []) throws -> ReceivedFrame {
        try begin([ExtensionItem(attributedContentText: command, attachments: attachments)], descriptors: descriptors)
        return try receive()
    }

    /// The next frame (stale ones skipped); throws at the end of the stream or after `patience`.
    func receive() throws -> ReceivedFrame {
        let deadline = ContinuousClock.now + Self.patience
        while true {
            guard readable(until: deadline) else { throw Timeout(waitingFor: "a frame from pid \(pid)") }
            switch try connection.receive(blocking: false) {
            case .message(let frame): return frame
            case .stale, .wouldBlock: continue
            case .endOfStream: throw Timeout(waitingFor: "a frame, but the extension closed its socket")
            }
        }
    }

    /// True when the extension closed its end (after draining nothing but stale frames).
    func receiveEndOfStream() throws -> Bool {
        let deadline = ContinuousClock.now + Self.patience
        while readable(until: deadline) {
            switch try connection.receive(blocking: false) {
            case .endOfStream: return true
            case .stale, .wouldBlock: continue
            case .message: return false
            }
        }
        return false
    }

    private func readable(until deadline: ContinuousClock.Instant) -> Bool {
        var entry = pollfd(fd: connection.socket.fd, events: Int16(POLLIN), revents: 0)
        while ContinuousClock.now < deadline {
            if poll(&entry, 1, 50) > 0 { return true }
        }
        return false
    }

    // MARK: the process

    /// How the process ended, waiting up to `patience`; nil if it is still running.
    func waitForExit() -> Exit? {
        if let exit { return exit }
        let deadline = ContinuousClock.now + Self.patience
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let signal = status & 0x7f
                exit = signal == 0 ? .status((status >> 8) & 0xff) : .signal(signal)
                return exit
            }
            usleep(5_000)
        }
        return nil
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}

/// The answer texts of a CompleteRequest, or nil for any other message.
func completedTexts(_ frame: ReceivedFrame) -> [String]? {
    guard case .completeRequest(let answer) = frame.message else { return nil }
    return answer.items.map { $0.attributedContentText ?? "" }
}

/// A fresh directory under the temporary directory; the caller removes it.
func makeTemporaryDirectory(_ tag: String) throws -> String {
    let path = NSTemporaryDirectory() + "appex-sdk-\(tag)-\(getpid())-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A temporary file holding `bytes`, opened for reading; the file is already unlinked, so
/// closing the descriptor removes it.
func temporaryFile(_ bytes: [UInt8]) throws -> Int32 {
    var template = Array((NSTemporaryDirectory() + "appex-sdk-file-XXXXXX").utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    _ = lseek(fd, 0, SEEK_SET)
    return fd
}
