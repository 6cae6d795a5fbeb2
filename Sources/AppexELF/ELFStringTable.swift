/// The dynamic string table (DT_STRTAB, DT_STRSZ), read once; names are looked up in it
/// with every offset checked and every name's length bounded.
struct ELFStringTable {
    let bytes: [UInt8]
    let fileOffset: UInt64
    let maxNameLength: Int

    static let empty = ELFStringTable(bytes: [], fileOffset: 0, maxNameLength: 0)

    static func read(_ reader: ELFReader, dynamic: ELFDynamicSection, map: ELFAddressMap) throws(ELFError) -> ELFStringTable {
        guard let table = try locate(reader, dynamic: dynamic, map: map) else { return .empty }
        let bytes = try reader.read(table.part, at: table.offset, count: table.size)
        return ELFStringTable(bytes: bytes.bytes, fileOffset: table.offset, maxNameLength: reader.limits.maxNameLength)
    }

    /// Only the part of the table that can hold the name at `offset` (at most the longest
    /// name allowed, and its NUL): for a reader that needs one or two names of a large table.
    static func read(
        _ reader: ELFReader, dynamic: ELFDynamicSection, map: ELFAddressMap,
        around offset: UInt64
    ) throws(ELFError) -> ELFStringTable {
        guard let table = try locate(reader, dynamic: dynamic, map: map) else { return .empty }
        guard offset < table.size else {
            throw ELFError(table.part, "name offset \(offset) lies outside the \(table.size)-byte string table")
        }
        let count = min(table.size - offset, UInt64(reader.limits.maxNameLength) + 1)
        let bytes = try reader.read(table.part, at: table.offset + offset, count: count)
        // Indexed from `offset`: the name is at 0 in these bytes.
        return ELFStringTable(bytes: bytes.bytes, fileOffset: table.offset + offset, maxNameLength: reader.limits.maxNameLength)
    }

    /// Where DT_STRTAB lies in the file and how long it is; nil when there is none or it is empty.
    private static func locate(
        _ reader: ELFReader, dynamic: ELFDynamicSection,
        map: ELFAddressMap
    ) throws(ELFError) -> (part: String, offset: UInt64, size: UInt64)? {
        guard let address = dynamic.value(ELFDynamicSection.dtStrTab) else { return nil }
        let part = "string table (DT_STRTAB \(hex(address)))"
        guard let size = dynamic.value(ELFDynamicSection.dtStrSize) else {
            throw ELFError(part, "DT_STRTAB without DT_STRSZ: the table's size is unknown")
        }
        guard size <= reader.limits.maxStringTableBytes else {
            throw ELFError(part, "DT_STRSZ \(size) exceeds the limit of \(reader.limits.maxStringTableBytes) bytes")
        }
        guard size > 0 else { return nil }
        let offset = try map.fileOffset(of: address, count: size, part: part)
        return (part, offset, size)
    }

    /// The NUL-terminated name at `offset`, for `part`; its bytes are returned as they are
    /// (not necessarily UTF-8: callers escape them before printing).
    func name(at offset: UInt64, part: String) throws(ELFError) -> [UInt8] {
        guard offset < UInt64(bytes.count) else {
            throw ELFError(part, "name offset \(offset) lies outside the \(bytes.count)-byte string table")
        }
        let start = Int(offset)
        let end = min(bytes.count, start + maxNameLength + 1)
        guard let nul = bytes[start..<end].firstIndex(of: 0) else {
            let message =
                end == bytes.count
                ? "the name at string-table offset \(offset) is not NUL-terminated before the table ends"
                : "the name at string-table offset \(offset) is longer than \(maxNameLength) bytes"
            throw ELFError(part, at: fileOffset + offset, message)
        }
        return Array(bytes[start..<nul])
    }
}
