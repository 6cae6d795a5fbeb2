/// Appends TLV fields (u16 tag, u32 length, value; little-endian) to a byte array.
struct TLVWriter {
    var bytes: [UInt8]
    /// Where the fields start: what comes before is room left for a frame header.
    let origin: Int

    /// `room` zero bytes first (a frame header is written over them once the payload is
    /// done, so the frame is built in this one array).
    init(reserving room: Int = 0) {
        bytes = [UInt8](repeating: 0, count: room)
        bytes.reserveCapacity(room + 240)
        origin = room
    }

    /// The fields' bytes so far.
    var payloadCount: Int { bytes.count - origin }

    private mutating func header(_ tag: UInt16, _ length: Int) {
        LittleEndian.append(tag, to: &bytes)
        LittleEndian.append(UInt32(truncatingIfNeeded: length), to: &bytes)
    }

    mutating func u8(_ tag: UInt16, _ v: UInt8) {
        header(tag, 1)
        bytes.append(v)
    }
    mutating func bool(_ tag: UInt16, _ v: Bool) { u8(tag, v ? 1 : 0) }
    mutating func u32(_ tag: UInt16, _ v: UInt32) {
        header(tag, 4)
        LittleEndian.append(v, to: &bytes)
    }
    mutating func i32(_ tag: UInt16, _ v: Int32) {
        header(tag, 4)
        LittleEndian.append(v, to: &bytes)
    }
    mutating func u64(_ tag: UInt16, _ v: UInt64) {
        header(tag, 8)
        LittleEndian.append(v, to: &bytes)
    }
    mutating func i64(_ tag: UInt16, _ v: Int64) {
        header(tag, 8)
        LittleEndian.append(v, to: &bytes)
    }
    mutating func f64(_ tag: UInt16, _ v: Double) { u64(tag, v.bitPattern) }

    mutating func data(_ tag: UInt16, _ v: [UInt8]) throws(WireError) {
        try fits(v.count)
        header(tag, v.count)
        bytes.append(contentsOf: v)
    }

    /// Strings are UTF-8 without NUL: a C receiver may treat them as C strings.
    mutating func string(_ tag: UInt16, _ v: String, field: @autoclosure () -> String) throws(WireError) {
        let utf8 = v.utf8
        if utf8.contains(0) { throw WireError(.nulInString, field: field(), "strings must not contain NUL") }
        try fits(utf8.count)
        header(tag, utf8.count)
        bytes.append(contentsOf: utf8)
    }

    mutating func nested(_ tag: UInt16, _ body: (inout TLVWriter) throws(WireError) -> Void) throws(WireError) {
        let start = bytes.count
        header(tag, 0)
        try body(&self)
        let length = bytes.count - start - 6
        try fits(length)
        let le = UInt32(length).littleEndian
        for i in 0..<4 { bytes[start + 2 + i] = UInt8(truncatingIfNeeded: le >> (8 * UInt32(i))) }
    }

    /// Stops early on a value that could never fit in a frame (and so never fit a u32).
    private func fits(_ length: Int) throws(WireError) {
        if length > WireProtocol.maxPayloadSize || payloadCount > WireProtocol.maxPayloadSize {
            throw WireError(.frameTooLarge, "the payload exceeds \(WireProtocol.maxPayloadSize) bytes")
        }
    }
}
