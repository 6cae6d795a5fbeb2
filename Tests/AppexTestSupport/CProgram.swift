import Foundation

/// Compiles small C programs (and runs compilers) for tests that need a real binary: an ELF
/// that imports a given call, a library to bundle, a header that must refuse to compile.
public enum CProgram {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public struct Failure: Error, CustomStringConvertible {
        public var command: [String]
        public var output: Output
        public var description: String { "\(command.joined(separator: " ")) exited \(output.status): \(output.stderr)" }
    }

    /// Runs `executable` with `arguments` and collects its output.
    public static func run(_ executable: String, _ arguments: [String]) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Both pipes are read before waiting; the tests' compilers say far less than a pipe holds.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Output(
            status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// The system C compiler.
    public static let cc = "/usr/bin/cc"

    /// Writes `source` to `directory/name.c` and compiles it to `directory/name` with `flags`.
    /// Returns the output's path; throws with the compiler's message when it fails.
    @discardableResult
    public static func compile(
        _ source: String, named name: String, in directory: String,
        flags: [String] = [], compiler: String = cc
    ) throws -> String {
        let src = directory + "/" + name + ".c"
        try source.write(toFile: src, atomically: true, encoding: .utf8)
        let out = directory + "/" + name
        let args = ["-o", out, src] + flags
        let result = try run(compiler, args)
        guard result.status == 0 else { throw Failure(command: [compiler] + args, output: result) }
        return out
    }
}
