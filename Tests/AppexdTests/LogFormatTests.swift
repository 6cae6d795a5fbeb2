import AppexTestSupport
import Foundation
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `appexd --log-format`: lines for people, JSON objects, or journal records, as a log shipper
/// or journald receives them from the real appexd.
@Suite(.serialized) struct LogFormatTests {
    typealias Daemon = DaemonTests.Daemon

    func withDaemon(_ extra: [String], environment: [String: String] = [:], _ body: (Daemon) async throws -> Void) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try Daemon(tag: "log-format-tests")
        defer { d.cleanUp() }
        d.logPath = d.root + "/appexd.log"
        d.extraArguments = ["--log-level", "info"] + extra
        d.environment = environment
        try d.start()
        try await body(d)
    }

    @Test func jsonLinesParse() async throws {
        try await withDaemon(["--log-format", "json"]) { d in
            _ = try d.installProbe()
            #expect(d.signal(SIGTERM) == 0)
            let lines = try String(contentsOfFile: d.logPath!, encoding: .utf8).split(separator: "\n")
            #expect(lines.count >= 2, "\(lines)")
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                #expect(
                    object["time"] is String && object["level"] is String && object["logger"] is String
                        && object["message"] is String, "\(line)")
                #expect((object["time"] as? String)?.hasSuffix("Z") == true)
            }
        }
    }

    @Test func journalRecordsCarryFields() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("appex-journal-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let receiver = try DatagramReceiver(path: dir + "/socket")
        try await withDaemon(["--log-format", "journal"], environment: ["APPEX_JOURNAL_SOCKET": dir + "/socket"]) { d in
            _ = try d.installProbe()
            #expect(d.signal(SIGTERM) == 0)
            let records = receiver.drain()
            #expect(records.count >= 2)
            for r in records {
                let fields = JournalRecord.parse(r)
                #expect(fields["SYSLOG_IDENTIFIER"] == "appexd", "\(fields)")
                #expect(fields["MESSAGE"]?.isEmpty == false)
                #expect(Int(fields["PRIORITY"] ?? "") != nil)
                #expect(fields["APPEX_LOGGER"]?.hasPrefix("appexd") == true)
            }
            // Nothing went to standard error while journald (here: the test) took the records.
            let log = try String(contentsOfFile: d.logPath!, encoding: .utf8)
            #expect(log.isEmpty, "\(log)")
        }
    }

    /// No journald listening: the records go to standard error as lines, not lost.
    @Test func journalAbsentFallsBackToStandardError() async throws {
        try await withDaemon(["--log-format", "journal"], environment: ["APPEX_JOURNAL_SOCKET": "/nonexistent/appex-journal"]) { d in
            #expect(d.signal(SIGTERM) == 0)
            let log = try String(contentsOfFile: d.logPath!, encoding: .utf8)
            #expect(log.contains("appexd"), "\(log)")
        }
    }

    @Test func unknownFormatIsRefused() throws {
        let r = try CProgram.run(BuiltProducts.path("appexd"), ["--log-format", "xml"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--log-format must be one of text, json, journal"), "\(r.stderr)")
    }
}
