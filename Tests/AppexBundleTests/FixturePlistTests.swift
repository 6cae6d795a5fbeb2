import AppexBundle
import AppexTestSupport
import Foundation
import Testing

/// The repository's own Info.plists (Tests/Fixtures/plists): what CorpusPlistTests proves on
/// real files, proved on small files written for it, so a clone alone runs it.
@Suite struct FixturePlistTests {
    static let plists = Fixtures.directory.entries.filter { $0.file.hasPrefix("plists/") }.map(\.file)

    @Test func everyFixtureFileHasAManifestRow() {
        // A file without a row would be checked by nothing; a row without a file is stale.
        let onDisk = Fixtures.directory.files(in: "plists") + Fixtures.directory.files(in: "entitlements")
        #expect(onDisk.sorted() == Fixtures.directory.entries.map(\.file).sorted())
        #expect(Self.plists.count >= 10)
    }

    @Test(arguments: plists)
    func loadsWithManifestPointRuleKindAndValidity(file: String) throws {
        try expectLoadsAsRecorded(file, in: Fixtures.directory)
    }

    @Test func binaryPlistLoadsLikeItsXMLTwin() throws {
        let binaryPath = Fixtures.path("plists/action-strict-binary.plist")
        let header = try Data(contentsOf: URL(fileURLWithPath: binaryPath)).prefix(8)
        #expect(String(decoding: header, as: UTF8.self) == "bplist00")
        let binary = try InfoPlist.load(path: binaryPath)
        let xml = try InfoPlist.load(path: Fixtures.path("plists/action-strict.plist"))
        #expect(binary == xml)
        #expect(binary.bundleIdentifier == "com.example.notes.blur")
        #expect(binary.extensionInfo?.raw["NSExtensionActionWantsFullScreenPresentation"] == .bool(true))
    }

    @Test func templateIdentityKeysAreReportedAsBuildVariables() throws {
        let info = try InfoPlist.load(path: Fixtures.path("plists/template-placeholders.plist"))
        let findings = BundleValidator.validate(info: info)
        let identity = findings.filter { $0.code == "bundle.build-variable" }.map(\.keyPath.description).sorted()
        #expect(identity == ["CFBundleExecutable", "CFBundleIdentifier"])
        #expect(findings.allSatisfy { $0.code != "bundle.build-variable" || $0.severity == .error })
        // Keys Appex only displays warn, with their key path.
        let display = findings.filter { $0.code == "plist.build-variable" }.map(\.keyPath.description).sorted()
        #expect(display == ["CFBundleDisplayName", "CFBundlePackageType", "CFBundleVersion", "NSExtension:NSExtensionPrincipalClass"])
        #expect(findings.allSatisfy { $0.code != "plist.build-variable" || $0.severity == .warning })
    }

    @Test func braceStylePlaceholdersAreFound() throws {
        let info = try InfoPlist.load(path: Fixtures.path("plists/template-placeholders.plist"))
        let name = try #require(BundleValidator.validate(info: info).first { $0.keyPath.description == "CFBundleDisplayName" })
        #expect(name.code == "plist.build-variable")
        #expect(name.message.contains("$(APP_NAME)"))
    }

    @Test func missingBundleIdentifierIsRefusedWithKeyPath() throws {
        let info = try InfoPlist.load(path: Fixtures.path("plists/missing-identity.plist"))
        #expect(info.bundleIdentifier == nil)
        let findings = BundleValidator.validate(info: info)
        let missing = findings.filter { $0.code == "bundle.missing-key" }
        #expect(missing.filter { $0.severity == .error }.map(\.keyPath.description).sorted() == ["CFBundleExecutable", "CFBundleIdentifier"])
        #expect(missing.filter { $0.severity == .warning }.map(\.keyPath.description).sorted() == ["CFBundlePackageType", "CFBundleVersion"])
    }

    /// With the build settings Xcode would substitute, the template becomes a valid bundle.
    @Test func templateWithBuildSettingsHasNoErrors() throws {
        let settings = [
            "PRODUCT_BUNDLE_IDENTIFIER": "com.example.notes.today", "EXECUTABLE_NAME": "Today",
            "PRODUCT_BUNDLE_PACKAGE_TYPE": "XPC!",
        ]
        let info = try InfoPlist.load(path: Fixtures.path("plists/template-placeholders.plist"), buildSettings: settings)
        #expect(info.executable == "Today")
        #expect(info.bundleIdentifier == "com.example.notes.today")
        let errors = BundleValidator.validate(info: info).filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors)")
        // Settings not given stay as written, so validation still reports them.
        #expect(info.displayName == "${APP_NAME} Today")
    }

    @Test func fileProviderActionsRuleIsNotTheExtensionRule() throws {
        let info = try InfoPlist.load(path: Fixtures.path("plists/fileprovider-actions.plist"))
        #expect(info.extensionInfo?.activationRule == ActivationRuleSpec.none)
        let actions = try #require(info.extensionInfo?.raw["NSExtensionFileProviderActions"]?.arrayValue)
        #expect(actions.first?.dictionaryValue?["NSExtensionFileProviderActionActivationRule"] == .string("TRUEPREDICATE"))
    }

    @Test func dictionaryRuleKeepsValuesAsWritten() throws {
        let info = try InfoPlist.load(path: Fixtures.path("plists/stringcount-webpage.plist"))
        guard case .dictionary(let rule)? = info.extensionInfo?.activationRule else {
            Issue.record("expected dictionary rule")
            return
        }
        #expect(rule["NSExtensionActivationSupportsWebPageWithMaxCount"] == .string("1"))
        #expect(info.extensionInfo?.javaScriptPreprocessingFile == "Extract")

        let strict = try InfoPlist.load(path: Fixtures.path("plists/action-strict.plist"))
        guard case .dictionary(let d)? = strict.extensionInfo?.activationRule else {
            Issue.record("expected dictionary rule")
            return
        }
        #expect(d["NSExtensionActivationUsesStrictMatching"] == .bool(true))
        #expect(d["NSExtensionActivationDictionaryVersion"] == .integer(2))
        #expect(d["NSExtensionActivationSupportsImageWithMaxCount"] == .integer(2))

        let zero = try InfoPlist.load(path: Fixtures.path("plists/services-zero-counts.plist"))
        guard case .dictionary(let z)? = zero.extensionInfo?.activationRule else {
            Issue.record("expected dictionary rule")
            return
        }
        #expect(z["NSExtensionActivationSupportsText"] == .bool(false))
        #expect(z["NSExtensionActivationSupportsImageWithMaxCount"] == .integer(0))
    }

    @Test func predicateRuleKeepsWhitespaceAndDecodesEntities() throws {
        let info = try InfoPlist.load(path: Fixtures.path("plists/share-predicate.plist"))
        guard case .predicate(let text)? = info.extensionInfo?.activationRule else {
            Issue.record("expected predicate")
            return
        }
        #expect(text.hasPrefix("\n\tSUBQUERY ("))
        #expect(text.hasSuffix(").@count == 1\n\t"))
        #expect(text.contains("UTI-CONFORMS-TO \"public.plain-text\""))
        #expect(text.contains(").@count <= 2\n\t\t&& SUBQUERY"))
        #expect(text.contains(".@count > 0"))
    }
}

/// Files that do not parse, or parse with values of the wrong type: refused with the file's
/// path, or described with a finding at each bad key path.
@Suite struct MalformedPlistTests {
    func expectMalformed(_ file: String) {
        let path = Fixtures.path(file)
        do {
            _ = try InfoPlist.load(path: path)
            Issue.record("\(file) loaded")
        } catch let error as PropertyListFileError {
            guard case .malformed(let named, let reason) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(named == path)
            #expect(!reason.isEmpty)
            #expect(error.description.hasPrefix(path + ": not a property list"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func unclosedXMLElementIsMalformed() { expectMalformed("malformed/unclosed-string.plist") }

    @Test func truncatedBinaryIsMalformed() { expectMalformed("malformed/truncated-binary.plist") }

    @Test func topLevelArrayIsRefused() {
        let path = Fixtures.path("malformed/top-level-array.plist")
        #expect(throws: PropertyListFileError.notADictionary(path: path, found: "array")) { try InfoPlist.load(path: path) }
    }

    @Test func missingFileIsUnreadableWithItsPath() {
        let path = Fixtures.path("malformed/no-such-file.plist")
        #expect {
            try InfoPlist.load(path: path)
        } throws: { error in
            guard case .unreadable(let named, _)? = error as? PropertyListFileError else { return false }
            return named == path
        }
    }

    @Test func wrongValueTypesAreFindingsAtTheirKeyPaths() throws {
        let info = try InfoPlist.load(path: Fixtures.path("malformed/wrong-types.plist"))
        #expect(info.bundleIdentifier == nil)
        #expect(info.extensionInfo?.pointIdentifier == nil)
        #expect(info.extensionInfo?.activationRule == ActivationRuleSpec.none)
        #expect(info.backgroundModes == ["audio"])
        let found = info.readFindings.map { "\($0.code) \($0.keyPath)" }.sorted()
        #expect(
            found == [
                "activation.rule-type NSExtension:NSExtensionAttributes:NSExtensionActivationRule",
                "plist.type CFBundleIdentifier",
                "plist.type NSExtension:NSExtensionPointIdentifier",
                "plist.type UIBackgroundModes:1",
            ])
        #expect(info.readFindings.allSatisfy { $0.severity == .error })
        // The validator keeps them and adds what follows from them.
        let codes = Set(BundleValidator.validate(info: info).map(\.code))
        #expect(codes.isSuperset(of: ["plist.type", "activation.rule-type", "bundle.background-modes"]))
    }
}
