/// One segment from the program header table: where it is in the file and in memory.
struct ELFSegment: Sendable, Equatable {
    var index: Int
    var offset: UInt64
    var vaddr: UInt64
    var fileSize: UInt64
    var memorySize: UInt64
}

/// The program headers the loader acts on: PT_LOAD (what is mapped where), PT_DYNAMIC (the
/// dynamic section) and PT_INTERP (the dynamic loader's path).
struct ELFProgramHeaders {
    var loads: [ELFSegment] = []
    var dynamic: ELFSegment?
    var interpreter: ELFSegment?

    static let ptLoad: UInt32 = 1, ptDynamic: UInt32 = 2, ptInterp: UInt32 = 3

    static func read(_ reader: ELFReader, header: ELFFileHeader) throws(ELFError) -> ELFProgramHeaders {
        let layout = reader.layout
        let size = UInt64(layout.programHeaderSize)
        let table = try reader.read(
            "program header table", at: header.programHeaderOffset,
            count: size * UInt64(header.programHeaderCount))
        var out = ELFProgramHeaders()
        for i in 0..<header.programHeaderCount {
            let at = i * layout.programHeaderSize
            let part = "program header \(i)"
            let where_ = header.programHeaderOffset + UInt64(at)
            let type = try table.u32(at)
            let w = layout.word
            // ELF64 puts p_flags second; ELF32 puts it after p_memsz.
            let first = layout.is64Bit ? at + 8 : at + 4
            let segment = ELFSegment(
                index: i, offset: try table.word(first), vaddr: try table.word(first + w),
                fileSize: try table.word(first + 3 * w), memorySize: try table.word(first + 4 * w))
            switch type {
            case ptLoad:
                guard segment.fileSize <= segment.memorySize else {
                    throw ELFError(part, at: where_, "PT_LOAD p_filesz \(segment.fileSize) exceeds p_memsz \(segment.memorySize)")
                }
                _ = try checkedSum(segment.vaddr, segment.memorySize, part + " (PT_LOAD p_vaddr + p_memsz)", at: where_)
                try reader.checkRange(part + " (PT_LOAD contents)", at: segment.offset, count: segment.fileSize)
                out.loads.append(segment)
            case ptDynamic:
                if let other = out.dynamic {
                    throw ELFError(
                        part, at: where_, "a second PT_DYNAMIC (the first is program header \(other.index)); which one the loader uses is ambiguous")
                }
                try reader.checkRange(part + " (PT_DYNAMIC contents)", at: segment.offset, count: segment.fileSize)
                out.dynamic = segment
            case ptInterp:
                if let other = out.interpreter {
                    throw ELFError(part, at: where_, "a second PT_INTERP (the first is program header \(other.index))")
                }
                try reader.checkRange(part + " (PT_INTERP contents)", at: segment.offset, count: segment.fileSize)
                out.interpreter = segment
            default:
                break
            }
        }
        // Overlapping PT_LOADs would make an address mean two different file bytes.
        let sorted = out.loads.sorted { $0.vaddr < $1.vaddr }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.vaddr + a.memorySize > b.vaddr {
            throw ELFError(
                "program header \(b.index)", at: header.programHeaderOffset + UInt64(b.index * layout.programHeaderSize),
                "PT_LOAD at \(hex(b.vaddr)) overlaps the PT_LOAD of program header \(a.index) (\(hex(a.vaddr))–\(hex(a.vaddr + a.memorySize)))")
        }
        return out
    }
}
