import AppexTestSupport
import Testing

@testable import AppexWire

/// Random but valid messages, to widen the corpus beyond the samples.
struct MessageGenerator {
    var rng: SeededRandom

    mutating func string() -> String {
        let alphabet = Array("abcxyz.-_/:é→✓ 0123")
        return String((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
    }

    mutating func bytes(_ max: Int = 24) -> [UInt8] {
        (0..<Int.random(in: 0...max, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    mutating func maybe<T>(_ make: (inout MessageGenerator) -> T) -> T? {
        Bool.random(using: &rng) ? make(&self) : nil
    }

    mutating func items(fds: inout Int) -> [ExtensionItem] {
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in
            var info: [String: UserInfoValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let v: UserInfoValue
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: v = .string(string())
                case 1: v = .integer(Int64.random(in: .min ... .max, using: &rng))
                case 2: v = .bool(Bool.random(using: &rng))
                case 3: v = .double(Double.random(in: -1e9...1e9, using: &rng))
                default: v = .data(bytes())
                }
                info[string()] = v
            }
            let attachments = (0..<Int.random(in: 0...3, using: &rng)).map { _ -> AppexWire.Attachment in
                let content: AppexWire.Attachment.Content
                if fds < WireLimits.descriptorsPerFrame && Bool.random(using: &rng) {
                    content = .descriptor(index: fds)
                    fds += 1
                } else {
                    content = .inline(bytes())
                }
                return AppexWire.Attachment(
                    typeIdentifiers: (0..<Int.random(in: 1...3, using: &rng)).map { _ in string() },
                    content: content, suggestedName: maybe { $0.string() })
            }
            return ExtensionItem(
                attributedTitle: maybe { $0.string() }, attributedContentText: maybe { $0.string() },
                attachments: attachments, userInfo: info)
        }
    }

    mutating func message() -> Message {
        let id = UInt64.random(in: 1...1000, using: &rng)
        var fds = 0
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return .beginRequest(BeginRequest(requestID: id, items: items(fds: &fds)))
        case 1: return .completeRequest(CompleteRequest(requestID: id, items: items(fds: &fds)))
        case 2:
            return .hostBeginRequest(
                HostBeginRequest(
                    requestID: id, bundleIdentifier: string(), items: items(fds: &fds),
                    band: maybe { UInt32.random(in: 0...200, using: &$0.rng) }))
        case 3:
            return .requestOutcome(
                RequestOutcome(
                    requestID: id, outcome: RequestOutcome.Kind.allCases.randomElement(using: &rng)!,
                    items: items(fds: &fds), error: maybe { RequestError(domain: $0.string(), code: 7) },
                    reason: maybe { Reason($0.string()) }, cold: Bool.random(using: &rng),
                    phases: (0..<Int.random(in: 0...4, using: &rng)).map { .init("p\($0)", microseconds: UInt64($0)) }))
        case 4:
            return .refusal(
                Refusal(
                    reason: Reason(string()), message: maybe { $0.string() }, requestID: maybe { _ in id },
                    details: (0..<Int.random(in: 0...3, using: &rng)).map { _ in string() }))
        case 5:
            return .interruption(
                Interruption(
                    requestID: id, bundleIdentifier: string(), reason: Reason(string()),
                    message: maybe { $0.string() }, signal: maybe { _ in 9 }))
        case 6:
            return .adminResult(
                AdminResult(
                    requestID: id,
                    extensions: (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                        ExtensionInfo(
                            bundleIdentifier: string(), extensionPoint: string(), enabled: Bool.random(using: &rng),
                            displayName: maybe { $0.string() }, version: maybe { $0.string() }, containingApp: maybe { $0.string() })
                    }))
        default: return Samples.all.randomElement(using: &rng)!
        }
    }
}

@Suite struct DecoderFuzzTests {
    /// The outcome of decoding hostile bytes: a message that re-encodes to a frame decoding to
    /// the same bytes again, or a WireError pointing inside the input. (Typed throws make
    /// "nothing else escapes" a compile-time fact; this checks the values.)
    func check(_ bytes: [UInt8], _ counts: inout (ok: Int, rejected: Int)) {
        let message: Message
        do {
            message = try WireCodec.decode(bytes)
        } catch {
            counts.rejected += 1
            if let offset = error.offset {
                #expect(offset >= 0 && offset <= max(bytes.count, WireProtocol.maxFrameSize), "\(error)")
            }
            #expect(!error.detail.isEmpty)
            return
        }
        counts.ok += 1
        do {
            let again = try WireCodec.encode(message)
            #expect(try WireCodec.encode(WireCodec.decode(again)) == again)
        } catch {
            Issue.record("a decoded message does not survive re-encoding: \(error)")
        }
    }

    @Test func randomMessagesRoundTrip() throws {
        var gen = MessageGenerator(rng: SeededRandom(seed: 0xA9E7))
        for _ in 0..<500 {
            let m = gen.message()
            let frame = try WireCodec.encode(m)
            let decoded = try WireCodec.decode(frame)
            #expect(try WireCodec.encode(decoded) == frame)
        }
    }

    @Test func mutatedFramesDecodeOrFailWithAWireError() throws {
        var rng = SeededRandom(seed: 0x5EED_0001)
        var gen = MessageGenerator(rng: SeededRandom(seed: 0x5EED_0002))
        var corpus = try (Samples.all + Samples.minimal).map { try WireCodec.encode($0) }
        for _ in 0..<100 { corpus.append(try WireCodec.encode(gen.message())) }
        var counts = (ok: 0, rejected: 0)
        for _ in 0..<4000 {
            var f = corpus.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                switch Int.random(in: 0..<7, using: &rng) {
                case 0:  // flip a bit
                    let i = Int.random(in: 0..<f.count, using: &rng)
                    f[i] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                case 1:  // set a byte
                    f[Int.random(in: 0..<f.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 2:  // truncate
                    f = Array(f.prefix(Int.random(in: 0...f.count, using: &rng)))
                case 3:  // insert bytes
                    f.insert(contentsOf: gen.bytes(8), at: Int.random(in: 0...f.count, using: &rng))
                case 4:  // overwrite a u32 with an interesting length
                    if f.count >= 4 {
                        let i = Int.random(in: 0...(f.count - 4), using: &rng)
                        let v: UInt32 = [0, 1, 6, 0x7fff_ffff, 0xffff_ffff, UInt32(f.count), UInt32(WireProtocol.maxPayloadSize)]
                            .randomElement(using: &rng)!
                        for k in 0..<4 { f[i + k] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(k))) }
                    }
                case 5:  // splice the tail of another frame
                    let g = corpus.randomElement(using: &rng)!
                    f = Array(f.prefix(Int.random(in: 0...f.count, using: &rng))) + g.suffix(Int.random(in: 0...g.count, using: &rng))
                default:  // duplicate a region (repeated or duplicate fields)
                    if f.count > 16 {
                        let a = Int.random(in: 16..<f.count, using: &rng)
                        let b = Int.random(in: a...f.count, using: &rng)
                        f.insert(contentsOf: f[a..<b], at: b)
                    }
                }
                if f.isEmpty { break }
            }
            // Keep the header's length honest half of the time, so the payload parser is reached.
            if f.count >= 16 && Bool.random(using: &rng) {
                let n = UInt32(f.count - 16)
                for k in 0..<4 { f[12 + k] = UInt8(truncatingIfNeeded: n >> (8 * UInt32(k))) }
            }
            check(f, &counts)
        }
        // Both outcomes occur: the mutations reach past the header checks.
        #expect(counts.ok > 100)
        #expect(counts.rejected > 1000)
    }

    @Test func randomBytesFailWithAWireError() {
        var rng = SeededRandom(seed: 0x5EED_0003)
        var counts = (ok: 0, rejected: 0)
        for i in 0..<2000 {
            var f = (0..<Int.random(in: 0...256, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if i % 2 == 0 && f.count >= 16 {
                // A plausible header over random fields.
                let type = MessageType.allCases.randomElement(using: &rng)!.rawValue
                f.replaceSubrange(
                    0..<16,
                    with: WireProtocol.magic + [1, 0, UInt8(type & 0xff), UInt8(type >> 8), 0, 0, 0, 0]
                        + FrameBuilder.le(UInt32(f.count - 16)))
            }
            check(f, &counts)
        }
        #expect(counts.rejected > 1900)
    }

    @Test func stateMachinesAcceptOrRejectAnySequence() {
        var rng = SeededRandom(seed: 0x5EED_0004)
        let messages = Samples.all + Samples.minimal + [.hello(Hello(protocolVersion: 2, bundleIdentifier: "v2", pid: 1))]
        for role in ConnectionRole.allCases {
            for _ in 0..<200 {
                var s = ConnectionState(role: role)
                for _ in 0..<20 {
                    let m = messages.randomElement(using: &rng)!
                    do {
                        if Bool.random(using: &rng) { try s.willSend(m) } else { try s.didReceive(m) }
                    } catch {
                        #expect(error.field == m.type.name)
                    }
                }
                #expect(s.requestsInFlight <= WireLimits.requestsInFlight)
            }
        }
    }
}
