/// One value (or the error that stands for it) passed once from one thread to another that
/// waits for it. `ExtensionRun.prepare` tells its sandbox-build thread this way that the
/// container's directories exist: that thread plans the view meanwhile and waits only at
/// the init's clone, whose mounts need them.
///
/// Whoever made a `Handoff` must deliver or fail it on every way out, or a waiter waits
/// forever; a second delivery is ignored.
final class Handoff<Value: Sendable>: @unchecked Sendable {
    private let mutex = HeapMutex()
    private var result: Result<Value, any Error>?

    init() {}

    func deliver(_ value: Value) { settle(.success(value)) }

    func fail(_ error: any Error) { settle(.failure(error)) }

    /// Blocks until the value is delivered, then returns it (or throws the error it failed with).
    func wait() throws -> Value {
        mutex.lock()
        defer { mutex.unlock() }
        while result == nil { mutex.wait() }
        return try result!.get()
    }

    private func settle(_ r: Result<Value, any Error>) {
        mutex.lock()
        defer { mutex.unlock() }
        guard result == nil else { return }
        result = r
        mutex.broadcast()
    }
}
