/// Why a property list could not be read, and where: a line for the text formats, a byte
/// offset for the binary one. The reader never guesses past a fault.
public struct PropertyListSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The file is well formed but holds something that is not a plist value (a keyed-archiver UID).
    public var unsupportedValue: Bool
    public init(_ message: String, unsupportedValue: Bool = false) {
        self.message = message
        self.unsupportedValue = unsupportedValue
    }
    public var description: String { message }

    /// A fault in a text format, named by its line: `message` prefixed with the line of
    /// `offset` in `bytes` (the XML and OpenStep readers).
    static func atLine(of offset: Int, in bytes: [UInt8], _ message: String) -> PropertyListSyntaxError {
        var line = 1
        for c in bytes[0..<min(offset, bytes.count)] where c == 0x0A { line += 1 }
        return PropertyListSyntaxError("line \(line): \(message)")
    }
}

/// Reads a property list in any of the three formats CoreFoundation reads (XML, binary
/// `bplist00`, OpenStep text) into a `PlistValue`, without Foundation: `appex run` loads
/// bundles and does not link it (Docs/launch-sequence.md, "A run without Foundation").
///
/// Everything in the file is hostile input: nesting is bounded (`maximumDepth`), what a file
/// expands to is bounded in values and bytes (`PropertyListBudget`: a binary plist's shared
/// objects are counted at every reference) before it is built, a binary plist's objects may
/// not refer to themselves, and every offset is checked before it is read.
public enum PropertyListReader {
    /// Deeper nesting is refused instead of recursing further; Info.plists nest < 10 deep.
    public static let maximumDepth = 256
    /// Values a binary plist may expand to (its objects may be shared, so a small file could
    /// otherwise describe an exponentially large tree). Info.plists hold hundreds; this bounds
    /// what one hostile bundle can make a reader (appexd's installer among them) allocate.
    public static let maximumValues = 1 << 17
    /// Bytes a property list may expand to (`PropertyListBudget` counts them): twice the
    /// largest file read (`PropertyListFile.maximumSize`), so a file that shares nothing is
    /// never refused for its bytes, while a small binary one repeating a large string is.
    public static let maximumExpandedBytes = 8 << 20

    public static func parse(_ bytes: [UInt8], budget: PropertyListBudget = PropertyListBudget())
        throws(PropertyListSyntaxError) -> PlistValue
    {
        if bytes.starts(with: Array("bplist".utf8)) {
            var parser = BinaryPropertyListParser(bytes, budget: budget)
            return try parser.parse()
        }
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw PropertyListSyntaxError("UTF-16 text property lists are not read; write it as UTF-8 XML or binary")
        }
        var i = start
        while i < bytes.count, XMLPropertyListParser.isSpace(bytes[i]) { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: "<") {
            var parser = XMLPropertyListParser(bytes, from: start, budget: budget)
            return try parser.parse()
        }
        var parser = OpenStepPropertyListParser(bytes, from: start, budget: budget)
        return try parser.parse()
    }
}
