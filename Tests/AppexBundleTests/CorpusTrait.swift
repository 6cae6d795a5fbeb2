import AppexTestSupport
import Testing

extension Trait where Self == ConditionTrait {
    /// For suites that read the real-world corpus: skipped, with the reason, when it is
    /// missing; failed when `APPEX_REQUIRE_CORPUS=1` requires it (see `Corpus`).
    static var corpus: Self { .enabled(Comment(rawValue: Corpus.skipReason)) { try Corpus.isAvailable() } }
}
