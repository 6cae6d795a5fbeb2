import AppexTestSupport
import Foundation

@testable import AppexPolicy
@testable import AppexPolicyCore

/// The shipped Policies/ directory of this checkout.
let shippedPolicies: String = URL(fileURLWithPath: Corpus.packageRoot).appendingPathComponent("Policies").standardizedFileURL.path

/// A policy tree in a scratch directory, removed at deinit. Starts as a copy of the shipped
/// tree, so each test breaks exactly one thing.
final class PolicyTree {
    let scratch: ScratchDirectory
    let path: String
    init(copyShipped: Bool = true) throws {
        scratch = try ScratchDirectory("policy-test")
        path = scratch.sub("policies")
        if copyShipped {
            // Copy the resolved tree: copying a symlink would let a test write into Policies/.
            let source = URL(fileURLWithPath: shippedPolicies).resolvingSymlinksInPath().path
            try FileManager.default.copyItem(atPath: source, toPath: path)
        } else {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
    }

    func write(_ relative: String, _ text: String) throws {
        let full = (path as NSString).appendingPathComponent(relative)
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: true, encoding: .utf8)
    }

    func file(_ relative: String) -> String { (path as NSString).appendingPathComponent(relative) }

    /// Loads and returns the errors, or an empty list when the tree loads.
    func errors(overlaying: Bool = false) -> [PolicyError] {
        do {
            _ = try PolicySet.load(directories: overlaying ? [shippedPolicies, path] : [path])
            return []
        } catch let e as PolicyErrors {
            return e.errors
        } catch let e as PolicyError {
            return [e]
        } catch {
            return [PolicyError(file: "?", message: "\(error)")]
        }
    }
}
