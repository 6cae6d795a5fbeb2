import AppexTestSupport
import Foundation
import Testing

/// `appex activation eval` and `appex extensions-for`, through the real binary.
@Suite struct ActivationCLITests {
    static func itemsFile(_ types: [[String]]) throws -> String {
        let path = NSTemporaryDirectory() + "appex-items-" + UUID().uuidString + ".json"
        let object = ["extensionItems": [["attachments": types.map { ["registeredTypeIdentifiers": $0] }]]]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `appex activation eval --plist PLIST` on one item with these attachments' types:
    /// its trimmed stdout after checking it exited 0.
    static func eval(plist: String, _ types: [[String]]) throws -> String {
        let items = try itemsFile(types)
        defer { try? FileManager.default.removeItem(atPath: items) }
        let r = try AppexBinary.run(["activation", "eval", "--plist", plist, "--items", items])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func evalAnswersTrueAndFalseFromAPlistPredicate() throws {
        // share-predicate: exactly one item with at most two URL or plain-text attachments,
        // so one item with one URL activates, and one item with three URLs does not.
        let plist = Fixtures.path("plists/share-predicate.plist")
        #expect(try Self.eval(plist: plist, [["public.url"]]) == "true")
        #expect(try Self.eval(plist: plist, [["public.url"], ["public.url"], ["public.url"]]) == "false")
    }

    @Test func evalAnswersFromAPlistDictionaryRule() throws {
        // share-dict: up to five images; one web URL.
        let plist = Fixtures.path("plists/share-dict.plist")
        #expect(try Self.eval(plist: plist, Array(repeating: ["public.jpeg"], count: 5)) == "true")
        #expect(try Self.eval(plist: plist, Array(repeating: ["public.jpeg"], count: 6)) == "false")
        #expect(try Self.eval(plist: plist, [["public.url"], ["public.url"]]) == "false")
    }

    @Test func badRuleExitsDataErrorWithOffset() throws {
        let items = try Self.itemsFile([["public.jpeg"]])
        defer { try? FileManager.default.removeItem(atPath: items) }
        let r = try AppexBinary.run(["activation", "eval", "--rule", "TRUEPREDICATE AND (", "--items", items])
        #expect(r.status == 65)
        #expect(r.stderr.contains("--rule:1:"))
    }

    @Test func badItemsExitDataErrorWithJSONPath() throws {
        let path = NSTemporaryDirectory() + "appex-items-" + UUID().uuidString + ".json"
        try #"{"extensionItems": [{"attachments": [{"registeredTypeIdentifiers": [7]}]}]}"#.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try AppexBinary.run(["activation", "eval", "--rule", "TRUEPREDICATE", "--items", path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("extensionItems[0]"))
    }

    @Test func extensionsForListsOnlyMatchingBundles() throws {
        let scratch = try ScratchDirectory("share-sheet")
        defer { scratch.remove() }
        let dir = scratch.path
        func bundle(_ name: String, rule: String) throws {
            try BareBundle.writeInfoPlist(
                .init(
                    identifier: "com.example.host.\(name.lowercased())", executable: "x",
                    point: "com.apple.share-services", packageType: nil, version: nil,
                    activationRule: rule), in: "\(dir)/Host.app/PlugIns/\(name).appex")
        }
        try BareBundle.writeInfoPlist(.app("com.example.host"), in: "\(dir)/Host.app")
        try bundle("Images", rule: "<dict><key>NSExtensionActivationSupportsImageWithMaxCount</key><integer>3</integer></dict>")
        try bundle("Links", rule: "<dict><key>NSExtensionActivationSupportsWebURLWithMaxCount</key><integer>1</integer></dict>")

        let jpeg = try AppexBinary.run(["extensions-for", "\(dir)/Host.app", "--item", "public.jpeg", "--json"])
        let listed = try #require(try jpeg.json() as? [String: Any])
        let names = ((listed["extensions"] as? [[String: Any]]) ?? []).filter { $0["activated"] as? Bool == true }.compactMap {
            $0["bundleIdentifier"] as? String
        }
        #expect(names == ["com.example.host.images"])

        let url = try AppexBinary.run(["extensions-for", "\(dir)/Host.app", "--item", "public.url"])
        #expect(url.stdout.contains("com.example.host.links") && !url.stdout.contains("com.example.host.images"))

        let four = try AppexBinary.run([
            "extensions-for", "\(dir)/Host.app", "--item", "public.png", "--item", "public.png",
            "--item", "public.png", "--item", "public.png",
        ])
        #expect(four.stdout.contains("no extension activates"))
    }
}
