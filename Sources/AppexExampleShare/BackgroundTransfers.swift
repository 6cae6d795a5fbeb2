import AppexExtensionKit

/// The Share example's background mode (Docs/transfers.md): with `backgroundUpload=URL` in an
/// item's userInfo it copies the saved note into the app group's container and hands appexd
/// an upload of it, then completes at once; the upload goes on after the extension has gone,
/// and when it is over appexd launches the extension again with the results, which it writes
/// to `transfer-events.log` in the group container. `backgroundDownload=URL` with
/// `backgroundFile=NAME` asks for a download into the container instead.
enum BackgroundTransfers {
    static let group = "group.dev.appex.examples"
    static let defaultSession = "dev.appex.examples.share.background"
    static let eventsLog = "transfer-events.log"

    static var groupDirectory: String { "/var/appex/groups/" + group }

    /// What the request's first item asks for, if anything.
    static func requested(in context: ExtensionContext, note: NoteStore.Saved, contents: String) -> (BackgroundTransfer, String)? {
        guard let info = context.inputItems.first?.userInfo else { return nil }
        func string(_ key: String) -> String? {
            if case .string(let s)? = info[key] { return s }
            return nil
        }
        let session = string("backgroundSession") ?? defaultSession
        if let url = string("backgroundUpload") {
            let name = "note-\(note.number).txt"
            do {
                try ExtensionContainer.write(Array(contents.utf8), to: groupDirectory + "/" + name)
            } catch {
                return nil
            }
            return (.upload(name, inAppGroup: group, to: url, headers: ["Content-Type: text/plain; charset=utf-8"]), session)
        }
        if let url = string("backgroundDownload"), let file = string("backgroundFile") {
            return (.download(url, to: file, inAppGroup: group), session)
        }
        return nil
    }

    /// The session's results, one line each, appended to the group's events log.
    static func record(session: String, results: [TransferResult]) {
        let path = groupDirectory + "/" + eventsLog
        var text = (try? ExtensionContainer.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        for r in results {
            let outcome = r.outcome == .completed ? "completed" : r.outcome == .cancelled ? "cancelled" : "failed"
            text +=
                "session=\(session) transfer=\(r.transferID) kind=\(r.kind.name) file=\(r.fileName) outcome=\(outcome)"
                + " bytes=\(r.bytes) status=\(r.httpStatus.map(String.init) ?? "-") reason=\(r.reason?.rawValue ?? "-")\n"
        }
        try? ExtensionContainer.write(Array(text.utf8), to: path)
    }
}
