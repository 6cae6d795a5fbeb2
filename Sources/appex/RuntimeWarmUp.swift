import Synchronization

/// Asks the Swift runtime, on the idle CPU, the questions whose first answer costs a scan.
///
/// The first time a process needs to know whether a type conforms to a protocol (to make
/// the metadata of `[String: …]`, say), the runtime walks every conformance record in the
/// executable, ~7,300 in a release `appex`; later answers come from its cache. Three such
/// first questions were left on `appex run`'s main thread: `String: Hashable` (the first
/// String-keyed dictionary, in the policy cache's decoder: ~0.2 ms, most of it faulting the
/// records in), `Int: Hashable` and `Int: Comparable` (the first `Range<Int>`), ~0.05–0.1 ms
/// each. `appex run` asks them here first, on the thread that makes the network namespace,
/// while the main thread reads the command line and the policy's fingerprint. The runtime's
/// cache is safe to fill from any thread; were the main thread to get there first, it would
/// scan as it does without this. Docs/launch-sequence.md, section 8.
enum RuntimeWarmUp {
    @inline(never)
    static func askFirstQuestions() {
        // Dictionaries, not casts: the optimizer answers `String.self is any Hashable.Type`
        // at compile time, but a dictionary's storage class is made at run time from its
        // mangled name, checking `Key: Hashable` as it is.
        var strings: [String: Int64] = [:]
        strings["appex"] = 1
        var ints: [Int: Int64] = [:]
        ints[1] = 1
        var ranges: [Range<Int>] = []
        ranges.append(0..<1)
        sink.store(strings.count + ints.count + ranges.count, ordering: .relaxed)
    }

    /// Where the collections' sizes go, so the optimizer keeps them.
    private static let sink = Atomic<Int>(0)
}
