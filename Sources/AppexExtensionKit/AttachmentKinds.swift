import AppexWire

/// Type identifiers extensions commonly look for in attachments.
public enum TypeIdentifier {
    public static let url = "public.url"
    public static let fileURL = "public.file-url"
    public static let text = "public.text"
    public static let plainText = "public.plain-text"
    public static let utf8PlainText = "public.utf8-plain-text"
    public static let data = "public.data"
}

extension AppexWire.Attachment {
    /// Whether the attachment registered `typeIdentifier` (exactly: no conformance graph here).
    public func hasType(_ typeIdentifier: String) -> Bool {
        typeIdentifiers.contains(typeIdentifier)
    }

    /// A web or other URL (not a file URL): its inline bytes are the URL's UTF-8 text.
    public var isURL: Bool { hasType(TypeIdentifier.url) && !hasType(TypeIdentifier.fileURL) }

    /// Text, in one of the plain-text types.
    public var isText: Bool {
        hasType(TypeIdentifier.text) || hasType(TypeIdentifier.plainText) || hasType(TypeIdentifier.utf8PlainText)
    }

    /// The inline bytes as UTF-8 text (invalid sequences replaced); nil for a descriptor.
    public var inlineText: String? {
        if case .inline(let bytes) = content { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }
}
