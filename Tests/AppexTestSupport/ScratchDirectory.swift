import Foundation

/// A private (0700, from `mkdtemp`) directory of one test's own, removed with everything in it
/// when the test lets go of it.
public final class ScratchDirectory: Sendable {
    public let path: String

    public init(_ tag: String) throws {
        path = try CProgram.temporaryDirectory(tag)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Names in the directory ending in `suffix`.
    public func files(endingIn suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(suffix) }
    }
}
