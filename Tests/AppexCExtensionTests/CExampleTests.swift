import AppexTestSupport
import AppexWire
import AppexWireIO
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The C example extension (Sources/appex-example-c, bundle HelloC.appex), run as a real
/// process with the test as appexd: it must speak the protocol exactly as the Swift codec and
/// state machine expect, from Docs/protocol.md alone.
@Suite struct CExampleTests {
    static let identifier = "dev.appex.examples.host.hello-c"

    func start(environment: [String: String?] = [:]) throws -> ExtensionProcess {
        try ExtensionProcess(
            BuiltProducts.path("appex-example-c"), bundleIdentifier: Self.identifier,
            environment: environment)
    }

    func contentTexts(_ message: Message, request id: UInt64) -> [String?]? {
        guard case .completeRequest(let complete) = message, complete.requestID == id else { return nil }
        return complete.items.map(\.attributedContentText)
    }

    @Test func checksInAnswersRequestsAndPingsThenTerminates() throws {
        let ext = try start()
        let hello = try ext.checkIn()
        #expect(hello == Hello(bundleIdentifier: Self.identifier, pid: ext.pid))

        let first = try ext.request(1, [ExtensionItem(attributedContentText: "stressed")])
        #expect(contentTexts(first, request: 1) == ["hello from C: desserts"])
        // Reversed by character, not by byte: the answer stays valid UTF-8 (or the codec throws).
        let second = try ext.request(2, [ExtensionItem(attributedContentText: "añ€😀z")])
        #expect(contentTexts(second, request: 2) == ["hello from C: z😀€ña"])
        let empty = try ext.request(5, [])
        #expect(contentTexts(empty, request: 5) == ["hello from C: "])

        try ext.connection.send(.ping(sequence: 77))
        #expect(try ext.message().message == .pong(sequence: 77))

        try ext.connection.send(.terminate(Terminate(reason: .idleExit, graceMilliseconds: 1000)))
        try ext.expectEndOfStream()
        #expect(Termination(try ext.waitForExit()) == .exited(0))
    }

    @Test func readsItsInputFromADescriptorAttachmentAndClosesIt() throws {
        let ext = try start()
        try ext.checkIn()
        let openBefore = ext.openDescriptors
        let stream = try AttachmentSource.stream(Array("reward".utf8))
        defer { close(stream) }

        let item = ExtensionItem(attachments: [
            AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .descriptor(index: 0))
        ])
        let answer = try ext.request(1, [item], descriptors: [stream])
        #expect(contentTexts(answer, request: 1) == ["hello from C: drawer"])

        // It closed the descriptor it received (the child may also hold descriptors the test
        // process did not mark close-on-exec: the comparison is with its own earlier state).
        #expect(try ext.openDescriptorsAfterRoundTrip(sequence: 1) == openBefore)
        let inline = ExtensionItem(attachments: [
            AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .inline(Array("loop".utf8)))
        ])
        #expect(contentTexts(try ext.request(2, [inline]), request: 2) == ["hello from C: pool"])

        // appexd closing the socket is the other way to end it.
        ext.closeConnection()
        #expect(Termination(try ext.waitForExit()) == .exited(0))
    }

    @Test func inputThatIsNotTextIsCancelledInItsOwnDomain() throws {
        let ext = try start()
        try ext.checkIn()
        let item = ExtensionItem(attachments: [
            AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .inline([0xff, 0xfe, 0x00]))
        ])
        let answer = try ext.request(1, [item])
        guard case .cancelRequest(let cancel) = answer else {
            Issue.record("expected CancelRequest, got \(answer)")
            return
        }
        #expect(cancel.requestID == 1)
        #expect(cancel.error.domain == "dev.appex.examples.hello-c")
        #expect(cancel.error.message == "the input is not UTF-8 text")
    }

    /// Hand-made frames that break section 2 or 5 in one way each, and what the refusal says.
    static let malformed: [(name: String, frame: [UInt8], says: String)] = {
        func frame(type: UInt16, _ payload: [UInt8], magic: [UInt8] = Array("APXW".utf8), flags: UInt16 = 0) -> [UInt8] {
            magic + le(UInt16(1)) + le(type) + le(flags) + le(UInt16(0)) + le(UInt32(payload.count)) + payload
        }
        let ping = le(UInt16(1)) + le(UInt32(8)) + le(UInt64(9))
        return [
            ("bad magic", frame(type: 0x03, ping, magic: Array("APXV".utf8)), "bad magic"),
            ("reserved flags", frame(type: 0x03, ping, flags: 1), "reserved flags"),
            (
                "short Ping.sequence", frame(type: 0x03, le(UInt16(1)) + le(UInt32(7)) + [UInt8](repeating: 0, count: 7)),
                "bad-field-length in Ping.sequence"
            ),
            ("unknown tag", frame(type: 0x03, ping + le(UInt16(9)) + le(UInt32(0))), "unknown tag 9"),
            ("truncated field", frame(type: 0x03, Array(ping.dropLast(3))), "truncated field"),
            ("missing requestID", frame(type: 0x10, []), "BeginRequest.requestID is required"),
            ("unknown type", frame(type: 0x7e, []), "message type 0x7e"),
            ("a Pong nobody asked for", frame(type: 0x04, ping), "sent no Ping"),
        ]
    }()

    static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

    @Test(arguments: malformed.indices)
    func aMalformedFrameGetsARefusalAndAnExitStatusOfOne(_ index: Int) throws {
        let (name, frame, says) = Self.malformed[index]
        let ext = try start()
        try ext.checkIn()
        try ext.connection.socket.send(frame: frame)
        let refusal = try ext.message().message
        guard case .refusal(let r) = refusal else {
            Issue.record("\(name): expected Refusal, got \(refusal)")
            return
        }
        #expect(r.reason == .protocolError, "\(name)")
        #expect(r.message?.contains(says) == true, "\(name): \(r.message ?? "no message")")
        try ext.expectEndOfStream()
        #expect(Termination(try ext.waitForExit()) == .exited(1), "\(name)")
        #expect(ext.log.contains("hello-c: protocol-error: "), "\(name): \(ext.log)")
    }

    @Test func anotherProtocolVersionGetsVersionMismatch() throws {
        let ext = try start()
        _ = try ext.message()  // its Hello
        try ext.connection.socket.send(.hello(Hello(protocolVersion: 2, bundleIdentifier: "appexd", pid: getpid())))
        let answer = try ext.message().message
        #expect(
            answer
                == .refusal(
                    Refusal(
                        reason: .versionMismatch,
                        message: "appexd speaks protocol version 2, this extension 1")))
        try ext.expectEndOfStream()
        #expect(Termination(try ext.waitForExit()) == .exited(1))
    }

    @Test func aRefusedCheckInEndsItWithAnExitStatusOfOne() throws {
        let ext = try start()
        _ = try ext.message()  // its Hello
        try ext.connection.send(.refusal(Refusal(reason: .versionMismatch, message: "appexd speaks 2")))
        try ext.expectEndOfStream()
        #expect(Termination(try ext.waitForExit()) == .exited(1))
        #expect(ext.log.contains("appexd refused: version-mismatch: appexd speaks 2"), "\(ext.log)")
    }

    @Test func withoutABundleIdentifierItDoesNotCheckIn() throws {
        let ext = try start(environment: ["APPEX_BUNDLE_IDENTIFIER": nil])
        try ext.expectEndOfStream()
        #expect(Termination(try ext.waitForExit()) == .exited(2))
        #expect(ext.log.contains("APPEX_BUNDLE_IDENTIFIER is not set"))
    }
}
