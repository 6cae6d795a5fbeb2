import AppexCgroups
import AppexKillReason
import AppexSandbox
import AppexWire
import AppexWireIO

/// One running process of an extension, from spawn to exit. Loop thread only.
///
/// launching (sandbox, clone, exec on a worker) → awaitingCheckIn (the launch deadline runs)
/// → idle ⇄ busy (one request at a time) → terminating (Terminate sent, grace running) →
/// exited. A kill from any state records its reason first; the exit, whenever the kernel
/// reports it, is then attributed to that reason rather than to the signal.
final class ExtensionInstance: @unchecked Sendable {
    enum State: String { case launching, awaitingCheckIn, idle, busy, terminating, exited }

    let number: Int
    let identifier: String
    var state: State = .launching
    /// Set once the launch worker is done.
    var run: RunHandle?
    var pid: Int32 = 0
    var channel: WireConnection?
    /// When the launch began (the deadline counts from here), and when check-in came.
    let launchStartedAt = MonotonicTime.now
    var checkedInAt: UInt64 = 0
    /// Where its launch went (sandbox phases, spawn) and how long check-in took.
    var launchPhases: [(String, UInt64)] = []
    var checkInNanos: UInt64 = 0
    /// Whether the channel has reached end of stream (the process is on its way out).
    var channelClosed = false
    /// The request it serves, or will serve once checked in.
    var ticket: RequestTicket?
    /// The id of that request on this instance's channel (strictly increasing).
    var channelRequestID: UInt64 = 0
    /// Why appexd ended it, once it decided to.
    var killReason: KillReason?
    var killMessage: String?
    var requestsServed = 0
    /// Its process has exited and what it sent before is being read: it takes no new request.
    var exiting = false
    /// Frames received since the last BeginRequest went out: none means the extension has
    /// said nothing about that request.
    var framesSinceBegin = 0
    /// How often it may ping appexd (it is answered within this, killed past it).
    var pingAllowance = PingAllowance()

    // Timers (EventLoop ids), cancelled when what they guard happens.
    var deadlineTimer: EventLoop.TimerID?
    var willExpireTimer: EventLoop.TimerID?
    var requestTimer: EventLoop.TimerID?
    var pingTimer: EventLoop.TimerID?
    var pongTimer: EventLoop.TimerID?
    var idleTimer: EventLoop.TimerID?
    var graceTimer: EventLoop.TimerID?
    var pingSequence: UInt64 = 0
    /// Pings sent and not yet answered, oldest first: sequence and when each went out
    /// (CLOCK_MONOTONIC ns). `pongTimer` is the oldest one's deadline.
    var unansweredPings: [(sequence: UInt64, sentAt: UInt64)] = []
    /// When `pingTimer` fires (CLOCK_MONOTONIC ns).
    var pingDue: UInt64 = 0
    /// Footprint limits and memory warnings (Memory/Supervisor+FootprintLimits.swift): the
    /// kernel's usage thresholds, whether the warning for the current crossing went out,
    /// whether it is over its soft limit (an early victim).
    var memoryWatchers: [ThresholdWatcher] = []
    var memoryWatchersArmed = false
    /// Charge beyond the footprint when the thresholds were registered: they sit this much
    /// above their lines.
    var memoryLineOffset: Int64 = 0
    /// Over its warning line at the last check (warned once for this crossing).
    var memoryWarned = false
    var memoryWarningsSent = 0
    var overSoftLimit = false
    let memoryRecheck = GapRecheck()
    /// Jetsam band (Memory/Supervisor+Bands.swift): which, since when, and the timer that
    /// ages an idle instance from aging to its idle band.
    var band = 0
    var bandSince: UInt64 = MonotonicTime.now
    var agingTimer: EventLoop.TimerID?
    /// Warned in the current memory-pressure episode (Memory/Supervisor+Pressure.swift).
    var pressureWarned = false
    /// When appexd decided this instance ends (kill or terminate), its footprint then, and
    /// when the pidfd said it was gone: the termination record's trigger-to-death.
    var endTriggeredAt: UInt64?
    var footprintAtTrigger: Int64?
    var diedAt: UInt64?

    init(number: Int, identifier: String) {
        self.number = number
        self.identifier = identifier
    }

    var isLive: Bool { state != .exited }
    /// Whether its policy's active limits apply: it serves, or is starting for, a request.
    var isActive: Bool {
        switch state {
        case .busy: true
        case .launching, .awaitingCheckIn: ticket != nil
        default: false
        }
    }
    var label: String { "\(identifier)#\(number)" + (pid > 0 ? " (pid \(pid))" : "") }

    func cancelTimers(_ loop: EventLoop) {
        for t in [deadlineTimer, willExpireTimer, requestTimer, pingTimer, pongTimer, idleTimer, graceTimer, agingTimer] {
            loop.cancel(t)
        }
        deadlineTimer = nil
        willExpireTimer = nil
        requestTimer = nil
        pingTimer = nil
        pongTimer = nil
        idleTimer = nil
        graceTimer = nil
        agingTimer = nil
    }
}

/// An `ExtensionRun` handed between the launch worker and the loop (one thread at a time).
final class RunHandle: @unchecked Sendable {
    let run: ExtensionRun
    let process: LaunchedProcess

    init(run: ExtensionRun, process: LaunchedProcess) {
        self.run = run
        self.process = process
    }
}
