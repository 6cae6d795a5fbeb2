import AppexSandbox
import Dispatch

/// Everything the supervisor keeps for one extension: its instances, the requests waiting for
/// one, and its sandbox (namespaces and view, built at the first launch and kept while the
/// extension stays installed, so later launches only enter it).
///
/// Concurrency: each instance serves one request at a time. A request goes to an idle
/// instance, else to a new instance while fewer than the policy's `maxInstances` run, else it
/// waits here, first come first served, until an instance is free. Requests to different
/// extensions never wait for each other.
final class ExtensionSlot: @unchecked Sendable {
    let identifier: String
    var instances: [ExtensionInstance] = []
    var queue: [RequestTicket] = []
    /// Launches of one extension run one after another on this queue (they share the
    /// sandbox); different extensions launch in parallel.
    let launchQueue: DispatchQueue
    let sandbox = SandboxHolder()
    /// The sandbox was built for a specification the catalog no longer holds (a reload
    /// changed the policy while instances were in it): the next launch with no instance left
    /// rebuilds it.
    var sandboxStale = false

    init(identifier: String) {
        self.identifier = identifier
        launchQueue = DispatchQueue(label: "appex.launch." + identifier)
    }

    var liveInstances: [ExtensionInstance] { instances.filter(\.isLive) }
}

/// The extension's `ExtensionSandbox`, touched only on its slot's launch queue.
final class SandboxHolder: @unchecked Sendable {
    private var sandbox: ExtensionSandbox?

    /// The sandbox, built when missing or when its init has died.
    func current(make: () throws -> ExtensionSandbox) throws -> ExtensionSandbox {
        if let s = sandbox, s.isAlive { return s }
        sandbox?.close()
        let s = try make()
        sandbox = s
        return s
    }

    func close() {
        sandbox?.close()
        sandbox = nil
    }

    /// The init of the sandbox when there is one and it lives.
    var initPID: Int32? {
        guard let s = sandbox, s.isAlive else { return nil }
        return s.initPID
    }
}
