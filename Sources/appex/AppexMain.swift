import AppexSandbox
import ArgumentParser
import CAppexLauncher
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The entry point. Not `AsyncParsableCommand.main()`: that one runs every command, synchronous
/// or not, from an async `main`, which hands the work to another thread and ends the main
/// thread with `pthread_exit`. In a static executable that exit unwinds the main thread's stack
/// through every frame description of the program (libgcc sorts them all first, ~50 ms for
/// appex); dynamically linked it still costs a thread hop on every `appex run`. Here the
/// synchronous commands (run, validate, policy, …) run on the main thread as they are parsed,
/// and the asynchronous ones (request, top, profile, …) on a task the main thread waits for,
/// so no thread ever unwinds. Nothing in appex uses the main queue or the main actor.
/// Docs/launch-sequence.md, "Start-up".
@main
enum AppexMain {
    static func main() {
        // `appex run` in its common shapes skips argument-parser's reflection (RunRequest),
        // and starts its helper thread first of all, before even the arguments become
        // Strings: that thread's work (RunRequest.startHelper) is on the launch's critical path.
        if CommandLine.argc > 1, let first = CommandLine.unsafeArgv[1], strcmp(first, "run") == 0 {
            // One malloc arena for the run's few short-lived threads: glibc would map and
            // fault in a 64 MiB arena for each thread's first allocation (~10 page faults
            // per run). Set before the first thread exists.
            _ = appex_malloc_single_arena()
            let helper = RunRequest.startHelper()
            if let request = RunRequest.parseCommon(Array(CommandLine.arguments.dropFirst())) {
                do {
                    try request.execute(helper: helper)
                } catch {
                    Appex.exit(withError: error)
                }
                return
            }
            // Left to argument-parser, whose RunCommand starts a helper of its own; this one is closed.
        }
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
