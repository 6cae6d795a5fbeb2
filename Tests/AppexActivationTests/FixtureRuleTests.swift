import AppexActivation
import AppexBundle
import AppexTestSupport
import Testing

/// The repository's own rules (Tests/Fixtures): both rule forms evaluated against every item
/// set, and the findings real-world plists provoke, so a clone alone proves what CorpusTests
/// proves on the corpus.
@Suite("Fixture rules")
struct FixtureRuleTests {
    /// Tests/Fixtures/predicates.json, by index.
    static let predicateExpectations: [String] = [
        /* 0 some item has an image attachment */ "F T T F F F F T F T F F F",
        /* 1 tabs: exactly one item, all of it URL or text, at most three */ "F F F T T T T F F F F F T",
        /* 2 TRUEPREDICATE */ "T T T T T T T T T T T T T",
        /* 3 FALSEPREDICATE */ "F F F F F F F F F F F F F",
        /* 4 lower case, quotes: 1 to 9 attachments in all, no movie */ "F T F T T F T T T F T F T",
        /* 5 ALL UTI-EQUALS jpeg (true on none), exactly one item */ "F T T F F T F F F F F F F",
        /* 6 content text "hello" (written with an escape) or any title */ "F F F F F T F F F F F F F",
        /* 7 hex and exponent: exactly one item with two or more attachments */ "F F T F F F F T F T F F F",
        /* 8 three SUBQUERYs: an attachment with two data identifiers */ "F F F F F F F F F F F F T",
    ]

    @Test func everyFixturePredicateEvaluatesAsExpected() throws {
        try expectPredicatesActivate(in: Fixtures.directory, as: Self.predicateExpectations)
    }

    /// Tests/Fixtures/plists with a rule, by file name.
    static let plistExpectations: [String: String] = [
        "action-strict.plist": "F T F T F F F F F F T F F",
        "action-strict-binary.plist": "F T F T F F F F F F T F F",
        "missing-identity.plist": "F T T F F F F F F F F T F",
        "services-zero-counts.plist": "F F F F T F F F F F F F T",
        "share-dict.plist": "F T F F T T T T F F F F T",
        "share-predicate.plist": "F T T T T F T T F T T T T",
        "share-truepredicate.plist": "T T T T T T T T T T T T T",
        "stringcount-webpage.plist": "F F F F F F F F F F F F T",
        "unknown-attribute-key.plist": "F T T F F F T F F T T T F",
    ]

    @Test func everyFixturePlistRuleEvaluatesAsExpected() throws {
        try expectPlistRulesActivate(in: Fixtures.directory, as: Self.plistExpectations)
    }

    func compile(_ file: String) throws -> (rule: ActivationRule?, findings: [Finding]) {
        let info = try InfoPlist.load(path: Fixtures.path(file))
        return ActivationRule.compile(info.extensionInfo?.activationRule ?? .none)
    }

    @Test func stringCountIsAcceptedWithWarning() throws {
        let (rule, findings) = try compile("plists/stringcount-webpage.plist")
        #expect(rule != nil)
        let f = try #require(findings.first { $0.code == "activation.count-type" })
        #expect(f.severity == .warning)
        #expect(
            f.keyPath.description == "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:NSExtensionActivationSupportsWebPageWithMaxCount")
    }

    @Test func truePredicateIsAWarning() throws {
        let (rule, findings) = try compile("plists/share-truepredicate.plist")
        #expect(rule != nil)
        #expect(findings.map(\.code) == ["activation.truepredicate"])
        #expect(findings.allSatisfy { $0.severity == .warning })
    }

    @Test func unknownAttributeKeysAreWarnings() throws {
        let info = try InfoPlist.load(path: Fixtures.path("plists/unknown-attribute-key.plist"))
        let findings = Activation.checkAttributes(info.extensionInfo?.attributes ?? [:])
        #expect(
            findings.map(\.keyPath.description) == [
                "NSExtension:NSExtensionAttributes:NSExtensionActivationAllowsMultipleItems",
                "NSExtension:NSExtensionAttributes:NSExtensionActivationSupportsText",
            ])
        #expect(findings.allSatisfy { $0.code == "activation.unknown-key" && $0.severity == .warning })
        // A rule key written beside the rule says where it belongs.
        #expect(findings.last?.message.contains("belongs inside NSExtensionActivationRule") == true)
        // Warnings only: the bundle's rule still compiles and is used.
        let (rule, all) = Activation.rule(for: info)
        #expect(rule != nil && !all.hasErrors)
    }

    @Test func strictMatchingCompilesAsVersion2Strict() throws {
        let (rule, findings) = try compile("plists/action-strict.plist")
        #expect(findings.isEmpty)
        guard case .dictionary(let d)? = rule?.form else {
            Issue.record("not a dictionary rule")
            return
        }
        #expect(d.strict)
        #expect(d.version == 2)
    }

    @Test func zeroCountsAreUnsupported() throws {
        let (rule, findings) = try compile("plists/services-zero-counts.plist")
        #expect(findings.isEmpty)
        guard case .dictionary(let d)? = rule?.form else {
            Issue.record("not a dictionary rule")
            return
        }
        #expect(DictionaryRule.Category.allCases.filter(d.supports) == [.webURL])
    }

    @Test func unreadableRuleValuesAreErrorsAtTheirKeyPaths() throws {
        let (rule, findings) = try compile("malformed/bad-rule-values.plist")
        #expect(rule == nil)
        let rulePath = "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:"
        let found = findings.filter { $0.severity == .error }.map { "\($0.code) \($0.keyPath)" }.sorted()
        #expect(
            found == [
                "activation.count-type \(rulePath)NSExtensionActivationSupportsImageWithMaxCount",
                "activation.count-type \(rulePath)NSExtensionActivationSupportsMovieWithMaxCount",
                "activation.value-type \(rulePath)NSExtensionActivationSupportsText",
                "activation.version \(rulePath)NSExtensionActivationDictionaryVersion",
            ])
    }

    @Test func misspeltPredicateKeyIsAnErrorWithItsLine() throws {
        let (rule, findings) = try compile("malformed/bad-predicate-key.plist")
        #expect(rule == nil)
        let f = try #require(findings.first { $0.severity == .error })
        #expect(f.code == "activation.unknown-key")
        #expect(f.keyPath == ActivationRuleSpec.keyPath)
        #expect(f.message.contains("registeredTypeIdentifierz"))
        #expect(f.message.contains("3:12"), "\(f.message)")
    }

    @Test func unfinishedPredicateIsASyntaxError() throws {
        let (rule, findings) = try compile("malformed/bad-predicate-syntax.plist")
        #expect(rule == nil)
        #expect(findings.filter { $0.severity == .error }.map(\.code) == ["activation.syntax"])
    }
}
