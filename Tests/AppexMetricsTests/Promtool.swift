import Foundation
import Testing

/// Prometheus' own checker (Debian's `prometheus` package): a second reader of what appexd
/// serves and of the shipped rules. CI installs it (APPEX_REQUIRE_PROMTOOL=1) and a check
/// there fails without it; elsewhere a missing promtool skips the check.
enum Promtool {
    static let path = "/usr/bin/promtool"

    /// `promtool ARGUMENTS` with `input` on its standard input; nil when promtool is missing.
    static func run(_ arguments: [String], input: String = "") throws -> (status: Int32, output: String)? {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            #expect(ProcessInfo.processInfo.environment["APPEX_REQUIRE_PROMTOOL"] != "1", "promtool is required here and missing")
            return nil
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let stdin = Pipe(), output = Pipe()
        p.standardInput = stdin
        p.standardOutput = output
        p.standardError = output
        try p.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, said)
    }
}
