import AppexTestSupport
import Foundation
import Logging
import Testing

@testable import AppexDaemon

/// The log handlers' encodings: the journal's native protocol and JSON lines.
struct LogHandlerTests {
    @Test func journalEncoding() {
        let d = JournalLogHandler.datagram(
            level: .warning, label: "appexd", message: "two\nlines",
            metadata: ["bundle-id": "com.example.a", "_x": "1"], file: "f.swift", function: "g()", line: 7)
        let fields = JournalRecord.parse(d)
        #expect(fields["MESSAGE"] == "two\nlines")
        #expect(fields["PRIORITY"] == "4")
        #expect(fields["BUNDLE_ID"] == "com.example.a")
        #expect(fields["XX"] == "1", "a leading _ is the journal's own: \(fields)")
        #expect(fields["CODE_LINE"] == "7")
    }

    @Test func jsonEscapes() throws {
        let line = JSONLogHandler.line(
            time: "t", level: .info, label: "l", message: "a \"b\"\n\u{1}", source: "s",
            metadata: ["message": "clash", "n": .array(["1", .dictionary(["k": "v"])])])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        #expect(object["message"] as? String == "a \"b\"\n\u{1}")
        #expect(object["metadata.message"] as? String == "clash")
        #expect((object["n"] as? [Any])?.count == 2)
    }

    @Test func rfc3339Time() {
        #expect(LogTime.format(seconds: 1_795_855_033, micros: 42) == "2026-11-28T08:37:13.000042Z")
    }
}
