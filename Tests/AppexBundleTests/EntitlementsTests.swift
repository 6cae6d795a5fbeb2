import AppexBundle
import AppexTestSupport
import Testing

/// Entitlements from the repository's fixtures (Tests/Fixtures/entitlements) and inline.
@Suite struct EntitlementsTests {
    static let files = Fixtures.directory.entries.filter { $0.file.hasPrefix("entitlements/") }.map(\.file)

    @Test(arguments: files)
    func everyFixtureLoadsWithTheValidityItsManifestRecords(file: String) throws {
        let entry = try #require(Fixtures.directory.entry(file))
        let e = try Entitlements.load(path: Fixtures.path(file))
        #expect(!e.applicationGroups.isEmpty)
        #expect(e.readFindings.isEmpty)
        #expect(e.validate().hasErrors == (entry.valid == false), "\(e.validate())")
    }

    @Test func plainGroupIsValid() throws {
        let e = try Entitlements.load(path: Fixtures.path("entitlements/notes-share.entitlements"))
        #expect(e.applicationGroups == ["group.com.example.notes"])
        #expect(e.validate().isEmpty)
        #expect(e.grantedFlags == ["com.apple.security.app-sandbox", "com.apple.security.network.client"])
        #expect(
            e.requestedKeys == [
                "com.apple.security.app-sandbox", "com.apple.security.application-groups",
                "com.apple.security.network.client",
            ])
    }

    @Test func binaryFileLoads() throws {
        let e = try Entitlements.load(path: Fixtures.path("entitlements/binary-groups.entitlements"))
        #expect(e.applicationGroups == ["group.com.example.notes", "group.com.example.shared"])
        // A false flag is written but not requested.
        #expect(e.raw["com.apple.security.network.server"] == .bool(false))
        #expect(e.grantedFlags == ["com.apple.security.app-sandbox"])
        #expect(e.validate().isEmpty)
    }

    @Test func placeholderGroupIsAnErrorAtItsIndex() throws {
        let e = try Entitlements.load(path: Fixtures.path("entitlements/placeholder-group.entitlements"))
        let findings = e.validate()
        #expect(findings.map(\.code) == ["entitlements.build-variable"])
        #expect(findings.first?.keyPath.description == "com.apple.security.application-groups:0")
        #expect(findings.first?.message.contains("$(APP_ID)") == true)
    }

    @Test func teamPrefixedGroupResolvesAndWarns() throws {
        let e = try Entitlements.load(
            path: Fixtures.path("entitlements/team-prefix.entitlements"),
            buildSettings: ["DEVELOPMENT_TEAM": "ABCDE12345", "APP_ID_MACOS": "com.example.notes.mac"])
        #expect(e.applicationGroups == ["ABCDE12345.group.com.example.notes.mac"])
        #expect(e.validate().map(\.code) == ["entitlements.group-prefix"])
        #expect(e.validate().first?.severity == .warning)
        #expect(e.requestedKeys.contains("com.apple.security.app-sandbox"))
        #expect(!e.requestedKeys.contains("com.apple.security.files.user-selected.read-only"))
    }

    @Test func wrongTypeInAFileIsReportedWithKeyPath() throws {
        let e = try Entitlements.load(path: Fixtures.path("malformed/wrong-type-group.entitlements"))
        #expect(e.applicationGroups == ["group.com.example.notes"])
        #expect(e.readFindings.map(\.keyPath.description) == ["com.apple.security.application-groups:1"])
        #expect(e.validate().hasErrors)
    }

    @Test func wrongTypeIsReportedWithKeyPath() {
        let e = Entitlements(["com.apple.security.application-groups": .array([.string("group.a"), .integer(3)])])
        #expect(e.applicationGroups == ["group.a"])
        #expect(e.readFindings.map(\.keyPath.description) == ["com.apple.security.application-groups:1"])
    }

    @Test func unsafeGroupNameIsRefused() {
        let e = Entitlements(["com.apple.security.application-groups": .array([.string("group.../../etc")])])
        #expect(e.validate().map(\.code) == ["entitlements.group-unsafe"])
    }
}

/// Conformance: the corpus's real entitlements files.
@Suite(.corpus) struct CorpusEntitlementsTests {
    @Test(arguments: Corpus.directory.files(in: "entitlements"))
    func everyCorpusFileLoadsWithAppGroups(file: String) throws {
        let e = try Entitlements.load(path: Corpus.path(file))
        #expect(e.applicationGroups.count == 1)
        #expect(e.readFindings.isEmpty)
    }

    @Test func plainGroupIsValid() throws {
        let e = try Entitlements.load(path: Corpus.path("entitlements/001-deltachat-dcshare.entitlements"))
        #expect(e.applicationGroups == ["group.sfydev.chat.delta"])
        #expect(e.validate().isEmpty)
    }

    @Test func placeholderGroupIsAnErrorAtItsIndex() throws {
        let e = try Entitlements.load(path: Corpus.path("entitlements/003-wireguard-network-extension-ios.entitlements"))
        let findings = e.validate()
        #expect(findings.map(\.code) == ["entitlements.build-variable"])
        #expect(findings.first?.keyPath.description == "com.apple.security.application-groups:0")
        #expect(findings.first?.message.contains("$(APP_ID)") == true)
    }

    @Test func teamPrefixedGroupResolvesAndWarns() throws {
        let e = try Entitlements.load(
            path: Corpus.path("entitlements/004-wireguard-app-macos-teamprefix.entitlements"),
            buildSettings: ["DEVELOPMENT_TEAM": "ABCDE12345", "APP_ID_MACOS": "com.wireguard.macos"])
        #expect(e.applicationGroups == ["ABCDE12345.group.com.wireguard.macos"])
        #expect(e.validate().map(\.code) == ["entitlements.group-prefix"])
        #expect(e.requestedKeys.contains("com.apple.security.app-sandbox"))
    }
}
