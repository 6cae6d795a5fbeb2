import AppexPolicy
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One case under one extension point, with the policy it runs under resolved.
package struct PlannedPolicyTest: Sendable {
    package var testCase: PolicyTestCase
    var extensionPoint: String
    /// The case's name, with the extension point when the case runs under several.
    var name: String
    /// The file's name without directory and extension, to tell cases of two files apart.
    var suite: String
    var policy: EffectivePolicy
    var request: [String]? { testCase.request }
}

/// Expands cases into planned runs: one per extension point, those for other architectures
/// left out (and counted), those not matching `--filter` left out.
package enum PolicyTestPlanner {
    package static func plan(_ files: [PolicyTestFile], catalog: PolicyTestCatalog, filters: [String]) throws
        -> (planned: [PlannedPolicyTest], otherArchitecture: Int)
    {
        let arch = machine
        var out: [PlannedPolicyTest] = []
        var otherArchitecture = 0
        for file in files {
            let suite = ((file.path as NSString).lastPathComponent as NSString).deletingPathExtension
            for c in file.cases {
                for point in c.extensionPoints {
                    let name = c.extensionPoints.count > 1 ? "\(c.name) [\(point)]" : c.name
                    if !filters.isEmpty && !filters.contains(where: { "\(suite): \(name)".contains($0) }) { continue }
                    if let archs = c.architectures, !archs.contains(arch) {
                        otherArchitecture += 1
                        continue
                    }
                    let policy = try catalog.effectivePolicy(extensionPoint: point, policyFile: c.policyFile, limits: c.limits)
                    out.append(PlannedPolicyTest(testCase: c, extensionPoint: point, name: name, suite: suite, policy: policy))
                }
            }
        }
        return (out, otherArchitecture)
    }

    /// `uname -m`: x86_64, aarch64, …
    package static var machine: String {
        var u = utsname()
        uname(&u)
        return withUnsafeBytes(of: u.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
