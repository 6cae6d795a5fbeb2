import AppexTestSupport
import Foundation

/// Runs the built `appex` executable, which sits beside the test bundle in the products dir.
enum AppexBinary {
    static let path = BuiltProducts.path("appex")

    static let packageRoot = Corpus.packageRoot

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
    }

    /// `appex-commands`, the full tool the front hands command lines to, beside it.
    static var commandsPath: String { BuiltProducts.path("appex-commands") }

    static func run(_ arguments: [String], environment: [String: String]? = nil, executable: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read before waiting so a large output cannot fill the pipe and stall the child.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
