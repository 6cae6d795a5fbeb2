import AppexWire
import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

/// The checks `appex conformance` runs against an extension's implementation of the extension
/// side of Docs/protocol.md, each on a fresh process with this process playing appexd. Every
/// bound is appexd's default for it (launchDeadline 1 s, unresponsiveTimeout 5 s, the
/// Terminate grace 2 s); a request gets the default requestTimeout, 30 s.
struct ConformanceCheck: Sendable {
    let name: String
    let summary: String
    let run: @Sendable (ConformanceTarget) throws -> Void
}

/// What the checks launch.
struct ConformanceTarget: Sendable {
    var executable: String
    var bundleIdentifier: String
    var bundlePath: String
    var uid: UInt32?

    func launch() throws -> ConformancePeer {
        try ConformancePeer(executable: executable, bundleIdentifier: bundleIdentifier, bundlePath: bundlePath, uid: uid)
    }
}

enum ConformanceChecks {
    typealias Failure = ConformancePeer.Failure

    static let launchDeadline: Int32 = 1_000
    static let unresponsiveTimeout: Int32 = 5_000
    static let requestTimeout: Int32 = 30_000
    static let grace = 2_000

    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            name: "check-in", summary: "its first frame is Hello, protocol 1, with APPEX_BUNDLE_IDENTIFIER, within the launch deadline", run: checkIn),
        ConformanceCheck(name: "request", summary: "a BeginRequest with text is answered once, by CompleteRequest or CancelRequest", run: request),
        ConformanceCheck(
            name: "descriptors", summary: "a request with a descriptor is answered, and the descriptor closed within a second", run: descriptors),
        ConformanceCheck(name: "ping", summary: "Pings are answered with their Pongs in order, unknown tags from 0x8000 skipped", run: ping),
        ConformanceCheck(name: "stale-cancel", summary: "a CancelRequest for a request already answered is ignored", run: staleCancel),
        ConformanceCheck(
            name: "malformed-magic", summary: "a frame with a bad magic gets Refusal(protocol-error) and a non-zero exit",
            run: { try malformed($0, badMagic) }),
        ConformanceCheck(
            name: "malformed-field", summary: "an unknown tag below 0x8000 gets Refusal(protocol-error) and a non-zero exit",
            run: { try malformed($0, unknownTag) }),
        ConformanceCheck(
            name: "unsolicited-pong", summary: "a Pong it never asked for gets Refusal(protocol-error) and a non-zero exit",
            run: { try malformed($0, pong) }),
        ConformanceCheck(
            name: "request-id-order", summary: "a request id that does not increase gets Refusal(protocol-error) and a non-zero exit",
            run: repeatedRequestID),
        ConformanceCheck(
            name: "version-mismatch", summary: "appexd's Hello of version 2 gets Refusal(version-mismatch) and a non-zero exit", run: versionMismatch),
        ConformanceCheck(name: "refused-check-in", summary: "a Refusal at check-in ends it with a non-zero exit", run: refusedCheckIn),
        ConformanceCheck(name: "terminate", summary: "Terminate ends it within the grace period", run: terminate),
        ConformanceCheck(name: "end-of-stream", summary: "end of stream ends it with exit status 0", run: endOfStream),
    ]

    // MARK: checks

    static func checkIn(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        let hello = try peer.checkIn(within: launchDeadline)
        guard hello.protocolVersion == WireProtocol.version else { throw Failure("Hello says protocol version \(hello.protocolVersion)") }
        guard hello.bundleIdentifier == target.bundleIdentifier else {
            throw Failure("Hello carries \"\(hello.bundleIdentifier)\", launched as \"\(target.bundleIdentifier)\"")
        }
        try peer.pingRoundTrip(1)
    }

    static func request(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        try peer.send(.beginRequest(BeginRequest(requestID: 1, items: [ExtensionItem(attributedContentText: "conformance")])))
        try expectAnswer(peer, 1)
        try peer.pingRoundTrip(2)
    }

    static func descriptors(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        var pipeEnds: [Int32] = [0, 0]
        // Only this thread spawns, so close-on-exec set just after pipe leaves no window.
        guard pipe(&pipeEnds) == 0 else { throw Failure("pipe: \(String(cString: strerror(errno)))") }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let text = Array("conformance".utf8)
        _ = text.withUnsafeBytes { write(pipeEnds[1], $0.baseAddress, $0.count) }
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        let attachment = Attachment(
            typeIdentifiers: ["public.plain-text", "public.text", "public.data"],
            content: .descriptor(index: 0), suggestedName: "conformance.txt")
        try peer.send(
            .beginRequest(BeginRequest(requestID: 1, items: [ExtensionItem(attachments: [attachment])])),
            descriptors: [pipeEnds[0]])
        try expectAnswer(peer, 1)
        try peer.pingRoundTrip(2)
        // An implementation may close it just after sending the answer, on another thread:
        // it has a second to do so.
        var st = stat()
        guard fstat(pipeEnds[0], &st) == 0 else { throw Failure("fstat: \(String(cString: strerror(errno)))") }
        let deadline = ContinuousClock.now + .seconds(1)
        while let kept = peer.descriptors(linkingTo: "pipe:[\(st.st_ino)]").first {
            guard ContinuousClock.now < deadline else {
                throw Failure("the descriptor it received is still open as its fd \(kept) a second after the request was answered")
            }
            usleep(5_000)
        }
    }

    static func ping(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        for sequence: UInt64 in 1...3 { try peer.send(.ping(sequence: sequence)) }
        for sequence: UInt64 in 1...3 {
            let answer = try peer.message(within: unresponsiveTimeout, expecting: "Pong(\(sequence))")
            guard answer == .pong(sequence: sequence) else { throw Failure("expected Pong(\(sequence)), got \(answer)") }
        }
        // A Ping with a field from a later version (tag 0x8001) is still a Ping.
        var frame = try WireCodec.encode(.ping(sequence: 4))
        frame += [0x01, 0x80, 0x01, 0x00, 0x00, 0x00, 0x2A]
        frame.replaceSubrange(12..<16, with: littleEndian(UInt32(frame.count - 16)))
        try peer.send(frame: frame)
        let answer = try peer.message(within: unresponsiveTimeout, expecting: "Pong(4)")
        guard answer == .pong(sequence: 4) else { throw Failure("after a Ping with tag 0x8001, expected Pong(4), got \(answer)") }
    }

    static func staleCancel(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        try peer.send(.beginRequest(BeginRequest(requestID: 1, items: [ExtensionItem(attributedContentText: "conformance")])))
        try expectAnswer(peer, 1)
        try peer.send(.cancelRequest(CancelRequest(requestID: 1, error: RequestError(domain: "dev.appex.appexd", code: 2))))
        try peer.pingRoundTrip(2)
    }

    /// A frame that breaks the protocol, sent after check-in.
    static func malformed(_ target: ConformanceTarget, _ frame: () throws -> [UInt8]) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        try peer.send(frame: try frame())
        try expectRefusalAndExit(peer, reason: .protocolError)
    }

    static func repeatedRequestID(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        try peer.send(.beginRequest(BeginRequest(requestID: 1, items: [ExtensionItem(attributedContentText: "conformance")])))
        try expectAnswer(peer, 1)
        try peer.send(.beginRequest(BeginRequest(requestID: 1, items: [ExtensionItem(attributedContentText: "again")])))
        try expectRefusalAndExit(peer, reason: .protocolError)
    }

    static func versionMismatch(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.message(within: 5_000, expecting: "the extension's Hello")
        try peer.send(.hello(Hello(protocolVersion: 2, bundleIdentifier: "appexd", pid: getpid())))
        try expectRefusalAndExit(peer, reason: .versionMismatch)
    }

    static func refusedCheckIn(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.message(within: 5_000, expecting: "the extension's Hello")
        try peer.send(.refusal(Refusal(reason: .protocolError, message: "appex conformance refuses this check-in")))
        try expectExit(peer, nonZero: true)
    }

    static func terminate(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        try peer.pingRoundTrip(1)
        try peer.send(.terminate(Terminate(reason: .idleExit, graceMilliseconds: UInt32(grace))))
        guard peer.exitStatus(within: grace) != nil else { throw Failure("still running \(grace) ms after Terminate") }
    }

    static func endOfStream(_ target: ConformanceTarget) throws {
        let peer = try target.launch()
        _ = try peer.checkIn()
        try peer.pingRoundTrip(1)
        peer.closeSocket()
        try expectExit(peer, nonZero: false)
    }

    // MARK: pieces

    static func expectAnswer(_ peer: ConformancePeer, _ id: UInt64) throws {
        let answer = try peer.message(within: requestTimeout, expecting: "the answer to request \(id)")
        switch answer {
        case .completeRequest(let c) where c.requestID == id: return
        case .cancelRequest(let c) where c.requestID == id: return
        default: throw Failure("expected CompleteRequest or CancelRequest for request \(id), got \(answer)")
        }
    }

    /// Refusal(reason) as the next frame, then a non-zero exit.
    static func expectRefusalAndExit(_ peer: ConformancePeer, reason: Reason) throws {
        let m = try peer.message(within: unresponsiveTimeout, expecting: "Refusal(\(reason))")
        guard case .refusal(let r) = m else { throw Failure("expected Refusal(\(reason)), got \(m)") }
        guard r.reason == reason, r.requestID == nil else {
            throw Failure("expected Refusal(\(reason)), got Refusal(\(r.reason)\(r.requestID.map { ", request \($0)" } ?? ""))")
        }
        try expectExit(peer, nonZero: true)
    }

    static func expectExit(_ peer: ConformancePeer, nonZero: Bool) throws {
        guard let status = peer.exitStatus(within: grace) else { throw Failure("still running \(grace) ms later") }
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        if nonZero {
            guard exited, code != 0 else {
                throw Failure(exited ? "exited with status 0, a protocol failure needs a non-zero one" : "killed by signal \(status & 0x7f)")
            }
        } else {
            guard exited, code == 0 else {
                throw Failure(exited ? "exited with status \(code), end of stream asks for 0" : "killed by signal \(status & 0x7f)")
            }
        }
    }

    static func littleEndian(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    static func badMagic() throws -> [UInt8] {
        var frame = try WireCodec.encode(.ping(sequence: 9))
        frame[0] = UInt8(ascii: "X")
        return frame
    }

    /// A Ping with a field of tag 7, which this version does not define.
    static func unknownTag() throws -> [UInt8] {
        var frame = try WireCodec.encode(.ping(sequence: 9))
        frame += [0x07, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]
        frame.replaceSubrange(12..<16, with: littleEndian(UInt32(frame.count - 16)))
        return frame
    }

    static func pong() throws -> [UInt8] { try WireCodec.encode(.pong(sequence: 77)) }
}
