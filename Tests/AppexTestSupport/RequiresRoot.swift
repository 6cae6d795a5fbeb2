import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A test (or every test of a suite) that needs root: cgroups, mounts, other uids, a real
/// appexd. CI runs the tests as root, where these run like any other; run as another user
/// they fail with `reason`, never skip, so a run that could not check them cannot pass.
public struct RequiresRoot: TestTrait, SuiteTrait, TestScoping {
    public let reason: String

    /// What a test that needs root says when it is not.
    public struct NotRoot: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "\(reason); run the tests as root (CI does)" }
    }

    public var isRecursive: Bool { true }

    /// Every test function under it, none of its suites as such (nothing runs at that level).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try Self.check(reason)
        try await function()
    }

    /// The check itself, for a helper that needs root wherever it is called from.
    public static func check(_ reason: String) throws {
        guard geteuid() == 0 else { throw NotRoot(reason: reason) }
    }

    /// True when the tests run as root: for what differs by who runs it, not for a test that needs root.
    public static var isRoot: Bool { geteuid() == 0 }
}

extension Trait where Self == RequiresRoot {
    /// `@Test(.requiresRoot("mounting needs root"))`: fails, with `reason`, when not run as root.
    public static func requiresRoot(_ reason: String) -> Self { RequiresRoot(reason: reason) }
}
