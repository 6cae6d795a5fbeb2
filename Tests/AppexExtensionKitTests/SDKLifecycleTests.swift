import AppexTestSupport
import AppexWire
import AppexWireIO
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The SDK's life cycle, driven through the test extension: check-in, pings, callbacks,
/// cancels, open-URL, termination and protocol faults, on real processes and sockets.
@Suite struct SDKLifecycleTests {
    static let product = BuiltProducts.path("appex-sdk-test-extension")

    @Test func checksInWithItsBundleIdentifierAndPid() throws {
        let ext = try ExtensionProcess(Self.product, bundleIdentifier: "dev.appex.tests.check-in")
        defer { ext.stop() }
        let hello = try ext.checkIn()
        #expect(hello.bundleIdentifier == "dev.appex.tests.check-in")
        #expect(hello.pid == ext.pid)
        #expect(hello.protocolVersion == WireProtocol.version)
    }

    @Test func echoesARequestAndAnswersPings() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        try ext.connection.send(.ping(sequence: 41))
        #expect(try ext.receive().message == .pong(sequence: 41))

        let url = AppexWire.Attachment(typeIdentifiers: ["public.url"], content: .inline(Array("https://example.com/".utf8)))
        let id = try ext.begin([ExtensionItem(attributedTitle: "t", attributedContentText: "echo", attachments: [url])])
        let answer = try ext.receive()
        #expect(
            answer.message
                == .completeRequest(
                    CompleteRequest(
                        requestID: id,
                        items: [
                            ExtensionItem(attributedTitle: "t", attributedContentText: "echo", attachments: [url])
                        ])))
    }

    @Test func answersAPingWhileEveryHandlerThreadIsBusy() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        // More spinning handlers than the machine has cores: the cooperative pool is saturated.
        let spinning = try (0..<4).map { _ in try ext.begin([ExtensionItem(attributedContentText: "spin")]) }
        try ext.connection.send(.ping(sequence: 7))
        #expect(try ext.receive().message == .pong(sequence: 7))
        let stop = RequestError(domain: "test", code: 1)
        for id in spinning {
            try ext.connection.send(.cancelRequest(CancelRequest(requestID: id, error: stop)))
            #expect(try ext.receive().message == .cancelRequest(CancelRequest(requestID: id, error: stop)))
        }
    }

    @Test func readsAttachmentDescriptorsAndReturnsDescriptors() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        let file = try AttachmentSource.file(Array("bytes in a file".utf8))
        defer { close(file) }
        let attachments = [
            AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 0)),
            AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .inline(Array("inline".utf8))),
        ]
        let readBack = try ext.request("read", attachments: attachments, descriptors: [file])
        #expect(completedTexts(readBack) == ["bytes in a file", "inline"])

        let piped = try ext.request("return-pipe through a pipe")
        defer { piped.closeDescriptors() }
        guard case .completeRequest(let answer) = piped.message else {
            Issue.record("expected CompleteRequest, got \(piped.message)")
            return
        }
        #expect(answer.items.first?.attachments.first?.content == .descriptor(index: 0))
        #expect(piped.descriptors.count == 1)
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(piped.descriptors[0], &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self) == "through a pipe")
    }

    @Test func aReplyThatCannotBeSentBecomesTheSDKsCancel() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        let answer = try ext.request("bad-reply")
        guard case .cancelRequest(let cancel) = answer.message else {
            Issue.record("expected CancelRequest, got \(answer.message)")
            return
        }
        #expect(cancel.error.domain == "dev.appex.extensionkit")
        #expect(cancel.error.code == 2)
        #expect(try journal(ext, until: { !$0.isEmpty }).contains("bad-reply: completeRequest false"))
    }

    @Test func aSecondAnswerNeverReachesTheWire() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        #expect(completedTexts(try ext.request("twice")) == ["first"])
        // The supervisor-role state machine would throw on a second answer to the request;
        // the journal entry is written after the second attempt, so the report comes after it.
        #expect(try journal(ext, until: { !$0.isEmpty }).contains("twice: first true, second false"))
    }

    @Test func aHostCancelReachesTheHandlerAndIsAnswered() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        let id = try ext.begin([ExtensionItem(attributedContentText: "wait-cancel")])
        let reason = RequestError(domain: "NSCocoaErrorDomain", code: 3072, message: "the user cancelled")
        try ext.connection.send(.cancelRequest(CancelRequest(requestID: id, error: reason)))
        #expect(try ext.receive().message == .cancelRequest(CancelRequest(requestID: id, error: reason)))
        let lines = try journal(ext, until: { $0.count >= 2 })
        #expect(lines.contains("onCancel: NSCocoaErrorDomain 3072"))
        #expect(lines.contains("wait-cancel: task cancelled true, isCancelled true, late answer false"))
    }

    @Test func openURLRoundTrip() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        for accepted in [true, false] {
            let id = try ext.begin([ExtensionItem(attributedContentText: "open https://example.com/\(accepted)")])
            #expect(try ext.receive().message == .openURL(OpenURL(requestID: id, url: "https://example.com/\(accepted)")))
            try ext.connection.send(.openURLResult(OpenURLResult(requestID: id, accepted: accepted)))
            #expect(completedTexts(try ext.receive()) == ["opened https://example.com/\(accepted): \(accepted)"])
        }
    }

    @Test func memoryWarningReachesTheHandler() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        try ext.connection.send(.memoryWarning(MemoryWarning(level: .critical)))
        try ext.connection.send(.memoryWarning(MemoryWarning(level: .warning)))
        let lines = try journal(ext, until: { $0.count >= 2 })
        #expect(Set(lines) == ["memory-warning critical", "memory-warning warning"])
    }

    @Test func willExpireReachesTheHandlerWithItsContext() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        let id = try ext.begin([ExtensionItem(attributedContentText: "hold")])
        try ext.connection.send(.requestWillExpire(RequestWillExpire(requestID: id, millisecondsLeft: 250)))
        #expect(
            try ext.receive().message
                == .completeRequest(CompleteRequest(requestID: id, items: [ExtensionItem(attributedContentText: "will-expire 250")])))
    }

    @Test func terminateWithNothingOpenExitsZero() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        try ext.connection.send(.terminate(Terminate(reason: .idleExit)))
        try expectCleanExit(ext)
    }

    @Test func terminateLetsOpenRequestsFinishWithinTheGrace() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        let id = try ext.begin([ExtensionItem(attributedContentText: "sleep 50")])
        try ext.connection.send(.terminate(Terminate(reason: .shutdown, graceMilliseconds: 10_000)))
        #expect(try ext.receive().message == .completeRequest(CompleteRequest(requestID: id, items: [ExtensionItem(attributedContentText: "slept")])))
        try expectCleanExit(ext)
    }

    @Test func terminateCancelsWhatIsStillOpenWhenTheGraceRunsOut() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        let id = try ext.begin([ExtensionItem(attributedContentText: "hold")])
        try ext.connection.send(.terminate(Terminate(reason: .shutdown, graceMilliseconds: 100)))
        guard case .cancelRequest(let cancel) = try ext.receive().message else {
            Issue.record("expected the SDK's CancelRequest")
            return
        }
        #expect(cancel.requestID == id)
        #expect(cancel.error.domain == "dev.appex.extensionkit" && cancel.error.code == 1)
        #expect(Termination(try ext.waitForExit()) == .exited(0))
    }

    @Test func endOfStreamExitsZero() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        ext.closeConnection()
        #expect(Termination(try ext.waitForExit()) == .exited(0))
    }

    @Test func aMalformedFrameEndsTheExtensionWithAReason() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        var frame = try WireCodec.encode(.ping(sequence: 1))
        frame[0] = UInt8(ascii: "X")
        try ext.connection.socket.send(frame: frame)
        guard case .refusal(let refusal) = try ext.receive().message else {
            Issue.record("expected the extension's Refusal")
            return
        }
        #expect(refusal.reason == .protocolError)
        #expect(Termination(try ext.waitForExit()) == .exited(1))
        #expect(ext.log.contains("bad-magic"))
        #expect(ext.log.contains("dev.appex.tests.extension[\(ext.pid)]"))
    }

    @Test func anOutOfOrderMessageEndsTheExtension() throws {
        let ext = try ExtensionProcess.checkedIn(Self.product)
        defer { ext.stop() }
        // A request id that was never begun, written past the test's own state machine.
        try ext.connection.socket.send(.openURLResult(OpenURLResult(requestID: 99, accepted: true)))
        #expect(Termination(try ext.waitForExit()) == .exited(1))
        #expect(ext.log.contains("unknown-request"))
    }

    @Test func aRefusedCheckInExitsWithTheReason() throws {
        let ext = try ExtensionProcess(Self.product)
        defer { ext.stop() }
        guard case .hello = try ext.receive().message else {
            Issue.record("expected Hello")
            return
        }
        try ext.connection.send(.refusal(Refusal(reason: .notAuthorized, message: "not the extension appexd launched")))
        #expect(Termination(try ext.waitForExit()) == .exited(1))
        #expect(ext.log.contains("appexd refused the check-in: not-authorized: not the extension appexd launched"))
    }

    @Test func startedWithoutAppexdItSaysWhatIsMissing() throws {
        let noIdentifier = try ExtensionProcess(Self.product, bundleIdentifier: nil)
        defer { noIdentifier.stop() }
        #expect(Termination(try noIdentifier.waitForExit()) == .exited(1))
        #expect(noIdentifier.log.contains("APPEX_BUNDLE_IDENTIFIER is not set"))

        let noSocket = try ExtensionProcess(Self.product, socketAtFD3: false)
        defer { noSocket.stop() }
        #expect(Termination(try noSocket.waitForExit()) == .exited(1))
        #expect(noSocket.log.contains("no connection to appexd"))
    }

    /// The extension closes its end of the socket and exits 0.
    func expectCleanExit(_ ext: ExtensionProcess, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try ext.receiveEndOfStream(), sourceLocation: sourceLocation)
        #expect(Termination(try ext.waitForExit()) == .exited(0), sourceLocation: sourceLocation)
    }

    /// The test extension's journal, asked for until `ready` holds for it (callbacks run in
    /// tasks of their own, so they may land after the message that caused them).
    func journal(_ ext: ExtensionProcess, until ready: ([String]) -> Bool) throws -> [String] {
        let deadline = ContinuousClock.now + ExtensionProcess.patience
        while true {
            let lines = completedTexts(try ext.request("report")) ?? []
            if ready(lines) || ContinuousClock.now > deadline { return lines }
            usleep(10_000)
        }
    }
}
