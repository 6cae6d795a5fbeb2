import Foundation
import Testing

/// `appex validate` and `appex info --json` over every corpus file, through the real binary.
@Suite struct ValidateAndInfoCLITests {
    static let plists = AppexBinary.corpusFiles("plists")
    static let entitlements = AppexBinary.corpusFiles("entitlements")

    @Test(arguments: plists)
    func infoJSONMatchesTheCorpusRecord(path: String) throws {
        let r = try AppexBinary.run(["info", "--json", path])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try r.json() as? [String: Any])
        let name = "plists/" + (path as NSString).lastPathComponent
        let record = try #require(AppexBinary.sources[name])
        #expect(object["extensionPoint"] as? String == record.point)
        let kind = (object["activationRule"] as? [String: Any])?["kind"] as? String
        #expect(kind == ["dict": "dictionary", "predicate": "predicate", "none": "none"][record.kind])
        #expect(object.keys.contains("bundleIdentifier"))
        #expect(object["effectivePolicy"] is [String: Any])
    }

    @Test(arguments: plists)
    func validateJudgesEveryFileWithoutCrashing(path: String) throws {
        let r = try AppexBinary.run(["validate", "--json", path])
        #expect(r.status == 0 || r.status == 1, "exit \(r.status): \(r.stderr)")
        let results = try #require(try r.json() as? [[String: Any]])
        #expect(results.count == 1)
        let valid = try #require(results[0]["valid"] as? Bool)
        #expect((r.status == 0) == valid)
        let findings = try #require(results[0]["findings"] as? [[String: Any]])
        for f in findings {
            #expect(["error", "warning"].contains(f["severity"] as? String))
            #expect((f["keyPath"] as? String)?.isEmpty == false)
            #expect((f["code"] as? String)?.isEmpty == false)
        }
        // Source plists have placeholders or missing identity keys: none is installable as is.
        #expect(!valid)
        #expect(findings.contains { ($0["keyPath"] as? String) == "CFBundleIdentifier" || ($0["keyPath"] as? String) == "CFBundleExecutable" })
    }

    @Test func buildSettingsMakeATemplateValid() throws {
        let path = AppexBinary.corpus + "/plists/044-firefox-notification-service.plist"
        let r = try AppexBinary.run(["validate", path, "-D", "PRODUCT_BUNDLE_IDENTIFIER=org.mozilla.ios.NotificationService",
                                     "-D", "EXECUTABLE_NAME=NotificationService", "-D", "MOZ_BUNDLE_DISPLAY_NAME=Firefox"])
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.stdout.contains(": valid"))
    }

    @Test func stringCountIsAWarningWithItsKeyPath() throws {
        let path = AppexBinary.corpus + "/plists/049-garfield-action-stringcount-js.plist"
        let r = try AppexBinary.run(["validate", "--json", path, "-D", "PRODUCT_BUNDLE_IDENTIFIER=com.example.action",
                                     "-D", "EXECUTABLE_NAME=action", "-D", "PRODUCT_NAME=Action"])
        let results = try #require(try r.json() as? [[String: Any]])
        let findings = try #require(results.first?["findings"] as? [[String: Any]])
        let count = try #require(findings.first { $0["code"] as? String == "activation.count-type" })
        #expect(count["severity"] as? String == "warning")
        #expect(count["keyPath"] as? String == "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:NSExtensionActivationSupportsWebPageWithMaxCount")
        #expect(r.status == 0)
    }

    @Test func truePredicateWarns() throws {
        let path = AppexBinary.corpus + "/plists/035-deltachat-share-truepredicate.plist"
        let r = try AppexBinary.run(["validate", "--json", path])
        let results = try #require(try r.json() as? [[String: Any]])
        let findings = try #require(results.first?["findings"] as? [[String: Any]])
        #expect(findings.contains { $0["code"] as? String == "activation.truepredicate" && $0["severity"] as? String == "warning" })
    }

    @Test(arguments: entitlements)
    func entitlementsFilesAreAccepted(path: String) throws {
        let info = try AppexBinary.run(["info", "--json", path])
        #expect(info.status == 0)
        let object = try #require(try info.json() as? [String: Any])
        #expect(object["kind"] as? String == "entitlements")
        let groups = (object["entitlements"] as? [String: Any])?["applicationGroups"] as? [String]
        #expect(groups?.count == 1)
        let validate = try AppexBinary.run(["validate", path])
        // Files whose group names hold $(…) placeholders are invalid; plain ones are valid.
        let hasPlaceholder = groups?.first?.contains("$(") ?? false
        #expect(validate.status == (hasPlaceholder ? 1 : 0), "\(validate.stdout)")
    }

    @Test func malformedPlistIsRefusedWithItsPath() throws {
        let dir = NSTemporaryDirectory() + "appex-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bad = dir + "/Info.plist"
        try "<plist><dict><key>CFBundleIdentifier</key></plist>".write(toFile: bad, atomically: true, encoding: .utf8)
        let v = try AppexBinary.run(["validate", bad])
        #expect(v.status == 1)
        #expect(v.stdout.contains("plist.malformed") && v.stdout.contains(bad))
        let i = try AppexBinary.run(["info", "--json", bad])
        #expect(i.status == 1 && i.stderr.contains(bad))
        let missing = try AppexBinary.run(["validate", dir + "/nope.plist"])
        #expect(missing.status == 1 && missing.stdout.contains("no such file"))
    }

    @Test func policyCheckShippedAndBroken() throws {
        let ok = try AppexBinary.run(["policy", "check"])
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")
        #expect(ok.stdout.contains("ok:"))

        let dir = NSTemporaryDirectory() + "appex-cli-policy-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/extension-points", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "extensionPoints: [com.apple.share-services]\njetsamBand: sometimes\n".write(toFile: dir + "/extension-points/share.yaml", atomically: true, encoding: .utf8)
        let bad = try AppexBinary.run(["policy", "check", "--overlay", dir])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("\(dir)/extension-points/share.yaml:2:13: jetsamBand: unknown jetsam band \"sometimes\""))
    }

    @Test func policyShowPrintsResolvedPolicy() throws {
        let r = try AppexBinary.run(["policy", "show", "com.apple.widget-extension"])
        let object = try #require(try r.json() as? [String: Any])
        let memory = (object["policy"] as? [String: Any])?["memory"] as? [String: Any]
        #expect(memory?["activeHardLimitBytes"] as? Int == 16 << 20)
        #expect((object["syscalls"] as? [[String: Any]])?.contains { $0["name"] as? String == "reboot" && $0["action"] as? String == "kill" } == true)
    }
}
