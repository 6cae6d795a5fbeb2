import CAppexLauncher
import Foundation
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
public final class ExtensionLog: @unchecked Sendable {
    /// Bytes per log file before it rotates.
    public static let defaultLimit = 1 << 20

    public let limit: Int
    private let name: String
    private let logsFD: Int32
    /// Current log file, guarded by `lock` (the copier and header writers share it).
    private let file: Protected<Int32>
    private var readFD: Int32 = -1
    private var stopRead: Int32 = -1
    private var stopWrite: Int32 = -1
    private let finished = DispatchSemaphore(value: 0)
    private let running = Protected(false)

    /// Opens (creating) `<id>.log` beneath `logsFD`; takes ownership of `logsFD`.
    init(logsFD: Int32, bundleIdentifier: String, limit: Int = ExtensionLog.defaultLimit) throws {
        self.logsFD = logsFD
        self.name = bundleIdentifier + ".log"
        self.limit = max(4096, limit)
        self.file = Protected(-1)
        let fd = try Self.openLog(logsFD, name)
        file.withLock { $0 = fd }
    }

    deinit {
        stop()
        file.withLock { Sys.close($0) }
        Sys.close(logsFD)
    }

    static func openLog(_ dir: Int32, _ name: String) throws -> Int32 {
        let fd = appex_openat2(dir, name, UInt64(O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW), 0o640,
                               ContainerStore.resolveBeneath)
        if fd < 0 { throw Sys.fail("open log", name) }
        return fd
    }

    /// A pipe for the extension's stdout and stderr: returns the write end (the caller passes
    /// it to the launch and closes it afterwards); the read end is copied from on a thread.
    public func makePipe() throws -> Int32 {
        var p: [Int32] = [-1, -1]
        guard appex_pipe_cloexec(&p) == 0 else { throw Sys.fail("pipe for the extension's output") }
        var s: [Int32] = [-1, -1]
        guard appex_pipe_cloexec(&s) == 0 else {
            Sys.close(p[0]); Sys.close(p[1])
            throw Sys.fail("pipe")
        }
        readFD = p[0]
        stopRead = s[0]
        stopWrite = s[1]
        running.withLock { $0 = true }
        let thread = Thread { [self] in
            self.copy()
            self.finished.signal()
        }
        thread.name = "appex-log"
        thread.start()
        return p[1]
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
           mine.st_ino == named.st_ino, mine.st_dev == named.st_dev {
            _ = renameat(logsFD, name, logsFD, name + ".1")
        }
        guard let fresh = try? Self.openLog(logsFD, name) else { return false }
        Sys.close(fd)
        fd = fresh
        return true
    }

    /// Stops the copier after draining what the pipe still holds. Idempotent.
    public func stop() {
        let wasRunning = running.withLock { r -> Bool in defer { r = false }; return r }
        guard wasRunning else { return }
        var one: UInt8 = 1
        _ = write(stopWrite, &one, 1)
        finished.wait()
        Sys.close(readFD); Sys.close(stopRead); Sys.close(stopWrite)
        readFD = -1; stopRead = -1; stopWrite = -1
    }

    private func copy() {
        var buf = [UInt8](repeating: 0, count: 16384)
        var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
        var stopping = false
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            // Once asked to stop, only drain what is already there.
            let n = poll(&fds, 2, stopping ? 0 : -1)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { stopping = true }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let r = buf.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
                if r > 0 { append(Array(buf[0..<r])); continue }
                if r < 0 && errno == EINTR { continue }
                return  // EOF: every writer is gone
            }
            if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return }
            if stopping { return }
        }
    }
}
