import AppexTestSupport
import Foundation
import Testing

/// `appex validate` and `appex info --json` over the repository's fixtures (Tests/Fixtures),
/// through the real binary. CorpusCLITests runs the same over the real-world corpus.
@Suite struct ValidateAndInfoCLITests {
    static let plists = Fixtures.directory.entries.filter { $0.file.hasPrefix("plists/") }.map(\.file)
    static let entitlements = Fixtures.directory.entries.filter { $0.file.hasPrefix("entitlements/") }.map(\.file)

    @Test(arguments: plists)
    func infoJSONMatchesTheManifest(file: String) throws {
        try ManifestCLIChecks.expectInfoMatchesRow(file, in: Fixtures.directory)
    }

    @Test(arguments: plists)
    func validateGivesTheManifestVerdict(file: String) throws {
        let entry = try #require(Fixtures.directory.entry(file))
        let (valid, findings) = try ManifestCLIChecks.validate(Fixtures.path(file))
        #expect(valid == entry.valid, "\(findings)")
        // The invalid fixtures are the ones whose identity keys are missing or placeholders.
        if !valid {
            #expect(findings.filter { $0["severity"] as? String == "error" }.keyPaths.contains("CFBundleIdentifier"))
        }
    }

    @Test func binaryPlistIsDescribedLikeItsXMLTwin() throws {
        func info(_ file: String) throws -> [String: Any] {
            let r = try AppexBinary.run(["info", "--json", Fixtures.path(file)])
            #expect(r.status == 0, "\(r.stderr)")
            return try #require(try r.json() as? [String: Any])
        }
        var binary = try info("plists/action-strict-binary.plist"), xml = try info("plists/action-strict.plist")
        binary["path"] = nil
        xml["path"] = nil
        #expect(NSDictionary(dictionary: binary).isEqual(to: xml), "\(binary)\n\(xml)")
        #expect(binary["bundleIdentifier"] as? String == "com.example.notes.blur")
    }

    @Test func buildSettingsMakeATemplateValid() throws {
        let path = Fixtures.path("plists/template-placeholders.plist")
        let before = try AppexBinary.run(["validate", path])
        #expect(before.status == 1 && before.stdout.contains("bundle.build-variable"))
        let r = try AppexBinary.run([
            "validate", path, "-D", "PRODUCT_BUNDLE_IDENTIFIER=com.example.notes.today",
            "-D", "EXECUTABLE_NAME=Today", "-D", "PRODUCT_BUNDLE_PACKAGE_TYPE=XPC!",
            "-D", "APP_NAME=Notes", "-D", "CURRENT_PROJECT_VERSION=9", "-D", "PRODUCT_MODULE_NAME=Today",
        ])
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.stdout.contains(": valid"))
    }

    @Test func stringCountIsAWarningWithItsKeyPath() throws {
        let (valid, findings) = try ManifestCLIChecks.validate(Fixtures.path("plists/stringcount-webpage.plist"))
        let count = try #require(findings.with(code: "activation.count-type").first)
        #expect(count["severity"] as? String == "warning")
        #expect(
            count["keyPath"] as? String
                == "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:NSExtensionActivationSupportsWebPageWithMaxCount")
        #expect(valid)
    }

    @Test func truePredicateWarns() throws {
        let (valid, findings) = try ManifestCLIChecks.validate(Fixtures.path("plists/share-truepredicate.plist"))
        #expect(findings.contains { $0["code"] as? String == "activation.truepredicate" && $0["severity"] as? String == "warning" })
        #expect(valid)
    }

    @Test(arguments: entitlements)
    func entitlementsFilesAreAccepted(file: String) throws {
        let entry = try #require(Fixtures.directory.entry(file))
        let (groups, valid) = try ManifestCLIChecks.entitlements(Fixtures.path(file))
        #expect(!groups.isEmpty)
        #expect(valid == entry.valid)
        // Exactly the files whose group names hold $(…) placeholders are invalid.
        #expect(groups.contains { $0.contains("$(") } == !valid)
    }

    @Test(arguments: ["malformed/unclosed-string.plist", "malformed/truncated-binary.plist"])
    func malformedFixtureIsRefusedWithItsPath(file: String) throws {
        let path = Fixtures.path(file)
        let v = try AppexBinary.run(["validate", path])
        #expect(v.status == 1)
        #expect(v.stdout.contains("plist.malformed") && v.stdout.contains(path))
        let i = try AppexBinary.run(["info", "--json", path])
        #expect(i.status == 65 && i.stderr.contains(path))
    }

    @Test func wrongValueTypesAreReportedAtTheirKeyPaths() throws {
        let (valid, findings) = try ManifestCLIChecks.validate(Fixtures.path("malformed/wrong-types.plist"))
        #expect(!valid)
        #expect(
            findings.with(code: "plist.type").keyPaths == ["CFBundleIdentifier", "NSExtension:NSExtensionPointIdentifier", "UIBackgroundModes:1"])
        #expect(findings.with(code: "activation.rule-type").keyPaths == ["NSExtension:NSExtensionAttributes:NSExtensionActivationRule"])
    }

    @Test func unreadableRuleValuesAreErrorsAtTheirKeyPaths() throws {
        let (valid, findings) = try ManifestCLIChecks.validate(Fixtures.path("malformed/bad-rule-values.plist"))
        #expect(!valid)
        let rule = "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:"
        #expect(
            findings.with(code: "activation.count-type").keyPaths == [
                rule + "NSExtensionActivationSupportsImageWithMaxCount",
                rule + "NSExtensionActivationSupportsMovieWithMaxCount",
            ])
        #expect(findings.with(code: "activation.version").keyPaths == [rule + "NSExtensionActivationDictionaryVersion"])
    }

    @Test func malformedPlistIsRefusedWithItsPath() throws {
        let scratch = try ScratchDirectory("cli")
        defer { scratch.remove() }
        let dir = scratch.path
        let bad = dir + "/Info.plist"
        try "<plist><dict><key>CFBundleIdentifier</key></plist>".write(toFile: bad, atomically: true, encoding: .utf8)
        let v = try AppexBinary.run(["validate", bad])
        #expect(v.status == 1)
        #expect(v.stdout.contains("plist.malformed") && v.stdout.contains(bad))
        let i = try AppexBinary.run(["info", "--json", bad])
        #expect(i.status == 65 && i.stderr.contains(bad))
        let missing = try AppexBinary.run(["validate", dir + "/nope.plist"])
        #expect(missing.status == 66 && missing.stdout.contains("no such file"))
    }

    @Test func policyCheckShippedAndBroken() throws {
        let ok = try AppexBinary.run(["policy", "check"])
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")
        #expect(ok.stdout.contains("ok:"))

        let scratch = try ScratchDirectory("cli-policy")
        defer { scratch.remove() }
        let dir = scratch.path
        try FileManager.default.createDirectory(atPath: dir + "/extension-points", withIntermediateDirectories: true)
        try "extensionPoints: [com.apple.share-services]\njetsamBand: sometimes\n".write(
            toFile: dir + "/extension-points/share.yaml", atomically: true, encoding: .utf8)
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
