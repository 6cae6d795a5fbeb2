import AppexCommandSupport
import AppexWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The items of `appex request`: the texts as the item's content, each URL an attachment of
/// type `public.url` (inline), each file an attachment whose bytes travel as a descriptor the
/// CLI opened, so the extension reads it without ever learning (or being able to open) the
/// host path.
struct RequestItems {
    var items: [AppexWire.ExtensionItem]
    /// The files' descriptors, in attachment order; the caller closes them.
    var descriptors: [Int32]

    static func make(texts: [String], urls: [String], files: [String], userInfo: [String: UserInfoValue] = [:]) throws -> RequestItems {
        var attachments: [AppexWire.Attachment] = urls.map {
            AppexWire.Attachment(typeIdentifiers: ["public.url"], content: .inline(Array($0.utf8)))
        }
        var descriptors: [Int32] = []
        for path in files {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let e = errno
                descriptors.forEach { _ = close($0) }
                let text = "\(AppexMain.commandName): --file \(path): \(String(cString: strerror(e)))"
                throw CommandFailure(e == ENOENT ? .noInput : e == EACCES ? .noPermission : .no, text)
            }
            var st = stat()
            guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                descriptors.forEach { _ = close($0) }
                throw ValidationErrorText("--file \(path): not a regular file")
            }
            attachments.append(
                AppexWire.Attachment(
                    typeIdentifiers: typeIdentifiers(forFile: path),
                    content: .descriptor(index: descriptors.count),
                    suggestedName: (path as NSString).lastPathComponent))
            descriptors.append(fd)
        }
        let text = texts.isEmpty ? nil : texts.joined(separator: "\n")
        return RequestItems(
            items: [AppexWire.ExtensionItem(attributedContentText: text, attachments: attachments, userInfo: userInfo)],
            descriptors: descriptors)
    }

    /// `--user-info KEY=VALUE` options: string values under their keys. A key given twice
    /// or without `=` is a mistake, said with the option as typed.
    static func userInfo(_ options: [String]) throws -> [String: UserInfoValue] {
        var info: [String: UserInfoValue] = [:]
        for option in options {
            guard let equals = option.firstIndex(of: "="), equals != option.startIndex else {
                throw ValidationErrorText("--user-info \"\(option)\": expected KEY=VALUE")
            }
            let key = String(option[..<equals])
            guard info[key] == nil else { throw ValidationErrorText("--user-info: \(key) is given twice") }
            info[key] = .string(String(option[option.index(after: equals)...]))
        }
        return info
    }

    /// The type identifiers a share sheet would register for a file, most specific first,
    /// from its name's extension.
    static func typeIdentifiers(forFile path: String) -> [String] {
        let known: [String: [String]] = [
            "txt": ["public.plain-text", "public.text"], "md": ["net.daringfireball.markdown", "public.plain-text"],
            "jpg": ["public.jpeg", "public.image"], "jpeg": ["public.jpeg", "public.image"],
            "png": ["public.png", "public.image"], "gif": ["com.compuserve.gif", "public.image"],
            "pdf": ["com.adobe.pdf"], "html": ["public.html", "public.text"], "json": ["public.json", "public.text"],
        ]
        let ext = (path as NSString).pathExtension.lowercased()
        return (known[ext] ?? []) + ["public.data"]
    }
}
