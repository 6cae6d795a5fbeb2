// The minimal extension, also importing FoundationEssentials and using what extensions
// typically use from it (URL, Data, JSON), so that it is really linked.
import AppexExtensionKit
import FoundationEssentials

struct Minimal: ExtensionRequestHandler {
    func beginRequest(with context: ExtensionContext) async {
        let links = context.inputItems.flatMap(\.attachments).compactMap { $0.inlineText.flatMap(URL.init(string:)) }
        let json = (try? JSONEncoder().encode(links.map(\.absoluteString))) ?? Data()
        context.completeRequest(returningItems: [ExtensionItem(attributedContentText: String(decoding: json, as: UTF8.self))])
    }
}

AppexExtension.main(handler: Minimal())
