import AppexWire
import AppexWireIO
import Glibc
import Testing

@testable import AppexHostClient

@Suite struct HostClientRequestTests {
    @Test func requestsCompleteWithItemsAndPhasesUnderIncreasingIDs() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            var begun: [HostBeginRequest] = []
            for n in 1...2 {
                guard case .hostBeginRequest(let begin) = try FakeAppexd.next(connection).message else {
                    throw FakeAppexd.Failure(description: "expected HostBeginRequest")
                }
                begun.append(begin)
                try connection.send(
                    .requestOutcome(
                        RequestOutcome(
                            requestID: begin.requestID, outcome: .completed,
                            items: [ExtensionItem(attributedContentText: "reply \(n)")], cold: n == 1,
                            phases: [
                                .init("spawn", microseconds: 1200), .init("checkIn", microseconds: 300),
                                .init("roundTrip", microseconds: 50),
                            ])))
            }
            try FakeAppexd.awaitEnd(connection)
            return begun
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        let input = ExtensionItem(
            attributedTitle: "Title", attributedContentText: "hello",
            userInfo: ["count": .integer(3)])
        let first = try await client.beginRequest(bundleIdentifier: "com.example.share", items: [input], band: 100)
        #expect(first.outcome == .completed)
        #expect(first.items == [ExtensionItem(attributedContentText: "reply 1")])
        #expect(first.cold)
        #expect(first.phases.map(\.name) == ["spawn", "checkIn", "roundTrip"])
        #expect(first.phases.map(\.microseconds) == [1200, 300, 50])
        #expect(first.error == nil && first.reason == nil && first.descriptors.isEmpty)
        let second = try await client.beginRequest(bundleIdentifier: "com.example.share")
        #expect(second.items == [ExtensionItem(attributedContentText: "reply 2")])
        #expect(!second.cold)
        client.close()

        let begun = try await served.result()
        #expect(begun.map(\.requestID) == [first.requestID, second.requestID])
        #expect(first.requestID < second.requestID)
        #expect(
            begun[0]
                == HostBeginRequest(
                    requestID: first.requestID, bundleIdentifier: "com.example.share",
                    items: [input], band: 100))
        #expect(begun[1].band == nil && begun[1].items.isEmpty)
    }

    @Test func aRefusedRequestThrowsReasonAndDetailsAndTheConnectionGoesOn() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            let refused = try FakeAppexd.next(connection).message
            try connection.send(
                .refusal(
                    Refusal(
                        reason: .unknownExtension, message: "no extension com.example.nope",
                        requestID: refused.requestID, details: ["installed: com.example.share"])))
            let next = try FakeAppexd.next(connection).message
            try connection.send(.requestOutcome(RequestOutcome(requestID: next.requestID!, outcome: .completed)))
            try FakeAppexd.awaitEnd(connection)
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let error = await #expect(throws: HostClientError.self) {
            try await client.beginRequest(bundleIdentifier: "com.example.nope")
        }
        #expect(error?.kind == .refused)
        #expect(error?.reason == .unknownExtension)
        #expect(error?.requestID == 1)
        #expect(error?.message == "appexd refused the request: no extension com.example.nope")
        #expect(error?.details == ["installed: com.example.share"])
        let after = try await client.beginRequest(bundleIdentifier: "com.example.share")
        #expect(after.outcome == .completed)
        client.close()
        try await served.result()
    }

    @Test func cancelReachesAppexdAndTheOutcomeStillComes() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            var seen: [Message] = []
            // Twice: once cancelled through the handle, once by cancelling the calling task.
            for _ in 1...2 {
                let begin = try FakeAppexd.next(connection).message
                let cancel = try FakeAppexd.next(connection).message
                seen += [begin, cancel]
                try connection.send(
                    .requestOutcome(
                        RequestOutcome(
                            requestID: begin.requestID!, outcome: .cancelled,
                            error: RequestError(domain: "NSCocoaErrorDomain", code: 3072, message: "cancelled by the host"))))
            }
            try FakeAppexd.awaitEnd(connection)
            return seen
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }

        let pending = try client.startRequest(bundleIdentifier: "com.example.slow")
        try pending.cancel()
        let cancelled = try await pending.outcome()
        #expect(cancelled.outcome == .cancelled)
        #expect(cancelled.error == RequestError(domain: "NSCocoaErrorDomain", code: 3072, message: "cancelled by the host"))
        try pending.cancel()  // ended: nothing is sent, no error

        let task = Task { try await client.beginRequest(bundleIdentifier: "com.example.slow") }
        task.cancel()
        let byTask = try await task.value
        #expect(byTask.outcome == .cancelled)

        // An id this client never used is a mistake of the caller, and nothing is sent.
        let error = #expect(throws: HostClientError.self) { try client.cancel(requestID: 99) }
        #expect(error?.kind == .invalidRequest)
        client.close()

        let seen = try await served.result()
        #expect(
            seen == [
                .hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: "com.example.slow", items: [])),
                .hostCancelRequest(HostCancelRequest(requestID: 1)),
                .hostBeginRequest(HostBeginRequest(requestID: 2, bundleIdentifier: "com.example.slow", items: [])),
                .hostCancelRequest(HostCancelRequest(requestID: 2)),
            ])
    }

    @Test func interruptionIsDeliveredBeforeTheFailedOutcome() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            let id = try FakeAppexd.next(connection).message.requestID!
            try connection.send(
                .interruption(
                    Interruption(
                        requestID: id, bundleIdentifier: "com.example.crashy",
                        reason: .crashed, message: "killed by SIGSEGV", signal: SIGSEGV)))
            try connection.send(.requestOutcome(RequestOutcome(requestID: id, outcome: .failed, reason: .crashed)))
            try FakeAppexd.awaitEnd(connection)
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let result = try await client.beginRequest(bundleIdentifier: "com.example.crashy")
        #expect(result.outcome == .failed)
        #expect(result.reason == .crashed)
        var interruptions = client.interruptions.makeAsyncIterator()
        let interruption = await interruptions.next()
        #expect(
            interruption
                == Interruption(
                    requestID: result.requestID, bundleIdentifier: "com.example.crashy",
                    reason: .crashed, message: "killed by SIGSEGV", signal: SIGSEGV))
        client.close()
        try await served.result()
        #expect(await interruptions.next() == nil)
    }

    @Test func openURLIsAskedOfTheHandlerAndAnswered() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            let id = try FakeAppexd.next(connection).message.requestID!
            var answers: [Message] = []
            for url in ["https://allowed.example/page", "file:///etc/shadow"] {
                try connection.send(.openURL(OpenURL(requestID: id, url: url)))
                answers.append(try FakeAppexd.next(connection).message)
            }
            try connection.send(.requestOutcome(RequestOutcome(requestID: id, outcome: .completed)))
            try FakeAppexd.awaitEnd(connection)
            return answers
        }
        let asked = AskedURLs()
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host") { id, url in
            await asked.append(id, url)
            return url.hasPrefix("https://allowed.example/")
        }
        defer { client.close() }
        let result = try await client.beginRequest(bundleIdentifier: "com.example.links")
        #expect(result.outcome == .completed)
        client.close()
        let answers = try await served.result()
        #expect(
            answers == [
                .openURLResult(OpenURLResult(requestID: 1, accepted: true)),
                .openURLResult(OpenURLResult(requestID: 1, accepted: false)),
            ])
        #expect(
            await asked.all == [
                AskedURLs.Entry(id: 1, url: "https://allowed.example/page"),
                AskedURLs.Entry(id: 1, url: "file:///etc/shadow"),
            ])
    }

    @Test func withoutAHandlerEveryURLIsRefused() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            let id = try FakeAppexd.next(connection).message.requestID!
            try connection.send(.openURL(OpenURL(requestID: id, url: "https://example.com/")))
            let answer = try FakeAppexd.next(connection).message
            try connection.send(.requestOutcome(RequestOutcome(requestID: id, outcome: .completed)))
            try FakeAppexd.awaitEnd(connection)
            return answer
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        _ = try await client.beginRequest(bundleIdentifier: "com.example.links")
        client.close()
        #expect(try await served.result() == .openURLResult(OpenURLResult(requestID: 1, accepted: false)))
    }

    @Test func descriptorAttachmentsCrossInBothDirections() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            let frame = try FakeAppexd.next(connection)
            defer { frame.closeDescriptors() }
            guard case .hostBeginRequest(let begin) = frame.message, frame.descriptors.count == 1 else {
                throw FakeAppexd.Failure(description: "expected a HostBeginRequest with one descriptor")
            }
            let received = readAll(frame.descriptors[0])
            let reply = pipe(holding: "edited image bytes")
            defer { close(reply) }
            let item = ExtensionItem(attachments: [AppexWire.Attachment(typeIdentifiers: ["public.png"], content: .descriptor(index: 0))])
            try connection.send(
                .requestOutcome(RequestOutcome(requestID: begin.requestID, outcome: .completed, items: [item])),
                descriptors: [reply])
            try FakeAppexd.awaitEnd(connection)
            return (begin.items, received)
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let attachment = pipe(holding: "image bytes")
        defer { close(attachment) }
        let item = ExtensionItem(attachments: [
            AppexWire.Attachment(
                typeIdentifiers: ["public.png", "public.image"],
                content: .descriptor(index: 0), suggestedName: "photo.png")
        ])
        let result = try await client.beginRequest(
            bundleIdentifier: "com.example.editor", items: [item],
            descriptors: [attachment])
        // The caller's descriptor is still its own and open.
        #expect(fcntl(attachment, F_GETFD) != -1)
        #expect(result.descriptors.count == 1)
        #expect(result.items.first?.attachments.first?.content == .descriptor(index: 0))
        #expect(readAll(result.descriptors[0]) == "edited image bytes")
        result.closeDescriptors()
        client.close()
        let (items, received) = try await served.result()
        #expect(items == [item])
        #expect(received == "image bytes")
    }

    @Test func descriptorsMustMatchTheAttachments() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            try FakeAppexd.awaitEnd(connection)
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let stray = pipe(holding: "")
        defer { close(stray) }
        let error = #expect(throws: HostClientError.self) {
            try client.startRequest(bundleIdentifier: "com.example.editor", descriptors: [stray])
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("refer to 0 descriptors, 1 given") == true)
        // Refused before the state machine counted it: no request is left in flight.
        #expect(client.connectionState.requestsInFlight == 0)
        client.close()
        try await served.result()
    }
}

/// The open-URL requests a handler saw, in order.
actor AskedURLs {
    struct Entry: Equatable, Sendable {
        var id: UInt64
        var url: String
    }

    private(set) var all: [Entry] = []

    func append(_ id: UInt64, _ url: String) { all.append(Entry(id: id, url: url)) }
}
