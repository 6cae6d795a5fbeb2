import AppexTestSupport
import AppexWire
import AppexWireIO
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Probe support shared by the probe suites: starting it and instructing it.
enum Probe {
    static let identifier = "dev.appex.examples.host.probe"

    /// A running probe, checked in. `bundlePath` is where it looks for probe.conf.
    static func start(bundlePath: String? = nil, checkIn: Bool = true) throws -> ExtensionProcess {
        let process = try ExtensionProcess(
            BuiltProducts.path("appex-probe-extension"),
            bundleIdentifier: identifier, bundlePath: bundlePath)
        if checkIn { try process.checkIn() }
        return process
    }

    /// An input item carrying an instruction (Docs/probe-extension.md).
    static func item(_ action: String, _ argument: String? = nil, text: String? = nil) -> ExtensionItem {
        var info: [String: UserInfoValue] = ["probe.action": .string(action)]
        if let argument { info["probe.arg"] = .string(argument) }
        return ExtensionItem(attributedContentText: text, userInfo: info)
    }

    /// The content texts of a CompleteRequest answering `id`; nil for any other message.
    static func texts(_ message: Message, _ id: UInt64) -> [String?]? {
        guard case .completeRequest(let complete) = message, complete.requestID == id else { return nil }
        return complete.items.map(\.attributedContentText)
    }

    /// The one content text of a CompleteRequest answering `id`.
    static func text(_ message: Message, _ id: UInt64) -> String? {
        guard let texts = texts(message, id), texts.count == 1 else { return nil }
        return texts[0]
    }

    static func cancelError(_ message: Message, _ id: UInt64) -> RequestError? {
        guard case .cancelRequest(let cancel) = message, cancel.requestID == id else { return nil }
        return cancel.error
    }
}

/// System call numbers the tests name (Glibc's SYS_* macros are not imported into Swift).
enum SyscallNumber {
    #if arch(x86_64)
    static let openat = 257, exitGroup = 231
    #elseif arch(arm64)
    static let openat = 56, exitGroup = 94
    #endif
}

/// Each `probe.action` of the probe extension and what can be observed of it from outside:
/// answers, exit statuses, resident memory, silence on the channel.
@Suite struct ProbeActionTests {
    @Test func echoIsTheDefaultAction() throws {
        let probe = try Probe.start()
        #expect(Probe.text(try probe.request(1, [ExtensionItem(attributedContentText: "plain")]), 1) == "plain")
        #expect(Probe.text(try probe.request(2, [Probe.item("echo", text: "asked for")]), 2) == "asked for")
        #expect(Probe.text(try probe.request(3, []), 3) == "")
    }

    @Test func sleepKeepsAnsweringPingsAndAppexdCanCancelIt() throws {
        let probe = try Probe.start()
        try probe.connection.send(.beginRequest(BeginRequest(requestID: 1, items: [Probe.item("sleep", "600000")])))
        try probe.connection.send(.ping(sequence: 1))
        #expect(try probe.message().message == .pong(sequence: 1))
        try probe.connection.send(.cancelRequest(CancelRequest(requestID: 1, error: RequestError(domain: "host", code: 1))))
        let answer = try probe.message().message
        #expect(
            Probe.cancelError(answer, 1)
                == RequestError(
                    domain: "dev.appex.probe", code: Int64(ECANCELED),
                    message: "cancelled by appexd"))

        let start = ContinuousClock.now
        let slept = try probe.request(2, [Probe.item("sleep", "40")])
        #expect(Probe.text(slept, 2) == "slept 40 ms")
        #expect(ContinuousClock.now - start >= .milliseconds(40))  // a sleep never ends early
    }

    @Test func allocateGrowsResidentMemoryByAboutThatMuchAndHoldsIt() throws {
        let probe = try Probe.start()
        let before = try ProcStatus.residentKiB(probe.pid)
        #expect(Probe.text(try probe.request(1, [Probe.item("allocate", "64")]), 1) == "allocated 64 MiB, holding 64 MiB")
        let after = try ProcStatus.residentKiB(probe.pid)
        #expect((63 * 1024...68 * 1024).contains(after - before), "VmRSS \(before) -> \(after) KiB")

        #expect(Probe.text(try probe.request(2, [Probe.item("allocate", "16")]), 2) == "allocated 16 MiB, holding 80 MiB")
        let more = try ProcStatus.residentKiB(probe.pid)
        #expect((15 * 1024...20 * 1024).contains(more - after), "VmRSS \(after) -> \(more) KiB")
    }

    /// spin and hang stop the only thread, so a ping goes unanswered; the test kills the probe.
    @Test(arguments: ["spin", "hang"])
    func stopsAnsweringPings(_ action: String) throws {
        let probe = try Probe.start()
        try probe.connection.send(.ping(sequence: 1))
        #expect(try probe.message().message == .pong(sequence: 1))  // alive before

        try probe.connection.send(.beginRequest(BeginRequest(requestID: 1, items: [Probe.item(action)])))
        try probe.connection.send(.ping(sequence: 2))
        #expect(try probe.isSilent(for: 300))
        if action == "spin" {
            let (state, ticks) = try ProcStatus.state(probe.pid)
            #expect(state == "R")
            // Burning CPU: its user time keeps growing while it ignores us.
            var later = ticks
            for _ in 0..<200 where later == ticks {
                usleep(10_000)
                later = try ProcStatus.state(probe.pid).userTicks
            }
            #expect(later > ticks)
        } else {
            #expect(try ProcStatus.state(probe.pid).state == "S")
        }
        #expect(Termination(probe.kill()) == .signalled(SIGKILL))
    }

    @Test(arguments: [("crash", SIGSEGV), ("abort", SIGABRT)])
    func diesByTheSignal(_ action: String, _ signal: Int32) throws {
        let probe = try Probe.start()
        try probe.connection.send(.beginRequest(BeginRequest(requestID: 1, items: [Probe.item(action)])))
        try probe.expectEndOfStream()
        #expect(Termination(try probe.waitForExit()) == .signalled(signal))
    }

    @Test func exitLeavesWithTheStatusGiven() throws {
        let probe = try Probe.start()
        try probe.connection.send(.beginRequest(BeginRequest(requestID: 1, items: [Probe.item("exit", "7")])))
        try probe.expectEndOfStream()
        #expect(Termination(try probe.waitForExit()) == .exited(7))
    }

    /// Outside a sandbox the calls reach the kernel and fail harmlessly with their own errno.
    @Test(arguments: [
        ("openat", "errno=\(ENOENT)"), ("\(SyscallNumber.openat)", "errno=\(ENOENT)"), ("mkdirat", "errno=\(ENOENT)"),
        ("kill", "errno=\(ESRCH)"), ("unshare", "errno=\(EINVAL)"), ("setns", "errno=\(EBADF)"),
        ("getpid", "ok"), ("socket", "ok"), ("1024", "errno=\(ENOSYS)"),
    ])
    func syscallReportsTheErrno(_ call: String, _ expected: String) throws {
        let probe = try Probe.start()
        #expect(Probe.text(try probe.request(1, [Probe.item("syscall", call)]), 1) == expected)
    }

    @Test func syscallRefusesCallsItCannotMakeHarmlessly() throws {
        let probe = try Probe.start()
        for (id, call) in [(UInt64(1), "frobnicate"), (2, "\(SyscallNumber.exitGroup)"), (3, "-1")] {
            let error = Probe.cancelError(try probe.request(id, [Probe.item("syscall", call)]), id)
            #expect(error?.domain == "dev.appex.probe")
            #expect(error?.code == Int64(EINVAL))
            #expect(error?.message?.contains("no harmless way to make syscall \"\(call)\"") == true, "\(String(describing: error))")
        }
    }

    @Test func cancelAnswersWithTheCodeGiven() throws {
        let probe = try Probe.start()
        let answer = try probe.request(1, [Probe.item("cancel", "-42")])
        #expect(
            Probe.cancelError(answer, 1)
                == RequestError(
                    domain: "dev.appex.probe", code: -42,
                    message: "cancelled on instruction"))
    }

    @Test func openURLWaitsForTheResult() throws {
        let probe = try Probe.start()
        for (id, accepted) in [(UInt64(1), true), (2, false)] {
            let url = "https://example.com/\(id)"
            let asked = try probe.request(id, [Probe.item("open-url", url)])
            #expect(asked == .openURL(OpenURL(requestID: id, url: url)))
            try probe.connection.send(.ping(sequence: id))  // still served while it waits
            #expect(try probe.message().message == .pong(sequence: id))
            try probe.connection.send(.openURLResult(OpenURLResult(requestID: id, accepted: accepted)))
            #expect(Probe.text(try probe.message().message, id) == (accepted ? "accepted" : "refused"))
        }
    }

    @Test func fdsReturnsWhatEachDescriptorHolds() throws {
        let probe = try Probe.start()
        let openBefore = probe.openDescriptors
        let stream = try AttachmentSource.stream(Array("through a socket".utf8))
        let file = try AttachmentSource.file(Array("from a file".utf8))
        let binary = try AttachmentSource.file([0x00, 0xff, 0x10])
        defer { for fd in [stream, file, binary] { close(fd) } }

        var first = Probe.item("fds")
        first.attachments = [
            AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .descriptor(index: 0)),
            AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .inline(Array("inline".utf8))),
        ]
        let second = ExtensionItem(attachments: [
            AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .descriptor(index: 2)),
            AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 1)),
        ])
        let answer = try probe.request(1, [first, second], descriptors: [stream, binary, file])
        guard case .completeRequest(let complete) = answer else {
            Issue.record("expected CompleteRequest, got \(answer)")
            return
        }
        // In attachment order, inline attachments skipped; bytes that are not text come back as data.
        #expect(complete.items.map(\.attributedContentText) == ["through a socket", "from a file", nil])
        #expect(
            complete.items.last?.attachments == [
                AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .inline([0x00, 0xff, 0x10]))
            ])
        #expect(try probe.openDescriptorsAfterRoundTrip(sequence: 1) == openBefore)  // it kept none of them
    }

    /// A ping sent before a request is answered before it, if at all: the answer arriving first
    /// shows the ping was ignored, with no timing involved.
    @Test func ignorePingsKeepsServingRequests() throws {
        let probe = try Probe.start()
        try probe.connection.send(.ping(sequence: 1))
        #expect(try probe.message().message == .pong(sequence: 1))
        #expect(Probe.text(try probe.request(1, [Probe.item("ignore-pings")]), 1) == "ignoring pings")
        try probe.connection.send(.ping(sequence: 2))
        #expect(Probe.text(try probe.request(2, [Probe.item("echo", text: "still here")]), 2) == "still here")
    }

    @Test func countsMemoryWarningsAndExpiryNotices() throws {
        let probe = try Probe.start()
        #expect(Probe.text(try probe.request(1, [Probe.item("memory-warnings")]), 1) == "memory-warnings=0 will-expire=0")
        try probe.connection.send(.beginRequest(BeginRequest(requestID: 2, items: [Probe.item("sleep", "600000")])))
        try probe.connection.send(.requestWillExpire(RequestWillExpire(requestID: 2, millisecondsLeft: 500)))
        try probe.connection.send(.memoryWarning(MemoryWarning(level: .warning)))
        try probe.connection.send(.memoryWarning(MemoryWarning(level: .critical)))
        try probe.connection.send(.cancelRequest(CancelRequest(requestID: 2, error: RequestError(domain: "host", code: 1))))
        #expect(Probe.cancelError(try probe.message().message, 2)?.code == Int64(ECANCELED))
        #expect(Probe.text(try probe.request(3, [Probe.item("memory-warnings")]), 3) == "memory-warnings=2 will-expire=1")
    }

    @Test func terminateCancelsWhatIsWaitingAndExits() throws {
        let probe = try Probe.start()
        try probe.connection.send(.beginRequest(BeginRequest(requestID: 1, items: [Probe.item("sleep", "600000")])))
        #expect(try probe.request(2, [Probe.item("open-url", "https://example.com")]) == .openURL(OpenURL(requestID: 2, url: "https://example.com")))
        try probe.connection.send(.terminate(Terminate(reason: .shutdown)))
        var cancelled: Set<UInt64> = []
        for _ in 0..<2 {
            if case .cancelRequest(let c) = try probe.message().message, c.error.message == "terminating" {
                cancelled.insert(c.requestID)
            }
        }
        #expect(cancelled == [1, 2])
        try probe.expectEndOfStream()
        #expect(Termination(try probe.waitForExit()) == .exited(0))
    }

    @Test func badInstructionsAreAnsweredWithAnError() throws {
        let probe = try Probe.start()
        let cases: [(ExtensionItem, String)] = [
            (Probe.item("frobnicate"), "unknown probe.action \"frobnicate\""),
            (Probe.item("sleep", "soon"), "probe.action sleep wants probe.arg milliseconds"),
            (Probe.item("allocate"), "probe.action allocate wants probe.arg MiB from 1 to 1048576, got none"),
            (ExtensionItem(userInfo: ["probe.action": .integer(3)]), "probe.action must have a string value"),
        ]
        for (index, (item, says)) in cases.enumerated() {
            let id = UInt64(index + 1)
            let error = Probe.cancelError(try probe.request(id, [item]), id)
            #expect(error?.code == Int64(EINVAL))
            #expect(error?.message?.contains(says) == true, "\(String(describing: error))")
        }
        // It is still serving.
        #expect(Probe.text(try probe.request(9, [Probe.item("echo", text: "ok")]), 9) == "ok")
    }

    @Test func anotherProtocolVersionGetsVersionMismatch() throws {
        let probe = try Probe.start(checkIn: false)
        _ = try probe.message()  // its Hello
        try probe.connection.socket.send(.hello(Hello(protocolVersion: 2, bundleIdentifier: "appexd", pid: getpid())))
        guard case .refusal(let refusal) = try probe.message().message else {
            Issue.record("expected a Refusal")
            return
        }
        #expect(refusal.reason == .versionMismatch)
        #expect(refusal.message == "version mismatch: appexd speaks 2, the probe 1")
        #expect(Termination(try probe.waitForExit()) == .exited(1))
    }

    @Test func aMalformedFrameGetsARefusalAndAnExitStatusOfOne() throws {
        let probe = try Probe.start()
        // A MemoryWarning of level 3: a bad enum.
        let frame: [UInt8] = Array("APXW".utf8) + [1, 0, 0x15, 0, 0, 0, 0, 0, 7, 0, 0, 0] + [1, 0, 1, 0, 0, 0, 3]
        try probe.connection.socket.send(frame: frame)
        guard case .refusal(let refusal) = try probe.message().message else {
            Issue.record("expected a Refusal")
            return
        }
        #expect(refusal.reason == .protocolError)
        #expect(refusal.message == "bad enum in MemoryWarning.level at offset 22: 3 (1 or 2)")
        try probe.expectEndOfStream()
        #expect(Termination(try probe.waitForExit()) == .exited(1))
        #expect(probe.log.contains("probe: protocol-error: bad enum in MemoryWarning.level"))
    }
}
