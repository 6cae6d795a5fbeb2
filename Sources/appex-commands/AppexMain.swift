import AppexHostClient
import AppexRun
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
/// every frame description of the program (libgcc sorts them all first); dynamically
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
            fail(error)
        }
        if let command = parsed as? AsyncParsableCommand {
            runAsync(command)
        }
        var command = parsed
        do {
            try command.run()
        } catch {
            fail(error)
        }
    }

    /// Ends with the error's line of the exit-status table (ExitStatus, `appex --help`): a
    /// `CommandFailure`'s lines as they are, other errors as "appex COMMAND: error".
    static func fail(_ error: Error) -> Never {
        guard let status = ErrorExitStatus.of(error) else { Appex.exit(withError: error) }
        let lines: [String]
        switch error {
        case let failure as CommandFailure: lines = failure.lines
        case let e as HostClientError: lines = e.lines(command: commandName, socketPath: socketOption)
        default: lines = ["\(commandName): \(error)"]
        }
        for line in lines { StandardError.line(line) }
        exit(status.rawValue)
    }

    /// "appex" and the subcommand's name, from the command line (for messages).
    static var commandName: String {
        let words = CommandLine.arguments.dropFirst().prefix { !$0.hasPrefix("-") }.prefix(1)
        return (["appex"] + words).joined(separator: " ")
    }

    /// The command line's --socket, for the message that names the socket.
    static var socketOption: String? {
        let args = CommandLine.arguments
        if let i = args.firstIndex(of: "--socket"), i + 1 < args.count { return args[i + 1] }
        return args.first { $0.hasPrefix("--socket=") }.map { String($0.dropFirst("--socket=".count)) }
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
        if let error = outcome.error { fail(error) }
        Appex.exit()
    }

    /// The async command's error, written by its task before it signals and read after the wait.
    private final class Outcome: @unchecked Sendable {
        var error: Error?
    }
}
