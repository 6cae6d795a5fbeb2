// A minimal extension on AppexExtensionKit and nothing else: answers every request with one
// item.
import AppexExtensionKit

struct Minimal: ExtensionRequestHandler {
    func beginRequest(with context: ExtensionContext) async {
        context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "ok")])
    }
}

AppexExtension.main(handler: Minimal())
