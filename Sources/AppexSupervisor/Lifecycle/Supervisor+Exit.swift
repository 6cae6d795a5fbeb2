import AppexCgroups
import AppexKillReason
import AppexSandbox
import AppexWire
import CAppexLinux
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One termination appexd caused or observed, with its reason (the names of
/// Docs/architecture.md's life cycle, shared with the jetsam records).
public struct TerminationRecord: Sendable, Equatable {
    public var bundleIdentifier: String
    public var instance: Int
    public var pid: Int32
    public var reason: KillReason
    public var message: String
    public var signal: Int32?
    public var exitStatus: Int32?
    public var peakMemoryBytes: Int64?
    public var requestsServed: Int
    public var at: Date
    /// The extension point's jetsam band (XNU's JETSAM_PRIORITY_*, ×10).
    public var band: Int
    /// The footprint when appexd decided to end it (nil when the kernel or the extension did).
    public var footprintBytes: Int64?
    /// From appexd's decision (kill, or terminate with its grace period) to the process being
    /// gone, as the pidfd reported it.
    public var triggerToDeathMicros: UInt64?
}

extension Supervisor {
    static let maximumTerminationRecords = 1000

    /// Kills the instance now (SIGKILL through its pidfd) and records why; the exit that
    /// follows is attributed to this reason. An instance still launching is killed as soon
    /// as its process exists.
    func kill(_ instance: ExtensionInstance, reason: KillReason, _ message: String) {
        guard instance.isLive else { return }
        // The first reason wins: a kill makes the socket fail and the process vanish, and
        // neither of those later symptoms is why it ended.
        if instance.killReason == nil {
            instance.killReason = reason
            instance.killMessage = message
        }
        noteEndTrigger(instance)
        // The one line at notice is the end's, with what the kill came to (finishExit).
        logger.debug("\(instance.label): killing: \(reason): \(message)")
        signalKill(instance)
    }

    /// The moment appexd decided this instance ends, and its footprint then (first call only).
    func noteEndTrigger(_ instance: ExtensionInstance) {
        guard instance.endTriggeredAt == nil else { return }
        instance.endTriggeredAt = MonotonicTime.now
        instance.footprintAtTrigger = try? instance.run?.run.cgroup?.footprint()
    }

    func signalKill(_ instance: ExtensionInstance) {
        guard let handle = instance.run, instance.isLive else { return }
        _ = appex_pidfd_send_signal(handle.process.pidfd, SIGKILL)
    }

    /// The pidfd is readable: the process has exited. Reaping, reading its cgroup and removing
    /// it happen on a worker; the request's outcome and the record follow on the loop.
    func processExited(_ instance: ExtensionInstance) {
        guard let handle = instance.run, instance.isLive else { return }
        instance.diedAt = MonotonicTime.now
        loop.unregister(handle.process.pidfd)
        drainChannel(instance)
        closeChannel(instance)
        disarmFootprintLimits(instance)
        instance.cancelTimers(loop)
        instance.state = .exited
        let slot = slot(for: instance.identifier)
        workers.async { [self] in
            // Whatever the extension left behind in its cgroup goes first, so that nothing
            // holds its log pipe open while the log is drained.
            try? handle.run.cgroup?.killAll()
            let report = try? handle.run.collectExit()
            handle.run.cleanup()
            let summary = ExitSummary(report: report)
            loop.post { [self] in finishExit(instance, in: slot, summary) }
        }
    }

    struct ExitSummary: Sendable {
        var signal: Int32?
        var exitStatus: Int32?
        /// What the run made of its end: the kernel's OOM kill, its filter, another signal.
        var runReason: KillReason?
        var peak: Int64?

        init(report: RunReport?) {
            signal = report?.signal
            exitStatus = report?.exitStatus
            runReason = report?.killReason
            peak = report?.peakMemoryBytes
        }

        /// The kernel's OOM killer ended it, at its own limit or at the budget's.
        var killedByKernelOOM: Bool { runReason == .perProcessLimit || runReason == .kernelOOM }
    }

    private func finishExit(_ instance: ExtensionInstance, in slot: ExtensionSlot, _ exit: ExitSummary) {
        if exit.killedByKernelOOM {
            // The kernel's kill came first: it counts no OOM kill for a task already dying of
            // appexd's SIGKILL. Whatever appexd decided after it (a kill, or a send that
            // failed on the dead process's socket) is not why it ended, and its trigger and
            // footprint are not the kernel's.
            instance.killReason = nil
            instance.killMessage = nil
            instance.endTriggeredAt = nil
            instance.footprintAtTrigger = nil
        }
        // An idle extension that exits by itself can be sent a request in the moment before
        // appexd sees it go. As an HTTP client retries a request on a kept-alive connection the
        // server closed, such a request is sent once more, to a new instance.
        if let ticket = instance.ticket, Self.resendable(ticket, instance, exit) {
            instance.ticket = nil
            ticket.resent = true
            slot.queue.insert(ticket, at: 0)
            logger.info("\(instance.label) exited as request \(ticket.hostRequestID) reached it; sending it to a new instance")
        }
        let (reason, message) = Self.classify(
            exit, killReason: instance.killReason, killMessage: instance.killMessage,
            busy: instance.ticket != nil)
        let record = record(instance, reason: reason, message: message, signal: exit.signal, status: exit.exitStatus, peak: exit.peak)
        // One line per end at notice: a kill is what an operator looks for in the journal.
        logger.notice("\(instance.label) ended: \(reason): \(message)")
        if let ticket = instance.ticket {
            instance.ticket = nil
            ticket.peakMemoryBytes = exit.peak.map { UInt64(max($0, 0)) }
            ticket.sink.requestInterrupted(
                Interruption(
                    requestID: ticket.hostRequestID, bundleIdentifier: instance.identifier, reason: Reason(reason), message: message,
                    signal: exit.signal, band: UInt32(clamping: record.band), footprintBytes: record.footprintBytes.map { UInt64(max($0, 0)) },
                    triggerToDeathMicros: record.triggerToDeathMicros))
            ticket.fail(Reason(reason), "\(instance.identifier): \(message)")
        }
        slot.instances.removeAll { $0 === instance }
        pressureVictimGone(instance)
        pump(slot)
        exitWaiters.removeAll { waiter in
            guard waiter.isDone(self) else { return false }
            waiter.resume()
            return true
        }
    }

    /// A request sent to a warm instance that then exited cleanly (status 0, no signal, not
    /// killed) without a word about it: it most likely never read it. Sent again once, and
    /// only when it carries no descriptors (those went with the first send).
    static func resendable(_ ticket: RequestTicket, _ instance: ExtensionInstance, _ exit: ExitSummary) -> Bool {
        !ticket.cold && !ticket.resent && !ticket.hadDescriptors && !ticket.cancelRequested && instance.killReason == nil
            && instance.framesSinceBegin == 0 && exit.signal == nil && exit.exitStatus == 0
    }

    /// Why an instance ended: appexd's own reason when it killed it (unless the kernel's OOM
    /// killer came first: finishExit), else what the run made of its end (the memory limit,
    /// the seccomp filter, another signal), else how it exited.
    static func classify(_ exit: ExitSummary, killReason: KillReason?, killMessage: String?, busy: Bool) -> (KillReason, String) {
        if let killReason { return (killReason, killMessage ?? killReason.rawValue) }
        let peak = exit.peak.map { ", peak \($0 / 1024) KiB" } ?? ""
        switch exit.runReason {
        case .perProcessLimit?:
            return (.perProcessLimit, "killed by the kernel at its memory limit\(peak)")
        case .kernelOOM?:
            return (.kernelOOM, "killed by the kernel's OOM killer at the memory budget's limit, not its own\(peak)")
        case .seccompViolation?:
            return (.seccompViolation, "killed by its seccomp filter (SIGSYS)")
        default:
            break
        }
        if let s = exit.signal { return (.crashed, "killed by signal \(s) (\(signalName(s)))") }
        let status = exit.exitStatus ?? -1
        if busy { return (.crashed, "exited with status \(status) before answering its request") }
        if status != 0 { return (.crashed, "exited with status \(status)") }
        return (.exited, "exited by itself")
    }

    static func signalName(_ s: Int32) -> String {
        guard let p = strsignal(s) else { return "signal \(s)" }
        return String(cString: p)
    }

    @discardableResult
    func record(_ instance: ExtensionInstance, reason: KillReason, message: String, signal: Int32?, status: Int32?, peak: Int64?) -> TerminationRecord
    {
        var triggerToDeath: UInt64?
        if let trigger = instance.endTriggeredAt, let died = instance.diedAt, died >= trigger {
            triggerToDeath = (died - trigger) / 1000
        }
        let record = TerminationRecord(
            bundleIdentifier: instance.identifier, instance: instance.number, pid: instance.pid, reason: reason,
            message: message, signal: signal, exitStatus: status, peakMemoryBytes: peak,
            requestsServed: instance.requestsServed, at: Date(),
            band: instance.band,
            footprintBytes: instance.footprintAtTrigger, triggerToDeathMicros: triggerToDeath)
        terminations.append(record)
        rememberTermination(record)
        if terminations.count > Self.maximumTerminationRecords {
            terminations.removeFirst(terminations.count - Self.maximumTerminationRecords)
        }
        return record
    }
}
