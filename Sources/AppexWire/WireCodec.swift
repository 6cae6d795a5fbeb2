/// Frames in and out: the public face of the codec. Pure: no I/O, no Foundation.
public enum WireCodec {
    /// The frame for `message`: header and payload. Its descriptor count is the number of
    /// attachments that refer to descriptors (indices 0..<n, each once); send exactly those n
    /// descriptors, in index order, with the frame.
    public static func encode(_ message: Message) throws(WireError) -> [UInt8] {
        // The payload goes after room for the header, which is written over that room last:
        // one array, never copied.
        var encoder = MessageEncoder(w: TLVWriter(reserving: WireProtocol.headerSize))
        try encoder.encode(message)
        let payloadCount = encoder.w.payloadCount
        guard payloadCount <= WireProtocol.maxPayloadSize else {
            throw WireError(
                .frameTooLarge, field: message.type.name,
                "payload of \(payloadCount) bytes, at most \(WireProtocol.maxPayloadSize); send bulk data as descriptors")
        }
        let header = FrameHeader(
            type: message.type, descriptorCount: try encoder.descriptorCount(message.type),
            payloadLength: payloadCount)
        var frame: [UInt8] = []
        swap(&frame, &encoder.w.bytes)
        header.write(over: &frame)
        return frame
    }

    /// The message in one whole frame. Every fault is a WireError naming field and offset.
    /// Descriptors referenced by attachments are indices into the frame's descriptors; the
    /// caller (the transport) checks that it received as many as the header announces.
    public static func decode(_ frame: [UInt8]) throws(WireError) -> Message {
        if frame.count > WireProtocol.maxFrameSize {
            throw WireError(
                .frameTooLarge, field: "frame", offset: 0,
                "\(frame.count) bytes, at most \(WireProtocol.maxFrameSize)")
        }
        let header = try FrameHeader.decode(frame)
        let expected = WireProtocol.headerSize + header.payloadLength
        if frame.count < expected {
            throw WireError(
                .truncated, field: "payload", offset: frame.count,
                "header announces \(header.payloadLength) payload bytes, \(frame.count - WireProtocol.headerSize) present")
        }
        if frame.count > expected {
            throw WireError(
                .lengthMismatch, field: "payload", offset: expected,
                "\(frame.count - expected) bytes after the \(header.payloadLength) the header announces")
        }
        var decoder = MessageDecoder(frame: frame, header: header)
        return try decoder.decode()
    }
}
