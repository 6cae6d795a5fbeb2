import AppexExtensionKit

/// Takes text (an item's content text, or a text attachment), URLs (public.url attachments,
/// inline UTF-8) and files (attachments with a descriptor, or other inline data), and saves
/// them as `Documents/notes/NNN.txt` in the container.
struct ShareHandler: ExtensionRequestHandler {
    static let errorDomain = "dev.appex.examples.share"

    enum ErrorCode: Int64 {
        case nothingToShare = 1
        case cannotSave = 2
        case unreadableAttachment = 3
    }

    func beginRequest(with context: ExtensionContext) async {
        let note: Note
        do {
            note = try Note(collecting: context)
        } catch {
            context.cancelRequest(with: Self.error(.unreadableAttachment, "\(error)"))
            return
        }
        guard !note.isEmpty else {
            context.cancelRequest(with: Self.error(.nothingToShare, "no text, URL or file to save"))
            return
        }
        do {
            let saved = try NoteStore.save(note)
            context.completeRequest(returningItems: [ExtensionItem(
                attributedTitle: "Note \(saved.number)",
                attributedContentText: note.summary(number: saved.number),
                userInfo: ["note": .string(saved.relativePath)]
            )])
        } catch {
            context.cancelRequest(with: Self.error(.cannotSave, "\(error)"))
        }
    }

    static func error(_ code: ErrorCode, _ message: String) -> RequestError {
        RequestError(domain: errorDomain, code: code.rawValue, message: message)
    }
}
