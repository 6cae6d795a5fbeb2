import AppexTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 33 through the real appexd and CLI: history commands read the appexd they talk to
/// (item 3), `appex logs` and `kills --follow` (item 7), messages for people and the exit
/// statuses they come with (items 1 and 5).
@Suite(.serialized) struct CLIContractDaemonTests {
    typealias Daemon = DaemonTests.Daemon

    func withDaemon(logLevel: String? = nil, _ body: (Daemon) async throws -> Void) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try Daemon(tag: "cli-contract")
        defer { d.cleanUp() }
        d.logPath = d.root + "/appexd.log"
        // The last --log-level given wins.
        if let logLevel { d.extraArguments = ["--log-level", logLevel] }
        try d.start()
        try await body(d)
    }

    /// A CLI command left running (`logs -f`, `kills --follow`), its stdout collected.
    final class Follower: @unchecked Sendable {
        let process = Process()
        /// Written by the pipe's handler, read by the test.
        private final class Output: Sendable {
            let text = Mutex("")
        }
        private let output = Output()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: BuiltProducts.path("appex"))
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            pipe.fileHandleForReading.readabilityHandler = { [output] handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                output.text.withLock { $0 += text }
            }
            try process.run()
        }

        var text: String { output.text.withLock { $0 } }

        /// Waits (by clock, up to 20 s) until `count` occurrences of `needle` were printed.
        func waitFor(_ needle: String, count: Int = 1) -> Bool {
            let until = Date().addingTimeInterval(20)
            while Date() < until {
                if text.components(separatedBy: needle).count - 1 >= count { return true }
                usleep(50_000)
            }
            return false
        }

        func stop() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Polls `appex kills --json` until a record of `id` with `reason` is there.
    func waitForKill(_ d: Daemon, _ id: String, reason: String) throws -> [[String: Any]] {
        let until = Date().addingTimeInterval(20)
        while Date() < until {
            let k = try d.appex(["kills", id, "--json"])
            if let rows = try? JSONSerialization.jsonObject(with: Data(k.out.utf8)) as? [[String: Any]],
                rows.contains(where: { $0["reason"] as? String == reason })
            {
                return rows
            }
            usleep(100_000)
        }
        return []
    }

    @Test func historyCommandsReadTheAppexdTheyTalkTo() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            #expect(try d.appex(["request", id, "--text", "hi"]).status == 0)
            #expect(try d.appex(["disable", id]).status == 0)
            // Its state directory is a private one: appex kills asks appexd where it is.
            let rows = try waitForKill(d, id, reason: "disabled")
            #expect(rows.count == 1, "the record of the appexd at \(d.socket)")
            let text = try d.appex(["kills"])
            #expect(text.status == 0, "\(text.err)")
            let first = text.out.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first == "records of \(d.root)/state/registry.sqlite (appexd at \(d.socket))", "\(text.out)")
            #expect(text.out.contains("disabled  \(id)"), "\(text.out)")

            // APPEX_SOCKET alone leads there too, for report as for kills.
            let viaEnvironment = try CProgram.run("/usr/bin/env", ["APPEX_SOCKET=\(d.socket)", BuiltProducts.path("appex"), "report", id])
            #expect(viaEnvironment.status == 0, "\(viaEnvironment.stderr)")
            #expect(
                viaEnvironment.stdout.contains("records of \(d.root)/state/registry.sqlite (appexd at \(d.socket))"),
                "\(viaEnvironment.stdout)")
            #expect(viaEnvironment.stdout.contains("disabled"), "\(viaEnvironment.stdout)")

            // An extension that never ran is named, with its own status.
            let none = try d.appex(["report", "dev.nope"])
            #expect(none.status == 66 && none.err.contains("dev.nope has no launches, requests or terminations"), "\(none.err)")
        }
    }

    @Test func logsShowAndFollowAnExtensionsOutputAndKillsFollow() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            #expect(try d.appex(["request", id, "--text", "one"]).status == 0)
            let header = "--- appex run \(id) at "
            let shown = try d.appex(["logs", id])
            #expect(shown.status == 0 && shown.out.contains(header), "\(shown.out)\(shown.err)")

            let logs = try Follower(["logs", "-f", id, "--socket", d.socket])
            defer { logs.stop() }
            let kills = try Follower(["kills", "--follow", "--json", "--socket", d.socket])
            defer { kills.stop() }
            #expect(logs.waitFor(header), "logs -f printed the log so far: \(logs.text)")

            // A second launch: its header arrives through -f, its kill through --follow.
            #expect(try d.appex(["disable", id]).status == 0)
            #expect(kills.waitFor("\"reason\":\"disabled\""), "kills --follow: \(kills.text)")
            #expect(try d.appex(["enable", id]).status == 0)
            #expect(try d.appex(["request", id, "--text", "two"]).status == 0)
            #expect(logs.waitFor(header, count: 2), "logs -f followed the second launch: \(logs.text)")
            #expect(kills.text.split(separator: "\n").count == 1, "one kill, printed once: \(kills.text)")

            let tail = try d.appex(["logs", id, "-n", "1"])
            #expect(tail.status == 0 && tail.out.split(separator: "\n").count == 1, "\(tail.out)")
            let unknown = try d.appex(["logs", "dev.nope"])
            #expect(unknown.status == 66 && unknown.err.contains("dev.nope has no log"), "\(unknown.err)")
            let hostile = try d.appex(["logs", "../appexd"])
            #expect(hostile.status == 64, "\(hostile.err)")
        }
    }

    @Test func messagesForPeopleAndTheirStatuses() async throws {
        try await withDaemon { d in
            let empty = try d.appex(["list"])
            #expect(empty.status == 0 && empty.out == "no extensions installed (appex install PATH installs one)\n", "\(empty.out)")

            let id = try d.installProbe()
            let list = try d.appex(["list"])
            let lines = list.out.split(separator: "\n").map(String.init)
            #expect(lines.count == 2 && lines[0].hasPrefix("EXTENSION"), "\(list.out)")
            // Aligned: each column starts where its header does.
            if lines.count == 2, let state = lines[0].range(of: "STATE"), let point = lines[0].range(of: "EXTENSION POINT") {
                let column = lines[0].distance(from: lines[0].startIndex, to: state.lowerBound)
                let pointColumn = lines[0].distance(from: lines[0].startIndex, to: point.lowerBound)
                #expect(Array(lines[1])[column...].starts(with: "enabled"), "\(list.out)")
                #expect(Array(lines[1])[pointColumn...].starts(with: "com.apple.widgetkit-extension"), "\(list.out)")
            }
            let json = try d.appex(["list", "--json"])
            #expect((try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]])?.first?["bundleIdentifier"] as? String == id)

            // A refusal reads as one, without request numbers, with its status.
            let unknown = try d.appex(["request", "dev.nope"])
            #expect(unknown.status == 66, "\(unknown.out)\(unknown.err)")
            #expect(unknown.out.hasPrefix("refused: ") && unknown.out.contains("unknown-extension"), "\(unknown.out)")
            #expect(!unknown.out.contains("request 1") && !unknown.out.contains("(warm)"), "\(unknown.out)")
            let enable = try d.appex(["enable", "dev.nope"])
            #expect(enable.status == 66 && enable.err.hasPrefix("appex enable: refused: "), "\(enable.err)")
            #expect(!enable.err.contains("request"), "\(enable.err)")
            #expect(try d.appex(["disable", id]).status == 0)
            let disabled = try d.appex(["request", id])
            #expect(disabled.status == 1 && disabled.out.hasPrefix("refused: ") && disabled.out.contains("disabled"), "\(disabled.out)")

            let uninstall = try d.appex(["uninstall", id])
            #expect(uninstall.status == 0 && uninstall.out == "uninstalled \(id)\n", "\(uninstall.out)")

            // No appexd: how to start one, or where to point, naming the path once.
            let nowhere = d.root + "/nowhere.sock"
            let none = try CProgram.run(BuiltProducts.path("appex"), ["list", "--socket", nowhere])
            #expect(none.status == 69, "\(none.stderr)")
            #expect(
                none.stderr.contains("cannot connect to appexd at \(nowhere)") && none.stderr.contains("APPEX_SOCKET")
                    && none.stderr.contains("systemctl start appexd"), "\(none.stderr)")
            #expect(none.stderr.components(separatedBy: nowhere).count == 2, "the path once: \(none.stderr)")
        }
    }

    @Test func oneNoticeLinePerKill() async throws {
        try await withDaemon(logLevel: "notice") { d in
            let id = try d.installProbe()
            #expect(try d.appex(["request", id]).status == 0)
            #expect(try d.appex(["disable", id]).status == 0)
            _ = try waitForKill(d, id, reason: "disabled")
            let log = try String(contentsOfFile: d.root + "/appexd.log", encoding: .utf8)
            let lines = log.split(separator: "\n").filter { $0.contains(id + "#") }
            #expect(lines.count == 1 && lines[0].contains("notice") && lines[0].contains("ended: disabled"), "\(log)")
            #expect(!log.contains("refused request"), "\(log)")
        }
    }

    @Test(.requiresRoot("appexd needs root")) func aBusyMetricsPortReadsAsSuch() throws {
        // A port that is taken: our own listener on it.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0
                    && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)

        let d = try Daemon(tag: "cli-contract")
        defer { d.cleanUp() }
        let r = try CProgram.run(BuiltProducts.path("appexd"), d.arguments + ["--metrics", "127.0.0.1:\(port)"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("127.0.0.1:\(port) is already in use by another program"), "\(r.stderr)")
        #expect(!r.stderr.contains("descriptor"), "NIO's internals: \(r.stderr)")
    }
}
