import AppexHostClient
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `appex top` against a real appexd: in a real terminal (tmux) it draws on the alternate
/// screen, refreshes in place, shows a spinning extension's CPU, and quits on `q` and on
/// Ctrl-C with the terminal restored; through a pipe it prints whole frames.
extension DaemonTests {
    /// One tmux server of its own, its socket in the daemon's directory (`-S`), so the user's
    /// sessions are never touched and nothing is left in /tmp.
    struct Tmux {
        let socket: String
        let config: String

        init(root: String) throws {
            socket = root + "/tmux.sock"
            config = root + "/tmux.conf"
            // The pane stays after top exits, so the test can read what it left behind.
            try Data("set -g remain-on-exit on\n".utf8).write(to: URL(fileURLWithPath: config))
        }

        /// A tmux command's output. The first command forks the server, which would hold a
        /// captured pipe open for good: commands that may start it print nowhere. posix_spawn
        /// and waitpid rather than Foundation's Process, which left the forking client a zombie.
        @discardableResult
        func run(_ args: [String], output: Bool = false) throws -> String {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
            defer { if fds[0] >= 0 { close(fds[0]) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            if output {
                posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            } else {
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            }
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addclose(&actions, fds[0])
            posix_spawn_file_actions_addclose(&actions, fds[1])
            let argv = [Self.binary, "-S", socket, "-f", config] + args
            var cargs = argv.map { strdup($0) } + [nil]
            defer { cargs.forEach { free($0) } }
            var pid: pid_t = 0
            let rc = posix_spawn(&pid, Self.binary, &actions, nil, &cargs, environ)
            close(fds[1])
            guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
            var data = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while output {
                let n = read(fds[0], &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                data += buffer[..<n]
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return String(decoding: data, as: UTF8.self)
        }

        func screen(_ target: String) throws -> String { try run(["capture-pane", "-p", "-t", target], output: true) }
        func format(_ target: String, _ f: String) throws -> String {
            try run(["display-message", "-p", "-t", target, f], output: true).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Polls the pane until `check` holds (at most 15 s); the last screen either way.
        func until(_ target: String, _ check: (String) throws -> Bool) throws -> (ok: Bool, screen: String) {
            var last = ""
            for _ in 0..<300 {
                last = try screen(target)
                if try check(last) { return (true, last) }
                usleep(50_000)
            }
            return (false, last)
        }

        /// Ends the server and whatever runs in its panes. kill-server alone was seen to leave
        /// the server (and its panes' shells) running here, so the pids go too.
        func kill() {
            let listed = ((try? run(["list-panes", "-a", "-F", "#{pid} #{pane_pid}"], output: true)) ?? "")
                .split(separator: "\n").map { $0.split(separator: " ").compactMap { Int32($0) } }
            _ = try? run(["kill-server"])
            for pair in listed where pair.count == 2 && pair[0] > 1 && pair[1] > 1 {
                // A pane's process leads its own process group: the group goes (sh, its sleep).
                Glibc.kill(-pair[1], SIGKILL)
                Glibc.kill(pair[0], SIGKILL)
            }
        }

        static let binary =
            ["/usr/bin/tmux", "/bin/tmux", "/usr/local/bin/tmux"].first { (path: String) in
                access(path, X_OK) == 0
            } ?? "/usr/bin/tmux"
    }

    @Test func topDrawsRefreshesAndQuitsUnderTmux() async throws {
        try #require(access(Tmux.binary, X_OK) == 0, "tmux is missing: make deps installs it (apt-get install tmux)")
        let d = try Daemon()
        defer { d.cleanUp() }
        // The spinning probe answers no ping and never completes: under the shipped widget
        // policy it dies 10 s into the spin (request timeout, or no pong), which a loaded
        // machine can take just to start tmux and draw. An overlay gives it the whole test.
        let overlay = d.root + "/policies"
        try FileManager.default.createDirectory(atPath: overlay + "/extension-points", withIntermediateDirectories: true)
        try Data(
            """
            extensionPoints: [com.apple.widgetkit-extension]
            title: top test, a spinning widget lives through the test
            requestTimeout: 120s
            unresponsiveTimeout: 120s

            """.utf8
        ).write(to: URL(fileURLWithPath: overlay + "/extension-points/widgetkit.yaml"))
        d.extraArguments = ["--memory-budget", "256MiB", "--no-system-pressure", "--policy-dir", overlay]
        try d.start()
        do {
            let id = try d.installProbe()
            // An idle instance first (idle timeout 10 s), for top through a pipe.
            #expect(try d.appex(["request", id, "--text", "hi"]).status == 0)
            // Through a pipe: whole frames, as many as asked.
            let batch = try d.appex(["top", "-n", "2", "--interval", "0.2"])
            #expect(batch.status == 0, "\(batch.err)")
            #expect(batch.out.components(separatedBy: "appex top —").count - 1 == 2, "\(batch.out)")
            #expect(batch.out.contains(id + "#1") && !batch.out.contains("\u{1B}["), "plain text: \(batch.out)")

            // Then a spinning request on it: busy in its active band, burning CPU for top to show.
            let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.top")
            defer { host.close() }
            let spin = Task {
                try await host.beginRequest(bundleIdentifier: id, items: [ExtensionItem(userInfo: ["probe.action": .string("spin")])])
            }
            defer { spin.cancel() }

            let tmux = try Tmux(root: d.root)
            defer { tmux.kill() }
            // After top: its exit status and the terminal modes it left, on the normal screen.
            let script = d.root + "/top.sh"
            try Data(
                """
                '\(BuiltProducts.path("appex"))' top --socket '\(d.socket)' --interval 0.3
                echo "rc=$?"
                stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo -e isig -e -isig | tr '\\n' ' '
                sleep 30

                """.utf8
            ).write(to: URL(fileURLWithPath: script))
            try tmux.run(["new-session", "-d", "-x", "160", "-y", "30", "-s", "q", "sh " + script])

            // Draws: the header, the pressure line, and the extension serving in its band.
            let drawn = try tmux.until("q") { $0.contains("appex top") && $0.contains(id + "#1") && $0.contains("busy") }
            #expect(drawn.ok, "\(drawn.screen)")
            #expect(drawn.screen.contains("pressure normal") && drawn.screen.contains("of budget 256M"), "\(drawn.screen)")
            #expect(try tmux.format("q", "#{alternate_on} #{cursor_flag}") == "1 0", "alternate screen, cursor hidden")
            // Refreshes: the first frame has no CPU rate (one sample); later frames show the spin.
            let cpu = try tmux.until("q") { screen in
                guard let row = screen.split(separator: "\n").first(where: { $0.contains(id + "#1") }) else { return false }
                let cells = row.split(separator: " ")
                guard let i = cells.firstIndex(where: { $0.hasSuffix("%") }), i + 1 < cells.count else { return false }
                return (Double(cells[i + 1]) ?? 0) >= 20
            }
            #expect(cpu.ok, "a spinning extension shows its CPU: \(cpu.screen)")

            // q quits at once; the terminal is as it was.
            try tmux.run(["send-keys", "-t", "q", "q"])
            let quit = try tmux.until("q") { $0.contains("rc=") && $0.contains("icanon") }
            #expect(quit.ok, "\(quit.screen)")
            #expect(quit.screen.contains("rc=0"), "\(quit.screen)")
            // Canonical input, echo and signal keys are back (stty prints "-icanon" if not).
            #expect(
                ["icanon", "echo", "isig"].allSatisfy { quit.screen.contains($0) && !quit.screen.contains("-" + $0) },
                "\(quit.screen)")
            #expect(try tmux.format("q", "#{alternate_on} #{cursor_flag}") == "0 1", "normal screen, cursor shown")

            // Ctrl-C too.
            try tmux.run(["new-session", "-d", "-x", "160", "-y", "30", "-s", "c", "sh " + script])
            #expect(try tmux.until("c") { $0.contains("appex top") }.ok)
            try tmux.run(["send-keys", "-t", "c", "C-c"])
            let interrupted = try tmux.until("c") { $0.contains("rc=") && $0.contains("icanon") }
            #expect(interrupted.ok && interrupted.screen.contains("rc=0") && !interrupted.screen.contains("-icanon"), "\(interrupted.screen)")
            #expect(try tmux.format("c", "#{alternate_on} #{cursor_flag}") == "0 1")

        }
    }

    /// appexd restarts under `appex top`: the frames say so while it is gone, and top goes on
    /// once it answers again.
    @Test func topReconnectsWhenAppexdRestarts() async throws {
        let d = try Daemon()
        defer { d.cleanUp() }
        try d.start()
        let out = d.root + "/top.out"
        FileManager.default.createFile(atPath: out, contents: nil)
        let top = Process()
        top.executableURL = URL(fileURLWithPath: BuiltProducts.path("appex"))
        top.arguments = ["top", "--socket", d.socket, "--interval", "0.1", "-n", "600"]
        top.standardOutput = FileHandle(forWritingAtPath: out)
        try top.run()
        defer { if top.isRunning { kill(top.processIdentifier, SIGKILL) } }
        func frames() -> [String] {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").components(separatedBy: "appex top —").dropFirst().map { $0 }
        }
        func waitFor(_ check: ([String]) -> Bool) async throws -> Bool {
            for _ in 0..<300 where !check(frames()) { try await Task.sleep(for: .milliseconds(50)) }
            return check(frames())
        }
        #expect(try await waitFor { $0.count >= 2 }, "top draws")
        #expect(d.signal(SIGTERM) == 0)
        #expect(try await waitFor { $0.last?.contains("appexd stopped answering") == true }, "\(frames().last ?? "")")
        try d.start()
        let back = try await waitFor { f in
            guard let gone = f.lastIndex(where: { $0.contains("stopped answering") }) else { return false }
            return f.count > gone + 2 && !f[f.count - 1].contains("stopped answering")
        }
        #expect(back, "frames after the restart: \(frames().suffix(2))")
        #expect(top.isRunning, "top kept going")
    }

    @Test func topRefusesBadArgumentsAndAMissingDaemon() throws {
        let d = try Daemon()
        defer { d.cleanUp() }
        let zero = try d.appex(["top", "--interval", "0"])
        #expect(zero.status == 64 && zero.err.contains("--interval"), "\(zero)")
        let none = try d.appex(["top", "-n", "1"])
        #expect(
            none.status == 69 && none.err.contains("cannot connect to appexd at \(d.socket)") && none.err.contains("APPEX_SOCKET"),
            "no appexd on \(d.socket): \(none)")
    }
}
