/// Checked reads from a byte source: each range is tested against the file's size, with
/// overflow-safe arithmetic, before a byte is read.
struct ELFReader {
    let source: any ELFByteSource
    let layout: ELFLayout
    let limits: ELFLimits

    /// `count` bytes at `offset`, for the structure `part`.
    func read(_ part: String, at offset: UInt64, count: UInt64) throws(ELFError) -> ELFBytes {
        try checkRange(part, at: offset, count: count)
        guard let n = Int(exactly: count) else { throw ELFError(part, at: offset, "\(count) bytes is too large") }
        return ELFBytes(bytes: try source.bytes(at: offset, count: n), base: offset, layout: layout, part: part)
    }

    /// Throws unless `[offset, offset + count)` lies inside the file.
    func checkRange(_ part: String, at offset: UInt64, count: UInt64) throws(ELFError) {
        let size = source.size
        guard offset <= size, count <= size - offset else {
            throw ELFError(part, at: offset, "\(count) bytes from here run past the end of the file (\(size) bytes)")
        }
    }
}

/// `a * b` and `a + b` that report overflow as a malformed file instead of trapping.
func checkedProduct(_ a: UInt64, _ b: UInt64, _ part: String, at offset: UInt64?) throws(ELFError) -> UInt64 {
    let (v, o) = a.multipliedReportingOverflow(by: b)
    if o { throw ELFError(part, at: offset, "size \(a) × \(b) overflows") }
    return v
}

func checkedSum(_ a: UInt64, _ b: UInt64, _ part: String, at offset: UInt64?) throws(ELFError) -> UInt64 {
    let (v, o) = a.addingReportingOverflow(b)
    if o { throw ELFError(part, at: offset, "\(hex(a)) + \(hex(b)) overflows") }
    return v
}
