import AppexHostClient
import AppexWire
import Foundation
import BenchSupport
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
        process.arguments = ["--state-dir", root + "/appexd-state", "--socket", socket,
                             "--cgroup-parent", "appex-bench-\(getpid())-appexd", "--log-level", "warning",
                             // Uids of its own, away from a real appexd's.
                             "--uid-range", "320000-320999"]
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

struct WarmRoundTrip {
    let client: HostClient

    /// Round trips in ns after `warmup` unmeasured ones, and the sizes of the request frame and
    /// of the outcome frame (for the floor to send records of the same size).
    func measure(_ id: String, iterations: Int, warmup: Int) async throws -> (Histogram<UInt64>, request: Int, answer: Int) {
        var h = newHistogram()
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
            }
            answerSize = try WireCodec.encode(.requestOutcome(outcome.message)).count
        }
        let requestSize = try WireCodec.encode(.hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: id, items: items))).count
        return (h, requestSize, answerSize)
    }
}

/// The floor: `relay-floor` (three C processes) with records of the same sizes.
func relayFloor(_ executable: String, iterations: Int, request: Int, answer: Int) -> Histogram<UInt64> {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = ["\(iterations)", "\(request)", "\(answer)"]
    let out = Pipe()
    p.standardOutput = out
    do { try p.run() } catch { fail("cannot run \(executable): \(error)") }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { fail("relay-floor exited with \(p.terminationStatus)") }
    var h = newHistogram()
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
        if let v = UInt64(line) { h.record(v) }
    }
    return h
}
