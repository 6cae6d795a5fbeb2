import ArgumentParser
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The entry point of `appex-commands`, the full tool: the `appex` front (Sources/appex) runs
/// common `appex run` lines itself and hands every other command line here (Docs/architecture.md).
///
/// Not `AsyncParsableCommand.main()`: that one runs every command, synchronous or not, from
/// an async `main`, which hands the work to another thread and ends the main thread with
/// `pthread_exit`. In a static executable that exit unwinds the main thread's stack through
/// every frame description of the program (libgcc sorts them all first, ~50 ms); dynamically
/// linked it still costs a thread hop. Here the synchronous commands (run, validate, policy,
/// …) run on the main thread as they are parsed, and the asynchronous ones (request, top,
/// profile, …) on a task the main thread waits for, so no thread ever unwinds. Nothing here
/// uses the main queue or the main actor. Docs/launch-sequence.md, "Start-up".
@main
enum AppexMain {
    static func main() {
        let parsed: ParsableCommand
        do {
            parsed = try Appex.parseAsRoot()
        } catch {
            Appex.exit(withError: error)
        }
        if let command = parsed as? AsyncParsableCommand {
            runAsync(command)
        }
        var command = parsed
        do {
            try command.run()
        } catch {
            Appex.exit(withError: error)
        }
    }

    private static func runAsync(_ command: sending AsyncParsableCommand) -> Never {
        let finished = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        Task.detached {
            var command = command
            do { try await command.run() } catch { outcome.error = error }
            finished.signal()
        }
        finished.wait()
        if let error = outcome.error { Appex.exit(withError: error) }
        Appex.exit()
    }

    /// The async command's error, written by its task before it signals and read after the wait.
    private final class Outcome: @unchecked Sendable {
        var error: Error?
    }
}
