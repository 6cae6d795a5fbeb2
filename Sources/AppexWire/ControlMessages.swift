// Messages between a host (or the appex CLI) and appexd, over the control socket.

/// host -> appexd: run a request on an extension. The host chooses the request id (strictly
/// increasing on its connection); the answer is one RequestOutcome or one Refusal.
public struct HostBeginRequest: Equatable, Sendable {
    public var requestID: UInt64
    public var bundleIdentifier: String
    public var items: [ExtensionItem]
    /// Jetsam band for the extension while it serves this request (idle 0 ... foreground 100
    /// ... critical 190); appexd uses the policy's band when absent.
    public var band: UInt32?

    public init(requestID: UInt64, bundleIdentifier: String, items: [ExtensionItem], band: UInt32? = nil) {
        self.requestID = requestID
        self.bundleIdentifier = bundleIdentifier
        self.items = items
        self.band = band
    }
}

/// appexd -> host: how a request ended.
public struct RequestOutcome: Equatable, Sendable {
    public enum Kind: UInt8, Sendable, CaseIterable {
        /// The extension completed it; `items` are what it returned.
        case completed = 1
        /// The extension (or the host, through appexd) cancelled it; `error` says why.
        case cancelled = 2
        /// appexd ended it: the extension failed to launch, was killed or died; `reason` says why.
        case failed = 3
    }

    /// A launch or request phase and how long it took.
    public struct Phase: Equatable, Sendable {
        public var name: String
        public var microseconds: UInt64

        public init(_ name: String, microseconds: UInt64) {
            self.name = name
            self.microseconds = microseconds
        }
    }

    public var requestID: UInt64
    public var outcome: Kind
    public var items: [ExtensionItem]
    public var error: RequestError?
    public var reason: Reason?
    /// True when this request spawned the extension.
    public var cold: Bool
    /// In the order they happened; names are unique (e.g. `spawn`, `checkIn`, `roundTrip`).
    public var phases: [Phase]
    /// The serving instance's peak memory so far (its cgroup's high-water mark), when known.
    public var peakMemoryBytes: UInt64?

    public init(
        requestID: UInt64, outcome: Kind, items: [ExtensionItem] = [], error: RequestError? = nil,
        reason: Reason? = nil, cold: Bool = false, phases: [Phase] = [], peakMemoryBytes: UInt64? = nil
    ) {
        self.requestID = requestID
        self.outcome = outcome
        self.items = items
        self.error = error
        self.reason = reason
        self.cold = cold
        self.phases = phases
        self.peakMemoryBytes = peakMemoryBytes
    }
}

/// host -> appexd: cancel a request. The request still ends with its RequestOutcome.
public struct HostCancelRequest: Equatable, Sendable {
    public var requestID: UInt64

    public init(requestID: UInt64) { self.requestID = requestID }
}

/// appexd -> host: the extension serving this request died or was killed. The request's
/// RequestOutcome (failed, same reason) follows.
public struct Interruption: Equatable, Sendable {
    public var requestID: UInt64
    public var bundleIdentifier: String
    public var reason: Reason
    public var message: String?
    /// The signal that ended the extension, when one did.
    public var signal: Int32?
    /// The kill record: the extension's jetsam band then, its footprint when appexd decided
    /// to end it, and the time from that decision to its death.
    public var band: UInt32?
    public var footprintBytes: UInt64?
    public var triggerToDeathMicros: UInt64?

    public init(
        requestID: UInt64, bundleIdentifier: String, reason: Reason, message: String? = nil, signal: Int32? = nil,
        band: UInt32? = nil, footprintBytes: UInt64? = nil, triggerToDeathMicros: UInt64? = nil
    ) {
        self.requestID = requestID
        self.bundleIdentifier = bundleIdentifier
        self.reason = reason
        self.message = message
        self.signal = signal
        self.band = band
        self.footprintBytes = footprintBytes
        self.triggerToDeathMicros = triggerToDeathMicros
    }
}
