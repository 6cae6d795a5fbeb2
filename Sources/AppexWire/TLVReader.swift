/// One TLV field of a frame: its tag, where it starts, where its value lies, and the path of the
/// structure it belongs to (for errors).
struct Field {
    let frame: [UInt8]
    let tag: UInt16
    /// Offset of the field's 6-byte TLV header in the frame.
    let offset: Int
    let valueStart: Int
    let valueEnd: Int
    let parent: String

    var length: Int { valueEnd - valueStart }
    var isOptionalExtension: Bool { tag & Tag.optionalBit != 0 }

    func error(_ kind: WireError.Kind, _ name: String, _ detail: String) -> WireError {
        WireError(kind, field: parent + "." + name, offset: offset, detail)
    }

    private func fixed(_ size: Int, _ name: String) throws(WireError) {
        if length != size {
            throw error(.badFieldLength, name, "value is \(length) bytes, this field is \(size)")
        }
    }

    func u8(_ name: String) throws(WireError) -> UInt8 {
        try fixed(1, name)
        return frame[valueStart]
    }
    func u32(_ name: String) throws(WireError) -> UInt32 {
        try fixed(4, name)
        return LittleEndian.u32(frame, valueStart)
    }
    func i32(_ name: String) throws(WireError) -> Int32 { Int32(bitPattern: try u32(name)) }
    func u64(_ name: String) throws(WireError) -> UInt64 {
        try fixed(8, name)
        return LittleEndian.u64(frame, valueStart)
    }
    func i64(_ name: String) throws(WireError) -> Int64 { Int64(bitPattern: try u64(name)) }
    func f64(_ name: String) throws(WireError) -> Double { Double(bitPattern: try u64(name)) }

    func bool(_ name: String) throws(WireError) -> Bool {
        switch try u8(name) {
        case 0: return false
        case 1: return true
        case let v: throw error(.invalidValue, name, "a bool is 0 or 1, got \(v)")
        }
    }

    func data(_ name: String) -> [UInt8] { Array(frame[valueStart..<valueEnd]) }

    func string(_ name: String) throws(WireError) -> String {
        let slice = frame[valueStart..<valueEnd]
        if let nul = slice.firstIndex(of: 0) {
            throw error(.nulInString, name, "NUL byte at offset \(nul)")
        }
        guard let s = String(validating: slice, as: UTF8.self) else {
            throw error(.invalidUTF8, name, "the value is not valid UTF-8")
        }
        return s
    }

    /// A reader over this field's value, which is itself a sequence of fields.
    func nested(_ name: String) -> FieldReader {
        FieldReader(frame: frame, start: valueStart, end: valueEnd, path: parent + "." + name, offset: offset)
    }
}

/// Walks the fields of a payload or of a nested structure, checking each TLV header against the
/// bytes that remain. Also the helpers every structure's decoder uses: once, required, repeated,
/// unknown.
struct FieldReader {
    let frame: [UInt8]
    private var cursor: Int
    let end: Int
    let path: String
    /// Where the structure starts (for "missing field" errors).
    let offset: Int

    init(frame: [UInt8], start: Int, end: Int, path: String, offset: Int) {
        self.frame = frame
        self.cursor = start
        self.end = end
        self.path = path
        self.offset = offset
    }

    mutating func next() throws(WireError) -> Field? {
        if cursor == end { return nil }
        let remaining = end - cursor
        guard remaining >= 6 else {
            throw WireError(
                .truncated, field: path, offset: cursor,
                "a field header is 6 bytes, \(remaining) remain")
        }
        let tag = LittleEndian.u16(frame, cursor)
        let length = Int(LittleEndian.u32(frame, cursor + 2))
        guard length <= remaining - 6 else {
            throw WireError(
                .truncated, field: path + ".tag\(tag)", offset: cursor,
                "field says \(length) bytes, \(remaining - 6) remain")
        }
        let field = Field(
            frame: frame, tag: tag, offset: cursor, valueStart: cursor + 6,
            valueEnd: cursor + 6 + length, parent: path)
        cursor += 6 + length
        return field
    }

    /// Sets a field that may appear at most once.
    func once<T>(
        _ slot: inout T?, _ f: Field, _ name: String,
        _ read: (Field) throws(WireError) -> T
    ) throws(WireError) {
        if slot != nil { throw f.error(.duplicateField, name, "appears more than once") }
        slot = try read(f)
    }

    func required<T>(_ slot: T?, _ name: String) throws(WireError) -> T {
        guard let slot else {
            throw WireError(.missingField, field: path + "." + name, offset: offset, "required field is absent")
        }
        return slot
    }

    /// Appends one element of a repeated field, refusing the one past the limit before reading it.
    func append<T>(
        _ list: inout [T], limit: Int, _ f: Field, _ name: String,
        _ read: (Field, String) throws(WireError) -> T
    ) throws(WireError) {
        if list.count >= limit {
            throw f.error(.tooManyElements, name, "more than \(limit) elements")
        }
        try list.append(read(f, "\(name)[\(list.count)]"))
    }

    /// A tag this version does not define: skipped when marked optional, refused otherwise.
    func unknown(_ f: Field) throws(WireError) {
        if f.isOptionalExtension { return }
        throw WireError(
            .unknownField, field: path, offset: f.offset,
            "tag \(f.tag) is not defined here (tags below 0x8000 must be understood)")
    }
}
