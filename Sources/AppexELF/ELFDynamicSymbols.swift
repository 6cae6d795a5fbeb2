/// A symbol the object takes from another: undefined in its dynamic symbol table.
public struct ELFImport: Sendable, Hashable {
    /// The name's bytes as stored (not necessarily UTF-8).
    public var nameBytes: [UInt8]
    /// A weak reference: the program runs when nothing defines it.
    public var isWeak: Bool
    public var name: String { String(decoding: nameBytes, as: UTF8.self) }
}

/// Reads the dynamic symbol table (DT_SYMTAB) and keeps its imports.
enum ELFDynamicSymbols {
    static let undefinedSection: UInt16 = 0  // SHN_UNDEF
    static let bindGlobal: UInt8 = 1, bindWeak: UInt8 = 2, bindUnique: UInt8 = 10
    static let typeObject: UInt8 = 1, typeSection: UInt8 = 3, typeFile: UInt8 = 4, typeTLS: UInt8 = 6

    static func imports(
        _ reader: ELFReader, dynamic: ELFDynamicSection, strings: ELFStringTable,
        map: ELFAddressMap
    ) throws(ELFError) -> [ELFImport] {
        let layout = reader.layout
        guard let address = dynamic.value(ELFDynamicSection.dtSymTab) else { return [] }
        if let ent = dynamic.value(ELFDynamicSection.dtSymEnt), ent != UInt64(layout.symbolSize) {
            throw ELFError("DT_SYMENT", "symbol entry size \(ent) is not \(layout.symbolSize)")
        }
        let count = try ELFSymbolCount.count(reader, dynamic: dynamic, map: map)
        guard count > 1 else { return [] }  // symbol 0 is always the null symbol
        let part = "dynamic symbol table (DT_SYMTAB \(hex(address)))"
        let size = UInt64(count) * UInt64(layout.symbolSize)
        let offset = try map.fileOffset(of: address, count: size, part: part)
        let table = try reader.read(part, at: offset, count: size)
        var out: [ELFImport] = []
        for i in 1..<count {
            let at = i * layout.symbolSize
            let nameOffset = UInt64(try table.u32(at))
            // Elf64_Sym: name, info, other, shndx, value, size. Elf32_Sym: name, value, size, info, other, shndx.
            let info = try table.u8(layout.is64Bit ? at + 4 : at + 12)
            let section = try table.u16(layout.is64Bit ? at + 6 : at + 14)
            let binding = info >> 4, type = info & 0xf
            guard section == undefinedSection, nameOffset != 0,
                binding == bindGlobal || binding == bindWeak || binding == bindUnique,
                type != typeObject, type != typeSection, type != typeFile, type != typeTLS
            else { continue }
            let name = try strings.name(at: nameOffset, part: "symbol \(i) (file offset \(hex(offset + UInt64(at))))")
            guard !name.isEmpty else { continue }
            out.append(ELFImport(nameBytes: name, isWeak: binding == bindWeak))
        }
        return out
    }
}
