import AppexExtensionKit

/// An actor: requests served at once take turns at the counter, so none reads a count
/// another is about to replace.
actor SnapshotProvider: ExtensionRequestHandler {
    static let title = "Example Widget"
    static let counterPath = "Documents/widget"
    static let counterFile = "refresh-count"

    /// The count as last written; read from the container on the first request only.
    private var count: Int?
    /// The count's file, opened at the first request and kept.
    private var file: CounterFile?

    func beginRequest(with context: ExtensionContext) async {
        let refreshed: Int
        do {
            refreshed = try nextCount()
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
        count = nil
    }

    private func nextCount() throws -> Int {
        let file = try self.file ?? CounterFile(path: ExtensionContainer.directory(Self.counterPath) + "/" + Self.counterFile)
        self.file = file
        let current: Int
        if let count { current = count } else { current = try storedCount(at: file.path) }
        let next = current + 1
        try file.write(Array("\(next)\n".utf8))
        count = next
        return next
    }

    private func storedCount(at path: String) throws(ContainerError) -> Int {
        guard let bytes = try ExtensionContainer.read(path) else { return 0 }
        return Int(String(decoding: bytes, as: UTF8.self).filter(\.isNumber)) ?? 0
    }
}
