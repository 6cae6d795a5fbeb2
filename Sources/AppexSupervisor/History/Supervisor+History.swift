import AppexRegistry
import AppexWire
import Dispatch
import Foundation

// History: every launch (phases), request (outcome) and termination (reason) goes into the
// registry database (Registry+History), so what happened survives a restart. SQLite with
// synchronous=FULL costs an fsync per commit, which the event loop must never wait for, and
// which a busy supervisor should not pay per request: rows are collected on one serial queue
// and written together, at most 250 ms after the first of them. Shutdown writes what is left.

/// Rows waiting for their write; touched only on the history queue.
final class HistoryBuffer: @unchecked Sendable {
    var rows: [HistoryRow] = []
    var flushScheduled = false
}

extension Supervisor {
    static let historyFlushDelay: DispatchTimeInterval = .milliseconds(250)

    /// Queues `row`; the write follows within the flush delay.
    func remember(_ row: HistoryRow) {
        let buffer = historyBuffer
        historyQueue.async { [self] in
            buffer.rows.append(row)
            guard !buffer.flushScheduled else { return }
            buffer.flushScheduled = true
            historyQueue.asyncAfter(deadline: .now() + Self.historyFlushDelay) { [self] in writeHistory() }
        }
    }

    /// On the history queue: writes what is waiting; a failure is logged, never fatal.
    private func writeHistory() {
        let rows = historyBuffer.rows
        historyBuffer.rows = []
        historyBuffer.flushScheduled = false
        do { try registry.record(rows) } catch { logger.warning("history: cannot record \(rows.count) rows: \(error)") }
    }

    func rememberLaunch(_ instance: ExtensionInstance, checkInNanos: UInt64) {
        let phases = instance.launchPhases.map { ($0.0, $0.1 / 1000) } + [("checkIn", checkInNanos / 1000)]
        let row = LaunchHistory(bundleIdentifier: instance.identifier, version: catalog[instance.identifier]?.installed.version,
                                time: Date(), phases: phases)
        remember(.launch(row))
    }

    func rememberRequest(_ outcome: RequestOutcome, bundleIdentifier: String) {
        let kind: String
        switch outcome.outcome {
        case .completed: kind = "completed"
        case .cancelled: kind = "cancelled"
        case .failed: kind = "failed"
        }
        let total = outcome.phases.first { $0.name == "total" }?.microseconds ?? 0
        let row = RequestHistory(bundleIdentifier: bundleIdentifier, time: Date(), outcome: kind,
                                 reason: outcome.reason?.rawValue, cold: outcome.cold,
                                 totalMicros: Int64(clamping: total),
                                 peakMemoryBytes: outcome.peakMemoryBytes.map { Int64(clamping: $0) })
        remember(.request(row))
    }

    func rememberTermination(_ record: TerminationRecord) {
        let row = TerminationHistory(bundleIdentifier: record.bundleIdentifier, time: record.at, reason: record.reason.rawValue,
                                     message: record.message, signal: record.signal, exitStatus: record.exitStatus,
                                     peakMemoryBytes: record.peakMemoryBytes, requestsServed: record.requestsServed)
        remember(.termination(row))
    }

    /// Writes every row queued so far, and returns when they are in the database.
    public func flushHistory() {
        historyQueue.sync { writeHistory() }
    }
}
