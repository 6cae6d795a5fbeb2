/// The fixed 16-byte header in front of every payload, little-endian:
///
///     0  magic        4 bytes "APXW"
///     4  format       u16 (WireProtocol.frameFormat)
///     6  type         u16 (MessageType)
///     8  flags        u16, must be 0
///     10 fd count     u16, descriptors sent with this frame (SCM_RIGHTS)
///     12 payload len  u32, bytes after the header
public struct FrameHeader: Equatable, Sendable {
    public var type: MessageType
    public var descriptorCount: Int
    public var payloadLength: Int

    public init(type: MessageType, descriptorCount: Int, payloadLength: Int) {
        self.type = type
        self.descriptorCount = descriptorCount
        self.payloadLength = payloadLength
    }

    /// Writes the header over the first 16 bytes of `frame` (the room the encoder left).
    func write(over frame: inout [UInt8]) {
        precondition(frame.count >= WireProtocol.headerSize, "no room for the frame header")
        frame.withUnsafeMutableBytes { out in
            for (i, byte) in WireProtocol.magic.enumerated() { out[i] = byte }
            out.storeBytes(of: WireProtocol.frameFormat.littleEndian, toByteOffset: 4, as: UInt16.self)
            out.storeBytes(of: type.rawValue.littleEndian, toByteOffset: 6, as: UInt16.self)
            out.storeBytes(of: UInt16(0), toByteOffset: 8, as: UInt16.self)
            out.storeBytes(of: UInt16(descriptorCount).littleEndian, toByteOffset: 10, as: UInt16.self)
            out.storeBytes(of: UInt32(payloadLength).littleEndian, toByteOffset: 12, as: UInt32.self)
        }
    }

    /// Reads and checks a header from the first 16 bytes of `bytes`. The payload length is
    /// checked against the bound, not against `bytes.count`: a caller that has only the header
    /// (a stream reader, a peek) can still learn how much follows.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> FrameHeader {
        guard bytes.count >= WireProtocol.headerSize else {
            throw WireError(
                .truncated, field: "header", offset: 0,
                "a frame header is \(WireProtocol.headerSize) bytes, got \(bytes.count)")
        }
        guard Array(bytes[0..<4]) == WireProtocol.magic else {
            throw WireError(
                .badMagic, field: "header.magic", offset: 0,
                "expected 41 50 58 57 (\"APXW\"), got \(hex(bytes[0..<4]))")
        }
        let format = LittleEndian.u16(bytes, 4)
        guard format == WireProtocol.frameFormat else {
            throw WireError(
                .unsupportedFormat, field: "header.format", offset: 4,
                "frame format \(format), this side reads \(WireProtocol.frameFormat)")
        }
        let rawType = LittleEndian.u16(bytes, 6)
        guard let type = MessageType(rawValue: rawType) else {
            throw WireError(
                .unknownMessageType, field: "header.type", offset: 6,
                "message type 0x\(String(rawType, radix: 16)) is not defined")
        }
        let flags = LittleEndian.u16(bytes, 8)
        guard flags == 0 else {
            throw WireError(
                .reservedFlags, field: "header.flags", offset: 8,
                "flags are reserved and must be 0, got 0x\(String(flags, radix: 16))")
        }
        let fds = Int(LittleEndian.u16(bytes, 10))
        guard fds <= WireLimits.descriptorsPerFrame else {
            throw WireError(
                .tooManyDescriptors, field: "header.fdCount", offset: 10,
                "\(fds) descriptors, at most \(WireLimits.descriptorsPerFrame) per frame")
        }
        let length = Int(LittleEndian.u32(bytes, 12))
        guard length <= WireProtocol.maxPayloadSize else {
            throw WireError(
                .frameTooLarge, field: "header.payloadLength", offset: 12,
                "payload of \(length) bytes, at most \(WireProtocol.maxPayloadSize)")
        }
        return FrameHeader(type: type, descriptorCount: fds, payloadLength: length)
    }
}

/// Little-endian integers in and out of byte arrays. Readers assume the caller checked bounds.
enum LittleEndian {
    static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        var v = value.littleEndian
        withUnsafeBytes(of: &v) { out.append(contentsOf: $0) }
    }

    static func read<T: FixedWidthInteger>(_ bytes: [UInt8], _ at: Int, as: T.Type) -> T {
        var v: T = 0
        for i in 0..<MemoryLayout<T>.size {
            v |= T(truncatingIfNeeded: bytes[at + i]) << (8 * i)
        }
        return v
    }

    static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { read(bytes, at, as: UInt16.self) }
    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 { read(bytes, at, as: UInt32.self) }
    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 { read(bytes, at, as: UInt64.self) }
}

func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    bytes.map { b in
        let s = String(b, radix: 16)
        return s.count == 1 ? "0" + s : s
    }.joined(separator: " ")
}
