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
            var info: [String: UserInfoValue] = ["note": .string(saved.relativePath)]
            if case .string(let session)? = context.inputItems.first?.userInfo["cancelSession"] {
                context.cancelTransfers(inSession: session)
                info["transfer"] = .string("cancel asked for session \(session)")
            }
            if let (transfer, session) = BackgroundTransfers.requested(in: context, note: saved, contents: note.contents(number: saved.number)) {
                // Handed to appexd: the request completes now and the transfer outlives us.
                switch await context.schedule(transfer, session: session) {
                case .scheduled(let id): info["transfer"] = .string("scheduled \(id)")
                case .refused(let reason, let message): info["transfer"] = .string("refused \(reason) \(message)")
                }
            }
            context.completeRequest(returningItems: [
                ExtensionItem(
                    attributedTitle: "Note \(saved.number)",
                    attributedContentText: note.summary(number: saved.number),
                    userInfo: info
                )
            ])
        } catch {
            context.cancelRequest(with: Self.error(.cannotSave, "\(error)"))
        }
    }

    func handleEvents(forBackgroundSession session: String, results: [TransferResult], context: ExtensionContext) async {
        BackgroundTransfers.record(session: session, results: results)
        context.completeRequest()
    }

    static func error(_ code: ErrorCode, _ message: String) -> RequestError {
        RequestError(domain: errorDomain, code: code.rawValue, message: message)
    }
}
