import AppexRegistry
import AppexWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// A session's results, once all its transfers are over (Docs/transfers.md, "Events").

extension Supervisor {
    /// Loop only. When every transfer of the session is over and its events are owed, they go
    /// out: to a connected host of the extension's containing app, else to the extension, in a
    /// request of their own (launched for it, as iOS relaunches the app).
    func sessionMayBeOver(bundle: String, session: String) {
        loop.assertOnLoop()
        let key = TransferState.key(bundle, session)
        guard !transfers.delivering.contains(key), !shuttingDown else { return }
        let registry = self.registry
        historyQueue.async { [self] in
            let rows = (try? registry.undeliveredSession(bundleIdentifier: bundle, sessionIdentifier: session)) ?? nil
            guard let rows else { return }
            loop.post { [self] in deliverTransferEvents(bundle: bundle, session: session, rows: rows) }
        }
    }

    private func deliverTransferEvents(bundle: String, session: String, rows: [TransferRecord]) {
        let key = TransferState.key(bundle, session)
        guard !transfers.delivering.contains(key) else { return }
        guard let entry = catalog[bundle], entry.installed.isEnabled else {
            logger.info("transfers: events of session \(session) of \(bundle) wait: the extension is not enabled")
            return
        }
        let events = TransferEvents(
            requestID: 0, sessionIdentifier: session, bundleIdentifier: bundle,
            results: rows.map(Self.result(of:)))
        let ids = rows.compactMap(\.id)
        transfers.delivering.insert(key)
        if let app = entry.installed.containingAppIdentifier, let host = transferEventHosts[app]?.first(where: { $0.isOpen && $0.speaks(for: app) }) {
            host.deliver(events)
            logger.info("transfers: events of session \(session) of \(bundle) went to \(host.label), for \(app)")
            transferEventsDelivered(key, ids: ids)
            return
        }
        let sink = TransferEventSink(supervisor: self, key: key, ids: ids)
        let request = HostBeginRequest(requestID: transfers.nextEventRequestID, bundleIdentifier: bundle, items: [])
        transfers.nextEventRequestID += 1
        let ticket = RequestTicket(request: request, descriptors: [], sink: sink)
        ticket.transferEvents = events
        ticket.onEnd = { [unowned self, unowned ticket] outcome in
            openRequests.remove(ticket)
            rememberRequest(outcome, bundleIdentifier: bundle)
        }
        openRequests.add(ticket)
        let slot = slot(for: bundle)
        slot.queue.append(ticket)
        pump(slot)
    }

    /// Loop only. The events reached the extension or a host: those rows become history.
    func transferEventsDelivered(_ key: String, ids: [Int64]) {
        loop.assertOnLoop()
        let registry = self.registry
        historyQueue.async { [self] in
            do { try registry.markDelivered(ids) } catch { logger.error("transfers: cannot mark events delivered: \(error)") }
            loop.post { [self] in transfers.delivering.remove(key) }
        }
    }

    static func result(of r: TransferRecord) -> TransferResult {
        let outcome: TransferResult.Outcome = r.state == .completed ? .completed : r.state == .cancelled ? .cancelled : .failed
        return TransferResult(
            transferID: UInt64(r.id ?? 0), kind: r.kind == "upload" ? .upload : .download, fileName: r.fileName,
            outcome: outcome, reason: r.reason.map(Reason.init(rawValue:)), message: r.message,
            bytes: UInt64(max(r.bytes, 0)), httpStatus: r.httpStatus.map { UInt32(clamping: $0) })
    }
}

/// Where a session's events request ends: delivered unless the extension failed to take them
/// (then they stay owed, and the next appexd start tries again).
final class TransferEventSink: RequestSink, @unchecked Sendable {
    private weak var supervisor: Supervisor?
    private let key: String
    private let ids: [Int64]

    init(supervisor: Supervisor, key: String, ids: [Int64]) {
        self.supervisor = supervisor
        self.key = key
        self.ids = ids
    }

    func requestEnded(_ outcome: RequestOutcome, descriptors: [Int32]) {
        descriptors.forEach { _ = close($0) }
        guard let supervisor else { return }
        if outcome.outcome == .failed {
            supervisor.logger.warning(
                "transfers: the extension did not take the events of \(key.replacingOccurrences(of: "\0", with: " session ")): \(outcome.reason?.rawValue ?? "failed")"
            )
            supervisor.transfers.delivering.remove(key)
        } else {
            supervisor.transferEventsDelivered(key, ids: ids)
        }
    }

    func requestInterrupted(_ interruption: Interruption) {}

    func openURL(_ url: String, requestID: UInt64, reply: @escaping (Bool) -> Void) { reply(false) }
}
