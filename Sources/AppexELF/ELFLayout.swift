/// The two choices `e_ident` makes for the rest of the file: word size and byte order.
/// Every structure's size and field offsets follow from them (the ELF specification's
/// Elf32_* and Elf64_* types).
public struct ELFLayout: Sendable, Equatable {
    public enum WordSize: Sendable, Equatable { case bits32, bits64 }
    public enum ByteOrder: Sendable, Equatable { case little, big }

    public var wordSize: WordSize
    public var byteOrder: ByteOrder

    public init(wordSize: WordSize, byteOrder: ByteOrder) {
        self.wordSize = wordSize
        self.byteOrder = byteOrder
    }

    public var is64Bit: Bool { wordSize == .bits64 }
    /// Size of an address or offset field.
    var word: Int { is64Bit ? 8 : 4 }
    var fileHeaderSize: Int { is64Bit ? 64 : 52 }
    var programHeaderSize: Int { is64Bit ? 56 : 32 }
    var dynamicEntrySize: Int { is64Bit ? 16 : 8 }
    var symbolSize: Int { is64Bit ? 24 : 16 }
    var relSize: Int { is64Bit ? 16 : 8 }
    var relaSize: Int { is64Bit ? 24 : 12 }

    /// The symbol index in a relocation's `r_info`.
    func relocationSymbol(_ info: UInt64) -> UInt64 { is64Bit ? info >> 32 : (info & 0xffff_ffff) >> 8 }
}

/// A run of bytes read from the file at `base`, decoded in the file's byte order. Every
/// accessor checks its range and throws (naming `part` and the file offset) instead of trapping.
struct ELFBytes {
    let bytes: [UInt8]
    let base: UInt64
    let layout: ELFLayout
    let part: String

    var count: Int { bytes.count }

    private func check(_ at: Int, _ width: Int) throws(ELFError) {
        guard at >= 0, width <= bytes.count, at <= bytes.count - width else {
            throw ELFError(part, at: base &+ UInt64(max(at, 0)), "a \(width)-byte field lies past the \(bytes.count) bytes read")
        }
    }

    private func unsigned(_ at: Int, _ width: Int) throws(ELFError) -> UInt64 {
        try check(at, width)
        var value: UInt64 = 0
        for i in 0..<width {
            let byte = UInt64(bytes[at + (layout.byteOrder == .little ? width - 1 - i : i)])
            value = value << 8 | byte
        }
        return value
    }

    func u8(_ at: Int) throws(ELFError) -> UInt8 { UInt8(try unsigned(at, 1)) }
    func u16(_ at: Int) throws(ELFError) -> UInt16 { UInt16(try unsigned(at, 2)) }
    func u32(_ at: Int) throws(ELFError) -> UInt32 { UInt32(try unsigned(at, 4)) }
    func u64(_ at: Int) throws(ELFError) -> UInt64 { try unsigned(at, 8) }
    /// An address, offset or size: 4 bytes in ELF32, 8 in ELF64.
    func word(_ at: Int) throws(ELFError) -> UInt64 { try unsigned(at, layout.word) }
    /// A signed word (a dynamic tag), sign-extended.
    func signedWord(_ at: Int) throws(ELFError) -> Int64 {
        let raw = try word(at)
        return layout.is64Bit ? Int64(bitPattern: raw) : Int64(Int32(bitPattern: UInt32(raw)))
    }
}
