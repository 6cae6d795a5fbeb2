// libFuzzer harness for the AppexWire decoder and connection state machine. Built with
// the AppexWire sources and FuzzEntry.swift into one module by `make fuzz-wire` (see
// Docs/protocol.md, "Fuzzing").
// Any input must decode to a message that re-encodes canonically, or fail with a WireError;
// a crash, a trap or a sanitizer report is a bug.
#if canImport(Glibc)
import Glibc
#endif

/// Frames to start from.
func fuzzSeeds() -> [[UInt8]] {
    let item = ExtensionItem(
        attributedTitle: "t", attributedContentText: "text",
        attachments: [
            Attachment(typeIdentifiers: ["public.url"], content: .inline(Array("https://e.x".utf8))),
            Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 0), suggestedName: "n"),
        ],
        userInfo: ["s": .string("v"), "i": .integer(1), "b": .bool(true), "d": .double(1.5), "x": .data([1])])
    let messages: [Message] = [
        .hello(Hello(bundleIdentifier: "com.example.c", pid: 1)),
        .refusal(Refusal(reason: .disabled, message: "m", requestID: 1, details: ["d"])),
        .ping(sequence: 1),
        .beginRequest(BeginRequest(requestID: 1, items: [item])),
        .cancelRequest(CancelRequest(requestID: 1, error: RequestError(domain: "d", code: 1, message: "m"))),
        .requestOutcome(
            RequestOutcome(
                requestID: 1, outcome: .completed, items: [item], reason: .crashed, cold: true,
                phases: [.init("spawn", microseconds: 1)])),
        .admin(AdminRequest(requestID: 2, command: .uninstall(bundleIdentifier: "b", removeData: true))),
        .adminResult(AdminResult(requestID: 2, extensions: [ExtensionInfo(bundleIdentifier: "b", extensionPoint: "p", enabled: true, version: "1")])),
    ]
    return messages.compactMap { try? WireCodec.encode($0) }
}

func fuzzInput(_ bytes: [UInt8]) {
    let message: Message
    do {
        message = try WireCodec.decode(bytes)
    } catch {
        precondition(!error.detail.isEmpty)
        return
    }
    // What decodes must re-encode, and re-encoding must be canonical.
    do {
        let frame = try WireCodec.encode(message)
        let again = try WireCodec.encode(WireCodec.decode(frame))
        precondition(again == frame, "re-encoding is not canonical")
    } catch {
        fatalError("a decoded message does not survive re-encoding: \(error)")
    }
    // Every role's state machine, with the message as sent and as received.
    for role in ConnectionRole.allCases {
        var s = ConnectionState(role: role)
        _ = try? s.didReceive(message)
        _ = try? s.willSend(message)
    }
}
