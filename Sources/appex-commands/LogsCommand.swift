import AppexBundle
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `appex logs ID [-f]`: an extension's stdout and stderr as appexd (or `appex run`) kept
/// them in `<state>/logs/<ID>.log` (and the rotated `<ID>.log.1` before it), like
/// `journalctl -u`; `-f` follows the log as it grows and across rotations, like `tail -F`.
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Show an extension's stdout and stderr; -f follows.",
        discussion: """
            Reads the log in the state directory of the appexd at the socket (it is asked for \\
            it), or of --state-dir; with no appexd answering, of the default state directory. \\
            Each launch starts with a line "--- appex run ID at TIME ---".
            """)

    @Argument(help: "The extension's bundle identifier.") var bundleIdentifier: String
    @Flag(name: [.customShort("f"), .long], help: "Keep running and print what the extension writes as it is written.")
    var follow = false
    @Option(name: [.customShort("n"), .long], parsing: .unconditional, help: "Only the last N lines.")
    var lines: Int?
    @Option(help: "Read this state directory (default: the one of the appexd at the socket).") var stateDir: String?
    @Option(help: "appexd's control socket (default $APPEX_SOCKET, else /run/appex/appexd.sock).") var socket: String?

    func validate() throws {
        if let lines, lines < 0 { throw ValidationError("--lines must be 0 or more, not \(lines)") }
        if let problem = BundleIdentifierRules.pathSafetyProblem(bundleIdentifier) {
            throw ValidationError("\"\(bundleIdentifier)\" is not a bundle identifier: it \(problem)")
        }
    }

    func run() async throws {
        let source = try await HistorySource.resolve(stateDir: stateDir, socket: socket)
        let logs = source.stateDirectory + "/logs"
        let name = bundleIdentifier + ".log"
        // Beneath the logs directory, following no link: the names come from the command line.
        let dir = open(logs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard dir >= 0 else {
            throw CommandFailure(.noInput, "appex logs: no logs at \(logs) (\(source.origin)): \(String(cString: strerror(errno)))")
        }
        defer { close(dir) }
        var log = LogFile(dir: dir, name: name)
        guard log.reopen() || follow else {
            throw CommandFailure(.noInput, "appex logs: \(bundleIdentifier) has no log in \(logs) (\(source.origin))")
        }
        var text = LogFile.readAll(dir: dir, name: name + ".1") + log.readNew()
        if let lines { text = Self.lastLines(text, lines) }
        FileHandle.standardOutput.write(Data(text))
        guard follow else { return }
        while true {
            try await Task.sleep(for: .milliseconds(200))
            if log.rotated() { _ = log.reopen() }
            let more = log.readNew()
            if !more.isEmpty { FileHandle.standardOutput.write(Data(more)) }
        }
    }

    static func lastLines(_ bytes: [UInt8], _ n: Int) -> [UInt8] {
        guard n > 0 else { return [] }
        var count = 0
        var i = bytes.count
        // A last line without its newline counts too.
        if bytes.last == 10 { i -= 1 }
        while i > 0 {
            if bytes[i - 1] == 10 {
                count += 1
                if count == n { break }
            }
            i -= 1
        }
        return Array(bytes[i...])
    }
}

/// One log file read from where the last read ended; noticed when it is rotated (a new file
/// under its name) or cut.
struct LogFile {
    let dir: Int32
    let name: String
    private(set) var fd: Int32 = -1
    private var offset: off_t = 0

    init(dir: Int32, name: String) {
        self.dir = dir
        self.name = name
    }

    /// Opens the file under its name now, from its start. False when there is none.
    mutating func reopen() -> Bool {
        if fd >= 0 { close(fd) }
        fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        offset = 0
        return fd >= 0
    }

    /// The name now holds another file, or ours shrank.
    func rotated() -> Bool {
        var named = stat(), ours = stat()
        guard fstatat(dir, name, &named, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
        guard fd >= 0, fstat(fd, &ours) == 0 else { return true }
        return named.st_ino != ours.st_ino || named.st_dev != ours.st_dev || ours.st_size < offset
    }

    mutating func readNew() -> [UInt8] {
        guard fd >= 0 else { return [] }
        let bytes = Self.read(fd, from: offset)
        offset += off_t(bytes.count)
        return bytes
    }

    static func readAll(dir: Int32, name: String) -> [UInt8] {
        let fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        return read(fd, from: 0)
    }

    private static func read(_ fd: Int32, from start: off_t) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var at = start
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, at) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return out }
            out += buffer[0..<n]
            at += off_t(n)
        }
    }
}
