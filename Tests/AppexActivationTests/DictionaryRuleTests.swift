import AppexActivation
import AppexBundle
import Testing

private func rule(_ dict: [String: PlistValue]) -> (ActivationRule?, [Finding]) {
    ActivationRule.compile(.dictionary(dict))
}

private func items(_ types: [String]..., text: String? = nil) -> ActivationItems {
    ActivationItems(extensionItems: [
        ActivationItem(attachments: types.map { ActivationAttachment(registeredTypeIdentifiers: $0) }, attributedContentText: text)
    ])
}

@Suite("Dictionary rules")
struct DictionaryRuleTests {
    let image = "NSExtensionActivationSupportsImageWithMaxCount"
    let file = "NSExtensionActivationSupportsFileWithMaxCount"

    @Test func strictMatchingInVersion2CountsOnlyTheMostSpecificCategory() throws {
        let request = items(["public.jpeg"], ["public.jpeg"], ["public.jpeg"], ["com.adobe.pdf"])
        let base: [String: PlistValue] = [file: .integer(1), image: .integer(10)]

        // Fuzzy (default): each JPEG is an image and a file, so 4 files > 1.
        let (fuzzy, f1) = rule(base)
        #expect(f1.isEmpty)
        let r1 = try #require(fuzzy).evaluate(request)
        #expect(!r1.isActivated)
        #expect(r1.reason?.contains("4 attachments count as files") == true)

        // Strict, version 2: JPEGs count only as images; one file (the PDF).
        var strict = base
        strict["NSExtensionActivationDictionaryVersion"] = .integer(2)
        strict["NSExtensionActivationUsesStrictMatching"] = .bool(true)
        #expect(try #require(rule(strict).0).evaluate(request).isActivated)

        // Strict without version 2 is ignored, with a warning.
        var v1 = base
        v1["NSExtensionActivationUsesStrictMatching"] = .bool(true)
        let (r3, f3) = rule(v1)
        #expect(f3.map(\.code) == ["activation.strict-needs-v2"])
        #expect(try !#require(r3).evaluate(request).isActivated)
    }

    @Test func maxCountZeroMeansUnsupported() throws {
        let (r, _) = rule([image: .integer(0), "NSExtensionActivationSupportsWebURLWithMaxCount": .integer(1)])
        let compiled = try #require(r)
        #expect(try !compiled.evaluate(items(["public.png"])).isActivated)
        #expect(try compiled.evaluate(items(["public.url"])).isActivated)
    }

    @Test func attachmentCountsBoundTheTotal() throws {
        let (r, _) = rule([
            image: .integer(10),
            "NSExtensionActivationSupportsAttachmentsWithMinCount": .integer(2),
            "NSExtensionActivationSupportsAttachmentsWithMaxCount": .integer(3),
        ])
        let compiled = try #require(r)
        #expect(try !compiled.evaluate(items(["public.png"])).isActivated)
        #expect(try compiled.evaluate(items(["public.png"], ["public.png"])).isActivated)
        #expect(try compiled.evaluate(items(["public.png"], ["public.png"], ["public.png"])).isActivated)
        let four = try compiled.evaluate(items(["public.png"], ["public.png"], ["public.png"], ["public.png"]))
        #expect(four.reason == "4 attachments but NSExtensionActivationSupportsAttachmentsWithMaxCount is 3")
    }

    @Test func textNeedsSupportsText() throws {
        let (r, _) = rule([image: .integer(1)])
        let result = try #require(r).evaluate(items(["public.png"], text: "caption"))
        #expect(result.reason?.contains("NSExtensionActivationSupportsText") == true)
        let (t, _) = rule([image: .integer(1), "NSExtensionActivationSupportsText": .bool(true)])
        #expect(try #require(t).evaluate(items(["public.png"], text: "caption")).isActivated)
    }

    @Test func unsupportedAttachmentIsNamedInTheReason() throws {
        let (r, _) = rule([image: .integer(5)])
        let result = try #require(r).evaluate(items(["public.png"], ["com.adobe.pdf"]))
        #expect(result.reason?.contains("attachment 1 of item 0 (com.adobe.pdf)") == true)
    }

    @Test func valueTypes() {
        // Numeric string: accepted with a warning (Apple reads integerValue).
        let (ok, f1) = rule([image: .string("3")])
        #expect(ok != nil)
        #expect(f1.map(\.severity) == [.warning])
        #expect(f1.first?.code == "activation.count-type")
        // Non-numeric string, negative, wrong types: errors at the key's path.
        for bad: PlistValue in [.string("many"), .integer(-1), .bool(true), .array([])] {
            let (r, f) = rule([image: bad])
            #expect(r == nil)
            #expect(f.first?.severity == .error)
            #expect(f.first?.keyPath.description == "NSExtension:NSExtensionAttributes:NSExtensionActivationRule:\(image)")
        }
        let (r2, f2) = rule(["NSExtensionActivationSupportsText": .integer(1)])
        #expect(r2 == nil)
        #expect(f2.first?.code == "activation.value-type")
        let (r3, f3) = rule(["NSExtensionActivationDictionaryVersion": .integer(3), image: .integer(1)])
        #expect(r3 == nil)
        #expect(f3.first?.code == "activation.version")
    }

    @Test func unknownKeysAndEmptyRulesWarn() {
        let (r, f) = rule(["NSExtensionActivationSupportsImagesWithMaxCount": .integer(1)])
        #expect(r != nil)
        #expect(Set(f.map(\.code)) == ["activation.unknown-key", "activation.accepts-nothing"])
        #expect(f.allSatisfy { $0.severity == .warning })
    }

    @Test func noRuleActivatesEverything() throws {
        let (r, f) = ActivationRule.compile(.none)
        #expect(f.isEmpty)
        #expect(try #require(r).evaluate(ActivationItems(extensionItems: [])).isActivated)
        #expect(r?.printed == nil)
    }
}
