import AppexExtensionKit

#if canImport(Glibc)
import Glibc
#endif

/// Commands (the first item's content text; arguments after a space):
/// - `echo`: returns the input items as they came (inline attachments included).
/// - `read`: returns one item per attachment, its bytes (via `data(for:)`) as content text.
/// - `open URL`: asks the host to open URL; returns "opened URL: true|false".
/// - `hold`: does not answer; a RequestWillExpire for it answers "will-expire MS".
/// - `spin`: keeps its thread busy, never yielding, until the host cancels the request.
/// - `wait-cancel`: waits to be cancelled; journals the onCancel hook and, once its task sees
///   the cancellation, whether a late completeRequest was refused.
/// - `twice`: answers "first", then tries to answer again and journals the second's result.
/// - `sleep MS`: answers "slept" after MS milliseconds.
/// - `return-pipe TEXT`: returns one attachment whose descriptor is a pipe holding TEXT.
/// - `bad-reply`: returns an attachment naming a descriptor it does not pass.
/// - `report`: returns the journal, one line per item.
actor CommandHandler: ExtensionRequestHandler {
    private var journal: [String] = []

    private func note(_ line: String) { journal.append(line) }

    /// Not isolated, so that the SDK runs it where it starts handlers (the reader's thread):
    /// `spin` then holds that thread, and the SDK's other reader must take over reading. The
    /// other commands go on on the actor.
    nonisolated func beginRequest(with context: ExtensionContext) async {
        let command = context.inputItems.first?.attributedContentText ?? ""
        if Self.split(command).0 == "spin" {
            Self.spin(until: context)
            return
        }
        await serve(command, context)
    }

    private func serve(_ command: String, _ context: ExtensionContext) async {
        let (verb, argument) = Self.split(command)
        switch verb {
        case "echo":
            context.completeRequest(returningItems: context.inputItems)
        case "read":
            var items: [ExtensionItem] = []
            for attachment in context.inputItems.flatMap(\.attachments) {
                do {
                    let bytes = try context.data(for: attachment)
                    items.append(ExtensionItem(attributedContentText: String(decoding: bytes, as: UTF8.self)))
                } catch {
                    items.append(ExtensionItem(attributedContentText: "error: \(error)"))
                }
            }
            context.completeRequest(returningItems: items)
        case "open":
            let accepted = await context.open(argument)
            context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "opened \(argument): \(accepted)")])
        case "hold":
            break
        case "wait-cancel":
            await waitForCancel(context)
        case "twice":
            let first = context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "first")])
            let second = context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "second")])
            note("twice: first \(first), second \(second)")
        case "sleep":
            try? await Task.sleep(for: .milliseconds(Int(argument) ?? 0))
            context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "slept")])
        case "return-pipe":
            returnPipe(holding: argument, context)
        case "bad-reply":
            let item = ExtensionItem(attachments: [Attachment(typeIdentifiers: [TypeIdentifier.data], content: .descriptor(index: 0))])
            note("bad-reply: completeRequest \(context.completeRequest(returningItems: [item]))")
        case "report":
            context.completeRequest(returningItems: journal.map { ExtensionItem(attributedContentText: $0) })
        default:
            context.cancelRequest(with: RequestError(domain: "dev.appex.sdk-test", code: 1, message: "unknown command \"\(command)\""))
        }
    }

    func didReceiveMemoryWarning(level: MemoryWarning.Level) async {
        note("memory-warning \(level == .critical ? "critical" : "warning")")
    }

    func requestWillExpire(context: ExtensionContext, millisecondsLeft: UInt32) async {
        context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "will-expire \(millisecondsLeft)")])
    }

    private func waitForCancel(_ context: ExtensionContext) async {
        context.onCancel { error in
            Task { await self.note("onCancel: \(error.domain) \(error.code)") }
        }
        // Cancelled along with the request, so the sleep ends early.
        try? await Task.sleep(for: .seconds(60))
        let late = context.completeRequest(returningItems: [ExtensionItem(attributedContentText: "late")])
        note("wait-cancel: task cancelled \(Task.isCancelled), isCancelled \(context.isCancelled), late answer \(late)")
    }

    private func returnPipe(holding text: String, _ context: ExtensionContext) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            context.cancelRequest(with: RequestError(domain: "dev.appex.sdk-test", code: 2, message: "pipe failed"))
            return
        }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        let item = ExtensionItem(attachments: [Attachment(typeIdentifiers: [TypeIdentifier.plainText], content: .descriptor(index: 0))])
        context.completeRequest(returningItems: [item], descriptors: [ends[0]])
        close(ends[0])
    }

    /// Busy until cancelled: no await, so the cooperative thread running it is not given back.
    nonisolated static func spin(until context: ExtensionContext) {
        while !context.isCancelled {}
    }

    static func split(_ command: String) -> (String, String) {
        guard let space = command.firstIndex(of: " ") else { return (command, "") }
        return (String(command[..<space]), String(command[command.index(after: space)...]))
    }
}
