import Testing

@testable import AppexWire

@Suite struct CodecRoundTripTests {
    @Test func samplesCoverEveryMessageType() {
        let covered = Set(Samples.all.map(\.type))
        #expect(covered == Set(MessageType.allCases))
    }

    @Test(arguments: Samples.all + Samples.minimal)
    func roundTrip(_ message: Message) throws {
        let frame = try WireCodec.encode(message)
        let header = try FrameHeader.decode(frame)
        #expect(header.type == message.type)
        #expect(header.payloadLength == frame.count - 16)
        #expect(try WireCodec.decode(frame) == message)
        // Canonical: the same message always encodes to the same bytes.
        #expect(try WireCodec.encode(WireCodec.decode(frame)) == frame)
    }

    @Test func descriptorCountFollowsAttachments() throws {
        let begin = try WireCodec.encode(Samples.all[4])
        #expect(try FrameHeader.decode(begin).descriptorCount == 2)
        let hello = try WireCodec.encode(Samples.all[0])
        #expect(try FrameHeader.decode(hello).descriptorCount == 0)
    }

    /// The frame shown in Docs/protocol.md: if this fails, the documentation is wrong.
    @Test func documentedHelloFrame() throws {
        let frame = try WireCodec.encode(.hello(Hello(protocolVersion: 1, bundleIdentifier: "com.example.c", pid: 1234)))
        let documented = """
            41 50 58 57 01 00 01 00 00 00 00 00 27 00 00 00
            01 00 04 00 00 00 01 00 00 00
            02 00 0d 00 00 00 63 6f 6d 2e 65 78 61 6d 70 6c 65 2e 63
            03 00 04 00 00 00 d2 04 00 00
            """
        let expected = documented.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { UInt8($0, radix: 16)! }
        #expect(frame == expected)
    }

    @Test func optionalUnknownFieldsAreSkipped() throws {
        let frame = FrameBuilder(.ping)
            .field(0x8001, [1, 2, 3])
            .field(1, FrameBuilder.le(UInt64(99)))
            .bytes
        #expect(try WireCodec.decode(frame) == .ping(sequence: 99))
    }

    @Test func fieldsMayComeInAnyOrder() throws {
        let frame = FrameBuilder(.hello)
            .field(3, FrameBuilder.le(Int32(-1)))
            .field(2, Array("x".utf8))
            .field(1, FrameBuilder.le(UInt32(1)))
            .bytes
        #expect(try WireCodec.decode(frame) == .hello(Hello(protocolVersion: 1, bundleIdentifier: "x", pid: -1)))
    }

    @Test func largestFrameFitsAndOneMoreByteDoesNot() throws {
        // A Ping's payload is 14 bytes; pad to the bound with an optional unknown field.
        let room = WireProtocol.maxPayloadSize - 14 - 6
        let full = FrameBuilder(.ping).field(1, FrameBuilder.le(UInt64(1))).field(0x9000, [UInt8](repeating: 7, count: room)).bytes
        #expect(full.count == WireProtocol.maxFrameSize)
        #expect(try WireCodec.decode(full) == .ping(sequence: 1))
        let over = FrameBuilder(.ping).field(1, FrameBuilder.le(UInt64(1))).field(0x9000, [UInt8](repeating: 7, count: room + 1)).bytes
        #expect(throws: WireError.self) { try WireCodec.decode(over) }
    }
}
