/// What an extension implements: the counterpart of NSExtensionRequestHandling, with async
/// methods. One value serves every request of the process, possibly several at once, from
/// tasks on Swift's global executor, so it is Sendable: keep mutable state in an actor (an
/// actor can conform directly) or behind a lock.
///
/// Do not isolate it to the main actor: the main thread is the SDK's reader (it answers
/// pings while handlers run), so main-actor work would never be scheduled.
public protocol ExtensionRequestHandler: Sendable {
    /// A request arrived. Answer it once, through `context.completeRequest(returningItems:)` or
    /// `context.cancelRequest(with:)`, now or later: returning without answering leaves the
    /// request open (keep the context to answer it from elsewhere), and appexd's request
    /// timeout still runs.
    func beginRequest(with context: ExtensionContext) async

    /// appexd is short of memory: drop caches now. Warnings come before kills.
    func didReceiveMemoryWarning(level: MemoryWarning.Level) async

    /// The request's time is nearly up: after `millisecondsLeft` the process is killed with
    /// `request-timeout`. Answer the request (with what you have, or a cancel) before then.
    func requestWillExpire(context: ExtensionContext, millisecondsLeft: UInt32) async

    /// Every transfer of background session `session` is over; `results` says how each ended
    /// (application(_:handleEventsForBackgroundURLSession:completionHandler:)). appexd
    /// launches the extension for it if it is not running. Answer `context` when done with
    /// the results (its input items are empty); the default completes it at once.
    func handleEvents(forBackgroundSession session: String, results: [TransferResult], context: ExtensionContext) async
}

extension ExtensionRequestHandler {
    public func didReceiveMemoryWarning(level: MemoryWarning.Level) async {}
    public func requestWillExpire(context: ExtensionContext, millisecondsLeft: UInt32) async {}
    public func handleEvents(forBackgroundSession session: String, results: [TransferResult], context: ExtensionContext) async {
        context.completeRequest()
    }
}
