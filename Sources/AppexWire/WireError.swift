/// A frame or a message sequence that breaks the protocol: what is wrong, in which field, at
/// which byte of the frame. Every way decoding or the connection state machine can fail is one
/// of these; nothing else escapes them.
public struct WireError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        // Frame header.
        case badMagic = "bad-magic"
        case unsupportedFormat = "unsupported-format"
        case reservedFlags = "reserved-flags"
        case unknownMessageType = "unknown-message-type"
        case frameTooLarge = "frame-too-large"
        case tooManyDescriptors = "too-many-descriptors"
        case descriptorCountMismatch = "descriptor-count-mismatch"
        case truncated
        case lengthMismatch = "length-mismatch"
        // Fields.
        case badFieldLength = "bad-field-length"
        case unknownField = "unknown-field"
        case duplicateField = "duplicate-field"
        case missingField = "missing-field"
        case conflictingFields = "conflicting-fields"
        case invalidUTF8 = "invalid-utf8"
        case nulInString = "nul-in-string"
        case invalidValue = "invalid-value"
        case tooManyElements = "too-many-elements"
        case badDescriptorIndex = "bad-descriptor-index"
        case unusedDescriptor = "unused-descriptor"
        // Sequence (the connection state machine).
        case outOfOrder = "out-of-order"
        case wrongSender = "wrong-sender"
        case versionMismatch = "version-mismatch"
        case unknownRequest = "unknown-request"
        case requestIDNotIncreasing = "request-id-not-increasing"
        case tooManyInFlight = "too-many-in-flight"
        case unsolicited
    }

    public var kind: Kind
    /// Dotted path of the field, e.g. `BeginRequest.items[0].attachments[1].fdIndex`, or the
    /// message name for sequence errors.
    public var field: String?
    /// Byte offset in the frame (header included) where the offending part starts.
    public var offset: Int?
    public var detail: String

    public init(_ kind: Kind, field: String? = nil, offset: Int? = nil, _ detail: String) {
        self.kind = kind
        self.field = field
        self.offset = offset
        self.detail = detail
    }

    /// The reason to put in the Refusal sent before closing the connection this error ends.
    public var refusalReason: Reason {
        kind == .versionMismatch ? .versionMismatch : .protocolError
    }

    public var description: String {
        var s = kind.rawValue
        if let field { s += " in \(field)" }
        if let offset { s += " at offset \(offset)" }
        return s + ": " + detail
    }
}
