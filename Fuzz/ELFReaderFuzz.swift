// libFuzzer harness for the ELF reader (AppexELF). Built with the AppexELF sources and
// FuzzEntry.swift into one module by `make fuzz-elf` (Docs/extension-safe-api.md, "The ELF
// reader"). Any input must read or fail with an ELFError, with every limit, and RUNPATH
// reading must return; a crash, a trap or a sanitizer report is a bug.

/// A small shared object the reader follows to the end: two program headers (PT_LOAD over
/// the whole file, PT_DYNAMIC), a dynamic section with DT_NEEDED, DT_RUNPATH, DT_RPATH,
/// DT_STRTAB and DT_STRSZ, and its string table.
func sharedObject(bigEndian: Bool) -> [UInt8] {
    let strings = Array("\0libc.so.6\0$ORIGIN/lib:/usr/lib\0/opt/x\0".utf8)
    let dynamicAt = 64 + 2 * 56, dynamicEntries = 6
    let stringsAt = dynamicAt + dynamicEntries * 16
    let total = stringsAt + strings.count
    var b = [UInt8](repeating: 0, count: total)
    func put(_ value: UInt64, at offset: Int, size: Int) {
        for i in 0..<size {
            let shift = bigEndian ? 8 * (size - 1 - i) : 8 * i
            b[offset + i] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
        }
    }
    b[0...6] = [0x7f, 0x45, 0x4c, 0x46, 2, bigEndian ? 2 : 1, 1]
    put(3, at: 16, size: 2)  // ET_DYN
    put(62, at: 18, size: 2)  // EM_X86_64
    put(1, at: 20, size: 4)  // EV_CURRENT
    put(64, at: 32, size: 8)  // e_phoff
    put(64, at: 52, size: 2)  // e_ehsize
    put(56, at: 54, size: 2)  // e_phentsize
    put(2, at: 56, size: 2)  // e_phnum
    let segments: [(type: UInt64, offset: Int, size: Int)] = [(1, 0, total), (2, dynamicAt, dynamicEntries * 16)]
    for (i, s) in segments.enumerated() {
        let ph = 64 + i * 56
        put(s.type, at: ph, size: 4)
        put(4, at: ph + 4, size: 4)  // PF_R
        put(UInt64(s.offset), at: ph + 8, size: 8)
        put(UInt64(s.offset), at: ph + 16, size: 8)
        put(UInt64(s.size), at: ph + 32, size: 8)
        put(UInt64(s.size), at: ph + 40, size: 8)
    }
    let dynamic: [(UInt64, UInt64)] = [(1, 1), (29, 11), (15, 32), (5, UInt64(stringsAt)), (10, UInt64(strings.count)), (0, 0)]
    for (i, (tag, value)) in dynamic.enumerated() {
        put(tag, at: dynamicAt + i * 16, size: 8)
        put(value, at: dynamicAt + i * 16 + 8, size: 8)
    }
    b[stringsAt...] = strings[...]
    return b
}

func fuzzSeeds() -> [[UInt8]] {
    [sharedObject(bigEndian: false), sharedObject(bigEndian: true)]
}

func fuzzInput(_ bytes: [UInt8]) {
    var small = ELFLimits()
    small.maxDynamicEntries = 8
    small.maxNeeded = 2
    small.maxStringTableBytes = 64
    small.maxSymbols = 16
    small.maxHashBuckets = 16
    small.maxRelocations = 16
    small.maxNameLength = 8
    for limits in [ELFLimits(), small] {
        do throws(ELFError) { _ = try ELFDynamicInfo.read(MemorySource(bytes), limits: limits) } catch { _ = error.description }
    }
    _ = ELFRunpath.parse(bytes)
}
