import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A uid that may do nothing (neither host nor administrator) holding connections to the
/// control socket for the whole run: it keeps up to `target` connections open without ever
/// sending Hello, opening a new one as soon as appexd closes one (refused at its per-uid cap,
/// or closed at the Hello deadline). A python3 process under `setpriv --reuid`.
final class Stranger: @unchecked Sendable {
    let process = Process()
    let input = Pipe(), output = Pipe()

    /// Every 50 ms: reap the connections appexd closed (readable: a Refusal or end of stream),
    /// then open new ones up to the target. `held` is the most connections open at once that
    /// appexd had kept for at least 200 ms (a refused one is closed within that). Ends when
    /// stdin closes, or after `limit` seconds (bounded), printing one line of counts.
    static let script = """
        import os, select, socket, sys, time
        path, target, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
        os.set_blocking(0, False)
        opened = failed = closed_fast = closed_late = held = 0
        socks = {}
        start = time.monotonic()
        while time.monotonic() - start < limit:
            now = time.monotonic()
            for s, t in list(socks.items()):
                if select.select([s], [], [], 0)[0]:
                    if now - t < 1.0: closed_fast += 1
                    else: closed_late += 1
                    s.close(); del socks[s]
            held = max(held, sum(1 for t in socks.values() if now - t >= 0.2))
            while len(socks) < target:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                try:
                    s.connect(path); socks[s] = time.monotonic(); opened += 1
                except OSError:
                    s.close(); failed += 1; break
            try:
                if os.read(0, 1) == b"": break
            except BlockingIOError:
                pass
            time.sleep(0.05)
        print(f"opened {opened} failed {failed} refused {closed_fast} expired {closed_late} held {held}", flush=True)
        """

    init(uid: UInt32, socket: String, root: String, target: Int = 16) {
        let path = root + "/stranger.py"
        do { try Stranger.script.write(toFile: path, atomically: true, encoding: .utf8) } catch { fail("stranger script: \(error)") }
        chmod(path, 0o644)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/env", "python3", path,
            socket, "\(target)", "3600",
        ]
        process.standardInput = input
        process.standardOutput = output
        do { try process.run() } catch { fail("cannot start the stranger (setpriv, python3): \(error)") }
    }

    /// Closes its stdin, gives it 5 s to print its line of counts, SIGKILLs it (it may inherit
    /// a mask with SIGTERM blocked) and reads the line (nil if it died without one).
    func finish() -> Counts? {
        try? input.fileHandleForWriting.close()
        for _ in 0..<50 where process.isRunning { usleep(100_000) }
        end()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let words = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        var values: [String: Int] = [:]
        for i in stride(from: 0, to: words.count - 1, by: 2) { values[String(words[i])] = Int(words[i + 1]) }
        guard let opened = values["opened"], let held = values["held"] else { return nil }
        return Counts(
            opened: opened, failed: values["failed"] ?? 0, refused: values["refused"] ?? 0,
            expired: values["expired"] ?? 0, held: held)
    }

    func end() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    struct Counts {
        /// Connections made; connects that failed; closed by appexd within 1 s (refused) or
        /// later (the Hello deadline); most held at once.
        var opened, failed, refused, expired, held: Int
    }
}
