import AppexExtensionKit
import Synchronization

/// Requests served at once take turns at the counter under a lock, so none reads a count
/// another is about to replace. A lock, not an actor: the handler is not isolated, so the SDK
/// runs it at once on the thread that read the request, where an actor's handler would first
/// wait for a thread of the cooperative pool to be woken (Docs/sdk.md).
final class SnapshotProvider: ExtensionRequestHandler {
    static let title = "Example Widget"
    static let counterPath = "Documents/widget"
    static let counterFile = "refresh-count"

    private struct State {
        /// The count as last written; read from the container on the first request only.
        var count: Int?
        /// The count's file, opened at the first request and kept.
        var file: CounterFile?
    }

    private let state = Mutex(State())

    func beginRequest(with context: ExtensionContext) async {
        let refreshed: Int
        do {
            refreshed = try state.withLock { try Self.nextCount(&$0) }
        } catch {
            context.cancelRequest(
                with: RequestError(
                    domain: "dev.appex.examples.widget", code: 1,
                    message: "cannot keep the refresh count: \(error)"))
            return
        }
        context.completeRequest(returningItems: [
            ExtensionItem(
                attributedTitle: Self.title,
                attributedContentText: "refreshed \(refreshed) \(refreshed == 1 ? "time" : "times")",
                userInfo: ["refreshCount": .integer(Int64(refreshed))]
            )
        ])
    }

    /// A memory warning costs the widget nothing to honour: the count is re-read when needed.
    func didReceiveMemoryWarning(level: MemoryWarning.Level) async {
        state.withLock { $0.count = nil }
    }

    private static func nextCount(_ state: inout State) throws -> Int {
        let file = try state.file ?? CounterFile(path: ExtensionContainer.directory(counterPath) + "/" + counterFile)
        state.file = file
        let current: Int
        if let count = state.count { current = count } else { current = try storedCount(at: file.path) }
        let next = current + 1
        try file.write(Array("\(next)\n".utf8))
        state.count = next
        return next
    }

    private static func storedCount(at path: String) throws(ContainerError) -> Int {
        guard let bytes = try ExtensionContainer.read(path) else { return 0 }
        return Int(String(decoding: bytes, as: UTF8.self).filter(\.isNumber)) ?? 0
    }
}
