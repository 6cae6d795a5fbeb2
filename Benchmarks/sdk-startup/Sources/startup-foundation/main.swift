// The minimal extension, also importing Foundation and using a part beyond
// FoundationEssentials (a locale-aware formatter), so that the whole of it is really linked.
import AppexExtensionKit
import Foundation

struct Minimal: ExtensionRequestHandler {
    func beginRequest(with context: ExtensionContext) async {
        let formatter = DateFormatter()
        formatter.dateStyle = .medium
        context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "ok at " + formatter.string(from: Date()))])
    }
}

AppexExtension.main(handler: Minimal())
