import AppexStateDirectory
import CAppexLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An extension's stdout and stderr: a pipe the extension writes, copied by Appex into
/// `<state>/logs/<id>.log`, capped and rotated.
///
/// The extension never holds the log file itself: with the file's descriptor it could
/// `ftruncate` it, or fill the disk. Through a pipe it can only write bytes, and Appex decides
/// where they go: when the log would pass `limit` bytes it is renamed to `<id>.log.1`
/// (replacing the previous one) and a new log is started, so one extension's logs never take
/// more than twice `limit` on disk. The per-launch header line goes through the same path.
///
/// All file work is beneath the logs directory's descriptor, without following links.
public final class ExtensionLogFile: @unchecked Sendable {
    /// Bytes per log file before it rotates.
    public static let defaultLimit = 1 << 20

    public let limit: Int
    private let name: String
    private let logsFD: Int32
    /// Current log file, guarded by `lock` (the copier and header writers share it).
    private let file: Mutex<Int32>
    /// The pipes' read ends while the pump copies from them (none before and after), each with
    /// the descriptor it echoes to (-1: none).
    private let pipes = Mutex<[(fd: Int32, echo: Int32)]>([])

    /// Opens (creating) `<id>.log` beneath `logsFD`; takes ownership of `logsFD`.
    init(logsFD: Int32, bundleIdentifier: String, limit: Int = ExtensionLogFile.defaultLimit) throws {
        self.logsFD = logsFD
        self.name = bundleIdentifier + ".log"
        self.limit = max(4096, limit)
        self.file = Mutex(-1)
        let fd = try Self.openLog(logsFD, name)
        file.withLock { $0 = fd }
    }

    deinit {
        stop()
        file.withLock { Sys.close($0) }
        Sys.close(logsFD)
    }

    static func openLog(_ dir: Int32, _ name: String) throws -> Int32 {
        let fd = appex_openat2(
            dir, name, UInt64(O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW), 0o640,
            ContainerStore.resolveBeneath)
        if fd < 0 { throw Sys.fail("open log", name) }
        return fd
    }

    /// A pipe for the extension's stdout and stderr: returns the write end (the caller passes
    /// it to the launch and closes it afterwards); the read end is copied from by the shared
    /// log pump (DescriptorPump.logs), not a thread of its own. `echo`: a descriptor of ours
    /// (`appex run --stdio`: 1 or 2) that gets each piece too. The extension writes only to
    /// the pipe, never to that descriptor: a terminal it held could be sent ioctls, a file
    /// truncated.
    public func makePipe(echo: Int32 = -1) throws -> Int32 {
        var p: [Int32] = [-1, -1]
        guard appex_pipe_cloexec(&p) == 0 else { throw Sys.fail("pipe for the extension's output") }
        // Only the read end: the extension's end stays blocking, as a program expects.
        _ = fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK)
        pipes.withLock { $0.append((p[0], echo)) }
        let readFD = p[0]
        do {
            try DescriptorPump.logs.add(readFD) { [self] in
                // EOF: every writer is gone; stop() closes the descriptor.
                if !drain(readFD, echo: echo, once: true) { DescriptorPump.logs.remove(readFD) }
            }
        } catch {
            pipes.withLock { $0.removeAll { $0.fd == readFD } }
            Sys.close(p[0])
            Sys.close(p[1])
            throw error
        }
        return p[1]
    }

    /// Copies what the pipe holds into the log: one read (`once`, from the pump: it calls
    /// again while there is more) or until it is empty, at most 1 MiB (a writer that is still
    /// writing does not hold up stop()). False at end of file or on an error.
    private func drain(_ fd: Int32, echo: Int32, once: Bool) -> Bool {
        var buf = [UInt8](repeating: 0, count: 16384)
        var reads = 0
        while true {
            let r = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if r > 0 {
                let piece = Array(buf[0..<r])
                // A reader that went away (a closed pipe) only stops the echo, not the log.
                if echo >= 0 { try? Sys.writeAll(fd: echo, piece) }
                append(piece)
                reads += 1
                if once || reads >= 64 { return true }
                continue
            }
            if r < 0 && errno == EINTR { continue }
            return r < 0 && errno == EAGAIN
        }
    }

    /// Appends `bytes`, rotating whenever the log is full; a piece that does not fit is cut at
    /// its last newline that does, so lines stay whole where they can.
    public func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        file.withLock { fd in
            guard fd >= 0 else { return }
            var rest = bytes[...]
            while !rest.isEmpty {
                var st = stat()
                let size = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
                let space = limit - size
                if space <= 0 || (rest.count > space && size > 0 && !rest.prefix(space).contains(10)) {
                    // A log that cannot rotate drops output rather than grow past its limit.
                    guard rotate(&fd) else { return }
                    continue
                }
                var take = min(space, rest.count)
                if take < rest.count, let nl = rest.prefix(take).lastIndex(of: 10) {
                    take = nl - rest.startIndex + 1
                }
                do { try Sys.writeAll(fd: fd, Array(rest.prefix(take))) } catch { return }
                rest = rest.dropFirst(take)
            }
        }
    }

    private func rotate(_ fd: inout Int32) -> Bool {
        // Another process (a second `appex run` of the same extension) may have rotated
        // already: only rename the file if it is still ours.
        var mine = stat(), named = stat()
        if fstat(fd, &mine) == 0, fstatat(logsFD, name, &named, AT_SYMLINK_NOFOLLOW) == 0,
            mine.st_ino == named.st_ino, mine.st_dev == named.st_dev
        {
            _ = renameat(logsFD, name, logsFD, name + ".1")
        }
        guard let fresh = try? Self.openLog(logsFD, name) else { return false }
        Sys.close(fd)
        fd = fresh
        return true
    }

    /// Stops the copier after draining what the pipe still holds. Idempotent.
    public func stop() {
        let open = pipes.withLock { open -> [(fd: Int32, echo: Int32)] in
            defer { open = [] }
            return open
        }
        for (fd, echo) in open {
            DescriptorPump.logs.perform { [self] in
                _ = drain(fd, echo: echo, once: false)
                DescriptorPump.logs.remove(fd)  // on the pump's thread: at once
            }
            Sys.close(fd)
        }
    }
}
