import AppexPolicyCore
import AppexRun
import AppexSandbox
import CAppexLinux

#if canImport(Glibc)
import Glibc
#endif

/// `appex`: runs `appex run` in its common shapes itself, and hands every other command line
/// to the full tool, `appex-commands` (`CommandsTool`), by exec with the same arguments.
///
/// This executable links no Foundation (nor argument-parser, Yams, SQLite): Foundation's
/// start-up (CoreFoundation, ICU and libdispatch constructors, and the pages they touch) was
/// paid by every `appex run` before `main` (Docs/decisions/0009-run-without-foundation.md). It hands over before creating anything, when
/// the line is not one `RunRequest.parseCommon` reads, when the request is wrong (the full tool
/// reports it in argument-parser's words), when loading the bundle or policies fails (the same),
/// and when the compiled policies are not cached (compiling them needs YAML, so Foundation).
/// Docs/launch-sequence.md, "A run without Foundation".
@main
enum AppexFront {
    static func main() {
        guard CommandLine.argc > 1, let first = CommandLine.unsafeArgv[1], strcmp(first, "run") == 0 else {
            CommandsTool.handOver()
        }
        // One malloc arena for the run's few short-lived threads: glibc would map and fault in
        // a 64 MiB arena for each thread's first allocation (~10 page faults per run). Set
        // before the first thread exists.
        _ = appex_malloc_single_arena()
        // The helper thread first of all, before even the arguments become Strings: its work
        // (the network namespace) is on the launch's critical path.
        let helper = RunRequest.startHelper()
        guard let request = RunRequest.parseCommon(Array(CommandLine.arguments.dropFirst())),
            let prepared = try? request.prepare(network: helper, policies: { PolicyLocator.cached(overlays: $0, only: $1) }),
            case .ready(let run) = prepared
        else {
            CommandsTool.handOver()
        }
        do {
            run.finish(try run.execute())
        } catch let failure as RunFailure {
            StandardError.line(failure.message)
            exit(failure.status.rawValue)
        } catch {
            // As the full tool reports an error a command throws (AppexMain).
            StandardError.line("appex run: \(error)")
            exit(ExitStatus.osError.rawValue)
        }
    }
}
