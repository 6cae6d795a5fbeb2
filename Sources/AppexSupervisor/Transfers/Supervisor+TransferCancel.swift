import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

// Cancelling transfers: by an administrator or a host (CancelTransfers), or the extension
// (CancelSession).

extension Supervisor {
    /// `appex transfers cancel SELECTOR`: a transfer id in decimal, a bundle identifier (every
    /// transfer of that extension), or `bundle/session` (bundle identifiers hold no `/`).
    /// `app`: only that containing app's extensions' transfers.
    public func cancelTransfers(selector: String, ofApp app: String? = nil, by who: String) async -> Int {
        if let id = Int64(selector) { return await cancelTransfers(bundleIdentifier: nil, transferID: id, ofApp: app, by: who) }
        if let slash = selector.firstIndex(of: "/") {
            return await cancelTransfers(
                bundleIdentifier: String(selector[..<slash]),
                sessionIdentifier: String(selector[selector.index(after: slash)...]), ofApp: app, by: who)
        }
        return await cancelTransfers(bundleIdentifier: selector, ofApp: app, by: who)
    }

    /// Cancels transfers that are not over: one by id, or an extension's (one session's, when
    /// named). Returns how many. The sessions' events follow as for any other end.
    /// `app`: only transfers of that containing app's extensions (a host cancelling its own).
    public func cancelTransfers(
        bundleIdentifier: String?, sessionIdentifier: String? = nil, transferID: Int64? = nil,
        ofApp app: String? = nil, by who: String
    ) async -> Int {
        await onLoop { s in
            s.cancelTransfersOnLoop(
                bundleIdentifier: bundleIdentifier, sessionIdentifier: sessionIdentifier,
                transferID: transferID, ofApp: app, by: who)
        }
    }

    func cancelTransfersOnLoop(
        bundleIdentifier: String?, sessionIdentifier: String?, transferID: Int64?,
        ofApp app: String? = nil, by who: String
    ) -> Int {
        func matches(_ r: TransferRecord) -> Bool {
            if let app, catalog[r.bundleIdentifier]?.installed.containingAppIdentifier != app { return false }
            if let transferID, r.id != transferID { return false }
            if let bundleIdentifier, r.bundleIdentifier != bundleIdentifier { return false }
            if let sessionIdentifier, r.sessionIdentifier != sessionIdentifier { return false }
            return transferID != nil || bundleIdentifier != nil
        }
        let waiting = transfers.waiting.filter(matches)
        transfers.waiting.removeAll(where: matches)
        for r in waiting { endTransfer(r, state: .cancelled, reason: .cancelled, message: "cancelled by \(who)") }
        let running = transfers.running.values.filter { matches($0.record) }
        for r in running { stopWorker(r, .cancelled, "cancelled by \(who)") }
        return waiting.count + running.count
    }
}
