import Testing

@testable import AppexWire

/// Both ends of a connection, driven in step: every message is checked by its sender's state
/// (willSend) and its receiver's (didReceive).
struct Pair {
    var a: ConnectionState
    var b: ConnectionState

    init(_ role: ConnectionRole) {
        a = ConnectionState(role: role)
        b = ConnectionState(role: role.peer)
    }

    /// Sends from the end with role `from`; returns the receiver's disposition.
    @discardableResult
    mutating func send(_ m: Message, from: ConnectionRole) throws(WireError) -> ConnectionState.Disposition {
        if a.role == from {
            try a.willSend(m)
            return try b.didReceive(m)
        } else {
            try b.willSend(m)
            return try a.didReceive(m)
        }
    }

    static func open(_ peer: ConnectionRole) throws -> Pair {
        var p = Pair(peer)
        try p.send(.hello(Hello(bundleIdentifier: "com.example.e", pid: 10)), from: peer)
        try p.send(.hello(Hello(bundleIdentifier: "appexd", pid: 1)), from: peer.peer)
        return p
    }
}

/// The kind of WireError `body` throws, nil when it succeeds; any other error fails the test.
func kind(_ body: () throws -> Void) -> WireError.Kind? {
    do {
        try body()
        return nil
    } catch let error as WireError {
        return error.kind
    } catch {
        Issue.record("not a WireError: \(error)")
        return nil
    }
}

@Suite struct ConnectionStateTests {
    let item = [Samples.plainItem]
    let hello = Message.hello(Hello(bundleIdentifier: "com.example.e", pid: 10))

    @Test func extensionRequestLifeCycle() throws {
        var p = try Pair.open(.extension)
        #expect(p.a.isOpen && p.b.isOpen)
        try p.send(.ping(sequence: 1), from: .supervisor)
        try p.send(.pong(sequence: 1), from: .extension)
        try p.send(.beginRequest(BeginRequest(requestID: 1, items: item)), from: .supervisor)
        try p.send(.openURL(OpenURL(requestID: 1, url: "https://example.com")), from: .extension)
        try p.send(.openURLResult(OpenURLResult(requestID: 1, accepted: true)), from: .supervisor)
        try p.send(.memoryWarning(MemoryWarning(level: .warning)), from: .supervisor)
        try p.send(.requestWillExpire(RequestWillExpire(requestID: 1, millisecondsLeft: 100)), from: .supervisor)
        try p.send(.completeRequest(CompleteRequest(requestID: 1, items: item)), from: .extension)
        #expect(p.a.requestsInFlight == 0 && p.b.requestsInFlight == 0)
        try p.send(.beginRequest(BeginRequest(requestID: 2, items: [])), from: .supervisor)
        try p.send(.cancelRequest(CancelRequest(requestID: 2, error: RequestError(domain: "d", code: 1))), from: .extension)
        try p.send(.terminate(Terminate(reason: .idleExit)), from: .supervisor)
        #expect(p.a.terminating && p.b.terminating)
    }

    /// A ScheduleTransfer belongs to a request in flight and is answered once; its answer may
    /// cross the request's end (stale); TransferEvents begins a request of its own.
    @Test func transfersOnTheExtensionChannel() throws {
        var p = try Pair.open(.extension)
        let download = TransferRequest(kind: .download, url: "http://h/", appGroup: "g", fileName: "f")
        try p.send(.beginRequest(BeginRequest(requestID: 1, items: [])), from: .supervisor)
        try p.send(.scheduleTransfer(ScheduleTransfer(requestID: 1, token: 1, sessionIdentifier: "s", transfer: download)), from: .extension)
        try p.send(.transferScheduled(TransferScheduled(requestID: 1, token: 1, transferID: 5)), from: .supervisor)
        #expect(kind { try p.a.didReceive(.transferScheduled(TransferScheduled(requestID: 1, token: 2))) } == .unsolicited)
        try p.send(.scheduleTransfer(ScheduleTransfer(requestID: 1, token: 2, sessionIdentifier: "s", transfer: download)), from: .extension)
        try p.send(.completeRequest(CompleteRequest(requestID: 1)), from: .extension)
        #expect(try p.a.didReceive(.transferScheduled(TransferScheduled(requestID: 1, token: 2, transferID: 6))) == .stale)
        #expect(
            kind { try p.a.willSend(.scheduleTransfer(ScheduleTransfer(requestID: 1, token: 3, sessionIdentifier: "s", transfer: download))) }
                == .unknownRequest)
        try p.send(.transferEvents(TransferEvents(requestID: 2, sessionIdentifier: "s", bundleIdentifier: "e", results: [])), from: .supervisor)
        #expect(p.a.requestsInFlight == 1)
        try p.send(.completeRequest(CompleteRequest(requestID: 2)), from: .extension)
        #expect(p.a.requestsInFlight == 0)
    }

    @Test func controlRequestAndAdminLifeCycle() throws {
        var p = try Pair.open(.host)
        try p.send(.hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: "x", items: item)), from: .host)
        try p.send(.openURL(OpenURL(requestID: 1, url: "mailto:a@b")), from: .service)
        try p.send(.openURLResult(OpenURLResult(requestID: 1, accepted: false)), from: .host)
        try p.send(.interruption(Interruption(requestID: 1, bundleIdentifier: "x", reason: .crashed, signal: 11)), from: .service)
        try p.send(.requestOutcome(RequestOutcome(requestID: 1, outcome: .failed, reason: .crashed)), from: .service)
        try p.send(.admin(AdminRequest(requestID: 2, command: .list)), from: .host)
        try p.send(.adminResult(AdminResult(requestID: 2, extensions: [])), from: .service)
        try p.send(.hostBeginRequest(HostBeginRequest(requestID: 3, bundleIdentifier: "y", items: [])), from: .host)
        try p.send(.refusal(Refusal(reason: .disabled, requestID: 3)), from: .service)
        #expect(p.a.requestsInFlight == 0)
        #expect(p.a.isOpen)
    }

    @Test func beginRequestBeforeHelloIsOutOfOrder() {
        var s = ConnectionState(role: .extension)
        #expect(kind { try s.didReceive(.beginRequest(BeginRequest(requestID: 1, items: []))) } == .outOfOrder)
        var d = ConnectionState(role: .service)
        #expect(kind { try d.didReceive(.hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: "x", items: []))) } == .outOfOrder)
    }

    @Test func nothingButHelloUntilBothHellos() throws {
        var p = Pair(.host)
        try p.send(hello, from: .host)
        // The host must wait for appexd's Hello.
        #expect(kind { try p.send(.admin(AdminRequest(requestID: 1, command: .list)), from: .host) } == .outOfOrder)
    }

    @Test func appexdDoesNotSpeakFirst() {
        var s = ConnectionState(role: .supervisor)
        #expect(kind { try s.willSend(hello) } == .outOfOrder)
        var e = ConnectionState(role: .extension)
        #expect(kind { try e.didReceive(hello) } == .outOfOrder)
    }

    @Test func secondHelloIsOutOfOrder() throws {
        var p = try Pair.open(.extension)
        #expect(kind { try p.send(hello, from: .extension) } == .outOfOrder)
        var s = ConnectionState(role: .supervisor)
        try s.didReceive(hello)
        #expect(kind { try s.didReceive(hello) } == .outOfOrder)
    }

    @Test func versionMismatchIsRefused() throws {
        var s = ConnectionState(role: .supervisor)
        let v2 = Message.hello(Hello(protocolVersion: 2, bundleIdentifier: "x", pid: 1))
        #expect(kind { try s.didReceive(v2) } == .versionMismatch)
        // appexd may still say why, and then nothing else passes.
        try s.willSend(.refusal(Refusal(reason: .versionMismatch, message: "appexd speaks 1")))
        #expect(kind { try s.willSend(.ping(sequence: 1)) } == .outOfOrder)
    }

    @Test func extensionsFirstMessageMustBeHello() {
        var s = ConnectionState(role: .supervisor)
        #expect(kind { try s.didReceive(.refusal(Refusal(reason: "no"))) } == .outOfOrder)
        #expect(kind { try s.didReceive(.completeRequest(CompleteRequest(requestID: 1))) } == .outOfOrder)
    }

    @Test func completeForUnknownRequest() throws {
        var p = try Pair.open(.extension)
        #expect(kind { try p.b.didReceive(.completeRequest(CompleteRequest(requestID: 7))) } == .unknownRequest)
        try p.send(.beginRequest(BeginRequest(requestID: 7, items: [])), from: .supervisor)
        try p.send(.completeRequest(CompleteRequest(requestID: 7)), from: .extension)
        // Answered twice.
        #expect(kind { try p.b.didReceive(.completeRequest(CompleteRequest(requestID: 7))) } == .unknownRequest)
        #expect(kind { try p.b.didReceive(.openURL(OpenURL(requestID: 7, url: "x:"))) } == .unknownRequest)
    }

    @Test func messagesFromTheWrongEnd() throws {
        var p = try Pair.open(.extension)
        #expect(kind { try p.b.didReceive(.beginRequest(BeginRequest(requestID: 1, items: []))) } == .wrongSender)
        #expect(kind { try p.a.didReceive(.completeRequest(CompleteRequest(requestID: 1))) } == .wrongSender)
        #expect(kind { try p.a.didReceive(.hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: "x", items: []))) } == .wrongSender)
        var c = try Pair.open(.host)
        #expect(kind { try c.b.didReceive(.memoryWarning(MemoryWarning(level: .warning))) } == .wrongSender)
        #expect(kind { try c.b.didReceive(.refusal(Refusal(reason: "x", requestID: 1))) } == .wrongSender)
    }

    @Test func requestIDsIncreaseStrictly() throws {
        var p = try Pair.open(.host)
        #expect(kind { try p.send(.admin(AdminRequest(requestID: 0, command: .list)), from: .host) } == .requestIDNotIncreasing)
        try p.send(.admin(AdminRequest(requestID: 5, command: .list)), from: .host)
        #expect(kind { try p.send(.admin(AdminRequest(requestID: 5, command: .list)), from: .host) } == .requestIDNotIncreasing)
        #expect(kind { try p.send(.admin(AdminRequest(requestID: 4, command: .list)), from: .host) } == .requestIDNotIncreasing)
    }

    @Test func answersMatchTheKindOfRequest() throws {
        var p = try Pair.open(.host)
        try p.send(.admin(AdminRequest(requestID: 1, command: .list)), from: .host)
        #expect(kind { try p.send(.requestOutcome(RequestOutcome(requestID: 1, outcome: .completed)), from: .service) } == .unknownRequest)
        #expect(kind { try p.send(.hostCancelRequest(HostCancelRequest(requestID: 1)), from: .host) } == .unknownRequest)
    }

    @Test func crossingMessagesAreStaleNotErrors() throws {
        var p = try Pair.open(.extension)
        try p.send(.beginRequest(BeginRequest(requestID: 1, items: [])), from: .supervisor)
        try p.send(.completeRequest(CompleteRequest(requestID: 1)), from: .extension)
        // appexd's cancel and will-expire crossed the completion on the wire.
        let cancel = Message.cancelRequest(CancelRequest(requestID: 1, error: RequestError(domain: "appex", code: 1)))
        #expect(try p.a.didReceive(cancel) == .stale)
        #expect(try p.a.didReceive(.requestWillExpire(RequestWillExpire(requestID: 1, millisecondsLeft: 5))) == .stale)
        #expect(try p.a.didReceive(.openURLResult(OpenURLResult(requestID: 1, accepted: true))) == .stale)
        // A request never begun is still an error.
        #expect(kind { try p.a.didReceive(.requestWillExpire(RequestWillExpire(requestID: 2, millisecondsLeft: 5))) } == .unknownRequest)

        var c = try Pair.open(.host)
        try c.send(.hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: "x", items: [])), from: .host)
        try c.send(.requestOutcome(RequestOutcome(requestID: 1, outcome: .completed)), from: .service)
        #expect(try c.send(.hostCancelRequest(HostCancelRequest(requestID: 1)), from: .host) == .stale)
    }

    @Test func appexdCancelKeepsTheRequestUntilAnswered() throws {
        var p = try Pair.open(.extension)
        try p.send(.beginRequest(BeginRequest(requestID: 1, items: [])), from: .supervisor)
        try p.send(.cancelRequest(CancelRequest(requestID: 1, error: RequestError(domain: "appex", code: 1))), from: .supervisor)
        #expect(p.b.isInFlight(1))
        try p.send(.cancelRequest(CancelRequest(requestID: 1, error: RequestError(domain: "appex", code: 1))), from: .extension)
        #expect(!p.b.isInFlight(1))
    }

    @Test func unsolicitedAnswers() throws {
        var p = try Pair.open(.extension)
        #expect(kind { try p.a.didReceive(.pong(sequence: 3)) } == .unsolicited)
        try p.send(.beginRequest(BeginRequest(requestID: 1, items: [])), from: .supervisor)
        #expect(kind { try p.a.didReceive(.openURLResult(OpenURLResult(requestID: 1, accepted: true))) } == .unsolicited)
        #expect(kind { try p.a.willSend(.pong(sequence: 9)) } == .unsolicited)
    }

    @Test func boundedBookkeeping() throws {
        var p = try Pair.open(.extension)
        for id in 1...UInt64(WireLimits.requestsInFlight) {
            try p.send(.beginRequest(BeginRequest(requestID: id, items: [])), from: .supervisor)
        }
        #expect(kind { try p.send(.beginRequest(BeginRequest(requestID: 1000, items: [])), from: .supervisor) } == .tooManyInFlight)
        for _ in 0..<WireLimits.openURLsPerRequest {
            try p.send(.openURL(OpenURL(requestID: 1, url: "x:")), from: .extension)
        }
        #expect(kind { try p.send(.openURL(OpenURL(requestID: 1, url: "x:")), from: .extension) } == .tooManyInFlight)
        for s in 0..<UInt64(WireLimits.pingsOutstanding) { try p.send(.ping(sequence: s), from: .supervisor) }
        #expect(kind { try p.a.didReceive(.ping(sequence: 99)) } == .tooManyInFlight)
    }

    @Test func noRequestAfterTerminate() throws {
        var p = try Pair.open(.extension)
        try p.send(.beginRequest(BeginRequest(requestID: 1, items: [])), from: .supervisor)
        try p.send(.terminate(Terminate(reason: .shutdown, graceMilliseconds: 100)), from: .supervisor)
        #expect(kind { try p.a.didReceive(.beginRequest(BeginRequest(requestID: 2, items: []))) } == .outOfOrder)
        // The request in flight may still finish.
        try p.send(.completeRequest(CompleteRequest(requestID: 1)), from: .extension)
    }

    @Test func nothingFollowsAConnectionRefusal() throws {
        var p = Pair(.host)
        try p.send(hello, from: .host)
        try p.send(.refusal(Refusal(reason: .notAuthorized, message: "uid 1000 may not act as a host")), from: .service)
        #expect(kind { try p.a.didReceive(.hello(Hello(bundleIdentifier: "appexd", pid: 1))) } == .outOfOrder)
    }
}
