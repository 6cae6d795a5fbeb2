import AppexHostClient
import AppexWire
import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

/// The warm round trip as a host meets it: a real `appexd` process, the host client in this
/// process, a small text item to an extension that is already running. Host → appexd (control
/// socket) → extension (its socketpair) → appexd → host, timed by the host.
final class Appexd {
    let process = Process()
    let socket: String

    init(executable: String, root: String) throws {
        socket = root + "/appexd.sock"
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            [
                "--state-dir", root + "/appexd-state", "--socket", socket,
                "--cgroup-parent", "appex-bench-\(getpid())-appexd", "--log-level", "warning",
                // Uids of its own, away from a real appexd's.
                "--uid-range", "320000-320999",
            ]
            // APPEXD_ARGS: more flags, e.g. "--metrics off" to compare without the metrics.
            + (ProcessInfo.processInfo.environment["APPEXD_ARGS"]?.split(separator: " ").map(String.init) ?? [])
        try process.run()
        if HostClient.waitUntilServing(socketPath: socket, attempts: 500, interval: .milliseconds(10)) { return }
        stop()
        fail("appexd did not start answering on \(socket)")
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// Where a warm round trip's time goes, from the phases appexd puts in each outcome (µs
/// resolution): `inside` is appexd's receipt of the request to the outcome's send (`total`),
/// `extensionLeg` its BeginRequest's send to the answer's receipt (`roundTrip`: the extension's
/// own work and the two hops to it and back). What is left of the host's round trip is the
/// host client and the two hops between host and appexd.
struct WarmPhases {
    var inside = newHistogram()
    var extensionLeg = newHistogram()

    mutating func record(_ outcome: RequestOutcome) {
        for p in outcome.phases {
            switch p.name {
            case "total": inside.record(max(p.microseconds, 1) * 1000)
            case "roundTrip": extensionLeg.record(max(p.microseconds, 1) * 1000)
            default: break
            }
        }
    }
}

struct WarmRoundTrip {
    let client: HostClient

    /// Round trips in ns after `warmup` unmeasured ones, and the sizes of the request frame and
    /// of the outcome frame (for the floor to send records of the same size). `onReaderThread`:
    /// the host's task prefers the client's reader executor, so it goes on where each answer
    /// arrives; otherwise a thread of the cooperative pool is woken for it (the default).
    func measure(
        _ id: String, iterations: Int, warmup: Int, onReaderThread: Bool
    ) async throws -> (Histogram<UInt64>, WarmPhases, request: Int, answer: Int) {
        if onReaderThread {
            return try await withTaskExecutorPreference(client.readerExecutor) {
                try await loop(id, iterations: iterations, warmup: warmup)
            }
        }
        return try await loop(id, iterations: iterations, warmup: warmup)
    }

    private func loop(_ id: String, iterations: Int, warmup: Int) async throws -> (Histogram<UInt64>, WarmPhases, request: Int, answer: Int) {
        var h = newHistogram()
        var phases = WarmPhases()
        let items = [ExtensionItem(attributedContentText: "bench")]
        var answerSize = 0
        for i in 0..<(warmup + iterations) {
            let t0 = now()
            let outcome = try await client.beginRequest(bundleIdentifier: id, items: items)
            let elapsed = now() - t0
            guard outcome.outcome == .completed else { fail("\(id): warm request ended \(outcome.message)") }
            if i >= warmup {
                guard outcome.cold == false else { fail("\(id): a measured request launched the extension") }
                h.record(elapsed)
                phases.record(outcome.message)
            }
            answerSize = try WireCodec.encode(.requestOutcome(outcome.message)).count
        }
        let requestSize = try WireCodec.encode(.hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: id, items: items))).count
        return (h, phases, requestSize, answerSize)
    }
}

/// The floor: `relay-floor` (three C processes) with records of the same sizes.
func relayFloor(_ executable: String, iterations: Int, request: Int, answer: Int) -> Histogram<UInt64> {
    runRelayFloor(executable, ["\(iterations)", "\(request)", "\(answer)"]).samples
}

/// Runs `relay-floor` with `arguments`: its samples, and its "# SECONDS RELAY_CPU" line when
/// it printed one (the throughput mode).
func runRelayFloor(_ executable: String, _ arguments: [String]) -> (samples: Histogram<UInt64>, seconds: Double, relayCPU: Double) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    let out = Pipe()
    p.standardOutput = out
    do { try p.run() } catch { fail("cannot run \(executable): \(error)") }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { fail("relay-floor exited with \(p.terminationStatus)") }
    var h = newHistogram()
    var seconds = 0.0, relayCPU = 0.0
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
        if let v = UInt64(line) {
            h.record(v)
        } else if line.hasPrefix("# ") {
            let fields = line.dropFirst(2).split(separator: " ").compactMap { Double($0) }
            if fields.count == 2 { (seconds, relayCPU) = (fields[0], fields[1]) }
        }
    }
    return (h, seconds, relayCPU)
}
