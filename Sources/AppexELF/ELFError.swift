/// Why a file is not an ELF object the reader accepts, and where in it.
///
/// The file is the extension author's, so every message names the structure being read and
/// its file offset: a person can open the file in a hex editor and see the problem.
public struct ELFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being read: "ELF header", "program header 3", "dynamic entry 12 (DT_STRTAB)".
    public var part: String
    /// File offset of the bytes concerned, when there is one.
    public var offset: UInt64?
    public var message: String
    /// True when the file does not start with the ELF magic at all (a script, a Mach-O file).
    public var notELF: Bool

    public init(_ part: String, at offset: UInt64? = nil, _ message: String, notELF: Bool = false) {
        self.part = part
        self.offset = offset
        self.message = message
        self.notELF = notELF
    }

    public var description: String {
        if let offset { return "\(part) at offset \(hex(offset)): \(message)" }
        return "\(part): \(message)"
    }
}

/// `0x1f40`: offsets and addresses in messages, as readelf and hex editors show them.
func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
