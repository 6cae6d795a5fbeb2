/// How many entries the dynamic symbol table has. ELF does not store the number in the
/// dynamic section: the loader knows it from the hash tables, and the relocations name the
/// symbols they bind. The count is the largest of all three, so a file whose hash table
/// hides symbols that its relocations still use is read in full.
enum ELFSymbolCount {
    typealias D = ELFDynamicSection

    static func count(_ reader: ELFReader, dynamic: ELFDynamicSection, map: ELFAddressMap) throws(ELFError) -> Int {
        var count = 0
        if let address = dynamic.value(D.dtHash) { count = max(count, try sysvHash(reader, address, map)) }
        if let address = dynamic.value(D.dtGnuHash) { count = max(count, try gnuHash(reader, address, map)) }
        count = max(count, try relocations(reader, dynamic: dynamic, map: map))
        return count
    }

    /// DT_HASH: `nbucket`, `nchain`; nchain is the number of symbols.
    static func sysvHash(_ reader: ELFReader, _ address: UInt64, _ map: ELFAddressMap) throws(ELFError) -> Int {
        let part = "DT_HASH table at \(hex(address))"
        let offset = try map.fileOffset(of: address, count: 8, part: part)
        let head = try reader.read(part, at: offset, count: 8)
        let nchain = try head.u32(4)
        guard nchain <= reader.limits.maxSymbols else {
            throw ELFError(part, at: offset + 4, "nchain \(nchain) exceeds the limit of \(reader.limits.maxSymbols) symbols")
        }
        return Int(nchain)
    }

    /// DT_GNU_HASH: symbols below `symoffset` are not hashed (the imports among them); the
    /// rest are in chains that end with a value whose low bit is set. The last chain, from
    /// the largest bucket, ends at the last symbol. Walked in a loop bounded by the limit.
    static func gnuHash(_ reader: ELFReader, _ address: UInt64, _ map: ELFAddressMap) throws(ELFError) -> Int {
        let part = "DT_GNU_HASH table at \(hex(address))"
        let limits = reader.limits
        let headOffset = try map.fileOffset(of: address, count: 16, part: part)
        let head = try reader.read(part, at: headOffset, count: 16)
        let nbuckets = UInt64(try head.u32(0)), symoffset = UInt64(try head.u32(4)), bloomWords = UInt64(try head.u32(8))
        guard nbuckets <= limits.maxHashBuckets, bloomWords <= limits.maxHashBuckets else {
            throw ELFError(part, at: headOffset, "\(nbuckets) buckets and \(bloomWords) bloom words exceed the limit of \(limits.maxHashBuckets)")
        }
        guard symoffset <= limits.maxSymbols else {
            throw ELFError(part, at: headOffset + 4, "symoffset \(symoffset) exceeds the limit of \(limits.maxSymbols) symbols")
        }
        let bucketsAddress = try checkedSum(address, 16 + bloomWords * UInt64(reader.layout.word), part, at: headOffset)
        let bucketsOffset = try map.fileOffset(of: bucketsAddress, count: nbuckets * 4, part: part + " buckets")
        let buckets = try reader.read(part + " buckets", at: bucketsOffset, count: nbuckets * 4)
        var last: UInt64 = 0
        for i in 0..<Int(nbuckets) { last = max(last, UInt64(try buckets.u32(i * 4))) }
        if last == 0 { return Int(symoffset) }
        guard last >= symoffset else {
            throw ELFError(part + " buckets", at: bucketsOffset, "bucket value \(last) is below symoffset \(symoffset)")
        }
        let chainAddress = try checkedSum(bucketsAddress, nbuckets * 4, part, at: bucketsOffset)
        var index = last
        let chunk: UInt64 = 1024
        while true {
            // Read the chain a chunk at a time (as much of it as the segment holds).
            let first = index - symoffset
            let at = try checkedSum(chainAddress, first * 4, part + " chain", at: nil)
            var words = chunk
            var offset: UInt64 = 0
            while true {
                do throws(ELFError) {
                    offset = try map.fileOffset(of: at, count: words * 4, part: part + " chain")
                    break
                } catch {
                    if words == 1 { throw error }
                    words = max(1, words / 2)
                }
            }
            let values = try reader.read(part + " chain", at: offset, count: words * 4)
            for i in 0..<Int(words) {
                if try values.u32(i * 4) & 1 == 1 { return Int(index) + 1 }
                index += 1
                guard index < limits.maxSymbols else {
                    throw ELFError(
                        part + " chain", at: offset + UInt64(i * 4), "the last chain does not end before the limit of \(limits.maxSymbols) symbols")
                }
            }
        }
    }

    /// One more than the highest symbol index any relocation names.
    static func relocations(_ reader: ELFReader, dynamic: ELFDynamicSection, map: ELFAddressMap) throws(ELFError) -> Int {
        let layout = reader.layout
        var tables: [(name: String, address: UInt64, size: UInt64, entry: Int)] = []
        func table(_ name: String, _ tableTag: Int64, _ sizeTag: Int64, _ entTag: Int64?, rela: Bool) throws(ELFError) {
            guard let address = dynamic.value(tableTag) else { return }
            guard let size = dynamic.value(sizeTag) else { throw ELFError(name, "the table has no size entry") }
            let expected = rela ? layout.relaSize : layout.relSize
            if let entTag, let ent = dynamic.value(entTag), ent != UInt64(expected) {
                throw ELFError(name, "entry size \(ent) is not \(expected)")
            }
            tables.append((name, address, size, expected))
        }
        try table("DT_RELA", D.dtRela, D.dtRelaSize, D.dtRelaEnt, rela: true)
        try table("DT_REL", D.dtRel, D.dtRelSize, D.dtRelEnt, rela: false)
        if dynamic.value(D.dtJmpRel) != nil {
            switch dynamic.value(D.dtPltRel) {
            case UInt64(D.dtRela): try table("DT_JMPREL", D.dtJmpRel, D.dtPltRelSize, nil, rela: true)
            case UInt64(D.dtRel): try table("DT_JMPREL", D.dtJmpRel, D.dtPltRelSize, nil, rela: false)
            case let v: throw ELFError("DT_JMPREL", "DT_PLTREL is \(v.map(String.init) ?? "missing"), not DT_RELA (7) or DT_REL (17)")
            }
        }
        var highest: UInt64 = 0
        var total = 0
        for t in tables where t.size > 0 {
            let part = "\(t.name) relocations at \(hex(t.address))"
            guard t.size % UInt64(t.entry) == 0 else {
                throw ELFError(part, "size \(t.size) is not a multiple of the entry size \(t.entry)")
            }
            let entries = t.size / UInt64(t.entry)
            total += Int(min(entries, UInt64(Int.max / 2)))
            guard total <= reader.limits.maxRelocations else {
                throw ELFError(part, "more than \(reader.limits.maxRelocations) relocations")
            }
            let offset = try map.fileOffset(of: t.address, count: t.size, part: part)
            // In chunks: the relocations of a large program run to megabytes.
            let perChunk: UInt64 = 4096
            var done: UInt64 = 0
            while done < entries {
                let n = min(perChunk, entries - done)
                let bytes = try reader.read(part, at: offset + done * UInt64(t.entry), count: n * UInt64(t.entry))
                for i in 0..<Int(n) {
                    let symbol = layout.relocationSymbol(try bytes.word(i * t.entry + layout.word))
                    if symbol > highest { highest = symbol }
                }
                done += n
            }
        }
        guard highest < UInt64(reader.limits.maxSymbols) else {
            throw ELFError("relocations", "a relocation names symbol \(highest), beyond the limit of \(reader.limits.maxSymbols)")
        }
        return tables.isEmpty || highest == 0 ? 0 : Int(highest) + 1
    }
}
