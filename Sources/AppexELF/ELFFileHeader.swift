/// The ELF file header: identification, type, machine and where the program headers are.
public struct ELFFileHeader: Sendable, Equatable {
    public enum ObjectType: Sendable, Equatable {
        /// ET_EXEC: a fixed-address executable.
        case executable
        /// ET_DYN: a shared library or a position-independent executable.
        case sharedObject
    }

    public var layout: ELFLayout
    public var type: ObjectType
    public var machine: UInt16
    public var programHeaderOffset: UInt64
    public var programHeaderCount: Int

    static let magic: [UInt8] = [0x7f, 0x45, 0x4c, 0x46]

    /// Reads and checks the header. Anything the dynamic loader would refuse, or that this
    /// reader cannot follow safely, is an error naming the field and its offset.
    static func read(_ source: any ELFByteSource, limits: ELFLimits) throws(ELFError) -> ELFFileHeader {
        let part = "ELF header"
        let start = try source.bytes(at: 0, count: Int(min(source.size, 16)))
        guard start.count >= 4, Array(start[0..<4]) == magic else {
            throw ELFError(part, at: 0, "no ELF magic (\\x7fELF): not an ELF file", notELF: true)
        }
        guard start.count == 16 else {
            throw ELFError(part, at: 0, "the file is \(source.size) bytes, shorter than the 16-byte identification")
        }
        let ident = start
        let wordSize: ELFLayout.WordSize
        switch ident[4] {
        case 1: wordSize = .bits32
        case 2: wordSize = .bits64
        default: throw ELFError(part, at: 4, "EI_CLASS is \(ident[4]), neither ELFCLASS32 (1) nor ELFCLASS64 (2)")
        }
        let byteOrder: ELFLayout.ByteOrder
        switch ident[5] {
        case 1: byteOrder = .little
        case 2: byteOrder = .big
        default: throw ELFError(part, at: 5, "EI_DATA is \(ident[5]), neither little- (1) nor big-endian (2)")
        }
        guard ident[6] == 1 else { throw ELFError(part, at: 6, "EI_VERSION is \(ident[6]), not EV_CURRENT (1)") }
        let layout = ELFLayout(wordSize: wordSize, byteOrder: byteOrder)
        let reader = ELFReader(source: source, layout: layout, limits: limits)
        let h = try reader.read(part, at: 0, count: UInt64(layout.fileHeaderSize))

        let type: ObjectType
        switch try h.u16(16) {
        case 2: type = .executable
        case 3: type = .sharedObject
        case 1: throw ELFError(part, at: 16, "e_type is ET_REL: a relocatable object (.o), not an executable or shared library")
        case 4: throw ELFError(part, at: 16, "e_type is ET_CORE: a core dump, not an executable or shared library")
        case let t: throw ELFError(part, at: 16, "e_type \(t) is not ET_EXEC (2) or ET_DYN (3)")
        }
        let machine = try h.u16(18)
        let phoffAt = 28 + (layout.is64Bit ? 4 : 0)  // after e_entry, a word
        let phoff = try h.word(phoffAt)
        let phentsizeAt = layout.is64Bit ? 54 : 42
        let phentsize = Int(try h.u16(phentsizeAt))
        let phnum = Int(try h.u16(phentsizeAt + 2))
        guard phentsize == layout.programHeaderSize else {
            throw ELFError(
                part, at: UInt64(phentsizeAt), "e_phentsize is \(phentsize), not \(layout.programHeaderSize) (the size of a program header)")
        }
        guard phnum != 0xffff else {
            throw ELFError(part, at: UInt64(phentsizeAt + 2), "e_phnum is PN_XNUM (the count is in a section header); refused")
        }
        guard phnum > 0 else {
            throw ELFError(part, at: UInt64(phentsizeAt + 2), "e_phnum is 0: no program headers, nothing the loader could map")
        }
        let tableBytes = UInt64(phnum * phentsize)
        guard tableBytes <= limits.maxProgramHeaderBytes else {
            throw ELFError(
                part, at: UInt64(phentsizeAt + 2),
                "\(phnum) program headers (\(tableBytes) bytes) exceed the kernel's \(limits.maxProgramHeaderBytes)-byte limit")
        }
        try reader.checkRange("program header table (e_phoff)", at: phoff, count: tableBytes)
        return ELFFileHeader(layout: layout, type: type, machine: machine, programHeaderOffset: phoff, programHeaderCount: phnum)
    }
}
