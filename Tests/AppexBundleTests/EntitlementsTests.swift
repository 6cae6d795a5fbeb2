import AppexBundle
import Testing

@Suite struct EntitlementsTests {
    @Test(arguments: Corpus.files(in: "entitlements"))
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
        let e = try Entitlements.load(path: Corpus.path("entitlements/004-wireguard-app-macos-teamprefix.entitlements"),
                                      buildSettings: ["DEVELOPMENT_TEAM": "ABCDE12345", "APP_ID_MACOS": "com.wireguard.macos"])
        #expect(e.applicationGroups == ["ABCDE12345.group.com.wireguard.macos"])
        #expect(e.validate().map(\.code) == ["entitlements.group-prefix"])
        #expect(e.requestedKeys.contains("com.apple.security.app-sandbox"))
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
