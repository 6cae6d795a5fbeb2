import AppexActivation
import AppexBundle
import AppexTestSupport
import Foundation
import Testing

/// Conformance: the real-world corpus's rules. FixtureRuleTests proves the same behaviours on
/// the repository's own fixtures.
@Suite("Corpus rules", .corpus)
struct CorpusTests {
    /// predicates.json, by index.
    static let predicateExpectations: [String] = [
        /* 0 telegram: every attachment of some item is one of many types */ "F T T T T T T T T T T T T",
        /* 1 firefox sendto: exactly one item with a URL */ "F F F T T F F T F F F F T",
        /* 2 signal: exactly one item with data or URL */ "F T T T T F T T F T T T T",
        /* 3 duckduckgo: exactly one item with ≤ 2 URL/plain-text */ "F T T T T T T T F T T T T",
        /* 4 zotero: exactly one item with exactly one pdf/file/URL/html */ "F F F T T F F T F F T F T",
        /* 5 owncloud: some item whose attachments are all data */ "F T T T T T T T T T T T T",
        /* 6 TRUEPREDICATE */ "T T T T T T T T T T T T T",
        /* 7 deltachat: some item whose attachments are all image/audio/movie/URL */ "F T T T T T F F T T F T T",
        /* 8 encamera: some item with public.content */ "F T T F F F T T F T T T F",
    ]

    @Test func everyCorpusPredicateEvaluatesAsExpected() throws {
        try expectPredicatesActivate(in: Corpus.directory, as: Self.predicateExpectations)
    }

    static let plistExpectations: [String: String] = [
        "001-telegram-share.plist": "F T T T T T T T T T T T T",
        "002-firefox-shareto.plist": "F F F F T T T F F F F F T",
        "003-firefox-sendto.plist": "F F F T T F F T F F F F T",
        "006-signal-share.plist": "F T T T T F T T F T T T T",
        "007-icecubes-share.plist": "F T F F T T T T F F F T T",
        "008-icecubes-action-macos.plist": "F F F F T F F F F F F F T",
        "011-bitwarden-share.plist": "F T F T F T T F F F T T T",
        "013-duckduckgo-share.plist": "F T T T T T T T F T T T T",
        "015-element-riot-share.plist": "F T F F T T T T F F F T T",
        "017-nextcloud-share.plist": "F T T T F T T F F F T T T",
        "018-wordpress-share.plist": "F T F F T T T T F F F F T",
        "019-zotero-zshare.plist": "F F F T T F F T F F T F T",
        "020-mattermost-share.plist": "F T T T T T T T F F T T T",
        "021-bluesky-share.plist": "F T T F T T T T F F F T T",
        "025-simplenote-share.plist": "F F F F T T T F F F F F T",
        "026-owncloud-action-nobundlekeys.plist": "F T T T T T T T T T T T T",
        "028-owncloud-share.plist": "F T T T T T T T T T T T T",
        "030-openarchive-save-share.plist": "F T T T F F T F F T T T T",
        "031-ehpanda-share-minimal.plist": "F F F F T F F F F F F F T",
        "032-protonpass-share-nobundlekeys.plist": "F F F F T T T F F F F F T",
        "033-alfresco-share.plist": "F T T T T F T T T T T T T",
        "034-deltachat-dcshare.plist": "F T T T T T F F T T F T T",
        "035-deltachat-share-truepredicate.plist": "T T T T T T T T T T T T T",
        "049-garfield-action-stringcount-js.plist": "F F F F F F F F F F F F T",
        "052-sharesheetdebugger-action-truepredicate.plist": "T T T T T T T T T T T T T",
        "053-rssbud-action-truepredicate-macos-keys.plist": "T T T T T T T T T T T T T",
        "054-metatext-action-no-bundleid.plist": "F F F F T F F F F F F F T",
        "055-blear-action-strictmatching.plist": "F T F F F F F F F F F F F",
        "058-encamera-share-unknownkey.plist": "F T T F F F T T F T T T F",
    ]

    @Test func everyCorpusPlistRuleEvaluatesAsExpected() throws {
        #expect(Corpus.directory.files(in: "plists").count >= 40)
        try expectPlistRulesActivate(in: Corpus.directory, as: Self.plistExpectations)
    }

    @Test func corpus049StringCountIsAcceptedWithWarning() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/049-garfield-action-stringcount-js.plist"))
        let (rule, findings) = ActivationRule.compile(info.extensionInfo?.activationRule ?? .none)
        #expect(rule != nil)
        let f = try #require(findings.first { $0.code == "activation.count-type" })
        #expect(f.severity == .warning)
        #expect(
            f.keyPath.description == "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:NSExtensionActivationSupportsWebPageWithMaxCount")
    }

    @Test func truePredicateIsAWarning() throws {
        for file in ["035-deltachat-share-truepredicate.plist", "052-sharesheetdebugger-action-truepredicate.plist"] {
            let info = try InfoPlist.load(path: Corpus.path("plists/" + file))
            let (rule, findings) = ActivationRule.compile(info.extensionInfo?.activationRule ?? .none)
            #expect(rule != nil)
            #expect(findings.map(\.code) == ["activation.truepredicate"])
            #expect(findings.allSatisfy { $0.severity == .warning })
        }
    }

    @Test func corpus058UnknownAttributeKeyIsAWarning() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/058-encamera-share-unknownkey.plist"))
        let findings = Activation.checkAttributes(info.extensionInfo?.attributes ?? [:])
        #expect(findings.count == 1)
        #expect(findings.first?.code == "activation.unknown-key")
        #expect(findings.first?.severity == .warning)
        #expect(findings.first?.keyPath.description == "NSExtension:NSExtensionAttributes:NSExtensionActivationSupportsMultipleAttachments")
    }

    @Test func corpus055StrictMatchingCompilesAsVersion2Strict() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/055-blear-action-strictmatching.plist"))
        let (rule, findings) = ActivationRule.compile(info.extensionInfo?.activationRule ?? .none)
        #expect(findings.isEmpty)
        guard case .dictionary(let d)? = rule?.form else {
            Issue.record("not a dictionary rule")
            return
        }
        #expect(d.strict)
        #expect(d.version == 2)
    }
}
