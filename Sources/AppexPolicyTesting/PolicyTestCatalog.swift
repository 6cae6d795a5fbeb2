import AppexCommandSupport
import AppexPolicy
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The policies test cases run under: the shipped ones with `--policy-dir` overlays, and each
/// policy file a case names layered on top of those, loaded once.
///
/// A policy file becomes an overlay directory of its own (a link to it in
/// `<scratch>/policy-N/extension-points/`), because that is the form the supervisor takes;
/// errors name the file as written, not the link.
package final class PolicyTestCatalog: @unchecked Sendable {
    let overlays: [String]
    package let base: PolicySet
    /// A private directory for generated overlays, removed by `removeScratch()`.
    let scratch: String
    /// Each policy file's load, by path: a file is loaded once, whichever worker asks first.
    private let files = Mutex<[String: Result<(set: PolicySet, overlay: String, points: [String]), any Error>]>([:])

    package init(overlays: [String]) throws {
        self.overlays = overlays
        base = try PolicyLocator.load(overlays: overlays)
        var template = Array((NSTemporaryDirectory() + "appex-test-policy-XXXXXX").utf8CString)
        guard let p = mkdtemp(&template) else { throw ValidationErrorText("cannot create a scratch directory in \(NSTemporaryDirectory())") }
        scratch = String(cString: p)
    }

    /// The first identifier of each distinct extension-point policy: what `all` means.
    var allExtensionPoints: [String] { base.extensionPointPolicies.compactMap(\.extensionPoints.first) }

    /// The policy set with the policy file `path` layered on top, the overlay directory that
    /// holds it, and the extension points it covers. Throws `PolicyErrors` naming the file.
    func load(policyFile path: String) throws -> (set: PolicySet, overlay: String, points: [String]) {
        let (scratch, base) = (scratch, base)
        return try files.withLock { files in
            if let known = files[path] { return known }
            let result = Result { try Self.load(policyFile: path, in: scratch + "/policy-\(files.count)", over: base) }
            files[path] = result
            return result
        }.get()
    }

    private static func load(policyFile path: String, in dir: String, over base: PolicySet) throws
        -> (set: PolicySet, overlay: String, points: [String])
    {
        if !(path.hasSuffix(".yaml") || path.hasSuffix(".yml")) {
            throw PolicyError(file: path, message: "a policy file must end in .yaml or .yml")
        }
        let link = dir + "/extension-points/" + (path as NSString).lastPathComponent
        try FileManager.default.createDirectory(atPath: dir + "/extension-points", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let set: PolicySet
        do {
            set = try PolicySet.load(directories: base.directories + [dir])
        } catch var e as PolicyErrors {
            for i in e.errors.indices where e.errors[i].file == link { e.errors[i].file = path }
            throw e
        } catch var e as PolicyError {
            if e.file == link { e.file = path }
            throw e
        }
        let points = set.extensionPointPolicies.filter { $0.files.contains(link) }.flatMap(\.extensionPoints)
        return (set, dir, points)
    }

    /// The policy a case runs under: its file's set (or the base) for `extensionPoint`, with
    /// the case's limits applied.
    func effectivePolicy(extensionPoint: String, policyFile: String?, limits: PolicyTestLimits) throws -> EffectivePolicy {
        let set = try policyFile.map { try load(policyFile: $0).set } ?? base
        var effective = EffectivePolicy(extensionPoint: extensionPoint, in: set)
        effective.policy = limits.apply(to: effective.policy)
        return effective
    }

    package func removeScratch() {
        try? FileManager.default.removeItem(atPath: scratch)
    }
}
