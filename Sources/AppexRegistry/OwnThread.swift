import Foundation

/// Runs work on a thread of its own and waits for it: what the work does to its thread (a
/// file-system identity taken for a moment) can never reach a thread shared with other work.
enum OwnThread {
    private final class Outcome<T>: @unchecked Sendable {
        // Written by the thread before it signals, read after the wait: never at once.
        var result: Result<T, any Error>?
    }

    static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            outcome.result = Result { try body() }
            done.signal()
        }
        thread.name = name
        thread.start()
        done.wait()
        return try outcome.result!.get()
    }
}
