import AppexExtensionKit

/// What one share request brought, ready to be written and summarised.
struct Note {
    struct File {
        var name: String
        var size: Int
    }

    var texts: [String] = []
    var urls: [String] = []
    var files: [File] = []

    var isEmpty: Bool { texts.isEmpty && urls.isEmpty && files.isEmpty }

    init(collecting context: ExtensionContext) throws(AttachmentError) {
        for item in context.inputItems {
            if let text = item.attributedContentText, !text.isEmpty { texts.append(text) }
            for attachment in item.attachments {
                switch attachment.content {
                case .inline(let bytes) where attachment.isURL:
                    urls.append(String(decoding: bytes, as: UTF8.self))
                case .inline(let bytes) where attachment.isText:
                    texts.append(String(decoding: bytes, as: UTF8.self))
                default:
                    let name = attachment.suggestedName ?? "file \(files.count + 1)"
                    files.append(File(name: name, size: try context.data(for: attachment).count))
                }
            }
        }
    }

    var characterCount: Int { texts.reduce(0) { $0 + $1.count } }

    /// The note file: the text, then a section per kind of thing that was shared.
    func contents(number: Int) -> String {
        var out = "Note \(number)\n"
        for text in texts { out += "\n" + text + "\n" }
        if !urls.isEmpty {
            out += "\nURLs:\n"
            for url in urls { out += url + "\n" }
        }
        if !files.isEmpty {
            out += "\nFiles:\n"
            for file in files { out += "\(file.name) (\(file.size) bytes)\n" }
        }
        return out
    }

    /// e.g. "saved note 3: 12 characters, 1 URL, 1 file (1234 bytes)".
    func summary(number: Int) -> String {
        var out = "saved note \(number): " + counted(characterCount, "character")
        out += ", " + counted(urls.count, "URL")
        out += ", " + counted(files.count, "file")
        if !files.isEmpty { out += " (\(files.reduce(0) { $0 + $1.size }) bytes)" }
        return out
    }

    private func counted(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }
}
