import AppexWire
import Synchronization

// Background transfers (Docs/transfers.md): the counterpart of a background URLSession. An
// extension hands appexd a download or an upload during a request, may then complete the
// request and exit, and is given the session's results later in a request of their own.

/// What to transfer: `BackgroundTransfer.download(...)` or `.upload(...)`. The file is a plain
/// name in an app group's container (`/var/appex/groups/<group>` inside the sandbox), like
/// `sharedContainerIdentifier`.
public typealias BackgroundTransfer = TransferRequest

extension TransferRequest {
    public static func download(_ url: String, to fileName: String, inAppGroup appGroup: String, headers: [String] = []) -> Self {
        Self(kind: .download, url: url, appGroup: appGroup, fileName: fileName, headers: headers)
    }

    public static func upload(
        _ fileName: String, inAppGroup appGroup: String, to url: String, method: String = "PUT",
        headers: [String] = []
    ) -> Self {
        Self(kind: .upload, url: url, appGroup: appGroup, fileName: fileName, method: method, headers: headers)
    }
}

/// appexd took the transfer (its id) or refused it (a reason such as `no-network`,
/// `session-busy`, `transfer-quota`, and a message).
public enum TransferScheduling: Sendable, Equatable {
    case scheduled(transferID: UInt64)
    case refused(Reason, String)
}

/// Answers to ScheduleTransfer, by token, for the context that sent them.
final class TransferWaiters: Sendable {
    private let waiting = Mutex<(next: UInt64, byToken: [UInt64: CheckedContinuation<TransferScheduling, Never>])>((1, [:]))

    func add(_ c: CheckedContinuation<TransferScheduling, Never>) -> UInt64 {
        waiting.withLock { w in
            let token = w.next
            w.next += 1
            w.byToken[token] = c
            return token
        }
    }

    func resume(_ token: UInt64, with answer: TransferScheduling) {
        waiting.withLock { $0.byToken.removeValue(forKey: token) }?.resume(returning: answer)
    }

    /// The request ended: whatever still waits hears it was refused.
    func resumeAll(_ answer: TransferScheduling) {
        let all = waiting.withLock { w in
            defer { w.byToken = [:] }
            return Array(w.byToken.values)
        }
        for c in all { c.resume(returning: answer) }
    }
}

extension ExtensionContext {
    /// Cancels every transfer of `session` that is not over, this extension's only
    /// (`URLSession.invalidateAndCancel()`). Their results, `cancelled`, come to
    /// `handleEvents(forBackgroundSession:results:context:)` as for any other end.
    public func cancelTransfers(inSession session: String) {
        do {
            try runtime.connection.send(.cancelSession(CancelSession(sessionIdentifier: session)))
        } catch {
            ExtensionLog.write("cancelling the transfers of session \(session) failed: \(error)")
        }
    }

    /// Hands `transfer` to appexd under `session` and returns whether it took it. Call it
    /// before completing the request; once it is scheduled, the extension may complete and
    /// exit: appexd carries the transfer on, and the session's results come later to
    /// `handleEvents(forBackgroundSession:results:context:)` (launching the extension for it).
    public func schedule(_ transfer: BackgroundTransfer, session: String) async -> TransferScheduling {
        guard !isAnswered else { return .refused(.protocolError, "request \(requestID) has already been answered") }
        return await withCheckedContinuation { (c: CheckedContinuation<TransferScheduling, Never>) in
            let token = transferWaiters.add(c)
            let message = ScheduleTransfer(requestID: requestID, token: token, sessionIdentifier: session, transfer: transfer)
            do {
                try runtime.connection.send(.scheduleTransfer(message))
            } catch {
                transferWaiters.resume(token, with: .refused(.protocolError, "sending the transfer failed: \(error)"))
            }
        }
    }
}
