/// One input or returned item, modelled on NSExtensionItem.
///
/// The "attributed" strings carry plain UTF-8 text in protocol version 1: Linux has no
/// NSAttributedString, and a later version can add attributes as an optional field.
public struct ExtensionItem: Equatable, Sendable {
    public var attributedTitle: String?
    public var attributedContentText: String?
    public var attachments: [Attachment]
    public var userInfo: [String: UserInfoValue]

    public init(
        attributedTitle: String? = nil, attributedContentText: String? = nil,
        attachments: [Attachment] = [], userInfo: [String: UserInfoValue] = [:]
    ) {
        self.attributedTitle = attributedTitle
        self.attributedContentText = attributedContentText
        self.attachments = attachments
        self.userInfo = userInfo
    }
}

/// An attachment, modelled on NSItemProvider: what it is (registered type identifiers, most
/// specific first) and where its bytes are. A URL is an attachment of type `public.url` whose
/// inline data is the URL's UTF-8 text.
public struct Attachment: Equatable, Sendable {
    public enum Content: Equatable, Sendable {
        /// The bytes themselves, inside the frame (keep them small: the frame bound is 128 KiB).
        case inline([UInt8])
        /// The index of a descriptor sent with the frame: the receiver reads the data from it,
        /// and never learns a path on the sender's side.
        case descriptor(index: Int)
    }

    public var typeIdentifiers: [String]
    public var content: Content
    public var suggestedName: String?

    public init(typeIdentifiers: [String], content: Content, suggestedName: String? = nil) {
        self.typeIdentifiers = typeIdentifiers
        self.content = content
        self.suggestedName = suggestedName
    }
}

/// A user-info value: a small typed scalar or a string, no nesting.
public enum UserInfoValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case double(Double)
    case data([UInt8])
}

/// An error as NSError carries it: domain, code, and a message for people.
public struct RequestError: Equatable, Sendable {
    public var domain: String
    public var code: Int64
    public var message: String?

    public init(domain: String, code: Int64, message: String? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
    }
}
