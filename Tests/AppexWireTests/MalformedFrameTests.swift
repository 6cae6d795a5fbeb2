import Testing

@testable import AppexWire

/// Every fault is a WireError whose kind, field and offset point at what is wrong.
@Suite struct MalformedFrameTests {
    func fault(_ frame: [UInt8]) -> WireError? {
        do {
            _ = try WireCodec.decode(frame)
            return nil
        } catch {
            return error
        }
    }

    static let ping = FrameBuilder(.ping).field(1, FrameBuilder.le(UInt64(5)))

    @Test func badMagic() {
        var b = Self.ping
        b.magic = [0x41, 0x50, 0x58, 0x58]
        let e = fault(b.bytes)
        #expect(e?.kind == .badMagic)
        #expect(e?.offset == 0)
    }

    @Test func unsupportedFormat() {
        var b = Self.ping
        b.format = 2
        #expect(fault(b.bytes)?.kind == .unsupportedFormat)
        #expect(fault(b.bytes)?.offset == 4)
    }

    @Test func unknownMessageType() {
        var b = Self.ping
        b.type = 0x7f
        let e = fault(b.bytes)
        #expect(e?.kind == .unknownMessageType)
        #expect(e?.field == "header.type")
    }

    @Test func reservedFlags() {
        var b = Self.ping
        b.flags = 1
        #expect(fault(b.bytes)?.kind == .reservedFlags)
    }

    @Test func tooManyDescriptorsAnnounced() {
        var b = Self.ping
        b.fdCount = 17
        #expect(fault(b.bytes)?.kind == .tooManyDescriptors)
    }

    @Test func oversizedLengthInHeader() {
        var b = Self.ping
        b.announcedLength = UInt32(WireProtocol.maxPayloadSize + 1)
        let e = fault(b.bytes)
        #expect(e?.kind == .frameTooLarge)
        #expect(e?.field == "header.payloadLength")
        b.announcedLength = .max
        #expect(fault(b.bytes)?.kind == .frameTooLarge)
    }

    @Test func oversizedFrame() {
        let frame = [UInt8](repeating: 0, count: WireProtocol.maxFrameSize + 1)
        #expect(fault(frame)?.kind == .frameTooLarge)
    }

    @Test func truncatedHeader() {
        for n in 0..<16 {
            let e = fault(Array(Self.ping.bytes.prefix(n)))
            #expect(e?.kind == .truncated, "prefix \(n): \(String(describing: e))")
            #expect(e?.field == "header")
        }
    }

    @Test func truncatedPayload() {
        let full = Self.ping.bytes
        for n in 16..<full.count {
            let e = fault(Array(full.prefix(n)))
            #expect(e?.kind == .truncated)
            #expect(e?.field == "payload")
        }
    }

    @Test func trailingBytes() {
        let e = fault(Self.ping.bytes + [0])
        #expect(e?.kind == .lengthMismatch)
        #expect(e?.offset == 30)
    }

    @Test func fieldHeaderCutShort() {
        var b = Self.ping
        b.payload += [1, 0, 0]  // three bytes of a next field header
        let e = fault(b.bytes)
        #expect(e?.kind == .truncated)
        #expect(e?.offset == 30)
        #expect(e?.field == "Ping")
    }

    @Test func fieldLengthBeyondPayload() {
        var b = FrameBuilder(.ping)
        b.payload = FrameBuilder.le(UInt16(1)) + FrameBuilder.le(UInt32(100)) + FrameBuilder.le(UInt64(5))
        let e = fault(b.bytes)
        #expect(e?.kind == .truncated)
        #expect(e?.offset == 16)
        #expect(e?.detail.contains("100") == true)
    }

    @Test func fieldOfWrongSize() {
        let e = fault(FrameBuilder(.ping).field(1, [1, 2, 3, 4, 5, 6, 7]).bytes)
        #expect(e?.kind == .badFieldLength)
        #expect(e?.field == "Ping.sequence")
        #expect(e?.offset == 16)
    }

    @Test func unknownRequiredField() {
        let e = fault(Self.ping.field(9, []).bytes)
        #expect(e?.kind == .unknownField)
        #expect(e?.offset == 30)
    }

    @Test func duplicateField() {
        let e = fault(Self.ping.field(1, FrameBuilder.le(UInt64(6))).bytes)
        #expect(e?.kind == .duplicateField)
        #expect(e?.field == "Ping.sequence")
        #expect(e?.offset == 30)
    }

    @Test func missingField() {
        let e = fault(FrameBuilder(.hello).field(1, FrameBuilder.le(UInt32(1))).field(3, FrameBuilder.le(Int32(1))).bytes)
        #expect(e?.kind == .missingField)
        #expect(e?.field == "Hello.bundleIdentifier")
    }

    @Test func invalidUTF8AndNUL() {
        let base = FrameBuilder(.hello).field(1, FrameBuilder.le(UInt32(1))).field(3, FrameBuilder.le(Int32(1)))
        let bad = fault(base.field(2, [0x63, 0xff, 0x63]).bytes)
        #expect(bad?.kind == .invalidUTF8)
        #expect(bad?.field == "Hello.bundleIdentifier")
        #expect(bad?.offset == 36)
        #expect(fault(base.field(2, [0x63, 0x00, 0x63]).bytes)?.kind == .nulInString)
    }

    @Test func invalidBoolAndEnum() {
        let r = FrameBuilder(.openURLResult).field(1, FrameBuilder.le(UInt64(1)))
        #expect(fault(r.field(2, [2]).bytes)?.kind == .invalidValue)
        let e = fault(FrameBuilder(.memoryWarning).field(1, [3]).bytes)
        #expect(e?.kind == .invalidValue)
        #expect(e?.field == "MemoryWarning.level")
    }

    static func attachment(_ fields: [UInt8]) -> [UInt8] { FrameBuilder.tlv(3, fields) }

    @Test func tooManyItems() {
        var b = FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1)))
        for _ in 0...WireLimits.itemsPerMessage { b = b.field(2, []) }
        let e = fault(b.bytes)
        #expect(e?.kind == .tooManyElements)
        #expect(e?.field == "BeginRequest.items")
    }

    @Test func tooManyAttachmentsInNestedItem() {
        let one = Self.attachment(FrameBuilder.str(1, "public.data") + FrameBuilder.tlv(2, [1]))
        let item = (0...WireLimits.attachmentsPerItem).flatMap { _ in one }
        let e = fault(FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, item).bytes)
        #expect(e?.kind == .tooManyElements)
        #expect(e?.field == "BeginRequest.items[0].attachments")
    }

    @Test func descriptorIndexOutOfRange() {
        let att = Self.attachment(FrameBuilder.str(1, "public.data") + FrameBuilder.u32(3, 1))
        var b = FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, att)
        b.fdCount = 1
        let e = fault(b.bytes)
        #expect(e?.kind == .badDescriptorIndex)
        #expect(e?.field == "BeginRequest.items[0].attachments[0].fdIndex")
    }

    @Test func descriptorUsedTwice() {
        let att = Self.attachment(FrameBuilder.str(1, "public.data") + FrameBuilder.u32(3, 0))
        var b = FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, att + att)
        b.fdCount = 1
        #expect(fault(b.bytes)?.kind == .badDescriptorIndex)
    }

    @Test func descriptorNobodyRefersTo() {
        var b = Self.ping
        b.fdCount = 1
        let e = fault(b.bytes)
        #expect(e?.kind == .unusedDescriptor)
        #expect(e?.field == "header.fdCount")
    }

    @Test func attachmentNeedsExactlyOneContent() {
        let both = Self.attachment(FrameBuilder.str(1, "public.data") + FrameBuilder.tlv(2, [1]) + FrameBuilder.u32(3, 0))
        var b = FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, both)
        b.fdCount = 1
        #expect(fault(b.bytes)?.kind == .conflictingFields)
        let neither = Self.attachment(FrameBuilder.str(1, "public.data"))
        let e = fault(FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, neither).bytes)
        #expect(e?.kind == .missingField)
        #expect(e?.field == "BeginRequest.items[0].attachments[0].inlineData")
        let untyped = Self.attachment(FrameBuilder.tlv(2, [1]))
        #expect(fault(FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, untyped).bytes)?.kind == .missingField)
    }

    @Test func duplicateUserInfoKey() {
        let entry = FrameBuilder.tlv(4, FrameBuilder.str(1, "k") + FrameBuilder.tlv(4, [1]))
        let e = fault(FrameBuilder(.completeRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, entry + entry).bytes)
        #expect(e?.kind == .duplicateField)
        #expect(e?.field == "CompleteRequest.items[0].userInfo[1]")
    }

    @Test func nestedLengthOverrunsItsParent() {
        // An item that claims 50 bytes inside a field of 10.
        let inner = FrameBuilder.le(UInt16(1)) + FrameBuilder.le(UInt32(50)) + [0, 0, 0, 0]
        let e = fault(FrameBuilder(.beginRequest).field(1, FrameBuilder.le(UInt64(1))).field(2, inner).bytes)
        #expect(e?.kind == .truncated)
        #expect(e?.offset == 36)
        #expect(e?.field?.hasPrefix("BeginRequest.items[0]") == true)
    }

    @Test func duplicatePhaseName() {
        let phase = FrameBuilder.tlv(7, FrameBuilder.str(1, "spawn") + FrameBuilder.u64(2, 1))
        var b = FrameBuilder(.requestOutcome).field(1, FrameBuilder.le(UInt64(1))).field(2, [1])
        b.payload += phase
        #expect(fault(b.bytes) == nil)
        b.payload += phase
        let e = fault(b.bytes)
        #expect(e?.kind == .duplicateField)
        #expect(e?.field == "RequestOutcome.phases[1]")
    }

    // The encoder refuses what the decoder would.
    @Test func encoderRefusesWhatDecoderWould() {
        func encodeFault(_ m: Message) -> WireError.Kind? {
            do {
                _ = try WireCodec.encode(m)
                return nil
            } catch { return error.kind }
        }
        #expect(encodeFault(.hello(Hello(bundleIdentifier: "a\u{0}b", pid: 1))) == .nulInString)
        let many = [ExtensionItem](repeating: Samples.plainItem, count: WireLimits.itemsPerMessage + 1)
        #expect(encodeFault(.beginRequest(BeginRequest(requestID: 1, items: many))) == .tooManyElements)
        let big = ExtensionItem(attachments: [
            AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .inline([UInt8](repeating: 0, count: WireProtocol.maxPayloadSize)))
        ])
        #expect(encodeFault(.beginRequest(BeginRequest(requestID: 1, items: [big]))) == .frameTooLarge)
        let gap = ExtensionItem(attachments: [AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 1))])
        #expect(encodeFault(.beginRequest(BeginRequest(requestID: 1, items: [gap]))) == .badDescriptorIndex)
        let untyped = ExtensionItem(attachments: [AppexWire.Attachment(typeIdentifiers: [], content: .inline([]))])
        #expect(encodeFault(.completeRequest(CompleteRequest(requestID: 1, items: [untyped]))) == .tooManyElements)
        let dup = RequestOutcome(requestID: 1, outcome: .completed, phases: [.init("a", microseconds: 1), .init("a", microseconds: 2)])
        #expect(encodeFault(.requestOutcome(dup)) == .duplicateField)
    }

    @Test func errorsDescribeThemselves() {
        let e = fault(FrameBuilder(.ping).field(1, [1, 2, 3]).bytes)!
        #expect(e.description == "bad-field-length in Ping.sequence at offset 16: value is 3 bytes, this field is 8")
    }
}
