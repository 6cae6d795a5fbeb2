import AppexTestSupport
import Foundation
import Testing

/// CLI checks shared by the fixture suites and the corpus suite.
enum ManifestCLIChecks {
    /// `appex info --json` on a plist reports the extension point and rule kind its row records.
    static func expectInfoMatchesRow(_ file: String, in directory: ManifestDirectory) throws {
        let record = try #require(directory.entry(file), "\(file) has no row in \(directory.tableName)")
        let r = try AppexBinary.run(["info", "--json", directory.path(file)])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try r.json() as? [String: Any])
        #expect(object["extensionPoint"] as? String == record.extensionPoint)
        let kind = (object["activationRule"] as? [String: Any])?["kind"] as? String
        #expect(kind == record.specKind)
        #expect(object.keys.contains("bundleIdentifier"))
        #expect(object["effectivePolicy"] is [String: Any])
    }

    /// `appex validate --json` on one file: a verdict that agrees with the exit status and
    /// well-formed findings. Returns the verdict and the findings.
    static func validate(_ path: String, _ extra: [String] = []) throws -> (valid: Bool, findings: [[String: Any]]) {
        let r = try AppexBinary.run(["validate", "--json", path] + extra)
        #expect(r.status == 0 || r.status == 1, "exit \(r.status): \(r.stderr)")
        let results = try #require(try r.json() as? [[String: Any]])
        #expect(results.count == 1)
        let valid = try #require(results.first?["valid"] as? Bool)
        #expect((r.status == 0) == valid)
        let findings = try #require(results.first?["findings"] as? [[String: Any]])
        for f in findings {
            #expect(["error", "warning"].contains(f["severity"] as? String))
            #expect((f["keyPath"] as? String)?.isEmpty == false)
            #expect((f["code"] as? String)?.isEmpty == false)
        }
        return (valid, findings)
    }

    /// `appex info --json` on an entitlements file: its app groups; and whether `appex validate`
    /// accepts it (exit 0) or refuses it (exit 1).
    static func entitlements(_ path: String) throws -> (groups: [String], valid: Bool) {
        let info = try AppexBinary.run(["info", "--json", path])
        #expect(info.status == 0, "\(info.stderr)")
        let object = try #require(try info.json() as? [String: Any])
        #expect(object["kind"] as? String == "entitlements")
        let groups = try #require((object["entitlements"] as? [String: Any])?["applicationGroups"] as? [String])
        let validate = try AppexBinary.run(["validate", path])
        #expect(validate.status == 0 || validate.status == 1, "\(validate.stderr)")
        return (groups, validate.status == 0)
    }
}

extension Array where Element == [String: Any] {
    func with(code: String) -> [[String: Any]] { filter { $0["code"] as? String == code } }
    var keyPaths: [String] { compactMap { $0["keyPath"] as? String }.sorted() }
}
