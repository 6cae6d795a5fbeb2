import AppexCgroups
import AppexHostClient
import AppexRun
import AppexWire
import ArgumentParser
import Foundation
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// `appex top`: appexd's live extensions, redrawn in place: band, footprint against the limit
/// that applies now, CPU, state, launch time, time in band, and the pressure level. Quits on
/// `q` or Ctrl-C (or SIGTERM, SIGHUP) and gives the terminal back as it was.
struct TopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Watch appexd's live extensions, refreshed in place.",
        discussion: """
            Watch appexd's live extensions: band, footprint against its limit, CPU, state, launch time, pressure level. \
            Keys: q or Ctrl-C quits, space refreshes now. Rows are in victim order: the first one dies first \
            under memory pressure. The extension's name comes first; columns that do not fit the terminal \
            are left out, least useful first. When appexd restarts, the last frame stays, marked, until it \
            answers again. When standard output is not a terminal, frames are printed one after another \
            (like top -b).
            """)

    @Option(help: "appexd's control socket (default $APPEX_SOCKET, else /run/appex/appexd.sock).")
    var socket: String?

    @Option(help: "Seconds between refreshes (at least 0.1).")
    var interval: Double = 1

    @Option(name: [.customShort("n"), .long], help: "Stop after this many frames (default: until q).")
    var iterations: Int?

    func validate() throws {
        guard interval >= 0.1, interval <= 3600 else { throw ValidationError("--interval must be 0.1…3600 seconds") }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
    }

    func run() async throws {
        // No appexd: AppexMain says how to start one (exit 69).
        var client = try HostClient.connect(socketPath: socket, identifier: "appex-top")
        defer { client.close() }
        let where_ = socket ?? ProcessInfo.processInfo.environment["APPEX_SOCKET"] ?? "/run/appex/appexd.sock"

        let interactive = isatty(STDOUT_FILENO) == 1
        let signals = TopSignals()
        // Trapped before the terminal is taken: a signal can never leave it raw.
        let sequence = await UnixSignalsSequence(trapping: .sigint, .sigterm, .sighup, .sigwinch)
        let watcher = Task { await signals.watch(sequence) }
        defer { watcher.cancel() }
        let terminal = interactive ? TopTerminal() : nil
        defer { terminal?.restore() }

        var sampler = TopCPUSampler()
        var frames = 0
        var last: JetsamReport?
        var rates: [TopInstanceKey: Double] = [:]
        var problem: String?
        loop: while true {
            // appexd restarted or stopped: the last frame stays, marked, and top connects
            // again every interval until it answers.
            if problem != nil, let again = try? HostClient.connect(socketPath: socket, identifier: "appex-top") {
                client.close()
                client = again
                sampler = TopCPUSampler()
                problem = nil
            }
            if problem == nil {
                do {
                    let report = try await client.jetsam()
                    rates = sampler.rates(report, at: MonotonicTime.now)
                    last = report
                } catch let e as HostClientError {
                    problem = "appexd stopped answering (\(e.message)); connecting again every \(String(format: "%.1f", interval))s"
                }
            }
            guard let report = last else { break }
            func screen() -> TopScreen {
                let size = terminal?.console.size ?? (width: 0, height: 0)
                return TopScreen(
                    report: report, cpuPercent: problem == nil ? rates : [:], socket: where_, interval: interval,
                    time: Date(), width: size.width, height: size.height > 0 ? size.height : Int.max, problem: problem)
            }
            if let terminal {
                terminal.draw(screen().lines())
            } else {
                // A pipe gets each frame whole, as soon as it is made.
                FileHandle.standardOutput.write(Data((screen().lines().map(\.description).joined(separator: "\n") + "\n\n").utf8))
            }
            frames += 1
            if let iterations, frames >= iterations { break }

            // Until the next refresh: keys in slices of 100 ms, so a signal is seen at once.
            let end = MonotonicTime.now + UInt64(interval * 1e9)
            while MonotonicTime.now < end {
                if signals.take(.quit) { break loop }
                if signals.take(.resize), let terminal { terminal.draw(screen().lines()) }
                let left = Int32(min(100, (end - min(end, MonotonicTime.now)) / 1_000_000))
                guard let terminal else {
                    usleep(UInt32(max(left, 1)) * 1000)
                    continue
                }
                switch terminal.key(within: max(left, 1)) {
                case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3: break loop  // 3: Ctrl-C, a key in raw mode
                case UInt8(ascii: " "): continue loop
                default: continue
                }
            }
        }
        terminal?.restore()
        if last == nil, let problem {
            FileHandle.standardError.write(Data(("appex: " + problem + "\n").utf8))
            throw ExitCode(ExitStatus.unavailable.rawValue)
        }
    }
}

/// The signals `appex top` answers: SIGINT, SIGTERM and SIGHUP end it cleanly (the terminal
/// restored), SIGWINCH redraws at the new size. Seen by the loop between two key polls.
final class TopSignals: Sendable {
    enum Event { case quit, resize }
    private let pending = Mutex<Set<Event>>([])

    func watch(_ sequence: UnixSignalsSequence) async {
        for await signal in sequence {
            pending.withLock { _ = $0.insert(signal == .sigwinch ? .resize : .quit) }
        }
    }

    func take(_ event: Event) -> Bool {
        pending.withLock { $0.remove(event) != nil }
    }
}
