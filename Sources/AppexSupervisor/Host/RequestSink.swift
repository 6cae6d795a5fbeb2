import AppexWire

/// Where a request's answers go: a host's connection in appexd, or the caller of an embedded
/// supervisor (`appex request --bundle`, tests, the benchmark). Called on the loop thread
/// only; implementations are `@unchecked Sendable` on that understanding.
public protocol RequestSink: AnyObject, Sendable {
    /// The request ended; called exactly once per request. `descriptors` are those the
    /// returned items' attachments refer to, now owned by the sink.
    func requestEnded(_ outcome: RequestOutcome, descriptors: [Int32])
    /// The extension serving the request died or was killed; `requestEnded` (failed) follows.
    func requestInterrupted(_ interruption: Interruption)
    /// The extension asks to open `url`; the host decides and calls `reply` once (on the loop).
    func openURL(_ url: String, requestID: UInt64, reply: @escaping (Bool) -> Void)
}
