import AppexRegistry
import AppexWire
import Dispatch
import Foundation

// History: every launch (phases), request (outcome) and termination (reason) goes into the
// registry database (Registry+History), so what happened survives a restart. SQLite with
// synchronous=FULL costs an fsync per commit, which the event loop must never wait for, and
// which a busy supervisor should not pay per request, nor a thread wake-up per row: rows
// collect on the loop and go to the history queue together, 250 ms after the first of them,
// and are written in one transaction. Shutdown writes what is left. The same three hooks
// feed the metrics (Metrics/Supervisor+Metrics.swift).

/// Rows waiting for their write; touched only on the loop.
final class HistoryBuffer: @unchecked Sendable {
    var rows: [HistoryRow] = []
    var timer: EventLoop.TimerID?
}

extension Supervisor {
    static let historyFlushDelay: Duration = .milliseconds(250)

    /// On the loop: queues `row`; the write follows within the flush delay.
    func remember(_ row: HistoryRow) {
        loop.assertOnLoop()
        historyBuffer.rows.append(row)
        guard historyBuffer.timer == nil else { return }
        historyBuffer.timer = loop.schedule(after: Self.historyFlushDelay) { [self] in handOffHistory() }
    }

    /// On the loop: gives what is waiting to the history queue, which writes it; a failure is
    /// logged, never fatal.
    private func handOffHistory() {
        loop.assertOnLoop()
        loop.cancel(historyBuffer.timer)
        historyBuffer.timer = nil
        let rows = historyBuffer.rows
        historyBuffer.rows = []
        guard !rows.isEmpty else { return }
        let registry = self.registry, logger = self.logger
        historyQueue.async {
            do { try registry.record(rows) } catch { logger.warning("history: cannot record \(rows.count) rows: \(error)") }
        }
    }

    func rememberLaunch(_ instance: ExtensionInstance, checkInNanos: UInt64) {
        let phases = instance.launchPhases.map { ($0.0, $0.1 / 1000) } + [("checkIn", checkInNanos / 1000)]
        let row = LaunchHistory(
            bundleIdentifier: instance.identifier, version: catalog[instance.identifier]?.installed.version,
            time: Date(), phases: phases)
        remember(.launch(row))
        measureLaunch(instance, checkInNanos: checkInNanos)
    }

    func rememberRequest(_ outcome: RequestOutcome, bundleIdentifier: String) {
        let kind: String
        switch outcome.outcome {
        case .completed: kind = "completed"
        case .cancelled: kind = "cancelled"
        case .failed: kind = "failed"
        }
        let total = outcome.phases.first { $0.name == "total" }?.microseconds ?? 0
        let row = RequestHistory(
            bundleIdentifier: bundleIdentifier, time: Date(), outcome: kind,
            reason: outcome.reason?.rawValue, cold: outcome.cold,
            totalMicros: Int64(clamping: total),
            peakMemoryBytes: outcome.peakMemoryBytes.map { Int64(clamping: $0) })
        remember(.request(row))
        measureRequest(outcome, kind: kind, bundleIdentifier: bundleIdentifier)
    }

    /// A request refused at admission (disabled, not activated, …): a row with outcome
    /// `refused` and appexd's reason, so the history shows what hosts asked and did not get.
    func rememberRefusal(_ refusal: Refusal, bundleIdentifier: String) {
        remember(
            .request(
                RequestHistory(
                    bundleIdentifier: bundleIdentifier, time: Date(), outcome: "refused",
                    reason: refusal.reason.rawValue, cold: false, totalMicros: 0, peakMemoryBytes: nil)))
    }

    func rememberTermination(_ record: TerminationRecord) {
        let row = TerminationHistory(
            bundleIdentifier: record.bundleIdentifier, time: record.at, reason: record.reason,
            message: record.message, signal: record.signal, exitStatus: record.exitStatus,
            peakMemoryBytes: record.peakMemoryBytes, requestsServed: record.requestsServed,
            band: record.band, footprintBytes: record.footprintBytes,
            triggerToDeathMicros: record.triggerToDeathMicros.map { Int64(clamping: $0) })
        remember(.termination(row))
        measureTermination(record)
    }

    /// Writes every row queued so far, and returns when they are in the database. From any
    /// thread but the loop's, while the loop runs.
    public func flushHistory() {
        let done = DispatchSemaphore(value: 0)
        loop.post { [self] in
            handOffHistory()
            historyQueue.async { done.signal() }
        }
        done.wait()
    }
}
