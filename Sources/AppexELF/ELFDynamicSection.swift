/// The entries of the dynamic section this reader needs, as raw values (addresses are
/// unrelocated virtual addresses, names are string-table offsets).
struct ELFDynamicSection {
    var needed: [UInt64] = []
    var singles: [Int64: (value: UInt64, entry: Int)] = [:]

    static let dtNull: Int64 = 0, dtNeeded: Int64 = 1, dtPltRelSize: Int64 = 2, dtHash: Int64 = 4
    static let dtStrTab: Int64 = 5, dtSymTab: Int64 = 6, dtRela: Int64 = 7, dtRelaSize: Int64 = 8
    static let dtRelaEnt: Int64 = 9, dtStrSize: Int64 = 10, dtSymEnt: Int64 = 11, dtSoname: Int64 = 14
    static let dtRpath: Int64 = 15, dtRel: Int64 = 17, dtRelSize: Int64 = 18, dtRelEnt: Int64 = 19
    static let dtPltRel: Int64 = 20, dtJmpRel: Int64 = 23, dtRunpath: Int64 = 29
    static let dtGnuHash: Int64 = 0x6fff_fef5

    /// Tags that may appear once; a second copy would leave it to the loader which one counts.
    static let singleTags: [Int64: String] = [
        dtPltRelSize: "DT_PLTRELSZ", dtHash: "DT_HASH", dtStrTab: "DT_STRTAB", dtSymTab: "DT_SYMTAB",
        dtRela: "DT_RELA", dtRelaSize: "DT_RELASZ", dtRelaEnt: "DT_RELAENT", dtStrSize: "DT_STRSZ",
        dtSymEnt: "DT_SYMENT", dtSoname: "DT_SONAME", dtRpath: "DT_RPATH", dtRel: "DT_REL",
        dtRelSize: "DT_RELSZ", dtRelEnt: "DT_RELENT", dtPltRel: "DT_PLTREL", dtJmpRel: "DT_JMPREL",
        dtRunpath: "DT_RUNPATH", dtGnuHash: "DT_GNU_HASH",
    ]

    func value(_ tag: Int64) -> UInt64? { singles[tag]?.value }

    static func read(_ reader: ELFReader, segment: ELFSegment, map: ELFAddressMap) throws(ELFError) -> ELFDynamicSection {
        let part = "dynamic section (program header \(segment.index))"
        // The loader reads the dynamic section from memory at p_vaddr; readelf reads it at
        // p_offset. A file where the two differ shows each a different section: refused.
        if segment.fileSize > 0 {
            let mapped = try map.fileOffset(of: segment.vaddr, count: segment.fileSize, part: part)
            guard mapped == segment.offset else {
                throw ELFError(
                    part, at: segment.offset,
                    "p_offset \(hex(segment.offset)) disagrees with p_vaddr \(hex(segment.vaddr)), which the PT_LOAD segments place at file offset \(hex(mapped))"
                )
            }
        }
        let entrySize = reader.layout.dynamicEntrySize
        let count = Int(segment.fileSize / UInt64(entrySize))
        guard count <= reader.limits.maxDynamicEntries else {
            throw ELFError(part, at: segment.offset, "\(count) entries exceed the limit of \(reader.limits.maxDynamicEntries)")
        }
        let bytes = try reader.read(part, at: segment.offset, count: UInt64(count * entrySize))
        var out = ELFDynamicSection()
        var terminated = false
        for i in 0..<count {
            let at = i * entrySize
            let tag = try bytes.signedWord(at)
            let value = try bytes.word(at + reader.layout.word)
            if tag == dtNull {
                terminated = true
                break
            }
            if tag == dtNeeded {
                guard out.needed.count < reader.limits.maxNeeded else {
                    throw ELFError(
                        "dynamic entry \(i) (DT_NEEDED)", at: segment.offset + UInt64(at), "more than \(reader.limits.maxNeeded) needed libraries")
                }
                out.needed.append(value)
            } else if let name = singleTags[tag] {
                if let first = out.singles[tag] {
                    throw ELFError(
                        "dynamic entry \(i) (\(name))", at: segment.offset + UInt64(at), "\(name) appears again (first in entry \(first.entry))")
                }
                out.singles[tag] = (value, i)
            }
        }
        guard terminated || count == 0 else {
            throw ELFError(part, at: segment.offset, "no DT_NULL entry ends the \(count) entries")
        }
        return out
    }
}
