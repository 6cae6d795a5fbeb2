import AppexCgroups
import AppexWire

// The request timeout (policy `requestTimeout`): a request the extension has not answered in
// time is taken from it. First `RequestWillExpire` (the SDK's `requestWillExpire` callback, a
// chance to answer with what it has), then, when the time is up, the kill with
// `request-timeout`, which fails the request with that reason.

extension Supervisor {
    /// How long before the timeout the warning goes out: a quarter of the timeout, at most
    /// five seconds (iOS gives extensions a few seconds' notice in the same situation).
    static func willExpireLead(for timeout: Duration) -> Duration {
        min(timeout / 4, .seconds(5))
    }

    func armRequestTimeout(_ instance: ExtensionInstance, timeout: Duration) {
        let lead = Self.willExpireLead(for: timeout)
        let requestID = instance.channelRequestID
        instance.willExpireTimer = loop.schedule(after: timeout - lead) { [self] in
            instance.willExpireTimer = nil
            guard instance.state == .busy, instance.channelRequestID == requestID else { return }
            let left = UInt32(clamping: lead.wholeMilliseconds)
            send(.requestWillExpire(RequestWillExpire(requestID: requestID, millisecondsLeft: left)), to: instance)
        }
        instance.requestTimer = loop.schedule(after: timeout) { [self] in
            instance.requestTimer = nil
            guard instance.state == .busy, instance.channelRequestID == requestID else { return }
            kill(instance, reason: .requestTimeout, "did not answer within the request timeout of \(timeout.wholeMilliseconds) ms")
        }
    }
}
