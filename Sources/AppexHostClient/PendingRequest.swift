import AppexWire

/// A request that has been sent to appexd and not yet awaited: its id, a way to cancel it,
/// and its outcome when it comes.
public struct PendingRequest: Sendable {
    /// The id this client chose for the request (strictly increasing on the connection); the
    /// one Interruption and the open-URL handler name.
    public let requestID: UInt64
    public let bundleIdentifier: String

    let core: ClientCore
    let slot: OneShot<ReceivedOutcome>

    /// How the request ended. May be awaited more than once (the same outcome, the same
    /// descriptors, which the caller closes once).
    ///
    /// - Throws: `HostClientError` `.refused` with appexd's reason and details, or the error
    ///   that ended the connection.
    public func outcome() async throws -> ReceivedOutcome {
        try await slot.value()
    }

    /// Asks appexd to cancel the request (HostCancelRequest); the outcome still follows.
    /// Nothing is sent once the request has ended.
    public func cancel() throws {
        if slot.isFulfilled { return }
        try core.cancel(requestID)
    }
}
