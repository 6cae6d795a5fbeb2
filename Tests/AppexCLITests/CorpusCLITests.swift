import AppexTestSupport
import Foundation
import Testing

/// Conformance: `appex validate`, `info --json` and `activation eval` over every file of the
/// real-world corpus, through the real binary. ValidateAndInfoCLITests and ActivationCLITests
/// prove the same behaviours on the repository's own fixtures.
@Suite(.corpus) struct CorpusCLITests {
    static let plists = Corpus.directory.files(in: "plists")
    static let entitlements = Corpus.directory.files(in: "entitlements")

    @Test(arguments: plists)
    func infoJSONMatchesTheCorpusRecord(file: String) throws {
        try ManifestCLIChecks.expectInfoMatchesRow(file, in: Corpus.directory)
    }

    @Test(arguments: plists)
    func validateJudgesEveryFileWithoutCrashing(file: String) throws {
        let (valid, findings) = try ManifestCLIChecks.validate(Corpus.path(file))
        // Source plists have placeholders or missing identity keys: none is installable as is.
        #expect(!valid)
        #expect(findings.contains { ($0["keyPath"] as? String) == "CFBundleIdentifier" || ($0["keyPath"] as? String) == "CFBundleExecutable" })
    }

    @Test func buildSettingsMakeATemplateValid() throws {
        let path = Corpus.path("plists/044-firefox-notification-service.plist")
        let r = try AppexBinary.run([
            "validate", path, "-D", "PRODUCT_BUNDLE_IDENTIFIER=org.mozilla.ios.NotificationService",
            "-D", "EXECUTABLE_NAME=NotificationService", "-D", "MOZ_BUNDLE_DISPLAY_NAME=Firefox",
        ])
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.stdout.contains(": valid"))
    }

    @Test func stringCountIsAWarningWithItsKeyPath() throws {
        let (valid, findings) = try ManifestCLIChecks.validate(
            Corpus.path("plists/049-garfield-action-stringcount-js.plist"),
            ["-D", "PRODUCT_BUNDLE_IDENTIFIER=com.example.action", "-D", "EXECUTABLE_NAME=action", "-D", "PRODUCT_NAME=Action"])
        let count = try #require(findings.with(code: "activation.count-type").first)
        #expect(count["severity"] as? String == "warning")
        #expect(
            count["keyPath"] as? String
                == "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:NSExtensionActivationSupportsWebPageWithMaxCount")
        #expect(valid)
    }

    @Test func truePredicateWarns() throws {
        let (_, findings) = try ManifestCLIChecks.validate(Corpus.path("plists/035-deltachat-share-truepredicate.plist"))
        #expect(findings.contains { $0["code"] as? String == "activation.truepredicate" && $0["severity"] as? String == "warning" })
    }

    @Test(arguments: entitlements)
    func entitlementsFilesAreAccepted(file: String) throws {
        let (groups, valid) = try ManifestCLIChecks.entitlements(Corpus.path(file))
        #expect(groups.count == 1)
        // Files whose group names hold $(…) placeholders are invalid; plain ones are valid.
        #expect(valid == !(groups.first?.contains("$(") ?? false))
    }

    @Test func evalAnswersTrueAndFalseFromACorpusPlist() throws {
        // 013 (DuckDuckGo): SUBQUERY(items, SUBQUERY(attachments, url OR plain-text).@count <= 2).@count == 1,
        // so one item with one URL activates, and one item with three URLs does not.
        let plist = Corpus.path("plists/013-duckduckgo-share.plist")
        #expect(try ActivationCLITests.eval(plist: plist, [["public.url"]]) == "true")
        #expect(try ActivationCLITests.eval(plist: plist, [["public.url"], ["public.url"], ["public.url"]]) == "false")
    }
}
