import AppexExtensionKit

/// Returns each input item's text in capitals, as the item's content text. An item's text is
/// its content text, else its inline text attachments joined by newlines. No text at all
/// cancels the request: error 1 in `dev.appex.examples.action`.
struct UppercaseAction: ExtensionRequestHandler {
    static let errorDomain = "dev.appex.examples.action"
    static let noTextCode: Int64 = 1

    func beginRequest(with context: ExtensionContext) async {
        let results = context.inputItems.compactMap(Self.text(of:)).map {
            ExtensionItem(attributedContentText: $0.uppercased())
        }
        if results.isEmpty {
            context.cancelRequest(
                with: RequestError(
                    domain: Self.errorDomain, code: Self.noTextCode,
                    message: "no text to transform"))
        } else {
            context.completeRequest(returningItems: results)
        }
    }

    static func text(of item: ExtensionItem) -> String? {
        if let text = item.attributedContentText, !text.isEmpty { return text }
        let attached = item.attachments.filter(\.isText).compactMap(\.inlineText)
        return attached.isEmpty ? nil : attached.joined(separator: "\n")
    }
}
