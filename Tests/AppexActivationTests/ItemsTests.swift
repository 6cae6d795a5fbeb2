import AppexActivation
import Foundation
import Testing

private func decodeError(_ json: String) -> ItemsError? {
    do {
        _ = try ActivationItems.decode(json: Data(json.utf8))
        return nil
    } catch {
        return error
    }
}

@Suite("Items payload")
struct ItemsTests {
    @Test func decodesTheDocumentedShape() throws {
        let json =
            #"{"extensionItems": [{"attachments": [{"registeredTypeIdentifiers": ["public.jpeg"], "suggestedName": "a.jpg"}], "attributedContentText": "hi", "attributedTitle": "t"}, {}]}"#
        let items = try ActivationItems.decode(json: Data(json.utf8))
        #expect(items.extensionItems.count == 2)
        #expect(items.extensionItems[0].attachments[0].registeredTypeIdentifiers == ["public.jpeg"])
        #expect(items.extensionItems[0].attachments[0].suggestedName == "a.jpg")
        #expect(items.extensionItems[0].attributedContentText == "hi")
        #expect(items.extensionItems[1].attachments.isEmpty)
    }

    @Test func errorsNameTheJSONPath() {
        let cases: [(String, String, String)] = [
            (
                #"{"extensionItems": [{"attachments": [{"registeredTypeIdentifiers": [1]}]}]}"#,
                "$.extensionItems[0].attachments[0].registeredTypeIdentifiers[0]", "expected a string"
            ),
            (
                #"{"extensionItems": [{"attachments": [{}]}]}"#,
                "$.extensionItems[0].attachments[0].registeredTypeIdentifiers", "missing required key"
            ),
            (#"{"extensionItems": [{"attachment": []}]}"#, "$.extensionItems[0].attachment", "unknown key"),
            (#"{"extensionItems": {}}"#, "$.extensionItems", "expected"),
            (#"{"items": []}"#, "$.items", "unknown key"),
            (#"{"extensionItems": [}"#, "$", "not valid JSON"),
            (
                #"{"extensionItems": [{"attachments": [{"registeredTypeIdentifiers": [""]}]}]}"#,
                "$.extensionItems[0].attachments[0].registeredTypeIdentifiers[0]", "1 to 255 bytes"
            ),
        ]
        for (json, path, fragment) in cases {
            let error = decodeError(json)
            #expect(error?.path == path, "\(json): \(String(describing: error))")
            #expect(error?.message.contains(fragment) == true, "\(json): \(String(describing: error))")
        }
    }

    @Test func payloadsBeyondTheLimitsAreRefused() throws {
        let tooMany = ActivationItems(extensionItems: [
            ActivationItem(
                attachments: Array(
                    repeating: ActivationAttachment(registeredTypeIdentifiers: ["public.png"]), count: ActivationItems.Limits.maximumAttachments + 1))
        ])
        #expect(throws: ItemsError.self) { try tooMany.validate() }
        let rule = try ActivationRule.compile(predicate: "TRUEPREDICATE")
        #expect(throws: ItemsError.self) { _ = try rule.evaluate(tooMany) }

        let items = Array(repeating: "{}", count: ActivationItems.Limits.maximumItems + 1).joined(separator: ",")
        #expect(decodeError(#"{"extensionItems": [\#(items)]}"#)?.path == "$.extensionItems")

        let huge = Data(repeating: 0x20, count: ActivationItems.Limits.maximumJSONBytes + 1)
        #expect(throws: ItemsError.self) { _ = try ActivationItems.decode(json: huge) }
    }

    @Test func evaluationStepsAreBounded() throws {
        let items = ActivationItems(extensionItems: [
            ActivationItem(
                attachments: Array(
                    repeating: ActivationAttachment(registeredTypeIdentifiers: ["public.png"]), count: ActivationItems.Limits.maximumAttachments))
        ])
        let text = """
            SUBQUERY(extensionItems.attachments, $a, SUBQUERY(extensionItems.attachments, $b,
                SUBQUERY(extensionItems.attachments, $c, TRUEPREDICATE).@count > 0).@count > 0).@count > 0
            """
        let rule = try ActivationRule.compile(predicate: text)
        #expect(throws: EvaluationLimitError.self) { _ = try rule.evaluate(items) }
    }
}
