import AppexActivation
import Foundation

/// The item sets every fixture and corpus rule is evaluated against. Column order of the expectation
/// strings in the tests.
enum ItemSets {
    static func attachment(_ types: String...) -> ActivationAttachment { ActivationAttachment(registeredTypeIdentifiers: types) }
    static func one(_ attachments: [ActivationAttachment], text: String? = nil) -> ActivationItems {
        ActivationItems(extensionItems: [ActivationItem(attachments: attachments, attributedContentText: text)])
    }

    static let all: [(name: String, items: ActivationItems)] = [
        ("empty", ActivationItems(extensionItems: [])),
        ("oneImage", one([attachment("public.jpeg")])),
        ("tenImages", one(Array(repeating: attachment("public.jpeg"), count: 10))),
        ("fileURL", one([attachment("public.file-url")])),
        ("webURL", one([attachment("public.url")])),
        ("textContent", one([], text: "hello")),
        ("textAttachment", one([attachment("public.plain-text")])),
        ("mixed", one([attachment("public.jpeg"), attachment("public.url"), attachment("public.plain-text")])),
        (
            "twoItems",
            ActivationItems(extensionItems: [
                ActivationItem(attachments: [attachment("public.url")]),
                ActivationItem(attachments: [attachment("public.url")]),
            ])
        ),
        ("manyImages", one(Array(repeating: attachment("public.png"), count: 50))),
        ("pdf", one([attachment("com.adobe.pdf")])),
        ("movie", one([attachment("com.apple.quicktime-movie")])),
        ("safariPage", one([attachment("com.apple.property-list", "public.url")])),
    ]
}
