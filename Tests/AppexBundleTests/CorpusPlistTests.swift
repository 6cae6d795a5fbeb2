import AppexBundle
import AppexTestSupport
import Foundation
import Testing

/// Conformance: every real Info.plist in the corpus loads, with the fields the corpus records
/// for it. FixturePlistTests proves the same behaviours on the repository's own files.
@Suite(.corpus) struct CorpusPlistTests {
    @Test func corpusIsComplete() {
        #expect(Corpus.directory.files(in: "plists").count >= 41, "corpus at \(Corpus.root)")
        #expect(Corpus.directory.entries.count >= 46)
    }

    @Test(arguments: Corpus.directory.entries.filter { $0.file.hasPrefix("plists/") }.map(\.file))
    func loadsWithRecordedPointAndRuleKind(file: String) throws {
        try expectLoadsAsRecorded(file, in: Corpus.directory)
    }

    @Test func templateIdentityKeysAreReportedAsBuildVariables() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/002-firefox-shareto.plist"))
        let findings = BundleValidator.validate(info: info)
        let identity = findings.filter { $0.code == "bundle.build-variable" }.map(\.keyPath.description).sorted()
        #expect(identity == ["CFBundleExecutable", "CFBundleIdentifier"])
        #expect(findings.allSatisfy { $0.code != "bundle.build-variable" || $0.severity == .error })
        // Display-only keys with placeholders warn, with their key path.
        #expect(findings.contains { $0.code == "plist.build-variable" && $0.keyPath.description == "CFBundleDisplayName" && $0.severity == .warning })
    }

    @Test func braceStylePlaceholdersAreFound() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/001-telegram-share.plist"))
        let findings = BundleValidator.validate(info: info)
        #expect(findings.contains { $0.code == "plist.build-variable" && $0.message.contains("$(APP_NAME)") })
    }

    @Test(arguments: [
        "plists/007-icecubes-share.plist", "plists/026-owncloud-action-nobundlekeys.plist",
        "plists/031-ehpanda-share-minimal.plist", "plists/032-protonpass-share-nobundlekeys.plist",
        "plists/054-metatext-action-no-bundleid.plist", "plists/055-blear-action-strictmatching.plist",
        "plists/058-encamera-share-unknownkey.plist",
    ])
    func missingBundleIdentifierIsRefusedWithKeyPath(file: String) throws {
        let info = try InfoPlist.load(path: Corpus.path(file))
        #expect(info.bundleIdentifier == nil)
        let findings = BundleValidator.validate(info: info)
        #expect(findings.contains { $0.code == "bundle.missing-key" && $0.keyPath.description == "CFBundleIdentifier" && $0.severity == .error })
        #expect(findings.hasErrors)
    }

    /// With the build settings Xcode would substitute, complete templates become valid bundles.
    @Test(arguments: [
        "plists/002-firefox-shareto.plist", "plists/004-firefox-today.plist", "plists/013-duckduckgo-share.plist",
        "plists/020-mattermost-share.plist", "plists/042-keyboardkit-demo-keyboard.plist",
        "plists/044-firefox-notification-service.plist", "plists/060-xoo-imessage-extension.plist",
    ])
    func templatesWithBuildSettingsHaveNoErrors(file: String) throws {
        let settings = [
            "PRODUCT_BUNDLE_IDENTIFIER": "com.example.app.ext", "EXECUTABLE_NAME": "ext",
            "PRODUCT_BUNDLE_PACKAGE_TYPE": "XPC!",
        ]
        let info = try InfoPlist.load(path: Corpus.path(file), buildSettings: settings)
        #expect(info.executable == "ext")
        let errors = BundleValidator.validate(info: info).filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func fileProviderActionsRuleIsNotTheExtensionRule() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/027-owncloud-fileprovider-actionsui.plist"))
        #expect(info.extensionInfo?.activationRule == ActivationRuleSpec.none)
        #expect(info.extensionInfo?.raw["NSExtensionFileProviderActions"]?.arrayValue?.isEmpty == false)
    }

    @Test func dictionaryRuleKeepsValuesAsWritten() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/049-garfield-action-stringcount-js.plist"))
        guard case .dictionary(let rule)? = info.extensionInfo?.activationRule else {
            Issue.record("expected dictionary rule")
            return
        }
        #expect(rule["NSExtensionActivationSupportsWebPageWithMaxCount"] == .string("1"))
        #expect(info.extensionInfo?.javaScriptPreprocessingFile == "ScreenShotJavaScript")

        let blear = try InfoPlist.load(path: Corpus.path("plists/055-blear-action-strictmatching.plist"))
        guard case .dictionary(let strict)? = blear.extensionInfo?.activationRule else {
            Issue.record("expected dictionary rule")
            return
        }
        #expect(strict["NSExtensionActivationUsesStrictMatching"] == .bool(true))
        #expect(strict["NSExtensionActivationDictionaryVersion"] == .integer(2))
        #expect(strict["NSExtensionActivationSupportsImageWithMaxCount"] == .integer(1))
    }

    @Test func predicateRuleKeepsWhitespace() throws {
        let info = try InfoPlist.load(path: Corpus.path("plists/006-signal-share.plist"))
        guard case .predicate(let text)? = info.extensionInfo?.activationRule else {
            Issue.record("expected predicate")
            return
        }
        #expect(text.contains("SUBQUERY"))
        #expect(text != text.trimmingCharacters(in: .whitespacesAndNewlines), "corpus notes trailing whitespace")
    }
}
