/// Turns the virtual addresses the dynamic section uses into file offsets, through the
/// PT_LOAD segments, as the loader's mappings would. An address range must lie wholly in the
/// file-backed part of one segment: anything else is refused, never guessed.
struct ELFAddressMap {
    let loads: [ELFSegment]

    /// The file offset of `[address, address + count)`, read for `part`.
    func fileOffset(of address: UInt64, count: UInt64, part: String) throws(ELFError) -> UInt64 {
        for s in loads where address >= s.vaddr && address - s.vaddr < s.memorySize {
            let into = address - s.vaddr
            guard into <= s.fileSize, count <= s.fileSize - into else {
                throw ELFError(
                    part,
                    "address range \(hex(address))+\(count) runs past the file contents of the PT_LOAD of program header \(s.index) (into zero-filled memory or beyond)"
                )
            }
            return s.offset + into
        }
        throw ELFError(part, "address \(hex(address)) lies in no PT_LOAD segment")
    }
}
